"""Trace commands: info, convert, and recording real programs (Valgrind lackey, kmem
tracepoints). Parsing and writing happen in the Rust core; this module runs the tools."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from hmsim import _core, check
from hmsim.errors import ConfigError, HmsimError
from hmsim.progress import CoreProgress, core_progress
from hmsim.signals import interruptible


def info(path: str | Path, fmt: str | None = None, top: int = 10) -> dict:
    """Format, records, footprint (distinct 4 KB / 2 MB pages), R/W mix, top pages."""
    path = check.path(path, "path")
    check.optional_name(fmt, "fmt")
    if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= 100_000:
        raise ConfigError("top", f"expected a whole number from 0 to 100000, got {top!r:.60}")
    return json.loads(_core.trace_info(str(path), fmt, top))


def convert(
    src: str | Path,
    dst: str | Path,
    to: str = "native",
    fmt: str | None = None,
    synthetic_cycles: int | None = None,
    max_output_bytes: int | None = None,
) -> dict:
    """Convert a trace (any readable format) to `to` (default: hmsim native). Records without
    a cycle stop a conversion to dramsim unless `synthetic_cycles` spaces them that many
    cycles apart. A lackey or ChampSim output (one line or record per instruction) may not
    exceed `max_output_bytes` (default: 1000 times the input's size, at least 1 GiB; 0: no
    limit). Ctrl-C or SIGTERM stops the conversion and removes its temporary file."""
    src, dst = check.path(src, "src"), check.path(dst, "dst")
    check.name(to, "to")
    check.optional_name(fmt, "fmt")
    if synthetic_cycles is not None and (
        isinstance(synthetic_cycles, bool) or not isinstance(synthetic_cycles, int) or synthetic_cycles < 1
    ):
        raise ConfigError("synthetic_cycles", f"expected a positive integer, got {synthetic_cycles!r}")
    if max_output_bytes is not None and (
        isinstance(max_output_bytes, bool) or not isinstance(max_output_bytes, int) or not 0 <= max_output_bytes < 2**64
    ):
        got = f"{max_output_bytes!r:.60}"
        raise ConfigError("max_output_bytes", f"expected a whole number of bytes >= 0 (0: no limit), got {got}")
    cancel = _core.Cancel()
    _remove_stale_temps(dst)
    with core_progress(f"converting {src.name}") as bar:
        raw = interruptible(
            _core.trace_convert,
            str(src),
            str(dst),
            to,
            fmt,
            synthetic_cycles,
            bar,
            max_output_bytes,
            cancel,
            on_interrupt=cancel.cancel,
        )
    return json.loads(raw)


def _remove_stale_temps(dst: Path) -> None:
    """The core writes `DST.tmp-PID` and renames it to DST when complete; a killed convert
    leaves it behind. Remove those whose writer is gone (a live PID's is left alone)."""
    pattern = re.compile(rf"{re.escape(dst.name)}\.tmp-(\d+)")
    try:
        entries = list(dst.parent.iterdir())
    except OSError:
        return
    for p in entries:
        m = pattern.fullmatch(p.name)
        if m and not _alive(int(m.group(1))) and p.is_file() and not p.is_symlink():
            with contextlib.suppress(OSError):
                p.unlink()


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def _atomic_target(out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    return Path(tmp)


def record_lackey(cmd: Sequence[str], out: str | Path, page_level: bool = False) -> dict:
    """Run `cmd` under Valgrind lackey; its log streams through a FIFO into the native
    writer, so memory stays bounded and no raw log touches the disk."""
    if not cmd:
        raise ConfigError("trace record", "no command given after --")
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise HmsimError("trace record", "valgrind is not installed (apt-get install valgrind)")
    out = Path(out)
    tmp_out = _atomic_target(out)
    with tempfile.TemporaryDirectory(prefix="hmsim-lackey-") as d:
        fifo = Path(d) / "lackey.log"
        os.mkfifo(fifo)
        result: dict = {}
        error: list[BaseException] = []

        def convert_stream(bar: CoreProgress | None) -> None:
            try:
                source = "lackey: " + " ".join(cmd)
                result.update(
                    json.loads(_core.trace_record_stream(str(fifo), str(tmp_out), "lackey", page_level, source, bar))
                )
            except BaseException as e:  # reported after valgrind ends
                error.append(e)

        args = [valgrind, "--tool=lackey", "--trace-mem=yes", f"--log-file={fifo}", *cmd]
        try:
            with core_progress("recording (lackey log read)") as bar:
                reader = threading.Thread(target=convert_stream, args=(bar,), daemon=True)
                reader.start()
                proc = subprocess.run(args, check=False)
                reader.join()
        except KeyboardInterrupt:
            reader.join(timeout=30)
            tmp_out.unlink(missing_ok=True)
            raise
        except OSError as e:
            # The reader waits on the FIFO: open it once so it sees an empty stream.
            with open(fifo, "w"):
                pass
            reader.join()
            tmp_out.unlink(missing_ok=True)
            raise HmsimError("trace record", f"cannot run valgrind: {e}") from None
    if error:
        tmp_out.unlink(missing_ok=True)
        raise error[0]
    os.replace(tmp_out, out)
    result["exit_status"] = proc.returncode
    return result


TRACEFS_CANDIDATES = (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing"))
KMEM_EVENTS = ("kmem/mm_page_alloc", "kmem/mm_page_free")


def tracefs_root() -> Path:
    """The tracefs mount, mounting it at /sys/kernel/tracing if needed."""
    for root in TRACEFS_CANDIDATES:
        if (root / "available_events").exists():
            return root
    if os.geteuid() != 0:
        raise HmsimError("trace record", "kmem tracing needs root (tracefs is not mounted and cannot be mounted)")
    root = TRACEFS_CANDIDATES[0]
    p = subprocess.run(["mount", "-t", "tracefs", "nodev", str(root)], capture_output=True, text=True)
    if p.returncode != 0 or not (root / "available_events").exists():
        raise HmsimError("trace record", f"tracefs is unavailable: cannot mount it at {root}: {p.stderr.strip()}")
    return root


@contextlib.contextmanager
def _tracing_state(root: Path, settings: dict[str, str]) -> Iterator[None]:
    """Apply `settings` (tracefs file → value) and restore every previous value afterwards,
    on success, failure and Ctrl-C alike."""
    saved: dict[str, str] = {}
    try:
        for rel, value in settings.items():
            f = root / rel
            if rel != "trace":
                old = f.read_text().split()
                # buffer_size_kb reads "7 (expanded: 1408)": its first word is the setting.
                saved[rel] = old[0] if rel == "buffer_size_kb" and old else " ".join(old)
            f.write_text(value + "\n")
        yield
    finally:
        for rel, value in reversed(list(saved.items())):
            with contextlib.suppress(OSError):
                (root / rel).write_text(value + "\n")


def record_kmem(cmd: Sequence[str], out: str | Path, buffer_kb: int = 16384) -> dict:
    """Record kmem page alloc/free events of `cmd` (and its children) via tracefs."""
    if not cmd:
        raise ConfigError("trace record", "no command given after --")
    if os.geteuid() != 0:
        raise HmsimError("trace record", "kmem tracing needs root (tracefs writes)")
    root = tracefs_root()
    for ev in KMEM_EVENTS:
        if not (root / "events" / ev / "enable").exists():
            raise HmsimError("trace record", f"this kernel has no {ev} tracepoint")
    out = Path(out)
    tmp_out = _atomic_target(out)
    # The command waits on a pipe until the PID filter is set, so no early event is missed.
    gate_r, gate_w = os.pipe()
    gate = "import os, sys; fd = int(sys.argv[1]); os.read(fd, 1); os.close(fd); os.execvp(sys.argv[2], sys.argv[2:])"
    try:
        child = subprocess.Popen([sys.executable, "-c", gate, str(gate_r), *cmd], pass_fds=(gate_r,))
    except OSError as e:
        os.close(gate_r)
        os.close(gate_w)
        raise HmsimError("trace record", f"cannot start the command: {e}") from None
    os.close(gate_r)
    settings = {
        "tracing_on": "0",
        "buffer_size_kb": str(buffer_kb),
        "set_event_pid": str(child.pid),
        "options/event-fork": "1",
        "trace": "",  # clears the ring buffer
        **{f"events/{ev}/enable": "1" for ev in KMEM_EVENTS},
    }
    with tempfile.TemporaryDirectory(prefix="hmsim-kmem-") as d:
        raw = Path(d) / "kmem.txt"
        stop = threading.Event()
        try:
            with _tracing_state(root, settings):
                (root / "tracing_on").write_text("1")
                pump = threading.Thread(target=_pump, args=(root / "trace_pipe", raw, stop), daemon=True)
                pump.start()
                os.write(gate_w, b"go\n")
                os.close(gate_w)
                gate_w = -1
                status = child.wait()
                time.sleep(0.05)
                (root / "tracing_on").write_text("0")
                stop.set()
                pump.join()
        except BaseException:
            if gate_w >= 0:
                os.close(gate_w)
            child.kill()
            child.wait()
            stop.set()
            tmp_out.unlink(missing_ok=True)
            raise
        source = "kmem: " + " ".join(cmd)
        with core_progress("reading the kmem events") as bar:
            report = json.loads(_core.trace_record_stream(str(raw), str(tmp_out), "kmem", False, source, bar))
    os.replace(tmp_out, out)
    report["exit_status"] = status
    return report


def _pump(pipe: Path, dst: Path, stop: threading.Event) -> None:
    """Copy trace_pipe to `dst` until `stop` is set and the pipe is drained."""
    fd = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with open(dst, "wb") as f:
            while True:
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    chunk = b""
                if chunk:
                    f.write(chunk)
                elif stop.is_set():
                    break
                else:
                    time.sleep(0.02)
    finally:
        os.close(fd)
