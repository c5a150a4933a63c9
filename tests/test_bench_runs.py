"""`hmsim bench --repeat`: passes combined per benchmark (median, range, load average, host gauge)."""

from __future__ import annotations

import json
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hmsim.bench_runs import GAUGE_MOVED, combine, compare, gauge_moved, gauge_range_text, gauge_summary, ratio_text

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


ZEN5 = {
    "cpu_model": "AMD EPYC",
    "cpu_id": "family 26, model 2, stepping 1",
    "logical_cpus": 2,
    "build": "profile-guided",
}
ZEN4 = {**ZEN5, "cpu_id": "family 25, model 17, stepping 1"}


def _run(walls: list[float], host: dict, compute: float = 880.0, case: str = "a", count: int = 100) -> dict:
    """One benchmark of a bench run as `hmsim bench --json` writes it."""
    one = {"module": "m", "case": case, "unit": "requests", "count": count}
    (r,) = combine([[{**one, "wall_s": w}] for w in walls])
    gauge = {"compute_m_per_s": compute, "compute_m_per_s_runs": [compute], "memory_m_per_s": 10.0}
    return {**r, "host": host, "host_gauge": {**gauge, "memory_m_per_s_runs": [10.0]}}


def test_a_baseline_of_the_same_machine_gives_ratios_and_says_whether_they_are_past_the_spread():
    rows, warnings = compare([_run([1.0, 1.1, 1.2], ZEN5)], [_run([1.15, 1.25, 1.3], ZEN5)])
    (row,) = rows
    assert row["ratio"] == pytest.approx(1.25 / 1.1) and row["overlap"] is True
    assert warnings == []
    assert "within the passes' spread" in ratio_text(row)
    rows, _ = compare([_run([0.5, 0.55, 0.6], ZEN5)], [_run([1.0, 1.1, 1.2], ZEN5)])
    assert rows[0]["overlap"] is False and "outside both runs' pass spread" in ratio_text(rows[0])
    # One pass has no spread: no verdict either way.
    rows, _ = compare([_run([0.5], ZEN5)], [_run([1.0, 1.1, 1.2], ZEN5)])
    assert rows[0]["overlap"] is None and "--repeat 3" in ratio_text(rows[0])


def test_a_baseline_from_another_machine_build_or_host_speed_is_a_warning():
    # Zen 4 and Zen 5 both print `AMD EPYC`: the generation tells them apart.
    _, w = compare([_run([1.0, 1.0], ZEN5)], [_run([1.0, 1.0], ZEN4, compute=730.0)])
    assert any("another machine" in x and "family 25" in x and "family 26" in x for x in w)
    assert any("gauge differs" in x and "730.0 → 880.0" in x for x in w)
    _, w = compare([_run([1.0, 1.0], ZEN5)], [_run([1.0, 1.0], {**ZEN5, "build": "plain"})])
    assert len(w) == 1 and "built plain, this one profile-guided" in w[0]
    # Within a tenth, the same speed.
    _, w = compare([_run([1.0, 1.0], ZEN5, compute=880.0)], [_run([1.0, 1.0], ZEN5, compute=820.0)])
    assert w == []


def test_benchmarks_in_one_run_only_or_with_other_work_get_no_ratio():
    now = [_run([1.0, 1.0], ZEN5, case="a"), _run([1.0, 1.0], ZEN5, case="b", count=50)]
    then = [_run([1.0, 1.0], ZEN5, case="b"), _run([1.0, 1.0], ZEN5, case="c")]
    rows, w = compare(now, then)
    notes = {r["case"]: r["note"] for r in rows}
    assert notes["a"] == "not in the baseline" and notes["c"] == "not run now"
    assert notes["b"].startswith("other work: 50") and all(r["ratio"] is None for r in rows)
    assert any("another --scale" in x for x in w)
    _, w = compare([_run([1.0, 1.0], ZEN5, case="x")], then)
    assert any("nothing compared" in x for x in w)


def test_bench_baseline_compares_with_an_earlier_json_run(cli, tmp_path):
    code, out, _ = cli("bench", "--module", "storage", "--scale", "0.01", "--json")
    assert code == 0
    base = tmp_path / "base.json"
    base.write_text(out)
    code, out, _ = cli("bench", "--module", "storage", "--scale", "0.01", "--baseline", str(base))
    assert code == 0 and f"against the baseline {base}:" in out and "× the baseline" in out
    code, out, _ = cli("bench", "--module", "storage", "--scale", "0.01", "--json", "--baseline", str(base))
    (r,) = json.loads(out)
    assert r["vs_baseline"]["ratio"] > 0 and r["vs_baseline"]["overlap"] is None


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{x", ":1: not JSON"),
        ("[]", "non-empty list"),
        ("[1]", "'[0]': expected an object"),
        ('[{"module": "storage", "case": "a", "count": 1}]', "'[0].per_wall_second': expected a number"),
    ],
)
def test_a_bad_baseline_is_one_error_before_any_benchmark(cli, tmp_path, text, says):
    base = tmp_path / "base.json"
    base.write_text(text)
    code, out, err = cli("bench", "--module", "storage", "--baseline", str(base))
    assert code == 2 and says in err and "Traceback" not in err and "storage" not in out
