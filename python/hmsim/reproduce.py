"""`hmsim reproduce STUDY|all`: run registered studies into `out/<study>/`."""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import types
from collections.abc import Callable
from concurrent.futures import Future, wait
from pathlib import Path

from hmsim import check, host
from hmsim.errors import HmsimError
from hmsim.studies import Study, StudyResult, get, names


def reproduce(
    name: str,
    out: str | Path = "results",
    quick: bool = True,
    workers: int | None = None,
    echo: bool = False,
    replicates: int = 1,
) -> StudyResult | dict[str, StudyResult]:
    """Run study `name` (or every study for "all"); results land in `out/<name>/`, and the
    report in `out/report/` (a single study's report also lists the studies an earlier run
    left in `out`). `replicates` ≥ 2: each study's grid also at the next seeds, and what
    the seed moves in its comparison (docs/configuration.md#a-study-at-several-seeds)."""
    from hmsim.replicates import count

    check.name(name, "name")
    out = check.path(out, "out")
    check.flag(quick, "quick")
    check.flag(echo, "echo")
    workers = check.workers(workers)
    replicates = count(replicates, "replicates")
    from hmsim.report import with_studies_on_disk, write_report

    if name == "all":
        on_done = _echo if echo else None
        done = run_studies(names(), out, quick=quick, workers=workers, on_done=on_done, replicates=replicates)
        write_report(out, done)
        return done
    with host.gauged_start():
        res = get(name).run(out / name, quick=quick, workers=workers, echo=echo, replicates=replicates)
    # One study's report too: it, and any other study reproduced into `out` before.
    write_report(out, with_studies_on_disk(out, {res.name: res}))
    return res


def _echo(name: str, res: StudyResult) -> None:
    get(name).echo(res)


# The studies whose points take longest (docs/performance.md): when studies share the
# cores their points start first, and the other studies' points fill the gaps.
LONG_FIRST = ("tiering", "pm-index", "allocators")


def run_studies(
    todo: list[str],
    out: Path,
    quick: bool = True,
    workers: int | None = None,
    on_done: Callable[[str, StudyResult], None] | None = None,
    start_gauge: dict[str, float] | None = None,
    replicates: int = 1,
) -> dict[str, StudyResult]:
    """Run the studies `todo` into `out/<name>/`, side by side: each in a thread of its own,
    their points on one pool of `workers` threads (`hmsim.sweep.SharedPool`), their
    progress in one display. A study's outputs are those of running it alone: its points
    are the same, and it assembles them in its own order, whenever they finish.
    `on_done(name, result)` is called in `todo`'s order, for each study as soon as it and
    the ones before it are done. A failed study does not stop the others; its error is
    raised, naming it, once they end. Ctrl-C cancels the points not started, keeps those
    running (and every study already finished) and raises `SweepInterrupted`.
    `start_gauge`: the host-speed reading the summaries keep (`host.gauged_start`), if the
    caller took one already."""
    from hmsim.progress import shared_display
    from hmsim.sweep import BACKEND

    studies = [get(n) for n in todo]
    backend = BACKEND.get()
    if len(studies) == 1 or (backend is not None and backend.name != "local"):
        # One study, or points that run elsewhere: one study after the other, as always.
        done = {}
        with host.gauged_start(start_gauge), shared_display() if len(studies) > 1 else contextlib.nullcontext():
            for st in studies:
                done[st.name] = st.run(out / st.name, quick=quick, workers=workers, echo=False, replicates=replicates)
                if on_done is not None:
                    on_done(st.name, done[st.name])
        return done
    with host.gauged_start(start_gauge), shared_display():
        return _overlapped(studies, out, quick, workers, on_done, replicates)


