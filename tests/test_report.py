"""`hmsim reproduce all` writes one report: every study, its figures, its numbers vs published."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

import hmsim


@pytest.fixture(scope="module")
def report(quick_out):
    # Reuses the points of the per-study tests in the same session (sweeps resume).
    hmsim.reproduce("all", out=quick_out, quick=True)
    return quick_out


def test_report_has_every_study_and_its_figures(report):
    page = (report / "report" / "index.html").read_text()
    for study in hmsim.studies.names():
        assert f"id='{study}'" in page
    images = re.findall(r"<img src='\.\./([^']+)'", page)
    assert len(images) >= 9
    for img in images:
        assert (report / img).stat().st_size > 5000, img
    md = (report / "report" / "README.md").read_text()
    assert "## Agreement with the published numbers" in md and "| metric | published | simulated | ratio |" in md
    assert md.index("| validation (not fitted) |") < md.index("| calibration (") and "## References" in md


def test_validation_summary_counts(report):
    counts = json.loads((report / "report" / "summary.json").read_text())
    total = counts["all"]
    assert total["numbers"] == counts["calibration"]["numbers"] + counts["validation"]["numbers"]
    assert total["within_10pct"] <= total["within_25pct"] <= total["numbers"]
    # Every calibration point within 25 %, and within 10 % but for one known miss: the
    # 8-thread random-write WA of pmem-wa (1.28 vs 1.5), which the patching of queued
    # read-modify-writes keeps low whatever the backlog (docs/pmem.md, docs/validation.md).
    cal = counts["calibration"]
    assert cal["within_25pct"] == cal["numbers"]
    assert cal["within_10pct"] >= cal["numbers"] - 1


def test_report_renders_in_headless_chromium(report, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install chromium) - cannot check the rendering")
    shot = tmp_path / "report.png"
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--screenshot={shot}",
            "--window-size=1200,2000",
            (report / "report" / "index.html").as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    assert pixels.shape[0] >= 1000 and pixels.std() > 0.05, "the page rendered blank"
