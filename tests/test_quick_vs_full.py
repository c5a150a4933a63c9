"""The quick grid draws the full grid's conclusions: for each base system of the tiering study,
Colloid's gain at 3x from the quick grid (figure 1) lands within 10 % of the full grid's (the
full grid's figure-1 points at 3x: HeMem 100 s, TPP 4 KiB 600 s, MEMTIS 180 s; figure 3's TPP
point of the same setup starts at 150 s and runs on until steady, as fig. 1's is the published
comparison).
scripts/quick_vs_full.py compares every study's whole comparison table."""

from __future__ import annotations

import pytest

from hmsim.studies import tiering
from hmsim.sweep import run_points


def _gain(df, system: str) -> float:
    t = df[(df.system == system) & (df.intensity == 3)].set_index("colloid").throughput_gb_s
    return float(t[True] / t[False])


@pytest.fixture(scope="module")
def full_points(tmp_path_factory):
    """The full grid's figure-1 points at 3x of every base system with and without Colloid."""
    pts = [
        p
        for p in tiering.build_points(quick=False)
        if dict(p.labels)["experiment"] == "contention"
        and dict(p.labels)["system"] in ("hemem", "tpp", "memtis")
        and ("antagonist.intensities", "[3]") in p.overrides
    ]
    assert len(pts) == 6, [dict(p.labels) for p in pts]
    res = run_points(pts, tmp_path_factory.mktemp("full"), label="full")
    return res.results


@pytest.mark.parametrize("system", ["hemem", "tpp", "memtis"])
def test_quick_gain_at_3x_matches_the_full_grid(system, quick_study, full_points):
    res, _ = quick_study("tiering")
    quick = _gain(res.results[res.results.experiment == "contention"], system)
    full = _gain(full_points, system)
    assert quick == pytest.approx(full, rel=0.10), f"{system}: quick {quick:.3f} vs full {full:.3f}"
