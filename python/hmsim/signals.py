"""Interrupts: SIGTERM is handled like Ctrl-C (finished work kept, temporaries removed), and
long calls into the core run in a helper thread so the main thread sees a signal at once
instead of after the call returns (the core does not poll for interrupts)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_received: int | None = None


def _on_signal(signum: int, frame: Any) -> None:
    global _received
    _received = signum
    raise KeyboardInterrupt


def install() -> None:
    """For the CLI: SIGINT and SIGTERM raise KeyboardInterrupt; `exit_status` tells which."""
    global _received
    _received = None
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


def install_early() -> None:
    """For the CLI while it starts (imports take a second): a signal ends it at once, as
    nothing has been written yet."""

    def leave(signum: int, frame: Any) -> None:
        os.write(2, b"hmsim: interrupted\n")
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, leave)
    signal.signal(signal.SIGTERM, leave)


def exit_status() -> int:
    """128 + the signal that interrupted the run (130 for Ctrl-C, 143 for SIGTERM)."""
    return 128 + (_received or signal.SIGINT)


def signal_name() -> str:
    return signal.Signals(_received or signal.SIGINT).name


def interruptible(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a daemon thread, waited for so that signals reach the main thread
    promptly; elsewhere than the main thread, a plain call."""
    if threading.current_thread() is not threading.main_thread():
        return fn(*args)
    box: dict[str, Any] = {}

    def body() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException:
            box["error"] = sys.exc_info()[1]

    t = threading.Thread(target=body, name="hmsim-core", daemon=True)
    t.start()
    while t.is_alive():
        t.join(0.25)
    if "error" in box:
        raise box["error"]
    return box["value"]
