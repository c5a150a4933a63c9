"""Study `storage` (quick): files, figures and regression ranges against the published numbers."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import hmsim
from hmsim.studies.base import StudyResult, registry


@pytest.fixture(scope="module")
def study(quick_study):
    return quick_study("storage")


def test_results_files_and_columns(study):
    _, out = study
    df = pd.read_csv(out / "results.csv")
    need = {"device", "op", "queue_depth", "block_size_bytes", "bandwidth_mib_s", "energy_j", "efficiency_mib_per_j"}
    assert need <= set(df.columns)
    th = pd.read_csv(out / "thermal.csv")
    assert {"device", "fan", "ambient_c", "time_s", "temperature_c"} <= set(th.columns)
    summary = json.loads((out / "summary.json").read_text())
    stops = summary["stop_time_s"]["stt-mram-ssd"]
    assert set(stops) >= {"25", "30", "35"}
    assert stops["30"] > stops["35"] > 0


def test_figures_exist(study):
    _, out = study
    for name in [
        "fig1_bandwidth_vs_qd_and_size",
        "fig2_bandwidth_energy_efficiency",
        "fig3_temperature",
        "fig4_stop_time_vs_ambient",
    ]:
        for ext in ("png", "svg"):
            assert (out / f"{name}.{ext}").stat().st_size > 5000


def test_bandwidth_energy_and_heat_within_15_percent(study):
    res, _ = study
    c = res.comparison.set_index("metric")
    checked = [m for m in c.index if "efficiency" not in m]
    assert len(checked) >= 12
    for m in checked:
        assert c.loc[m, "within_15pct"], f"{m}: ratio {c.loc[m, 'ratio']:.3f}"


def test_write_bandwidth_saturates_by_qd16(study):
    res, _ = study
    q = res.results[res.results.experiment == "qd_sweep"]
    for d, g in q.groupby("device"):
        g = g.set_index("queue_depth").bandwidth_mib_s
        assert g[16] >= 0.95 * g.max(), d
        assert g[1] <= g[16], d


def test_study_is_deterministic_and_resumable(tmp_path):
    a = hmsim.reproduce("storage", out=tmp_path / "a", quick=True)
    b = hmsim.reproduce("storage", out=tmp_path / "a", quick=True)  # all points reused
    pd.testing.assert_frame_equal(a.results, b.results)
    c = hmsim.reproduce("storage", out=tmp_path / "c", quick=True)  # fresh run
    pd.testing.assert_frame_equal(a.results, c.results)


def test_the_points_run_warnings_are_kept_and_say_the_970_evo_wrote_into_its_cache(study, capsys):
    """A study keeps what its points' runs said about trusting them (`point_warnings`): here
    each 970 EVO write job stays inside its 22 GB SLC cache, so its write figures are the
    cache's; the other devices have no cache and say nothing."""
    res, out = study
    summary = json.loads((out / "summary.json").read_text())
    warned = summary["point_warnings"]
    df = pd.read_csv(out / "results.csv")
    writes = df[(df.device == "samsung-970-evo-fairlio") & (df.op == "write")]
    assert len(warned) >= len(writes) > 0  # and the thermal runs' jobs
    assert all("device samsung-970-evo-fairlio: all " in w and "write cache (SLC)" in w for w in warned), warned
    # A kind the study's design expects: printed as a note with its count, not a warning.
    assert (
        summary["point_warnings_expected"] == [{**summary["point_warnings_expected"][0], "count": len(warned)}]
        and "SLC cache" in summary["point_warnings_expected"][0]["why"]
    )
    registry()["storage"].echo(res)
    printed = capsys.readouterr().out
    assert f"storage: {len(warned)} point note(s) of a kind the study expects: " in printed
    assert "warning: storage:" not in printed


def test_point_warnings_of_unexpected_kinds_stay_warnings(capsys):
    s = registry()["storage"]
    slc = (
        "experiment=qd_sweep: device samsung-970-evo-fairlio: all 1.8 GB the job wrote fit in its 22 GB "
        "write cache (SLC)"
    )
    other = "experiment=qd_sweep: device stt-mram-ssd: something a study does not expect"
    kinds, rest = s.sort_point_warnings([slc, other, slc])
    assert [k["count"] for k in kinds] == [2] and rest == [other]
    # The same device name in a warning of another kind is not taken for the expected one.
    assert s.sort_point_warnings(["device samsung-970-evo-fairlio: the job found the cache full"])[0] == []
    summary = {"point_warnings": [slc, other, slc]}
    s.echo(StudyResult("storage", pd.DataFrame(), {}, pd.DataFrame(), summary))
    printed = capsys.readouterr().out
    assert "storage: 2 point note(s) of a kind the study expects" in printed
    said = "warning: storage: 1 warning(s) from its points' runs (and 2 expected, above) (summary.json: point_warnings)"
    assert f"{said}; the first: {other}" in printed
