"""Every quick study's and example's results stay exactly what they were when the fingerprints
were recorded: a refactor that changes a number fails here. A model change that is meant to
move results re-records them (`python scripts/results_identical.py --record
tests/data/results_fingerprints.json`) in the same commit, saying why."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_results_match_the_recorded_fingerprints() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "results_identical.py"),
            "--check",
            str(ROOT / "tests" / "data" / "results_fingerprints.json"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "results identical" in done.stdout
