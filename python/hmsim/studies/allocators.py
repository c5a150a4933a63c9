"""Study `allocators`: response time, fairness and wear of buddy, lazy buddy, iBuddy and lazy
iBuddy across thread counts and the study's six workloads (Park, Choi, Lee & Noh, IEEE TC 2015; docs/allocators.md). The
response time is the study's: every memory request, allocations and frees together (alloc-only
and free-only columns beside it). The study's public material gives no numbers this grid can be compared with, so the
comparison table is empty; the results are the model's own (lines costed through a modelled
8-core Nehalem-class machine, docs/allocators.md) beside real runs (`source = real`: rdtsc
cycles of these data structures on this machine's cores). A sensitivity sweep shows how the
iBuddy-vs-buddy gap moves with the LLC/DRAM latencies and the application's cache pollution."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from hmsim.plotting import color_for, declare_series, dot_plot, house_style, log2_axis, outside_legend, save_figure
from hmsim.results import select
from hmsim.studies.base import Study, StudyResult, StudyScenario, comparison_frame, register
from hmsim.sweep import Point, run_points

SHAPES = ["kernel-compile", "lmbench", "stream", "unixbench", "dbench", "tbench"]
TRACES = [f"{n}.kmem.hmt" for n in ("gcc", "lmbench", "stream", "unixbench", "dbench", "tbench")]
THREADS = [1, 2, 4, 8, 16, 32]
LAZY_IBUDDY_B1 = "lazy-ibuddy(batch=1,spaces=4)"
LAZY_BUDDY_B31 = "lazy-buddy(batch=31,high=186)"
IBUDDY = "ibuddy(spaces=4)"


def _trace_dir() -> Path:
    # Package data (a link to crates/hmsim/tests/data/traces in the source tree, the files
    # themselves in a wheel), so an installed hmsim finds them too.
    return Path(str(resources.files("hmsim.studies").joinpath("traces")))


# Sensitivity: one axis at a time around the default machine (docs/allocators.md).
SENS_SHAPES = ["kernel-compile", "dbench"]
SENS_AXES: dict[str, list[int]] = {
    "machine.llc_cycles": [20, 40, 80],
    "machine.dram_cycles": [72, 144, 288],
    "machine.app_lines_per_request": [0, 64, 512],
}
SENS_THREADS = 8


def build_points(quick: bool) -> list[Point]:
    sc = StudyScenario.shipped("allocators.toml", label="point")
    total = 24_000 if quick else 200_000
    cores = os.cpu_count() or 1
    pts = []
    for shape in SHAPES:
        for t in THREADS:
            ov = {
                "workload.synthetic.shape": shape,
                "workload.synthetic.threads": t,
                "workload.synthetic.allocs_per_thread": total // t,
                # Real threads only where this machine has a core for each and one to spare
                # (at most cores − 1), so the OS preempts them rarely.
                "real": t <= max(cores - 1, 1),
                # Quick runs: a 256 MiB array (the full study: 1 GiB).
                **({"frames": 65536} if quick else {}),
            }
            pts.append(sc.point(f"{shape}-{t}", ov))
    # Quick runs: the sensitivity of one workload (the full study: both).
    for shape in SENS_SHAPES[:1] if quick else SENS_SHAPES:
        for key, values in SENS_AXES.items():
            for v in values:
                ov = {
                    "workload.synthetic.shape": shape,
                    "workload.synthetic.threads": SENS_THREADS,
                    "workload.synthetic.allocs_per_thread": total // SENS_THREADS,
                    key: v,
                    **({"frames": 65536} if quick else {}),
                }
                label = f"sens:{shape}:{key.removeprefix('machine.')}={v}"
                pts.append(sc.point(label, ov))
    traces = _trace_dir()
    if traces.is_dir():  # the committed kmem traces (a source checkout)
        for name in TRACES:
            # Replayed as the study's Linux 2.6.32 would have asked (order-0 page-frag
            # refills and page-cache pages).
            pts.append(sc.point(name, {"workload.trace": str(traces / name), "workload.kernel": "2.6.32"}))
    return pts


def _syn(df: pd.DataFrame) -> pd.DataFrame:
    """Model rows of the main grid (not the sensitivity points)."""
    return df[df.workload.str.startswith("synthetic") & (df.source == "model") & ~df.point.str.startswith("sens:")]


def _grid(df: pd.DataFrame, names: list[str], colors: dict, col: str, ylabel: str, title: str) -> plt.Figure:
    fig, axes = plt.subplots(2, 3, figsize=(13, 7), sharex=True)
    for ax, shape in zip(axes.flat, SHAPES, strict=True):
        s = _syn(df)
        s = s[s.workload == f"synthetic-{shape}"]
        for a in names:
            d = s[s.allocator == a].sort_values("threads")
            ax.plot(d.threads, d[col], marker="o", color=colors[a], label=a)
        log2_axis(ax)
        ax.set_title(shape)
        ax.set_xlabel("threads")
        ax.set_ylabel(ylabel)
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(title)
    s = _syn(df)
    declare_series(fig, [*dict.fromkeys(s.allocator), *SHAPES])
    return fig


def figures(out: Path, df: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> list[Path]:
    paths: list[Path] = []
    names = list(dict.fromkeys(df.allocator))
    colors = color_for(names)
    with house_style():
        ylabel = "mean response, alloc + free (cycles)"
        fig = _grid(df, names, colors, "mean_cycles", ylabel, "Memory-request response time (model)")
        paths += save_figure(fig, out, "fig_response_vs_threads")
        fig = _grid(df, names, colors, "std_cycles", "σ of response (cycles)", "Response-time deviation (model)")
        paths += save_figure(fig, out, "fig_std_vs_threads")

        lat = tables.get("latency")
        if lat is not None and not lat.empty:
            fig, axes = plt.subplots(1, 2, figsize=(11, 4))
            for ax, src in zip(axes, ("model", "real"), strict=True):
                s = lat[(lat.point == "kernel-compile-1") & (lat.source == src)]
                for a in names:
                    d = s[s.allocator == a].sort_values("quantile")
                    if not d.empty:
                        ax.plot(d.cycles, d["quantile"], marker=".", color=colors[a], label=a)
                ax.set_xscale("log")
                ax.set_xlabel("response of a memory request, alloc or free (cycles)")
                ax.set_ylabel("cumulative fraction")
                ax.set_title(f"kernel-compile, 1 thread ({src})")
            axes[0].legend(fontsize=7)
            declare_series(fig, dict.fromkeys(lat[lat.point == "kernel-compile-1"].allocator))
            paths += save_figure(fig, out, "fig_response_distribution")

        wear = tables.get("wear")
        if wear is not None and not wear.empty:
            fig, axes = plt.subplots(1, 2, figsize=(12, 4))
            w = wear[wear.point == "kernel-compile-4"]
            for a in names:
                d = w[w.allocator == a].sort_values("alloc_count_lo")
                axes[0].step(d.alloc_count_hi.clip(lower=0.5), d.frames, where="mid", color=colors[a], label=a)
            log2_axis(axes[0])
            axes[0].set_yscale("log")
            axes[0].set_xlabel("allocations per frame (log2 bin upper edge)")
            axes[0].set_ylabel("frames")
            axes[0].set_title("Allocation-count histogram (kernel-compile, 4 threads)")
            axes[0].legend(fontsize=7)
            s = _syn(df)
            s = s[(s.workload == "synthetic-kernel-compile") & (s.threads == 4)]
            s = s.set_index("allocator").loc[names]
            life = s[["lifetime_runs", "lifetime_start_gap_runs", "lifetime_start_gap_random_runs"]]
            life.columns = ["no leveling", "Start-Gap ψ=100", "Start-Gap + randomization"]
            # Dots on the log axis, not bars (a log bar's length is where the axis starts).
            dot_plot(axes[1], life, log=True, rotation=30)
            axes[1].legend(fontsize=7)
            axes[1].set_ylabel("repetitions to first wear-out")
            axes[1].set_title("Implied lifetime, endurance 1e7 writes")
            axes[1].tick_params(axis="x", labelsize=7)
            declare_series(fig, [*dict.fromkeys(w.allocator), *names, *life.columns])
            paths += save_figure(fig, out, "fig_wear_lifetime")

        fig, axes = plt.subplots(1, 2, figsize=(12, 4))
        s = _syn(df)
        s = s[s.threads == 4]
        for ax, col, lab in (
            # Two lines each: in one, the right-hand label ran up into the suptitle.
            (axes[0], "probe_order9_success_rate", "order-9 success rate\nafter the run"),
            (axes[1], "probe_order3_mean_cycles", "order-3 request cost\nafter the run (cycles)"),
        ):
            if col in s.columns:
                t = s.pivot_table(index="workload", columns="allocator", values=col)[names]
                t.plot.bar(ax=ax, color=[colors[n] for n in names], legend=ax is axes[1])
                ax.set_ylabel(lab)
                ax.tick_params(axis="x", rotation=30, labelsize=7)
        if axes[1].get_legend():
            # Beside the axes: inside, it covered the tallest bars.
            outside_legend(axes[1], fontsize=6)
        fig.suptitle("Fragmentation: order-k probes after each workload (4 threads)")
        declare_series(fig, [*dict.fromkeys(s.allocator), *dict.fromkeys(s.workload)])
        paths += save_figure(fig, out, "fig_fragmentation")

        # End to end: allocator choice → per-frame writes → PCM endurance → years, without
        # and with randomized Start-Gap underneath.
        fig, axes = plt.subplots(1, 2, figsize=(14, 4), sharey=True)
        tr = df[df.point.str.endswith(".kmem.hmt") & (df.source == "model")].copy()
        if not tr.empty and "lifetime_years" in tr.columns:
            tr["sg_years"] = tr.lifetime_years * tr.lifetime_start_gap_random_runs / tr.lifetime_runs
            for ax, col, lab in (
                (axes[0], "lifetime_years", "no wear leveling"),
                (axes[1], "sg_years", "randomized Start-Gap (ψ = 100)"),
            ):
                t = tr.pivot_table(index="workload", columns="allocator", values=col)[names]
                dot_plot(ax, t, colors=colors, log=True, rotation=20)  # dots: no log bars
                ax.set_title(lab)
                ax.tick_params(axis="x", labelsize=7)
            axes[0].set_ylabel("years until the hottest frame wears out")
            axes[1].legend(fontsize=6)
            declare_series(fig, [*dict.fromkeys(tr.allocator), *dict.fromkeys(tr.workload)])
            fig.suptitle("Recorded traces repeated back to back on PCM cells (endurance 1e7, 1 write per allocation)")
        paths += save_figure(fig, out, "fig_end_to_end_pcm_lifetime")

        sens = sensitivity(df)
        if not sens.empty:
            fig, axes = plt.subplots(1, len(SENS_AXES), figsize=(14, 4), sharey=True)
            for ax, key in zip(axes, SENS_AXES, strict=True):
                k = key.removeprefix("machine.")
                for shape in SENS_SHAPES:
                    d = sens[(sens.axis == k) & (sens.shape == shape)].sort_values("value")
                    ax.plot(d.value, d.buddy_over_ibuddy, marker="o", label=f"{shape}: buddy / iBuddy")
                    lab = f"{shape}: lazy b31 / lazy iB b1"
                    ax.plot(d.value, d.lazy_buddy31_over_lazy_ibuddy1, marker="s", ls="--", label=lab)
                ax.axhline(1.0, color="grey", lw=0.8)
                ax.set_xlabel(k)
                ax.set_title(f"{k} ({SENS_THREADS} threads)")
            axes[0].set_ylabel("mean response ratio (>1: iBuddy faster)")
            axes[0].legend(fontsize=7)
            fig.suptitle("Sensitivity of the iBuddy-vs-buddy gap to the machine (model)")
            declare_series(fig, [f"{shape}: buddy / iBuddy" for shape in dict.fromkeys(sens["shape"])])
            paths += save_figure(fig, out, "fig_sensitivity")
    return paths


def sensitivity(df: pd.DataFrame) -> pd.DataFrame:
    """Per sensitivity point: buddy / iBuddy and lazy buddy (31) / lazy iBuddy (1) mean ratios."""
    s = df[df.point.str.startswith("sens:") & (df.source == "model")]
    rows = []
    for point, g in s.groupby("point"):
        _, shape, kv = point.split(":")
        k, v = kv.split("=")
        m = g.set_index("allocator").mean_cycles
        rows.append(
            {
                "shape": shape,
                "axis": k,
                "value": float(v),
                "buddy_over_ibuddy": float(m["buddy"] / m[IBUDDY]),
                "lazy_buddy31_over_lazy_ibuddy1": float(m[LAZY_BUDDY_B31] / m[LAZY_IBUDDY_B1]),
            }
        )
    return pd.DataFrame(rows)


KEEP = [
    "point",
    "workload",
    "allocator",
    "name",
    "batch",
    "policy",
    "threads",
    "frames",
    "requests",
    "failures",
    "cores",
    "mean_cycles",
    "std_cycles",
    "p50_cycles",
    "p99_cycles",
    "p999_cycles",
    "alloc_mean_cycles",
    "alloc_std_cycles",
    "free_mean_cycles",
    "free_std_cycles",
    "lines_per_request",
    "cross_core_lines_per_request",
    "dram_lines_per_request",
    "outliers",
    "alloc_count_max_over_mean",
    "alloc_count_cov",
    "lifetime_runs",
    "lifetime_start_gap_runs",
    "lifetime_start_gap_random_runs",
    "lifetime_years",
    "probe_order3_success_rate",
    "probe_order3_mean_cycles",
    "probe_order9_success_rate",
    "probe_order9_mean_cycles",
    "checker_violations",
    "source",
]


def improvement(df: pd.DataFrame) -> dict[str, dict[str, float]]:
    """The study's improvement of lazy iBuddy (batch 1, e) over lazy buddy (batch 31, c):
    (c − e) / c of the mean response of memory requests, per workload and threads."""
    syn = _syn(df)
    m = syn.set_index(["workload", "threads", "allocator"]).mean_cycles
    out: dict[str, dict[str, float]] = {}
    for (wl, t), _ in syn.groupby(["workload", "threads"]):
        e, c = m.get((wl, t, LAZY_IBUDDY_B1)), m.get((wl, t, LAZY_BUDDY_B31))
        if e is not None and c is not None and c > 0:
            out.setdefault(wl.removeprefix("synthetic-"), {})[str(t)] = float((c - e) / c)
    return out


def improvement_table(df: pd.DataFrame) -> pd.DataFrame:
    """`improvement` as a table: per workload and thread count, the lazy buddy (batch 31) mean
    c, the lazy iBuddy (batch 1) mean e (cycles of a memory request, alloc and free together)
    and (c − e) / c; positive when the lazy iBuddy is faster."""
    syn = _syn(df)
    m = syn.set_index(["workload", "threads", "allocator"]).mean_cycles
    rows = []
    for (wl, t), _ in syn.groupby(["workload", "threads"]):
        e, c = m.get((wl, t, LAZY_IBUDDY_B1)), m.get((wl, t, LAZY_BUDDY_B31))
        if e is not None and c is not None and c > 0:
            rows.append(
                {
                    "workload": wl.removeprefix("synthetic-"),
                    "threads": int(t),
                    "lazy_buddy_b31_mean_cycles": float(c),
                    "lazy_ibuddy_b1_mean_cycles": float(e),
                    "improvement": float((c - e) / c),
                }
            )
    return pd.DataFrame(rows)


def _run(out: Path, quick: bool = True, workers: int | None = None) -> StudyResult:
    points = build_points(quick)
    res = run_points(points, out, workers=workers, label="allocators")
    df = res.results
    df = select(df, KEEP, "allocators study")
    syn = _syn(df)

    def pivot(col: str) -> pd.DataFrame:
        return syn.pivot_table(index=["workload", "allocator"], columns="threads", values=col).reset_index()

    tables = {
        "table_mean_cycles": pivot("mean_cycles"),
        "table_std_cycles": pivot("std_cycles"),
        "table_alloc_mean_cycles": pivot("alloc_mean_cycles"),
        "table_free_mean_cycles": pivot("free_mean_cycles"),
        "table_sensitivity": sensitivity(df),
        "table_lazy_ibuddy_b1_improvement": improvement_table(df),
        **{k: v for k, v in res.tables.items() if k in ("wear", "latency")},
    }
    imp = improvement(df)
    return StudyResult(
        name="allocators",
        results=df,
        tables={k: v for k, v in tables.items() if k.startswith("table_")},
        comparison=comparison_frame([]),
        summary={
            "seed": 1,
            "points": len(points),
            "lazy_ibuddy_b1_improvement_over_lazy_buddy_b31": imp,
            "real_threads": [t for t in THREADS if t <= max((os.cpu_count() or 1) - 1, 1)],
        },
        figures=figures(out, df, tables),
    )


STUDY = register(
    Study("allocators", "Buddy, lazy buddy, iBuddy: response time, fairness, wear", _run, source="ibuddy-tc15")
)
