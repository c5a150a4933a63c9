"""Study `tiering` (quick): files, calibration of the contention model, Colloid's behaviour."""

from __future__ import annotations

import json

import pandas as pd
import pytest


def test_convergence_ignores_periodic_dips_and_finds_the_settling_time():
    import numpy as np

    from hmsim.studies.tiering import convergence

    t = np.arange(0, 40, 0.01)
    # Ramp from 20 to 40 GB/s over 10 s after the event at 10 s, then flat with a 50 % dip in
    # one quantum of every 50 (a migration batch): the dips must not count as leaving.
    tput = np.where(t < 10, 20.0, np.minimum(40.0, 20.0 + 2.0 * (t - 10)))
    tput[(np.arange(len(t)) % 50 == 0) & (t > 22)] = 20.0
    first, settle = convergence(pd.DataFrame({"time_s": t, "throughput_gb_s": tput}), 10.0)
    # Within 5 % of ~39.8 from ~19 GB/s above the start: the ramp reaches 37.8 at t = 18.9 s.
    assert 8.0 < first < 10.5
    assert first <= settle < 11.0
    # Without the dips the answer is the same.
    clean = np.where(t < 10, 20.0, np.minimum(40.0, 20.0 + 2.0 * (t - 10)))
    f2, s2 = convergence(pd.DataFrame({"time_s": t, "throughput_gb_s": clean}), 10.0)
    assert abs(f2 - first) < 0.6 and abs(s2 - settle) < 0.6


@pytest.fixture(scope="module")
def study(quick_study):
    return quick_study("tiering")


def test_files_and_columns(study):
    _, out = study
    df = pd.read_csv(out / "results.csv")
    need = {
        "system",
        "colloid",
        "intensity",
        "alt_unloaded_latency_ns",
        "object_size_bytes",
        "throughput_gb_s",
        "default_latency_ns",
        "alternate_latency_ns",
        "alt_traffic_share",
        "migrated_gb",
        "converged",
        "window_throughput_drift",
        "window_migration_share",
    }
    assert need <= set(df.columns)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["not_steady_rows"] == len(summary["not_steady"]) == int((~df.converged).sum())
    tl = pd.read_csv(out / "timeline.csv")
    assert {"system", "colloid", "scenario", "time_s", "throughput_gb_s"} <= set(tl.columns)
    conv = json.loads((out / "summary.json").read_text())["convergence_time_s"]
    assert set(conv) == {
        f"{scen}/{system}{c}"
        for scen in ("converge_hot_move", "converge_contention")
        for system in ("hemem", "tpp", "memtis")
        for c in ("", "+colloid")
    }
    assert all(v >= 0 for v in conv.values())
    for name in (
        "fig1_throughput_vs_contention",
        "fig2_latency_and_hot_share",
        "fig3_colloid_gain_heatmaps",
        "fig4_convergence",
        "fig5_overhead",
        "fig6_app_analogs",
        "fig7_latency_vs_placement",
    ):
        assert (out / f"{name}.png").stat().st_size > 5000


def test_contention_model_calibration(study):
    res, _ = study
    c = res.comparison[res.comparison["where"] != "Fig. 1 (GUPS, throughput vs contention)"].set_index("metric")
    assert len(c) == 5
    for m in c.index:
        assert c.loc[m, "within_10pct"], f"{m}: {c.loc[m, 'ratio']:.3f}"


def test_figure_1_published_gains_and_shares_of_the_best_case_are_compared(study):
    """Fig. 1's published results sit in the comparison (validation rows) and on the figure.
    Regression ranges of the quick grid: Colloid gains under contention and not at 0x, and
    comes near the best case (the best case of the scaled-down setup for quick TPP)."""
    res, out = study
    c = res.comparison.set_index("metric")
    for system, pub in (("hemem", 2.3), ("tpp", 2.35), ("memtis", 2.3)):
        g3 = c.loc[f"Colloid's gain over {system} at 3x"]
        assert g3.published == pub and g3.role == "validation"
        assert 1.1 < g3.simulated < 3.0, (system, g3.simulated)
        assert 0.9 < c.loc[f"Colloid's gain over {system} at 0x"].simulated < 1.1, system
        share = c.loc[f"{system} + colloid as a share of the best case at 3x"].simulated
        assert 0.8 < share < 1.2, (system, share)
    assert "scaled_best" in set(res.results.experiment)
    from hmsim import plotting

    shown = plotting.DRAWN[str(out / "fig1_throughput_vs_contention")]["shown"]
    assert "published (Colloid paper)" in shown and "hemem + colloid / hemem" in shown


