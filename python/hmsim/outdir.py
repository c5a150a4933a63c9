"""Output folders: one writer at a time, whole-run replacement, and file modes from the umask.

`exclusive(out)` holds a lock file beside `out` (`.NAME.lock`, an flock) for the whole run, so
a second hmsim writing to the same folder stops at once with a clear message instead of
mixing its files with the first one's. `staged(out)` gives a temporary folder beside `out`
and renames it into place when the block completes, so a killed or failed run leaves either
the old results or the new ones, never a mixture. See docs/reliability.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import json
import os
import re
import shutil
import sys
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


def target(out: str | Path) -> Path:
    """The folder an `--out` names: a symbolic link is followed (its target is written and
    replaced; the link itself stays as it is)."""
    out = Path(out)
    return Path(os.path.realpath(out)) if out.is_symlink() else out


# Every folder hmsim writes holds this file; only folders holding it (or an earlier hmsim's
# recognisable result) are ever replaced or written into.
MARKER = ".hmsim"
MARKER_TEXT = "hmsim output folder: hmsim may replace or delete everything here\n"


def write_marker(folder: Path) -> None:
    from hmsim.atomic import write_bytes

    write_bytes(folder / MARKER, MARKER_TEXT.encode())


def is_hmsim_folder(path: Path) -> bool:
    """An empty folder, or one hmsim made: it holds the `.hmsim` marker, or (results of
    earlier versions) a summary.json that is a JSON object with an `hmsim_version`, or an
    unfinished sweep's `points/` store of point files only."""
    if not path.is_dir():
        return False
    try:
        if not any(path.iterdir()):
            return True
        marker = path / MARKER
        if marker.is_file() and not marker.is_symlink():
            with open(marker, "rb") as f:
                if f.read(len(MARKER_TEXT) + 1) == MARKER_TEXT.encode():
                    return True
        summary = path / "summary.json"
        if summary.is_file() and summary.stat().st_size < (64 << 20):
            with contextlib.suppress(ValueError):
                data = json.loads(summary.read_bytes())
                if isinstance(data, dict) and isinstance(data.get("hmsim_version"), str):
                    return True
        points = path / "points"
        if points.is_dir():
            names = [p.name for p in points.iterdir()]
            return bool(names) and all(_POINT.fullmatch(n) for n in names)
    except OSError:
        return False
    return False


_POINT = re.compile(r"[0-9a-f]{20}\.json|\..*\.tmp")


def refuse_foreign(out: Path) -> None:
    """One rule for `run`, `lifetime` and `sweep`: an existing `out` must be an hmsim folder
    (or empty); anything else is refused, never replaced or written into."""
    if not os.path.lexists(out):
        return
    if not out.is_dir():
        raise ConfigError(str(out), "exists and is not a folder; choose a new or empty --out")
    if not is_hmsim_folder(out):
        raise ConfigError(
            str(out), "exists and is a folder hmsim did not make (no .hmsim marker); choose a new or empty --out"
        )


_held: dict[Path, int] = {}
_held_lock = threading.Lock()


def _lock_path(out: Path) -> Path:
    return out.parent / f".{out.name}.lock"


@contextlib.contextmanager
def exclusive(out: str | Path) -> Iterator[None]:
    """Hold the writer lock of `out` for the block; re-entrant within this process."""
    out = target(out).absolute()
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
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except OSError as e:
                # A full disk: name the lock file, and leave no lock behind (it is ours).
                with contextlib.suppress(OSError):
                    lock.unlink()
                os.close(fd)
                raise io_error(lock, "write", e) from None
            return fd
        os.close(fd)


def _leftovers(out: Path, kind: str) -> list[Path]:
    """`.NAME.tmp-*` or `.NAME.old-*` beside `out`, matched by exact name, not by a glob
    pattern: an `--out` holding `*` or `?` must not match another output's folders."""
    pattern = re.compile(rf"\.{re.escape(out.name)}\.{kind}-[A-Za-z0-9_]+")
    try:
        return sorted(p for p in out.parent.iterdir() if pattern.fullmatch(p.name))
    except OSError:
        return []


def _restore_or_remove_leftovers(out: Path) -> None:
    """Folders of a killed earlier writer (the caller holds the lock of `out`). A previous
    result moved aside (`.NAME.old-*`) while `out` is missing is the last complete result:
    it is put back, not deleted (a kill between the two renames of a swap without
    RENAME_EXCHANGE leaves exactly that)."""
    olds = _leftovers(out, "old")
    if olds and not os.path.lexists(out):
        newest = max(olds, key=lambda p: p.lstat().st_mtime)
        with contextlib.suppress(OSError):
            os.rename(newest, out)
    for left in _leftovers(out, "tmp") + _leftovers(out, "old"):
        if left.is_dir() and not left.is_symlink():
            shutil.rmtree(left, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                left.unlink()


@contextlib.contextmanager
def staged(out: str | Path) -> Iterator[Path]:
    """A temporary folder beside `out`, swapped into place when the block completes.

    An existing `out` is replaced only if hmsim made it (`is_hmsim_folder`); any other
    existing folder is refused rather than deleted. An `out` that is a symbolic link is
    followed: the folder it points to is replaced, the link stays. Call it inside
    `exclusive(out)`.
    """
    out = target(out)
    refuse_foreign(out)
    _restore_or_remove_leftovers(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
        os.chmod(tmp, dir_mode())
    except OSError as e:
        raise io_error(out.parent, "mkdir", e) from None
    try:
        write_marker(tmp)
        yield tmp
        _swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _exchange(a: Path, b: Path) -> bool:
    """Swap `a` and `b` in one step (Linux renameat2 RENAME_EXCHANGE): at every instant one
    of them is at each name. False where the system or file system cannot."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@functools.cache
def _renameat2():
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


def _swap_in(tmp: Path, out: Path) -> None:
    """Put the complete folder `tmp` at `out`. With an earlier `out`: exchanged in one step
    where the OS can (the old result then sits at `tmp` and is removed); elsewhere moved
    aside to `.NAME.old-PID` first, and put back if the second rename fails or is
    interrupted (after a kill there, the next writer puts it back)."""
    try:
        if not os.path.lexists(out):
            os.rename(tmp, out)
            return
        if _exchange(tmp, out):
            shutil.rmtree(tmp, ignore_errors=True)
            return
    except OSError as e:
        raise io_error(out, "rename", e) from None
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    shutil.rmtree(old, ignore_errors=True)
    try:
        os.rename(out, old)
    except OSError as e:
        raise io_error(out, "rename", e) from None
    try:
        os.rename(tmp, out)
    except BaseException as e:
        if not os.path.lexists(out):
            with contextlib.suppress(OSError):
                os.rename(old, out)  # put the previous results back
        if isinstance(e, OSError):
            raise io_error(out, "rename", e) from None
        raise
    shutil.rmtree(old, ignore_errors=True)


def sweep_leftovers(folder: Path) -> None:
    """Remove temporaries a killed writer left in `folder` (its lock is ours now)."""
    with contextlib.suppress(OSError):
        for p in folder.iterdir():
            if p.name.startswith(".") and p.name.endswith(".tmp"):
                p.unlink(missing_ok=True)
