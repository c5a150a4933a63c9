"""One house plotting style for every figure hmsim draws; PNG + SVG + PDF (or the formats
`figure_formats` picks), written atomically, the PNG and the area all formats save found on
one drawing of the figure.

Importing this module does not choose a matplotlib backend (a notebook keeps its inline
backend); the CLI picks Agg before it draws anything.
"""

from __future__ import annotations

import contextvars
import io
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.ticker

from hmsim.atomic import write_bytes

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
# Past the palette, series repeat a colour and marker with another line style: (colour, marker,
# line style) stays distinct for up to 4 x 16 series; more than that a figure facets.
LINESTYLES = ["-", "--", ":", "-."]
MAX_SERIES = len(PALETTE) * len(LINESTYLES)
FORMATS = ("png", "svg", "pdf")
# A quick run's: the bitmap the report shows and the vector copy (a PDF costs as much to
# draw as either; a full run draws it).
QUICK_FORMATS = ("png", "svg")
# The formats `save_figure` writes in this context, None until chosen (then FORMATS, or a
# study's choice by its grid). The studies run side by side each run in a copy of the
# context that started them.
_FORMATS: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar("hmsim_figure_formats", default=None)


def chosen_formats() -> tuple[str, ...] | None:
    """The formats an enclosing `figure_formats` chose, or None."""
    return _FORMATS.get()


def parse_formats(text: str) -> tuple[str, ...]:
    """`png,svg` as a tuple of formats, each one of `FORMATS`, in the order given; a
    ValueError naming the unknown one otherwise."""
    out = tuple(dict.fromkeys(f.strip().lower().lstrip(".") for f in text.split(",") if f.strip()))
    bad = [f for f in out if f not in FORMATS]
    if bad or not out:
        what = f"unknown {', '.join(bad)}" if bad else "none given"
        raise ValueError(
            f"figure formats: {what}; expected a comma-separated list of {', '.join(FORMATS)}, got {text!r}"
        )
    return out


@contextmanager
def figure_formats(formats: tuple[str, ...] | None):
    """Inside, `save_figure` writes `formats` (None: keep the enclosing choice)."""
    if formats is None:
        yield
        return
    token = _FORMATS.set(tuple(formats))
    try:
        yield
    finally:
        _FORMATS.reset(token)


