"""Study `numa-pmem`: DRAM + Optane PMem as system memory on a 2-socket NUMA machine — Memory
Mode, the three memkind KMEM_DAX policies, Linux default, interleave-all and aliusM (KCC 2021;
docs/numa-pmem.md). Four experiments: (1) vmalloc-style allocation of 100 … 3,000 GiB under
every policy: success or out-of-memory (with the kernel's own memory), and time; (2) a
SuperPi-like memory-bound run whose footprint fits in DRAM; (3) Memory Mode vs DRAM-first
runtime and the DRAM cache's hit ratio over footprint × threads × physical frame order;
(4) PMem bandwidth and latency as one module, interleaved over a socket's modules, and
remote, against local and remote DRAM. Sizes are GiB (2^30 B) throughout.

The study publishes capacities and SLIT distances, Yang et al., USENIX FAST 2020 the Optane
device characterisation; the study's own timings are not published, so the comparison table
holds the capacities and device figures only: inputs of the setup (listed, not counted) and
one validation number."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hmsim.plotting import color_for, declare_series, house_style, save_figure
from hmsim.results import select
from hmsim.studies.base import Published, Study, StudyResult, StudyScenario, comparison_frame, register
from hmsim.sweep import Point, run_points

GIB = 1 << 30
POLICIES = [
    "memory-mode",
    "kmem-dax",
    "kmem-dax-all",
    "kmem-dax-preferred",
    "linux-default",
    "interleave-all",
    "aliusm",
]
ALLOC_GIB = [100, 200, 400, 800, 1200, 1600, 2000, 2500, 3000]
ALLOC_GIB_QUICK = [100, 400, 1600, 3000]
SUPERPI_GIB = [32, 150, 300]
SUPERPI_GIB_QUICK = [32, 300]
# Experiment 3: Memory Mode vs DRAM-first (Linux default) for a SuperPi-like run on core 0.
# A Memory Mode node caches 756 GiB of PMem in 96 GiB of DRAM; socket 0 has 2 such nodes.
MM_GIB = [16, 32, 64, 96, 150, 192, 300]
MM_GIB_QUICK = [32, 96, 192]
MM_THREADS = [1, 28]
FRAME_ORDERS = ["sequential", "shuffled", "random"]
# Experiment 3: where a 64 GiB read stream of 28 threads on socket 0 has its pages.
PATHS = {
    "local DRAM": "interleave:0,1",
    "remote DRAM": "interleave:2,3",
    "PMem, one module": "bind:4",
    "PMem, socket interleaved": "interleave:4,5,6,7,8,9",
    "PMem, remote interleaved": "interleave:10,11,12,13,14,15",
}


def _pt(exp: str, gib: float, policies: list[str] | None = None, **ov: object) -> Point:
    head = {"name": exp, "allocation.size_bytes": int(gib * GIB)}
    if policies is not None:
        head["policies"] = policies
    return StudyScenario.shipped("numa_pmem.toml", label="point").point(f"{exp}-{gib}", head, **ov)


def build_points(quick: bool) -> list[Point]:
    pts = [_pt("allocation", g) for g in (ALLOC_GIB_QUICK if quick else ALLOC_GIB)]
    for g in SUPERPI_GIB_QUICK if quick else SUPERPI_GIB:
        pts.append(_pt("superpi", g, app__kind="superpi", app__threads=1, app__passes=10.0))
    # Frame order: consecutive (boot, shuffling off), shuffled 4 MiB blocks (the study's
    # kernel on a Memory Mode platform), page-random (aged machine).
    for order in FRAME_ORDERS:
        for t in MM_THREADS:
            for g in MM_GIB_QUICK if quick else MM_GIB:
                pts.append(
                    _pt(
                        f"mm-{order}-t{t}",
                        g,
                        ["memory-mode", "linux-default"],
                        app__kind="superpi",
                        app__threads=t,
                        app__passes=10.0,
                        memory_mode__frame_order=order,
                    )
                )
    pts.append(
        _pt(
            "interleave",
            64,
            list(PATHS.values()),
            app__kind="stream",
            app__threads=28,
            app__read_fraction=1.0,
            app__passes=4.0,
        )
    )
    return pts


def mm_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Memory Mode vs DRAM-first (Linux default) per footprint, threads and frame order."""
    m = df[df.experiment.str.startswith("mm-")]
    if m.empty:
        return pd.DataFrame()
    rows = []
    for (exp, size), g in m.groupby(["experiment", "size_gib"]):
        r = g.set_index("policy")
        order, t = exp[3:].rsplit("-t", 1)
        rows.append(
            {
                "frame_order": order,
                "threads": int(t),
                "size_gib": size,
                "mm_runtime_s": float(r.runtime_s["memory-mode"]),
                "dram_first_runtime_s": float(r.runtime_s["linux-default"]),
                "mm_vs_dram_first": float(r.runtime_s["memory-mode"] / r.runtime_s["linux-default"]),
                "hit_ratio": float(r.cache_hit_ratio["memory-mode"]),
            }
        )
    return pd.DataFrame(rows).sort_values(["frame_order", "threads", "size_gib"]).reset_index(drop=True)


