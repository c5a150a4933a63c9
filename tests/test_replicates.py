"""Replicates: every point at several seeds, and what the seed moves (docs/configuration.md#replicates)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hmsim
from hmsim.errors import ConfigError
from hmsim.replicates import CI_WARN_REL, interval, summarize, t975
from hmsim.sweep import run_sweep

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
ALLOC = EXAMPLES / "allocators-compare.toml"


def test_t_quantiles_match_the_published_table():
    # Student's t, 97.5 %: df 1, 4, 30 from the table; 40, 60, 120 through the expansion
    # (exact values 2.0211, 2.0003, 1.9799), and the normal quantile in the limit.
    assert t975(1) == pytest.approx(12.706)
    assert t975(4) == pytest.approx(2.776)
    assert t975(30) == pytest.approx(2.042)
    for df, exact in ((40, 2.0211), (60, 2.0003), (120, 1.9799), (10**6, 1.95996)):
        assert abs(t975(df) - exact) < 1e-3, df
    assert all(t975(d) > t975(d + 1) for d in range(1, 200))


def test_the_interval_of_a_known_sample():
    mean, std, half = interval(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert mean == 3.0
    assert std == pytest.approx(math.sqrt(2.5))
    assert half == pytest.approx(2.776 * math.sqrt(2.5) / math.sqrt(5), rel=1e-4)


def test_the_interval_covers_the_true_mean_95_percent_of_the_time():
    # Normal samples of 5: a 95 % interval of the mean holds the true mean in ≈ 95 % of them.
    rng = np.random.default_rng(1)
    trials = 4000
    hits = 0
    for _ in range(trials):
        v = rng.normal(10.0, 2.0, size=5)
        mean, _, half = interval(v)
        hits += abs(mean - 10.0) <= half
    assert 0.94 <= hits / trials <= 0.96


def _frame(values: list[list[float]], rows: list[str]) -> pd.DataFrame:
    """A sweep's results: one point, `rows` per seed, values[seed][row] in `m`."""
    return pd.DataFrame(
        [{"seed": s + 1, "policy": r, "m": v} for s, vs in enumerate(values) for r, v in zip(rows, vs, strict=True)]
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=3, max_size=3),
        min_size=2,
        max_size=8,
    )
)
def test_summary_is_the_replicates_statistics_and_counts_every_seed(values):
    rows = ["a", "b", "c"]
    s = summarize(_frame(values, rows), [], ["m"], ["policy"])
    assert s is not None
    arr = np.array(values)
    for i, r in enumerate(rows):
        got = s.table[(s.table.metric == "m") & (s.table.policy == r)].iloc[0]
        assert got.replicates == len(values)
        assert got["mean"] == pytest.approx(arr[:, i].mean(), abs=1e-6)
        assert got["std"] == pytest.approx(arr[:, i].std(ddof=1), abs=1e-6)
        assert got.ci95_low <= got["mean"] <= got.ci95_high
        assert got["min"] == arr[:, i].min() and got["max"] == arr[:, i].max()
    # Each pair of rows: the seeds where one is higher, the other, or they tie, add up.
    assert len(s.order) == 3
    assert ((s.order.a_higher_seeds + s.order.b_higher_seeds + s.order.equal_seeds) == len(values)).all()
    for _, p in s.order.iterrows():
        assert p.settled == (p.a_higher_seeds == 0 or p.b_higher_seeds == 0)


def test_rows_that_swap_with_the_seed_and_wide_intervals_are_warned_about():
    # b is above a in two seeds and below in one: not a finding; a's interval is ±≈ 100 %.
    s = summarize(_frame([[1.0, 2.0], [3.0, 2.5], [1.5, 2.6]], ["a", "b"]), [], ["m"], ["policy"])
    assert s.info["order_unsettled"] == 1
    text = "\n".join(s.warnings)
    assert "order of rows by m changes with the seed" in text
    assert "policy=a is above policy=b in 1 of 3 seeds and below in 2, by -50.00% … +20.00%" in text
    assert "95 % confidence interval over 3 seeds" in text
    assert "(at )" not in text  # one point, no axes: no empty place
    # The same column timed on the host: summarised and marked, not warned about.
    timed = summarize(_frame([[1.0, 2.0], [3.0, 2.5], [1.5, 2.6]], ["a", "b"]), [], ["m"], ["policy"], frozenset({"m"}))
    assert timed.warnings == [] and timed.table.host_timed.all()
    # Rows apart in every seed, and tight: no warning.
    calm = summarize(_frame([[1.0, 2.0], [1.01, 2.02], [0.99, 1.98]], ["a", "b"]), [], ["m"], ["policy"])
    assert calm.warnings == [] and calm.info["order_unsettled"] == 0
    assert max(calm.info["ci95_rel_max"].values()) < CI_WARN_REL
    # One seed: nothing to summarise.
    assert summarize(_frame([[1.0, 2.0]], ["a", "b"]), [], ["m"], ["policy"]) is None


