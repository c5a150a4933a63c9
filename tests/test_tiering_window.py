"""Each tiering row says whether its measured window is steady; a row that is not, and a
policy that migrates nothing for a known reason, are warned about on stdout and in
summary.json (docs/tiering.md, *Is the window steady?*)."""

from __future__ import annotations

import json

import pandas as pd

# Small tiers (4 + 12 GB) under an 8 GiB GUPS: HeMem moves the 2 GiB hot set into the
# default tier within about a second; TPP with 2 MiB pages keeps first touch.
SCENARIO = """module = "tiering"
seed = 3
[[tiers]]
name = "default"
capacity_bytes = 4000000000
unloaded_latency_ns = 70.0
read_bandwidth_gb_s = 160.0
[[tiers]]
name = "alternate"
capacity_bytes = 12000000000
unloaded_latency_ns = 135.0
read_bandwidth_gb_s = 75.0
[workload]
working_set_bytes = 8589934592
hot_set_bytes = 2147483648
[antagonist]
intensities = [0]
[policy]
names = ["hemem", "tpp"]
[sim]
duration_s = 0.5
measure_last_s = 0.2
"""


def _run(cli, tmp_path, *sets: str):
    f = tmp_path / "s.toml"
    f.write_text(SCENARIO)
    out = tmp_path / "o"
    args = ["run", str(f), "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    code, stdout, _ = cli(*args)
    assert code == 0
    return stdout, pd.read_csv(out / "results.csv"), json.loads((out / "summary.json").read_text())


def test_a_short_run_is_flagged_in_the_row_on_stdout_and_in_the_summary(cli, tmp_path):
    stdout, df, summary = _run(cli, tmp_path)
    hemem = df[df.policy == "hemem"].iloc[0]
    assert not hemem.converged and hemem.window_throughput_drift > 0.02
    assert "warning: hemem at intensity 0×: the measured window" in stdout
    steady = [w for w in summary["warnings"] if "not steady" in w]
    assert len(steady) == 1 and "sim.duration_s" in steady[0] and "sim.measure_last_s" in steady[0]
    # TPP with 2 MiB pages: the notice says why it moved nothing.
    tpp = [w for w in summary["warnings"] if w.startswith("tpp at intensity 0×")]
    assert tpp and "THP" in tpp[0] and "sim.page_bytes = 4096" in tpp[0]
    assert df[df.policy == "tpp"].iloc[0].converged


def test_a_long_enough_run_is_steady_and_not_flagged(cli, tmp_path):
    stdout, df, summary = _run(cli, tmp_path, "sim.duration_s=2", "policy.names=['hemem']")
    assert df.converged.all()
    assert "not steady" not in stdout
    assert not summary.get("warnings")


def test_a_window_of_one_quantum_is_refused_it_has_no_halves_to_compare(cli, tmp_path):
    # A one-quantum window passed the steadiness test unexamined (no halves: drift read 0).
    f = tmp_path / "s.toml"
    f.write_text(SCENARIO)
    code, _, stderr = cli("run", str(f), "--out", str(tmp_path / "o"), "--set", "sim.measure_last_s=0.01")
    assert code == 2
    assert "sim.measure_last_s" in stderr and "allowed 0.02 to 0.5 s" in stderr, stderr
