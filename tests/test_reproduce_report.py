"""`hmsim reproduce STUDY` writes a report too; resumed runs report their real wall time;
`hmsim.sweep` documents its parameters."""

from __future__ import annotations

import html
import inspect
import json
import pydoc

import pytest

import hmsim
from hmsim import host
from hmsim.report import cpu_text, wall_text


@pytest.fixture(scope="module")
def twice(tmp_path_factory):
    """storage's quick grid run, then run again into the same folder (every point reused)."""
    out = tmp_path_factory.mktemp("reproduce-twice")
    hmsim.reproduce("storage", out=out, quick=True)
    first = json.loads((out / "storage" / "summary.json").read_text())
    page_after_first = (out / "report" / "index.html").read_text()
    hmsim.reproduce("pmem-wa", out=out, quick=True)
    hmsim.reproduce("storage", out=out, quick=True)
    second = json.loads((out / "storage" / "summary.json").read_text())
    return out, first, second, page_after_first


def test_a_single_study_reproduce_writes_the_report(twice):
    out, _, _, page_after_first = twice
    assert "id='storage'" in page_after_first and "id='pmem-wa'" not in page_after_first
    # A later single-study run keeps the studies reproduced into the folder before.
    page = (out / "report" / "index.html").read_text()
    assert "id='storage'" in page and "id='pmem-wa'" in page
    assert page.index("id='storage'") < page.index("id='pmem-wa'")  # the registry's order
    assert "STT-MRAM time to stop" in page  # storage's numbers, read back from its summary


def test_a_resumed_run_reports_the_total_wall_time(twice):
    out, first, second, _ = twice
    assert first["runs"] == 1 and first["points_reused"] == 0 and first["points_ran"] > 0
    assert first["wall_time_total_s"] == pytest.approx(first["wall_time_s"])
    assert second["runs"] == 2 and second["points_ran"] == 0 and second["points_reused"] == first["points_ran"]
    assert second["wall_time_total_s"] == pytest.approx(first["wall_time_total_s"] + second["wall_time_s"])
    # The points' own run times are those of the first run, read back from the saved points.
    assert second["points_wall_time_s"] == pytest.approx(first["points_wall_time_s"])
    text = wall_text(second)
    assert "over 2 runs" in text and f"0 of {second['points_reused']} points new" in text
    assert "over 2 runs" in (out / "report" / "index.html").read_text()
    # The times name the machine they were measured on, and the report says it.
    assert first["host"] == host.describe() and second["host"] == first["host"]
    assert f"on {host.text(first['host'])}" in (out / "report" / "index.html").read_text()
    # And how fast the machine ran when each reproduction began: one reading per run.
    for s in (first, second):
        g = s["host_gauge_at_start"]
        assert g["compute_m_per_s"] > 0 and g["memory_m_per_s"] > 0
    assert f"{host.gauge_text(second['host_gauge_at_start'])} at the start" in wall_text(second)
    assert "host speed gauge: compute " in (out / "report" / "index.html").read_text()


def test_a_study_reports_what_its_points_and_figures_cost_in_cpu_time(twice):
    out, first, second, _ = twice
    # storage's quick points are short simulations: CPU time measured, never above what
    # their threads could have had in their wall time on this machine's cores.
    assert first["points_cpu_time_s"] > 0
    assert first["points_cpu_time_s"] <= first["points_wall_time_s"] * 1.05 + 0.05
    # A resumed run reads its points' CPU time back from the saved points, like their wall time.
    assert second["points_cpu_time_s"] == pytest.approx(first["points_cpu_time_s"])
    # Drawing the figures (every run draws them again) costs CPU in the drawing processes.
    assert first["figures_cpu_time_s"] > 0 and second["figures_cpu_time_s"] > 0
    text = wall_text(second)
    assert " · CPU: points " in text and ", figures " in text
    assert " · CPU: points " in (out / "report" / "index.html").read_text()


def test_cpu_text_says_nothing_it_does_not_know():
    assert cpu_text({}) == ""
    # A reused point saved before CPU times were kept: the points' sum is unknown.
    assert cpu_text({"points_cpu_time_s": None, "figures_cpu_time_s": 2.0}) == " · CPU: figures 2 s"
    assert cpu_text({"points_cpu_time_s": 61.0, "figures_cpu_time_s": 2.0}) == " · CPU: points 61 s, figures 2 s"


def test_the_breakdown_of_several_studies_splits_points_figures_and_the_rest():
    from types import SimpleNamespace

    from hmsim.reproduce import cpu_breakdown

    def study(points, figures, reused=0):
        return SimpleNamespace(
            summary={"points_cpu_time_s": points, "figures_cpu_time_s": figures, "points_reused": reused}
        )

    done = {"a": study(30.0, 5.0), "b": study(10.0, 2.0)}
    text = cpu_breakdown(done, process_s=52.0, wall_s=40.0)
    assert text.startswith("all: 40 s wall · CPU 59 s: points 40 s, figure processes 7 s, the rest 12 s")
    # Points reused from an earlier run, or run elsewhere (Dask): no split of this process.
    for t in (
        cpu_breakdown({**done, "c": study(1.0, 1.0, reused=3)}, process_s=52.0, wall_s=40.0),
        cpu_breakdown(done, process_s=12.0, wall_s=40.0, local=False),
    ):
        assert ": this process " in t and "points " not in t.split(": this process")[1].split("(")[0]


def test_wall_text_of_an_older_summary_and_of_a_resumed_interrupted_run():
    assert wall_text({"wall_time_s": 3.0}) == "wall 3 s"
    s = {"wall_time_s": 2.0, "wall_time_total_s": 2.0, "runs": 1, "points_ran": 1, "points_reused": 3}
    assert "1 of 4 points new" in wall_text({**s, "points_wall_time_s": 9.0}) and "untimed" in wall_text(s)


def test_hmsim_sweep_has_a_real_signature_and_documents_its_parameters():
    params = inspect.signature(hmsim.sweep).parameters
    assert list(params) == ["base", "axes", "set", "out", "workers", "devices", "backend", "replicates"]
    assert all(p.annotation is not inspect.Parameter.empty for p in params.values())
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    doc = pydoc.render_doc(hmsim.sweep, renderer=pydoc.plaintext)
    for name in params:
        assert f"    {name} " in doc, name  # the module's help lists each parameter
    assert "workers:" in type(hmsim.sweep).__call__.__doc__


def test_every_study_lists_what_its_sources_publish_but_it_does_not_compare(twice):
    from hmsim.report import NOT_COMPARED_TITLE
    from hmsim.studies import names
    from hmsim.studies.not_compared import NOT_COMPARED

    for name in names():
        assert NOT_COMPARED.get(name), f"{name}: no list of the published items it does not compare"
        for item, why in NOT_COMPARED[name]:
            assert item and why
    out = twice[0]
    page = (out / "report" / "index.html").read_text()
    md = (out / "report" / "README.md").read_text()
    assert page.count(html.escape(NOT_COMPARED_TITLE)) == 2  # storage and pmem-wa
    for name in ("storage", "pmem-wa"):
        first_item = NOT_COMPARED[name][0][0]
        assert html.escape(first_item) in page and first_item in md
