"""An independent check of the tier engine's steady state (docs/tiering.md, *Independent check*).

A small solver written here from the model's description alone, sharing no code with the
engine: per-tier latencies and GUPS throughput for a given share of the hot set in the default
tier, intensity and alternate-tier latency, and the best share. The engine solves the same
closed loop by damped iteration on latencies; this solver bisects on the application's access
rate instead (Little's law: the reads in flight over all tiers must add up to cores x MLP).
The engine's static placements and its best-case sweep must agree with it within 5 %.
"""

from __future__ import annotations

import itertools
import json
import math

import pytest
import tomli_w

from hmsim import _core
from hmsim.scenario import run_raw

LINE = 64.0
PAGE = 2 << 20
GIB = 1 << 30
WORKING_SET = 72 * GIB
HOT_SET = 24 * GIB
HOT_FRACTION = 0.9
CORES = 15
ANT_CORES_PER_INTENSITY = 5


def _curve(points: list[list[float]], u: float) -> float:
    """Piecewise-linear latency factor; first and last factors hold outside the points."""
    if u <= points[0][0]:
        return points[0][1]
    for (u0, f0), (u1, f1) in itertools.pairwise(points):
        if u <= u1:
            return f0 + (f1 - f0) * (u - u0) / (u1 - u0)
    return points[-1][1]


def _resources(tier: dict, r: float) -> list[tuple[float, list[list[float]], float]]:
    """(saturation GB/s of the tier's traffic, curve, mixed-queueing coefficient) per resource:
    the media with its read/write mix penalty, then each path resource carrying its share."""
    mix = 4.0 * r * (1.0 - r)
    out = [(tier["read_bandwidth_gb_s"] * (1.0 - tier["mix_penalty"] * mix), tier["curve"], tier["queue_coeff"] * mix)]
    for res in tier.get("path", []):
        caps = []
        if res.get("read_gb_s") is not None and r > 0:
            caps.append(res["read_gb_s"] / r)
        if res.get("write_gb_s") is not None and r < 1:
            caps.append(res["write_gb_s"] / (1.0 - r))
        if res.get("total_gb_s") is not None:
            caps.append(res["total_gb_s"])
        out.append((min(caps), res["curve"], 0.0))
    return out


def saturation(tier: dict, r: float) -> float:
    return min(s for s, _, _ in _resources(tier, r))


def latency_at(tier: dict, x: float, r: float) -> float:
    """Loaded latency (ns) at total bandwidth x: the slowest resource's factor."""
    f = 1.0
    for sat, curve, q in _resources(tier, r):
        u = min(x / sat, 1.0)
        extra = q * u * u / (1.0 - u) if u < 1.0 else (math.inf if q > 0 else 0.0)
        f = max(f, _curve(curve, u) + extra)
    return tier["unloaded_latency_ns"] * f


def tier_latency(tier: dict, app_gb_s: float, closed_bytes: float, r: float) -> float:
    """Latency of a tier carrying the application's traffic (app_gb_s, a given rate) and
    closed-loop antagonists holding closed_bytes in flight; inf if the rate cannot be carried."""
    sat = saturation(tier, r)
    if app_gb_s >= sat:
        return math.inf
    if closed_bytes <= 0:
        return latency_at(tier, app_gb_s, r)
    # X = app + closed/L falls as L grows; X <= sat needs L >= l_sat.
    l_sat = closed_bytes / (sat - app_gb_s)
    if l_sat >= latency_at(tier, sat * (1 - 1e-12), r):
        return l_sat  # saturated: all bytes in flight queue at the saturation bandwidth
    lo = max(tier["unloaded_latency_ns"], l_sat)
    hi = 2.0 * lo
    while hi < latency_at(tier, app_gb_s + closed_bytes / hi, r):
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid < latency_at(tier, app_gb_s + closed_bytes / mid, r):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def access_shares(tiers: list[dict], hot_share_default: float) -> list[float]:
    """Share of accesses per tier when `hot_share_default` of the hot set is in the default
    tier and the rest of the default tier holds cold pages (2 MiB pages, first touch order)."""
    pages, hot = WORKING_SET // PAGE, HOT_SET // PAGE
    default_pages = tiers[0]["capacity_bytes"] // PAGE
    hot_d = round(hot_share_default * hot)
    cold_d = default_pages - hot_d
    p_cold = (1 - HOT_FRACTION) / pages
    p_hot = HOT_FRACTION / hot + p_cold
    d = hot_d * p_hot + cold_d * p_cold
    return [d, 1.0 - d]


