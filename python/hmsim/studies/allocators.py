"""Study `allocators`: response time, fairness and wear of buddy, lazy buddy, iBuddy and lazy
iBuddy across thread counts and workloads (spec 06-allocators.md §4). The spec gives no
published numbers for this study, so the comparison table is empty; the results are the
model's own (cycles from the documented cost table)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from hmsim.plotting import color_for, house_style, save_figure
from hmsim.scenario import _toml_value
from hmsim.studies.base import Study, StudyResult, comparison_frame, register
from hmsim.sweep import Point, run_points

TRACES = ["gcc.kmem.hmt", "dbench.kmem.hmt"]


def _base() -> tuple[str, str]:
    f = resources.files("hmsim.studies").joinpath("scenarios/allocators.toml")
    return f.read_text(), str(f)


def _trace_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "crates" / "hmsim" / "tests" / "data" / "traces"


def build_points(quick: bool) -> list[Point]:
    text, file = _base()
    total = 100_000 if quick else 800_000
    threads = [1, 4, 16] if quick else [1, 2, 4, 8, 16, 32]
    pts = []
    for t in threads:
        ov = (
            ("workload.synthetic.threads", _toml_value(t)),
            ("workload.synthetic.allocs_per_thread", _toml_value(total // t)),
        )
        pts.append(Point(text=text, file=file, overrides=ov, labels=(("point", f"synthetic-{t}"),)))
    traces = _trace_dir()
    if traces.is_dir():  # the committed kmem traces (a source checkout)
        for name in TRACES:
            ov = (("workload.trace", _toml_value(str(traces / name))),)
            pts.append(Point(text=text, file=file, overrides=ov, labels=(("point", name),)))
    return pts


def figures(out: Path, df: pd.DataFrame) -> list[Path]:
    paths: list[Path] = []
    syn = df[df.workload.str.startswith("synthetic")]
    names = list(dict.fromkeys(df.allocator))
    colors = color_for(names)
    with house_style():
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for a in names:
            s = syn[syn.allocator == a].sort_values("threads")
            axes[0].plot(s.threads, s.mean_cycles, marker="o", color=colors[a], label=a)
            axes[1].plot(s.threads, s.std_cycles, marker="o", color=colors[a], label=a)
        for ax, lab in zip(axes, ("mean allocation response (cycles)", "standard deviation (cycles)"), strict=True):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("threads")
            ax.set_ylabel(lab)
        axes[0].legend()
        fig.suptitle("Synthetic kernel-compile stream (model cycles)")
        paths += save_figure(fig, out, "fig_response_vs_threads")

        fig, ax = plt.subplots()
        wl = df.groupby(["workload", "allocator"]).alloc_count_cov.mean().unstack("allocator")
        wl[names].plot.bar(ax=ax, color=[colors[n] for n in names])
        ax.set_ylabel("CV of per-frame allocation counts (lower = fairer)")
        ax.set_title("Wear fairness")
        ax.tick_params(axis="x", rotation=0)
        paths += save_figure(fig, out, "fig_wear_fairness")
    return paths


def _run(out: Path, quick: bool = True, workers: int | None = None) -> StudyResult:
    points = build_points(quick)
    res = run_points(points, out, workers=workers, label="allocators")
    df = res.results
    keep = [
        c
        for c in [
            "workload",
            "allocator",
            "name",
            "batch",
            "policy",
            "threads",
            "frames",
            "requests",
            "failures",
            "mean_cycles",
            "std_cycles",
            "p50_cycles",
            "p99_cycles",
            "p999_cycles",
            "alloc_count_max_over_mean",
            "alloc_count_cov",
            "source",
        ]
        if c in df.columns
    ]
    df = df[keep].reset_index(drop=True)
    syn = df[df.workload.str.startswith("synthetic")].set_index(["threads", "allocator"]).mean_cycles
    improvement = {}
    for t in sorted({i[0] for i in syn.index}):
        a, b = syn.get((t, "lazy-ibuddy(batch=1,spaces=4)")), syn.get((t, "lazy-buddy(batch=31,high=186)"))
        if a is not None and b is not None and a > 0:
            improvement[str(t)] = float(b / a)
    return StudyResult(
        name="allocators",
        results=df,
        tables={},
        comparison=comparison_frame([]),
        summary={"seed": 1, "points": len(points), "lazy_ibuddy_b1_speedup_over_lazy_buddy_b31": improvement},
        figures=figures(out, df),
    )


STUDY = register(Study("allocators", "Buddy, lazy buddy, iBuddy: response time, fairness, wear", _run))
