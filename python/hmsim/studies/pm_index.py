"""Study `pm-index`: the lifetime price of an insert in persistent indexes (Tonic's index
analysis on the RECIPE set; Woo et al., IEEE Access 2021; docs/pm-index.md). Every registered index runs YCSB through
the cache + Optane PMem model: flushes, fences, LLC misses, WPQ inserts, media writes and WA
per operation, lifetime cost per insert, and Tonic's optimizations before/after."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hmsim.plotting import color_for, declare_series, house_style, outside_legend, save_figure
from hmsim.results import select
from hmsim.studies.base import Published, Study, StudyResult, StudyScenario, comparison_frame, register
from hmsim.sweep import Point, run_points

SWITCHES = ["no_bloat", "coalesce_flushes", "evict_volatile", "xpline_nodes"]


def indexes() -> list[dict]:
    """The registered indexes (name, family, Tonic switches, key types), from the core."""
    from hmsim import _core

    return json.loads(_core.pm_indexes())


def _switch_key(s: str) -> str:
    return "pm__coalesce_flushes" if s == "coalesce_flushes" else f"index__tonic__{s}"


# Quick mode's Tonic comparison runs at 100 k keys, not the quick grid's 20 k: at 20 k the
# largest media-write reduction reads 15.9 % against the full grid's 23.0 % (1 M keys), at
# 100 k 21.6 % (docs/pm-index.md, *Study*). TONIC_BASELINE is the Load it is compared with, at
# the same size.
QUICK_TONIC_RECORDS = 100_000
TONIC_BASELINE = "baseline_tonic"

# Native timings (`throughput_mops`) the study compares nowhere are taken once, not best of
# the default 3: the YCSB run phases (A/B/C/E), the string-key Loads and the RECIPE-layout
# Loads. Each repeat runs the whole phase again (a YCSB one on a fresh copy of the loaded
# index), and those rows' number is an order-of-magnitude reference; the integer Loads keep
# their best of 3, as the Tonic table's real-throughput gain divides them (its baseline
# shares its timings with the Loads at every simulated thread count). The two extra repeats
# were ≈ 19 of P-ART E's 50 s at 1 M keys (docs/pm-index.md, *Study*).
REFERENCE_TIMED_REPEATS = 1
# The YCSB run phases' reference timing covers their first REFERENCE_TIMED_OPS operations
# (`throughput.timed_ops`; the model still runs all of them, and column `timed_ops` says how
# many were timed). A run phase's operations are drawn alike from start to end, so a prefix
# times the same mix; at 1 M operations the whole phase was ≈ 51 of the full grid's CPU-s,
# P-ART's E alone 6.7 s a point. The Loads are timed whole: their speed changes as the index
# grows. The quick grid's 20 k operations are below the cut (docs/pm-index.md, *Study*).
REFERENCE_TIMED_OPS = 200_000


def build_points(quick: bool) -> list[Point]:
    sc = StudyScenario.shipped("pm-index.toml")
    n = 20_000 if quick else 1_000_000
    threads = [1, 4] if quick else [1, 2, 4, 8, 16]
    pts: list[Point] = []
    for ix in indexes():
        name = ix["name"]
        base = {"index__name": name, "workload__records": n, "workload__operations": n}
        for kt in ix["key_types"]:
            for th in threads if kt == "int" else [1]:
                # Integer Loads are compared (the Tonic baseline and its thread-count siblings).
                once = {} if kt == "int" else {"throughput__repeats": REFERENCE_TIMED_REPEATS}
                pts.append(sc.point("load", **base, index__key_type=kt, workload__threads=th, **once))
        kinds = ["a", "b", "c"] + (["e"] if ix["family"] == "ordered" else [])
        for kind in kinds:
            for dist in ("uniform", "zipfian"):
                pts.append(
                    sc.point(
                        "ycsb",
                        **base,
                        workload__kind=kind,
                        workload__distribution=dist,
                        throughput__repeats=REFERENCE_TIMED_REPEATS,
                        throughput__timed_ops=REFERENCE_TIMED_OPS,
                    )
                )
        # Tonic: each applicable switch alone, then all of them. Quick mode runs them, and the
        # Load they are compared with, at QUICK_TONIC_RECORDS keys (docs/pm-index.md).
        opts = [s for s in SWITCHES if s in ix["optimizations"]]
        tb = (
            {**base, "workload__records": QUICK_TONIC_RECORDS, "workload__operations": QUICK_TONIC_RECORDS}
            if quick
            else base
        )
        if quick and opts:
            pts.append(sc.point(TONIC_BASELINE, **tb, index__key_type="int", workload__threads=1))
        for s in opts:
            pts.append(sc.point(f"tonic_{s}", **tb, **{_switch_key(s): True}))
        if len(opts) > 1:
            pts.append(sc.point("tonic_all", **tb, **{_switch_key(s): True for s in opts}))
    # The original's layouts where hmsim's registered index persists differently: Load only,
    # for the cross-check against RECIPE (recipe_table), with the key types RECIPE's driver runs.
    for variant, _of, kts in RECIPE_VARIANTS:
        base = {"index__name": variant, "workload__records": n, "workload__operations": n}
        for kt in kts:
            pts.append(
                sc.point(
                    "recipe_variant",
                    **base,
                    index__key_type=kt,
                    workload__threads=1,
                    throughput__repeats=REFERENCE_TIMED_REPEATS,
                )
            )
    return pts


# (variant, the registered index it is a layout of, key types RECIPE's driver runs it with).
RECIPE_VARIANTS = [
    ("cceh-recipe", "cceh", ["int"]),
    ("level-hashing-recipe", "level-hashing", ["int"]),
    ("fast-fair-recipe", "fast-fair", ["int", "string"]),
]


REAL_THREADS = [1, 2, 4]


def real_points(quick: bool) -> list[Point]:
    """Per index: Load of integer keys timed on 1, 2 and 4 OS threads through a SharedIndex
    (wall clock, no model; 4 threads oversubscribe this 2-core machine). Only the timings:
    the model's run of this Load is the grid's own integer Load (`throughput.model`)."""
    sc = StudyScenario.shipped("pm-index.toml")
    n = 20_000 if quick else 1_000_000
    return [
        sc.point(
            "real_threads",
            index__name=ix["name"],
            workload__records=n,
            workload__operations=n,
            throughput__model=False,
            throughput__measure=False,
            throughput__real_threads=REAL_THREADS,
        )
        for ix in indexes()
    ]


def real_table(t: pd.DataFrame | None) -> pd.DataFrame:
    """The real-thread rows with each index's speed-up over its own 1-thread row."""
    if t is None or t.empty:
        return pd.DataFrame()
    t = t.reset_index(drop=True)
    one = t[t.os_threads == 1].set_index("index").throughput_mops
    t["speedup_vs_1_thread"] = t.throughput_mops / t["index"].map(one)
    return t


