"""The device catalog as Python sees it: built-in presets plus user device files."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from hmsim import _core, check
from hmsim.errors import check_text_file

if TYPE_CHECKING:
    import pandas as pd

ENV_VAR = "HMSIM_DEVICE_PATH"


def device_paths(extra: Iterable[str | Path] = ()) -> list[str]:
    """User device directories/files: `extra` first, then those in $HMSIM_DEVICE_PATH."""
    paths = check.paths(extra, "devices")
    env = os.environ.get(ENV_VAR, "")
    paths += [p for p in env.split(os.pathsep) if p]
    for p in paths:
        _check_device_path(Path(p))
    return paths


def _check_device_path(path: Path) -> None:
    """The core reads device files whole: refuse up front what it would block on or read
    without end (a FIFO, `/dev/zero`, a huge file), given directly or as a `*.toml` entry of
    a device folder. A missing path is left to the core's own message."""
    if path.is_dir():
        with contextlib.suppress(OSError):
            for entry in sorted(path.iterdir()):
                if entry.suffix == ".toml":
                    check_text_file(entry, "device file")
    elif path.exists() or path.is_symlink():
        check_text_file(path, "device file")


def device_list(extra: Iterable[str | Path] = ()) -> list[dict]:
    """Every device as its full resolved spec (dict) plus the file it came from."""
    return json.loads(_core.devices(device_paths(extra)))


def devices(extra: Iterable[str | Path] = ()) -> pd.DataFrame:
    """One row per device with its headline figures."""
    import pandas as pd

    rows = []
    for entry in device_list(extra):
        d = entry["device"]
        rows.append(
            {
                "name": d["name"],
                "kind": d["kind"],
                "technology": d["technology"],
                "capacity_bytes": d["capacity_bytes"],
                "read_latency_ns": d["read"]["latency_ns"],
                "read_bandwidth_gb_s": d["read"]["bandwidth_gb_s"],
                "write_latency_ns": d["write"]["latency_ns"],
                "write_bandwidth_gb_s": d["write"]["bandwidth_gb_s"],
                "base": d.get("base"),
                "file": entry["file"],
                "description": d["description"],
            }
        )
    return pd.DataFrame(rows)