def test_a_sweep_runs_each_point_at_consecutive_seeds_and_summarises_them(tmp_path):
    sweep = tmp_path / "seeds.toml"
    sweep.write_text(f'scenario = "{ALLOC}"\nreplicates = 4\n')
    out = tmp_path / "out"
    res = run_sweep(sweep, out, workers=2)
    assert res.ran == 4
    df = pd.read_csv(out / "results.csv")
    assert sorted(df.seed.unique()) == [1, 2, 3, 4]  # the scenario's seed (1) and the three after it
    # Each replicate is exactly the run at its seed.
    one = hmsim.run(ALLOC, set={"seed": 3}).results
    pd.testing.assert_series_equal(
        df[df.seed == 3].mean_cycles.reset_index(drop=True), one.mean_cycles.reset_index(drop=True), check_names=False
    )
    table = pd.read_csv(out / "replicates.csv")
    buddy = table[(table.name == "buddy") & (table.metric == "mean_cycles")].iloc[0]
    assert buddy["mean"] == pytest.approx(df[df.name == "buddy"].mean_cycles.mean())
    assert buddy.replicates == 4
    order = pd.read_csv(out / "replicates_order.csv")
    assert set(order.metric) == {"mean_cycles", "p99_cycles", "alloc_count_cov"}
    assert len(order) == 3 * 6  # 4 allocators: 6 pairs per headline metric
    summary = json.loads((out / "summary.json").read_text())
    assert summary["replicates"]["seeds"] == [1, 2, 3, 4]
    assert (out / "sweep.png").exists()
    # Resumed: every replicate is reused.
    assert run_sweep(sweep, out, workers=2).reused == 4


def test_replicates_start_at_the_seed_the_sweep_sets_and_keep_the_axes(tmp_path):
    df = hmsim.sweep(ALLOC, {"frames": [65536, 131072]}, set={"seed": 7}, replicates=3)
    assert sorted(df.seed.unique()) == [7, 8, 9]
    assert len(df.groupby(["frames", "seed"])) == 6
    table = df.attrs["replicates"]
    assert set(table.frames) == {65536, 131072}
    assert (table.replicates == 3).all()


@pytest.mark.parametrize("bad", ["0", "true", '"3"', "1001", "2.5"])
def test_a_bad_replicate_count_names_the_key(cli, tmp_path, bad):
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'scenario = "{ALLOC}"\nreplicates = {bad}\n')
    code, _, err = cli("sweep", str(sweep), "--out", str(tmp_path / "o"))
    assert code == 2, err
    assert "replicates" in err and "expected an integer 1 … 1000" in err
    assert "Traceback" not in err


def test_replicates_and_a_seed_axis_are_one_choice_too_many(tmp_path):
    with pytest.raises(ConfigError, match="replicates and a seed axis"):
        hmsim.sweep(ALLOC, {"seed": [1, 2]}, replicates=2)


def test_the_command_prints_what_the_seed_moves(cli, tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'scenario = "{ALLOC}"\nreplicates = 3\n')
    code, out, err = cli("sweep", str(sweep), "--out", str(tmp_path / "o"))
    assert code == 0, err
    assert "replicates: 3 seeds (1–3); widest 95 % interval of a mean: mean_cycles ±" in out
    assert "rows in the same order in every seed:" in out


# A study at several seeds (`hmsim reproduce STUDY --replicates N`).


def _comparison(simulated: list[float], published: list[float], roles: list[str]) -> pd.DataFrame:
    from hmsim.studies.base import Published, comparison_frame

    return comparison_frame(
        [Published(f"m{i}", p, s, role=r) for i, (s, p, r) in enumerate(zip(simulated, published, roles, strict=True))]
    )


def test_a_compared_number_whose_verdict_is_the_seeds_is_named():
    roles = ["validation", "validation", "input"]
    runs = [
        _comparison([1.05, 2.0, 9.0], [1.0, 2.0, 1.0], roles),
        _comparison([1.12, 2.0, 9.0], [1.0, 2.0, 1.0], roles),
        _comparison([1.08, 2.0, 9.0], [1.0, 2.0, 1.0], roles),
    ]
    from hmsim.replicates import compare_seeds

    s = compare_seeds(runs, [1, 2, 3])
    m0 = s.table[s.table.metric == "m0"].iloc[0]
    assert m0.within_10pct_seeds == 2 and m0.ratio_min == pytest.approx(1.05) and m0.ratio_max == pytest.approx(1.12)
    assert m0.simulated_mean == pytest.approx(1.0833333)
    assert s.info["compared"] == 2 and s.info["verdict_changes"] == 1  # the input row is not compared
    assert s.info["ci95_rel_max_metric"] == "m0"
    text = "\n".join(s.warnings)
    assert "m0 is within 10 % of the published number in 2 of 3 seeds" in text
    assert "m0 moves with the seed" in text  # ±8 % at 95 %
    assert "m1" not in text and "m2" not in text