def tonic_table(df: pd.DataFrame) -> pd.DataFrame:
    """Before/after per index and switch on Load (integer keys, 1 thread)."""
    exp = TONIC_BASELINE if (df.experiment == TONIC_BASELINE).any() else "load"
    base = df[(df.experiment == exp) & (df.key_type == "int") & (df.threads == 1)].set_index("index")
    rows = []
    for r in df[df.experiment.str.startswith("tonic_")].itertuples():
        b = base.loc[r.index]
        rows.append(
            {
                "index": r.index,
                "switch": r.experiment.removeprefix("tonic_"),
                "flushes_before": b.flushes_per_op,
                "flushes_after": r.flushes_per_op,
                "media_writes_64b_before": b.media_writes_64b_per_op,
                "media_writes_64b_after": r.media_writes_64b_per_op,
                "media_write_reduction": 1 - r.media_writes_64b_per_op / b.media_writes_64b_per_op
                if b.media_writes_64b_per_op > 0
                else 0.0,
                "sim_throughput_gain": r.sim_throughput_mops / b.sim_throughput_mops - 1,
                "real_throughput_gain": r.throughput_mops / b.throughput_mops - 1,
            }
        )
    return pd.DataFrame(rows)


def figures(out: Path, df: pd.DataFrame, tonic: pd.DataFrame, real: pd.DataFrame) -> list[Path]:
    paths: list[Path] = []
    load = df[(df.experiment == "load") & (df.key_type == "int") & (df.threads == 1)].set_index("index")
    names = list(load.index)
    colors = color_for(names)
    with house_style():
        fig, ax = plt.subplots(figsize=(8, 4))
        ref = load.loc["p-clht"].flushes_per_op if "p-clht" in load.index else 1.0
        norm = load.flushes_per_op / ref
        ax.bar(names, norm, color=[colors[n] for n in names])
        ax.set_ylabel("flushes per insert (P-CLHT = 1)")
        ax.set_title("Load A, integer keys: flushes per insert, normalized to P-CLHT")
        ax.tick_params(axis="x", rotation=30)
        declare_series(fig, names)
        paths += save_figure(fig, out, "fig_flushes_per_insert")

        # Horizontal bars from 0 on linear axes (a bar on a log axis has the length of wherever
        # the axis happens to start); the endurance counted in powers of ten shown in the label.
        fig, axes = plt.subplots(1, 2, figsize=(11, 0.35 * len(names) + 1.8), sharey=True)
        y = list(range(len(names)))
        inserts = load.inserts_per_module.astype(float)
        top = float(inserts.max()) if len(inserts) and inserts.max() > 0 else 1.0
        exp = int(np.floor(np.log10(top)))
        for ax, values in ((axes[0], load.media_writes_64b_per_op), (axes[1], inserts / 10.0**exp)):
            ax.barh(y, values, color=[colors[n] for n in names], height=0.6)
            ax.set_xlim(left=0)
            ax.grid(axis="y", visible=False)
        axes[0].set_xlabel("media writes per insert (64 B units)")
        axes[1].set_xlabel(f"inserts a 256 GB module endures (× $10^{{{exp}}}$)")
        axes[0].set_yticks(y, names)
        axes[0].invert_yaxis()
        fig.suptitle("Lifetime price of an insert")
        declare_series(fig, names)
        paths += save_figure(fig, out, "fig_lifetime_per_insert")

        y = df[(df.experiment == "ycsb") & (df.distribution == "zipfian")]
        if not y.empty:
            fig, ax = plt.subplots(figsize=(9, 4))
            piv = y.pivot_table(index="workload", columns="index", values="media_writes_64b_per_op")
            piv.plot.bar(ax=ax, color=[colors.get(c, "gray") for c in piv.columns])
            ax.set_ylabel("media writes per operation (64 B)")
            ax.set_title("YCSB, zipfian 0.99, integer keys")
            ax.tick_params(axis="x", rotation=0)
            declare_series(fig, [*dict.fromkeys(y["index"]), *dict.fromkeys(y.workload)])
            paths += save_figure(fig, out, "fig_ycsb_media_writes")

        if not real.empty:
            fig, ax = plt.subplots(figsize=(8, 4))
            for name, g in real.groupby("index"):
                ax.plot(g.os_threads, g.throughput_mops, marker="o", label=name, color=colors.get(name, "gray"))
            ax.set_xlabel(f"OS threads (this machine: {int(real.machine_cores.iloc[0])} cores)")
            ax.set_ylabel("M inserts / wall s")
            ax.set_title(f"Real threads, SharedIndex ({int(real.shards.iloc[0])} shards), Load, DRAM, no model")
            threads = sorted(set(real.os_threads))
            ax.set_xticks(threads, [str(t) for t in threads])
            # Beside the axes: eight lines fill the panel, a legend inside covers some.
            outside_legend(ax)
            declare_series(fig, dict.fromkeys(real["index"]))
            paths += save_figure(fig, out, "fig_real_threads")

        if not tonic.empty:
            fig, ax = plt.subplots(figsize=(9, 4))
            piv = tonic.pivot_table(index="index", columns="switch", values="media_write_reduction") * 100
            piv.plot.bar(ax=ax)
            ax.axhline(51, ls="--", color="black", lw=1, label="published max (51 %)")
            ax.set_ylabel("media writes saved (%)")
            ax.set_title("Tonic's optimizations, Load, integer keys")
            ax.legend(fontsize=8)
            ax.tick_params(axis="x", rotation=30)
            declare_series(fig, [*dict.fromkeys(tonic["index"]), *dict.fromkeys(tonic.switch)])
            paths += save_figure(fig, out, "fig_tonic_before_after")
    return paths