STYLE = {
    "figure.figsize": (6.4, 4.0),
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    # Titles sit just above the axes: no figure puts tick labels or an axis label on top,
    # which is all matplotlib's automatic placement looks for, at the price of every tick
    # label's extent in every axes sharing an x axis with this one (a fifth of a shared
    # six-panel figure's drawing). Axes that put labels on top need the search back: make
    # them inside `matplotlib.rc_context({"axes.titley": None})`.
    "axes.titley": 1.0,
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
    """`plot(**series_style(names)[n])`: colour, marker and line style, distinct for each name
    (the first 16 solid, then dashed, dotted, dash-dotted); more than `MAX_SERIES` names raise:
    the figure must facet rather than repeat a look."""
    names = list(dict.fromkeys(names))
    if len(names) > MAX_SERIES:
        raise ValueError(f"{len(names)} series but only {MAX_SERIES} distinct styles: facet the figure")
    n = len(PALETTE)
    return {
        name: {"color": PALETTE[i % n], "marker": MARKERS[i % n], "linestyle": LINESTYLES[i // n]}
        for i, name in enumerate(names)
    }


# Series accounting: a figure function declares the series its data holds
# (`declare_series`); `save_figure` records them beside what the figure shows
# (`shown_labels`), so a test can check that no series was dropped. Keyed by the saved
# path (without extension), the last drawing of each figure.
DRAWN: dict[str, dict[str, list[str]]] = {}


def declare_series(fig: plt.Figure, names) -> None:
    """Record that `fig` should show each of `names` (a series, bar, panel: whatever one
    group of the data becomes) as a legend entry, artist label, tick label or panel title."""
    have = getattr(fig, "_hmsim_series", [])
    fig._hmsim_series = list(dict.fromkeys([*have, *(str(n) for n in names)]))


def _texts(fig: plt.Figure) -> tuple[set[str], list[str]]:
    """(labels, titles) the figure shows: artist labels, legend entries and tick labels
    (matched exactly), axes and figure titles (matched as a word)."""
    labels: set[str] = set()
    titles: list[str] = []
    if fig._suptitle is not None:
        titles.append(fig._suptitle.get_text())
    for ax in fig.axes:
        artists = [*ax.lines, *ax.collections, *ax.containers, *ax.patches, *ax.images]
        labels |= {a.get_label() for a in artists if a.get_label() and not a.get_label().startswith("_")}
        legend = ax.get_legend()
        if legend is not None:
            labels |= {t.get_text() for t in legend.get_texts()}
        for t in [*ax.get_xticklabels(), *ax.get_yticklabels()]:
            labels.add(t.get_text())
        titles += [ax.get_title(loc) for loc in ("left", "center", "right")]
        titles += [ax.get_xlabel(), ax.get_ylabel()]
    for legend in fig.legends:
        labels |= {t.get_text() for t in legend.get_texts()}
    return {x for x in labels if x}, [t for t in titles if t]


def _axes_facts(ax: plt.Axes) -> dict:
    """What a test checks of a panel: scales, labels, titles, its annotations, its bars."""
    from matplotlib.patches import Rectangle

    bars = [p for c in ax.containers for p in c if isinstance(p, Rectangle)]
    return {
        "xscale": ax.get_xscale(),
        "yscale": ax.get_yscale(),
        "xlabel": ax.get_xlabel(),
        "ylabel": ax.get_ylabel(),
        "title": ax.get_title(),
        "texts": [t.get_text() for t in ax.texts],
        "bars": len(bars),
        "xticklabels": [t.get_text() for t in ax.get_xticklabels()],
    }


def shown_labels(fig: plt.Figure, names) -> list[str]:
    """The `names` that `fig` shows (see `declare_series`)."""
    import re

    labels, titles = _texts(fig)
    found = []
    for n in names:
        word = re.compile(rf"(?<![\w+-]){re.escape(n)}(?![\w+-])")
        if n in labels or any(word.search(t) for t in titles):
            found.append(n)
    return found


def outside_legend(ax: plt.Axes, **kw) -> None:
    """A legend beside the axes, where it cannot cover data."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kw)


def save_figure(fig: plt.Figure, out_dir: Path, name: str) -> list[Path]:
    """Save `fig` as `name`.png, .svg and .pdf (the formats of `figure_formats`) under
    `out_dir` (nothing clipped: the saved area grows to hold every label and an outside
    legend); close it. Inside
    `figures_in_background()` a drawing process writes the files and this returns at once;
    `DRAWN` gets the figure's facts when it is drawn."""
    key = str(Path(out_dir) / name)
    formats = _FORMATS.get() or FORMATS
    paths = [Path(out_dir) / f"{name}.{ext}" for ext in formats]
    if _BACKGROUND.pending is not None:
        blob = _pickled(fig)
        if blob is not None:
            rc = {k: v for k, v in matplotlib.rcParams.items() if k not in _RC_NOT_COPIED}
            _BACKGROUND.pending.append((key, _BACKGROUND.submit((blob, rc, str(out_dir), name, formats))))
            plt.close(fig)
            return paths
    DRAWN[key] = write_figure_files(fig, Path(out_dir), name, formats)
    return paths


def write_figure_files(fig: plt.Figure, out_dir: Path, name: str, formats: tuple[str, ...] = FORMATS) -> dict:
    """Lay out `fig`, write it in `formats` (atomically), close it; return what it shows
    beside the series it declared (for `DRAWN`), read off the drawn figure. The PNG and the
    saving area every format shares come from one drawing (`_png_and_bbox`) when they can."""
    cpu_start = time.thread_time()
    # Laid out at the dpi it is saved at: the layout's text measurements are then the
    # ones the bitmap's drawing uses (matplotlib caches them per renderer and dpi), where
    # a layout at the figure's own dpi measured every label twice. The figure is closed
    # below, so its dpi is not restored.
    if (dpi := matplotlib.rcParams["savefig.dpi"]) != "figure":
        fig.set_dpi(float(dpi))
    if (engine := fig.get_layout_engine()) is None:
        fig.tight_layout()
    else:
        # A figure's own engine (constrained layout) ran in every drawing: in the PNG's, in
        # the saving area's and again in each vector format's. Once here is the same layout.
        engine.execute(fig)
    # Laid out for good: any engine left set, even the PlaceHolderLayoutEngine that
    # tight_layout leaves, makes every savefig lay the figure out again before drawing it.
    fig.set_layout_engine(None)
    meta = {"png": {"Software": "hmsim"}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}
    png, bbox, overlapping = _png_and_bbox(fig, meta["png"]) if "png" in formats else (None, None, None)
    if bbox is None:
        bbox = _tight_bbox(fig)
    if overlapping is None:
        # Read on the bitmap's layout, before a vector format lays the figure out again at
        # its own dpi.
        overlapping = overlapping_labels(
            fig, fig.canvas.get_renderer() if hasattr(fig.canvas, "get_renderer") else None
        )
    for ext in formats:
        if ext == "png" and png is not None:
            data = png
        else:
            buf = io.BytesIO()
            fig.savefig(buf, format=ext, metadata=meta[ext], bbox_inches=bbox)
            data = buf.getvalue()
        write_bytes(out_dir / f"{name}.{ext}", data)
    # A format not drawn this time leaves no copy of an earlier run beside the new ones.
    for ext in FORMATS:
        if ext not in formats:
            (out_dir / f"{name}.{ext}").unlink(missing_ok=True)
    declared = getattr(fig, "_hmsim_series", [])
    facts = {
        "declared": declared,
        "shown": shown_labels(fig, declared),
        "axes": [_axes_facts(ax) for ax in fig.axes if ax.get_visible()],
        "texts": [t.get_text() for t in fig.texts],
        "overlapping_labels": overlapping,
    }
    plt.close(fig)
    # What drawing it cost (a figure process draws one figure at a time on one thread).
    facts["cpu_time_s"] = time.thread_time() - cpu_start
    return facts


def overlapping_labels(fig: plt.Figure, renderer=None) -> list[list[str]]:
    """Pairs of the figure's titles, axis labels and figure texts that overlap as laid out
    (by more than a pixel each way), each as its two texts: a label run into a title is
    unreadable in every format. Measured with `renderer` (the figure's own by default)."""
    named = [t for t in fig.texts if t.get_visible() and t.get_text()]
    for ax in fig.axes:
        if ax.get_visible():
            parts = (ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label)
            named += [t for t in parts if t.get_visible() and t.get_text()]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in named]
    pairs = []
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1 :]:
            wide = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            high = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            if wide > 1 and high > 1:
                pairs.append([a, b])
    return pairs


def _tight_bbox(fig: plt.Figure):
    """The area `bbox_inches="tight"` saves, found once for every format: as savefig finds
    it for the bitmap (at the saving dpi, with the bitmap's text metrics), so a PNG saved
    with it is the one "tight" gives; the vector copies share its area. Finding it costs a
    layout pass per format otherwise, as much as drawing the figure. Used where
    `_png_and_bbox` cannot find it on the PNG's own drawing."""
    if not hasattr(fig.canvas, "get_renderer"):  # not a bitmap canvas: let savefig find it
        return "tight"
    dpi, shown = matplotlib.rcParams["savefig.dpi"], fig.dpi
    if dpi != "figure":
        fig.set_dpi(dpi)
    try:
        fig.draw_without_rendering()
        box = fig.get_tightbbox(fig.canvas.get_renderer())
    finally:
        fig.set_dpi(shown)
    return box.padded(matplotlib.rcParams["savefig.pad_inches"])


def _anchored_outside(fig: plt.Figure) -> bool:
    """Whether a figure-level text (a footnote below the axes) is placed outside the figure:
    its saving area is then larger than the figure, so `_png_and_bbox` draws it on a larger
    canvas."""
    return any(
        t.get_transform() is fig.transFigure and not all(0 <= v <= 1 for v in t.get_position()) for t in fig.texts
    )


# How far past each edge of the figure, in inches, `_png_and_bbox` draws a figure with a
# text anchored outside it (a footnote's few lines fit well inside).
OUTSIDE_MARGIN_IN = 1.0


def _png_and_bbox(fig: plt.Figure, metadata: dict) -> tuple[bytes | None, object, list | None]:
    """(PNG, saving area, `overlapping_labels`) of `fig` from one drawing: the whole figure
    rendered at the saving dpi, its tight area found on that rendering (padded), the PNG cut
    out of it. Drawing the figure again for the PNG cost as much as finding the area did.
    A figure with a text anchored outside it is drawn on a canvas `OUTSIDE_MARGIN_IN` larger
    on every side (as savefig draws a saving area larger than the figure), where it cost a
    layout pass and a second drawing. The cut is at whole pixels, where savefig shifts the
    drawing by the area's fraction of a pixel: the same image size, the content up to half a
    pixel apart. (None, area, overlaps) when something lies outside the canvas drawn (savefig
    then draws the enlarged area, which a cut cannot show); (None, None, None) without a
    bitmap canvas, or when the saved colours or dpi are not the figure's own. The labels'
    overlaps are measured on the drawing: after a larger canvas the labels savefig places by
    pixel (the y-axis label) are left where that canvas put them. The figure is laid out
    already."""
    import numpy as np
    from matplotlib._tight_bbox import adjust_bbox
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import to_rgba
    from matplotlib.transforms import Bbox

    rc = matplotlib.rcParams
    if (
        not isinstance(fig.canvas, FigureCanvasAgg)
        or rc["savefig.transparent"]
        or rc["savefig.facecolor"] != "auto"
        or rc["savefig.edgecolor"] != "auto"
        or rc["savefig.dpi"] == "figure"
    ):
        return None, None, None
    dpi, shown = float(rc["savefig.dpi"]), fig.dpi
    width, height = fig.get_size_inches()
    # A whole number of pixels: the enlarged canvas's pixels are then the figure's own.
    margin = round(OUTSIDE_MARGIN_IN * dpi) / dpi if _anchored_outside(fig) else 0.0
    fig.set_dpi(dpi)
    try:
        # savefig's own way to draw an area other than the figure's (the Axes keep their
        # places, the background covers the whole canvas): a private module of matplotlib,
        # whose version the lock file pins; the tests compare the result with savefig's.
        restore = (
            adjust_bbox(
                fig,
                Bbox.from_extents(-margin, -margin, width + margin, height + margin),
                fig.canvas.get_renderer(),
            )
            if margin
            else None
        )
        try:
            fig.canvas.draw()
            renderer = fig.canvas.get_renderer()
            # Inches from the canvas's corner, which lies `margin` below and left of the figure's.
            tight = fig.get_tightbbox(renderer).frozen().translated(-margin, -margin)
            image = np.asarray(renderer.buffer_rgba())
            overlapping = overlapping_labels(fig, renderer)
        finally:
            if restore is not None:
                restore()
    finally:
        fig.set_dpi(shown)
    box = tight.padded(rc["savefig.pad_inches"])
    if tight.x0 < -margin or tight.y0 < -margin or tight.x1 > width + margin or tight.y1 > height + margin:
        return None, box, overlapping
    rows, cols = image.shape[:2]
    # savefig's image size for this area, and where it puts the area's corner: the rows of
    # an image count from its top, at its (whole) height.
    w, h = int(box.width * dpi), int(box.height * dpi)
    left, top = round((box.x0 + margin) * dpi), round(rows - h - (box.y0 + margin) * dpi)
    out = np.empty((h, w, 4), np.uint8)
    # The padding beyond the canvas's edge is the figure's background, as savefig draws it.
    out[:] = np.round(np.array(to_rgba(fig.get_facecolor())) * 255).astype(np.uint8)
    r0, r1 = max(top, 0), min(top + h, rows)
    c0, c1 = max(left, 0), min(left + w, cols)
    if r0 < r1 and c0 < c1:
        out[r0 - top : r1 - top, c0 - left : c1 - left] = image[r0:r1, c0:c1]
    return _encode_png(out, dpi, metadata), box, overlapping


# zlib level of the PNGs cut from a drawing. Unfiltered rows (`hmsim.png`) at level 3 make
# files within a few per cent of Pillow's filtered ones at the same level, in about a
# quarter of the time (the quick run's PNGs: docs/changelog.md).
PNG_COMPRESS_LEVEL = 3


def _encode_png(rgba, dpi: float, metadata: dict) -> bytes:
    """`rgba` (rows x columns x 4, uint8) as PNG bytes with `metadata` as text chunks and
    `dpi`. An opaque image (every figure with an opaque background) is written as RGB: the
    same pixels, a quarter less to compress."""
    from hmsim.png import encode_png

    pixels = rgba[..., :3] if (rgba[..., 3] == 255).all() else rgba
    text = {k: v for k, v in metadata.items() if v is not None}
    return encode_png(pixels, dpi, text, PNG_COMPRESS_LEVEL)


# Settings that name this process's own backend stay behind when a figure moves.
_RC_NOT_COPIED = {"backend", "backend_fallback", "interactive", "webagg.port", "webagg.address"}


def _pickled(fig: plt.Figure) -> bytes | None:
    """`fig` as bytes, or None when it holds something that does not pickle (a lambda
    formatter): then it is drawn here."""
    import pickle

    try:
        return pickle.dumps(fig)
    except Exception:
        return None


class _Background:
    """Figures handed to the drawing processes (`hmsim.drawing_processes`, started when the
    first `figures_in_background()` block opens unless `hmsim reproduce` started them
    earlier) by as many threads, which live only as long as a block (an idle thread left
    behind would read as unfinished work to the CLI's interrupt handling). A block belongs
    to the thread that opened it: studies run side by side (`hmsim reproduce all`) each
    wait for their own figures only, and share the drawing processes."""

    def __init__(self) -> None:
        import threading

        self._mine = threading.local()

    # This thread's block: its figures not yet drawn, and the threads feeding them.
    @property
    def pending(self) -> list | None:
        return getattr(self._mine, "pending", None)

    @pending.setter
    def pending(self, value: list | None) -> None:
        self._mine.pending = value

    @property
    def _threads(self):
        return getattr(self._mine, "threads", None)

    @_threads.setter
    def _threads(self, value) -> None:
        self._mine.threads = value

    def start(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        from hmsim.drawing_processes import PROCESSES

        PROCESSES.start()
        if self._threads is None:
            self._threads = ThreadPoolExecutor(max_workers=PROCESSES.count(), thread_name_prefix="hmsim-figures")

    def stop_threads(self, wait: bool) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=wait, cancel_futures=not wait)
            self._threads = None

    def submit(self, job: tuple):
        self.start()
        return self._threads.submit(self._draw, job)

    def _draw(self, job: tuple) -> dict:
        from hmsim import figure_worker
        from hmsim.drawing_processes import PROCESSES

        proc = PROCESSES.take()
        try:
            figure_worker.send(proc.stdin, job)
            error, facts = figure_worker.receive(proc.stdout)
        except (EOFError, OSError) as e:
            raise RuntimeError(f"the figure-drawing process ended (exit code {proc.poll()})") from e
        finally:
            PROCESSES.give_back(proc)
        if error is not None:
            raise RuntimeError(f"drawing figure {job[3]!r}: {error}")
        return facts


_BACKGROUND = _Background()


@contextmanager
def figures_in_background(waiting: Callable[[], AbstractContextManager] = nullcontext):
    """Inside, `save_figure` returns at once and drawing processes write the files (in
    parallel with whatever runs next); leaving waits for every file (inside `waiting()`:
    a study sharing the cores gives up its turn meanwhile) and raises the first drawing
    error. On an interruption the figures not yet drawn are dropped (the results are
    already written)."""
    if _BACKGROUND.pending is not None:  # nested: the outer one waits
        yield
        return
    _BACKGROUND.start()
    _BACKGROUND.pending = []
    try:
        yield
    except BaseException:
        _BACKGROUND.stop_threads(wait=False)
        raise
    else:
        with waiting():
            drawn = [(key, f.result()) for key, f in _BACKGROUND.pending]
        DRAWN.update(drawn)
    finally:
        _BACKGROUND.pending = None
        _BACKGROUND.stop_threads(wait=True)


class PlainNumbers(matplotlib.ticker.Formatter):
    """Tick labels as plain numbers (1, 2, 4, 0.25), where a log axis writes powers of its
    base (2^0, 2^1, ...): thread counts, queue depths and sizes read as themselves, and the
    labels need no math-text typesetting (a tenth of such a figure's drawing). A class, so
    that a figure holding it pickles for a drawing process."""

    def __call__(self, x, pos=None) -> str:
        return f"{x:.0f}" if float(x).is_integer() else f"{x:g}"


def log2_axis(ax: plt.Axes, axis: str = "x") -> None:
    """A base-2 log scale on `ax`'s `axis` ("x" or "y"), its ticks labelled `PlainNumbers`."""
    getattr(ax, f"set_{axis}scale")("log", base=2)
    getattr(ax, f"{axis}axis").set_major_formatter(PlainNumbers())


def dot_plot(ax: plt.Axes, table, colors: dict | None = None, log: bool = False, rotation: int = 0) -> None:
    """Grouped values as dots, not bars: a category per row of `table` on x, a series per
    column side by side within it (colour and marker each, labelled for the legend). For a
    log axis, where a bar's length would only say where the axis starts."""
    cols = [str(c) for c in table.columns]
    style = series_style(cols)
    n = max(len(cols), 1)
    width = 0.8 / n
    x0 = list(range(len(table.index)))
    for k, (col, name) in enumerate(zip(table.columns, cols, strict=True)):
        st = {**style[name], "linestyle": "none"}
        if colors and name in colors:
            st["color"] = colors[name]
        xs = [x + (k - (n - 1) / 2) * width for x in x0]
        ax.plot(xs, table[col].to_numpy(dtype=float), label=name, markersize=6, **st)
    ax.set_xticks(x0, [str(i) for i in table.index], rotation=rotation, ha="right" if rotation else "center")
    for x in x0[1:]:
        ax.axvline(x - 0.5, color="#dddddd", lw=0.8, zorder=0)
    ax.grid(axis="x", visible=False)
    if log:
        ax.set_yscale("log")