def test_colloid_never_loses_to_hemem_and_wins_under_contention(study):
    res, _ = study
    d = res.results[(res.results.experiment == "contention") & (res.results.system == "hemem")]
    t = d.pivot_table(index="intensity", columns="colloid", values="throughput_gb_s")
    assert (t[True] >= 0.98 * t[False]).all()
    assert t.loc[3, True] > 1.2 * t.loc[3, False]
    assert t.loc[0, True] == pytest.approx(t.loc[0, False], rel=0.02)


def test_every_system_with_and_without_colloid_and_the_best_case(study):
    res, _ = study
    d = res.results[res.results.experiment == "contention"]
    systems = {(s, bool(c)) for s, c in zip(d.system, d.colloid, strict=True)}
    for s in ("hemem", "tpp", "memtis"):
        assert {(s, False), (s, True)} <= systems
    t = d.pivot_table(index="intensity", columns=["system", "colloid"], values="throughput_gb_s")
    best = t[("best", False)]
    # The oracle sweep bounds every policy (a policy may pass it only by a sliver: the
    # sweep's 10 % steps are coarse).
    for col in t.columns:
        assert (t[col] <= 1.03 * best).all(), col
    # Colloid on MEMTIS, like on HeMem, wins under contention.
    assert t.loc[3, ("memtis", True)] > 1.2 * t.loc[3, ("memtis", False)]
    cpu = d.set_index(["system", "colloid", "intensity"]).policy_cpu_cores
    assert cpu.loc[("tpp", True, 0)] >= 1.0  # Colloid's latency monitor takes a core on TPP
    assert cpu.loc[("static", False, 0)] == 0.0


def test_best_case_over_hot_set_in_default_and_placement_sweep(study):
    """Regression ranges (model outputs, docs/tiering.md): the best static placement over "hot
    set in the default tier" per intensity, now that the remote tier saturates at its DRAM
    (115 GB/s for 50/50) instead of a 54 GB/s link; and the placement sweep behind fig. 7."""
    res, _ = study
    df = res.results
    base = df[df.experiment == "calibration"].set_index("intensity").throughput_gb_s
    best = df[(df.experiment == "contention") & (df.system == "best")].set_index("intensity").throughput_gb_s
    ratio = best / base
    for i, (lo, hi) in enumerate([(1.0, 1.04), (1.15, 1.25), (1.5, 1.6), (1.95, 2.05)]):
        assert lo <= ratio.loc[i] <= hi, (i, ratio.loc[i])
    pl = df[df.experiment == "placement"]
    assert len(pl) == 44
    for i, g in pl.groupby("intensity"):
        g = g.sort_values("alt_hot_share")
        # Moving hot pages out loads the alternate tier and unloads the default one: L_A
        # rises and L_D falls along the sweep.
        assert g.alternate_latency_ns.is_monotonic_increasing, i
        assert g.default_latency_ns.is_monotonic_decreasing, i
        # The sweep's best point is the best case's throughput.
        assert g.throughput_gb_s.max() == pytest.approx(best.loc[i], rel=0.02), i
    assert set(pl.alternate_bottleneck) <= {"media", "upi"}


def test_fig3_heatmaps_for_every_base_system(study):
    """Fig. 3 has Colloid's gain over HeMem, TPP and MEMTIS on both grids. Without contention
    and with 64 B objects Colloid's Δp is zero, so it matches its base system; under 3x
    contention it gains on the systems that move pages (HeMem, MEMTIS), more when the
    alternate tier is faster. Page copies now run at the copy engines' loaded rates
    (docs/tiering.md, *Migration copies*): in the quick runs (15-20 s) the base systems are
    still moving the hot set in at 3x (HeMem's DMA channels and MEMTIS's kernel thread slow
    down with the loaded default tier), so with 4 KiB objects their throughput lies between
    first touch and their converged placement and the 3x gain is not ordered against 0x.
    With 4 KiB objects GUPS alone saturates the default tier and Colloid gains over HeMem at
    0x. Quick TPP runs with 4 KiB pages in its scaled-down setup (docs/tiering.md): at 3x
    it promotes the hot set into the contended default tier and Colloid-TPP keeps it out."""
    from hmsim.studies.tiering import colloid_gain

    res, _ = study
    df = res.results
    for system in ("hemem", "tpp", "memtis"):
        for exp, col in (("alt_latency", "alt_unloaded_latency_ns"), ("object_size", "object_size_bytes")):
            gain = colloid_gain(df, exp, system, col)
            assert gain.shape == (2, 2) and list(gain.index) == [0, 3], (system, exp)
            assert gain.notna().all().all(), (system, exp)
            one_line = gain.loc[0, [c for c in gain.columns if exp == "alt_latency" or c == 64]]
            assert ((one_line - 1.0).abs() <= 0.03).all(), (system, exp, gain)
            if exp == "alt_latency":
                assert (gain.loc[3] >= 1.05).all(), (system, exp, gain)
    for system in ("hemem", "tpp", "memtis"):
        lat = colloid_gain(df, "alt_latency", system, "alt_unloaded_latency_ns")
        assert lat.loc[3, 135.0] > 1.2 and lat.loc[3, 135.0] >= lat.loc[3, 192.0], lat
    size = colloid_gain(df, "object_size", "hemem", "object_size_bytes")
    assert 1.3 < size.loc[0, 4096] < 1.6, size


