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
    assert plotting.DRAWN[str(tmp_path / "away")] == plotting.DRAWN[str(tmp_path / "here")]


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
