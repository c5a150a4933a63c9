from __future__ import annotations

import os
from pathlib import Path

import pytest

from hmsim.cli import main

STORAGE_SCENARIO = """\
module = "storage"
seed = 7

[device]
name = "intel-optane-900p"

[job]
pattern = "random"
op = "read"
queue_depth = 8
block_size_bytes = 4096
duration_s = 0.01
"""


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    p = tmp_path / "scenario.toml"
    p.write_text(STORAGE_SCENARIO)
    return p


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run the CLI in-process: returns (exit status, stdout, stderr). The CLI's hard exit
    after an interrupt (`os._exit`, when a thread is still busy) becomes a `SystemExit` here,
    so it ends the command under test, never pytest."""

    def hard_exit(status: int) -> None:
        raise SystemExit(status)

    monkeypatch.setattr(os, "_exit", hard_exit)

    def run(*args: str) -> tuple[int, str, str]:
        try:
            code = main(list(args))
        except SystemExit as e:
            code = int(e.code or 0)
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


@pytest.fixture(scope="session")
def quick_out(tmp_path_factory) -> Path:
    """One output directory for every quick study of the session: `reproduce all` in the report
    test then reuses the points the per-study tests already ran (sweeps resume), instead of
    running every study twice."""
    return tmp_path_factory.mktemp("quick-studies")


@pytest.fixture(scope="session")
def quick_study(quick_out: Path):
    """`quick_study(name)` -> (StudyResult, study directory); each study runs once per session."""
    import hmsim

    done: dict[str, tuple] = {}

    def get(name: str):
        if name not in done:
            done[name] = (hmsim.reproduce(name, out=quick_out, quick=True), quick_out / name)
        return done[name]

    return get
