"""The drawing processes (`hmsim.figure_worker`) that write a run's figures: started once
per process and kept for its life. Light to import (no matplotlib), so `hmsim reproduce`
can start them before it imports the studies: their own imports (matplotlib, ≈ 0.5 CPU-s
each) then run beside this process's instead of beside the first points.
`hmsim.plotting` feeds them."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading


class DrawingProcesses:
    """Up to two drawing processes (fewer on a one-core host), each lent to one figure at
    a time: `take` waits for an idle one (a new one if it died), `give_back` returns it."""

    def __init__(self) -> None:
        self._idle: queue.SimpleQueue | None = None
        self._starting = threading.Lock()

    @staticmethod
    def count() -> int:
        return max(1, min(2, os.cpu_count() or 1))

    def start(self) -> None:
        """Start the processes, unless they are running already."""
        with self._starting:
            if self._idle is None:
                import atexit

                idle: queue.SimpleQueue = queue.SimpleQueue()
                for _ in range(self.count()):
                    idle.put(self._spawn())
                self._idle = idle
                atexit.register(self._close)

    def take(self) -> subprocess.Popen:
        self.start()
        assert self._idle is not None
        proc = self._idle.get()
        if proc.poll() is not None:
            proc = self._spawn()
        return proc

    def give_back(self, proc: subprocess.Popen) -> None:
        assert self._idle is not None
        self._idle.put(proc)

    @staticmethod
    def _spawn() -> subprocess.Popen:
        # The child finds this very package, wherever it was imported from.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        return subprocess.Popen(
            [sys.executable, "-m", "hmsim.figure_worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )

    def _close(self) -> None:
        assert self._idle is not None
        while not self._idle.empty():
            proc = self._idle.get()
            try:
                proc.stdin.close()
                proc.wait(timeout=30)
            except Exception:
                proc.kill()


PROCESSES = DrawingProcesses()
