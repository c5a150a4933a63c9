"""The declared output schema: `hmsim schema`, `hmsim._core.schema()`, and the results-identity
check's measured columns taken from it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import hmsim
from hmsim import _core

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("results_identical", ROOT / "scripts" / "results_identical.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _table(modules: list[dict], module: str, table: str) -> dict[str, dict]:
    m = next(m for m in modules if m["module"] == module)
    t = next(t for t in m["tables"] if t["name"] == table)
    return {c["name"]: c for c in t["columns"]}


def test_schema_lists_every_module_and_marks_wall_time_measured() -> None:
    modules = json.loads(_core.schema())
    assert [m["module"] for m in modules] == _core.module_names()
    real = _table(modules, "pm-index", "real_threads")
    assert real["wall_s"]["measured"] and real["wall_s"]["unit"] == "s"
    assert not real["os_threads"]["measured"]
    # The `results` table agrees with the per-module `columns` export.
    assert list(_table(modules, "storage", "results")) == [c["name"] for c in _core.columns("storage")]


def test_cli_prints_the_tables_of_one_module(cli) -> None:
    code, out, _ = cli("schema", "pm-index")
    assert code == 0
    assert "real_threads" in out and "wall_s" in out and "measured" in out
    code, out, _ = cli("schema", "storage", "--json")
    assert code == 0
    [storage] = json.loads(out)
    assert [t["name"] for t in storage["tables"]] == ["results", "thermal"]


def test_cli_unknown_module_exits_2_with_the_allowed_names(cli) -> None:
    code, _, err = cli("schema", "nope")
    assert code == 2
    assert "nope" in err and all(m in err for m in hmsim._core.module_names())


def test_identity_check_drops_the_declared_measured_columns() -> None:
    script = _script()
    modules = json.loads(_core.schema())
    real = ["index", "os_threads", "wall_s", "machine_cores", "throughput_mops", "speedup_vs_1_thread"]
    assert script.measured_columns("real_threads", real, modules) >= {
        "wall_s",
        "machine_cores",
        "throughput_mops",
        "speedup_vs_1_thread",
    }
    assert not script.measured_columns("real_threads", real, modules) & {"index", "os_threads"}
    # `results.csv`: pm-index's throughput_mops is the host's rate, tiering's is simulated.
    pm = ["index", "workload", "flushes_per_op", "sim_throughput_mops", "throughput_mops"]
    assert "throughput_mops" in script.measured_columns("results", pm, modules)
    tier = ["policy", "intensity", "throughput_gb_s", "throughput_mops", "migrations"]
    assert "throughput_mops" not in script.measured_columns("results", tier, modules)
    assert "real_throughput_gain" in script.measured_columns("tonic", ["index", "real_throughput_gain"], modules)