def _path_label(policy: str) -> str:
    return {v: k for k, v in PATHS.items()}.get(policy, policy)


def figures(out: Path, df: pd.DataFrame, nodes: pd.DataFrame) -> list[Path]:
    paths: list[Path] = []
    colors = color_for(POLICIES)
    with house_style():
        a = df[df.experiment == "allocation"]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for p in POLICIES:
            s = a[a.policy == p].sort_values("size_gib")
            ok = s[s.ok.astype(bool)]
            bad = s[~s.ok.astype(bool)]
            ax.plot(ok.size_gib, ok.alloc_time_s, marker="o", color=colors[p], label=p)
            # Out of memory: the time spent until the allocation failed.
            ax.scatter(bad.size_gib, bad.alloc_time_s, marker="x", s=80, color=colors[p])
        ax.set_xlabel("allocation size (GiB)")
        ax.set_ylabel("allocation time (s); x = out of memory at")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
        ax.set_title("vmalloc-style allocation on the aliusM machine")
        declare_series(fig, dict.fromkeys(a.policy))
        paths += save_figure(fig, out, "fig_allocation")

        s = df[df.experiment == "superpi"]
        if not s.empty:
            sizes = sorted(s.size_gib.unique())
            fig, ax = plt.subplots(figsize=(8, 4.5))
            w = 0.8 / len(POLICIES)
            for i, p in enumerate(POLICIES):
                r = s[s.policy == p].set_index("size_gib").reindex(sizes)
                ax.bar(np.arange(len(sizes)) + i * w, r.runtime_s, w, color=colors[p], label=p)
            ax.set_xticks(np.arange(len(sizes)) + 0.4 - w / 2, [f"{g:g} GiB" for g in sizes])
            ax.set_ylabel("runtime (s)")
            ax.set_title("SuperPi-like run (1 thread), footprint fits in DRAM")
            ax.legend(fontsize=8)
            declare_series(fig, dict.fromkeys(s.policy))
            paths += save_figure(fig, out, "fig_superpi")

        mm = mm_frame(df)
        if not mm.empty:
            fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
            oc = color_for(FRAME_ORDERS)
            # Shuffled and random frames have the same expected hit ratio (docs): distinct
            # markers keep both visible where they coincide.
            mk = {"sequential": "o", "shuffled": "s", "random": "x"}
            groups = sorted(mm.groupby(["frame_order", "threads"]), key=lambda kv: kv[0][0] == "random")
            for (order, t), g in groups:
                style = "-" if t == min(MM_THREADS) else "--"
                kw = {"marker": mk.get(order, "o"), "color": oc[order], "ms": 5}
                if t == min(MM_THREADS):
                    axes[0].plot(g.size_gib, g.hit_ratio, style, label=order, **kw)
                axes[1].plot(g.size_gib, g.mm_vs_dram_first, style, label=f"{order}, {t} thr", **kw)
            for ax in axes:
                ax.axvline(96, color="grey", lw=0.8, ls=":")
                ax.set_xlabel("footprint (GiB); dotted: one node's DRAM cache")
            axes[0].set_ylabel("Memory Mode DRAM-cache hit ratio")
            axes[0].set_ylim(0, 1.05)
            axes[0].legend(fontsize=8, title="physical frames")
            axes[1].set_ylabel("runtime, Memory Mode / DRAM-first")
            axes[1].legend(fontsize=7)
            fig.suptitle("SuperPi-like run on core 0: Memory Mode vs DRAM-first")
            declare_series(
                fig, [f"{o}, {t} thr" for o, t in dict.fromkeys(zip(mm.frame_order, mm.threads, strict=True))]
            )
            paths += save_figure(fig, out, "fig_mm_hit_ratio")

        i = df[df.experiment == "interleave"].copy()
        if not i.empty:
            i["path"] = i.policy.map(_path_label)
            fig, axes = plt.subplots(1, 2, figsize=(10, 4))
            axes[0].barh(i.path, i.bandwidth_gb_s, color="tab:blue")
            axes[0].set_xlabel("read bandwidth, 28 threads (GB/s)")
            axes[1].barh(i.path, i.idle_latency_ns, color="tab:orange", label="random")
            axes[1].barh(i.path, i.idle_seq_latency_ns, color="tab:green", label="sequential")
            axes[1].set_xlabel("idle read latency (ns)")
            axes[1].legend(fontsize=8)
            fig.suptitle("PMem single module vs interleaved vs remote, against DRAM")
            declare_series(fig, dict.fromkeys(i.path))
            paths += save_figure(fig, out, "fig_interleave")

        n = (
            nodes[(nodes.experiment == "allocation") & (nodes.size_gib == nodes.size_gib.max())]
            if not nodes.empty
            else nodes
        )
        if not n.empty:
            fig, ax = plt.subplots(figsize=(8, 4.5))
            piv = n.pivot_table(index="policy", columns="kind", values="gib", aggfunc="sum").reindex(POLICIES).fillna(0)
            piv.plot.barh(stacked=True, ax=ax)
            ax.set_xlabel(f"GiB placed of {n.size_gib.max():g} GiB requested")
            ax.set_title("Where the largest allocation landed")
            declare_series(fig, [*dict.fromkeys(n.policy), *dict.fromkeys(n.kind)])
            paths += save_figure(fig, out, "fig_placement")
    return paths