def test_a_table_value_whose_sign_is_the_seeds_is_named_unless_timed_on_the_host():
    from hmsim.replicates import tables_across_seeds

    def table(gain: float, timed: float) -> pd.DataFrame:
        return pd.DataFrame(
            {"workload": ["a", "a"], "threads": [1, 4], "improvement": [0.2, gain], "host_gain": [timed, 0.1]}
        )

    per_seed = [{"t": table(0.01, -0.3)}, {"t": table(-0.02, 0.4)}, {"t": table(0.03, 0.2)}]
    s = tables_across_seeds(per_seed, warn=["t"], host_timed={"t": frozenset({"host_gain"})})
    flips = s.table[s.table.sign_changes]
    assert set(zip(flips.column, flips.row, strict=True)) == {
        ("improvement", "workload=a, threads=4"),
        ("host_gain", "workload=a, threads=1"),
    }
    assert s.info["sign_changes"] == {"t": 1}
    assert len(s.warnings) == 1 and "improvement at workload=a, threads=4 (-0.02 … 0.03)" in s.warnings[0]
    # A column the seed does not move is a label, not a statistic.
    assert "threads" not in set(s.table.column)
    # Not a table of the study's: no warning.
    assert tables_across_seeds(per_seed, warn=[]).warnings == []


def test_a_study_point_at_a_shifted_seed():
    from hmsim.studies.base import SEED_SHIFT, StudyScenario

    sc = StudyScenario.shipped("storage.toml")
    assert dict(sc.point("x").overrides).get("seed") is None
    token = SEED_SHIFT.set(2)
    try:
        assert dict(sc.point("x").overrides)["seed"] == "3"  # the scenario's seed 1, shifted
        assert [v for k, v in sc.point("x", seed=10).overrides if k == "seed"] == ["10", "12"]
    finally:
        SEED_SHIFT.reset(token)


def test_reproduce_with_replicates_runs_the_grid_at_each_seed_and_compares(cli, tmp_path):
    out = tmp_path / "r"
    code, stdout, err = cli("reproduce", "storage", "--quick", "--out", str(out), "--replicates", "2")
    assert code == 0, err
    assert "storage: over 2 seeds (1–2)" in stdout and "change their within-10 % verdict" in stdout
    other = json.loads((out / "storage" / "replicates" / "seed+1" / "summary.json").read_text())
    assert other["seed"] == 2
    point = json.loads(next((out / "storage" / "replicates" / "seed+1" / "points").glob("*.json")).read_text())
    assert point["seed"] == 2
    summary = json.loads((out / "storage" / "summary.json").read_text())
    assert summary["seed"] == 1 and summary["replicates"]["seeds"] == [1, 2]
    table = pd.read_csv(out / "storage" / "comparison_replicates.csv")
    assert len(table) == len(summary["comparison"]) and (table.replicates == 2).all()
    # Run again without replicates: the replicate tables of the earlier run go.
    code, _, err = cli("reproduce", "storage", "--quick", "--out", str(out))
    assert code == 0, err
    assert not (out / "storage" / "comparison_replicates.csv").exists()
    assert not (out / "storage" / "tables_replicates.csv").exists()
    assert "replicates" not in json.loads((out / "storage" / "summary.json").read_text())


def test_run_with_replicates_is_the_scenario_at_consecutive_seeds(cli, tmp_path):
    out = tmp_path / "r"
    code, stdout, err = cli("run", str(ALLOC), "--out", str(out), "--replicates", "3", "--set", "seed=5")
    assert code == 0, err
    assert "replicates: 3 seeds (5–7)" in stdout
    df = pd.read_csv(out / "results.csv")
    assert sorted(df.seed.unique()) == [5, 6, 7]
    one = hmsim.run(ALLOC, set={"seed": 6}).results
    assert list(df[df.seed == 6].mean_cycles) == list(one.mean_cycles)
    assert (out / "replicates.csv").exists() and (out / "sweep.png").exists()
    # A bad seed or key is the usual one-line error.
    code, _, err = cli("run", str(ALLOC), "--out", str(tmp_path / "b"), "--replicates", "2", "--set", "seed=-1")
    assert code == 2 and "integer ≥ 0" in err


def test_a_sweep_file_without_axes_or_replicates_says_what_is_missing(cli, tmp_path):
    sweep = tmp_path / "s.toml"
    sweep.write_text(f'scenario = "{ALLOC}"\n')
    code, _, err = cli("sweep", str(sweep), "--out", str(tmp_path / "o"))
    assert code == 2 and "missing [axes] (or replicates = N ≥ 2" in err, err
