"""Study `hybrid`: a DRAM-cached flash memory device (UMD) with host-cooperative internal
page faults (EPF), after Han & Shin (spec 07-hybrid.md §4).

Runtime per EPF policy (no_EPF, all_EPF, smart_EPF at 50 µs) at the study's two DRAM sizes,
internal faults as a share of UMD accesses, EPFs as a share of internal faults, sweeps over
the DRAM size and the smart threshold, and the service-time distribution of internal
faults. Workloads: the pigz-like generator (the study's 45 MB input; `--quick` uses 8 MB and
scales the DRAM sizes by the same factor) and the committed lackey trace of `pigz -d`
replayed by 5 processes, with DRAM sized at the same fractions of its footprint.

The spec gives no published runtimes, only qualitative outcomes; the summary states them
beside what the model produced (`qualitative`), and the comparison table stays empty.
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from hmsim.plotting import color_for, house_style, save_figure
from hmsim.scenario import _toml_value
from hmsim.studies.base import Study, StudyResult, comparison_frame, register
from hmsim.sweep import Point, run_points

STUDY_INPUT_MB = 45.0
STUDY_DRAM_MB = (100.0, 150.0)
POLICIES = ("no_EPF", "all_EPF", "smart_EPF")
TRACE = "pigz-d.pages.hmt"
TRACE_PROCESSES = 5
THRESHOLDS_US = (0.0, 10.0, 25.0, 50.0, 100.0, 200.0, 250.0, 500.0, 1000.0, 5000.0, math.inf)
COLUMNS = [
    "sweep",
    "workload",
    "policy",
    "label",
    "threshold_us",
    "dram_mb",
    "input_mb",
    "footprint_mb",
    "threads",
    "runtime_s",
    "umd_accesses",
    "internal_faults",
    "internal_fault_share",
    "epf_raised",
    "epf_share",
    "stall_s",
    "idle_s",
    "context_switches",
    "gc_runs",
    "flash_waf",
    "service_p50_us",
    "service_p99_us",
    "service_over_estimate_share",
]


def _base() -> tuple[str, str]:
    f = resources.files("hmsim.studies").joinpath("scenarios/hybrid.toml")
    return f.read_text(), str(f)


def _trace_dir() -> Path:
    # Package data (a link to crates/hmsim/tests/data/traces in the source tree, the files
    # themselves in a wheel), so an installed hmsim finds them too.
    return Path(str(resources.files("hmsim.studies").joinpath("traces")))


def _policies_text(thresholds: tuple[float, ...] | None = None) -> str:
    """[[policies]] blocks: the three policies, or smart_EPF at each threshold."""
    if thresholds is None:
        blocks = [f'[[policies]]\nname = "{p}"\n' for p in POLICIES]
    else:
        blocks = [f'[[policies]]\nname = "smart_EPF"\nthreshold_us = {_toml_value(t)}\n' for t in thresholds]
    return "\n" + "\n".join(blocks)


def input_mb(quick: bool) -> float:
    return 8.0 if quick else STUDY_INPUT_MB


def _dram_fractions(quick: bool) -> list[float]:
    """DRAM sizes of the sweep as multiples of the study's 100 MB (for a 45 MB input)."""
    return [0.6, 0.8, 1.0, 1.25, 1.5, 2.0] if quick else [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.4, 1.5, 1.75, 2.0]


def build_points(quick: bool) -> list[Point]:
    base, file = _base()
    inp = input_mb(quick)
    scale = inp / STUDY_INPUT_MB
    pts: list[Point] = []

    def point(text: str, sweep: str, dram_mb: float, extra: tuple[tuple[str, str], ...] = ()) -> Point:
        ov = (("device.dram_mb", _toml_value(round(dram_mb, 3))), *extra)
        return Point(text=text, file=file, overrides=ov, labels=(("sweep", sweep),))

    syn = (("workload.pigz.input_mb", _toml_value(inp)),)
    three = base + _policies_text()
    for d in STUDY_DRAM_MB:
        pts.append(point(three, "main", d * scale, syn))
    for f in _dram_fractions(quick):
        pts.append(point(three, "dram", STUDY_DRAM_MB[0] * f * scale, syn))
    pts.append(point(base + _policies_text(THRESHOLDS_US), "threshold", STUDY_DRAM_MB[0] * scale, syn))

    trace = _trace_dir() / TRACE
    if trace.is_file():  # a source checkout holds the committed trace
        # Footprint of 5 processes replaying it: its distinct data pages plus 8 code pages each.
        from hmsim.trace import info

        pages = info(trace)["distinct_pages_4k"] + 8
        footprint_mb = TRACE_PROCESSES * pages * 4096 / 2**20
        syn_footprint_mb = _synthetic_footprint_mb(STUDY_INPUT_MB)
        tr = base.replace("[workload.pigz]\ninput_mb = 45\n", "")
        tr_ov = (
            ("workload.trace", _toml_value(str(trace))),
            ("workload.threads", _toml_value(TRACE_PROCESSES)),
        )
        for d in STUDY_DRAM_MB:
            # The same DRAM/footprint fraction as the study's size has for the 45 MB input.
            pts.append(point(tr + _policies_text(), "trace", footprint_mb * d / syn_footprint_mb, tr_ov))
        pts.append(
            point(
                tr + _policies_text(THRESHOLDS_US),
                "trace-threshold",
                footprint_mb * STUDY_DRAM_MB[0] / syn_footprint_mb,
                tr_ov,
            )
        )
    return pts


