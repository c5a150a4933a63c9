"""The Rust/Python boundary: error classes by kind, typed result columns, progress bars."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import hmsim
import hmsim.lifetime
import hmsim.trace
from hmsim.errors import ConfigError, HmsimError, InputDataError, SimulationError, from_kind
from hmsim.results import MissingColumnError, UndeclaredColumnError, typed_frame, write_csv
from hmsim.results import select as select_columns

# ---------------------------------------------------------------- error kinds


def test_every_error_class_is_an_hmsim_error_and_the_kind_picks_it():
    for kind, cls in [("config", ConfigError), ("input_data", InputDataError), ("runtime", SimulationError)]:
        e = from_kind(kind, "f.toml", "what is wrong", key="a.b", line=3)
        assert type(e) is cls and isinstance(e, HmsimError)
        assert (e.file, e.line, e.key, e.detail) == ("f.toml", 3, "a.b", "what is wrong")
        assert str(e) == "f.toml:3: key 'a.b': what is wrong"
    assert hmsim.ConfigError is ConfigError and hmsim.InputDataError is InputDataError
    assert hmsim.SimulationError is SimulationError and hmsim.HmsimError is HmsimError


def test_a_bad_scenario_key_is_a_config_error(tmp_path, scenario):
    with pytest.raises(ConfigError) as e:
        hmsim.run(scenario, set={"job.queue_depth": 0})
    assert e.value.key == "job.queue_depth" and not isinstance(e.value, InputDataError)


def _garbage_trace(tmp_path: Path) -> Path:
    t = tmp_path / "t.txt"
    t.write_text("LD 0x1000\nLD 0x2000\nthis is no record\n")
    return t


def test_a_malformed_trace_is_an_input_data_error(tmp_path):
    t = _garbage_trace(tmp_path)
    with pytest.raises(InputDataError) as e:
        hmsim.trace.convert(t, tmp_path / "o.hmt", fmt="ramulator2")
    assert e.value.file == str(t) and e.value.line == 3
    with pytest.raises(InputDataError):
        hmsim.trace.info(t, fmt="ramulator2")
    with pytest.raises(InputDataError):
        hmsim.lifetime.lifetime(t, fmt="ramulator2")


def test_a_conversion_target_that_cannot_be_written_is_a_config_error(tmp_path):
    t = tmp_path / "t.txt"
    t.write_text("LD 0x1000\nST 0x2000\n")
    with pytest.raises(ConfigError, match="not a regular file"):
        hmsim.trace.convert(t, tmp_path, fmt="ramulator2")


def test_cli_input_data_errors_are_one_line_and_status_2(tmp_path, cli):
    t = _garbage_trace(tmp_path)
    code, _, err = cli("trace", "convert", str(t), str(tmp_path / "o.hmt"), "--from", "ramulator2")
    assert code == 2 and len(err.strip().splitlines()) == 1 and f"{t}:3:" in err, err


def test_cli_simulation_errors_are_one_line_and_status_1(monkeypatch, cli, scenario, tmp_path):
    def fail(*args, **kwargs):
        raise SimulationError(str(scenario), "the model ran out of simulated memory")

    monkeypatch.setattr("hmsim.scenario._run", fail)
    code, _, err = cli("run", str(scenario), "--out", str(tmp_path / "o"))
    assert code == 1, err
    assert err.strip() == f"hmsim: simulation failed: {scenario}: the model ran out of simulated memory"


def test_an_unknown_benchmark_module_lists_the_known_ones(cli):
    code, _, err = cli("bench", "--module", "nope")
    assert code == 2 and "allowed: storage, pmem" in err and "trace" in err, err


# ---------------------------------------------------------------- typed results

COLUMNS = [
    {"name": "device", "dtype": "str"},
    {"name": "requests", "dtype": "int"},
    {"name": "bandwidth_gb_s", "dtype": "float"},
    {"name": "throttled", "dtype": "bool"},
]


def test_typed_frame_casts_present_columns_and_keeps_gaps_nullable():
    rows = [
        {"device": "a", "requests": 3, "bandwidth_gb_s": 1.5, "throttled": True},
        {"device": "b", "requests": None, "bandwidth_gb_s": 2, "throttled": None},
    ]
    df = typed_frame(rows, COLUMNS, "t")
    assert str(df.requests.dtype) == "Int64" and df.requests.iloc[0] == 3 and df.requests.isna().iloc[1]
    assert df.bandwidth_gb_s.dtype == "float64" and df.throttled.dtype == object
    full = typed_frame([rows[0]], COLUMNS, "t")
    assert full.requests.dtype == "int64" and full.throttled.dtype == "bool"
    # Declared columns absent from every row stay absent (as in the CSV).
    assert list(typed_frame([{"device": "a"}], COLUMNS, "t").columns) == ["device"]


def test_typed_frame_refuses_an_undeclared_column_but_allows_labels():
    with pytest.raises(UndeclaredColumnError, match="'bogus' not declared"):
        typed_frame([{"device": "a", "bogus": 1}], COLUMNS, "storage results")
    assert list(typed_frame([{"qd": 1, "device": "a"}], COLUMNS, "t", labels=["qd"]).columns) == ["qd", "device"]
    assert typed_frame([{"bogus": 1}], None, "t").bogus.dtype == "int64"  # nothing declared


def test_csv_of_a_typed_frame_is_what_pandas_wrote_before(tmp_path):
    rows = [{"device": "a", "requests": 3, "bandwidth_gb_s": 1.0}, {"device": "b", "bandwidth_gb_s": 2.5}]
    write_csv(tmp_path / "typed.csv", typed_frame(rows, COLUMNS, "t"))
    write_csv(tmp_path / "plain.csv", pd.DataFrame(rows))
    assert (tmp_path / "typed.csv").read_text() == (tmp_path / "plain.csv").read_text()


def test_select_fails_loudly_on_a_missing_column():
    df = pd.DataFrame([{"a": 1, "b": 2}])
    assert list(select_columns(df, ["b", "a"], "s").columns) == ["b", "a"]
    assert list(select_columns(df, ["a", "c"], "s", optional=["c"]).columns) == ["a"]
    with pytest.raises(MissingColumnError, match="s: expected result column"):
        select_columns(df, ["a", "c"], "s")


def test_a_run_carries_its_declared_columns(scenario):
    res = hmsim.run(scenario)
    cols = hmsim._core.columns(res.module)
    if cols is None:
        pytest.skip(f"{res.module} does not declare its columns yet")
    declared = {c["name"]: c for c in cols}
    assert set(res.results.columns) <= set(declared)
    kinds = {"float": "f", "int": "iu", "bool": "b"}
    for name in res.results.columns:
        want = kinds.get(declared[name]["dtype"])
        if want is not None:
            assert res.results[name].dtype.kind in want, (name, res.results[name].dtype)
    assert all({"name", "unit", "dtype", "measured"} <= set(c) for c in cols)


# ---------------------------------------------------------------- progress


def _big_trace(tmp_path: Path, n: int = 400_000) -> Path:
    t = tmp_path / "big.txt"
    t.write_text("".join(f"LD 0x{0x1000 + 64 * i:x}\n" for i in range(n)))
    return t


def _hmsim_exe() -> str:
    exe = shutil.which("hmsim") or str(Path(sys.executable).parent / "hmsim")
    if not Path(exe).exists():
        pytest.skip("the hmsim console script is not installed")
    return exe


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["TERM"] = "xterm"
    env["COLUMNS"] = "100"
    return env


def _on_a_terminal(args: list[str]) -> str:
    """What `args` writes to a pseudo-terminal; asserts it exits 0."""
    master, slave = os.openpty()
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=_env())
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if select.select([master], [], [], 1.0)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    assert proc.wait(timeout=60) == 0, seen
    return seen.decode(errors="replace")


def test_trace_convert_on_a_terminal_shows_a_bar(tmp_path):
    t = _big_trace(tmp_path)
    text = _on_a_terminal([_hmsim_exe(), "trace", "convert", str(t), str(tmp_path / "o.hmt"), "--from", "ramulator2"])
    assert "converting big.txt" in text, text
    assert "400000 records written" in text


def test_a_long_run_on_a_terminal_shows_its_runs_done(tmp_path):
    # A tiering scenario is several (policy, intensity) runs; the bar counts them.
    scenario = Path(__file__).resolve().parents[1] / "examples" / "tiering-colloid-contention.toml"
    args = [
        _hmsim_exe(),
        "run",
        str(scenario),
        "--out",
        str(tmp_path / "r"),
        "--set",
        "sim.duration_s=2",
        "--set",
        "sim.measure_last_s=1",
    ]
    text = _on_a_terminal(args)
    assert "running tiering-colloid-contention.toml" in text, text
    assert "/8 runs" in text, text


def test_trace_convert_into_a_pipe_prints_no_bar(tmp_path):
    t = _big_trace(tmp_path, 50_000)
    args = [_hmsim_exe(), "trace", "convert", str(t), str(tmp_path / "o.hmt"), "--from", "ramulator2"]
    done = subprocess.run(args, capture_output=True, text=True, env=_env(), check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and "converting" not in done.stdout
    assert done.stdout.strip() == f"50000 records written to {tmp_path / 'o.hmt'}"
