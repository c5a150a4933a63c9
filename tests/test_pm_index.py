"""The pm-index module through the Python API and CLI: per-op costs, crash runs, bad input,
and the quick study (flushes normalized to P-CLHT, Tonic before/after)."""

from __future__ import annotations

import json

import hmsim
from hmsim.studies.pm_index import indexes


def _scenario(**kw) -> dict:
    base = {"module": "pm-index", "seed": 2, "index": {"name": "cceh"}, "workload": {"records": 3000}}
    base.update(kw)
    return base


def test_every_hash_index_is_registered_with_both_key_types():
    got = {i["name"]: i for i in indexes()}
    for name in ("p-clht", "cceh", "level-hashing"):
        assert got[name]["family"] == "hash"
        assert set(got[name]["key_types"]) == {"int", "string"}


def test_cceh_insert_is_one_flush_three_fences_plus_splits_and_is_deterministic():
    a = hmsim.run(_scenario()).results.iloc[0]
    b = hmsim.run(_scenario()).results.iloc[0]
    assert a.flushes_per_op == b.flushes_per_op and a.media_writes_64b_per_op == b.media_writes_64b_per_op
    # one flush and three fences per insert (RECIPE's fence pattern) plus the splits': two
    # 257-line segments each, a fence before and after each, and the directory's
    assert 3.0 <= a.fences_per_op < 3.1
    assert abs(a.flushes_per_op - a.resize_flushes_per_op - 1.0) < 1e-9
    assert a.resize_flushes_per_op >= 514 * 2 / 3000
    # every flushed dirty line reaches the WPQ once
    assert a.wpq_inserts_per_op >= 0.9 * a.flushes_per_op
    assert a.inserts_per_module > 1e12


def test_crash_run_from_a_scenario(tmp_path):
    r = hmsim.run(
        _scenario(index={"name": "level-hashing", "key_type": "string"}, crash={"operations": 300, "key_space": 80})
    )
    assert (r.results.failures == 0).all()
    assert set(r.results.adversarial) == {False, True}


