"""The one sweep runner: a grid of points (scenario + overrides), run in parallel, each
finished point saved at once so a re-run resumes and Ctrl-C loses nothing finished.

From Python, call the module itself (docs/getting-started.md, "Sweeps from Python"):

    df = hmsim.sweep("base.toml", axes={"tiers.1.unloaded_latency_ns": [150, 250]})

returns the tidy results as a DataFrame (one column per axis first). Its signature:

    hmsim.sweep(base, axes, set=None, out=None, workers=None, devices=(), backend=None,
                replicates=1) -> DataFrame

    base     str | Path | Mapping: the scenario, a TOML file or a dict of its tables
    axes     Mapping[str, Sequence]: key path -> values; the grid is their cartesian product
    set      Mapping[str, Any] | None: key path -> value fixed for every point
    out      str | Path | None: folder for points, results.csv, summary.json and figures
             (a re-run resumes); None: a temporary folder, nothing kept
    workers  int | None: points run in parallel (default: the machine's cores)
    devices  Iterable[str | Path]: device files or folders beside the built-in catalog
    backend  Backend | None: where points run (Backend("local") or Backend("dask", addr))
    replicates  int: runs per point, at the scenario's seed and the ones after it (2 or more:
             what the seed moves in attrs["replicates"], docs/configuration.md#replicates)

A sweep file is TOML:

    scenario = "base.toml"          # relative to the sweep file (or an inline [scenario] table)
    [set]                           # optional: overrides applied to every point
    "job.duration_s" = 0.2
    [axes]                          # the grid: the cartesian product of these lists
    "job.queue_depth" = [1, 4, 16]
    "device.name" = ["stt-mram-ssd", "intel-optane-900p"]
    # replicates = 5                # optional: every point at 5 seeds ([axes] then optional)
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import heapq
import itertools
import json
import logging
import math
import os
import sys
import tempfile
import threading
import time
import tomllib
import types
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import tomli_w

import hmsim.replicates as rep
from hmsim import check, signals
from hmsim.catalog import device_paths
from hmsim.errors import ConfigError, read_text
from hmsim.outdir import exclusive, io_error, refuse_foreign, sweep_leftovers, write_marker
from hmsim.prefix_runs import Job, deliver, jobs_of, run_job
from hmsim.progress import progress
from hmsim.results import read_json, write_csv, write_json
from hmsim.scenario import scenario_text, toml_value


class SweepInterrupted(Exception):
    """Ctrl-C during a sweep: finished points are saved."""

    def __init__(self, done: int, total: int, out: Path):
        self.done, self.total, self.out = done, total, out
        super().__init__(f"interrupted: {done} of {total} points saved in {out}; run the same command to resume")


@dataclass(frozen=True)
class Point:
    """One run of a sweep: scenario text, overrides, and label columns for the results."""

    text: str
    file: str
    overrides: tuple[tuple[str, str], ...] = ()
    labels: tuple[tuple[str, Any], ...] = field(default=())
    # Where each override came from, for error messages (`hmsim.scenario.blame`); not part
    # of the point's identity.
    origins: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def outcome(self, out: Any) -> dict:
        """`out`, the output of this point's run, or the error it raised, raised (an error
        about an override worded by where it came from)."""
        from hmsim.errors import HmsimError
        from hmsim.scenario import blame

        if isinstance(out, HmsimError):
            raise blame(out, dict(self.origins), self.overrides) from None
        if isinstance(out, BaseException):
            raise out
        return out

    @property
    def id(self) -> str:
        h = hashlib.sha256()
        h.update(_build_id().encode())  # another build never reuses this build's points
        h.update(self.text.encode())
        h.update(json.dumps([self.file, self.overrides, self.labels], default=str).encode())
        return h.hexdigest()[:20]


@functools.cache
def _build_id() -> str:
    """The simulator build a point's result comes from: the version and the compiled core's
    bytes. A core rebuilt from changed model code has the same version number; resumed, it
    would have mixed the old model's points with the new one's."""
    from hmsim import _core

    h = hashlib.sha256(_core.__version__.encode())
    path = getattr(_core, "__file__", None)
    if path:
        with open(path, "rb") as f:  # ≈ 10 MB: a few ms, once per process
            h.update(f.read())
    return h.hexdigest()


@dataclass
class SweepResult:
    """`ran`: points new in this call, `shared` of them taking another new point's run (the
    same simulation: `ran - shared` simulations ran); `reused`: points an earlier call made."""

    results: pd.DataFrame
    tables: dict[str, pd.DataFrame]
    outputs: list[dict]
    ran: int
    reused: int
    shared: int = 0
    # Each point's run warnings (how far to trust its numbers), led by its labels.
    warnings: list[str] = field(default_factory=list)
    # What the seed moves, when the points ran at several (`replicates`).
    replicates: rep.Summary | None = None


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def _combine(points: Sequence[Point], outputs: Sequence[dict]) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Every point's rows and tables, each row led by its point's labels, typed by the
    columns the module declares (`hmsim.results.typed_frame`)."""
    from hmsim.results import typed_frame

    rows: list[dict] = []
    tables: dict[str, list[dict]] = {}
    columns: dict[str, list] = {}
    labels_seen: set[str] = set()
    for p, o in zip(points, outputs, strict=True):
        labels = dict(p.labels)
        labels_seen |= set(labels)
        rows += [{**labels, **r} for r in o["rows"]]
        for name, t in o["tables"].items():
            tables.setdefault(name, []).extend({**labels, **r} for r in t)
        for name, cols in o.get("columns", {}).items():
            columns.setdefault(name, cols)
    frame = typed_frame(rows, columns.get("results"), "sweep results", labels_seen)
    return frame, {k: typed_frame(v, columns.get(k), f"sweep table {k}", labels_seen) for k, v in tables.items()}


