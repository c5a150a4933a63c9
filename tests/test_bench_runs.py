"""`hmsim bench --repeat`: passes combined per benchmark (median, range, load average, host gauge)."""

from __future__ import annotations

import json
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hmsim.bench_runs import GAUGE_MOVED, combine, gauge_moved, gauge_range_text, gauge_summary

walls = st.floats(min_value=1e-6, max_value=1e3, allow_nan=False, allow_infinity=False)


def _pass(times: list[float]) -> list[dict]:
    return [
        {"module": "m", "case": f"case {i}", "unit": "requests", "count": 1000 * (i + 1), "wall_s": t}
        for i, t in enumerate(times)
    ]


@given(st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(walls, min_size=n, max_size=n), min_size=1, max_size=7)))
def test_each_benchmark_reports_the_median_pass_and_the_range(passes):
    out = combine([_pass(p) for p in passes])
    assert [r["case"] for r in out] == [f"case {i}" for i in range(len(passes[0]))]
    for i, r in enumerate(out):
        times = [p[i] for p in passes]
        assert r["repeats"] == len(passes) and r["wall_s_runs"] == times
        assert r["wall_s"] == statistics.median(times)
        assert r["per_wall_second"] == pytest.approx(r["count"] / r["wall_s"])
        # The median pass's rate lies between the slowest and the fastest pass's.
        assert r["per_wall_second_min"] <= r["per_wall_second"] * (1 + 1e-12)
        assert r["per_wall_second"] <= r["per_wall_second_max"] * (1 + 1e-12)


def test_passes_that_ran_different_benchmarks_are_refused():
    a = _pass([1.0, 2.0])
    b = _pass([1.0])
    with pytest.raises(ValueError, match="different benchmarks"):
        combine([a, b])


def test_bench_repeat_reports_every_pass_and_the_load(cli):
    code, out, _ = cli("bench", "--module", "storage", "--scale", "0.01", "--repeat", "3", "--json")
    assert code == 0
    (r,) = json.loads(out)
    assert r["repeats"] == 3 and len(r["wall_s_runs"]) == 3
    assert r["wall_s"] == statistics.median(r["wall_s_runs"])
    assert r["per_wall_second_min"] <= r["per_wall_second"] <= r["per_wall_second_max"]
    assert len(r["load_average"]) == 2


def test_bench_text_names_the_load_and_the_spread(cli):
    code, out, _ = cli("bench", "--module", "storage", "--scale", "0.01", "--repeat", "2")
    assert code == 0
    assert out.startswith("load average (1 min): ")
    assert "median of 2, " in out


def test_bench_repeat_out_of_range_is_a_usage_error(cli):
    code, _, err = cli("bench", "--module", "storage", "--repeat", "0")
    assert code == 2 and "--repeat" in err and "Traceback" not in err


def test_gauge_summary_keeps_every_reading_and_their_median():
    gauges = [
        {"compute_m_per_s": 300.0, "memory_m_per_s": 20.0},
        {"compute_m_per_s": 100.0, "memory_m_per_s": 10.0},
        {"compute_m_per_s": 200.0, "memory_m_per_s": 40.0},
    ]
    g = gauge_summary(gauges)
    assert g["compute_m_per_s"] == 200.0 and g["memory_m_per_s"] == 20.0
    assert g["compute_m_per_s_runs"] == [300.0, 100.0, 200.0]
    assert g["memory_m_per_s_runs"] == [20.0, 10.0, 40.0]
    text = gauge_range_text(g)
    assert "median of 3 readings" in text
    assert "compute 200.0 M steps/s [100.0–300.0]" in text
    assert "memory 20.0 M dependent reads/s [10.0–40.0]" in text
    assert gauge_summary([]) == {} and gauge_range_text({}) == ""


def test_bench_times_the_host_gauge_beside_every_pass(cli):
    code, out, _ = cli("bench", "--module", "storage", "--scale", "0.01", "--repeat", "2", "--json")
    assert code == 0
    (r,) = json.loads(out)
    g = r["host_gauge"]
    for name in ("compute_m_per_s", "memory_m_per_s"):
        # One reading before each of the 2 passes and one after the last.
        assert len(g[f"{name}_runs"]) == 3
        assert all(x > 0 for x in g[f"{name}_runs"])
        assert g[name] == statistics.median(g[f"{name}_runs"])
    code, out, _ = cli("bench", "--module", "storage", "--scale", "0.01")
    assert code == 0 and "host speed gauge (median of 2 readings [range]): compute " in out


def test_a_gauge_that_moved_during_the_run_is_a_warning():
    steady = gauge_summary(
        [{"compute_m_per_s": 600.0, "memory_m_per_s": 9.0}, {"compute_m_per_s": 560.0, "memory_m_per_s": 8.0}]
    )
    assert gauge_moved(steady) == ""
    slow = 9.0 / (1 + GAUGE_MOVED) * 0.95
    moved = gauge_summary(
        [{"compute_m_per_s": 600.0, "memory_m_per_s": 9.0}, {"compute_m_per_s": 590.0, "memory_m_per_s": slow}]
    )
    text = gauge_moved(moved)
    assert text.startswith("warning: the host's speed moved during this run") and "memory 37 %" in text
    assert "compute" not in text and gauge_moved({}) == ""