def test_bad_pm_index_inputs(cli, tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('module = "pm-index"\n[index]\nname = "cceh"\n[workload]\nkind = "e"\n')
    code, _, err = cli("run", str(p), "--out", str(tmp_path / "o"))
    assert code == 2 and "workload.kind" in err and "hash index" in err
    code, _, err = cli("run", str(p), "--out", str(tmp_path / "o"), "--set", 'index.name="btree"')
    assert code == 2 and "p-clht" in err


def test_pm_index_study_quick(quick_study):
    res, out = quick_study("pm-index")
    df = res.results
    for col in (
        "index",
        "workload",
        "key_type",
        "threads",
        "ops",
        "flushes_per_op",
        "fences_per_op",
        "llc_misses_per_op",
        "wpq_inserts_per_op",
        "media_writes_64b_per_op",
        "write_amplification",
        "throughput_mops",
    ):
        assert col in df.columns, col
    assert res.summary["flushes_per_insert_vs_p_clht"]["p-clht"] == 1.0
    # reads persist nothing
    c = df[(df.workload == "c")]
    assert (c.flushes_per_op == 0).all()
    tonic = res.tables["tonic"]
    assert not tonic.empty and set(res.comparison.metric.str.contains("Tonic")) == {True}
    # Real OS threads through the SharedIndex: labelled, one 1-thread row per index.
    real = res.tables["real_threads"]
    assert set(real.os_threads) == {1, 2, 4} and (real.source == "real").all() and (real.clock == "wall").all()
    assert (real.throughput_mops > 0).all() and (real[real.os_threads == 1].speedup_vs_1_thread == 1.0).all()
    assert (real.oversubscribed == (real.os_threads > real.machine_cores)).all()
    assert set(real["index"]) == set(res.summary["real_2_thread_speedup"])
    for name in ("fig_flushes_per_insert", "fig_lifetime_per_insert", "fig_tonic_before_after", "fig_real_threads"):
        assert (out / f"{name}.png").stat().st_size > 5000
    # Flushes by source: own + split = the index's total; the trees that mark their splits
    # and consolidations have split flushes on Load; P-CLHT's normalised total is 1.
    src = res.tables["flush_sources"].set_index(["index", "key_type"])
    load = df[(df.experiment == "load") & (df.threads == 1)].set_index(["index", "key_type"])
    total = src.index_flushes + src.resize_flushes
    assert ((total - load.flushes_per_op.reindex(src.index)).abs() < 1e-3).all()
    for name in ("p-hot", "p-bwtree", "fast-fair", "p-art", "p-masstree"):
        assert src.loc[(name, "int")].resize_flushes > 0, name
    clht = src.loc[("p-clht", "int")]
    assert abs(clht.index_flushes_vs_p_clht + clht.resize_flushes_vs_p_clht - 1) < 0.01
    # The cross-check lists each index beside RECIPE's counts, and the original's layout as
    # its -recipe variant: FAST&FAIR's straddled entries cost more flushes than
    # line-contained ones; the Load of the variants stays out of the study's other tables.
    xc = res.tables["recipe_crosscheck"].set_index(["hmsim_index", "key_type"])
    assert {"fast-fair-recipe", "cceh-recipe", "level-hashing-recipe"} <= set(xc.index.get_level_values(0))
    for kt in ("int", "string"):
        assert xc.loc[("fast-fair-recipe", kt)].flushes_hmsim > xc.loc[("fast-fair", kt)].flushes_hmsim + 1.0
    assert "fast-fair-recipe" not in set(load.reset_index()["index"])


def test_lifetime_in_years_for_a_stated_insert_rate_and_module_count():
    """years = inserts a module endures x modules / insert rate; by default the rate is the
    simulated one, and it is stated in its own column."""
    sim = hmsim.run(_scenario()).results.iloc[0]
    assert sim.lifetime_inserts_per_s > 0 and sim.lifetime_years > 0
    stated = hmsim.run(_scenario(lifetime={"inserts_per_s": 1e5, "modules": 6})).results.iloc[0]
    assert stated.lifetime_inserts_per_s == 1e5
    expected = stated.inserts_per_module * 6 / 1e5 / (365.25 * 86400)
    assert abs(stated.lifetime_years - expected) < 1e-9 * expected
    # A workload without inserts has no lifetime per insert, rather than one made from 0.
    reads = hmsim.run(_scenario(workload={"records": 3000, "kind": "c"})).results.iloc[0]
    assert reads.lifetime_years != reads.lifetime_years  # NaN: an empty cell


def test_study_times_uncompared_native_runs_once_and_keeps_ycsb_with_its_load():
    """Rows whose `throughput_mops` nothing compares (YCSB run phases, string-key and
    RECIPE-layout Loads) are timed once; the integer Loads and the Tonic points, which the
    Tonic table divides, best of 3. The different repeat count does not split an index's Load
    from its YCSB points: they still run as one job, each starting from the Load's kept state."""
    from hmsim.prefix_runs import jobs_of
    from hmsim.studies.pm_index import REFERENCE_TIMED_OPS, REFERENCE_TIMED_REPEATS, build_points
    from hmsim.sweep import _run_keys

    assert REFERENCE_TIMED_REPEATS == 1
    for quick in (False, True):
        # The full grid's YCSB run phases time their first REFERENCE_TIMED_OPS operations,
        # nothing else is cut; the quick grid's are shorter than the cut.
        points = build_points(quick)
        keys = _run_keys(points, [])
        cfgs = {p.id: json.loads(keys[p.id])[1] for p in points}
        cfgs = {i: json.loads(c) if isinstance(c, str) else c for i, c in cfgs.items()}
        kind = {p.id: dict(p.labels)["experiment"] for p in points}
        cut = {i: c["throughput"].get("timed_ops", 0) for i, c in cfgs.items()}
        assert {cut[i] for i in kind if kind[i] == "ycsb"} == {REFERENCE_TIMED_OPS}
        assert {cut[i] for i in kind if kind[i] != "ycsb"} == {0}
        ops = {cfgs[i]["workload"]["operations"] for i in kind if kind[i] == "ycsb"}
        assert (max(ops) > REFERENCE_TIMED_OPS) != quick, ops
    repeats, key_type = {}, {}
    for p in points:
        cfg = cfgs[p.id]
        repeats[p.id] = cfg["throughput"]["repeats"]
        key_type[p.id] = cfg["index"]["key_type"]
    once = {i for i, k in kind.items() if k in ("ycsb", "recipe_variant") or (k == "load" and key_type[i] == "string")}
    assert {kind[i] for i in once} == {"ycsb", "recipe_variant", "load"}
    assert {repeats[i] for i in once} == {1}
    assert {repeats[i] for i in kind if i not in once} == {3}
    assert any(k.startswith("tonic_") for k in kind.values())
    jobs = jobs_of(points, keys, workers=2)
    with_ycsb = [j for j in jobs if any(kind[p.id] == "ycsb" for p in j.points)]
    assert with_ycsb
    for j in with_ycsb:
        # Each index's YCSB points follow its one-thread integer Load in one job.
        assert kind[j.points[0].id] == "load", [kind[p.id] for p in j.points]
        assert all(kind[p.id] == "ycsb" for p in j.points[1:])
