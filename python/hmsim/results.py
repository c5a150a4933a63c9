"""The one results writer: atomic files (temp + rename), tidy CSV, summary JSON."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd


def _atomic_write(path: Path, write: Callable[[Any], None], mode: str = "w") -> None:
    """Write through `write(fileobj)` into a temp file beside `path`, fsync, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _clean(value: Any) -> Any:
    """JSON has no NaN/inf: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _clean(value.item())
    return value


def write_json(path: Path, data: Any) -> None:
    text = json.dumps(_clean(data), indent=2, sort_keys=False) + "\n"
    _atomic_write(path, lambda f: f.write(text))


def write_csv(path: Path, frame: pd.DataFrame) -> None:
    _atomic_write(path, lambda f: frame.to_csv(f, index=False), mode="w")


def write_bytes(path: Path, data: bytes) -> None:
    _atomic_write(path, lambda f: f.write(data), mode="wb")


def read_json(path: Path) -> Any:
    with open(path) as f:
        return json.load(f)