def _synthetic_footprint_mb(inp: float, ratio: float = 2.0, threads: int = 5, hot: int = 4, code: int = 8) -> float:
    """Pages the pigz-like generator touches (as in the Rust generator), in MB."""
    per = math.ceil(inp * 2**20 / 4096 / threads)
    per_thread = hot + per + math.ceil(per * ratio)
    return (threads * per_thread + code) * 4096 / 2**20


def figures(out: Path, df: pd.DataFrame, service: pd.DataFrame) -> list[Path]:
    paths: list[Path] = []
    colors = color_for(list(POLICIES))
    with house_style():
        main = df[df.sweep == "main"]
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, (wl, sub) in zip(axes, [("pigz-like", main), ("pigz -d trace", df[df.sweep == "trace"])], strict=True):
            if sub.empty:
                ax.set_visible(False)
                continue
            piv = sub.pivot_table(index="dram_mb", columns="policy", values="runtime_s")
            piv[[p for p in POLICIES if p in piv]].plot.bar(ax=ax, color=[colors[p] for p in POLICIES if p in piv])
            ax.set_xlabel("UMD DRAM (MB)")
            ax.set_ylabel("runtime (s)")
            ax.set_title(wl)
            ax.tick_params(axis="x", rotation=0)
        paths += save_figure(fig, out, "fig_runtime_by_policy")

        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        sw = df[df.sweep == "dram"]
        for p in POLICIES:
            s = sw[sw.policy == p].sort_values("dram_mb")
            axes[0].plot(s.dram_mb, s.runtime_s, marker="o", color=colors[p], label=p)
        s = sw[sw.policy == "no_EPF"].sort_values("dram_mb")
        axes[1].plot(s.dram_mb, s.internal_fault_share, marker="o", color="0.3")
        axes[0].set_xlabel("UMD DRAM (MB)")
        axes[0].set_ylabel("runtime (s)")
        axes[0].legend()
        axes[1].set_xlabel("UMD DRAM (MB)")
        axes[1].set_ylabel("internal faults / UMD accesses")
        fig.suptitle("DRAM-size sweep (pigz-like)")
        paths += save_figure(fig, out, "fig_dram_sweep")

        fig, ax = plt.subplots()
        for sweep, style in (("threshold", "-o"), ("trace-threshold", "--s")):
            s = df[df.sweep == sweep].sort_values("threshold_us")
            if s.empty:
                continue
            x = s.threshold_us.replace(math.inf, 2 * 5000.0)
            ax.plot(x, s.runtime_s / s.runtime_s.min(), style, label=sweep.replace("threshold", "smart_EPF").strip("-"))
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlabel("smart_EPF threshold (µs; rightmost = ∞ ≡ no_EPF)")
        ax.set_ylabel("runtime / best runtime")
        ax.legend(["pigz-like", "pigz -d trace"][: len(ax.lines)])
        paths += save_figure(fig, out, "fig_threshold_sweep")

        if not service.empty:
            fig, ax = plt.subplots()
            sv = service[service.sweep == "main"]
            for (dram, label), s in sv.groupby(["dram_mb", "label"]):
                s = s.sort_values("service_lo_us")
                tot = s.faults.sum()
                ax.step(s.service_lo_us, s.faults.cumsum() / tot, where="post", label=f"{label}, {dram:g} MB")
            ax.set_xscale("log")
            ax.set_xlabel("internal-fault service time (µs, log2 bins)")
            ax.set_ylabel("cumulative share of internal faults")
            ax.legend(fontsize=7)
            ax.set_title("Service-time distribution (pigz-like)")
            paths += save_figure(fig, out, "fig_service_time")
    return paths


def qualitative(df: pd.DataFrame) -> dict:
    """The spec's qualitative statements beside what the model produced."""
    main = df[df.sweep == "main"].set_index(["dram_mb", "policy"])
    small, large = sorted({d for d, _ in main.index})
    f_small = int(main.loc[(small, "no_EPF"), "internal_faults"])
    f_large = int(main.loc[(large, "no_EPF"), "internal_faults"])
    rt = {f"{d:g}MB/{p}": float(main.loc[(d, p), "runtime_s"]) for d, p in main.index}
    best_small = min(POLICIES, key=lambda p: main.loc[(small, p), "runtime_s"])
    return {
        "small_dram_mb": small,
        "large_dram_mb": large,
        "spec_small_dram": "many long internal faults",
        "model_internal_faults_small": f_small,
        "spec_large_dram": "few long internal faults",
        "model_internal_faults_large": f_large,
        "few_at_large_holds": f_large < f_small / 4,
        "best_policy_small_dram": best_small,
        "runtime_s": rt,
    }


def _run(out: Path, quick: bool = True, workers: int | None = None) -> StudyResult:
    points = build_points(quick)
    res = run_points(points, out, workers=workers, label="hybrid")
    df = res.results
    df = df[[c for c in COLUMNS if c in df.columns]].reset_index(drop=True)
    service = res.tables.get("service", pd.DataFrame())
    inp = input_mb(quick)
    return StudyResult(
        name="hybrid",
        results=df,
        tables={"service": service},
        comparison=comparison_frame([]),
        summary={
            "seed": 1,
            "points": len(points),
            "input_mb": inp,
            "dram_scaling": f"DRAM sizes are the study's 100/150 MB for a 45 MB input times {inp / STUDY_INPUT_MB:g}",
            "qualitative": qualitative(df),
        },
        figures=figures(out, df, service),
    )


STUDY = register(Study("hybrid", "DRAM-cached flash (UMD) with EPF: runtime by policy and DRAM size", _run))
