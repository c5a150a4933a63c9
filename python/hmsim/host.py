"""The machine a wall time was measured on.

A wall time (a benchmark's rate, a study's `wall_time_s`) is a fact about the host as much
as about hmsim: the same build ran the quick reproduction in 38 s on one 2-core virtual
machine and in 65 s on another. Each timed output names its host, so a user comparing two
numbers can see whether they came from the same kind of machine.

The same machine is not always as fast either (a virtual machine's processor is shared
below it): on the 2-core Intel Xeon machine the full reproduction took 17 min 41 s and, its
results identical, 13 min 31 s a few hours later. So `hmsim bench` times the host-speed gauge
(`hmsim::host_gauge`) beside its passes, and `hmsim reproduce` takes one reading before its
first point runs: every study's summary keeps it (`host_gauge_at_start`), and the report
prints it beside the study's wall time.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

CPUINFO = Path("/proc/cpuinfo")


def read_cpuinfo() -> str:
    """/proc/cpuinfo's text ("" where there is none)."""
    try:
        return CPUINFO.read_text(errors="replace")
    except OSError:
        return ""


def cpu_model(cpuinfo: str | None = None) -> str:
    """The processor's name: the first `model name` of /proc/cpuinfo (Linux; other
    architectures' `Processor`/`cpu model` lines too), else what the platform says, else
    "unknown"."""
    if cpuinfo is None:
        cpuinfo = read_cpuinfo()
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        # x86's `processor` lines are the CPU's number; a name has a letter in it.
        named = key.strip().lower() in ("model name", "cpu model", "processor")
        if sep and named and any(c.isalpha() for c in value):
            return " ".join(value.split())
    return platform.processor() or platform.machine() or "unknown"


# x86 and Arm name a processor's generation by numbers its marketing name may leave out: two
# 2-core machines both called `AMD EPYC` were Zen 4 (family 25) and Zen 5 (family 26), the
# second 1.2–1.6× faster on the same build (docs/performance.md).
CPU_ID_KEYS = (
    ("cpu family", "family"),
    ("model", "model"),
    ("stepping", "stepping"),
    ("cpu implementer", "implementer"),
    ("cpu part", "part"),
)


def cpu_id(cpuinfo: str | None = None) -> str:
    """The processor's generation as /proc/cpuinfo numbers it, for machines whose
    `cpu_model` is the same name: `family 26, model 2, stepping 1` (x86),
    `implementer 0x41, part 0xd0c` (Arm); "" where none is given. From the first CPU's
    block only (the keys repeat per CPU)."""
    if cpuinfo is None:
        cpuinfo = read_cpuinfo()
    labels = dict(CPU_ID_KEYS)
    found: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        label, value = labels.get(key.strip().lower()), " ".join(value.split())
        if sep and value and label:
            found.setdefault(label, value)
    return ", ".join(f"{label} {found[label]}" for _, label in CPU_ID_KEYS if label in found)


def describe() -> dict[str, Any]:
    """`cpu_model`, `cpu_id` (its generation, see `cpu_id`), `logical_cpus` (those this process
    may run on), `system`, and `build`: how the Rust core was compiled (`profile-guided` or
    `plain`, `scripts/build_core.sh`), which moves its speed by about a tenth
    (docs/performance.md)."""
    from hmsim import _core

    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 0
    info = read_cpuinfo()
    return {
        "cpu_model": cpu_model(info),
        "cpu_id": cpu_id(info),
        "logical_cpus": cpus,
        "system": platform.system(),
        "build": getattr(_core, "BUILD", "unknown"),
    }


def text(h: dict[str, Any]) -> str:
    """One line: `AMD EPYC (family 26, model 2, stepping 1), 2 logical CPUs, profile-guided
    build` (the generation and the build only where they were recorded)."""
    n = int(h.get("logical_cpus", 0) or 0)
    name = h.get("cpu_model", "unknown")
    name = f"{name} ({h['cpu_id']})" if h.get("cpu_id") else name
    line = f"{name}, {n} logical CPU{'s' if n != 1 else ''}"
    return f"{line}, {h['build']} build" if h.get("build") else line


# The gauge `hmsim reproduce` read before its first point (None outside a reproduction):
# the study threads run in copies of its context, so each study's summary finds it.
START_GAUGE: ContextVar[dict[str, float] | None] = ContextVar("hmsim_start_gauge", default=None)


def gauge() -> dict[str, float]:
    """One reading of the host-speed gauge (≈ 0.2 s): `compute_m_per_s`, millions of
    steps of a fixed dependent compute chain per second, and `memory_m_per_s`, millions of
    dependent random reads over 32 MiB per second. Compare readings of one kind of machine."""
    from hmsim import _core

    return json.loads(_core.host_gauge())


@contextmanager
def gauged_start(reading: dict[str, float] | None = None) -> Iterator[None]:
    """Within: one gauge reading, `reading` or one taken now, is every study summary's
    `host_gauge_at_start` (`hmsim reproduce` wraps its studies in this before their first
    point runs; the CLI takes its reading before it even imports them)."""
    token = START_GAUGE.set(reading if reading is not None else gauge())
    try:
        yield
    finally:
        START_GAUGE.reset(token)


def gauge_text(g: dict[str, float]) -> str:
    """One reading in words: `host speed gauge: compute 560 M steps/s, memory 8.0 M
    dependent reads/s`."""
    return (
        f"host speed gauge: compute {g['compute_m_per_s']:.0f} M steps/s,"
        f" memory {g['memory_m_per_s']:.1f} M dependent reads/s"
    )


def process_cpu_s() -> float:
    """CPU seconds this process has used (every thread: the points run here, the Python
    around them)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
