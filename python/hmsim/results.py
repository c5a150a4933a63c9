"""The one results writer: atomic files (temp + rename, from `hmsim.atomic`), tidy CSV,
summary JSON; and the one place result rows become typed DataFrames.

Files get the mode `open()` would give (0666 less the umask), and an I/O failure (a full
disk, a read-only folder) is one line naming the file and the operation.

Each module declares its result columns (name, unit, dtype, nullable, measured) beside its
row struct in the core; a run's output carries them (`columns`, per table). `typed_frame`
builds the DataFrame from the rows as pandas always did, then casts each present column to
its declared dtype (pandas' nullable `Int64` where an integer column has gaps) and refuses a column
the module did not declare. Outputs without declarations (results stored by an older
version) keep pandas' inferred dtypes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

# Imported by name: write_json and write_csv look `_atomic_write` up here when they run.
from hmsim.atomic import atomic_write as _atomic_write

# Columns studies add on the Python side (per table, i.e. CSV file stem) that are host
# measurements, like the core's columns declared `measured`: ratios of wall-clock throughputs.
# `hmsim schema` lists the core's declarations; scripts/results_identical.py reads both.
MEASURED_STUDY_COLUMNS: dict[str, frozenset[str]] = {
    "tonic": frozenset({"real_throughput_gain"}),
    "real_threads": frozenset({"speedup_vs_1_thread"}),
}


def _clean(value: Any) -> Any:
    """JSON has no NaN/inf: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {_key(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _clean(value.item())
    return value


def _key(k: Any) -> str:
    """A dict key as the JSON encoder spells it (`true`, `null`, `1.5`), anything else as `str`."""
    if isinstance(k, str):
        return k
    # The encoder spells such a key as it spells the value (NaN as `NaN`, as a key may be).
    return json.dumps(k) if k is None or isinstance(k, bool | int | float) else str(k)


def write_json(path: Path, data: Any, compact: bool = False, durable: bool = True) -> None:
    """`data` as JSON in `path` (atomically), NaN and infinities as null. `compact`: on one
    line, which the C encoder writes (an indented file takes the pure-Python one, many
    times slower: for files people read, not a sweep's store of points). `durable`: see
    `hmsim.atomic.atomic_write`."""
    indent = None if compact else 2
    try:
        # Most data has nothing to clean (the core's output is JSON already): the
        # recursive clean runs only when the encoder refuses a value.
        text = json.dumps(data, indent=indent, allow_nan=False)
    except (ValueError, TypeError):
        text = json.dumps(_clean(data), indent=indent)
    _atomic_write(path, lambda f: f.write(text + "\n"), durable=durable)


class UndeclaredColumnError(ValueError):
    """A result column the module did not declare: a bug in the module, not bad input."""


def _cast(col: pd.Series, dtype: str) -> pd.Series:
    gaps = bool(col.isna().any())
    if dtype == "float":
        return col.astype("float64")
    if dtype == "int":
        if col.dtype.kind in "iu" and not gaps:
            return col  # int64, or uint64 for values past 2^63
        return col.astype("Int64" if (col.dropna() < 2**63).all() else "UInt64")
    if dtype == "bool" and not gaps:
        return col.astype("bool")
    # Booleans with gaps stay Python objects (True/False/None), as pandas made them: code
    # such as `fan.astype(bool)` reads a gap as False, where pandas' `boolean` would raise.
    return col  # str: pandas' object strings, as before


def typed_frame(
    rows: Sequence[Mapping[str, Any]],
    columns: Iterable[Mapping[str, Any]] | None,
    where: str,
    labels: Iterable[str] = (),
) -> pd.DataFrame:
    """The DataFrame of `rows`, its columns cast to the declared `columns` (a list of
    {name, dtype, ...}); `labels` are columns added on the Python side (sweep axes). With no
    declaration (`None`), pandas' inferred dtypes."""
    frame = pd.DataFrame(rows)
    if columns is None:
        return frame
    declared = {c["name"]: c["dtype"] for c in columns}
    allowed = set(declared) | set(labels)
    extra = [c for c in frame.columns if c not in allowed]
    if extra:
        raise UndeclaredColumnError(
            f"{where}: result column(s) {', '.join(map(repr, extra))} not declared; declared: {', '.join(declared)}"
        )
    for name in frame.columns:
        if name in declared:
            frame[name] = _cast(frame[name], declared[name])
    return frame


class MissingColumnError(KeyError):
    """A study expects a result column that its runs did not produce."""

    def __str__(self) -> str:
        return str(self.args[0])


def select(frame: pd.DataFrame, columns: Sequence[str], where: str, optional: Iterable[str] = ()) -> pd.DataFrame:
    """`frame[columns]` in that order, index reset. A column the caller expects but the runs
    did not produce fails loudly rather than giving a silently narrower table; `optional`
    names the columns only some configurations produce (kept when present)."""
    maybe = set(optional)
    missing = [c for c in columns if c not in frame.columns and c not in maybe]
    if missing:
        have = ", ".join(map(str, frame.columns))
        raise MissingColumnError(f"{where}: expected result column(s) {', '.join(missing)}; the runs produced {have}")
    return frame[[c for c in columns if c in frame.columns]].reset_index(drop=True)


def _csv_form(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as the CSV has always been written: an integer column with gaps as floats
    (`3.0`, empty), as pandas made it before columns were typed; files stay byte-identical."""
    gappy = [c for c in frame.columns if str(frame[c].dtype) in ("Int64", "UInt64") and frame[c].isna().any()]
    return frame.astype({c: "float64" for c in gappy}) if gappy else frame


def write_csv(path: Path, frame: pd.DataFrame) -> None:
    frame = _csv_form(frame)
    _atomic_write(path, lambda f: frame.to_csv(f, index=False), mode="w")


def read_json(path: Path) -> Any:
    with open(path) as f:
        return json.load(f)
