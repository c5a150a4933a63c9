"""An honest, cited report: validation before calibration, inputs apart and uncounted, every
published number with its paper, and the full references listed."""

from __future__ import annotations

from pathlib import Path

import pytest

import hmsim
from hmsim.references import REFERENCES, cite
from hmsim.report import sources_used, summary_counts, write_report
from hmsim.studies import names
from hmsim.studies.base import Published, StudyResult, comparison_frame, registry

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _result(name: str, items: list[Published], source: str) -> StudyResult:
    import pandas as pd

    cmp = comparison_frame(items)
    if len(cmp):
        cmp["source"] = cmp["source"].replace("", source)
    summary = {"title": f"{name} title", "source": source, "seed": 1, "quick": True, "wall_time_s": 5400.0}
    return StudyResult(name, pd.DataFrame(), {}, cmp, summary)


@pytest.fixture
def results() -> dict[str, StudyResult]:
    return {
        "a": _result(
            "a",
            [
                Published("capacity", 384, 384, "GiB", "input", "topology preset"),
                Published("fitted latency", 100, 104, "ns", "calibration"),
                Published("free bandwidth", 10, 13, "GB/s", "validation", source="wang-micro20", where="LENS probe"),
                Published("free ratio", 2, 2.1, "x", "validation"),
            ],
            "yang-fast20",
        ),
        "b": _result("b", [], "han-shin-umd"),
    }


def test_inputs_are_listed_apart_and_never_counted(results):
    counts = summary_counts({n: r.comparison for n, r in results.items()})
    assert counts["validation"] == {"numbers": 2, "within_10pct": 1, "within_25pct": 1}
    assert counts["calibration"] == {"numbers": 1, "within_10pct": 1, "within_25pct": 1}
    assert counts["all"]["numbers"] == 3
    assert counts["input"] == {"numbers": 1}


def test_report_puts_validation_first_and_cites_every_number(results, tmp_path):
    write_report(tmp_path, results)
    md = (tmp_path / "report" / "README.md").read_text()
    # Summary: validation row before calibration; per study: validation, calibration, inputs.
    assert md.index("| validation (not fitted) |") < md.index("| calibration (set a parameter")
    a = md[md.index("## a:") : md.index("## b:")]
    assert a.index("### Validation") < a.index("### Calibration") < a.index("### Inputs")
    inputs = a[a.index("### Inputs") :]
    assert "| metric | published | simulated | source | note |" in inputs  # no ratio for inputs
    assert "| capacity | 384 GiB | 384 GiB | Yang et al., USENIX FAST 2020 | topology preset |" in inputs
    assert "Wang et al., IEEE/ACM MICRO 2020, LENS probe" in a
    # Wall time in a readable unit, the study's source named.
    assert "wall 90 min" in a and "source: Yang et al., USENIX FAST 2020" in a
    # The full references, each once, with title and year.
    refs = md[md.index("## References") :]
    for key in ("yang-fast20", "wang-micro20", "han-shin-umd"):
        ref = REFERENCES[key]
        assert refs.count(ref.title) == 1
    assert "2020" in refs and "Kyuhwa Han and Dongkun Shin" in refs
    html = (tmp_path / "report" / "index.html").read_text()
    assert "<h2 id='references'>References</h2>" in html


def test_report_points_at_no_file_outside_the_repository(results, tmp_path):
    write_report(tmp_path, results)
    md = (tmp_path / "report" / "README.md").read_text()
    assert "spec" not in md.lower()
    assert ".md" not in md.replace("README.md", "")


def test_roles_and_sources_are_checked():
    with pytest.raises(ValueError, match="role 'fitted' is not one of"):
        comparison_frame([Published("x", 1, 1, role="fitted")])
    with pytest.raises(KeyError, match="unknown reference 'nobody-2099'"):
        comparison_frame([Published("x", 1, 1, source="nobody-2099")])


def test_every_study_names_a_known_source():
    studies = registry()
    assert sorted(studies) == sorted(names())
    for name, study in studies.items():
        assert study.source in REFERENCES, name
        assert cite(study.source)


def test_sources_used_in_order_without_repeats(results):
    assert sources_used(results) == ["yang-fast20", "wang-micro20", "han-shin-umd"]


def test_docs_references_page_lists_every_reference():
    page = (DOCS / "references.md").read_text()
    for ref in REFERENCES.values():
        assert ref.title in page and f"**{ref.short()}**" in page, ref.key


def test_public_api_keeps_the_report_importable():
    assert hmsim.__version__


def test_no_empty_comparison_csv(tmp_path):
    import pandas as pd

    from hmsim.studies.base import Study

    def body(out, quick, workers, items=()):
        return StudyResult("t", pd.DataFrame({"x": [1]}), {}, comparison_frame(list(items)), {})

    (tmp_path / "comparison.csv").write_text("stale\n")
    Study("t", "no numbers", body, source="han-shin-umd").run(tmp_path, echo=False)
    assert not (tmp_path / "comparison.csv").exists()
    numbers = [Published("m", 1.0, 1.1, "x")]
    res = Study(
        "t", "numbers", lambda out, quick, workers: body(out, quick, workers, numbers), source="yang-fast20"
    ).run(tmp_path, echo=False)
    csv = pd.read_csv(tmp_path / "comparison.csv")
    assert list(csv.source) == ["yang-fast20"] and res.summary["source"] == "yang-fast20"