def compare(tonic: pd.DataFrame) -> list[Published]:
    if tonic.empty:
        return []
    best_w = tonic.loc[tonic.media_write_reduction.idxmax()]
    best_t = tonic.loc[tonic.sim_throughput_gain.idxmax()]
    # The lock write-back that evict_volatile removes from P-CLHT: the one switch whose saving
    # grows with the table beyond the LLC (docs/pm-index.md, *What the published maxima measure*).
    ev = tonic[(tonic["index"] == "p-clht") & (tonic.switch == "evict_volatile")]
    clht = (
        f"; P-CLHT evict_volatile {100 * float(ev.media_write_reduction.iloc[0]):.0f} % with its table inside the "
        "LLC, 32 % with it 12x the LLC, at most 50 % (one of two write-backs per insert)"
        if not ev.empty
        else ""
    )
    clht_t = (
        f"; P-CLHT evict_volatile {100 * float(ev.sim_throughput_gain.iloc[0]):+.0f} % (the lock's compare-and-swap "
        "miss is charged, the wait for the previous unlock's hidden read-for-ownership is not)"
        if not ev.empty
        else ""
    )
    return [
        Published(
            "max media-write reduction by Tonic's optimizations",
            51.0,
            100 * float(best_w.media_write_reduction),
            "%",
            "validation",
            f"{best_w['index']} with {best_w.switch}; the source names no index or key count for 51 %{clht}",
        ),
        Published(
            "max throughput gain by Tonic's optimizations",
            63.0,
            100 * float(best_t.sim_throughput_gain),
            "%",
            "validation",
            f"model time, one simulated thread; {best_t['index']} with {best_t.switch}; the source names no "
            f"index or thread count for 63 %{clht_t}",
        ),
    ]


