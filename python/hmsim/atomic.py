"""Atomic file writes (temp file beside the target, fsync, rename): the primitive under
`hmsim.results`' writers. Apart from them, without pandas, so that the figure-drawing
processes (`hmsim.figure_worker`), which write only bytes, do not import it."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hmsim.outdir import file_mode, io_error


def atomic_write(path: Path, write: Callable[[Any], None], mode: str = "w", durable: bool = True) -> None:
    """Write through `write(fileobj)` into a temp file beside `path`, fsync, then rename.

    `durable=False` skips the fsync, for a cache whose reader drops a file it cannot read
    and makes it again (a sweep's saved points): a power loss or an OS crash may then leave
    the file empty under its name, which costs a rerun, never a wrong number; the end of
    this process (Ctrl-C, a kill) loses nothing either way, as the kernel holds the written
    pages. A quick reproduction saves ≈ 500 points, and their fsyncs held its threads
    ≈ 1.5 s (docs/changelog.md)."""
    op = "mkdir"
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        op = "create"
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.fchmod(fd, file_mode())  # mkstemp makes 0600 whatever the umask
        op = "write"
        with os.fdopen(fd, mode) as f:
            write(f)
            f.flush()
            if durable:
                op = "fsync"
                os.fsync(f.fileno())
        op = "rename"
        os.replace(tmp, path)
    except OSError as e:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise io_error(path, op, e) from None
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def write_bytes(path: Path, data: bytes) -> None:
    atomic_write(path, lambda f: f.write(data), mode="wb")
