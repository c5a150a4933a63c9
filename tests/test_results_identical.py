"""Every quick study's and example's results stay exactly what they were when the fingerprints
were recorded: a refactor that changes a number fails here. A model change that is meant to
move results re-records them (`python scripts/results_identical.py --record
tests/data/results_fingerprints.json`) in the same commit, saying why."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_results_match_the_recorded_fingerprints(quick_study, quick_out: Path) -> None:
    # The quick studies as this session ran them for the other tests (each run here if none
    # has yet): the same code, so the same results, without running every study again.
    from hmsim.studies import names

    for name in names():
        quick_study(name)
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "results_identical.py"),
            "--check",
            str(ROOT / "tests" / "data" / "results_fingerprints.json"),
            "--studies-from",
            str(quick_out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "results identical" in done.stdout