COLUMNS = [
    "experiment",
    "index",
    "family",
    "workload",
    "distribution",
    "key_type",
    "threads",
    "records",
    "ops",
    "flush",
    *SWITCHES,
    "flushes_per_op",
    "fences_per_op",
    "ntstores_per_op",
    "alloc_flushes_per_op",
    "alloc_fences_per_op",
    "resize_flushes_per_op",
    "resize_fences_per_op",
    "resize_ntstores_per_op",
    "llc_misses_per_op",
    "wpq_inserts_per_op",
    "write_requests_per_op",
    "media_writes_64b_per_op",
    "media_writes_256b_per_op",
    "write_amplification",
    "media_bytes_per_insert",
    "inserts_per_module",
    "sim_throughput_mops",
    "throughput_mops",
]


RECIPE_TABLE = Path(__file__).resolve().parents[3] / "validation" / "recipe_flushes.csv"


def recipe_table(df: pd.DataFrame, path: Path = RECIPE_TABLE) -> pd.DataFrame:
    """Flushes / fences / nt-stores per insert: the original RECIPE code (the committed output
    of validation/recipe_flushes.py, RECIPE's own Load driver on one thread) beside hmsim's
    Load of the same index and key type (1 thread), with the ratio hmsim / original. One row
    per hmsim index compared (`hmsim_index`): the registered index the study's other tables
    use (correct persistence) and, where the original's layout differs, its `-recipe` variant
    (the like-for-like count). Empty when the table is not there (an installed package
    without the repository)."""
    if not path.is_file():
        return pd.DataFrame()
    orig = pd.read_csv(path)
    load = df[(df.experiment.isin(["load", "recipe_variant"])) & (df.threads == 1)]
    variants = {of: v for v, of, _ in RECIPE_VARIANTS}
    rows = []
    for r in orig.itertuples():
        for name in [r.index] + ([variants[r.index]] if r.index in variants else []):
            m = load[(load["index"] == name) & (load.key_type == r.key_type)]
            if m.empty:
                continue
            h = m.iloc[0]
            row = {
                "index": r.index,
                "hmsim_index": name,
                "key_type": r.key_type,
                "recipe_keys": r.keys,
                "hmsim_keys": int(h.records),
            }
            for what in ("flushes", "fences", "ntstores"):
                o, x = float(getattr(r, f"{what}_per_insert")), float(h[f"{what}_per_op"])
                row[f"{what}_recipe"] = o
                row[f"{what}_hmsim"] = round(x, 4)
                row[f"{what}_ratio"] = round(x / o, 3) if o > 0 else (1.0 if x == 0 else float("inf"))
            rows.append(row)
    return pd.DataFrame(rows)


