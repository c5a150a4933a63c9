"""The one results writer: atomic files (temp + rename), tidy CSV, summary JSON.

Files get the mode `open()` would give (0666 less the umask), and an I/O failure (a full
disk, a read-only folder) is one line naming the file and the operation.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from hmsim.outdir import file_mode, io_error


def _atomic_write(path: Path, write: Callable[[Any], None], mode: str = "w") -> None:
    """Write through `write(fileobj)` into a temp file beside `path`, fsync, then rename."""
    op = "mkdir"
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        op = "create"
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.fchmod(fd, file_mode())  # mkstemp makes 0600 whatever the umask
        op = "write"
        with os.fdopen(fd, mode) as f:
            write(f)
            f.flush()
            op = "fsync"
            os.fsync(f.fileno())
        op = "rename"
        os.replace(tmp, path)
    except OSError as e:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise io_error(path, op, e) from None
    except BaseException:
        if tmp is not None:
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
