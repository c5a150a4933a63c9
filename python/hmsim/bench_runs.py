"""Repeated `hmsim bench` passes, summarised per benchmark.

One pass of a benchmark is one wall-clock sample on a machine whose speed drifts (other
jobs, frequency, a cold first run): a number to record needs several. `hmsim bench --repeat
N` runs every benchmark of the selection N times, passes interleaved (benchmark 1, 2, …,
then 1, 2, … again), so a slow spell of the machine spreads over all of them instead of
landing on one. Each benchmark reports the median wall time (its rate is the count over
that median) with the fastest and slowest pass.

The host's own speed drifts too, with no sign in the load average (a virtual machine's
processor is shared below it): the host-speed gauge (`hmsim::host_gauge`, a fixed compute
chain and a fixed chain of dependent reads) is timed before every pass and after the last,
and reported beside the benchmarks, so a slow pass shows whether the host was slow then.
"""

from __future__ import annotations

import os
import statistics
from typing import Any


def combine(passes: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One result per benchmark from `passes` (each the list one bench pass returns, the
    same benchmarks in the same order): `wall_s` the median, `per_wall_second` the count
    over it, `wall_s_runs` every pass's time, `per_wall_second_min`/`_max` the slowest and
    fastest pass's rate. A single pass is returned with the same keys."""
    if not passes:
        return []
    first = passes[0]
    for p in passes[1:]:
        if [(r["module"], r["case"]) for r in p] != [(r["module"], r["case"]) for r in first]:
            raise ValueError("bench passes ran different benchmarks")
    out = []
    for i, r in enumerate(first):
        walls = [p[i]["wall_s"] for p in passes]
        median = statistics.median(walls)
        count = r["count"]
        out.append(
            {
                **r,
                "wall_s": median,
                "per_wall_second": count / median if median > 0 else float("inf"),
                "repeats": len(walls),
                "wall_s_runs": walls,
                "per_wall_second_min": count / max(walls) if max(walls) > 0 else float("inf"),
                "per_wall_second_max": count / min(walls) if min(walls) > 0 else float("inf"),
            }
        )
    return out


GAUGES = ("compute_m_per_s", "memory_m_per_s")
# A gauge whose readings in one run differ by more than this (fastest over slowest, minus
# one) says the host's speed moved during the run. Idle, within minutes, the readings of
# the Intel Xeon host spread by up to 12 % (compute) and 28 % (memory).
GAUGE_MOVED = 0.3


def gauge_summary(gauges: list[dict[str, float]]) -> dict[str, Any]:
    """The host-speed gauges of a bench run in one record: per gauge its median (`NAME`)
    and every reading in order (`NAME_runs`)."""
    if not gauges:
        return {}
    out: dict[str, Any] = {}
    for name in GAUGES:
        runs = [g[name] for g in gauges]
        out[name] = statistics.median(runs)
        out[f"{name}_runs"] = runs
    return out


def gauge_range_text(g: dict[str, Any]) -> str:
    """One line: the gauges' medians with their ranges (empty without gauges)."""
    if not g:
        return ""

    def one(name: str, unit: str) -> str:
        runs = g[f"{name}_runs"]
        return f"{g[name]:.1f} M {unit}/s [{min(runs):.1f}–{max(runs):.1f}]"

    n = len(g["compute_m_per_s_runs"])
    compute, memory = one("compute_m_per_s", "steps"), one("memory_m_per_s", "dependent reads")
    return f"host speed gauge (median of {n} readings [range]): compute {compute}, memory {memory}"


def gauge_moved(g: dict[str, Any]) -> str:
    """A warning when a gauge's readings spread by more than `GAUGE_MOVED` (empty if not):
    the passes' own spread may then be the host's."""
    moved = []
    for name in GAUGES:
        runs = g.get(f"{name}_runs") or []
        if runs and min(runs) > 0 and max(runs) / min(runs) - 1 > GAUGE_MOVED:
            moved.append(f"{name.split('_')[0]} {100 * (max(runs) / min(runs) - 1):.0f} %")
    if not moved:
        return ""
    return (
        f"warning: the host's speed moved during this run (gauge spread: {', '.join(moved)}); "
        "compare the passes with care, or run again"
    )


def load_average() -> float | None:
    """The 1-minute load average (None where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None