def solve(tiers: list[dict], shares: list[float], intensity: int, lines: float = 1.0) -> dict:
    """GUPS throughput and per-tier latency: bisection on the access rate so that the reads in
    flight (rate x share x latency, summed over tiers) equal cores x lines in flight per core."""
    mlp, cap, rf = 4.37, 15.5, 0.5  # GUPS MLP, streaming in-flight limit per core, 50/50
    n_reads = CORES * min(mlp * lines, cap)
    ant_bytes = [intensity * ANT_CORES_PER_INTENSITY * cap * LINE / rf, 0.0]

    def lat(rate: float) -> list[float]:
        return [tier_latency(t, rate * s * LINE / rf, w, rf) for t, s, w in zip(tiers, shares, ant_bytes, strict=True)]

    def reads(rate: float) -> float:
        return sum(rate * s * lt for s, lt in zip(shares, lat(rate), strict=True) if s > 0)

    lo, hi = 0.0, 1.0
    while reads(hi) < n_reads:
        hi *= 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if reads(mid) < n_reads:
            lo = mid
        else:
            hi = mid
    rate = 0.5 * (lo + hi)  # line reads per ns
    return {"throughput_gb_s": rate * LINE / rf, "latency_ns": lat(rate)}


def _tiers(alt_ns: float) -> list[dict]:
    tiers = json.loads(_core.tier_reference_tiers())
    tiers[1]["unloaded_latency_ns"] = alt_ns
    return tiers


def _engine(tiers: list[dict], policy: str, intensities: list[int], hot_offset_pages: int = 0) -> list[dict]:
    body = {
        "module": "tiering",
        "seed": 3,
        "tiers": tiers,
        "workload": {"hot_offset_bytes": hot_offset_pages * PAGE},
        "policy": {"names": [policy]},
        "antagonist": {"intensities": intensities},
        "sim": {"duration_s": 0.05, "measure_last_s": 0.02, "timeline": False},
    }
    return run_raw(tomli_w.dumps(body), "<steady-state check>", [], [])["rows"]


SHARES = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


@pytest.mark.parametrize("alt_ns", [135.0, 192.0])
def test_static_placements_agree_with_the_independent_solver(alt_ns):
    tiers = _tiers(alt_ns)
    default_pages = tiers[0]["capacity_bytes"] // PAGE
    hot = HOT_SET // PAGE
    for share in SHARES:
        # First touch fills the default tier from page 0: an offset of default - k hot pages
        # puts k hot pages there.
        offset = default_pages - round(share * hot)
        rows = _engine(tiers, "static-default", [0, 1, 2, 3], offset)
        want_shares = access_shares(tiers, share)
        for row in rows:
            ref = solve(tiers, want_shares, row["intensity"])
            got = row["throughput_gb_s"]
            assert got == pytest.approx(ref["throughput_gb_s"], rel=0.05), (share, row["intensity"])
            assert row["default_latency_ns"] == pytest.approx(ref["latency_ns"][0], rel=0.05)
            assert row["alternate_latency_ns"] == pytest.approx(ref["latency_ns"][1], rel=0.05)


def test_best_case_sweep_agrees_with_the_independent_solver():
    tiers = _tiers(135.0)
    rows = _engine(tiers, "best", [0, 1, 2, 3])
    for row in rows:
        grid = [k / 10 for k in range(11)]
        tput = {s: solve(tiers, access_shares(tiers, s), row["intensity"])["throughput_gb_s"] for s in grid}
        best = max(tput, key=tput.__getitem__)
        assert row["throughput_gb_s"] == pytest.approx(tput[best], rel=0.05), row["intensity"]
        # The engine's chosen share is the solver's or one whose throughput is within 1 %.
        assert tput[row["oracle_hot_share_default"]] >= 0.99 * tput[best]
