"""The PMem write path through the Python API, and study `pmem-wa` (quick) regression ranges."""

from __future__ import annotations

import pandas as pd
import pytest

import hmsim


def scenario(**workload) -> dict:
    w = {"pattern": "seq-write", "footprint_bytes": 4096, "operations": 2000, **workload}
    return {"module": "pmem", "seed": 3, "workload": w}


def test_counters_are_consistent_and_named_as_the_tools_name_them():
    r = hmsim.run(scenario(persist="clflush")).results.iloc[0]
    assert r.wpq_inserts == r.write_requests == r.stored_lines == 2000
    assert r.media_writes_64b % 4 == 0
    assert r.write_amplification == pytest.approx(r.media_writes_64b / r.write_requests)


def test_eadr_scenario_runs_and_none_persist_writes_nothing_to_pmem_for_a_small_footprint():
    r = hmsim.run({**scenario(persist="none"), "pmem": {"persistence": "eadr"}}).results.iloc[0]
    assert r.write_requests == 0 and r.flushed_lines == 0


def test_bad_pmem_inputs(cli, tmp_path):
    p = tmp_path / "p.toml"
    p.write_text(
        'module = "pmem"\n[workload]\npattern = "seq-write"\nfootprint_bytes = 4096\noperations = 10\n'
        'persist = "clfush"\n'
    )
    code, _, err = cli("run", str(p), "--out", str(tmp_path / "o"))
    assert code == 2 and "workload.persist" in err and "clflush" in err and ":6:" in err
    code, _, err = cli(
        "run",
        str(p),
        "--out",
        str(tmp_path / "o"),
        "--set",
        "workload.persist=clwb",
        "--set",
        "workload.access_bytes=96",
    )
    assert code == 2 and "access_bytes" in err and "64" in err
    code, _, err = cli(
        "run",
        str(p),
        "--out",
        str(tmp_path / "o"),
        "--set",
        "workload.persist=clwb",
        "--set",
        "pmem.device=intel-ssd-750",
    )
    assert code == 2 and "pmem.device" in err


@pytest.fixture(scope="module")
def study(quick_study):
    return quick_study("pmem-wa")


def test_study_files(study):
    _, out = study
    df = pd.read_csv(out / "results.csv")
    need = {
        "table",
        "threads",
        "footprint_bytes",
        "flush",
        "wpq_inserts",
        "write_requests",
        "media_writes_64b",
        "write_amplification",
        "bandwidth_gb_s",
    }
    assert need <= set(df.columns)
    assert set(df.table) == {"table2", "table3", "validation"}
    for name in [
        "fig_table2_merging",
        "fig_table3_threads",
        "fig_bandwidth_vs_threads",
        "fig_xpbuffer_probe",
        "fig_hot_spot_tail",
    ]:
        assert (out / f"{name}.png").stat().st_size > 5000


def test_table2_merging(study):
    res, _ = study
    t2 = res.results[res.results.table == "table2"].set_index("footprint_bytes")
    assert t2.loc[64, "media_writes_64b"] == 0 and t2.loc[128, "media_writes_64b"] == 0
    for fp in (256, 4096, 1 << 20):
        assert 1.0 <= t2.loc[fp, "write_amplification"] <= 1.06


def test_table3_invalidating_flushes_reread(study):
    res, _ = study
    t3 = res.results[res.results.table == "table3"]
    for fp in (256, 1024):
        s = t3[t3.footprint_bytes == fp].set_index("flush")
        assert s.loc["ntstore", "read_requests"] == 0
        assert s.loc["clflush", "read_requests"] == s.loc["clflush", "write_requests"]
    # All 28 regions on one DIMM (one namespace each): 1 KB regions overflow the assembling
    # entries and amplify; the invalidating flushes' re-reads end the patching of queued
    # read-modify-writes, so they amplify more than ntstore (quick-run regression ranges).
    s = t3[t3.footprint_bytes == 1024].set_index("flush")
    for f in ("clflush", "clflushopt", "clwb"):
        assert 1.9 <= s.loc[f, "write_amplification"] <= 2.3
    assert 1.5 <= s.loc["ntstore", "write_amplification"] <= 1.9
    assert s.loc["ntstore", "write_amplification"] < s.loc["clflush", "write_amplification"]
    s = t3[t3.footprint_bytes == 256].set_index("flush")
    assert (s.write_amplification.between(1.0, 1.2)).all()
    # The loop is unfenced, as the study group's benchmark runs it: clflush stays ordered with
    # the stores after it, clflushopt and clwb (which invalidates on Cascade Lake) do not, so
    # the instruction matters at 256 B too.
    assert s.loc["clflushopt", "bandwidth_gb_s"] == s.loc["clwb", "bandwidth_gb_s"]
    assert s.loc["clflush", "bandwidth_gb_s"] > s.loc["clflushopt", "bandwidth_gb_s"]
    assert s.loc["clflush", "write_amplification"] < s.loc["clflushopt", "write_amplification"]


