"""Durations and lifetimes are printed in the unit their magnitude calls for; keys verbatim."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hmsim.humanize import (
    SECONDS_PER_YEAR,
    axis_unit,
    duration,
    duration_unit,
    headline_value,
    key_seconds_per_unit,
    years,
)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (2e-8, "20 ns"),
        (3.5e-5, "35 µs"),
        (0.25, "250 ms"),
        (1.5, "1.5 s"),
        (90.0, "90 s"),
        (490.3, "8.17 min"),
        (3 * 3600.0, "3 h"),
        (36 * 3600.0, "36 h"),
        (5 * 86400.0, "5 days"),
        (400 * 86400.0, "400 days"),
        (10 * SECONDS_PER_YEAR, "10 years"),
        (0.0, "0 ns"),
        (-90.0, "-90 s"),
    ],
)
def test_duration_picks_the_unit_by_magnitude(seconds, text):
    assert duration(seconds) == text


def test_lifetimes_in_years_read_in_hours_days_or_years():
    assert years(0.0004) == "3.51 h"
    assert years(0.01) == "3.65 days"
    assert years(5.0) == "5 years"
    assert years(1e6) == "1e+06 years"
    assert years(None) == "n/a" and years(float("nan")) == "n/a"
    assert years(float("inf")) == "forever"


@given(st.floats(min_value=1e-12, max_value=1e15, allow_nan=False))
def test_duration_round_trips_and_stays_in_a_readable_range(seconds):
    name, per = duration_unit(seconds)
    value = seconds / per
    # Below 1 only in the smallest unit; never 2 of the next unit up or more.
    assert value >= 1 or name == "ns"
    number, unit = duration(seconds, digits=6).split(" ")
    assert unit == name
    assert math.isclose(float(number) * per, seconds, rel_tol=1e-5)


def test_keys_that_are_durations_and_keys_that_are_rates():
    assert key_seconds_per_unit("stop_time_s") == 1.0
    assert key_seconds_per_unit("runtime_s[no_EPF]") == 1.0
    assert key_seconds_per_unit("latency_p99_us") == 1e-6
    assert key_seconds_per_unit("lifetime_years_no_wl") == SECONDS_PER_YEAR
    for rate in ("bandwidth_gb_s", "bandwidth_mib_s", "mops_per_cpu_s", "rated_fraction_per_hour", "iops", "s"):
        assert key_seconds_per_unit(rate) is None, rate


def test_headline_values_keep_the_number_and_add_a_reading_when_it_helps():
    assert headline_value("lifetime_years_no_wl", 0.0004) == "0.0004 (3.51 h)"
    assert headline_value("stop_time_s", 490.3) == "490.3 (8.17 min)"
    assert headline_value("stop_time_s", 12.0) == "12"  # already in its best unit
    assert headline_value("bandwidth_gb_s", 1234.5) == "1234.5"
    assert headline_value("best_policy", "colloid-hemem") == "colloid-hemem"
    assert headline_value("runtime_s[no_EPF]", 7200.0) == "7200 (2 h)"


def test_axis_unit_follows_the_median():
    assert axis_unit([0.5 * SECONDS_PER_YEAR, 3 * SECONDS_PER_YEAR, 9 * SECONDS_PER_YEAR])[0] == "years"
    assert axis_unit([3600.0 * h for h in (1, 5, 20)])[0] == "h"
    assert axis_unit([float("inf"), float("nan")]) == ("s", 1.0)


def test_cli_lifetime_prints_lifetimes_in_readable_units(cli, tmp_path):
    # A hot 4 KiB region rewritten and flushed: the hottest line wears out within hours to
    # days of such a program, which "0.0004 years" would hide.
    t = tmp_path / "hot.lackey"
    lines = []
    for i in range(20_000):
        addr = 0x10000 + 64 * (i % 64)
        lines += [f"I  0400{i % 4096:04x},3\n", f" S {addr:x},8\n"]
    t.write_text("".join(lines))
    code, out, err = cli("lifetime", "--trace", str(t), "--flush", "clflush")
    assert code == 0, err
    rows = {ln.split(":", 1)[0].strip(): ln.split(":", 1)[1].strip() for ln in out.splitlines() if ":" in ln}
    for label in ("lifetime, hottest line, no WL", "lifetime, simulated AIT WL", "program time (simulated)"):
        number, unit = rows[label].split(" ", 1)
        float(number)
        assert unit in {"ns", "µs", "ms", "s", "min", "h", "days", "years"}, rows[label]


def test_comparison_table_prints_metrics_verbatim(capsys):
    from hmsim.progress import make_console
    from hmsim.studies.base import Published, comparison_frame, print_comparison

    df = comparison_frame([Published("runtime [no_EPF] vs [bold]x[/bold]", 2.0, 2.2, "s")])
    print_comparison(df, "t [red]", make_console())
    out = capsys.readouterr().out
    assert "runtime [no_EPF] vs [bold]x[/bold]" in out and "t [red]" in out


def test_figure_axes_of_durations_use_a_readable_unit():
    import numpy as np

    from hmsim.figures import _readable_duration

    values, label = _readable_duration("lifetime_years", np.array([0.001, 0.002, 0.004]), "lifetime (years)")
    assert label == "lifetime (h)" and np.allclose(values, np.array([0.001, 0.002, 0.004]) * SECONDS_PER_YEAR / 3600)
    values, label = _readable_duration("mean_cycles", np.array([3.0]), "mean alloc (cycles)")
    assert label == "mean alloc (cycles)" and values[0] == 3.0
