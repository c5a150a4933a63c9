"""Points whose runs are the starts of a longer point's run, run as one job.

A module may declare a prefix key (`_core.prefix_keys()`: tiering's `sim.duration_s`): its
model is causal, so a run is, result for result, the start of the same scenario's run with
a larger value there. The sweep runner groups its points to run by everything they resolve
to except that key; a group runs as one job on one worker, longest first, keeping its
results at the shorter lengths, and the shorter points take theirs from it
(`_core.run_scenario_chain`). Each point's saved output is the one its own run gives; its
`wall_time_s` is the host time of its part of the chain (near zero for a taken one).
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
    """Points run together: one, or a chain whose first is the longest and keeps its
    results at `keep` (the others' values of the prefix key)."""

    points: tuple[Point, ...]
    keep: tuple[float, ...] = ()


def jobs_of(todo: list[Point], keys: dict[str, str | None]) -> list[Job]:
    """`todo` as jobs, in order of each job's first point; `keys` are the points' run keys
    (`hmsim.sweep._run_keys`: JSON of [folder, resolved configuration])."""
    from hmsim import _core

    prefix = dict(_core.prefix_keys())
    groups: dict[str, list[tuple[float, Point]]] = {}
    order: list[list[tuple[float, Point]] | Point] = []
    for p in todo:
        cut = _without_prefix(keys.get(p.id), prefix)
        if cut is None:
            order.append(p)
            continue
        rest, value = cut
        if rest not in groups:
            groups[rest] = []
            order.append(groups[rest])
        groups[rest].append((value, p))
    jobs = []
    for item in order:
        if not isinstance(item, list):
            jobs.append(Job((item,)))
            continue
        # Longest first; lengths in a group differ (equal ones are twins, run once already).
        chain = sorted(item, key=lambda vp: -vp[0])
        keep = tuple(sorted({v for v, _ in chain[1:] if v < chain[0][0]}))
        jobs.append(Job(tuple(p for _, p in chain), keep))
    return jobs


def _without_prefix(key: str | None, prefix: dict[str, str]) -> tuple[str, float] | None:
    """(the run key without its module's prefix key, the value there), or None when the
    point's module has none (or the point is refused, or the value is not a number)."""
    if key is None:
        return None
    folder, resolved = json.loads(key)
    cfg = json.loads(resolved) if isinstance(resolved, str) else resolved
    path = prefix.get(cfg.get("module")) if isinstance(cfg, dict) else None
    if path is None:
        return None
    *tables, last = path.split(".")
    t = cfg
    for name in tables:
        t = t.get(name) if isinstance(t, dict) else None
    if not isinstance(t, dict) or not isinstance(t.get(last), int | float):
        return None
    value = float(t.pop(last))
    return json.dumps([folder, cfg], sort_keys=True), value


def run_job(job: Job, dev: list[str]) -> list[Any]:
    """Each point's output (a dict) or the error its own run raises, in the job's order."""
    if len(job.points) == 1:
        p = job.points[0]
        return [_outcome(lambda: run_raw(p.text, p.file, list(p.overrides), dev))]
    from hmsim import _core

    runs = [(p.text, p.file, list(p.overrides)) for p in job.points]
    try:
        outs = interruptible(_core.run_scenario_chain, runs, list(job.keep), dev)
    except Exception:
        # Some run of the chain is refused: each runs alone, to say which and why.
        return [_outcome(lambda p=p: run_raw(p.text, p.file, list(p.overrides), dev)) for p in job.points]
    results = []
    for text, seconds in outs:
        out = json.loads(text)
        out["wall_time_s"] = seconds
        results.append(out)
    return results


def _outcome(run: Callable[[], dict]) -> Any:
    try:
        return run()
    except Exception as e:
        return e


def deliver(job: Job, outcomes: list[Any], done: Callable[[Point, dict], None]) -> None:
    """`done(point, output)` for each point of `job` in order; a point whose run failed
    raises its error (worded by where its overrides came from) instead."""
    for p, o in zip(job.points, outcomes, strict=True):
        done(p, p.outcome(o))
