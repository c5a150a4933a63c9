"""The `hmsim` command and its drawing processes collect garbage less often than CPython's
default (`hmsim.gc_policy`); a program that only imports hmsim keeps its own settings."""

from __future__ import annotations

import subprocess
import sys

from hmsim.gc_policy import YOUNG_OBJECTS


def _young_threshold_after(code: str) -> int:
    """The youngest generation's threshold in a fresh interpreter after `code` ran."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport gc\nprint(gc.get_threshold()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return int(out.split()[-1])


def test_the_command_and_the_drawing_processes_collect_less_often():
    default = _young_threshold_after("")
    assert default < YOUNG_OBJECTS
    assert _young_threshold_after("import hmsim, hmsim.plotting, hmsim.studies") == default
    assert _young_threshold_after("from hmsim.cli import main\nmain(['--version'])") == YOUNG_OBJECTS
    # A drawing process whose parent closed the pipe at once: set up, then leaves.
    worker = "import hmsim.figure_worker as w\nw.sys.stdin = open('/dev/null')\nw.main()"
    assert _young_threshold_after(worker) == YOUNG_OBJECTS
