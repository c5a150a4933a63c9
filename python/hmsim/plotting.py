"""One house plotting style for every figure hmsim draws; PNG + SVG, written atomically."""

from __future__ import annotations

import io
from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from hmsim.results import write_bytes

# Colour-blind-safe palette (Okabe-Ito), assigned to devices/policies in a stable order.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]

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
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


def save_figure(fig: plt.Figure, out_dir: Path, name: str) -> list[Path]:
    """Save `fig` as `name`.png and `name`.svg under `out_dir`; close it."""
    paths = []
    fig.tight_layout()
    for ext in ("png", "svg"):
        buf = io.BytesIO()
        meta = {"Software": "hmsim"} if ext == "png" else {"Date": None}
        fig.savefig(buf, format=ext, metadata=meta)
        path = Path(out_dir) / f"{name}.{ext}"
        write_bytes(path, buf.getvalue())
        paths.append(path)
    plt.close(fig)
    return paths