def comparison(df: pd.DataFrame, summary: dict) -> list[Published]:
    items = [
        Published("DRAM capacity", 384, summary["dram_gib"], "GiB", "input", "topology preset (published: 384-386 GB)"),
        Published("PMem capacity (raw)", 3072, summary["far_raw_gib"], "GiB", "input", "topology preset"),
        Published(
            "DRAM + PMem capacity",
            3456,
            summary["dram_gib"] + summary["far_raw_gib"],
            "GiB",
            "input",
            "topology preset",
        ),
    ]
    i = df[df.experiment == "interleave"].set_index("policy")
    if not i.empty:

        def get(path: str, col: str) -> float:
            return float(i.loc[PATHS[path], col])

        items += [
            Published(
                "PMem read bandwidth, one DIMM",
                6.5,
                get("PMem, one module", "bandwidth_gb_s"),
                "GB/s",
                "input",
                "the catalog device's read bandwidth",
                "yang-fast20",
                "bandwidth vs thread count",
            ),
            Published(
                "PMem read bandwidth, six interleaved DIMMs",
                38.5,
                get("PMem, socket interleaved", "bandwidth_gb_s"),
                "GB/s",
                "validation",
                "published 37.6-39.4 (midpoint); model: 6 x the one-DIMM figure, not fitted",
                "yang-fast20",
                "bandwidth vs thread count, six interleaved DIMMs",
            ),
            Published(
                "Remote DRAM read bandwidth (UPI-bound)",
                62.4,
                get("remote DRAM", "bandwidth_gb_s"),
                "GB/s",
                "input",
                "topology preset: Cascade Lake 2S, 3 UPI links x 10.4 GT/s x 2 B",
                "intel-cascade-lake",
            ),
            Published(
                "PMem idle sequential read latency",
                169,
                get("PMem, one module", "idle_seq_latency_ns"),
                "ns",
                "input",
                "the catalog device's idle latency",
                "yang-fast20",
                "idle latency",
            ),
            Published(
                "PMem idle random read latency",
                305,
                get("PMem, one module", "idle_latency_ns"),
                "ns",
                "input",
                "the catalog device's idle latency",
                "yang-fast20",
                "idle latency",
            ),
            Published(
                "DRAM idle sequential read latency",
                81,
                get("local DRAM", "idle_seq_latency_ns"),
                "ns",
                "input",
                "the catalog device's idle latency",
                "yang-fast20",
                "idle latency",
            ),
            Published(
                "DRAM idle random read latency",
                101,
                get("local DRAM", "idle_latency_ns"),
                "ns",
                "input",
                "the catalog device's idle latency",
                "yang-fast20",
                "idle latency",
            ),
        ]
    return items


