"""The sweep runner: grid, resume, Ctrl-C keeps finished points, bad sweep files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

import hmsim.prefix_runs as prefix_runs
from hmsim.errors import HmsimError
from hmsim.sweep import SweepInterrupted, load_sweep, run_sweep

SWEEP = """\
scenario = "scenario.toml"
[set]
"job.duration_s" = 0.005
[axes]
"job.queue_depth" = [1, 4, 16]
"device.name" = ["intel-optane-900p", "stt-mram-ssd"]
"""


@pytest.fixture
def sweep_file(scenario: Path) -> Path:
    p = scenario.parent / "sweep.toml"
    p.write_text(SWEEP)
    return p


def test_grid_results_and_resume(sweep_file, tmp_path):
    out = tmp_path / "out"
    res = run_sweep(sweep_file, out, workers=2)
    assert res.ran == 6 and res.reused == 0
    df = pd.read_csv(out / "results.csv")
    assert len(df) == 6
    assert sorted(df["job.queue_depth"].unique()) == [1, 4, 16]
    assert (df["job.queue_depth"] == df["queue_depth"]).all()
    again = run_sweep(sweep_file, out, workers=2)
    assert again.ran == 0 and again.reused == 6
    pd.testing.assert_frame_equal(pd.read_csv(out / "results.csv"), df)
    # Lose one point: only that one runs again.
    next((out / "points").glob("*.json")).unlink()
    third = run_sweep(sweep_file, out, workers=2)
    assert third.ran == 1 and third.reused == 5
    summary = json.loads((out / "summary.json").read_text())
    assert summary["points"] == 6 and summary["seeds"] == [7]
    # What its points cost in CPU, each point's own (the one run again and the five reused).
    assert summary["points_cpu_time_s"] > 0


def test_another_build_of_the_core_runs_every_point_again(sweep_file, tmp_path, monkeypatch):
    """A core rebuilt from changed model code keeps its version number: its points are not
    the old build's, so a resumed sweep runs them all again rather than mixing two models."""
    import hmsim.sweep as sweep

    out = tmp_path / "out"
    assert run_sweep(sweep_file, out, workers=2).ran == 6
    assert run_sweep(sweep_file, out, workers=2).reused == 6
    # The build's identity covers the compiled core's bytes, not only the version.
    assert sweep._build_id() != hashlib.sha256(hmsim_version().encode()).hexdigest()
    monkeypatch.setattr(sweep, "_build_id", lambda: "another build")
    rebuilt = run_sweep(sweep_file, out, workers=2)
    assert rebuilt.ran == 6 and rebuilt.reused == 0


def hmsim_version() -> str:
    from hmsim import _core

    return _core.__version__


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd to name a flushed file")
def test_points_are_saved_unflushed_and_a_point_a_power_loss_empties_runs_again(sweep_file, tmp_path, monkeypatch):
    import os

    flushed: list[Path] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        flushed.append(Path(os.readlink(f"/proc/self/fd/{fd}")))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    out = tmp_path / "out"
    assert run_sweep(sweep_file, out, workers=2).ran == 6
    # The results are flushed before they take their names; the store of points is not.
    names = [p.name for p in flushed]
    assert any(n.startswith(".results.csv.") for n in names), names
    assert any(n.startswith(".summary.json.") for n in names), names
    assert not [p for p in flushed if p.parent.name == "points"]
    df = pd.read_csv(out / "results.csv")
    # What a power loss may leave of files not flushed: one empty, one of zeros.
    first, second = sorted((out / "points").glob("*.json"))[:2]
    first.write_bytes(b"")
    second.write_bytes(b"\0" * second.stat().st_size)
    again = run_sweep(sweep_file, out, workers=2)
    assert again.ran == 2 and again.reused == 4
    pd.testing.assert_frame_equal(pd.read_csv(out / "results.csv"), df)
    assert json.loads(first.read_text())["rows"] and json.loads(second.read_text())["rows"]


def test_ctrl_c_keeps_finished_points(sweep_file, tmp_path, monkeypatch):
    out = tmp_path / "out"
    real = prefix_runs.run_raw
    calls = {"n": 0}

    def flaky(*a, **k):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(prefix_runs, "run_raw", flaky)
    with pytest.raises(SweepInterrupted) as e:
        run_sweep(sweep_file, out, workers=1)
    saved = len(list((out / "points").glob("*.json")))
    assert saved == 3 == e.value.done
    monkeypatch.setattr(prefix_runs, "run_raw", real)
    res = run_sweep(sweep_file, out, workers=1)
    assert res.reused == 3 and res.ran == 3


