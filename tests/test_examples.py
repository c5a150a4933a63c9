"""The example scenario and sweep files run as shipped (with shorter simulated times)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import hmsim
from hmsim.sweep import run_sweep

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_every_example_scenario_runs(tmp_path):
    scenarios = [p for p in EXAMPLES.glob("*.toml") if "sweep" not in p.name]
    assert scenarios
    shorter = {
        "storage": {"job.duration_s": 0.01, "job.total_bytes": 1 << 28},
        "pmem": {"workload.operations": 1000},
        "tiering": {"sim.duration_s": 2.0, "sim.measure_last_s": 1.0},
        "allocators": {},
        "numa": {},
        "hybrid": {"device.capacity_mib": 256, "workload.threads": 2},
        "pm-index": {"workload.records": 2000, "workload.operations": 2000},
    }
    for p in scenarios:
        module = p.read_text().split('module = "', 1)[1].split('"', 1)[0]
        ov = {"crash.operations": 500} if "[crash]" in p.read_text() else shorter[module]
        r = hmsim.run(p, out=tmp_path / p.stem, set=ov, devices=[EXAMPLES / "devices"])
        assert len(r.results) >= 1
        assert (tmp_path / p.stem / "summary.json").exists()


def test_example_sweep_runs(tmp_path):
    res = run_sweep(EXAMPLES / "storage-qd-sweep.toml", tmp_path / "sweep", workers=2)
    assert res.ran == 14
    df = pd.read_csv(tmp_path / "sweep" / "results.csv")
    stt = df[df["device.name"] == "stt-mram-ssd"].sort_values("job.queue_depth")
    assert stt.bandwidth_mib_s.iloc[-1] >= stt.bandwidth_mib_s.iloc[0]


def test_example_replicates_sweep_settles_the_policies_order(tmp_path):
    # The example's claim (docs/configuration.md#replicates): the runtime bands of smart_EPF
    # and no_EPF overlap, yet smart_EPF is the faster in every seed at every DRAM size.
    res = run_sweep(EXAMPLES / "hybrid-epf-seeds-sweep.toml", tmp_path / "seeds", workers=2)
    assert res.ran == 15
    order = pd.read_csv(tmp_path / "seeds" / "replicates_order.csv")
    pair = order[
        (order.metric == "runtime_s") & order.row_a.str.contains("no_EPF") & order.row_b.str.contains("smart_EPF")
    ]
    assert len(pair) == 3
    assert (pair.a_higher_seeds == 5).all()
