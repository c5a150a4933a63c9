"""Figures drawn by the drawing processes (`figures_in_background`) are the same files the
study's own process would write, exist when the block ends, and report drawing errors."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
from matplotlib.ticker import FuncFormatter

from hmsim import plotting

ROOT = Path(__file__).resolve().parents[1]


def _figure(formatter=None) -> plt.Figure:
    with plotting.house_style():
        fig, (a, b) = plt.subplots(1, 2)
        for k in range(3):
            a.plot([1, 2, 4], [k, k * 2, k * 5], label=f"series {k} ($\\mu$s)")
        b.bar(["x", "y"], [3, 4])
        b.set_yscale("log")
        a.set_xlabel("bandwidth (GB/s)")
        fig.suptitle("a figure")
        plotting.outside_legend(a)
        if formatter is not None:
            a.xaxis.set_major_formatter(formatter)
        return fig


def _save(fig, out: Path, name: str) -> list[Path]:
    with plotting.house_style():
        return plotting.save_figure(fig, out, name)


def test_a_figure_drawn_in_the_background_is_byte_identical_and_there_when_the_block_ends(tmp_path):
    here = _save(_figure(), tmp_path, "here")
    with plotting.figures_in_background():
        away = _save(_figure(), tmp_path, "away")
        assert plotting._BACKGROUND.pending, "the figure was not handed to a drawing process"
    assert [p.suffix for p in away] == [".png", ".svg", ".pdf"]
    for a, b in zip(here, away, strict=True):
        assert b.exists()
        assert a.read_bytes() == b.read_bytes(), b.name
    away_facts, here_facts = (dict(plotting.DRAWN[str(tmp_path / k)]) for k in ("away", "here"))
    # What drawing cost, wherever it was drawn; every other fact the same.
    assert away_facts.pop("cpu_time_s") > 0 and here_facts.pop("cpu_time_s") > 0
    assert away_facts == here_facts


def test_figure_formats_chooses_the_files_here_and_in_the_background_and_drops_stale_ones(tmp_path):
    _save(_figure(), tmp_path, "here")  # all three, as an earlier full run left them
    _save(_figure(), tmp_path, "away")
    with plotting.figure_formats(("png",)):
        assert plotting.chosen_formats() == ("png",)
        here = _save(_figure(), tmp_path, "here")
        with plotting.figures_in_background():
            away = _save(_figure(), tmp_path, "away")
    assert plotting.chosen_formats() is None
    for paths, name in ((here, "here"), (away, "away")):
        assert paths == [tmp_path / f"{name}.png"]
        assert sorted(p.name for p in tmp_path.glob(f"{name}.*")) == [f"{name}.png"]


def test_parse_formats_accepts_the_three_and_names_anything_else():
    assert plotting.parse_formats("PNG, .pdf,png") == ("png", "pdf")
    for bad in ("png,jpeg", "", " , "):
        with pytest.raises(ValueError, match="png, svg, pdf"):
            plotting.parse_formats(bad)


def test_a_figure_that_does_not_pickle_is_drawn_here(tmp_path):
    with plotting.figures_in_background():
        paths = _save(_figure(FuncFormatter(lambda x, _: f"{x:g} s")), tmp_path, "lambda")
        assert not plotting._BACKGROUND.pending
        assert all(p.exists() for p in paths)


def test_a_drawing_error_is_raised_where_the_block_ends(tmp_path):
    (tmp_path / "a-file").write_text("")
    missing = tmp_path / "a-file" / "directory"  # cannot be made
    with pytest.raises(RuntimeError, match="drawing figure 'lost'"), plotting.figures_in_background():
        _save(_figure(), missing, "lost")
    # the drawing processes survive an error and draw the next figure
    with plotting.figures_in_background():
        paths = _save(_figure(), tmp_path, "next")
    assert all(p.exists() for p in paths)


def test_a_script_without_a_main_guard_is_not_run_again_by_the_drawing_processes(tmp_path):
    script = tmp_path / "mine.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            from hmsim import plotting
            print("script body ran", flush=True)
            with plotting.figures_in_background():
                fig, ax = plt.subplots()
                ax.plot([1, 2], [3, 4])
                plotting.save_figure(fig, {str(tmp_path)!r}, "mine")
            """
        )
    )
    out = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("script body ran") == 1
    assert (tmp_path / "mine.png").exists()


