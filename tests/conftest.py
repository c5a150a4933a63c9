from __future__ import annotations

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
def cli(capsys):
    """Run the CLI in-process: returns (exit status, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run
