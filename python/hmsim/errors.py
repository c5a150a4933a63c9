"""User-facing errors. Every bad input becomes one line and exit status 2 in the CLI."""

from __future__ import annotations

from hmsim._core import ConfigError

__all__ = ["ConfigError", "HmsimError"]


class HmsimError(Exception):
    """Bad input found on the Python side (sweep files, CLI arguments, study names)."""

    def __init__(self, where: str, message: str, key: str = "", line: int | None = None):
        self.file = where
        self.key = key
        self.line = line
        self.detail = message
        loc = where + (f":{line}" if line else "")
        super().__init__(f"{loc}: key '{key}': {message}" if key else f"{loc}: {message}")