def test_no_feeding_thread_outlives_its_block(tmp_path):
    """An idle thread left behind would read as unfinished work to the CLI's interrupt
    handling, which then ends the whole process (an in-process CLI call, a notebook)."""
    import threading

    with plotting.figures_in_background():
        _save(_figure(), tmp_path, "one")
    assert not [t for t in threading.enumerate() if t.name.startswith("hmsim-figures")]


def _pixels(png: bytes):
    import io

    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA")).astype(int)


def _tight_png(fig: plt.Figure) -> bytes:
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def test_the_png_cut_from_one_drawing_is_savefigs_tight_png_up_to_a_fraction_of_a_pixel():
    import numpy as np

    with plotting.house_style():
        fig = _figure()
        fig.tight_layout()
        png, box, _ = plotting._png_and_bbox(fig, {"Software": "hmsim"})
        assert png is not None
        # The area is the one the separate layout pass finds, so the vector copies keep theirs.
        assert np.allclose(box.bounds, plotting._tight_bbox(fig).bounds)
        _close_to_savefigs(png, fig)
    plt.close(fig)


def test_a_text_outside_the_figure_is_drawn_by_savefig_into_a_larger_image(tmp_path):
    with plotting.house_style():
        fig = _figure()
        fig.tight_layout()
        fig.text(0.01, -0.05, "a footnote below the figure", va="top")
        assert plotting._anchored_outside(fig)
        fig.texts[-1].set_position((0.01, 0.0))  # anchored inside, but it hangs below
        assert not plotting._anchored_outside(fig)
        png, box, _ = plotting._png_and_bbox(fig, {})
        assert png is None and box.y0 < 0, "the area must reach below the figure"
        fig.texts[-1].set_position((0.01, -0.05))
        dpi = plotting.STYLE["savefig.dpi"]
        height = fig.get_size_inches()[1]
        paths = plotting.save_figure(fig, tmp_path, "footnote")
    png = next(p for p in paths if p.suffix == ".png")
    assert _pixels(png.read_bytes()).shape[0] > height * dpi, "the footnote was cut off"


def _close_to_savefigs(png: bytes, fig: plt.Figure, size_px: int = 0) -> None:
    """`png` is what savefig's "tight" PNG of `fig` shows, up to a fraction of a pixel, its
    size within `size_px` pixels of savefig's (compared on the rows and columns both have,
    from the bottom left corner, where both put the saving area's corner)."""
    import numpy as np

    ours, tight = _pixels(png), _pixels(_tight_png(fig))
    assert all(abs(a - b) <= size_px for a, b in zip(ours.shape, tight.shape, strict=True)), (ours.shape, tight.shape)
    rows, cols = min(ours.shape[0], tight.shape[0]), min(ours.shape[1], tight.shape[1])
    ours, tight = ours[-rows:, :cols], tight[-rows:, :cols]
    # Anti-aliased edges differ where savefig draws at the area's fraction of a pixel; a cut
    # one pixel off would differ far more (the lines and text move).
    diff = np.abs(ours - tight).mean()
    shifted = np.abs(ours[1:, 1:] - tight[:-1, :-1]).mean()
    assert diff < 3.0 and diff < shifted / 2, (diff, shifted)


def test_a_footnote_outside_the_figure_is_cut_from_one_drawing_on_a_larger_canvas():
    import numpy as np

    with plotting.house_style():
        fig = _figure()
        # A long y label beside a title as wide as its panel: apart where they are drawn,
        # run into each other were the label left where the larger canvas placed it (savefig
        # places a y label in pixels).
        fig.axes[1].set_title("a title of panel b as long as the panel")
        fig.axes[1].set_ylabel("a long label " * 6)
        fig.tight_layout()
        fig.text(0.01, -0.05, "a footnote below the figure\nin two lines", va="top")
        png, box, overlapping = plotting._png_and_bbox(fig, {})
        assert png is not None, "one drawing covers a footnote the margin holds"
        assert box.y0 < 0
        assert np.allclose(box.bounds, plotting._tight_bbox(fig).bounds)
        # The area, found on a canvas whose corner lies a margin away, is savefig's up to
        # rounding: an image size that falls on a whole number of pixels may come out one
        # pixel apart.
        _close_to_savefigs(png, fig, size_px=1)
        # The overlaps are measured where the labels are drawn.
        fig.set_dpi(plotting.STYLE["savefig.dpi"])
        fig.draw_without_rendering()
        assert overlapping == plotting.overlapping_labels(fig) == []
        # Beyond the margin a cut cannot show it: savefig draws it.
        fig.texts[-1].set_position((0.01, -1.0 - plotting.OUTSIDE_MARGIN_IN / fig.get_size_inches()[1]))
        png, box, _ = plotting._png_and_bbox(fig, {})
        assert png is None and box.y0 < -plotting.OUTSIDE_MARGIN_IN
    plt.close(fig)


