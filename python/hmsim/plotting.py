"""One house plotting style for every figure hmsim draws; PNG + SVG + PDF, written atomically.

Importing this module does not choose a matplotlib backend (a notebook keeps its inline
backend); the CLI picks Agg before it draws anything.
"""

from __future__ import annotations

import io
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt

from hmsim.results import write_bytes

# Colour-blind-safe palette (Okabe-Ito) first, then darker distinct hues, assigned to
# devices/policies in a stable order; with the markers, no two of up to 16 series look alike.
PALETTE = [
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#F0E442",
    "#000000",
    "#882255",
    "#117733",
    "#332288",
    "#999933",
    "#AA4499",
    "#44AA99",
    "#661100",
    "#888888",
]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p", "d", "8", "H", "1"]
FORMATS = ("png", "svg", "pdf")

STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "legend.frameon": False,
    "legend.fontsize": 8,
    "svg.hashsalt": "hmsim",  # deterministic SVG ids
}


@contextmanager
def house_style():
    with plt.rc_context(STYLE):
        yield


def color_for(names: list[str]) -> dict[str, str]:
    """A distinct colour per name (in order); more names than colours raise, not repeat."""
    names = list(dict.fromkeys(names))
    if len(names) > len(PALETTE):
        raise ValueError(f"{len(names)} series but only {len(PALETTE)} distinct colours")
    return {n: PALETTE[i] for i, n in enumerate(names)}


def marker_for(names: list[str]) -> dict[str, str]:
    """A distinct marker per name, paired with `color_for`'s colours."""
    names = list(dict.fromkeys(names))
    return {n: MARKERS[i % len(MARKERS)] for i, n in enumerate(names)}


def series_style(names: list[str]) -> dict[str, dict[str, str]]:
    """`plot(**series_style(names)[n])`: colour and marker, distinct for each name."""
    colors, markers = color_for(names), marker_for(names)
    return {n: {"color": colors[n], "marker": markers[n]} for n in colors}


def outside_legend(ax: plt.Axes, **kw) -> None:
    """A legend beside the axes, where it cannot cover data."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kw)


def save_figure(fig: plt.Figure, out_dir: Path, name: str) -> list[Path]:
    """Save `fig` as `name`.png, .svg and .pdf under `out_dir` (nothing clipped: the saved
    area grows to hold every label and an outside legend); close it."""
    paths = []
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    meta = {"png": {"Software": "hmsim"}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}
    for ext in FORMATS:
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, metadata=meta[ext], bbox_inches="tight")
        path = Path(out_dir) / f"{name}.{ext}"
        write_bytes(path, buf.getvalue())
        paths.append(path)
    plt.close(fig)
    return paths