@dataclass(frozen=True)
class Backend:
    """Where sweep points run: `local` (threads in this process; the core releases the GIL)
    or `dask` (a Dask scheduler at `scheduler`, or a LocalCluster started for the run).
    A scheduler that does not answer within `connect_timeout_s` is a clear error (the CLI's
    `--scheduler-timeout`; its help names this default)."""

    name: str = "local"
    scheduler: str | None = None
    connect_timeout_s: float = 10.0


BACKEND: ContextVar[Backend | None] = ContextVar("hmsim_backend", default=None)
# While a study runs (`points_ledger`): its points run now and reused from an earlier run, and
# the sum of every point's own run time (`wall_time_s` in its saved output) and CPU time
# (`cpu_time_s`; None once an output saved without one is counted), new or reused.
POINTS_LEDGER: ContextVar[dict | None] = ContextVar("hmsim_points_ledger", default=None)


@contextmanager
def points_ledger() -> Iterator[dict]:
    """Count the points every `run_points` inside runs or reuses (see `POINTS_LEDGER`)."""
    ledger = {
        "ran": 0,
        "reused": 0,
        "shared": 0,
        "points_wall_time_s": 0.0,
        "points_cpu_time_s": 0.0,
        "warnings": [],
    }
    token = POINTS_LEDGER.set(ledger)
    try:
        yield ledger
    finally:
        POINTS_LEDGER.reset(token)


@contextmanager
def using_backend(backend: Backend) -> Iterator[None]:
    """Run every sweep (and study) inside the block on `backend`."""
    token = BACKEND.set(backend)
    try:
        yield
    finally:
        BACKEND.reset(token)


Done = Callable[[Point, dict], None]


def _run_local(todo: list[Job], dev: list[str], n: int, done: Done) -> None:
    pool = ThreadPoolExecutor(max_workers=n)
    pending: dict[Future, Job] = {}
    queue = iter(todo)
    stopping = threading.Event()
    try:
        # Keep at most 2n jobs in flight so Ctrl-C does not wait for a long queue.
        for job in itertools.islice(queue, 2 * n):
            pending[pool.submit(run_job, job, dev, stopping.is_set)] = job
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                job = pending.pop(fut)
                deliver(job, fut.result(), done)
                nxt = next(queue, None)
                if nxt is not None:
                    pending[pool.submit(run_job, nxt, dev, stopping.is_set)] = nxt
    except KeyboardInterrupt:
        stopping.set()
        for fut in pending:
            fut.cancel()
        # Points already running finish (the core is not interruptible) and are kept.
        for fut, job in pending.items():
            if not fut.cancelled():
                with contextlib.suppress(Exception):
                    deliver(job, fut.result(), done)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