def sources_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per-insert flushes on Load (1 thread) by source: the index's own code outside resizes
    and splits, resizing/splitting, and the persistent allocator; each also normalised to
    P-CLHT's total (index + resize) as the study's figure normalises."""
    load = df[(df.experiment == "load") & (df.threads == 1)].copy()
    if load.empty or "resize_flushes_per_op" not in load:
        return pd.DataFrame()
    t = pd.DataFrame(
        {
            "index": load["index"],
            "key_type": load.key_type,
            "index_flushes": load.flushes_per_op - load.resize_flushes_per_op,
            "resize_flushes": load.resize_flushes_per_op,
            "alloc_flushes": load.alloc_flushes_per_op,
        }
    ).reset_index(drop=True)
    for kt in t.key_type.unique():
        ref = t[(t["index"] == "p-clht") & (t.key_type == kt)]
        if ref.empty:
            continue
        base = float(ref.index_flushes.iloc[0] + ref.resize_flushes.iloc[0])
        sel = t.key_type == kt
        for c in ("index_flushes", "resize_flushes", "alloc_flushes"):
            t.loc[sel, f"{c}_vs_p_clht"] = (t.loc[sel, c] / base).round(3)
    return t.round(4)


def _run(out: Path, quick: bool = True, workers: int | None = None) -> StudyResult:
    points = build_points(quick)
    res = run_points(points, out, workers=workers, label="pm-index")
    df = res.results
    df = select(df, COLUMNS, "pm-index study")
    tonic = tonic_table(df)
    # Timed alone (one point at a time) so the sweep's other points do not share the cores.
    real_res = run_points(real_points(quick), out, workers=1, label="pm-index real", alone=True)
    real = real_table(real_res.tables.get("real_threads"))
    load = df[(df.experiment == "load") & (df.key_type == "int") & (df.threads == 1)].set_index("index")
    norm = {}
    if "p-clht" in load.index and load.loc["p-clht"].flushes_per_op > 0:
        norm = (load.flushes_per_op / load.loc["p-clht"].flushes_per_op).round(3).to_dict()
    return StudyResult(
        name="pm-index",
        results=df,
        tables={
            "tonic": tonic,
            "real_threads": real,
            "recipe_crosscheck": recipe_table(df),
            "flush_sources": sources_table(df),
        },
        comparison=comparison_frame(compare(tonic)),
        summary={
            "seed": 1,
            "points": len(points),
            "flushes_per_insert_vs_p_clht": norm,
            "real_2_thread_speedup": {}
            if real.empty
            else real[real.os_threads == 2].set_index("index").speedup_vs_1_thread.round(2).to_dict(),
        },
        figures=figures(out, df, tonic, real),
    )


STUDY = register(
    Study(
        "pm-index",
        "Persistent indexes: lifetime cost per insert (Tonic/RECIPE)",
        _run,
        source="tonic-access21",
        expected_warnings=(
            (
                r"^experiment=real_threads: throughput\.model = false",
                "the real-thread points time the indexes on this machine's threads only, without the model "
                "(their timings are in table real_threads)",
            ),
        ),
    )
)