def test_cli_sweep_interrupted_exits_130(cli, sweep_file, tmp_path, monkeypatch):
    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(prefix_runs, "run_raw", boom)
    code, _, err = cli("sweep", str(sweep_file), "--out", str(tmp_path / "o"), "--workers", "1")
    assert code == 130 and "resume" in err


def test_a_signal_inside_the_figures_import_still_says_how_to_resume(sweep_file, tmp_path, monkeypatch):
    """A signal that lands while a C extension loads (matplotlib, for the sweep figures) surfaces
    as another error ("ImportError: initialization failed"): every point is saved, and the sweep
    says so and how to resume, as after a KeyboardInterrupt."""
    import hmsim.figures
    from hmsim import signals

    def interrupted_import(*a, **k):
        monkeypatch.setattr(signals, "_received", 15)
        raise ImportError("initialization failed")

    monkeypatch.setattr(hmsim.figures, "sweep_figures", interrupted_import)
    out = tmp_path / "o"
    with pytest.raises(SweepInterrupted) as e:
        run_sweep(sweep_file, out, workers=1)
    assert e.value.done == 6 == len(list((out / "points").glob("*.json")))
    assert "resume" in str(e.value) and not (out / "summary.json").exists()
    # Without a signal the same error is the error.
    monkeypatch.setattr(signals, "_received", None)

    def failed_import(*a, **k):
        raise ImportError("initialization failed")

    monkeypatch.setattr(hmsim.figures, "sweep_figures", failed_import)
    with pytest.raises(ImportError):
        run_sweep(sweep_file, tmp_path / "o2", workers=1)


@pytest.mark.parametrize(
    ("axes", "key"),
    [
        ('"job.queue_depth" = []', "axes.job.queue_depth"),
        ('"job.queue_depth" = 4', "axes.job.queue_depth"),
        ('"job.queue_depth" = [1, "x"]', "axes.job.queue_depth"),
        ('"job.queue_depth" = [1, 1]', "axes.job.queue_depth"),
    ],
)
def test_bad_axes_name_the_axis(scenario, axes, key):
    p = scenario.parent / "bad_sweep.toml"
    p.write_text(f'scenario = "scenario.toml"\n[axes]\n{axes}\n')
    with pytest.raises(HmsimError) as e:
        load_sweep(p)
    assert key in str(e.value) and str(p) in str(e.value)


def test_empty_axes_table(scenario, cli, tmp_path):
    p = scenario.parent / "bad_sweep.toml"
    p.write_text('scenario = "scenario.toml"\n[axes]\n')
    code, _, err = cli("sweep", str(p), "--out", str(tmp_path / "o"))
    assert code == 2 and "axes" in err


def test_bad_value_in_axis_is_reported_as_config_error(scenario, cli, tmp_path):
    p = scenario.parent / "bad_sweep.toml"
    p.write_text('scenario = "scenario.toml"\n[axes]\n"job.queue_depth" = [1, 100]\n')
    code, _, err = cli("sweep", str(p), "--out", str(tmp_path / "o"), "--workers", "1")
    assert code == 2 and "job.queue_depth" in err and "1 to 64" in err


@pytest.fixture
def runs(monkeypatch) -> list:
    """The overrides of every point the core runs, in order."""
    calls: list = []
    real = prefix_runs.run_raw

    def counting(*a, **k):
        calls.append(a[2])
        return real(*a, **k)

    monkeypatch.setattr(prefix_runs, "run_raw", counting)
    return calls


def _same_run_points(scenario: Path) -> list:
    """Three points of one simulation (one writes the scenario's own queue depth out, one
    writes it in another order with the duration) and one of another, each labelled."""
    from hmsim.sweep import Point

    text, file = scenario.read_text(), str(scenario)
    return [
        Point(text, file, (), (("name", "plain"),)),
        Point(text, file, (("job.queue_depth", "8"),), (("name", "spelled"),)),
        Point(text, file, (("job.duration_s", "0.01"), ("job.queue_depth", "8")), (("name", "both"),)),
        Point(text, file, (("job.queue_depth", "16"),), (("name", "deeper"),)),
    ]