class SharedPool:
    """`workers` threads running the points of several sweeps at once (the studies of
    `hmsim reproduce all`, each in its own thread): a point of a lower `rank` starts first,
    then the order the points were submitted in, so the long studies' points start first
    and the others fill the cores while a study waits on its last points or draws its
    figures. A point can be `alone` (timed on the host): it starts when no other point is
    running, and none starts while it runs.

    `turn`: the studies' Python (tables, figures: pandas and matplotlib, whose global
    state is not for threads) runs one study at a time; a study holds it except while
    it only waits, on its points or its figures (`turn_released`)."""

    def __init__(self, workers: int):
        self._cv = threading.Condition()
        self._heap: list[tuple[int, int, bool, Future, Callable, tuple]] = []
        self._seq = itertools.count()
        self._running = 0
        self._alone = False
        self._closed = False
        self.interrupted = False
        self.turn = threading.Lock()
        self._threads = [threading.Thread(target=self._work, name=f"hmsim-points-{i}") for i in range(workers)]
        for t in self._threads:
            t.start()

    def submit(self, rank: int, alone: bool, fn: Callable, *args: Any) -> Future:
        fut: Future = Future()
        with self._cv:
            if self.interrupted:
                fut.cancel()
                return fut
            heapq.heappush(self._heap, (rank, next(self._seq), alone, fut, fn, args))
            self._cv.notify_all()
        return fut

    def _work(self) -> None:
        while True:
            with self._cv:
                while True:
                    if self._heap and not self._alone and (not self._heap[0][2] or self._running == 0):
                        break
                    if self._closed and not self._heap:
                        return
                    self._cv.wait()
                _, _, alone, fut, fn, args = heapq.heappop(self._heap)
                self._running += 1
                self._alone = alone
            try:
                if fut.set_running_or_notify_cancel():
                    try:
                        fut.set_result(fn(*args))
                    except BaseException as e:
                        fut.set_exception(e)
            finally:
                with self._cv:
                    self._running -= 1
                    self._alone = False
                    self._cv.notify_all()

    def interrupt(self) -> None:
        """Ctrl-C: points not started are cancelled; running ones finish (and are saved)."""
        with self._cv:
            self.interrupted = True
            for job in self._heap:
                job[3].cancel()
            self._cv.notify_all()

    def close(self) -> None:
        """Wait for the running points and end the threads."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        for t in self._threads:
            t.join()


@dataclass(frozen=True)
class PoolSlot:
    """A study's place in a `SharedPool`: its points' rank."""

    pool: SharedPool
    rank: int


# Set in each study's thread while `hmsim reproduce all` overlaps the studies.
SHARED_POOL: ContextVar[PoolSlot | None] = ContextVar("hmsim_shared_pool", default=None)


@contextmanager
def turn_released() -> Iterator[None]:
    """Inside, a study sharing the pool (`SHARED_POOL`) does not hold its `turn`, for as
    long as it only waits (on its points, on its figures' drawing processes): another
    study's Python runs meanwhile. Elsewhere it does nothing."""
    slot = SHARED_POOL.get()
    if slot is None:
        yield
        return
    slot.pool.turn.release()
    try:
        yield
    finally:
        slot.pool.turn.acquire()


def _run_shared(todo: list[Job], dev: list[str], slot: PoolSlot, alone: bool, done: Done) -> None:
    """`_run_local` on the shared pool: this thread waits (giving up its turn meanwhile)
    and saves each point as it finishes; an interrupt cancels the points not started."""
    pool = slot.pool
    futures = {pool.submit(slot.rank, alone, run_job, job, dev, lambda: pool.interrupted): job for job in todo}
    pending = set(futures)
    with turn_released():
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    if not fut.cancelled():
                        deliver(futures[fut], fut.result(), done)
        except BaseException:
            for fut in pending:
                fut.cancel()  # this study's points not started; running ones are abandoned
            raise
    if any(f.cancelled() for f in futures):
        raise KeyboardInterrupt


def _run_dask(todo: list[Job], dev: list[str], n: int, done: Done, backend: Backend) -> None:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ConfigError("--backend", "dask is not installed (pip install 'dask[distributed]')") from None
    scheduler, timeout_s = backend.scheduler, backend.connect_timeout_s
    cluster = None
    try:
        if scheduler:
            client = Client(scheduler, timeout=f"{timeout_s}s")
        else:
            cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
            )
            client = Client(cluster)
    except (OSError, TimeoutError) as e:
        if cluster is not None:
            cluster.close()
        raise ConfigError(
            "--scheduler", f"cannot reach the Dask scheduler at {scheduler} within {timeout_s:g} s ({e})"
        ) from None
    futures = {}
    try:
        for job in todo:
            fut = client.submit(run_job, job, dev, key=f"hmsim-point-{job.points[0].id}", pure=False)
            futures[fut] = job
        # Results stream back as they finish and are written at once; a worker that dies only
        # loses its running task, which the scheduler reruns elsewhere.
        for fut in as_completed(futures):
            deliver(futures[fut], fut.result(), done)
    except KeyboardInterrupt:
        client.cancel(list(futures))
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_points(
    points: Sequence[Point],
    out: Path,
    workers: int | None = None,
    label: str = "sweep",
    devices: Iterable[str | Path] = (),
    backend: Backend | None = None,
    alone: bool = False,
) -> SweepResult:
    """Run every point not already saved under `out/points/`; return all, in input order.
    `alone`: each point runs with no other point beside it (its results are timed on the
    host), also when studies share a pool (`SHARED_POOL`)."""
    with exclusive(out):
        return _run_points(points, Path(out), check.workers(workers), label, devices, backend, alone)


