"""Repeated `hmsim bench` passes, summarised per benchmark.

One pass of a benchmark is one wall-clock sample on a machine whose speed drifts (other
jobs, frequency, a cold first run): a number to record needs several. `hmsim bench --repeat
N` runs every benchmark of the selection N times, passes interleaved (benchmark 1, 2, …,
then 1, 2, … again), so a slow spell of the machine spreads over all of them instead of
landing on one. Each benchmark reports the median wall time (its rate is the count over
that median) with the fastest and slowest pass.
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


def load_average() -> float | None:
    """The 1-minute load average (None where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None