def _constrained(figure_layout: bool) -> plt.Figure:
    import numpy as np

    with plotting.house_style():
        fig, axes = plt.subplots(1, 2, figsize=(8, 3))
        for ax in axes:
            im = ax.imshow(np.arange(12.0).reshape(3, 4), origin="lower", aspect="auto")
            ax.set_title("a heat map with a title")
        fig.colorbar(im, ax=axes.tolist(), label="value")
        fig.set_layout_engine("constrained")
        if figure_layout:
            fig.text(0.01, -0.02, "a footnote", va="top")
        return fig


@pytest.mark.parametrize("footnote", [False, True])
def test_a_constrained_layout_runs_once_and_its_png_is_savefigs(tmp_path, footnote):
    from unittest import mock

    from matplotlib.layout_engine import ConstrainedLayoutEngine

    fig = _constrained(footnote)
    original = ConstrainedLayoutEngine.execute
    with (
        plotting.house_style(),
        mock.patch.object(ConstrainedLayoutEngine, "execute", autospec=True, side_effect=original) as run,
    ):
        plotting.save_figure(fig, tmp_path, "constrained")
    assert run.call_count == 1, "laid out once, for every format"
    with plotting.house_style():
        _close_to_savefigs((tmp_path / "constrained.png").read_bytes(), _constrained(footnote), size_px=int(footnote))
    plt.close("all")


def test_a_transparent_save_keeps_savefigs_own_drawing():
    with plotting.house_style(), matplotlib.rc_context({"savefig.transparent": True}):
        fig = _figure()
        assert plotting._png_and_bbox(fig, {}) == (None, None, None)
    plt.close(fig)


def test_a_drawing_process_does_not_import_pandas():
    """What a drawing process imports to draw and write a figure leaves pandas out: two of
    them start per run, and pandas was a third of their start-up (`hmsim.atomic`)."""
    code = (
        "import sys, matplotlib; matplotlib.use('Agg'); import hmsim.figure_worker; "
        "from hmsim.plotting import write_figure_files; print('pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_log2_axis_labels_its_ticks_as_plain_numbers_and_pickles():
    import pickle

    with plotting.house_style():
        fig, ax = plt.subplots()
        ax.plot([0.25, 1, 4, 16, 64], [1, 2, 3, 4, 5])
        plotting.log2_axis(ax)
        fig = pickle.loads(pickle.dumps(fig))  # as a drawing process gets it
        fig.draw_without_rendering()
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    plt.close(fig)
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    assert {"0.25", "1", "4", "16", "64"} <= set(labels), labels
    assert not any("$" in t or "^" in t for t in labels), labels


def _shared_grid(title_y: float | None) -> bytes:
    """The tight PNG of a 2 × 3 grid sharing its x axes, with titles, base-2 axes, a legend
    and a suptitle (as the allocators' grids are), titles at `title_y` (None: matplotlib's
    automatic placement)."""
    with plotting.house_style(), matplotlib.rc_context({"axes.titley": title_y}):
        fig, axes = plt.subplots(2, 3, figsize=(13, 7), sharex=True)
        for k, ax in enumerate(axes.flat):
            ax.plot([1, 2, 4, 8, 16], [k, 2 * k, 3, 5, k * k], marker="o", label="a series")
            plotting.log2_axis(ax)
            ax.set_title(f"panel {k}")
            ax.set_xlabel("threads")
        axes.flat[0].legend()
        fig.suptitle("a grid")
        png = _tight_png(fig)
    plt.close(fig)
    return png


def test_titles_sit_where_the_automatic_placement_puts_them():
    # The house style skips the automatic search (its cost grows with the axes sharing an
    # x axis); with nothing on top of the axes it would have found the same place.
    assert plotting.STYLE["axes.titley"] == 1.0
    assert (_pixels(_shared_grid(1.0)) == _pixels(_shared_grid(None))).all()
