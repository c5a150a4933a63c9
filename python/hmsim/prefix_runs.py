"""Points whose runs share their start, run as one job on one worker.

A module may declare a prefix key (`_core.prefix_keys()`: tiering's `sim.duration_s`): its
model is causal, so a run is, result for result, the start of the same scenario's run with
a larger value there. The sweep runner groups its points to run by everything they resolve
to except that key; a group runs as one job on one worker, longest first, keeping its
results at the shorter lengths, and the shorter points take theirs from it
(`_core.run_scenario_chain`). Each point's saved output is the one its own run gives; its
`wall_time_s` and `cpu_time_s` are the host time of its part of the chain (near zero for a
taken one).

Keys that only say where a run stops (`_core.stop_keys()`: tiering's `sim.until_steady` and
`sim.max_duration_s`) are left out of the grouping too: the longest run then also keeps its
results at every length such a run may stop at (`_core.stop_lengths`), and the run takes the
one it would have stopped at.

A module may also declare keys that leave a run's start unchanged (`_core.same_start_keys()`:
pm-index's YCSB workload and distribution, and how often the native run is timed, after the
same load). It keeps that start per thread, so points differing only there run as one job,
one after another in their order, on one worker: each after the first starts from the kept
state.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hmsim.scenario import run_raw
from hmsim.signals import interruptible

if TYPE_CHECKING:
    from hmsim.sweep import Point


@dataclass(frozen=True)
class Job:
    """Points run together, in order: one; points of the same start (`chain` False); or a
    chain whose first is the longest and keeps its results at `keep` (the others' values
    of the prefix key)."""

    points: tuple[Point, ...]
    keep: tuple[float, ...] = ()
    chain: bool = False


def jobs_of(todo: list[Point], keys: dict[str, str | None], workers: int = 1) -> list[Job]:
    """`todo` as jobs, in order of each job's first point; `keys` are the points' run keys
    (`hmsim.sweep._run_keys`: JSON of [folder, resolved configuration]). While there are
    fewer jobs than `workers`, the longest job of points of the same start is cut in two
    (each half starts anew): a small sweep keeps every worker busy."""
    from hmsim import _core

    prefix = {m: [k] for m, k in _core.prefix_keys()}
    stops = dict(_core.stop_keys())
    start = dict(_core.same_start_keys())
    groups: dict[str, list[tuple[float, Point]]] = {}
    chains: set[str] = set()
    order: list[str | Point] = []
    for p in todo:
        cut = _cut(keys.get(p.id), prefix, stops)
        is_prefix = cut is not None and all(isinstance(v, int | float) for v in cut[1])
        if not is_prefix:
            cut = _cut(keys.get(p.id), start)
        if cut is None:
            order.append(p)
            continue
        rest, values = cut
        if rest not in groups:
            groups[rest] = []
            order.append(rest)
            if is_prefix:
                chains.add(rest)
        groups[rest].append((float(values[0]) if is_prefix else 0.0, p))
    jobs = []
    for item in order:
        if not isinstance(item, str):
            jobs.append(Job((item,)))
        elif len(groups[item]) == 1:
            jobs.append(Job((groups[item][0][1],)))
        elif item in chains:
            # Longest first. Equal lengths are twins (run once already) or a run going on until
            # steady beside a plain one of its first length (a kept result is taken once: one of
            # the two may simulate).
            # The others stop at their own length or, going on until steady, at one of theirs.
            chain = sorted(groups[item], key=lambda vp: -vp[0])
            stop_at = {d for _, p in chain[1:] for d in _stop_lengths(keys.get(p.id)) if d < chain[0][0]}
            keep = tuple(sorted({v for v, _ in chain[1:]} | stop_at))
            jobs.append(Job(tuple(p for _, p in chain), keep, chain=True))
        else:
            jobs.append(Job(tuple(p for _, p in groups[item])))
    while 0 < len(jobs) < workers:
        i, longest = max(enumerate(jobs), key=lambda ij: (not ij[1].chain, len(ij[1].points)))
        if longest.chain or len(longest.points) < 2:
            break
        half = (len(longest.points) + 1) // 2
        jobs[i : i + 1] = [Job(longest.points[:half]), Job(longest.points[half:])]
    return jobs


def _cut(
    key: str | None, paths: dict[str, list[str]], drop: dict[str, list[str]] | None = None
) -> tuple[str, list[Any]] | None:
    """(the run key without the key paths `paths` names for the point's module, nor those
    `drop` names, the values at `paths`), or None when the module has no `paths` (or the
    point is refused, or a value there is missing)."""
    if key is None:
        return None
    folder, resolved = json.loads(key)
    cfg = json.loads(resolved) if isinstance(resolved, str) else resolved
    module = cfg.get("module") if isinstance(cfg, dict) else None
    if module not in paths:
        return None
    values = []
    for path in paths[module] + (drop or {}).get(module, []):
        *tables, last = path.split(".")
        t = cfg
        for name in tables:
            t = t.get(name) if isinstance(t, dict) else None
        if path in paths[module]:
            if not isinstance(t, dict) or last not in t:
                return None
            values.append(t.pop(last))
        elif isinstance(t, dict):
            t.pop(last, None)
    return json.dumps([folder, cfg], sort_keys=True), values


def _stop_lengths(key: str | None) -> list[float]:
    """The lengths at which the run of `key` may stop, by its module (`_core.stop_lengths`:
    tiering's `sim.until_steady` runs double their length up to a cap)."""
    from hmsim import _core

    if key is None:
        return []
    resolved = json.loads(key)[1]
    return _core.stop_lengths(resolved if isinstance(resolved, str) else json.dumps(resolved))


def run_job(job: Job, dev: list[str], stop: Callable[[], bool] | None = None) -> list[Any]:
    """Each point's output (a dict) or the error its own run raises, in the job's order.
    Once `stop()` is true (an interrupt), points of the same start not yet begun are left
    out: the list is then shorter than the job (a chain, one call of the core, runs whole)."""
    if not job.chain:
        outcomes = []
        for p in job.points:
            if outcomes and stop is not None and stop():
                break
            outcomes.append(_outcome(lambda p=p: run_raw(p.text, p.file, list(p.overrides), dev)))
        return outcomes
    from hmsim import _core

    runs = [(p.text, p.file, list(p.overrides)) for p in job.points]
    try:
        outs = interruptible(_core.run_scenario_chain, runs, list(job.keep), dev)
    except Exception:
        # Some run of the chain is refused: each runs alone, to say which and why.
        return [_outcome(lambda p=p: run_raw(p.text, p.file, list(p.overrides), dev)) for p in job.points]
    results = []
    for text, seconds, cpu_s in outs:
        out = json.loads(text)
        out["wall_time_s"] = seconds
        out["cpu_time_s"] = cpu_s
        results.append(out)
    return results


def _outcome(run: Callable[[], dict]) -> Any:
    try:
        return run()
    except Exception as e:
        return e


def deliver(job: Job, outcomes: list[Any], done: Callable[[Point, dict], None]) -> None:
    """`done(point, output)` for each point of `job` that ran, in order; a point whose run
    failed raises its error (worded by where its overrides came from) instead."""
    for p, o in zip(job.points, outcomes, strict=False):
        done(p, p.outcome(o))
