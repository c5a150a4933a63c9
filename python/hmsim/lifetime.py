"""`hmsim lifetime`: what a program's memory trace costs in PMem media writes and lifetime."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hmsim import _core
from hmsim.catalog import device_paths
from hmsim.scenario import RunResult, output_from_json, write_run


def lifetime(
    trace: str | Path,
    device: str = "optane-pmem",
    out: str | Path | None = None,
    fmt: str | None = None,
    devices: Iterable[str | Path] = (),
    **options: Any,
) -> RunResult:
    """Replay `trace` through caches and the PMem path of `device`.

    `options` are the replay options (see docs/pmem.md): `pmem` and `cache` tables as dicts,
    `cores`, `ns_per_instruction`, `flush`, `drain`, `top_n`, `seed`.
    """
    start = time.perf_counter()
    raw = _core.lifetime_trace(str(trace), device, json.dumps(options), fmt, device_paths(devices))
    result = output_from_json(raw, time.perf_counter() - start)
    if out is not None:
        write_run(result, Path(out), str(trace))
    return result
