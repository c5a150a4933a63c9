"""`hmsim reproduce STUDY|all`: run registered studies into `out/<study>/`."""

from __future__ import annotations

from pathlib import Path

from hmsim import check
from hmsim.studies import StudyResult, get, names


def reproduce(
    name: str,
    out: str | Path = "results",
    quick: bool = True,
    workers: int | None = None,
    echo: bool = False,
) -> StudyResult | dict[str, StudyResult]:
    """Run study `name` (or every study for "all"); results land in `out/<name>/`."""
    check.name(name, "name")
    out = check.path(out, "out")
    check.flag(quick, "quick")
    check.flag(echo, "echo")
    workers = check.workers(workers)
    if name == "all":
        from hmsim.report import write_report

        done = {n: get(n).run(out / n, quick=quick, workers=workers, echo=echo) for n in names()}
        write_report(out, done)
        return done
    return get(name).run(out / name, quick=quick, workers=workers, echo=echo)
