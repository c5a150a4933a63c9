"""Figures never drop data silently: every series a figure's data holds is drawn and named
(legend, label, tick or panel title), scaled-down rows are marked, no log-scale bars, units
on the axes."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from hmsim import plotting
from hmsim.figures import _timeline, axis_label, column_units, sweep_figures
from hmsim.studies import names

POLICIES = [
    "static-default",
    "static-alternate",
    "hemem",
    "colloid-hemem",
    "tpp",
    "colloid-tpp",
    "memtis",
    "colloid-memtis",
    "best",
]


def _drawn(png: Path) -> dict:
    key = str(Path(png).with_suffix(""))
    assert key in plotting.DRAWN, f"{Path(png).name}: not saved through plotting.save_figure in this session"
    return plotting.DRAWN[key]


@pytest.mark.parametrize("study", names())
def test_every_figure_of_every_quick_study_shows_every_series(study, quick_study):
    """Each figure declares the series (groups) of its data; each must be shown. Counts
    are compared too: as many shown as the data holds."""
    res, _ = quick_study(study)
    pngs = [p for p in res.figures if p.suffix == ".png"]
    assert pngs, study
    for png in pngs:
        d = _drawn(png)
        assert d["declared"], f"{study}/{png.name} declares no series"
        missing = [n for n in d["declared"] if n not in d["shown"]]
        assert not missing, f"{study}/{png.name}: series in the data but not in the figure: {missing}"
        assert len(d["shown"]) == len(d["declared"])
        assert not d["overlapping_labels"], f"{study}/{png.name}: titles or labels overlap: {d['overlapping_labels']}"


def test_quick_tiering_marks_the_scaled_down_tpp_rows(quick_study):
    _, out = quick_study("tiering")
    for name in ("fig1_throughput_vs_contention", "fig2_latency_and_hot_share", "fig7_latency_vs_placement"):
        d = plotting.DRAWN[str(out / name)]
        assert "tpp [scaled]" in d["shown"] and "tpp + colloid [scaled]" in d["shown"], name
        assert "tpp" not in d["declared"], name
        assert any("[scaled]" in t and "2 cores" in t for t in d["texts"]), name
    # Full-size rows are not marked: MEMTIS, HeMem and the PMem experiment's TPP.
    pmem = plotting.DRAWN[str(out / "fig_pmem_alternate")]
    assert "tpp 0x" in pmem["shown"] and not any("[scaled]" in n for n in pmem["declared"])


def test_tiering_fig7_notes_sit_off_the_markers_and_pmem_lifetime_reads(quick_study):
    _, out = quick_study("tiering")
    fig7 = plotting.DRAWN[str(out / "fig7_latency_vs_placement")]
    assert all(not a["texts"] for a in fig7["axes"]), "annotations inside the panels"
    assert any("at " in a["title"] for a in fig7["axes"]), "saturation notes shown under the titles"
    pmem = plotting.DRAWN[str(out / "fig_pmem_alternate")]
    life = pmem["axes"][1]
    # The quick rows' median is ≈ 0.2 years: months.
    assert life["xscale"] == "linear" and "(months)" in life["xlabel"], life
    # Readable ticks: few of them, none in scientific notation.
    assert len([t for t in life["xticklabels"] if t]) <= 7 and not any("10^" in t for t in life["xticklabels"])


def test_a_pmem_row_that_never_wears_out_is_named_not_dropped(tmp_path):
    """An empty no-WL lifetime (infinite: the tier's XPLines are not written) has no place on
    the lifetime axis; the panel names the row instead."""
    from hmsim.studies import tiering_pmem

    rows = [
        {
            "experiment": "pmem_alternate",
            "system": s,
            "colloid": False,
            "intensity": 0,
            "throughput_gb_s": t,
            "pmem_window_media_write_gb_s": m,
            "pmem_lifetime_years_no_wl": life,
        }
        for s, t, m, life in [("hemem", 80.0, 9.4, 0.2), ("static", 50.0, 0.0, float("nan"))]
    ]
    tiering_pmem.figure(tmp_path, pd.DataFrame(rows))
    d = plotting.DRAWN[str(tmp_path / "fig_pmem_alternate")]
    assert any("never wears out: static 0x" in t for t in d["axes"][1]["texts"]), d["axes"][1]
    assert d["shown"] == d["declared"]


def test_no_log_scale_bars_in_any_quick_study(quick_study):
    """A bar on a log axis has the length of wherever the axis starts: dots there instead."""
    bad = []
    for study in names():
        res, _ = quick_study(study)
        for png in (p for p in res.figures if p.suffix == ".png"):
            for a in _drawn(png)["axes"]:
                if a["bars"] and "log" in (a["xscale"], a["yscale"]):
                    bad.append(f"{study}/{png.name}")
    # hybrid's service-time histogram counts faults over decades; its bars start at 1 fault.
    assert [b for b in bad if "fig_service_time" not in b] == []


def test_pm_index_lifetime_per_insert_is_bars_from_zero_on_linear_axes(quick_study):
    _, out = quick_study("pm-index")
    d = plotting.DRAWN[str(out / "fig_lifetime_per_insert")]
    assert [a["xscale"] for a in d["axes"]] == ["linear", "linear"]
    assert all(a["bars"] == len(d["declared"]) for a in d["axes"])


def test_the_timeline_draws_every_policy_and_intensity(tmp_path):
    """Formerly the first 16 of 36 series: Colloid, TPP and MEMTIS vanished."""
    rows = [
        {"policy": p, "intensity": i, "time_s": t, "throughput_gb_s": 50.0 + k - i}
        for k, p in enumerate(POLICIES)
        for i in range(4)
        for t in np.arange(0.0, 2.0, 0.5)
    ]
    _timeline(pd.DataFrame(rows), tmp_path)
    d = plotting.DRAWN[str(tmp_path / "timeline")]
    assert sorted(d["shown"]) == sorted([*POLICIES, *(f"intensity {i}" for i in range(4))])
    assert len(d["axes"]) == 4


def test_a_sweep_with_more_series_than_colours_draws_them_all(tmp_path):
    rows = [
        {"job.queue_depth": q, "device": f"dev{k:02d}", "bandwidth_mib_s": q * (k + 1.0), "latency_p99_us": k + q}
        for k in range(40)
        for q in (1, 4, 16)
    ]
    sweep_figures(pd.DataFrame(rows), ["job.queue_depth"], tmp_path, module="storage")
    d = plotting.DRAWN[str(tmp_path / "sweep")]
    assert len(d["declared"]) == 40 and d["shown"] == d["declared"]
    assert len(d["axes"]) == 3 * 2  # 40 series: rows of 16, 16 and 8, two metrics each
    first = d["axes"][0]
    assert first["xlabel"] == "job.queue_depth (requests)" and first["ylabel"] == "bandwidth (MiB/s)"


def test_series_accounting_catches_a_dropped_series():
    fig, ax = plt.subplots()
    for n in ("a", "b"):
        ax.plot([0, 1], [0, 1], label=n)
    ax.legend()
    plotting.declare_series(fig, ["a", "b", "c"])
    assert plotting.shown_labels(fig, fig._hmsim_series) == ["a", "b"]
    plt.close(fig)


def test_axis_labels_carry_the_declared_units():
    units = column_units("")
    assert axis_label("latency_p99_us", units) == "latency p99 (µs)"
    assert axis_label("bandwidth_gb_s", units) == "bandwidth (GB/s)"
    assert axis_label("media_writes_64b", units) == "media writes (64 B)"
    assert axis_label("flushes_per_op", units) == "flushes per op"
    assert axis_label("tiers.1.unloaded_latency_ns", units) == "tiers.1.unloaded_latency_ns (ns)"


def test_series_styles_stay_distinct_past_the_palette():
    names_ = [f"s{i}" for i in range(plotting.MAX_SERIES)]
    style = plotting.series_style(names_)
    looks = {(s["color"], s["marker"], s["linestyle"]) for s in style.values()}
    assert len(looks) == len(names_)
    with pytest.raises(ValueError, match="facet"):
        plotting.series_style([*names_, "one-too-many"])


def test_a_label_run_into_the_title_is_reported(tmp_path):
    """The check the quick studies' figures pass: a y label long enough to reach the
    suptitle (the allocators' fragmentation figure had one) is named; a short one is not."""

    def drawn(ylabel: str) -> list[list[str]]:
        with plotting.house_style():
            # The right panel's y label stands at the middle of the figure, under the title.
            fig, (_, ax) = plt.subplots(1, 2, figsize=(6, 2))
            ax.plot([1, 2], [1, 2])
            ax.set_ylabel(ylabel)
            fig.suptitle("the figure's title, centred over both panels")
            return plotting.write_figure_files(fig, tmp_path, "x", ("png",))["overlapping_labels"]

    long = "a y label far too long for an axes only two inches high, reaching up"
    assert drawn(long) == [["the figure's title, centred over both panels", long]]
    assert drawn("short") == []
