"""Durations for people: a lifetime of 0.0004 years reads "3.5 h", a program time of
0.00002 s reads "20 µs". The unit is chosen by magnitude; result files keep their SI
columns (`*_s`, `*_ns`, `*_years`) and only what is printed or drawn uses these."""

from __future__ import annotations

import math
from collections.abc import Iterable

# A Julian year, as the Rust core's lifetimes use (pmem/lifetime.rs, alloc/wear.rs).
SECONDS_PER_YEAR = 365.25 * 24 * 3600

# (name, seconds per unit, the value in seconds from which this unit is chosen)
_UNITS: list[tuple[str, float, float]] = [
    ("ns", 1e-9, 0.0),
    ("µs", 1e-6, 1e-6),
    ("ms", 1e-3, 1e-3),
    ("s", 1.0, 1.0),
    ("min", 60.0, 120.0),
    ("h", 3600.0, 2 * 3600.0),
    ("days", 86400.0, 2 * 86400.0),
    ("years", SECONDS_PER_YEAR, 2 * SECONDS_PER_YEAR),
]

# Unit tokens of result keys that hold a duration, and seconds per unit of each. The short
# ones only count as the key's last token (`stop_time_s`); the long ones also before a
# qualifier (`lifetime_years_no_wl`).
_KEY_UNITS: dict[str, float] = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_KEY_UNITS_ANYWHERE: dict[str, float] = {"hours": 3600.0, "days": 86400.0, "years": SECONDS_PER_YEAR}
# A token before `_s` that makes the key a rate, not a time: `bandwidth_gb_s`, `iops`.
_RATE_NUMERATORS = {"b", "bytes", "kb", "kib", "mb", "mib", "gb", "gib", "tb", "ops", "kops", "mops", "gops"}


def duration_unit(seconds: float) -> tuple[str, float]:
    """The unit (name, seconds per unit) that a duration of `seconds` reads best in: the
    largest unit of which it is at least two (or one, below a minute: "1.5 s", not "1500 ms")."""
    s = abs(seconds)
    chosen = _UNITS[0]
    for unit in _UNITS:
        if s >= unit[2]:
            chosen = unit
    return chosen[0], chosen[1]


def duration(seconds: float | None, digits: int = 3) -> str:
    """`seconds` in the unit its magnitude calls for, with `digits` significant digits;
    "n/a" for a missing value, "forever" for an infinite one (no wear: no end of life)."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "n/a"
    if math.isinf(seconds):
        return "forever" if seconds > 0 else "-forever"
    name, per = duration_unit(seconds)
    return f"{seconds / per:.{digits}g} {name}"


def years(value: float | None, digits: int = 3) -> str:
    """A lifetime given in years, in the unit its magnitude calls for."""
    return duration(None if value is None else value * SECONDS_PER_YEAR, digits)


def key_seconds_per_unit(key: str) -> float | None:
    """Seconds per unit of a result key that names a duration (`stop_time_s`,
    `runtime_s[no_EPF]`, `lifetime_years_no_wl`), or None: rates (`bandwidth_gb_s`,
    `mops_per_cpu_s`) and everything else are not durations."""
    tokens = key.split("[", 1)[0].lower().split("_")
    if "per" in tokens:
        return None
    for i, tok in enumerate(tokens):
        short = tok in _KEY_UNITS and i == len(tokens) - 1
        if not (short or tok in _KEY_UNITS_ANYWHERE) or i == 0:
            continue
        if tokens[i - 1] in _RATE_NUMERATORS:
            return None
        return _KEY_UNITS.get(tok) or _KEY_UNITS_ANYWHERE[tok]
    return None


def axis_unit(values_seconds: Iterable[float]) -> tuple[str, float]:
    """One unit for a whole figure axis: the one its median finite value reads best in."""
    finite = sorted(abs(v) for v in values_seconds if v is not None and math.isfinite(v) and v != 0)
    if not finite:
        return "s", 1.0
    return duration_unit(finite[len(finite) // 2])


def headline_value(key: str, value: object) -> str:
    """A headline value as printed: the number as the key's unit gives it, then, for a
    duration whose magnitude reads better in another unit, that reading in parentheses
    (`lifetime_years_no_wl: 0.000412 (3.61 h)`)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{value}"
    text = f"{value:.6g}" if isinstance(value, float) else f"{value}"
    per = key_seconds_per_unit(key)
    if per is None or not math.isfinite(value):
        return text
    seconds = value * per
    _, best = duration_unit(seconds)
    return text if best == per else f"{text} ({duration(seconds)})"
