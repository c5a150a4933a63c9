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
from hmsim.report import wall_text


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


def test_wall_text_of_an_older_summary_and_of_a_resumed_interrupted_run():
    assert wall_text({"wall_time_s": 3.0}) == "wall 3 s"
    s = {"wall_time_s": 2.0, "wall_time_total_s": 2.0, "runs": 1, "points_ran": 1, "points_reused": 3}
    assert "1 of 4 points new" in wall_text({**s, "points_wall_time_s": 9.0}) and "untimed" in wall_text(s)


def test_hmsim_sweep_has_a_real_signature_and_documents_its_parameters():
    params = inspect.signature(hmsim.sweep).parameters
    assert list(params) == ["base", "axes", "set", "out", "workers", "devices", "backend"]
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
