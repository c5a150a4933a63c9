"""`hmsim reproduce all` runs its studies side by side on one pool of workers, with one
progress display: each study writes what it writes when run alone, however its points
interleave with the others'."""

from __future__ import annotations

import threading
import time

import pytest

import hmsim.prefix_runs as prefix_runs
from hmsim.errors import ConfigError
from hmsim.progress import shared_display
from hmsim.reproduce import run_studies
from hmsim.sweep import SharedPool, SweepInterrupted

CHEAP = ["storage", "numa-pmem"]


def _files(folder, suffix):
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob(f"*{suffix}")}


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The two cheap studies overlapped on two workers, then each alone."""
    out = tmp_path_factory.mktemp("overlap")
    with shared_display() as display:
        together = run_studies(CHEAP, out / "together", quick=True, workers=2)
    alone = {n: run_studies([n], out / "alone", quick=True, workers=2)[n] for n in CHEAP}
    return out, display, together, alone


def test_overlapped_studies_write_the_same_csvs_as_one_by_one(both):
    out, _, together, alone = both
    assert list(together) == CHEAP  # in the order asked, whatever finished first
    for name in CHEAP:
        mine, ref = _files(out / "together" / name, ".csv"), _files(out / "alone" / name, ".csv")
        assert mine and mine.keys() == ref.keys(), name
        for f in ref:
            assert mine[f] == ref[f], f"{name}/{f} differs between overlapped and one-by-one runs"
        # The saved points too: the same ids, the same number.
        assert _files(out / "together" / name, ".json").keys() >= _files(out / "alone" / name, ".json").keys()
        assert together[name].results.equals(alone[name].results)


def test_the_one_display_counts_every_studys_points(both):
    _, display, together, _ = both
    assert set(display.rows) == set(CHEAP)
    for name, (done, total) in display.rows.items():
        # Every point is counted, those that shared another's run too (`points_shared`).
        s = together[name].summary
        assert total > 0 and done == total == s["points_ran"] and s["points_shared"] < total, name


def test_a_rerun_reuses_every_point(both, tmp_path):
    out = both[0]
    again = run_studies(CHEAP, out / "together", quick=True, workers=2)
    for name in CHEAP:
        assert again[name].summary["points_ran"] == 0 and again[name].summary["points_reused"] > 0


def test_on_done_is_called_in_the_order_asked(tmp_path):
    seen = []
    run_studies(CHEAP, tmp_path, quick=True, workers=2, on_done=lambda n, r: seen.append(n))
    assert seen == CHEAP


def test_a_failing_study_is_named_and_the_other_still_finishes(tmp_path, monkeypatch):
    real = prefix_runs.run_raw

    def fail_numa(text, file, overrides, dev):
        if "numa" in file:
            raise ConfigError(file, "broken on purpose", key="job")
        return real(text, file, overrides, dev)

    monkeypatch.setattr(prefix_runs, "run_raw", fail_numa)
    with pytest.raises(ConfigError) as e:
        run_studies(CHEAP, tmp_path, quick=True, workers=2)
    assert "study numa-pmem" in str(e.value) and "broken on purpose" in str(e.value)
    assert (tmp_path / "storage" / "summary.json").exists()  # the other study completed


def test_an_interrupt_keeps_finished_points_and_cancels_the_rest(tmp_path, monkeypatch):
    real = prefix_runs.run_raw
    calls = []

    def slow(*a):
        calls.append(1)
        time.sleep(0.05)
        return real(*a)

    monkeypatch.setattr(prefix_runs, "run_raw", slow)
    # Interrupt the main thread (as Ctrl-C would) once a few points have run.
    import _thread

    def later():
        while len(calls) < 4:
            time.sleep(0.01)
        _thread.interrupt_main()

    threading.Thread(target=later, daemon=True).start()
    with pytest.raises(SweepInterrupted) as e:
        run_studies(CHEAP, tmp_path, quick=True, workers=2)
    kept = {
        f: f.read_bytes() for n in CHEAP if (tmp_path / n).exists() for f in (tmp_path / n / "points").glob("*.json")
    }
    saved = len(kept)
    assert 0 < e.value.done == saved < e.value.total
    assert "resume" in str(e.value)
    # The same call resumes: what was saved is reused as it was (a point whose twin was
    # saved an instant before the interrupt takes that twin's output, so at least as many).
    done = run_studies(CHEAP, tmp_path, quick=True, workers=2)
    assert sum(r.summary["points_reused"] for r in done.values()) >= saved
    assert all(f.read_bytes() == b for f, b in kept.items())


def test_the_shared_pool_starts_lower_ranks_first_and_runs_alone_points_alone():
    pool = SharedPool(2)
    log, running, lock = [], [0], threading.Lock()
    gate = threading.Event()

    def job(name, hold=0.0):
        with lock:
            running[0] += 1
            log.append((name, running[0]))
        gate.wait() if name == "block" else time.sleep(hold)
        with lock:
            running[0] -= 1
        return name

    first = [pool.submit(0, False, job, "block"), pool.submit(0, False, job, "block")]
    while len(log) < 2:
        time.sleep(0.01)
    later = [
        pool.submit(5, False, job, "cheap"),
        pool.submit(1, True, job, "timed", 0.05),
        pool.submit(1, False, job, "long"),
    ]
    gate.set()
    for f in first + later:
        f.result(timeout=10)
    pool.close()
    order = [n for n, _ in log[2:]]
    assert order.index("timed") < order.index("cheap") and order.index("long") < order.index("cheap")
    assert dict(log[2:])["timed"] == 1  # nothing ran beside the host-timed point


def test_a_study_waiting_for_its_figures_lets_another_study_take_the_turn(tmp_path):
    """A study that has handed its figures to the drawing processes holds no turn while it
    waits for them: another study's Python (its next sweep, its tables) goes on meanwhile."""
    import contextlib
    import contextvars

    from hmsim import plotting
    from hmsim.sweep import SHARED_POOL, PoolSlot, turn_released

    pool = SharedPool(1)
    seen = {}

    def study():
        SHARED_POOL.set(PoolSlot(pool, 0))
        with pool.turn:

            @contextlib.contextmanager
            def waiting():
                seen["held_before"] = pool.turn.locked()
                with turn_released():
                    # Another thread (another study) can take the turn now.
                    other = threading.Thread(target=lambda: seen.setdefault("other", pool.turn.acquire(timeout=5)))
                    other.start()
                    other.join()
                    pool.turn.release()
                    yield

            with plotting.figures_in_background(waiting):
                fig, ax = plotting.plt.subplots()
                ax.plot([1, 2], [3, 4], label="s")
                plotting.save_figure(fig, tmp_path, "f")
            seen["held_after"] = pool.turn.locked()

    t = threading.Thread(target=contextvars.copy_context().run, args=(study,))
    t.start()
    t.join(timeout=60)
    pool.close()
    assert seen == {"held_before": True, "other": True, "held_after": True}
    assert (tmp_path / "f.png").exists()
