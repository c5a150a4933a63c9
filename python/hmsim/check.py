"""Argument checks for the Python API: a wrong type or value is an `ConfigError` (a
`ConfigError`) naming the argument and what it takes, never a TypeError from deep inside."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hmsim.errors import ConfigError


def _type(value: Any) -> str:
    return type(value).__name__


def path(value: Any, arg: str) -> Path:
    """A file or folder path: str or os.PathLike, not empty."""
    if isinstance(value, bool) or not isinstance(value, str | os.PathLike):
        raise ConfigError(arg, f"expected a path (str or pathlib.Path), got {_type(value)} {value!r:.60}")
    p = Path(value)
    if str(value) == "" or "\0" in str(value):
        raise ConfigError(arg, f"expected a path, got {str(value)!r:.60}")
    return p


def optional_path(value: Any, arg: str) -> Path | None:
    return None if value is None else path(value, arg)


def paths(value: Any, arg: str) -> list[str]:
    """A list of paths. One string is refused: iterating it would give its characters."""
    if isinstance(value, str | bytes | os.PathLike):
        raise ConfigError(arg, f"expected a list of paths, got one path {str(value)!r:.60}; write [{str(value)!r:.60}]")
    if not isinstance(value, Iterable) or isinstance(value, Mapping):
        raise ConfigError(arg, f"expected a list of paths, got {_type(value)}")
    return [str(path(v, arg)) for v in value]


def workers(value: Any, arg: str = "workers") -> int | None:
    """None (one per core) or a whole number of workers from 1 to 1024."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(arg, f"expected a whole number from 1 to 1024 or None, got {_type(value)} {value!r:.60}")
    if not 1 <= value <= 1024:
        raise ConfigError(arg, f"{value} is out of range; allowed 1 to 1024 (or None: one per core)")
    return value


def flag(value: Any, arg: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(arg, f"expected True or False, got {_type(value)} {value!r:.60}")
    return value


def name(value: Any, arg: str) -> str:
    """A short name (device, study): a non-empty string without path separators."""
    if not isinstance(value, str):
        raise ConfigError(arg, f"expected a name (str), got {_type(value)} {value!r:.60}")
    if not value.strip() or len(value) > 128 or any(c in value for c in "/\\\0"):
        raise ConfigError(arg, f"{value!r:.60} is not a name (1 to 128 characters, no '/' or '\\\\')")
    return value


def optional_name(value: Any, arg: str) -> str | None:
    return None if value is None else name(value, arg)
