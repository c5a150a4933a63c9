"""Replicates: each point of a sweep run at several seeds, and how far its numbers move.

A run is deterministic in its seed, and its seed is one draw of its random streams (arrival
times, keys, sampled pages, placements). A difference between two points smaller than what
another seed moves either of them by is not a finding. `replicates = N` in a sweep file (or
`hmsim.sweep(..., replicates=N)`) runs every point at the seeds s, s + 1, …, s + N − 1 (s: the
scenario's seed; the streams of consecutive seeds are independent, `rng.rs` hashes them), and
summarises what the seed moves:

- `replicates.csv`: per point and row, per numeric column, the replicates' mean, standard
  deviation and Student-t 95 % confidence interval of the mean;
- `replicates_order.csv`: per point, for each pair of its rows (the policies of a tiering
  point, the allocators of an allocators point) and each headline metric, in how many seeds
  each is the higher: rows of one run share its seed (common random numbers), so their
  order is the paired comparison, sharper than two intervals;
- warnings for a headline metric whose interval exceeds `CI_WARN_REL` of its mean, and for
  rows whose order changes with the seed (docs/configuration.md#replicates).

A study's grid at several seeds (`hmsim reproduce STUDY --replicates N`) is summarised by
`compare_seeds` (its comparison with the published numbers: does a verdict depend on the
seed) and `tables_across_seeds` (its tables: does a value's sign).
"""

from __future__ import annotations

import functools
import itertools
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from hmsim.errors import ConfigError

#: The most replicates a sweep runs (each is a run of every point).
MAX_REPLICATES = 1000
#: A headline metric's 95 % interval, as a share of its mean, above which a run says so.
CI_WARN_REL = 0.05
#: Two rows closer than this share of the larger are equal in that seed: their order is
#: not a finding either way.
TIE_REL = 1e-4
#: The column that holds a replicate's seed.
SEED = "seed"

# Student's t, 97.5 % quantile, for 1 … 30 degrees of freedom (two-sided 95 %).
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_Z975 = 1.959964


def t975(df: int) -> float:
    """Student's t 97.5 % quantile for `df` ≥ 1 degrees of freedom: the table to 30, then the
    Cornish-Fisher expansion about the normal quantile (within 0.001 of the exact value)."""
    if df < 1:
        raise ValueError(f"{df} degrees of freedom")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def count(value: Any, where: str) -> int:
    """The `replicates` key checked: an integer 1 … MAX_REPLICATES (1: each point once)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPLICATES:
        raise ConfigError(
            where,
            f"expected an integer 1 … {MAX_REPLICATES} (runs per point, one seed each), got {value!r:.60}",
            key="replicates",
        )
    return value


@functools.cache
def scenario_seed(text: str) -> Any:
    """The `seed` a scenario's TOML `text` gives (0 if none), as written."""
    return tomllib.loads(text).get(SEED, 0)


def seeds(text: str, fixed: Mapping[str, Any], axes: Mapping[str, Any], n: int, where: str) -> list[int]:
    """The replicates' seeds: the scenario's seed (`[set]`'s if it sets one, else the scenario
    file's, else 0) and the n − 1 after it."""
    if SEED in axes:
        raise ConfigError(where, "replicates and a seed axis both choose seeds: keep one", key="replicates")
    base = fixed.get(SEED, scenario_seed(text))
    if isinstance(base, bool) or not isinstance(base, int) or base < 0:
        raise ConfigError(
            where,
            f"replicates start at the scenario's seed, which must be an integer ≥ 0, got {base!r:.60}",
            key="seed",
        )
    return [base + i for i in range(n)]


def with_seeds(text: str, fixed: Any, axes: Any, n: int, where: str) -> tuple[Any, Any]:
    """`axes` with the replicates' seed axis last and `fixed` without its seed, which the
    axis starts at (n > 1), else both as given; a malformed `axes` or `fixed` is left for the
    grid's checks to name."""
    if n == 1:
        return axes, fixed
    axes = {} if axes is None else axes
    if not isinstance(axes, Mapping) or not isinstance(fixed, Mapping):
        return axes, fixed
    grid = {**axes, SEED: seeds(text, fixed, axes, n, where)}
    return grid, {k: v for k, v in fixed.items() if k != SEED}


@dataclass
class Summary:
    """What the seed moves: the two tables, summary.json's block, and the warnings."""

    table: pd.DataFrame
    order: pd.DataFrame
    info: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def _row_names(rows: pd.DataFrame, labels: Sequence[str]) -> list[str]:
    """Each row of a point by the label columns that tell its rows apart, else its place."""
    varying = [c for c in labels if rows[c].nunique(dropna=False) > 1]
    if not varying:
        return [f"row {i + 1}" for i in range(len(rows))]
    return [", ".join(f"{c}={rows[c].iloc[i]}" for c in varying) for i in range(len(rows))]


