"""Studies make their points one way: a `StudyScenario` and settings as Python values, never
by editing scenario text."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from hmsim.studies import names
from hmsim.studies.base import StudyScenario

STUDIES = Path(__file__).resolve().parents[1] / "python" / "hmsim" / "studies"


def test_a_point_carries_the_variant_settings_first_then_its_own_in_order():
    sc = StudyScenario.shipped("storage.toml")
    variant = sc.but({"device.name": "intel-optane-900p"}, job__op="read")
    p = variant.point("qd", {"job.queue_depth": 4}, job__duration_s=0.5)
    assert [k for k, _ in p.overrides] == ["device.name", "job.op", "job.queue_depth", "job.duration_s"]
    assert {k: tomllib.loads(f"v = {v}")["v"] for k, v in p.overrides} == {
        "device.name": "intel-optane-900p",
        "job.op": "read",
        "job.queue_depth": 4,
        "job.duration_s": 0.5,
    }
    assert p.labels == (("experiment", "qd"),)
    assert p.text == sc.text and p.file.endswith("storage.toml")
    # the base scenario is untouched by its variants
    assert sc.base == () and sc.point("x").overrides == ()


def test_labels_name_their_columns_and_tables_become_inline_toml():
    sc = StudyScenario.shipped("hybrid.toml", label="sweep")
    p = sc.point({"sweep": "main", "extra": 2}, policies=[{"name": "smart_EPF", "threshold_us": 50.0}])
    assert p.labels == (("sweep", "main"), ("extra", 2))
    assert tomllib.loads(f"v = {dict(p.overrides)['policies']}")["v"] == [{"name": "smart_EPF", "threshold_us": 50.0}]
    assert sc.point("main").labels == (("sweep", "main"),)


def test_no_study_edits_scenario_text_or_builds_points_by_hand():
    for f in sorted(STUDIES.glob("*.py")):
        if f.name == "base.py":
            continue
        src = f.read_text()
        for pattern in (r"\bPoint\(", r"toml_value", r"scenarios/", r"text \+", r"\.replace\(\"\["):
            assert not re.search(pattern, src), f"{f.name}: {pattern}"


def test_every_study_builds_its_quick_and_full_points():
    import importlib

    for name in names():
        mod = importlib.import_module(f"hmsim.studies.{name.replace('-', '_')}")
        for quick in (True, False):
            pts = mod.build_points(quick)
            assert pts and len({p.id for p in pts}) == len(pts), f"{name}: points repeat"


def test_each_module_of_the_core_names_a_registered_study_and_each_study_is_some_modules():
    import json

    from hmsim import _core
    from hmsim.studies import registry

    declared = [m["study"] for m in json.loads(_core.schema())]
    assert sorted(declared) == sorted(registry())
    assert names() == declared
