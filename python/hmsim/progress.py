"""Progress bars on a terminal only; silent in CI and when output is piped."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def interactive() -> bool:
    return sys.stderr.isatty() and not os.environ.get("CI")


def make_console() -> Console:
    """The house console: terminal width on a TTY, wide (no wrapping of tables) elsewhere."""
    # markup=False: printed keys and values are data (`runtime_s[no_EPF]` is a key, not a style).
    return Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else 160)


class _Quiet:
    def advance(self, n: int = 1) -> None:
        pass


class _Bar:
    def __init__(self, progress: Progress, task: int):
        self._p, self._t = progress, task

    def advance(self, n: int = 1) -> None:
        self._p.advance(self._t, n)


@contextmanager
def progress(total: int, label: str, done: int = 0):
    """Yield an object with `.advance()`; draws a bar only on an interactive terminal."""
    if not interactive():
        yield _Quiet()
        return
    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*cols, transient=True) as p:
        task = p.add_task(label, total=total, completed=done)
        yield _Bar(p, task)