def _point_name(axes: Sequence[str], key: tuple) -> str:
    return ", ".join(f"{a}={v}" for a, v in zip(axes, key, strict=True))


def summarize(
    results: pd.DataFrame,
    axes: Sequence[str],
    metrics: Sequence[str],
    labels: Sequence[str],
    host_timed: frozenset[str] = frozenset(),
) -> Summary | None:
    """The replicates of `results` (a sweep's rows with a `seed` column; `axes` the other
    axes, `metrics` the module's headline columns, `labels` the row label columns it may
    have, `host_timed` the columns timed on the host: summarised and marked, not warned
    about, since they move whatever the seed). None if there is one seed."""
    if SEED not in results.columns or results[SEED].nunique() < 2:
        return None
    axes = [a for a in axes if a != SEED]
    labels = [c for c in labels if c in results.columns and c not in axes and c != SEED]
    frame = results.copy()
    frame["_row"] = frame.groupby([*axes, SEED], sort=False, dropna=False).cumcount()
    skip = {*axes, SEED, "_row", *labels}
    numeric = [c for c in frame.columns if c not in skip and frame[c].dtype.kind in "fiu"]
    n_seeds = int(frame[SEED].nunique())
    stats: list[dict] = []
    order: list[dict] = []
    warnings: list[str] = []
    widest: dict[str, tuple[float, str]] = {}
    unsettled: dict[str, list[str]] = {}
    groups = frame.groupby(axes, sort=False, dropna=False) if axes else [((), frame)]
    for key, point in groups:
        key = key if isinstance(key, tuple) else (key,)
        at = dict(zip(axes, key, strict=True))
        where = _point_name(axes, key)
        by_seed = point.groupby(SEED, sort=True)
        shapes = {len(g) for _, g in by_seed}
        if len(shapes) > 1:
            warnings.append(
                f"replicates{' at ' + where if where else ''}: the seeds gave {sorted(shapes)} rows; not summarised"
            )
            continue
        first = next(iter(by_seed))[1]
        names = _row_names(first, labels)
        for r, name in enumerate(names):
            reps = point[point["_row"] == r]
            base = {**at, **{c: first[c].iloc[r] for c in labels}, "row": name}
            for m in numeric:
                v = _finite(reps[m])
                if len(v) == 0:
                    continue
                d = describe(v)
                rel = d["ci95_rel"]
                stats.append({**base, "metric": m, **d, "host_timed": m in host_timed})
                if m in host_timed:
                    continue
                if m in metrics and math.isfinite(rel) and rel > widest.get(m, (-1.0, ""))[0]:
                    widest[m] = (rel, ", ".join(p for p in (where, name if len(names) > 1 else "") if p))
        for m in metrics:
            if m not in point.columns or len(names) < 2 or m in host_timed:
                continue
            table = np.array([g[m].to_numpy(dtype=float) for _, g in by_seed])  # seeds × rows
            for i, j in itertools.combinations(range(len(names)), 2):
                d = table[:, i] - table[:, j]
                scale = np.maximum(np.abs(table[:, i]), np.abs(table[:, j]))
                ok = np.isfinite(d)
                d, scale = d[ok], scale[ok]
                # Rows within TIE_REL of each other are equal in that seed (a tie, not an order).
                apart = np.abs(d) > TIE_REL * scale
                higher, lower = int(((d > 0) & apart).sum()), int(((d < 0) & apart).sum())
                settled = not (higher and lower)
                order.append(
                    {
                        **at,
                        "metric": m,
                        "row_a": names[i],
                        "row_b": names[j],
                        "a_higher_seeds": higher,
                        "b_higher_seeds": lower,
                        "equal_seeds": len(d) - higher - lower,
                        "settled": settled,
                    }
                )
                if not settled:
                    at_point = f" (at {where})" if where else ""
                    # How far apart they are, relative to the second row, over the seeds.
                    base_j = np.abs(table[:, j])
                    with np.errstate(all="ignore"):
                        gap = (table[:, i] - table[:, j]) / np.where(base_j > 0, base_j, np.nan)
                    size = f", by {np.nanmin(gap):+.2%} … {np.nanmax(gap):+.2%}" if np.isfinite(gap).any() else ""
                    unsettled.setdefault(m, []).append(
                        f"{names[i]} is above {names[j]} in {higher} of {len(d)} seeds and below in {lower}"
                        f"{size}{at_point}"
                    )
    for m, (rel, where) in widest.items():
        if rel > CI_WARN_REL:
            at = f" (at {where})" if where else ""
            warnings.append(
                f"replicates: {m}'s 95 % confidence interval over {n_seeds} seeds reaches ±{rel:.1%} of its mean"
                f"{at}: differences smaller than that are the seed's, not the configuration's; "
                f"more replicates narrow it as 1/√n (replicates.csv)"
            )
    for m, pairs in unsettled.items():
        more = f"; {len(pairs) - 1} more such pairs in replicates_order.csv" if len(pairs) > 1 else ""
        warnings.append(f"replicates: the order of rows by {m} changes with the seed: {pairs[0]}{more}")
    info = {
        "count": n_seeds,
        "seeds": sorted(int(s) for s in frame[SEED].unique()),
        "ci95_rel_max": {m: round(rel, 6) for m, (rel, _) in widest.items()},
        "order_pairs": len(order),
        "order_unsettled": sum(len(p) for p in unsettled.values()),
    }
    return Summary(pd.DataFrame(stats), pd.DataFrame(order), info, warnings)


