"""Study `numa-pmem`: DRAM + Optane PMem as system memory on a 2-socket NUMA machine — Memory
Mode, the three memkind KMEM_DAX policies, Linux default, interleave-all and aliusM (spec
04-numa-pmem.md). Three experiments: (1) vmalloc-style allocation of 100 … 3,000 GiB under
every policy: success or out-of-memory, and time; (2) a SuperPi-like memory-bound run whose
footprint fits in DRAM; (3) PMem bandwidth and latency as one module, interleaved over a
socket's modules, and remote, against local and remote DRAM.

The spec publishes capacities, SLIT distances and (in 02-pmem.md) the Optane device
characterisation; the study's own timings are not published, so the comparison table holds
the capacities and device figures only, each marked calibration or validation."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hmsim.plotting import color_for, house_style, save_figure
from hmsim.scenario import _toml_value
from hmsim.studies.base import Published, Study, StudyResult, comparison_frame, register
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
# Experiment 3: where a 64 GiB read stream of 28 threads on socket 0 has its pages.
PATHS = {
    "local DRAM": "interleave:0,1",
    "remote DRAM": "interleave:2,3",
    "PMem, one module": "bind:4",
    "PMem, socket interleaved": "interleave:4,5,6,7,8,9",
    "PMem, remote interleaved": "interleave:10,11,12,13,14,15",
}


def _base() -> tuple[str, str]:
    f = resources.files("hmsim.studies").joinpath("scenarios/numa_pmem.toml")
    return f.read_text(), str(f)


def _pt(exp: str, gib: float, policies: list[str] | None = None, **ov: object) -> Point:
    text, file = _base()
    overrides = [("name", _toml_value(exp)), ("allocation.size_bytes", _toml_value(int(gib * GIB)))]
    if policies is not None:
        overrides.append(("policies", _toml_value(policies)))
    overrides += [(k.replace("__", "."), _toml_value(v)) for k, v in ov.items()]
    return Point(text=text, file=file, overrides=tuple(overrides), labels=(("point", f"{exp}-{gib}"),))


def build_points(quick: bool) -> list[Point]:
    pts = [_pt("allocation", g) for g in (ALLOC_GIB_QUICK if quick else ALLOC_GIB)]
    for g in SUPERPI_GIB_QUICK if quick else SUPERPI_GIB:
        pts.append(_pt("superpi", g, app__kind="superpi", app__threads=1, app__passes=10.0))
        # Memory Mode on an aged machine: physical frames scattered, so pages alias.
        pts.append(
            _pt(
                "superpi-aged-frames",
                g,
                ["memory-mode"],
                app__kind="superpi",
                app__threads=1,
                app__passes=10.0,
                memory_mode__frame_order="random",
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


def _path_label(policy: str) -> str:
    return {v: k for k, v in PATHS.items()}.get(policy, policy)


def figures(out: Path, df: pd.DataFrame, nodes: pd.DataFrame) -> list[Path]:
    paths: list[Path] = []
    colors = color_for(POLICIES)
    with house_style():
        a = df[df.experiment == "allocation"]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for p in POLICIES:
            s = a[a.policy == p].sort_values("size_gb")
            ok = s[s.ok.astype(bool)]
            bad = s[~s.ok.astype(bool)]
            ax.plot(ok.size_gb, ok.alloc_time_s, marker="o", color=colors[p], label=p)
            # Out of memory: the time spent until the allocation failed.
            ax.scatter(bad.size_gb, bad.alloc_time_s, marker="x", s=80, color=colors[p])
        ax.set_xlabel("allocation size (GiB)")
        ax.set_ylabel("allocation time (s); x = out of memory at")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
        ax.set_title("vmalloc-style allocation on the aliusM machine")
        paths += save_figure(fig, out, "fig_allocation")

        s = df[df.experiment == "superpi"]
        if not s.empty:
            sizes = sorted(s.size_gb.unique())
            fig, ax = plt.subplots(figsize=(8, 4.5))
            w = 0.8 / len(POLICIES)
            for i, p in enumerate(POLICIES):
                r = s[s.policy == p].set_index("size_gb").reindex(sizes)
                ax.bar(np.arange(len(sizes)) + i * w, r.runtime_s, w, color=colors[p], label=p)
            ax.set_xticks(np.arange(len(sizes)) + 0.4 - w / 2, [f"{g:g} GiB" for g in sizes])
            ax.set_ylabel("runtime (s)")
            ax.set_title("SuperPi-like run (1 thread), footprint fits in DRAM")
            ax.legend(fontsize=8)
            paths += save_figure(fig, out, "fig_superpi")

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
            paths += save_figure(fig, out, "fig_interleave")

        n = (
            nodes[(nodes.experiment == "allocation") & (nodes.size_gb == nodes.size_gb.max())]
            if not nodes.empty
            else nodes
        )
        if not n.empty:
            fig, ax = plt.subplots(figsize=(8, 4.5))
            piv = n.pivot_table(index="policy", columns="kind", values="gb", aggfunc="sum").reindex(POLICIES).fillna(0)
            piv.plot.barh(stacked=True, ax=ax)
            ax.set_xlabel(f"GiB placed of {n.size_gb.max():g} GiB requested")
            ax.set_title("Where the largest allocation landed")
            paths += save_figure(fig, out, "fig_placement")
    return paths


def comparison(df: pd.DataFrame, summary: dict) -> list[Published]:
    items = [
        Published("DRAM capacity", 384, summary["dram_gb"], "GiB", "calibration", "topology input (spec: 384-386 GB)"),
        Published("PMem capacity (raw)", 3072, summary["far_raw_gb"], "GiB", "calibration", "topology input"),
        Published(
            "DRAM + PMem capacity",
            3456,
            summary["dram_gb"] + summary["far_raw_gb"],
            "GiB",
            "calibration",
            "topology input",
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
                "calibration",
                "02-pmem.md, Yang et al.",
            ),
            Published(
                "PMem read bandwidth, six interleaved DIMMs",
                38.5,
                get("PMem, socket interleaved", "bandwidth_gb_s"),
                "GB/s",
                "validation",
                "02-pmem.md: 37.6-39.4 (midpoint); model: 6 x the one-DIMM figure, not fitted",
            ),
            Published(
                "PMem idle sequential read latency",
                169,
                get("PMem, one module", "idle_seq_latency_ns"),
                "ns",
                "calibration",
                "02-pmem.md",
            ),
            Published(
                "PMem idle random read latency",
                305,
                get("PMem, one module", "idle_latency_ns"),
                "ns",
                "calibration",
                "02-pmem.md",
            ),
            Published(
                "DRAM idle sequential read latency",
                81,
                get("local DRAM", "idle_seq_latency_ns"),
                "ns",
                "calibration",
                "02-pmem.md",
            ),
            Published(
                "DRAM idle random read latency",
                101,
                get("local DRAM", "idle_latency_ns"),
                "ns",
                "calibration",
                "02-pmem.md",
            ),
        ]
    return items


COLUMNS = [
    "experiment",
    "policy",
    "size_gb",
    "ok",
    "oom_nodes",
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
    "pmem_read_gb",
    "pmem_write_gb",
    "placed_gb",
    "swap_gb",
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
    df = df[[c for c in COLUMNS if c in df.columns]].reset_index(drop=True)
    nodes = res.tables.get("nodes", pd.DataFrame())
    if not nodes.empty:
        meta = res.results[["point", "experiment", "size_gb"]].drop_duplicates("point")
        nodes = nodes.merge(meta, on="point", how="left")
    head = res.outputs[0]["headline"]
    summary = {
        "seed": 1,
        "points": len(points),
        "dram_gb": head["dram_gb"],
        "far_gb": head["far_gb"],
        "far_raw_gb": head["far_raw_gb"],
    }
    a = df[df.experiment == "allocation"]
    summary["largest_ok_gb"] = {
        p: float(a[(a.policy == p) & a.ok.astype(bool)].size_gb.max())
        if ((a.policy == p) & a.ok.astype(bool)).any()
        else 0.0
        for p in POLICIES
    }
    return StudyResult(
        name="numa-pmem",
        results=df,
        tables={"nodes": nodes},
        comparison=comparison_frame(comparison(df, summary)),
        summary=summary,
        figures=figures(out, df, nodes),
    )


STUDY = register(Study("numa-pmem", "DRAM + PMem as system memory: Memory Mode, KMEM_DAX, aliusM", _run))
