"""The machine a wall time was measured on.

A wall time (a benchmark's rate, a study's `wall_time_s`) is a fact about the host as much
as about hmsim: the same build ran the quick reproduction in 38 s on one 2-core virtual
machine and in 65 s on another. Each timed output names its host, so a user comparing two
numbers can see whether they came from the same kind of machine.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

CPUINFO = Path("/proc/cpuinfo")


def cpu_model(cpuinfo: str | None = None) -> str:
    """The processor's name: the first `model name` of /proc/cpuinfo (Linux; other
    architectures' `Processor`/`cpu model` lines too), else what the platform says, else
    "unknown"."""
    if cpuinfo is None:
        try:
            cpuinfo = CPUINFO.read_text(errors="replace")
        except OSError:
            cpuinfo = ""
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        # x86's `processor` lines are the CPU's number; a name has a letter in it.
        named = key.strip().lower() in ("model name", "cpu model", "processor")
        if sep and named and any(c.isalpha() for c in value):
            return " ".join(value.split())
    return platform.processor() or platform.machine() or "unknown"


def describe() -> dict[str, Any]:
    """`cpu_model`, `logical_cpus` (those this process may run on) and `system`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 0
    return {"cpu_model": cpu_model(), "logical_cpus": cpus, "system": platform.system()}


def text(h: dict[str, Any]) -> str:
    """One line: `Intel(R) Xeon(R) Processor, 2 logical CPUs`."""
    n = int(h.get("logical_cpus", 0) or 0)
    return f"{h.get('cpu_model', 'unknown')}, {n} logical CPU{'s' if n != 1 else ''}"
