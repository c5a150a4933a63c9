"""The sweep runner: grid, resume, Ctrl-C keeps finished points, bad sweep files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import hmsim.sweep as sweep_mod
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


def test_ctrl_c_keeps_finished_points(sweep_file, tmp_path, monkeypatch):
    out = tmp_path / "out"
    real = sweep_mod.run_raw
    calls = {"n": 0}

    def flaky(*a, **k):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(sweep_mod, "run_raw", flaky)
    with pytest.raises(SweepInterrupted) as e:
        run_sweep(sweep_file, out, workers=1)
    saved = len(list((out / "points").glob("*.json")))
    assert saved == 3 == e.value.done
    monkeypatch.setattr(sweep_mod, "run_raw", real)
    res = run_sweep(sweep_file, out, workers=1)
    assert res.reused == 3 and res.ran == 3


def test_cli_sweep_interrupted_exits_130(cli, sweep_file, tmp_path, monkeypatch):
    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_mod, "run_raw", boom)
    code, _, err = cli("sweep", str(sweep_file), "--out", str(tmp_path / "o"), "--workers", "1")
    assert code == 130 and "resume" in err


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
