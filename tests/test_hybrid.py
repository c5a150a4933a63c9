"""The hybrid module (UMD + EPF) through the Python API and CLI: trace replay, policies,
determinism, bad input, and the quick study's qualitative results."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import hmsim
from hmsim.studies.hybrid import GC_SHARE_WARN, TRACE_PASSES

PIGZ = Path(__file__).resolve().parents[1] / "crates" / "hmsim" / "tests" / "data" / "traces" / "pigz-d.pages.hmt"
REQUIRED = [
    "policy",
    "dram_mib",
    "input_mib",
    "threads",
    "runtime_s",
    "internal_faults",
    "internal_fault_share",
    "epf_raised",
    "epf_share",
    "gc_runs",
    "flash_waf",
]


def _small(**workload) -> dict:
    return {
        "module": "hybrid",
        "seed": 2,
        "device": {"capacity_mib": 64, "dram_mib": 1.0},
        "workload": {"threads": 5, **workload},
    }


def test_trace_replay_by_five_processes_and_policy_semantics():
    sc = _small(trace=str(PIGZ))
    sc["policies"] = [
        {"name": "no_EPF"},
        {"name": "all_EPF"},
        {"name": "smart_EPF", "threshold_us": 0.0},
        {"name": "smart_EPF", "threshold_us": math.inf},
    ]
    r = hmsim.run(sc).results
    assert set(REQUIRED) <= set(r.columns)
    no, all_, smart0, smart_inf = (r.iloc[i] for i in range(4))
    assert no.internal_faults > 0 and no.epf_raised == 0
    assert all_.epf_share == 1.0
    for col in ("runtime_s", "internal_faults", "epf_raised", "stall_s"):
        assert smart_inf[col] == no[col]
    # Threshold 0 still weighs gain against cost: never more EPFs than all_EPF.
    assert 0 < smart0.epf_raised <= all_.epf_raised
    # no_EPF stalls the core; EPFs turn the stall into other threads' work or idle time.
    assert no.stall_s > 0 and all_.stall_s == 0
    assert all_.runtime_s < no.runtime_s
    # 5 separate processes each replay the trace's 129 distinct pages.
    assert r.footprint_mib[0] * 2**20 / 4096 == 5 * 129
    shared = hmsim.run({**sc, "workload": {**sc["workload"], "share_address_space": True}}).results
    assert shared.footprint_mib[0] * 2**20 / 4096 == 129


def test_same_seed_same_results_and_waf_at_least_one():
    sc = _small(pigz={"input_mib": 1.0})
    a = hmsim.run(sc).results
    b = hmsim.run(sc).results
    assert a.equals(b)
    assert (a.flash_waf.dropna() >= 1.0).all()
    assert (a.internal_faults > 0).all()
    # The estimate is exact on an idle device; only overlapping faults (EPFs) exceed it.
    assert a.service_over_estimate_share[0] == 0.0


def test_bad_hybrid_inputs(cli, tmp_path):
    p = tmp_path / "h.toml"
    p.write_text('module = "hybrid"\n[device]\ncapacity_mib = 64\ndram_mib = 128\n')
    code, _, err = cli("run", str(p), "--out", str(tmp_path / "o"))
    assert code == 2 and "device.dram_mib" in err and ":4:" in err and "Traceback" not in err
    code, _, err = cli(
        "run", str(p), "--out", str(tmp_path / "o"), "--set", "device.dram_mib=1", "--set", 'flash.gc="fifo"'
    )
    assert code == 2 and "greedy, cost_benefit, random_greedy" in err
    p.write_text('module = "hybrid"\n[[policies]]\nname = "smart_EPF"\nthreshold_us = -1\n')
    code, _, err = cli("run", str(p), "--out", str(tmp_path / "o"))
    assert code == 2 and "policies.0.threshold_us" in err


def test_hybrid_study_quick(quick_study):
    res, out = quick_study("hybrid")
    df = res.results
    assert set(REQUIRED) <= set(df.columns)
    q = res.summary["qualitative"]
    # The study: the smaller DRAM gives many long internal faults, the larger fewer. The
    # page cache (no writeback during the run) and recycled pages' stale copies keep faults
    # at the larger size too (mostly short ones), so the model's large size is not "few"
    # (docs/hybrid.md).
    assert q["model_long_faults_small"] > 1000
    assert q["model_long_faults_large"] < 0.8 * q["model_long_faults_small"]
    assert q["model_internal_faults_large"] > 1000
    main = df[df.sweep == "main"].set_index(["dram_mib", "policy"])
    # Most internal faults are taken in the kernel's copies into and out of page-cache
    # pages, which run with page faults disabled: they cannot block, every policy stalls.
    # Of the EPFs left, most find no other thread ready (pigz's helpers soon wait for the
    # inflater), and each of those costs the timer's 50 µs slack and the wake-up path
    # (59.688 µs more than stalling, computed by hand in the Rust test). So all_EPF loses
    # a little to no_EPF at both sizes, and smart_EPF is the fastest (docs/hybrid.md).
    assert q["model_atomic_fault_share_small"] > 0.7
    assert q["model_epf_with_ready_share_small"] < 0.5
    # All the core does besides stalling is a small part of the fault time: an ideal
    # scheduler could hide at most that much.
    assert q["model_work_over_stall_small"] < 0.2
    per_epf_s = 59_688e-9
    for dram in (q["small_dram_mib"], q["large_dram_mib"]):
        rt = main.loc[dram].runtime_s
        epfs = main.loc[(dram, "all_EPF"), "epf_raised"]
        assert 0 < (rt["all_EPF"] - rt["no_EPF"]) / epfs < per_epf_s
        assert rt["smart_EPF"] < rt["no_EPF"] < rt["all_EPF"]
    small = main.loc[q["small_dram_mib"]]
    assert 0 < small.short_faults["no_EPF"] < small.internal_faults["no_EPF"]
    # Internal faults fall as DRAM grows.
    sw = df[(df.sweep == "dram") & (df.policy == "no_EPF")].sort_values("dram_mib")
    assert sw.internal_faults.is_monotonic_decreasing
    # Regression range of the model at the quick size (8 MB input, 17.8 MB DRAM): 1.68 s,
    # 4.9 % of UMD accesses (the input's page-cache pages are filled by DMA, not faulted).
    assert 1.4 < small.runtime_s["no_EPF"] < 2.0 and 0.035 < small.internal_fault_share["no_EPF"] < 0.065
    # The trace rows replay it ten times: no row rests on a few critical-path GCs (one pass
    # had 1–3, each 9–25 % of the runtime, and one GC more or less decided a row).
    tr = df[df.sweep.isin(["trace", "trace-threshold"])]
    if len(tr):  # a source checkout holds the committed trace
        assert (tr.workload == f"pigz-d.pages.hmt, {TRACE_PASSES} passes").all()
        assert (tr.gc_each_runtime_share < GC_SHARE_WARN).all() and (tr.gc_runs >= 5).all()
        assert not [w for w in res.summary["point_warnings"] if "sweep=trace" in w and "GC" in w]
        # What is left is the threshold's effect: below the long faults' service time
        # smart_EPF signals them, above it, it is no_EPF.
        th = tr[tr.sweep == "trace-threshold"].set_index("threshold_us").runtime_s
        none = tr[(tr.sweep == "trace") & (tr.policy == "no_EPF")].sort_values("dram_mib").runtime_s.iloc[0]
        assert th[50.0] < 0.8 * none and th[5000.0] == pytest.approx(none, rel=0.05)
    for name in ("fig_runtime_by_policy", "fig_dram_sweep", "fig_threshold_sweep", "fig_service_time"):
        assert (out / f"{name}.png").stat().st_size > 5000
    assert (out / "service.csv").stat().st_size > 0