def _overlapped(
    studies: list[Study],
    out: Path,
    quick: bool,
    workers: int | None,
    on_done: Callable[[str, StudyResult], None] | None,
    replicates: int = 1,
) -> dict[str, StudyResult]:
    from hmsim.sweep import SHARED_POOL, PoolSlot, SharedPool, SweepInterrupted, default_workers

    order = sorted(studies, key=lambda st: LONG_FIRST.index(st.name) if st.name in LONG_FIRST else len(LONG_FIRST))
    rank = {st.name: i for i, st in enumerate(order)}
    pool = SharedPool(workers or default_workers())
    futures: dict[str, Future] = {st.name: Future() for st in studies}

    def body(st: Study) -> None:
        fut = futures[st.name]
        fut.set_running_or_notify_cancel()
        SHARED_POOL.set(PoolSlot(pool, rank[st.name]))
        try:
            with pool.turn:
                if pool.interrupted:
                    raise SweepInterrupted(0, 0, out / st.name)
                fut.set_result(st.run(out / st.name, quick=quick, workers=workers, echo=False, replicates=replicates))
        except BaseException as e:
            fut.set_exception(e)

    # The long studies' threads first, so their points are the first submitted.
    threads = [
        threading.Thread(target=contextvars.copy_context().run, args=(body, st), name=f"hmsim-study-{st.name}")
        for st in order
    ]
    for t in threads:
        t.start()
    done: dict[str, StudyResult] = {}
    failed: list[tuple[str, BaseException]] = []
    try:
        for st in studies:
            fut = futures[st.name]
            while not wait([fut], timeout=0.25).done:
                pass  # short waits: a signal reaches this (main) thread at once
            if fut.exception() is not None:
                failed.append((st.name, fut.exception()))
                continue
            done[st.name] = fut.result()
            if on_done is not None:
                on_done(st.name, done[st.name])
    except KeyboardInterrupt:
        pool.interrupt()
        for t in threads:
            t.join()  # each study saves its running points
        pool.close()
        saved = total = 0
        for f in futures.values():
            e = f.exception()
            if isinstance(e, SweepInterrupted):
                saved, total = saved + e.done, total + e.total
            elif e is None:
                n = f.result().summary["points_ran"] + f.result().summary["points_reused"]
                saved, total = saved + n, total + n
        raise SweepInterrupted(saved, total, out) from None
    for t in threads:
        t.join()
    pool.close()
    if failed:
        name, e = failed[0]
        raise _named(e, name) from None
    return done


def cpu_breakdown(done: dict[str, StudyResult], process_s: float, wall_s: float, local: bool = True) -> str:
    """Where several studies' run spent its CPU: `process_s` of this process (the points, when
    they ran here, and the Python around them: tables, figures' layout, the report) and the
    figure processes' drawing. A study's points count only when all of them ran now (a
    reused point's time was spent by an earlier run)."""
    from hmsim.humanize import duration
    from hmsim.sweep import cpu_sum

    summaries = [r.summary for r in done.values()]
    # With replicates, the other seeds' runs are the study's too.
    reps = [s.get("replicates") or {"points_cpu_time_s": 0.0} for s in summaries]
    pairs = list(zip(summaries, reps, strict=True))
    figures = sum(
        float(s.get("figures_cpu_time_s") or 0.0) + float(r.get("figures_cpu_time_s") or 0.0) for s, r in pairs
    )
    fresh = all(not s.get("points_reused") for s in summaries)
    points = [cpu_sum([s.get("points_cpu_time_s"), r.get("points_cpu_time_s")]) for s, r in pairs]
    text = f"all: {duration(wall_s)} wall · CPU {duration(process_s + figures)}"
    if local and fresh and all(isinstance(p, int | float) for p in points):
        run = sum(points)
        return text + (
            f": points {duration(run)}, figure processes {duration(figures)}, "
            f"the rest {duration(max(process_s - run, 0.0))} (the Python around the points)"
        )
    where = "its points and " if local else ""
    text += f": this process {duration(process_s)} ({where}the Python around them)"
    return text + f", figure processes {duration(figures)}"


def _named(e: BaseException, study: str) -> BaseException:
    """`e`, saying which study raised it."""
    if isinstance(e, HmsimError):
        try:
            return type(e)(f"study {study}: {e.file}", e.detail, key=e.key, line=e.line)
        except TypeError:
            pass
    e.add_note(f"(in study {study})")
    return e


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
        replicates: int = 1,
    ) -> StudyResult | dict[str, StudyResult]:
        return reproduce(name, out=out, quick=quick, workers=workers, echo=echo, replicates=replicates)

    __call__.__doc__ = reproduce.__doc__


sys.modules[__name__].__class__ = _CallableModule