def test_fig4_timelines_for_every_system_with_and_without_colloid(study):
    _, out = study
    tl = pd.read_csv(out / "timeline.csv")
    for scen in ("converge_hot_move", "converge_contention"):
        t = tl[tl.scenario == scen]
        runs = {(s, bool(c)) for s, c in zip(t.system, t.colloid, strict=True)}
        assert runs == {(s, c) for s in ("hemem", "tpp", "memtis") for c in (False, True)}, scen
        for _, g in t.groupby(["system", "colloid"]):
            assert g.time_s.is_monotonic_increasing and (g.throughput_gb_s > 0).all()
            # The event at 10 s: contention only rises, so no run is faster after it.
            if scen == "converge_contention":
                before = g[(g.time_s >= 5) & (g.time_s < 10)].throughput_gb_s.mean()
                assert g[g.time_s >= 25].throughput_gb_s.mean() <= 1.01 * before


def test_app_analogs_run_trace_driven_with_colloid(study):
    """Fig. 6: every analog ran under HeMem ± Colloid at 0x and 3x; no contention puts (nearly)
    all traffic on the default tier, and Colloid does not lose under 3x contention."""
    _, out = study
    df = pd.read_csv(out / "results.csv")
    apps = df[df.experiment.str.startswith("app_")]
    assert set(apps.experiment) == {"app_cachelib", "app_silo", "app_pagerank"}
    for _, g in apps.groupby("experiment"):
        assert len(g) == 4 and (g.throughput_gb_s > 0).all()
        at3 = g[g.intensity == 3].set_index("colloid").throughput_gb_s
        assert at3[True] >= 0.97 * at3[False]
    # Where Colloid-HeMem trails HeMem at 0x (silo, pagerank) it moved nothing, and its run
    # says why from Colloid's own decisions: the hottest pages each carry more than Δp.
    summary = json.loads((out / "summary.json").read_text())
    for app in ("app_silo", "app_pagerank"):
        lead = f"experiment={app}, system=hemem, colloid=True: colloid-hemem at intensity 0× migrated almost nothing"
        (said,) = [w for w in summary["point_warnings"] if w.startswith(lead)]
        assert "it was to move a share Δp of the accesses smaller than any one hot page's" in said
        # HeMem itself promotes a few huge pages and stops: its cooling keeps the rest cold.
        lead = f"experiment={app}, system=hemem, colloid=False: hemem at intensity 0× migrated almost nothing"
        (said,) = [w for w in summary["point_warnings"] if w.startswith(lead)]
        assert "no page outside the default tier was hot" in said
    assert not [w for w in summary["point_warnings"] if w.endswith("its rows equal its first-touch placement")]


def test_pmem_alternate_tier_reports_media_writes_and_lifetime(study):
    res, out = study
    d = res.results[res.results.experiment == "pmem_alternate"]
    assert len(d) == 12  # HeMem, MEMTIS, TPP, each +/- Colloid, at 0x and 3x
    assert (out / "fig_pmem_alternate.png").stat().st_size > 5000
    # Only the PMem points carry the PMem columns.
    assert res.results[res.results.experiment == "contention"].pmem_media_writes_64b.isna().all()
    # Write requests carry exactly the bytes written into PMem (migrations + write-backs).
    written = d.pmem_migrated_bytes + d.pmem_app_write_bytes - d.pmem_unsampled_write_bytes
    assert (d.pmem_write_requests * 64 / written).between(1 - 1e-9, 1 + 1e-9).all()
    # Page copies fill whole XPLines (WA ~1); random 64 B write-backs read-modify-write (~4).
    moved = d[d.pmem_migrated_bytes > 0]
    assert moved.pmem_wa_migration.between(1.0, 1.1).all()
    assert d.pmem_wa_app.between(3.5, 4.1).all()
    assert (d.pmem_lifetime_years_no_wl <= d.pmem_lifetime_years).all()
    assert (d.pmem_lifetime_years > 0).all()


