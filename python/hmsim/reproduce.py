"""`hmsim reproduce STUDY|all`: run registered studies into `out/<study>/`."""

from __future__ import annotations

import sys
import types
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
    """Run study `name` (or every study for "all"); results land in `out/<name>/`, and the
    report in `out/report/` (a single study's report also lists the studies an earlier run
    left in `out`)."""
    check.name(name, "name")
    out = check.path(out, "out")
    check.flag(quick, "quick")
    check.flag(echo, "echo")
    workers = check.workers(workers)
    from hmsim.report import with_studies_on_disk, write_report

    if name == "all":
        done = {n: get(n).run(out / n, quick=quick, workers=workers, echo=echo) for n in names()}
        write_report(out, done)
        return done
    res = get(name).run(out / name, quick=quick, workers=workers, echo=echo)
    # One study's report too: it, and any other study reproduced into `out` before.
    write_report(out, with_studies_on_disk(out, {res.name: res}))
    return res


class _CallableModule(types.ModuleType):
    """`hmsim.reproduce(...)` runs a study while this module's names stay importable (the
    package loads it lazily, so the module, not the function, becomes `hmsim.reproduce`)."""

    def __call__(
        self,
        name: str,
        out: str | Path = "results",
        quick: bool = True,
        workers: int | None = None,
        echo: bool = False,
    ) -> StudyResult | dict[str, StudyResult]:
        return reproduce(name, out=out, quick=quick, workers=workers, echo=echo)

    __call__.__doc__ = reproduce.__doc__


sys.modules[__name__].__class__ = _CallableModule