def test_points_of_one_simulation_run_once(scenario, tmp_path, runs):
    from hmsim.sweep import POINTS_LEDGER, points_ledger, run_points

    points = _same_run_points(scenario)
    out = tmp_path / "out"
    with points_ledger() as ledger:
        res = run_points(points, out, workers=1)
        assert POINTS_LEDGER.get() is ledger
    assert (res.ran, res.shared, res.reused) == (4, 2, 0) and len(runs) == 2
    assert (ledger["ran"], ledger["shared"], ledger["reused"]) == (4, 2, 0)
    df = res.results.set_index("name")
    assert list(res.results["name"]) == ["plain", "spelled", "both", "deeper"]
    metrics = [c for c in df.columns if c not in ("wall_time_s",)]
    # Each twin has the rows of the one run, under its own labels.
    pd.testing.assert_series_equal(df.loc["plain", metrics], df.loc["spelled", metrics], check_names=False)
    pd.testing.assert_series_equal(df.loc["plain", metrics], df.loc["both", metrics], check_names=False)
    assert df.loc["deeper", "queue_depth"] == 16 != df.loc["plain", "queue_depth"]
    # Every point keeps its own file; a twin names the point whose run it shares, and adds
    # no run time of its own to the study's sum.
    files = {p.id: json.loads((out / "points" / f"{p.id}.json").read_text()) for p in points}
    twins = [o for o in files.values() if "same_run_as" in o]
    assert len(twins) == 2 and all(o["wall_time_s"] == 0.0 for o in twins)
    assert {o["same_run_as"] for o in twins} <= set(files)
    # A new label on the same simulation takes the saved output: nothing runs.
    from hmsim.sweep import Point

    text, file = scenario.read_text(), str(scenario)
    later = [*points, Point(text, file, (("job.block_size_bytes", "4096"),), (("name", "later"),))]
    again = run_points(later, out, workers=1)
    assert (again.ran, again.shared, again.reused) == (0, 0, 5) and len(runs) == 2
    assert again.results.set_index("name").loc["later", "queue_depth"] == 8


def test_host_timed_points_each_run(scenario, tmp_path, runs):
    """`alone` points are measurements on the host: twins are not merged."""
    from hmsim.sweep import run_points

    res = run_points(_same_run_points(scenario), tmp_path / "out", workers=1, alone=True)
    assert (res.ran, res.shared) == (4, 0) and len(runs) == 4


def test_a_refused_point_is_not_merged(scenario, tmp_path):
    """A point the core cannot resolve runs by itself and reports its own error."""
    from hmsim.sweep import Point, run_points

    text, file = scenario.read_text(), str(scenario)
    points = [
        Point(text, file, (), (("name", "plain"),)),
        Point(text, file, (("job.queue_depth", "-1"),), (("name", "bad"),)),
    ]
    with pytest.raises(HmsimError) as e:
        run_points(points, tmp_path / "out", workers=1)
    assert "queue_depth" in str(e.value)


def test_a_sweep_keeps_prints_and_returns_its_points_run_warnings(cli, scenario, tmp_path):
    """A point's run warnings (here: a write job that fits in the device's SLC cache measured
    the cache) are printed by `hmsim sweep`, kept in summary.json and returned with the
    frame, each led by its point's labels; a point without any adds none."""
    import hmsim

    fixed = {"job.op": "write", "job.total_bytes": 1_000_000}
    devices = ["intel-optane-900p", "nand-ssd-tlc"]
    sweep = scenario.parent / "warns.toml"
    sets = "".join(f'"{k}" = {json.dumps(v)}\n' for k, v in fixed.items())
    sweep.write_text(f'scenario = "scenario.toml"\n[set]\n{sets}[axes]\n"device.name" = {json.dumps(devices)}\n')
    status, out, _ = cli("sweep", str(sweep), "--out", str(tmp_path / "o"))
    assert status == 0, out
    printed = [line.removeprefix("warning: ") for line in out.splitlines() if line.startswith("warning: ")]
    assert len(printed) == 1, out
    assert printed[0].startswith("device.name=nand-ssd-tlc: device nand-ssd-tlc: all "), printed
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["warnings"] == printed
    df = hmsim.sweep(scenario, {"device.name": devices}, set=fixed)
    assert df.attrs["warnings"] == printed