def test_quick_tpp_runs_4k_pages_with_kswapd_at_work(study):
    """Quick TPP runs with 4 KiB pages in the scaled-down setup (docs/tiering.md): kswapd finds
    cold pages to demote, so TPP moves pages at every intensity and pulls the hot set into the
    default tier, even at 3x where that tier is the contended one; Colloid-TPP keeps it out."""
    res, _ = study
    d = res.results[(res.results.experiment == "contention") & (res.results.system == "tpp")]
    t = d.set_index(["colloid", "intensity"])
    for i in range(4):
        assert t.loc[(False, i), "migrated_gb"] > 5.0, t.loc[False]
        assert t.loc[(False, i), "alt_hot_share"] < 0.6, t.loc[False]
    assert t.loc[(True, 3), "alt_hot_share"] >= 0.9
    assert t.loc[(True, 3), "throughput_gb_s"] > 1.2 * t.loc[(False, 3), "throughput_gb_s"]


def test_full_fig3_tpp_runs_go_on_until_steady():
    """The full grid's fig. 3 TPP runs start at 150 s and go on while their window is not
    steady (at 2-3x, or with objects of 256 B and more, TPP is still losing throughput there);
    fig. 3's other systems keep their fixed lengths. In the quick grid the 2 MiB systems' runs
    of figs. 3 and 6 and the PMem rows go on until steady (a few CPU seconds in all); its
    scaled-down TPP runs and fig. 1's settled lengths do not."""
    from hmsim.studies import tiering

    heat = [
        p for p in tiering.build_points(quick=False) if dict(p.labels)["experiment"] in ("alt_latency", "object_size")
    ]
    steady = {dict(p.labels)["system"] for p in heat if ("sim.until_steady", "true") in p.overrides}
    assert steady == {"tpp"}, steady
    assert len([p for p in heat if dict(p.labels)["system"] == "tpp"]) == 64

    def goes_on(lab: dict) -> bool:
        exp = lab["experiment"]
        if exp == "pmem_alternate":  # every system of the PMem rows (2 MiB pages)
            return True
        fig3_or_6 = exp in ("alt_latency", "object_size") or exp.startswith("app_")
        return lab["system"] in ("hemem", "memtis") and fig3_or_6

    quick = [(dict(p.labels), ("sim.until_steady", "true") in p.overrides) for p in tiering.build_points(quick=True)]
    assert sum(s for _, s in quick) == 56, sum(s for _, s in quick)  # 32 of fig. 3, 12 of fig. 6, 12 PMem
    assert all(s == goes_on(lab) for lab, s in quick), [lab for lab, s in quick if s != goes_on(lab)]


def test_fig3_cells_resting_on_a_run_not_steady_are_starred():
    """A heatmap cell is flagged when either of its two runs (with or without Colloid) is not
    steady, and only then; the quick study's figure and its doc table carry the star."""
    from hmsim.studies.tiering import colloid_gain_unsteady

    rows = [
        # (intensity, latency, colloid, converged)
        (0, 135.0, False, True),
        (0, 135.0, True, True),
        (0, 192.0, False, False),
        (0, 192.0, True, True),
        (3, 135.0, False, True),
        (3, 135.0, True, False),
        (3, 192.0, False, True),
        (3, 192.0, True, True),
    ]
    df = pd.DataFrame(
        [
            {"experiment": "alt_latency", "system": "hemem", "intensity": i, "alt_unloaded_latency_ns": ns}
            | {"colloid": c, "converged": ok, "throughput_gb_s": 1.0}
            for i, ns, c, ok in rows
        ]
    )
    flag = colloid_gain_unsteady(df, "alt_latency", "hemem", "alt_unloaded_latency_ns")
    assert flag.loc[0, 135.0] == False  # noqa: E712 (numpy bools)
    assert flag.loc[0, 192.0] == True  # noqa: E712
    assert flag.loc[3, 135.0] == True  # noqa: E712
    assert flag.loc[3, 192.0] == False  # noqa: E712


def test_quick_fig3_table_stars_the_runs_not_steady(study):
    from hmsim.studies.doc_numbers import tiering_fig3

    res, _ = study
    table = tiering_fig3(res)
    d = res.results[res.results.experiment.isin(["alt_latency", "object_size"])]
    unsteady = int((~d.converged.astype(bool)).sum())
    assert unsteady > 0  # the scaled-down TPP runs at 0x and 3x
    assert table.count("*") - 1 == unsteady  # one star per run, and the footnote's


def test_fig1_points_resting_on_a_run_not_steady_get_a_dagger():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hmsim.studies.tiering import UNSTEADY_MARK, _mark_unsteady

    fig, ax = plt.subplots()
    try:
        y = [10.0, 9.0, float("nan"), 7.0]
        assert _mark_unsteady(ax, range(4), y, [False, True, True, True], "k")
        # The NaN point has nothing to mark; the other two unsteady ones do.
        assert [t.get_text() for t in ax.texts] == [UNSTEADY_MARK] * 2
        assert [t.xy for t in ax.texts] == [(1, 9.0), (3, 7.0)]
        assert not _mark_unsteady(ax, range(4), y, [False] * 4, "k")
    finally:
        plt.close(fig)
