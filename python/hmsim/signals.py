"""Interrupts: SIGTERM is handled like Ctrl-C (finished work kept, temporaries removed), and
long calls into the core run in a helper thread so the main thread sees a signal at once
instead of after the call returns (the core does not poll for interrupts)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_received: int | None = None
_extra = 0  # signals after the first, ignored


def _on_signal(signum: int, frame: Any) -> None:
    """The first signal raises KeyboardInterrupt; any later one (a second Ctrl-C, a burst)
    is ignored: hmsim is already leaving, and a second KeyboardInterrupt raised inside that
    clean-up (in a `finally`, in `threading`'s lock handling) would leave a lock unreleased,
    a temporary folder behind, or a `RuntimeError: release unlocked lock` traceback."""
    global _received, _extra
    if _received is not None:
        _extra += 1
        return
    _received = signum
    raise KeyboardInterrupt


def install() -> None:
    """For the CLI: SIGINT and SIGTERM raise KeyboardInterrupt; `exit_status` tells which."""
    global _received, _extra
    _received = None
    _extra = 0
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


def install_early() -> None:
    """For the CLI while it starts (imports take a second): a signal ends it at once, as
    nothing has been written yet."""
    signal.signal(signal.SIGINT, _leave)
    signal.signal(signal.SIGTERM, _leave)


def _leave(signum: int, frame: Any) -> None:
    os.write(2, b"hmsim: interrupted\n")
    os._exit(128 + signum)


def install_leaving() -> None:
    """For the CLI once its work is done (files written, lock released) and the interpreter
    shuts down: a signal then ends it at once with 128 + the signal, not with Python's raw
    death by SIGINT (exit -2) after a traceback from `threading._shutdown`."""
    signal.signal(signal.SIGINT, _leave)
    signal.signal(signal.SIGTERM, _leave)


def exit_now(status: int) -> None:
    """Flush the standard streams and end the process with `status`, skipping interpreter
    shutdown (for the CLI, whose work is done)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


def exit_status() -> int:
    """128 + the signal that interrupted the run (130 for Ctrl-C, 143 for SIGTERM)."""
    return 128 + (_received or signal.SIGINT)


def interrupted() -> bool:
    """Whether a signal has arrived (the run is leaving, whatever error surfaced)."""
    return _received is not None


def signal_name() -> str:
    return signal.Signals(_received or signal.SIGINT).name


_running: set[int] = set()  # ids of core calls not yet returned


LEAVE_GRACE_S = 0.5  # how long leave_if_busy waits for other threads to end by themselves


def _other_threads() -> list[threading.Thread]:
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and not t.daemon and t.is_alive()]


def _join_others(seconds: float) -> None:
    """Wait up to `seconds` in all for the other non-daemon threads to end."""
    deadline = time.monotonic() + seconds
    for t in _other_threads():
        left = deadline - time.monotonic()
        if left <= 0:
            return
        t.join(left)


def leave_if_busy(status: int) -> None:
    """For the CLI after an interrupt: if a core call is still running in a helper thread,
    end the process now. Interpreter shutdown would wait for the call (it is not a daemon
    thread: a daemon thread inside the core would abort the process at shutdown)."""
    # Not Thread.is_alive() for core calls: after a join() cut short by a signal it can read
    # False while the thread is still inside the core. Other live threads (a sweep's pool,
    # whose running points are abandoned) would be joined at exit too; one that is only
    # unwinding the interrupt ends within the grace period, and then a normal exit follows.
    if not _running:
        _join_others(LEAVE_GRACE_S)
    others = _other_threads()
    if _running or others:
        exit_now(status)


def interruptible(fn: Callable[..., T], *args: Any, on_interrupt: Callable[[], None] | None = None) -> T:
    """`fn(*args)` in a helper thread, waited for so that signals reach the main thread
    promptly; elsewhere than the main thread, a plain call. `on_interrupt`, for calls the
    core can stop (a conversion's `Cancel`), is called when a signal interrupts the wait,
    which then waits up to 5 s for the call to stop (and clean up) before passing the
    interrupt on."""
    if threading.current_thread() is not threading.main_thread():
        return fn(*args)
    box: dict[str, Any] = {}

    done = threading.Event()
    key = id(done)

    def body() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException:
            box["error"] = sys.exc_info()[1]
        finally:
            _running.discard(key)
            done.set()

    _running.add(key)
    threading.Thread(target=body, name="hmsim-core").start()
    try:
        while not done.wait(0.25):
            pass
    except KeyboardInterrupt:
        if on_interrupt is not None:
            on_interrupt()
            done.wait(5.0)
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