def _finite(values: pd.Series) -> np.ndarray:
    v = values.to_numpy(dtype=float)
    return v[np.isfinite(v)]


def interval(v: np.ndarray) -> tuple[float, float, float]:
    """Mean, standard deviation and the half-width of the Student-t 95 % interval of the mean
    of `v` (≥ 1 value; one value: deviation 0, half-width NaN)."""
    mean = float(v.mean())
    if len(v) < 2:
        return mean, 0.0, math.nan
    std = float(v.std(ddof=1))
    return mean, std, t975(len(v) - 1) * std / math.sqrt(len(v))


def describe(v: np.ndarray) -> dict[str, float]:
    """The replicates `v` (≥ 1 finite value) as the tables' columns: their count, mean,
    deviation, range and 95 % interval of the mean (`ci95_rel`: its half-width over the
    mean; 0 if nothing moves, infinite for a mean of 0 that moves)."""
    mean, std, half = interval(v)
    rel = half / abs(mean) if mean != 0 else (0.0 if half == 0 else math.inf)
    return {
        "replicates": len(v),
        "mean": mean,
        "std": std,
        "min": float(v.min()),
        "max": float(v.max()),
        "ci95_low": mean - half,
        "ci95_high": mean + half,
        "ci95_rel": rel,
    }


def band(values: pd.Series) -> tuple[float, float, float]:
    """Mean and 95 % interval (low, high) of one x's replicates (the sweep figure's band)."""
    v = _finite(values)
    if len(v) == 0:
        return math.nan, math.nan, math.nan
    mean, _, half = interval(v)
    half = 0.0 if math.isnan(half) else half
    return mean, mean - half, mean + half


def compare_seeds(comparisons: Sequence[pd.DataFrame], seeds: Sequence[int]) -> Summary | None:
    """A study's comparison with the published numbers (`comparison.csv`), made once per
    seed in `seeds`: per compared number, the simulated value's mean, deviation and 95 %
    interval over the seeds, its ratio's range, and in how many seeds it lands within 10 %
    and 25 % of the published number; warnings for a validation or calibration number whose
    interval exceeds `CI_WARN_REL` of its mean or whose within-10 % verdict depends on the
    seed. None with fewer than two comparisons."""
    if len(comparisons) < 2 or any(c.empty for c in comparisons):
        return None
    metrics = [tuple(c["metric"]) for c in comparisons]
    warnings: list[str] = []
    if len(set(metrics)) > 1:
        return Summary(
            pd.DataFrame(), pd.DataFrame(), {}, ["replicates: the seeds compared different numbers; not summarised"]
        )
    rows: list[dict] = []
    widest = (0.0, "")
    for i, metric in enumerate(metrics[0]):
        sim = np.array([float(c["simulated"].iloc[i]) for c in comparisons])
        ratio = np.array([float(c["ratio"].iloc[i]) for c in comparisons])
        first = comparisons[0].iloc[i]
        finite = sim[np.isfinite(sim)]
        d = describe(finite) if len(finite) else {"mean": math.nan, "ci95_rel": 0.0}
        mean, rel = d["mean"], d["ci95_rel"] if math.isfinite(d["ci95_rel"]) else 0.0
        half = rel * abs(mean)
        within10 = int(sum(bool(c["within_10pct"].iloc[i]) for c in comparisons))
        within25 = int(sum(bool(c["within_25pct"].iloc[i]) for c in comparisons))
        rows.append(
            {
                "metric": metric,
                "role": first["role"],
                "unit": first.get("unit", ""),
                "published": float(first["published"]),
                **{f"simulated_{k}" if k in ("mean", "std", "min", "max") else k: v for k, v in d.items()},
                "ratio_min": float(np.nanmin(ratio)),
                "ratio_max": float(np.nanmax(ratio)),
                "within_10pct_seeds": within10,
                "within_25pct_seeds": within25,
            }
        )
        if first["role"] == "input":
            continue
        if rel > widest[0]:
            widest = (rel, metric)
        if rel > CI_WARN_REL:
            warnings.append(
                f"replicates: {metric} moves with the seed: {mean:.4g} ± {half:.3g} (95 %, {len(sim)} seeds), "
                f"ratio {np.nanmin(ratio):.3f}–{np.nanmax(ratio):.3f} to the published {float(first['published']):.4g}"
            )
        if 0 < within10 < len(sim):
            warnings.append(
                f"replicates: {metric} is within 10 % of the published number in {within10} of {len(sim)} seeds "
                f"(ratio {np.nanmin(ratio):.3f}–{np.nanmax(ratio):.3f}): that agreement is the seed's"
            )
    compared = [r for r in rows if r["role"] != "input"]
    info = {
        "count": len(comparisons),
        "seeds": list(seeds),
        "ci95_rel_max": round(widest[0], 6),
        "ci95_rel_max_metric": widest[1],
        "compared": len(compared),
        "verdict_changes": sum(0 < r["within_10pct_seeds"] < len(comparisons) for r in compared),
    }
    return Summary(pd.DataFrame(rows), pd.DataFrame(), info, warnings)


