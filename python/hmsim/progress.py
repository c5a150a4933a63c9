"""Progress bars on a terminal only; silent in CI and when output is piped."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from rich import filesize
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text


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


class Display:
    """One progress display for several sweeps running at once (`hmsim reproduce all`):
    a row per sweep (a study's points), each fed from its own thread. Counts are kept
    everywhere (`rows`: label -> [done, total]); a terminal also draws them."""

    def __init__(self, live: Progress | None):
        self._p = live
        self._lock = threading.Lock()
        self.rows: dict[str, list[int]] = {}

    def row(self, label: str, total: int, done: int = 0) -> _Row:
        with self._lock:
            self.rows[label] = [done, total]
        task = self._p.add_task(label, total=total, completed=done) if self._p is not None else None
        return _Row(self, label, task)


class _Row:
    def __init__(self, display: Display, label: str, task: int | None):
        self._d, self._label, self._task = display, label, task

    def advance(self, n: int = 1) -> None:
        with self._d._lock:
            self._d.rows[self._label][0] += n
        if self._task is not None and self._d._p is not None:
            self._d._p.advance(self._task, n)


DISPLAY: ContextVar[Display | None] = ContextVar("hmsim_display", default=None)


@contextmanager
def shared_display() -> Iterator[Display]:
    """Inside, every `progress()` bar is a row of one display (an enclosing one if open)."""
    outer = DISPLAY.get()
    if outer is not None:
        yield outer
        return
    if interactive():
        cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        live = Progress(*cols, transient=True, console=Console(stderr=True))
    else:
        live = None
    display = Display(live)
    token = DISPLAY.set(display)
    try:
        if live is None:
            yield display
        else:
            with live:
                yield display
    finally:
        DISPLAY.reset(token)


@contextmanager
def progress(total: int, label: str, done: int = 0):
    """Yield an object with `.advance()`; draws a bar only on an interactive terminal
    (inside `shared_display()`, a row of that display)."""
    shared = DISPLAY.get()
    if shared is not None:
        yield shared.row(label, total, done)
        return
    if not interactive():
        yield _Quiet()
        return
    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*cols, transient=True) as p:
        task = p.add_task(label, total=total, completed=done)
        yield _Bar(p, task)


class CoreProgress:
    """Receives the Rust core's progress of one long operation (`start(total, unit)` per
    phase, then `advance(n)`); the core calls it rarely (about every 1 % or 0.2 s), with the
    GIL taken only then. Draws a bar on an interactive terminal and nothing elsewhere; a
    total of 0 means unknown (a pipe from a running tracer): the count alone is shown."""

    def __init__(self, label: str, progress: Progress):
        self._label, self._p = label, progress
        self._task: int | None = None

    def start(self, total: int, unit: str) -> None:
        if self._task is not None:
            self._p.update(self._task, visible=False)
        self._task = self._p.add_task(self._label, total=total or None, unit=unit)

    def advance(self, n: int) -> None:
        if self._task is not None:
            self._p.advance(self._task, n)


class _Count(ProgressColumn):
    """`12.3/45.6 MB` for bytes, `1,234/5,678 records` otherwise; no total: the count."""

    def render(self, task: Task) -> Text:
        unit = task.fields.get("unit", "")
        if unit == "bytes":
            done = filesize.decimal(int(task.completed))
            return Text(f"{done}/{filesize.decimal(int(task.total))}" if task.total else done)
        shown = f"{task.completed:,.0f}/{task.total:,.0f}" if task.total else f"{task.completed:,.0f}"
        return Text(f"{shown} {unit}")


@contextmanager
def core_progress(label: str) -> Iterator[CoreProgress | None]:
    """A receiver for the core's progress: a bar on an interactive terminal; elsewhere None,
    so that the core does not report at all."""
    if not interactive():
        yield None
        return
    cols = (TextColumn("{task.description}"), BarColumn(), _Count(), TimeElapsedColumn())
    # On stderr, which `interactive()` tested: stdout may be a pipe to another program.
    with Progress(*cols, transient=True, console=Console(stderr=True)) as p:
        yield CoreProgress(label, p)
