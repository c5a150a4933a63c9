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


# Two bench runs of one machine and build whose gauges differ by more than this (compute
# or memory median, faster over slower, minus one) ran at different host speeds: the
# benchmarks' ratios then hold the host's change too. The Zen 4 and Zen 5 EPYC machines,
# both `AMD EPYC`, read 700–733 against 841–901 M steps/s (docs/performance.md).
GAUGE_DIFFERS = 0.1
# The host fields whose difference makes two runs' rates compare machines, not builds.
HOST_FIELDS = (("cpu_model", "processor"), ("cpu_id", "processor generation"), ("logical_cpus", "logical CPUs"))


def _key(r: dict[str, Any]) -> tuple[str, str]:
    return (str(r.get("module")), str(r.get("case")))


def compare(now: list[dict[str, Any]], baseline: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Each benchmark of `now` against the same (module, case) of `baseline` (both lists as
    `hmsim bench --json` writes them): rows with `ratio` (rate now over rate then),
    `overlap` (whether the two runs' slowest–fastest pass ranges overlap: a ratio inside
    the passes' own spread is not a measured change) and `note` (why there is no ratio);
    and the warnings that say when the two runs compare machines rather than builds: another
    processor or generation, another build, a host-speed gauge that moved by more than
    `GAUGE_DIFFERS`, another `--scale`."""
    then = {_key(r): r for r in baseline}
    rows: list[dict[str, Any]] = []
    counts_differ = 0
    for r in now:
        b = then.pop(_key(r), None)
        row: dict[str, Any] = {"module": r["module"], "case": r["case"], "ratio": None, "overlap": None, "note": ""}
        if b is None:
            row["note"] = "not in the baseline"
        elif b.get("count") != r.get("count"):
            counts_differ += 1
            row["note"] = f"other work: {r.get('count')} {r.get('unit', '')} against {b.get('count')} (--scale?)"
        elif not b.get("per_wall_second"):
            row["note"] = "the baseline has no rate"
        else:
            row["ratio"] = r["per_wall_second"] / b["per_wall_second"]
            lo, hi = (
                r.get("per_wall_second_min", r["per_wall_second"]),
                r.get("per_wall_second_max", r["per_wall_second"]),
            )
            blo = b.get("per_wall_second_min", b["per_wall_second"])
            bhi = b.get("per_wall_second_max", b["per_wall_second"])
            # A run of one pass has no spread to tell a change from the host's drift.
            single = r.get("repeats", 1) < 2 or b.get("repeats", 1) < 2
            row["overlap"] = None if single else (lo <= bhi and blo <= hi)
        rows.append(row)
    rows += [
        {"module": b["module"], "case": b["case"], "ratio": None, "overlap": None, "note": "not run now"}
        for b in then.values()
    ]
    warnings = _host_warnings(now, baseline)
    if counts_differ:
        warnings.append(f"{counts_differ} benchmark(s) did other work than the baseline's (another --scale): no ratio")
    if now and not any(r["ratio"] is not None or r["note"].startswith("other work") for r in rows):
        warnings.append("no benchmark of this run is in the baseline (another --module or --scale?): nothing compared")
    return rows, warnings


def _host_warnings(now: list[dict[str, Any]], baseline: list[dict[str, Any]]) -> list[str]:
    """Why the two runs may compare machines, builds or host speeds rather than builds alone."""
    warnings = []
    h_now = (now[0].get("host") if now else None) or {}
    h_then = (baseline[0].get("host") if baseline else None) or {}
    differ = [
        f"{label} {h_then.get(k, 'unrecorded')!s} → {h_now.get(k, 'unrecorded')!s}"
        for k, label in HOST_FIELDS
        if h_then.get(k) != h_now.get(k)
    ]
    if differ:
        warnings.append(
            f"the baseline ran on another machine ({'; '.join(differ)}): the ratios compare the machines "
            "as much as the builds"
        )
    b_now, b_then = h_now.get("build", "unrecorded"), h_then.get("build", "unrecorded")
    if b_now != b_then:
        warnings.append(
            f"the baseline's core was built {b_then}, this one {b_now}: a profile-guided build moves the rates "
            "by about a tenth"
        )
    g_now = (now[0].get("host_gauge") if now else None) or {}
    g_then = (baseline[0].get("host_gauge") if baseline else None) or {}
    moved = []
    for name in GAUGES:
        a, b = g_now.get(name), g_then.get(name)
        if a and b and max(a, b) / min(a, b) - 1 > GAUGE_DIFFERS:
            moved.append(f"{name.split('_')[0]} {b:.1f} → {a:.1f}")
    if moved:
        warnings.append(
            f"the host-speed gauge differs from the baseline's ({', '.join(moved)}, medians): the host ran at another "
            "speed, so the ratios hold that change too; compare runs whose gauges agree"
        )
    elif not (g_now and g_then):
        warnings.append("a run without host-speed gauge readings: whether the host ran at the same speed is unknown")
    return warnings


def ratio_text(row: dict[str, Any]) -> str:
    """One benchmark's comparison in words: `1.23× (outside both runs' pass spread)`."""
    if row["ratio"] is None:
        return row["note"]
    if row["overlap"] is None:
        spread = "a run of one pass has no spread: run both with --repeat 3"
    elif row["overlap"]:
        spread = "within the passes' spread"
    else:
        spread = "outside both runs' pass spread"
    return f"{row['ratio']:.3f}× the baseline ({spread})"


def load_baseline(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """A baseline written by `hmsim bench --json`: a list of benchmarks, each with `module`,
    `case`, `count` and `per_wall_second`. Anything else is one error naming the file and
    the entry (exit 2 from the CLI)."""
    import json
    from pathlib import Path

    from hmsim.errors import ConfigError, read_text

    p = Path(path)
    text = read_text(p, "bench baseline (hmsim bench --json)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(
            str(p), f"not JSON: {e.msg}; expected what `hmsim bench --json` writes", line=e.lineno
        ) from None
    if not isinstance(data, list) or not data:
        raise ConfigError(str(p), "expected a non-empty list of benchmarks, as `hmsim bench --json` writes")
    for i, r in enumerate(data):
        if not isinstance(r, dict):
            raise ConfigError(str(p), f"expected an object, got {type(r).__name__}", key=f"[{i}]")
        for k, kinds, what in (
            ("module", str, "text"),
            ("case", str, "text"),
            ("count", int, "an integer"),
            ("per_wall_second", int | float, "a number"),
        ):
            if not isinstance(r.get(k), kinds) or isinstance(r.get(k), bool):
                raise ConfigError(str(p), f"expected {what}, as `hmsim bench --json` writes", key=f"[{i}].{k}")
    return data