COLUMNS = [
    "experiment",
    "policy",
    "size_gib",
    "size_gb",
    "ok",
    "oom_nodes",
    "oom_reason",
    "usable_gib",
    "struct_page_gib",
    "reserve_gib",
    "metadata_gib",
    "alloc_time_s",
    "runtime_s",
    "dram_share",
    "pmem_share",
    "swap_share",
    "remote_share",
    "cache_hit_ratio",
    "bandwidth_gb_s",
    "latency_ns",
    "idle_latency_ns",
    "idle_seq_latency_ns",
    "pmem_read_gib",
    "pmem_write_gib",
    "placed_gib",
    "swap_gib",
    "alloc_zero_s",
    "alloc_remote_s",
    "alloc_swap_s",
    "threads",
    "app",
    "topology",
]


def _run(out: Path, quick: bool = True, workers: int | None = None) -> StudyResult:
    points = build_points(quick)
    res = run_points(points, out, workers=workers, label="numa-pmem")
    df = res.results
    df = select(df, COLUMNS, "numa-pmem study")
    nodes = res.tables.get("nodes", pd.DataFrame())
    if not nodes.empty:
        meta = res.results[["point", "experiment", "size_gib"]].drop_duplicates("point")
        nodes = nodes.merge(meta, on="point", how="left")
    head = res.outputs[0]["headline"]
    summary = {
        "seed": 1,
        "points": len(points),
        "dram_gib": head["dram_gib"],
        "far_gib": head["far_gib"],
        "far_raw_gib": head["far_raw_gib"],
    }
    a = df[df.experiment == "allocation"]
    summary["largest_ok_gib"] = {
        p: float(a[(a.policy == p) & a.ok.astype(bool)].size_gib.max())
        if ((a.policy == p) & a.ok.astype(bool)).any()
        else 0.0
        for p in POLICIES
    }
    mm = mm_frame(df)
    if not mm.empty:
        at32 = mm[(mm.size_gib == 32.0) & (mm.threads == 1)].set_index("frame_order")
        summary["mm_vs_dram_first_32gib_1thread"] = {k: float(v) for k, v in at32.mm_vs_dram_first.items()}
    return StudyResult(
        name="numa-pmem",
        results=df,
        tables={"nodes": nodes, "memory_mode": mm},
        comparison=comparison_frame(comparison(df, summary)),
        summary=summary,
        figures=figures(out, df, nodes),
    )


STUDY = register(
    Study("numa-pmem", "DRAM + PMem as system memory: Memory Mode, KMEM_DAX, aliusM", _run, source="aliusm-kcc21")
)
