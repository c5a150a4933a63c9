"""`hmsim lifetime`: what a program's memory trace costs in PMem media writes and lifetime."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hmsim import _core, check
from hmsim.catalog import device_paths
from hmsim.errors import ConfigError
from hmsim.progress import core_progress
from hmsim.signals import interruptible

if TYPE_CHECKING:
    from hmsim.scenario import RunResult


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
    result = _replay(trace, device, out, fmt, devices, options, frames=True)[1]
    assert result is not None
    return result


def lifetime_output(
    trace: str | Path,
    device: str = "optane-pmem",
    out: str | Path | None = None,
    fmt: str | None = None,
    devices: Iterable[str | Path] = (),
    **options: Any,
) -> dict:
    """`lifetime`, returning the core's output as it came (`rows` and `tables` as lists of
    dicts, `warnings`): the DataFrames are built only to write `out`, so without it pandas
    is not loaded (`hmsim lifetime` prints its summary from this)."""
    return _replay(trace, device, out, fmt, devices, options, frames=False)[0]


def _replay(
    trace: str | Path,
    device: str,
    out: str | Path | None,
    fmt: str | None,
    devices: Iterable[str | Path],
    options: dict[str, Any],
    frames: bool,
) -> tuple[dict, RunResult | None]:
    from hmsim.outdir import exclusive

    trace = check.path(trace, "trace")
    check.name(device, "device")
    out = check.optional_path(out, "out")
    if fmt is not None and not isinstance(fmt, str):
        raise ConfigError("fmt", f"expected a format name (str) or None, got {type(fmt).__name__}")
    try:
        opts = json.dumps(options, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ConfigError("options", f"replay options must be plain numbers, strings, bools and dicts: {e}") from None
    start = time.perf_counter()
    result = None
    with exclusive(out) if out is not None else contextlib.nullcontext():
        # The lifetime of a trace is a `pmem` scenario with a `[trace]` table.
        text = _core.lifetime_scenario(str(trace), device, opts, fmt)
        with core_progress(f"replaying {trace.name}") as bar:
            try:
                raw, cpu_s = interruptible(_core.run_scenario, text, "<lifetime>", [], device_paths(devices), bar)
            except ConfigError as e:
                if e.key != "pmem.device":
                    raise
                # The device is the command's `--device` (the `device` argument), not a
                # line of the scenario built from it.
                raise ConfigError("--device", e.detail, key="device") from None
        output = json.loads(raw)
        output["cpu_time_s"] = cpu_s
        if frames or out is not None:
            from hmsim.scenario import output_from_json, write_run

            result = output_from_json(output, time.perf_counter() - start)
            if out is not None:
                write_run(result, out, str(trace))
    return output, result