def _run_keys(points: list[Point], dev: list[str]) -> dict[str, str | None]:
    """What each point runs, whatever its spelling, by point id: the configuration the core
    resolves from it (`summary.json`'s `resolved_config`) and the folder its relative paths
    start from; None when the core refuses it (its run then reports why). One call: the
    device catalog is read once, not per point."""
    from hmsim import _core

    resolved = _core.resolve_scenarios([(p.text, p.file, list(p.overrides)) for p in points], dev)
    return {
        p.id: None if r is None else json.dumps([str(Path(p.file).parent), r])
        for p, r in zip(points, resolved, strict=True)
    }


def _save_point(store: Path, point_id: str, output: dict) -> None:
    """A point's output in the sweep's store of points, on one line and without an fsync:
    the store is a cache, whose reader runs a point again when its file does not parse
    (what a power loss may leave of a file not flushed), so a flush per point would only
    hold the sweep up (`hmsim.atomic.atomic_write`)."""
    write_json(store / f"{point_id}.json", output, compact=True, durable=False)


def _twin_output(result: dict, ran: Point) -> dict:
    """The output of a point that runs what `ran` ran: the same, with no run time of its
    own (the study's summed point time counts the run once)."""
    return {**result, "wall_time_s": 0.0, "cpu_time_s": 0.0, "same_run_as": ran.id}


def _same_runs(
    unique: list[Point], outputs: dict[str, dict], dev: list[str], alone: bool, store: Path, workers: int
) -> tuple[list[Job], dict[str, list[Point]]]:
    """The points to run, as jobs (`hmsim.prefix_runs`: a run that is the start of a longer
    one takes its results from it), and for each point the points that run the same
    simulation (labelled differently, spelled differently): the core is deterministic, so
    one run serves them all. A point whose twin was saved by an earlier run takes that
    output now (into `outputs` and its own file). Host-timed (`alone`) points are
    measurements: each runs, alone."""
    missing = [p for p in unique if p.id not in outputs]
    if alone or not missing:
        return [Job((p,)) for p in missing], {}
    keys = _run_keys(unique, dev)
    first: dict[str, Point] = {}
    for p in unique:
        if p.id in outputs and (k := keys[p.id]) is not None:
            first.setdefault(k, p)
    todo: list[Point] = []
    twins: dict[str, list[Point]] = {}
    for p in missing:
        k = keys[p.id]
        rep = first.get(k) if k is not None else None
        if rep is None:
            todo.append(p)
            if k is not None:
                first[k] = p
        elif rep.id in outputs:
            outputs[p.id] = _twin_output(outputs[rep.id], rep)
            _save_point(store, p.id, outputs[p.id])
        else:
            twins.setdefault(rep.id, []).append(p)
    return jobs_of(todo, keys, workers), twins


def _run_points(
    points: Sequence[Point],
    out: Path,
    workers: int | None,
    label: str,
    devices: Iterable[str | Path],
    backend: Backend | None,
    alone: bool = False,
) -> SweepResult:
    backend = backend or BACKEND.get() or Backend()
    store = out / "points"
    try:
        store.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(str(store), f"mkdir: {e.strerror}") from None
    sweep_leftovers(store)
    dev = device_paths(devices)
    outputs: dict[str, dict] = {}
    for p in points:
        f = store / f"{p.id}.json"
        if p.id not in outputs and f.exists():
            try:
                outputs[p.id] = read_json(f)
            except (OSError, ValueError):
                f.unlink(missing_ok=True)  # unreadable leftovers are simply rerun
    unique = list({p.id: p for p in points}.values())
    n = workers or default_workers()
    todo, twins = _same_runs(unique, outputs, dev, alone, store, n)
    shared = sum(map(len, twins.values()))
    new_ids = {p.id for job in todo for p in job.points} | {t.id for ts in twins.values() for t in ts}
    with progress(len(unique), label, done=len(outputs)) as bar:

        def done(p: Point, result: dict) -> None:
            _save_point(store, p.id, result)
            outputs[p.id] = result
            bar.advance()
            for twin in twins.get(p.id, ()):
                outputs[twin.id] = _twin_output(result, p)
                _save_point(store, twin.id, outputs[twin.id])
                bar.advance()

        try:
            slot = SHARED_POOL.get()
            if backend.name == "dask":
                _run_dask(todo, dev, n, done, backend)
            elif todo and slot is not None:
                _run_shared(todo, dev, slot, alone, done)
            elif todo:
                _run_local(todo, dev, n, done)
        except KeyboardInterrupt:
            raise SweepInterrupted(len(outputs), len({p.id for p in points}), Path(out)) from None
    ordered = [outputs[p.id] for p in points]
    try:
        results, tables = _combine(points, ordered)
    except KeyboardInterrupt:
        # Every point is saved; only their combination is missing, and a re-run makes it.
        raise SweepInterrupted(len(outputs), len({p.id for p in points}), Path(out)) from None
    warnings = point_warnings(points, ordered)
    ledger = POINTS_LEDGER.get()
    if ledger is not None:
        ledger["warnings"].extend(warnings)
        for pid, o in outputs.items():
            key = "ran" if pid in new_ids else "reused"
            ledger[key] += 1
            ledger["points_wall_time_s"] += float(o.get("wall_time_s") or 0.0)
        cpu = [o.get("cpu_time_s") for o in outputs.values()]
        ledger["points_cpu_time_s"] = cpu_sum([ledger["points_cpu_time_s"], *cpu])
        ledger["shared"] += shared
    return SweepResult(
        results, tables, ordered, ran=len(new_ids), reused=len(unique) - len(new_ids), shared=shared, warnings=warnings
    )