def test_vans_controller_and_thread_layout_sensitivity(study):
    res, _ = study
    df = res.results
    v = df[df.experiment == "table3_vans_controller"]
    t3 = df[df.experiment == "table3"]
    for fl in ("clflush", "ntstore"):
        vb = v[v.flush == fl].set_index("footprint_bytes")
        tb = t3[t3.flush == fl].set_index("footprint_bytes")
        # VANS's in-order queue keeps the media queue short: 1 KB regions amplify less than
        # under the default controller, and 256 B regions are still no slower than 1 KB ones
        # (docs/pmem.md, "Wider regions, same-line rewrites and the flush kinds").
        assert vb.loc[1024, "write_amplification"] < tb.loc[1024, "write_amplification"] - 0.3
        assert vb.loc[256, "bandwidth_gb_s"] >= vb.loc[1024, "bandwidth_gb_s"]
    s = df[(df.experiment == "write_threads_sensitivity") & (df.dimms == 6)]
    lockstep = df[(df.experiment == "bw_threads_seq-write") & (df.dimms == 6) & (df.threads == 24)]
    # Started on all six DIMMs (4 threads each) nothing contends; the default layout puts the
    # 24 threads on three DIMMs.
    assert s.bandwidth_gb_s.max() > 2 * lockstep.bandwidth_gb_s.iloc[0]


def test_calibrated_and_reproduced_numbers_stay_within_10_percent(study):
    res, _ = study
    c = res.comparison.set_index("metric")
    for m in [
        "idle latency, sequential read",
        "idle latency, random read",
        "idle latency, ntstore + fence",
        "idle latency, store + clwb + fence",
        "1 DIMM read bandwidth, 4 threads",
        "1 DIMM ntstore bandwidth, 1 thread",
        "6 DIMM read bandwidth, 24 threads",
        "6 DIMM write bandwidth, 4 threads",
        "WA, 64 B random writes, 1 thread",
        "WA, 128 B random writes, 1 thread",
        "XPBuffer probe WA, 16 KB region",
        "XPBuffer probe WA, 64 KB region",
        "1 DIMM 64 B random ntstore bandwidth",
        "1 DIMM 256 B random ntstore bandwidth",
        "1 DIMM 128 B random read bandwidth",
        "p99.999 write latency, 4 KB hot spot",
    ]:
        assert c.loc[m, "within_10pct"], f"{m}: {c.loc[m, 'ratio']:.3f}"
    # The calibration point the model misses: patched queued writes keep 8-thread WA lower.
    assert 1.2 <= c.loc["WA, 256 B random writes, 8 threads", "simulated"] <= 1.4
    # Beyond the hot-spot window no block migrates: the tail stays sub-microsecond.
    assert c.loc["p99.999 write latency, 128 KB region", "simulated"] < 1.0


def test_write_bandwidth_falls_with_threads_from_xpbuffer_contention(study):
    res, _ = study
    bt = res.results[(res.results.experiment == "bw_threads_seq-write")]
    one = bt[bt.dimms == 1].set_index("threads")
    # Flat up to 4 threads, then interleaved streams force early (RMW) write-backs (fewer
    # than without patching of queued writes: published 0.8 GB/s at 24 threads).
    assert one.loc[1, "bandwidth_gb_s"] == pytest.approx(one.loc[4, "bandwidth_gb_s"], rel=0.01)
    assert one.loc[4, "xpbuffer_early_writebacks"] == 0
    assert 1.1 <= one.loc[24, "bandwidth_gb_s"] <= 1.5
    assert one.loc[24, "write_amplification"] > 1.5
    assert list(one.bandwidth_gb_s) == sorted(one.bandwidth_gb_s, reverse=True)
    six = bt[bt.dimms == 6].set_index("threads")
    assert 4.5 <= six.loc[24, "bandwidth_gb_s"] <= 6.5 < six.loc[4, "bandwidth_gb_s"]


def test_xpline_halves_needs_whole_xplines(cli, tmp_path):
    p = tmp_path / "h.toml"
    p.write_text('module = "pmem"\n[workload]\npattern = "xpline-halves"\nfootprint_bytes = 320\noperations = 10\n')
    code, _, err = cli("run", str(p), "--out", str(tmp_path / "o"))
    assert code == 2 and "footprint_bytes" in err and "256" in err
