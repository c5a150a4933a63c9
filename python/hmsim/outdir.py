"""Output folders: one writer at a time, whole-run replacement, and file modes from the umask.

`exclusive(out)` holds a lock file beside `out` (`.NAME.lock`, an flock) for the whole run, so
a second hmsim writing to the same folder stops at once with a clear message instead of
mixing its files with the first one's. `staged(out)` gives a temporary folder beside `out`
and renames it into place when the block completes, so a killed or failed run leaves either
the old results or the new ones, never a mixture. See docs/reliability.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from hmsim.errors import ConfigError, HmsimError


def _read_umask() -> int:
    """The process umask, read without changing it where the OS says it (Linux)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    old = os.umask(0o022)  # at import, before any thread creates files
    os.umask(old)
    return old


UMASK = _read_umask()


def file_mode() -> int:
    """Mode of a new result file: what `open()` would give (0666 less the umask)."""
    return 0o666 & ~UMASK


def dir_mode() -> int:
    return 0o777 & ~UMASK


def io_error(path: Path | str, op: str, e: OSError) -> HmsimError:
    """`results.csv: write: No space left on device`, as one line."""
    return HmsimError(str(path), f"{op}: {e.strerror or e}")


_held: dict[Path, int] = {}
_held_lock = threading.Lock()


def _lock_path(out: Path) -> Path:
    return out.parent / f".{out.name}.lock"


@contextlib.contextmanager
def exclusive(out: str | Path) -> Iterator[None]:
    """Hold the writer lock of `out` for the block; re-entrant within this process."""
    out = Path(out).absolute()
    with _held_lock:
        if out in _held:
            _held[out] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _held_lock:
                _held[out] -= 1
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise io_error(out.parent, "mkdir", e) from None
    lock = _lock_path(out)
    fd = _acquire(lock, out)
    with _held_lock:
        _held[out] = 1
    try:
        yield
    finally:
        with _held_lock:
            del _held[out]
        # Removed while still locked: whoever opened it meanwhile sees a different inode
        # on its check and retries on a fresh file.
        with contextlib.suppress(OSError):
            lock.unlink()
        os.close(fd)


def _acquire(lock: Path, out: Path) -> int:
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, file_mode())
        except OSError as e:
            raise io_error(lock, "open lock", e) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = ""
            with contextlib.suppress(OSError, ValueError):
                holder = f" (pid {int(os.pread(fd, 32, 0).split()[0])})"
            os.close(fd)
            raise HmsimError(
                str(out), f"another hmsim{holder} is writing here; wait for it to finish or choose another --out"
            ) from None
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)


def _is_result_folder(path: Path) -> bool:
    """A folder hmsim wrote before (it replaces those whole), or an empty one."""
    return path.is_dir() and (not any(path.iterdir()) or (path / "summary.json").is_file())


@contextlib.contextmanager
def staged(out: str | Path) -> Iterator[Path]:
    """A temporary folder beside `out`, renamed to `out` when the block completes.

    An existing `out` is replaced only if it is empty or an earlier hmsim result (it holds a
    summary.json); any other existing folder is refused rather than deleted. Call it inside
    `exclusive(out)`.
    """
    out = Path(out)
    if out.exists() and not _is_result_folder(out):
        what = "a file" if not out.is_dir() else "a folder that is not an hmsim result (no summary.json)"
        raise ConfigError(str(out), f"exists and is {what}; choose a new or empty --out")
    # Folders of a killed earlier writer (the caller holds the lock of `out`).
    for pattern in (f".{out.name}.tmp-*", f".{out.name}.old-*"):
        for left in out.parent.glob(pattern):
            shutil.rmtree(left, ignore_errors=True)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
        os.chmod(tmp, dir_mode())
    except OSError as e:
        raise io_error(out.parent, "mkdir", e) from None
    try:
        yield tmp
        _swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap_in(tmp: Path, out: Path) -> None:
    old = None
    try:
        if out.exists():
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            shutil.rmtree(old, ignore_errors=True)
            os.rename(out, old)
        os.rename(tmp, out)
    except OSError as e:
        if old is not None and not out.exists():
            with contextlib.suppress(OSError):
                os.rename(old, out)  # put the previous results back
        raise io_error(out, "rename", e) from None
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def sweep_leftovers(folder: Path) -> None:
    """Remove temporaries a killed writer left in `folder` (its lock is ours now)."""
    with contextlib.suppress(OSError):
        for p in folder.iterdir():
            if p.name.startswith(".") and p.name.endswith(".tmp"):
                p.unlink(missing_ok=True)