def point_warnings(points: Sequence[Point], outputs: Sequence[dict]) -> list[str]:
    """The run warnings of the points (a run not steady, a trace the caches would absorb, ...),
    each led by its point's labels (`key=value, ...: warning`), each point once, in order:
    a sweep or study must not drop what its runs say about trusting their numbers."""
    seen: set[str] = set()
    found: list[str] = []
    for p, o in zip(points, outputs, strict=True):
        if p.id in seen:
            continue
        seen.add(p.id)
        lead = ", ".join(f"{k}={v}" for k, v in p.labels)
        found += [f"{lead}: {w}" if lead else w for w in o.get("warnings", [])]
    return found


def load_sweep(path: str | Path) -> tuple[list[Point], dict]:
    """Read a sweep file into points; errors name the file and the offending axis."""
    path = check.path(path, "sweep file")
    try:
        spec = tomllib.loads(read_text(path, "sweep file"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(str(path), f"not valid TOML: {e}") from None
    allowed = {"scenario", "axes", "set", "name", "description", "replicates"}
    for k in spec:
        if k not in allowed:
            raise ConfigError(str(path), f"unknown key; allowed: {', '.join(sorted(allowed))}", key=k)
    # The bounds every scenario file shares (docs/configuration.md), for the sweep file too.
    problem = _out_of_bounds(spec, [])
    if problem is not None:
        raise ConfigError(str(path), problem[1], key=problem[0])
    if "description" in spec and not isinstance(spec["description"], str):
        raise ConfigError(str(path), f"expected a string, got {type(spec['description']).__name__}", key="description")
    if "name" in spec:
        try:
            check.name(spec["name"], "name")
        except ConfigError as e:
            raise ConfigError(str(path), e.detail, key="name") from None
    scen = spec.get("scenario")
    if isinstance(scen, str):
        text, file = scenario_text(path.parent / scen)
    elif isinstance(scen, dict):
        text, file = tomli_w.dumps(scen), str(path)
    else:
        raise ConfigError(str(path), "expected a scenario file name or an inline [scenario] table", key="scenario")
    axes = spec.get("axes")
    fixed = spec.get("set", {})
    n = rep.count(spec.get("replicates", 1), str(path))
    if axes is None and n == 1:
        raise ConfigError(
            str(path), "missing [axes] (or replicates = N ≥ 2, to run the scenario alone at N seeds)", key="axes"
        )
    grid, grid_fixed = rep.with_seeds(text, fixed, axes, n, str(path))
    points = grid_points(text, file, grid, grid_fixed, str(path), (f"{path} [axes]", f"{path} [set]"))
    meta = {"file": str(path), "axes": axes or {}, "set": fixed, "name": spec.get("name", path.stem), "replicates": n}
    return points, meta


MAX_MAGNITUDE = 1e18  # the core's shared bounds (crates/hmsim/src/config/load.rs)
MAX_STRING_CHARS = 4096


def _out_of_bounds(value: Any, path: list[str]) -> tuple[str, str] | None:
    """The first value beyond the bounds every scenario file shares: (key path, message)."""
    last = path[-1] if path else ""
    key = ".".join(path)
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and last != "seed" and not last.endswith("_seed") and abs(value) > MAX_MAGNITUDE:
        return key, f"{value} is beyond any count, size or time hmsim models (at most 1e18 in magnitude)"
    never = value == float("inf") and last == "threshold_us"  # +inf: a threshold never reached
    if isinstance(value, float) and abs(value) > MAX_MAGNITUDE and not never:
        return key, f"{value} is beyond any count, size or time hmsim models (at most 1e18 in magnitude)"
    if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
        return key, f"a string of {len(value)} characters; at most {MAX_STRING_CHARS}"
    if isinstance(value, list):
        for i, v in enumerate(value):
            if (r := _out_of_bounds(v, [*path, str(i)])) is not None:
                return r
    if isinstance(value, dict):
        for k, v in value.items():
            if (r := _out_of_bounds(v, [*path, str(k)])) is not None:
                return r
    return None


#: Largest grid a sweep builds unless HMSIM_ALLOW_LARGE is set (a grid is built in memory
#: and each point keeps a file in the resume store).
MAX_SWEEP_POINTS = 1_000_000


def _large_allowed() -> bool:
    """HMSIM_ALLOW_LARGE read as the core reads it (`1`, `true` or `yes`): `=0` does not allow."""
    return os.environ.get("HMSIM_ALLOW_LARGE", "").strip().lower() in {"1", "true", "yes"}


def grid_points(
    text: str, file: str, axes: Any, fixed: Any, where: str, origins: tuple[str, str] = ("axes", "set")
) -> list[Point]:
    """The cartesian product of `axes` (key → list of values) over the scenario `text`, each
    point with the `fixed` overrides too; errors name `where` and the offending axis.
    `origins` name the axes and the fixed overrides in errors: `axes` and `set` (the Python
    arguments) or `FILE [axes]` and `FILE [set]` (a sweep file)."""
    api = origins == ("axes", "set")

    def error(section: str, message: str, key: str = "") -> ConfigError:
        # Python arguments are named as such (`axes`, `set`); a sweep file by its path.
        if api:
            return ConfigError(section, message, key=key)
        return ConfigError(where, message, key=f"{section}.{key}" if key else section)

    if not isinstance(axes, Mapping) or not axes:
        raise error("axes", f"expected a non-empty mapping of key = [values], got {type(axes).__name__}")
    for k, values in axes.items():
        if not isinstance(k, str) or not k.strip():
            raise error("axes", f"expected dotted key paths (str) as keys, got {type(k).__name__} {k!r:.60}")
        if not isinstance(values, list | tuple) or not values:
            raise error("axes", "expected a non-empty list of values for this axis", key=k)
        kinds = {type(v).__name__ for v in values}
        if len(kinds - {"int", "float"}) > 0 and len(kinds) > 1:
            raise error("axes", f"values of one axis must share a type, found {sorted(kinds)}", key=k)
        if len({json.dumps(v, default=str) for v in values}) != len(values):
            raise error("axes", "axis values repeat", key=k)
    fixed = {} if fixed is None else fixed
    if not isinstance(fixed, Mapping):
        raise error("set", f"expected a mapping of key = value, got {type(fixed).__name__}")
    for k in fixed:
        if not isinstance(k, str) or not k.strip():
            raise error("set", f"expected dotted key paths (str) as keys, got {type(k).__name__} {k!r:.60}")
        if k in axes:
            raise error("set", "set both in set and in axes", key=k)
    n_points = math.prod(len(v) for v in axes.values())
    if n_points > MAX_SWEEP_POINTS and not _large_allowed():
        sizes = " x ".join(f"{k} ({len(v)})" for k, v in axes.items())
        raise error(
            "axes",
            f"the grid has {n_points:,} points ({sizes}), more than the {MAX_SWEEP_POINTS:,} a sweep builds "
            "(each point is kept in memory and on disk); split the sweep, or set HMSIM_ALLOW_LARGE=1 to run it anyway",
        )
    axes_arg, set_arg = ("axes", "set") if api else (where, where)
    base = tuple((k, toml_value(v, k, set_arg)) for k, v in fixed.items())
    keys = list(axes)
    from_ = tuple((k, origins[1]) for k in fixed) + tuple((k, origins[0]) for k in keys)
    points = []
    for combo in itertools.product(*(axes[k] for k in keys)):
        ov = base + tuple((k, toml_value(v, k, axes_arg)) for k, v in zip(keys, combo, strict=True))
        labels = tuple((k, _label(v)) for k, v in zip(keys, combo, strict=True))
        points.append(Point(text=text, file=file, overrides=ov, labels=labels, origins=from_))
    return points


def _label(v: Any) -> Any:
    """An axis value as a results column value: lists and tables as compact JSON text
    (`["hemem"]`), one line, so a column can be grouped and plotted."""
    return json.dumps(v, default=str) if isinstance(v, list | tuple | Mapping) else v


def run_sweep(
    path: str | Path,
    out: str | Path,
    workers: int | None = None,
    devices: Iterable[str] = (),
    backend: Backend | None = None,
) -> SweepResult:
    """Run the sweep file `path` into `out` (results.csv, summary.json, figures)."""
    start = time.perf_counter()
    out = check.path(out, "out")
    workers = check.workers(workers)
    if backend is not None and not isinstance(backend, Backend):
        raise ConfigError("backend", f"expected hmsim.sweep.Backend or None, got {type(backend).__name__}")
    points, meta = load_sweep(path)
    finished: SweepResult | None = None
    try:
        with exclusive(out):
            finished = _finish_sweep(points, meta, out, workers, devices, backend, start)
    except KeyboardInterrupt:
        if finished is None:
            raise
        # The signal came as the finished sweep released its lock: its files are whole.
        n = len({p.id for p in points})
        raise SweepInterrupted(n, n, out) from None
    return finished


def _finish_sweep(
    points: list[Point],
    meta: dict,
    out: Path,
    workers: int | None,
    devices: Iterable[str],
    backend: Backend | None,
    start: float,
) -> SweepResult:
    """Runs the points and writes the combined files; summary.json, written last, is the
    completion marker: it is removed first so a folder without it is an unfinished sweep."""
    # The rule of `hmsim run`: only a new, empty or hmsim-made folder is written into.
    refuse_foreign(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise io_error(out, "mkdir", e) from None
    write_marker(out)
    (out / "summary.json").unlink(missing_ok=True)
    ids = {p.id for p in points}
    try:
        res = run_points(points, out, workers=workers, label=meta["name"], devices=devices, backend=backend)
        _summarize_replicates(res, meta)
        _write_sweep(out, points, meta, res, start)
    except SweepInterrupted:
        raise
    except Exception:
        # A signal inside a C extension's initialisation (matplotlib's, loaded for the sweep
        # figures) surfaces as another error ("ImportError: initialization failed").
        if not signals.interrupted():
            raise
        raise _interrupted(out, ids) from None
    except KeyboardInterrupt:
        # Wherever the signal landed once points ran (a progress bar closing, the combined
        # files being written), every finished point is saved and a re-run resumes.
        raise _interrupted(out, ids) from None
    return res


def run_replicates(
    scenario: str | Path,
    out: str | Path,
    overrides: Sequence[str],
    n: int,
    workers: int | None = None,
    devices: Iterable[str] = (),
) -> SweepResult:
    """`hmsim run SCENARIO --set … --replicates N`: the scenario at N seeds (the one `--set`
    or the scenario gives and the N − 1 after it), written as a sweep without axes."""
    from hmsim.scenario import parse_overrides, scenario_text

    start = time.perf_counter()
    out = check.path(out, "out")
    text, file = scenario_text(scenario)
    ov = parse_overrides(list(overrides), "--set")
    # `--set seed=…` as its TOML value (text that is none stays text, for `seeds` to refuse).
    fixed = {k: _toml_or_text(v) for k, v in ov if k == rep.SEED}
    seeds = rep.seeds(text, fixed, {}, rep.count(n, "--replicates"), "--set")
    keep = tuple((k, v) for k, v in ov if k != rep.SEED)
    origins = tuple((k, "--set") for k, _ in ov)
    points = [
        Point(text=text, file=file, overrides=(*keep, (rep.SEED, str(s))), labels=((rep.SEED, s),), origins=origins)
        for s in seeds
    ]
    meta = {"file": file, "axes": {}, "set": dict(ov), "name": Path(file).stem, "replicates": n}
    with exclusive(out):
        return _finish_sweep(points, meta, out, workers, devices, None, start)


def _toml_or_text(value: str) -> Any:
    """An override's value text as TOML reads it, or the text itself if it is not TOML."""
    try:
        return tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return value


def _summarize_replicates(res: SweepResult, meta: dict) -> None:
    """With replicates, what the seed moves (`res.replicates`), its warnings before the
    points' own."""
    from hmsim.figures import SERIES_LABELS, measured_columns, sweep_metrics

    if meta.get("replicates", 1) < 2 or not res.outputs:
        return
    module = res.outputs[0]["module"]
    res.replicates = rep.summarize(
        res.results, list(meta["axes"]), sweep_metrics(module), SERIES_LABELS, measured_columns(module)
    )
    if res.replicates is not None:
        res.warnings = res.replicates.warnings + res.warnings


def _interrupted(out: Path, ids: set[str]) -> SweepInterrupted:
    """The interruption of a sweep into `out` of the points `ids`: how many are saved."""
    saved = sum((out / "points" / f"{i}.json").exists() for i in ids)
    return SweepInterrupted(saved, len(ids), out)


def sweep(
    base: str | Path | Mapping[str, Any],
    axes: Mapping[str, Sequence[Any]],
    set: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    workers: int | None = None,
    devices: Iterable[str | Path] = (),
    backend: Backend | None = None,
    replicates: int = 1,
) -> pd.DataFrame:
    """Run scenario `base` (a TOML path or a dict) at every combination of `axes` and return
    the tidy results: one column per axis (named by its key path), then the module's columns.

    Parameters:
        base: the scenario: a TOML file's path, or a dict of its tables.
        axes: key path -> list of values; every combination is one point.
        set: key path -> value, fixed for every point (as `--set`).
        out: folder for the points, results.csv, summary.json and the sweep figures; a re-run
            into it resumes. None: the points run in a temporary folder and only the
            DataFrame is returned.
        workers: points run in parallel (default: the machine's cores).
        devices: device files or folders added to the built-in catalog.
        backend: where the points run: `Backend("local")` (threads here, the default) or
            `Backend("dask", "tcp://host:8786")`.
        replicates: runs per point, at the seeds s … s + replicates − 1 (s: the scenario's
            seed): a `seed` column, and (2 or more) what the seed moves in the frame's
            `attrs["replicates"]` (per point, row and column: mean, deviation, 95 %
            interval) and `attrs["replicates_order"]`, with warnings; `axes` may then be
            empty.

    Axis keys are any key path of the scenario, including arrays of tables
    (`tiers.1.unloaded_latency_ns` or `tiers[1].unloaded_latency_ns`); values may be numbers,
    strings, lists or tables (a list or table axis appears in the results as compact JSON text,
    `["hemem"]`). `set` fixes keys for every point. With `out`, the points, the
    results.csv, summary.json and the sweep figures are written there and a re-run resumes;
    without it the points live in a temporary directory. The points' run warnings (a window
    not steady, ...), each led by its point's labels, are in the frame's
    `attrs["warnings"]`.
    """
    from hmsim.scenario import scenario_text

    start = time.perf_counter()
    if backend is not None and not isinstance(backend, Backend):
        got = f"{type(backend).__name__} {backend!r:.60}"
        raise ConfigError("backend", f"expected hmsim.sweep.Backend or None, got {got}")
    workers = check.workers(workers)
    text, file = scenario_text(base)
    n = rep.count(replicates, "hmsim.sweep")
    grid, grid_fixed = rep.with_seeds(text, set or {}, axes, n, "hmsim.sweep")
    points = grid_points(text, file, grid, grid_fixed, "hmsim.sweep")
    meta = {
        "file": file,
        "axes": {k: list(v) for k, v in axes.items()},
        "set": dict(set or {}),
        "name": "sweep",
        "replicates": n,
    }
    if out is None:
        with tempfile.TemporaryDirectory(prefix="hmsim-sweep-") as tmp:
            res = run_points(points, Path(tmp), workers=workers, devices=devices, backend=backend)
            _summarize_replicates(res, meta)
    else:
        out = check.path(out, "out")
        with exclusive(out):
            res = _finish_sweep(points, meta, out, workers, devices, backend, start)
    # The points' run warnings travel with the frame (and, with `out`, in summary.json).
    res.results.attrs["warnings"] = res.warnings
    if res.replicates is not None:
        res.results.attrs["replicates"] = res.replicates.table
        res.results.attrs["replicates_order"] = res.replicates.order
    return res.results


def cpu_sum(seconds: Sequence[float | None]) -> float | None:
    """CPU seconds summed; None if one is unknown (a point saved without `cpu_time_s`)."""
    return None if any(c is None for c in seconds) else float(sum(seconds))


def _write_sweep(out: Path, points: list[Point], meta: dict, res: SweepResult, start: float) -> None:
    from hmsim import __version__
    from hmsim.figures import replicates_figure, sweep_figures, sweep_metrics

    write_csv(out / "results.csv", res.results)
    for name, table in res.tables.items():
        write_csv(out / f"{name}.csv", table)
    module = res.outputs[0]["module"] if res.outputs else ""
    if res.replicates is not None:
        write_csv(out / "replicates.csv", res.replicates.table)
        write_csv(out / "replicates_order.csv", res.replicates.order)
    if meta["axes"]:
        sweep_figures(res.results, list(meta["axes"]), out, module=module)
    elif res.replicates is not None:
        replicates_figure(res.replicates.table, sweep_metrics(module), out, module=module)
    # summary.json last: it marks the sweep complete.
    write_json(
        out / "summary.json",
        {
            "sweep_file": meta["file"],
            "hmsim_version": __version__,
            "points": len(points),
            "ran": res.ran,
            "reused": res.reused,
            "shared": res.shared,
            "wall_time_s": time.perf_counter() - start,
            # What the points cost (new and reused; None if one was saved without it).
            "points_cpu_time_s": cpu_sum([o.get("cpu_time_s") for o in res.outputs]),
            "axes": meta["axes"],
            "set": meta["set"],
            "seeds": sorted({o["seed"] for o in res.outputs}),
            "replicates": res.replicates.info if res.replicates is not None else None,
            "resolved_config": res.outputs[0]["resolved"] if res.outputs else None,
            "warnings": res.warnings,
        },
    )


class _CallableModule(types.ModuleType):
    """`hmsim.sweep(...)` runs a sweep while `hmsim.sweep.run_sweep` etc. stay importable."""

    def __call__(
        self,
        base: str | Path | Mapping[str, Any],
        axes: Mapping[str, Sequence[Any]],
        set: Mapping[str, Any] | None = None,
        out: str | Path | None = None,
        workers: int | None = None,
        devices: Iterable[str | Path] = (),
        backend: Backend | None = None,
        replicates: int = 1,
    ) -> pd.DataFrame:
        return sweep(
            base, axes, set=set, out=out, workers=workers, devices=devices, backend=backend, replicates=replicates
        )

    __call__.__doc__ = sweep.__doc__


sys.modules[__name__].__class__ = _CallableModule
