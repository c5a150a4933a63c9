"""User-facing errors. Every bad input becomes one line and exit status 2 in the CLI.

`ConfigError` (from the Rust core) is the one class to catch: `HmsimError`, raised for bad
input found on the Python side (sweep files, CLI and API arguments, output folders), is a
subclass of it.
"""

from __future__ import annotations

from pathlib import Path

from hmsim._core import ConfigError

__all__ = ["ConfigError", "HmsimError", "read_text"]


class HmsimError(ConfigError):
    """Bad input found on the Python side (sweep files, CLI and API arguments, output folders)."""

    def __init__(self, where: str, message: str, key: str = "", line: int | None = None):
        self.file = where
        self.key = key
        self.line = line
        self.detail = message
        loc = where + (f":{line}" if line else "")
        super().__init__(f"{loc}: key '{key}': {message}" if key else f"{loc}: {message}")


def read_text(path: Path, what: str) -> str:
    """A UTF-8 text file (scenario, sweep); a binary or mis-encoded one is one error line
    naming the line of the first bad byte."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise HmsimError(str(path), f"cannot read {what}: is a directory") from None
    except OSError as e:
        raise HmsimError(str(path), f"cannot read {what}: {e.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise HmsimError(
            str(path), f"not UTF-8 text (byte 0x{data[e.start]:02x} at column {col}): is it a {what}?", line=line
        ) from None
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise HmsimError(str(path), f"a NUL byte: binary data, not a {what}", line=line)
    return text
