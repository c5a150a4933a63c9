"""Part of study `tiering`: Optane PMem as the alternate tier (docs/tiering.md).

Each policy's migrations into PMem and the application's write-backs to it go through the PMem
write path (crates/hmsim/src/tier/pmem_tier.rs): throughput beside media writes, write
amplification and lifetime, per policy with and without Colloid."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from hmsim.humanize import SECONDS_PER_YEAR
from hmsim.plotting import color_for, declare_series, house_style, save_figure
from hmsim.studies.base import StudyScenario
from hmsim.sweep import Point

EXPERIMENT = "pmem_alternate"
SYSTEMS = ("hemem", "colloid-hemem", "memtis", "colloid-memtis", "tpp", "colloid-tpp")
COLUMNS = [
    "duration_s",
    "pmem_migrated_bytes",
    "pmem_app_write_bytes",
    "pmem_unsampled_write_bytes",
    "pmem_write_requests",
    "pmem_media_writes_64b",
    "pmem_write_amplification",
    "pmem_wa_migration",
    "pmem_wa_app",
    "pmem_ait_migrations",
    "pmem_sampled_write_requests",
    "pmem_lifetime_years",
    "pmem_lifetime_years_no_wl",
    "pmem_hottest_xpline_media_writes",
    "pmem_rated_fraction_per_hour",
    "pmem_window_media_write_gb_s",
]

# Local DRAM + six interleaved Optane DIMMs: 305 ns random-read idle latency, 6 x 6.5 GB/s
# reads; 6 x 2.2 GB/s writes make a 50/50 mix saturate near half the read bandwidth.
PMEM_SETUP = {
    "tiers": [
        {
            "name": "default",
            "capacity_bytes": 32_000_000_000,
            "unloaded_latency_ns": 70.0,
            "read_bandwidth_gb_s": 204.8,
        },
        {
            "name": "alternate",
            "capacity_bytes": 96_000_000_000,
            "unloaded_latency_ns": 305.0,
            "read_bandwidth_gb_s": 39.0,
            "mix_penalty": 0.5,
        },
    ],
    "pmem_tier": {"tier": 1, "path": {"device": "optane-pmem", "dimms": 6}},
}


# The quick grid's runs at 2 MiB (figs. 3 and 6 and these PMem rows) go on until their window is
# steady (`sim.until_steady`: twice as long each time, up to 8x): shortened to 10-20 s, 27 of
# these 56 runs were transients. Together they cost ≈ 5 CPU s more. Its scaled-down 4 KiB TPP
# runs do not: at 2-3x they promote and demote without end and would run to the cap unsettled.
QUICK_UNTIL_STEADY = {"sim__until_steady": True}
# A PMem row is steady once its last hot pages have left PMem too (docs/tiering.md): the quick
# grid's HeMem runs go on to 60 s, not 30. The full grid's PMem rows go on until steady as well:
# at 100 s MEMTIS at 3x still had hot pages leaving PMem, its no-WL lifetime 47 days, not 194.
PMEM_UNTIL_STEADY = QUICK_UNTIL_STEADY


def points(make: Callable[..., Point], sc: StudyScenario, quick: bool) -> list[Point]:
    """`make(scenario, experiment, policy, intensity, **overrides)` builds one point."""
    intensities = [0, 3] if quick else [0, 1, 2, 3]
    dur = {"sim__duration_s": 15.0 if quick else 100.0, "sim__measure_last_s": 5.0 if quick else 30.0}
    dur |= PMEM_UNTIL_STEADY
    pmem = sc.but(PMEM_SETUP)
    return [make(pmem, EXPERIMENT, p, i, **dur) for p in SYSTEMS for i in intensities]


def figure(out: Path, df: pd.DataFrame) -> list[Path]:
    """Throughput against PMem media writes and against lifetime: a colour per system, a marker
    shape per contention, filled without Colloid and a ring with it (a dot inside its ring:
    Colloid changed nothing); lifetime in the unit it reads in (days, months, years)."""
    d = df[df.experiment == EXPERIMENT]
    if d.empty:
        return []
    labels = [f"{s}{' + colloid' if c else ''}" for s, c in zip(d.system, d.colloid, strict=True)]
    # The measured window's media write rate, as the throughput and the lifetime are the
    # window's: the run's average would count the placement's one-off copies, spread over a
    # run whose length `sim.until_steady` chose (HeMem at 0x: 15.9 GB/s from 60 s, 13.3 from
    # 100 s; 9.37 in the window of both).
    d = d.assign(label=labels, media_gb_s=d.pmem_window_media_write_gb_s)
    systems = list(dict.fromkeys(d.system))
    colors = color_for(systems)
    markers = {0: "o", 1: "s", 2: "^", 3: "D"}
    life_s = d.pmem_lifetime_years_no_wl * SECONDS_PER_YEAR
    unit, per = life_unit(life_s)
    d = d.assign(life=life_s / per)
    with house_style():
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
        for (system, colloid, i), g in d.groupby(["system", "colloid", "intensity"], sort=False):
            kw = {"marker": markers.get(i, "o"), "label": f"{system}{' + colloid' if colloid else ''} {i}x"}
            kw |= {"facecolors": "none", "edgecolors": colors[system], "s": 150, "linewidths": 1.5} if colloid else {}
            kw |= {} if colloid else {"color": colors[system], "s": 36}
            axes[0].scatter(g.media_gb_s, g.throughput_gb_s, **kw)
            axes[1].scatter(g.life, g.throughput_gb_s, **{**kw, "label": "_"})
        axes[0].set_xlabel("PMem media writes in the measured window (GB/s, extrapolated)")
        axes[1].set_xlabel(f"PMem lifetime without wear leveling ({unit})")
        axes[0].set_ylabel("GUPS throughput (GB/s)")
        for ax in axes:
            ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
        # An empty lifetime is infinite (no XPLine of the tier is written): no place on the
        # axis, so the panel names those rows rather than dropping them.
        never = d[~np.isfinite(d.life)]
        if len(never):
            rows = zip(never.label, never.intensity, strict=True)
            names_ = ", ".join(dict.fromkeys(f"{lab} {i}x" for lab, i in rows))
            note = f"never wears out: {names_}"
            axes[1].text(0.98, 0.02, note, transform=axes[1].transAxes, ha="right", va="bottom", fontsize=7)
        axes[1].legend(*axes[0].get_legend_handles_labels(), fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
        axes[0].set_title("PMem as alternate tier: throughput vs media writes", fontsize=10)
        axes[1].set_title("... vs lifetime (ring: with Colloid)", fontsize=10)
        declare_series(fig, [f"{lab} {i}x" for lab, i in dict.fromkeys(zip(d.label, d.intensity, strict=True))])
        paths = save_figure(fig, out, "fig_pmem_alternate")
    return paths


def life_unit(seconds: pd.Series) -> tuple[str, float]:
    """(name, seconds per unit) for a lifetime axis: days up to 2 months, months up to 2
    years, then years; hours below 2 days."""
    finite = seconds[seconds.notna() & (seconds > 0) & (seconds < float("inf"))]
    mid = float(finite.median()) if len(finite) else SECONDS_PER_YEAR
    if mid < 2 * 86400:
        return "hours", 3600.0
    if mid < 61 * 86400:
        return "days", 86400.0
    if mid < 2 * SECONDS_PER_YEAR:
        return "months", SECONDS_PER_YEAR / 12
    return "years", SECONDS_PER_YEAR
