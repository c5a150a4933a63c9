"""Points whose runs are the starts of a longer point's run take their outputs from it."""

from __future__ import annotations

import json

import hmsim.prefix_runs as prefix_runs
from hmsim.prefix_runs import Job, jobs_of
from hmsim.scenario import run_raw
from hmsim.sweep import Point, _run_keys, run_points
from test_tiering_window import SCENARIO as MOVING

# A small two-tier run: TPP (hint faults, scans) and MEMTIS (samples, huge-page splits).
TIERING = """module = "tiering"
seed = 3
[workload]
working_set_bytes = 8589934592
hot_set_bytes = 2147483648
[antagonist]
intensities = [0, 2]
[policy]
names = ["tpp", "memtis"]
[sim]
duration_s = 0.6
measure_last_s = 0.2
timeline = true
"""


def _points(text: str) -> list[Point]:
    f = "<prefix test>"
    return [
        Point(text, f, (("sim.duration_s", "0.3"),), (("name", "short"),)),
        Point(text, f, (), (("name", "long"),)),
        Point(text, f, (("sim.duration_s", "0.45"),), (("name", "middle"),)),
        Point(text, f, (("seed", "4"), ("sim.duration_s", "0.3")), (("name", "other seed"),)),
    ]


def test_jobs_chain_the_lengths_of_one_run_longest_first():
    points = _points(TIERING)
    jobs = jobs_of(points, _run_keys(points, []))
    assert jobs == [Job((points[1], points[2], points[0]), (0.3, 0.45), chain=True), Job((points[3],))]


def test_other_modules_and_refused_points_run_alone(scenario):
    text = scenario.read_text()
    points = [Point(text, str(scenario), (("job.duration_s", d),), (("d", d),)) for d in ("0.01", "0.02")] + [
        Point(TIERING, "<bad>", (("sim.page_bytes", "0"),)),
        Point(TIERING, "<bad>", (("sim.page_bytes", "1"),)),
    ]
    jobs = jobs_of(points, _run_keys(points, []))
    assert jobs == [Job((p,)) for p in points]


def test_a_taken_output_is_the_points_own_run(tmp_path, monkeypatch):
    alone = []
    real = prefix_runs.run_raw

    def counting(*a):
        alone.append(a[2])
        return real(*a)

    monkeypatch.setattr(prefix_runs, "run_raw", counting)
    points = _points(TIERING)
    res = run_points(points, tmp_path / "out", workers=2)
    # The chain ran in one call of the core; only the other seed ran alone.
    assert alone == [[("seed", "4"), ("sim.duration_s", "0.3")]]
    for p, out in zip(points, res.outputs, strict=True):
        own = run_raw(p.text, p.file, list(p.overrides), [])
        for key in ("rows", "tables", "warnings", "resolved"):
            assert json.dumps(out.get(key), sort_keys=True) == json.dumps(own.get(key), sort_keys=True), (p, key)
    times = {dict(p.labels)["name"]: o["wall_time_s"] for p, o in zip(points, res.outputs, strict=True)}
    # The shorter runs were taken, not simulated.
    assert times["short"] < times["long"] / 5 and times["middle"] < times["long"] / 5


def test_a_run_on_until_steady_takes_the_length_it_stops_at_from_a_longer_run(tmp_path):
    """A `sim.until_steady` point (0.5 s, doubling up to 4 s) joins the plain 2 s run's
    chain, which keeps its results at each shorter length the point may stop at; its output
    is its own run's, taken rather than simulated."""
    f = "<until steady>"
    # HeMem moving its hot set into a small default tier (steady after 0.5 s, not before),
    # beside a static placement (steady from the start).
    moving = (("policy.names", '["hemem", "static-default"]'),)
    on = (*moving, ("sim.duration_s", "0.5"), ("sim.until_steady", "true"))
    long = (*moving, ("sim.duration_s", "2"))
    points = [Point(MOVING, f, on, (("name", "until steady"),)), Point(MOVING, f, long, (("name", "long"),))]
    jobs = jobs_of(points, _run_keys(points, []))
    assert jobs == [Job((points[1], points[0]), (0.5, 1.0), chain=True)]
    res = run_points(points, tmp_path / "out", workers=1)
    for p, out in zip(points, res.outputs, strict=True):
        own = run_raw(p.text, p.file, list(p.overrides), [])
        for key in ("rows", "tables", "warnings", "resolved"):
            assert json.dumps(out.get(key), sort_keys=True) == json.dumps(own.get(key), sort_keys=True), (p, key)
    # HeMem went on to 1 s, the static placement stopped at 0.5 s: both taken.
    assert [r["run_duration_s"] for r in res.outputs[0]["rows"]] == [1.0, 0.5]
    assert res.outputs[0]["wall_time_s"] < res.outputs[1]["wall_time_s"] / 5


def test_points_after_the_same_load_run_in_order_on_one_worker():
    """pm-index's points of one index and load run as one job, in their order (the core
    keeps the load per thread); another load is another job."""
    text = 'module = "pm-index"\nseed = 1\n[index]\nname = "cceh"\n[workload]\nrecords = 2000\noperations = 2000\n'
    f = "<same start>"
    points = [
        Point(text, f, (("workload.kind", '"load"'),)),
        Point(text, f, (("workload.kind", '"load"'), ("workload.threads", "4"))),
        Point(text, f, (("workload.kind", '"a"'),)),
        Point(text, f, (("workload.kind", '"c"'), ("workload.distribution", '"zipfian"'))),
        Point(text, f, (("workload.kind", '"c"'), ("workload.records", "3000"))),
    ]
    jobs = jobs_of(points, _run_keys(points, []))
    assert jobs == [Job((points[0], points[2], points[3])), Job((points[1],)), Job((points[4],))]
    # With more workers than jobs, the job of the same start is cut in two.
    jobs = jobs_of(points, _run_keys(points, []), workers=4)
    assert jobs == [Job((points[0], points[2])), Job((points[3],)), Job((points[1],)), Job((points[4],))]


def test_an_interrupt_leaves_the_rest_of_a_job_unstarted():
    text = 'module = "pm-index"\nseed = 1\n[index]\nname = "cceh"\n[workload]\nrecords = 1000\noperations = 1000\n'
    points = tuple(Point(text, "<stop>", (("workload.kind", f'"{k}"'),)) for k in ("load", "a", "c"))
    assert len(prefix_runs.run_job(Job(points), [], stop=lambda: False)) == 3
    # Once stopped, the point running finishes and no other starts.
    assert len(prefix_runs.run_job(Job(points), [], stop=lambda: True)) == 1
