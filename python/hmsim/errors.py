"""User-facing errors, one class per kind of fault. Every one is one line, and in the CLI
exit status 2 for bad input.

`HmsimError` is the one class to catch. Its subclasses say whose fault it is:

- `ConfigError`: a scenario, device file, override, sweep file or API/CLI argument is wrong.
- `InputDataError`: a data file (a trace, a recorded table) cannot be read as what it claims.
- `SimulationError`: a valid run could not complete (a model limit reached while running).

The Rust core raises them by its error kind; the Python side raises them directly. Each
carries `file`, `line`, `key` and `detail` (the message without the location).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["ConfigError", "HmsimError", "InputDataError", "SimulationError", "from_kind", "read_text"]

# Scenario, sweep and device files are hand-written TOML: the largest example is a few KiB.
# Reading stops past this, so `/dev/zero` or a runaway file is one error line, not all memory.
MAX_TEXT_BYTES = 4 << 20


class HmsimError(Exception):
    """An error of hmsim: where (file, line, key path) and what is wrong."""

    def __init__(self, where: str, message: str, key: str = "", line: int | None = None):
        self.file = where
        self.key = key
        self.line = line
        self.detail = message
        loc = where + (f":{line}" if line else "")
        super().__init__(f"{loc}: key '{key}': {message}" if key else f"{loc}: {message}")


class ConfigError(HmsimError):
    """Bad configuration: a scenario, device file, override, sweep file or argument."""


class InputDataError(HmsimError):
    """A data file (a trace, a recorded table) that cannot be read as what it claims to be."""


class SimulationError(HmsimError):
    """A valid run that could not complete: a model limit reached while running."""


_KINDS: dict[str, type[HmsimError]] = {
    "config": ConfigError,
    "input_data": InputDataError,
    "runtime": SimulationError,
}


def from_kind(kind: str, file: str, message: str, key: str = "", line: int | None = None) -> HmsimError:
    """The exception of the core's error kind (`config`, `input_data`, `runtime`); the
    binding calls this, so the classes are defined once, here."""
    return _KINDS.get(kind, HmsimError)(file, message, key=key, line=line)


def _kind(mode: int) -> str:
    for test, what in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def check_text_file(path: Path, what: str) -> None:
    """Refuse, before anything opens it, a path that is not a regular file of at most
    MAX_TEXT_BYTES (a directory, a FIFO that would block, a device that never ends)."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ConfigError(str(path), f"cannot read {what}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(str(path), f"is {_kind(st.st_mode)}; expected a {what} (a regular file)")
    if st.st_size > MAX_TEXT_BYTES:
        raise ConfigError(
            str(path), f"{st.st_size} bytes; a {what} is at most {MAX_TEXT_BYTES >> 20} MiB: is it a {what}?"
        )


def read_text(path: Path, what: str) -> str:
    """A UTF-8 text file (scenario, sweep) of at most MAX_TEXT_BYTES; anything else (a
    directory, a FIFO, a device, binary or mis-encoded text) is one error line naming the
    file (and the line of the first bad byte). A UTF-8 byte-order mark is dropped."""
    check_text_file(path, what)
    try:
        # O_NONBLOCK: a FIFO swapped in after the check cannot block the open.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ConfigError(str(path), f"is {_kind(st.st_mode)}; expected a {what} (a regular file)")
            data = f.read(MAX_TEXT_BYTES + 1)
    except IsADirectoryError:
        raise ConfigError(str(path), f"cannot read {what}: is a directory") from None
    except OSError as e:
        raise ConfigError(str(path), f"cannot read {what}: {e.strerror}") from None
    if len(data) > MAX_TEXT_BYTES:
        raise ConfigError(str(path), f"over {MAX_TEXT_BYTES >> 20} MiB; a {what} is at most that: is it a {what}?")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ConfigError(
            str(path), f"not UTF-8 text (byte 0x{data[e.start]:02x} at column {col}): is it a {what}?", line=line
        ) from None
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise ConfigError(str(path), f"a NUL byte: binary data, not a {what}", line=line)
    return text