def _row_labels(first: pd.DataFrame, constant: list[str]) -> list[str]:
    """Names for a table's rows: its text columns, with as many of its columns the seed does
    not move as it takes to tell the rows apart (else each row's place)."""
    text = [c for c in first.columns if first[c].dtype.kind not in "fiub"]
    cols = list(text)
    for c in [None, *constant]:
        if c is not None:
            cols.append(c)
        if cols and not first[cols].duplicated().any():
            return [", ".join(f"{k}={first[k].iloc[i]}" for k in cols) for i in range(len(first))]
    return [f"row {i + 1}" for i in range(len(first))]


def tables_across_seeds(
    per_seed: Sequence[Mapping[str, pd.DataFrame]],
    warn: Sequence[str],
    host_timed: Mapping[str, frozenset[str]] = {},
) -> Summary | None:
    """A study's tables (its results and the CSV tables it writes), once per seed: per table,
    row and column the seed moves, the mean, deviation, range and 95 % interval, and whether
    the value's sign changes with the seed (`sign_changes`: an improvement that is a gain in
    one seed and a loss in another is not a finding). Warnings for sign changes in the
    tables named in `warn`, except in the columns `host_timed` names per table (timed on the
    host, not simulated: they move from run to run whatever the seed; `host_timed` marks
    them). Tables whose shape or columns differ between seeds are skipped."""
    if len(per_seed) < 2:
        return None
    rows: list[dict] = []
    flips: dict[str, list[str]] = {}
    for name in per_seed[0]:
        frames = [t.get(name) for t in per_seed]
        if any(f is None or f.shape != frames[0].shape or list(f.columns) != list(frames[0].columns) for f in frames):
            continue
        first = frames[0].reset_index(drop=True)
        numeric = [c for c in first.columns if first[c].dtype.kind in "fiu"]
        stack = {c: np.array([f[c].to_numpy(dtype=float) for f in frames]) for c in numeric}  # seeds × rows
        same = {c: bool(np.array_equal(s, s[:1].repeat(len(s), 0), equal_nan=True)) for c, s in stack.items()}
        names = _row_labels(first, [c for c in numeric if same[c]])
        for c in (c for c in numeric if not same[c]):
            for i, row in enumerate(names):
                v = stack[c][:, i]
                v = v[np.isfinite(v)]
                if len(v) == 0:
                    continue
                flip = bool((v > 0).any() and (v < 0).any())
                timed = c in host_timed.get(name, ())
                rows.append(
                    {"table": name, "row": row, "column": c, **describe(v), "sign_changes": flip, "host_timed": timed}
                )
                if flip and name in warn and not timed:
                    flips.setdefault(name, []).append(f"{c} at {row} ({v.min():.3g} … {v.max():.3g})")
    warnings = [
        f"replicates: in {name}, {len(cells)} value(s) change sign with the seed, so their sign is not a finding: "
        + "; ".join(cells[:3])
        + ("; …" if len(cells) > 3 else "")
        + " (tables_replicates.csv)"
        for name, cells in flips.items()
    ]
    info = {"sign_changes": {name: len(cells) for name, cells in flips.items()}}
    return Summary(pd.DataFrame(rows), pd.DataFrame(), info, warnings)
