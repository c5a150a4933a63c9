"""The fault-injection campaign kept as tests (docs/reliability.md): mutated scenarios for
every example, mutated sweeps, corrupted traces through `trace info`, `trace convert` and
`lifetime`, kill and resume of a sweep and of a run, two writers, a full disk, and misuse
of the Python API. Each case ends in exit 2 with one line naming the file (and the line
where there is one), or in a correct result; never a traceback."""

from __future__ import annotations

import errno
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hmsim
import hmsim.lifetime
from hmsim.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.toml") if "module" in p.read_text())
TRACES = ROOT / "crates/hmsim/tests/data/traces"

STORAGE = """\
module = "storage"
seed = 7

[device]
name = "intel-optane-900p"

[job]
pattern = "random"
op = "read"
queue_depth = 8
block_size_bytes = 4096
duration_s = {duration}
"""


def one_error_line(err: str, name: str, line: int | None = None) -> None:
    """Exactly one line on stderr, `hmsim: error: FILE[:LINE]: …`, no traceback."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("hmsim: error: "), err
    assert name in lines[0], err
    if line is not None:
        assert re.search(rf"{re.escape(name)}:{line}:", lines[0]), err


@pytest.fixture
def cli(capsys):
    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


# ---------------------------------------------------------------- scenario mutants


def _leaves(table: dict, prefix: tuple = ()) -> list[tuple]:
    """Key paths of every scalar value (arrays of tables walked by index)."""
    out = []
    for k, v in table.items():
        path = (*prefix, k)
        if isinstance(v, dict):
            out += _leaves(v, path)
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for i, x in enumerate(v):
                out += _leaves(x, (*path, i))
        elif k != "seed":
            out.append(path)
    return out


def _set(table: dict, path: tuple, value) -> None:
    for p in path[:-1]:
        table = table[p]
    table[path[-1]] = value


def _wrong(value, key: str, rng: random.Random):
    """A value of a type the key cannot take, or beyond every bound."""
    if isinstance(value, bool):
        return "maybe"
    if isinstance(value, int | float):
        return rng.choice(["fast", 2**63 - 1, -(2**63), 1e300])
    if isinstance(value, str):
        names = ["", "../../etc/passwd", "n" * 300] if key == "name" else []
        return rng.choice([12345, "x" * 5000, *names])
    if isinstance(value, list):
        return {"not": "a list"}
    return [value]


# `make fuzz` raises the count (HMSIM_FUZZ_EXAMPLES); the default run stays at seconds.
FUZZ_EXAMPLES = int(os.environ.get("HMSIM_FUZZ_EXAMPLES", "500"))


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_reliab_scenario_mutants_fail_with_a_located_line(tmp_path_factory, data):
    import tomli_w

    example = data.draw(st.sampled_from(EXAMPLES))
    table = tomllib.loads(example.read_text())
    kind = data.draw(st.sampled_from(["wrong", "unknown", "bytes"]))
    tmp = tmp_path_factory.mktemp("mut")
    f = tmp / example.name
    if kind == "bytes":
        text = example.read_bytes()
        at = data.draw(st.integers(0, len(text)))
        bad = data.draw(st.sampled_from([b"\xff\xfe", b"\x00", b"\xc3"]))
        f.write_bytes(text[:at] + bad + text[at:])
    else:
        leaves = _leaves(table)
        path = data.draw(st.sampled_from(leaves))
        if kind == "wrong":
            rng = random.Random(data.draw(st.integers(0, 2**32)))
            cur = table
            for p in path:
                cur = cur[p]
            _set(table, path, _wrong(cur, str(path[-1]), rng))
        else:
            _set(table, (*path[:-1], "zz_unknown_key"), 1)
        f.write_text(tomli_w.dumps(table))
    with pytest.raises(hmsim.ConfigError) as e:
        hmsim.run(f)
    msg = str(e.value)
    assert msg.startswith(str(f)) and "\n" not in msg, msg


def test_reliab_non_utf8_scenario_and_sweep_are_one_line(tmp_path, cli):
    s = tmp_path / "s.toml"
    s.write_bytes(b'module = "storage"\nseed = 1\n# caf\xe9\n')
    code, _, err = cli("run", str(s), "--out", str(tmp_path / "o"))
    assert code == 2
    one_error_line(err, str(s), 3)
    sw = tmp_path / "sw.toml"
    sw.write_bytes(b'scenario = "s.toml"\n\xff\n')
    code, _, err = cli("sweep", str(sw), "--out", str(tmp_path / "o"))
    assert code == 2
    one_error_line(err, str(sw), 2)


@pytest.mark.parametrize(
    "body, key",
    [
        ('[axes]\n"job.queue_depth" = [1, 1]\n', "axes.job.queue_depth"),
        ('[axes]\n"job.queue_depth" = []\n', "axes.job.queue_depth"),
        ('[axes]\n"job.queue_depth" = [1, "x"]\n', "axes.job.queue_depth"),
        ('[set]\n"job.queue_depth" = 1\n[axes]\n"job.queue_depth" = [2]\n', "set.job.queue_depth"),
        ('bogus = 1\n[axes]\n"job.queue_depth" = [2]\n', "bogus"),
        ('[axes]\n"job.queue_depth" = [9223372036854775807]\n', "job.queue_depth"),
        ('name = "../x"\n[axes]\n"job.queue_depth" = [2]\n', "name"),
        (f'name = "{"n" * 3000}"\n[axes]\n"job.queue_depth" = [2]\n', "name"),
    ],
)
def test_reliab_sweep_mutants(tmp_path, cli, body, key):
    (tmp_path / "s.toml").write_text(STORAGE.format(duration=0.001))
    sw = tmp_path / "sw.toml"
    sw.write_text('scenario = "s.toml"\n' + body)
    code, _, err = cli("sweep", str(sw), "--out", str(tmp_path / "o"), "--workers", "1")
    assert code == 2, err
    assert "Traceback" not in err and key in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    "module, text, key",
    [
        ("numa", 'module = "numa"\npolicies = ["local", "local"]\n', "policies.1"),
        ("tiering", 'module = "tiering"\n[antagonist]\nintensities = [0, 4, 0]\n', "antagonist.intensities.2"),
        ("tiering", 'module = "tiering"\n[policy]\nnames = ["hemem", "hemem"]\n', "policy.names.1"),
        ("numa", 'module = "numa"\n[app]\npasses = 9223372036854775807\n', "app.passes"),
        ("numa", 'module = "numa"\n[app]\npasses = 1e12\n', "app.passes"),
    ],
)
def test_reliab_absurd_values_and_repeats_are_refused(tmp_path, module, text, key):
    f = tmp_path / "s.toml"
    f.write_text(text)
    with pytest.raises(hmsim.ConfigError) as e:
        hmsim.run(f)
    assert key in str(e.value), e.value


# ---------------------------------------------------------------- corrupted traces


def _lackey(n: int = 600) -> list[str]:
    return [f" L {0x1000 + 64 * i:x},8\n" if i % 2 else f" S {0x1000 + 64 * i:x},4\n" for i in range(n)]


@pytest.mark.parametrize("bad", [1, 3, 200, 399, 401, 600])
@pytest.mark.parametrize("command", ["info", "convert", "lifetime"])
def test_reliab_bad_trace_line_is_named(tmp_path, cli, bad, command):
    lines = _lackey()
    lines[bad - 1] = "not a record at all\n"
    t = tmp_path / "t.lackey"
    t.write_text("".join(lines))
    args = {
        "info": ["trace", "info", str(t)],
        "convert": ["trace", "convert", str(t), str(tmp_path / "t.hmt")],
        "lifetime": ["lifetime", "--trace", str(t)],
    }[command]
    code, _, err = cli(*args)
    assert code == 2
    one_error_line(err, str(t), bad)


@pytest.mark.parametrize(
    "name, data, words",
    [
        ("noise.bin", random.Random(3).randbytes(10_000), "not a ChampSim"),
        ("nul.txt", b"LD 0x1000\nST 0x2000\nLD 0x3\x0000\n", "NUL byte"),
        ("cut.txt", b" L 1000,8\n S 2000,8\n L 30", "cut off"),
        ("empty.txt", b"", "empty"),
    ],
)
def test_reliab_corrupt_trace_kinds(tmp_path, cli, name, data, words):
    t = tmp_path / name
    t.write_bytes(data)
    for args in (["trace", "info", str(t)], ["lifetime", "--trace", str(t)]):
        code, _, err = cli(*args)
        assert code == 2, err
        one_error_line(err, str(t))
        assert words in err, err


def test_reliab_dev_zero_is_refused_not_read_forever(tmp_path, cli):
    code, _, err = cli("trace", "info", "/dev/zero")
    assert code == 2
    one_error_line(err, "/dev/zero")
    for example in ("tiering-replay-sqlite3.toml", "hybrid-replay-pigz-trace.toml"):
        s = tmp_path / example
        text = (ROOT / "examples" / example).read_text()
        s.write_text(re.sub(r'(?m)^trace = ".*"$', 'trace = "/dev/zero"', text))
        code, _, err = cli("run", str(s), "--out", str(tmp_path / "o"))
        assert code == 2, err
        one_error_line(err, str(s))
        assert "workload.trace" in err and "device" in err, err


def test_reliab_index_beyond_host_memory_is_refused_not_aborted(tmp_path):
    s = tmp_path / "s.toml"
    s.write_text('module = "pm-index"\nseed = 1\n[index]\nname = "p-clht"\n[workload]\nrecords = 4294967296\n')
    env = {k: v for k, v in os.environ.items() if k != "HMSIM_ALLOW_LARGE"}
    cmd = "import sys; from hmsim.cli import main; sys.exit(main(sys.argv[1:]))"
    p = subprocess.run(
        [sys.executable, "-c", cmd, "run", str(s), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.returncode == 2, p.stderr
    one_error_line(p.stderr, str(s), 6)
    assert "workload.records" in p.stderr and "HMSIM_ALLOW_LARGE=1" in p.stderr, p.stderr
    assert "panicked" not in p.stderr and "backtrace" not in p.stderr, p.stderr
    assert not (tmp_path / "o").exists()


def test_reliab_lifetime_on_traces_without_writes_sizes_or_times(tmp_path, cli):
    # Committed kmem traces are page events: refused with what they are.
    code, _, err = cli("lifetime", "--trace", str(TRACES / "gcc.kmem.hmt"))
    assert code == 2
    one_error_line(err, "gcc.kmem.hmt")
    assert "page allocation events" in err
    # Load-only lackey: a result, with n/a where nothing was written.
    t = tmp_path / "loads.lackey"
    t.write_text("".join(f" L {0x1000 + 64 * i:x},8\n" for i in range(500)))
    code, out, err = cli("lifetime", "--trace", str(t))
    assert code == 0, err
    assert "n/a" in out
    # Ramulator cpu mode: no timestamps, no stores.
    t = tmp_path / "cpu.trace"
    t.write_text("".join(f"3 {4096 * i}\n" for i in range(500)))
    code, out, err = cli("lifetime", "--trace", str(t))
    assert code == 0, err
    # A block trace is refused.
    t = tmp_path / "blk.trace"
    t.write_text("".join(f"{i}.5 0 {8 * i} 8 1\n" for i in range(100)))
    code, _, err = cli("lifetime", "--trace", str(t))
    assert code == 2
    assert "block-device" in err


def test_reliab_memory_controller_writes_are_whole_lines(tmp_path):
    rng = random.Random(5)
    t = tmp_path / "vans.trace"
    t.write_text("".join(f"0x{rng.randrange(1 << 30) & ~63:x} W\n" for _ in range(20_000)))
    r = hmsim.lifetime.lifetime(t).results.iloc[0]
    assert r.stored_bytes == 64 * 20_000
    # Each 64 B request costs the media ~4 (256 B XPLine RMW); end to end says the same.
    assert 3.5 < r.write_amplification < 4.1
    assert abs(r.wa_end_to_end - r.media_writes_64b / 20_000) < 1e-9
    # Pinatrace gives no sizes: per-byte figures are unavailable, not computed from 1.
    t = tmp_path / "pin.trace"
    t.write_text("".join(f"0x400000: W 0x{0x1000 + 8 * i:x}\n" for i in range(1000)) + "#eof\n")
    r = hmsim.lifetime.lifetime(t).results.iloc[0]
    # Typed results: a gap in an integer column is pandas' NA, in a float column NaN.
    assert pd.isna(r.stored_bytes)
    assert pd.isna(r.wa_end_to_end)


# ---------------------------------------------------------------- outputs: atomic, locked, umask, disk full


HOLD = (
    "import sys; from hmsim.outdir import exclusive\n"
    "with exclusive(sys.argv[1]):\n    print('held', flush=True); sys.stdin.read()"
)


def test_reliab_second_writer_is_refused(tmp_path, cli):
    s = tmp_path / "s.toml"
    s.write_text(STORAGE.format(duration=0.001))
    out = tmp_path / "o"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "held"
    code, _, err = cli("run", str(s), "--out", str(out))
    holder.communicate("")
    assert code == 2
    one_error_line(err, str(out))
    assert "another hmsim" in err
    code, _, err = cli("run", str(s), "--out", str(out))
    assert code == 0, err
    assert not list(tmp_path.glob(".o.*")), list(tmp_path.iterdir())


def test_reliab_run_replaces_the_folder_whole_and_refuses_foreign_folders(tmp_path, cli):
    s = tmp_path / "s.toml"
    s.write_text(STORAGE.format(duration=0.001))
    out = tmp_path / "o"
    assert cli("run", str(s), "--out", str(out))[0] == 0
    (out / "stale.csv").write_text("old\n")
    assert cli("run", str(s), "--out", str(out))[0] == 0
    assert not (out / "stale.csv").exists()  # nothing of the old run is mixed in
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    code, _, err = cli("run", str(s), "--out", str(foreign))
    assert code == 2
    one_error_line(err, str(foreign))
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_reliab_failed_run_keeps_the_old_results(tmp_path, cli, monkeypatch):
    s = tmp_path / "s.toml"
    s.write_text(STORAGE.format(duration=0.001))
    out = tmp_path / "o"
    assert cli("run", str(s), "--out", str(out))[0] == 0
    before = (out / "summary.json").read_text()
    import hmsim.results

    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    real = hmsim.results._atomic_write

    def failing(path, write, mode="w", durable=True):
        if path.name == "summary.json":
            return real(path, lambda f: full(path, None), mode, durable)
        return real(path, write, mode, durable)

    monkeypatch.setattr(hmsim.results, "_atomic_write", failing)
    code, _, err = cli("run", str(s), "--out", str(out))
    assert code == 2
    one_error_line(err, "summary.json")
    assert "summary.json: write: No space left on device" in err
    assert (out / "summary.json").read_text() == before
    assert not list(tmp_path.glob(".o.*"))


def test_reliab_result_files_follow_the_umask(tmp_path):
    s = tmp_path / "s.toml"
    s.write_text(STORAGE.format(duration=0.001))
    code = (
        "import os; os.umask(0o027); from hmsim.cli import main; "
        f"raise SystemExit(main(['run', {str(s)!r}, '--out', {str(tmp_path / 'o')!r}]))"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    for f in (tmp_path / "o").iterdir():
        assert f.stat().st_mode & 0o777 == 0o640, f
    assert (tmp_path / "o").stat().st_mode & 0o777 == 0o750


# ---------------------------------------------------------------- signals: kill and resume


def _hmsim(*args: str) -> subprocess.Popen:
    exe = Path(sys.executable).parent / "hmsim"
    return subprocess.Popen([str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(pred, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.05)


def test_reliab_sigterm_during_a_sweep_keeps_points_and_resumes(tmp_path):
    (tmp_path / "s.toml").write_text(STORAGE.format(duration=0.05))
    sw = tmp_path / "sw.toml"
    sw.write_text('scenario = "s.toml"\n[axes]\n"job.queue_depth" = [1, 2, 3, 4, 5, 6, 7, 8]\n')
    out = tmp_path / "o"
    p = _hmsim("sweep", str(sw), "--out", str(out), "--workers", "1")
    _wait_for(lambda: len(list((out / "points").glob("*.json"))) >= 1 or p.poll() is not None)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=120)
    if p.returncode == 0:
        pytest.skip("the sweep finished before the signal")
    assert p.returncode == 143, err
    assert "Traceback" not in err and "resume" in err, err
    if (out / "summary.json").exists():
        # The signal landed as the finished sweep was leaving: still the resume hint.
        pytest.skip("the sweep finished as the signal came")
    assert not list((out / "points").glob(".*.tmp"))
    kept = len(list((out / "points").glob("*.json")))
    assert kept >= 1
    p = _hmsim("sweep", str(sw), "--out", str(out), "--workers", "1")
    so, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert f"{kept} reused" in so, so
    assert (out / "summary.json").exists()


def test_reliab_sigterm_during_a_run_leaves_no_partial_folder(tmp_path):
    s = tmp_path / "s.toml"
    s.write_text(STORAGE.format(duration=30.0))  # long enough to be interrupted
    out = tmp_path / "o"
    p = _hmsim("run", str(s), "--out", str(out))
    _wait_for(lambda: (tmp_path / ".o.lock").exists() or p.poll() is not None)
    time.sleep(0.3)
    start = time.monotonic()
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert time.monotonic() - start < 10, "the signal takes effect promptly"
    assert "Traceback" not in err
    assert not out.exists()
    assert [x.name for x in tmp_path.iterdir()] == ["s.toml"]
    # SIGKILL cannot be handled: it leaves a stale lock file, which the next run takes over.
    p = _hmsim("run", str(s), "--out", str(out))
    _wait_for(lambda: (tmp_path / ".o.lock").exists() or p.poll() is not None)
    p.kill()
    p.communicate(timeout=60)
    s.write_text(STORAGE.format(duration=0.001))
    p = _hmsim("run", str(s), "--out", str(out))
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert sorted(x.name for x in tmp_path.iterdir()) == ["o", "s.toml"]


def test_reliab_set_into_default_tiers_changes_that_default(tmp_path, cli):
    # The example has no [[tiers]]: the override applies to the default tiers (#30).
    scenario = ROOT / "examples" / "tiering-hot-set-move.toml"
    assert "[[tiers]]" not in scenario.read_text()
    out = tmp_path / "o"
    sets = ["tiers.1.unloaded_latency_ns=250", "sim.duration_s=1", "sim.measure_last_s=0.5", 'policy.names=["hemem"]']
    code, _, err = cli("run", str(scenario), "--out", str(out), *[a for s in sets for a in ("--set", s)])
    assert code == 0, err
    tiers = json.loads((out / "summary.json").read_text())["resolved_config"]["tiers"]
    assert [(t["name"], t["unloaded_latency_ns"]) for t in tiers] == [("default", 70.0), ("alternate", 250.0)]
    code, _, err = cli("run", str(scenario), "--out", str(out), "--set", "tiers.1.latency=3")
    assert code == 2
    one_error_line(err, "tiers.1.latency")
    assert "`device`, `name`" in err, err


def test_reliab_trace_convert_refuses_a_gap_it_would_expand_past_the_limit(tmp_path, cli):
    # 16 bytes: one Ramulator cpu line with 2^32 bubbles, 60 GB as lackey `I` lines (#31).
    src = tmp_path / "b.txt"
    src.write_text("4294967296 4096\n")
    for dst, to in (("b.lackey", "lackey"), ("b.lackey.zst", "lackey"), ("b.champsim", "champsim")):
        start = time.monotonic()
        code, _, err = cli("trace", "convert", str(src), str(tmp_path / dst), "--to", to)
        assert code == 2, err
        one_error_line(err, dst)
        assert "record 1 has an instruction gap of 4294967297" in err, err
        assert "--max-output-bytes" in err, err
        assert time.monotonic() - start < 10, "refused up front"
    assert [x.name for x in tmp_path.iterdir()] == ["b.txt"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_reliab_signal_stops_a_long_conversion_and_removes_its_temp_file(tmp_path, sig):
    src = tmp_path / "b.txt"
    src.write_text("4294967296 4096\n")
    dst = tmp_path / "b.lackey.zst"  # compressed: the disk stays free while it runs
    p = _hmsim("trace", "convert", str(src), str(dst), "--to", "lackey", "--max-output-bytes", "0")
    _wait_for(lambda: any(x.name.startswith("b.lackey.zst.tmp-") for x in tmp_path.iterdir()) or p.poll() is not None)
    time.sleep(0.5)
    assert p.poll() is None, p.communicate()
    start = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 128 + sig, err
    assert time.monotonic() - start < 5, "the signal takes effect promptly"
    assert "Traceback" not in err
    assert [x.name for x in tmp_path.iterdir()] == ["b.txt"]


def test_reliab_sigint_during_start_up_is_clean(tmp_path):
    p = _hmsim("devices")
    time.sleep(0.4)  # inside hmsim's imports (before that, Python itself is starting)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode in (0, 130), err
    assert "Traceback" not in err


# ---------------------------------------------------------------- Python API misuse


@pytest.mark.parametrize(
    "call",
    [
        lambda t: hmsim.run(t / "s.toml", set="job.queue_depth=4"),
        lambda t: hmsim.run(t / "s.toml", set=[("job.queue_depth", 4)]),
        lambda t: hmsim.run(t / "s.toml", set={1: 2}),
        lambda t: hmsim.run(t / "s.toml", set={"job.queue_depth": object()}),
        lambda t: hmsim.run(t / "s.toml", devices="/tmp"),
        lambda t: hmsim.run(t / "s.toml", devices=5),
        lambda t: hmsim.run(t / "s.toml", out=5),
        lambda t: hmsim.run(12),
        lambda t: hmsim.run(None),
        lambda t: hmsim.run(t),
        lambda t: hmsim.run({"module": "storage", "x": object()}),
        lambda t: hmsim.run_sweep(t / "sw.toml", out=t / "o", workers=-1),
        lambda t: hmsim.run_sweep(t / "sw.toml", out=t / "o", workers=2.5),
        lambda t: hmsim.run_sweep(t / "sw.toml", out=t / "o", workers=10**30),
        lambda t: hmsim.run_sweep(t / "sw.toml", out=None),
        lambda t: hmsim.run_sweep(t / "sw.toml", out=t / "o", backend="dask"),
        lambda t: hmsim.lifetime.lifetime(t / "x.lackey", device=3),
        lambda t: hmsim.lifetime.lifetime(t / "x.lackey", cores=-1),
        lambda t: hmsim.lifetime.lifetime(t / "x.lackey", cores=float("nan")),
        lambda t: hmsim.lifetime.lifetime(t / "x.lackey", fmt=7),
        lambda t: hmsim.devices("/tmp"),
        lambda t: hmsim.reproduce("storage", out=t / "r", workers=0),
        lambda t: hmsim.reproduce("storage", out=t / "r", quick="yes"),
        lambda t: hmsim.reproduce(["storage"], out=t / "r"),
        lambda t: hmsim.reproduce("nope", out=t / "r"),
        lambda t: hmsim.trace.info(t / "x.lackey", top=-1),
        lambda t: hmsim.trace.info(t / "x.lackey", fmt=3),
        lambda t: hmsim.trace.convert(t / "x.lackey", None),
        lambda t: hmsim.trace.convert(t / "x.lackey", t / "y", to=["native"]),
        lambda t: hmsim.trace.convert(t / "x.lackey", t / "y", to="lackey", max_output_bytes=-1),
        lambda t: hmsim.trace.convert(t / "x.lackey", t / "y", to="lackey", max_output_bytes=2**64),
    ],
)
def test_reliab_api_misuse_is_a_config_error(tmp_path, call):
    import hmsim.lifetime
    import hmsim.trace

    (tmp_path / "s.toml").write_text(STORAGE.format(duration=0.001))
    (tmp_path / "sw.toml").write_text('scenario = "s.toml"\n[axes]\n"job.queue_depth" = [1]\n')
    (tmp_path / "x.lackey").write_text(" L 1000,8\n")
    with pytest.raises(hmsim.ConfigError) as e:
        call(tmp_path)
    assert str(e.value) and "\n" not in str(e.value)


# ---------------------------------------------------------------- special files


@pytest.mark.parametrize("kind", ["/dev/zero", "/dev/urandom", "fifo", "dir", "huge"])
def test_reliab_special_files_as_scenario_sweep_or_device_are_refused_up_front(tmp_path, cli, kind):
    if kind == "fifo":
        path = tmp_path / "f.toml"
        os.mkfifo(path)  # no writer: opening it for reading would block for ever
    elif kind == "dir":
        path = tmp_path / "d.toml"
        path.mkdir()
    elif kind == "huge":
        path = tmp_path / "big.toml"
        with open(path, "wb") as f:
            f.truncate(hmsim.errors.MAX_TEXT_BYTES + 1)  # sparse: costs no disk
    else:
        path = Path(kind)
    (tmp_path / "s.toml").write_text(STORAGE.format(duration=0.001))
    sw = tmp_path / "sw.toml"
    sw.write_text(f'scenario = "{path}"\n[axes]\n"job.queue_depth" = [1]\n')
    devdir = tmp_path / "devs"
    devdir.mkdir()
    if kind in ("fifo", "huge"):
        os.rename(path, devdir / path.name)
        (tmp_path / path.name).symlink_to(devdir / path.name)
    for args in (
        ["run", str(path), "--out", str(tmp_path / "o")],
        ["sweep", str(path), "--out", str(tmp_path / "o")],
        ["sweep", str(sw), "--out", str(tmp_path / "o")],
        ["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--device-dir", str(path)],
        ["devices", "--device-dir", str(devdir if kind in ("fifo", "huge") else path)],
    ):
        if kind == "dir" and "--device-dir" in args:
            continue  # a folder is what --device-dir takes
        code, _, err = cli(*args)
        assert code == 2, (args, err)
        one_error_line(err, path.name if kind in ("fifo", "huge") else str(path))
        assert re.search(r"FIFO|character device|directory|MiB", err), err
    assert not (tmp_path / "o").exists()


def test_reliab_sweep_file_with_a_bom_is_read_like_a_scenario(tmp_path, cli):
    (tmp_path / "s.toml").write_bytes(b"\xef\xbb\xbf" + STORAGE.format(duration=0.001).encode())
    sw = tmp_path / "sw.toml"
    sw.write_bytes(b'\xef\xbb\xbfscenario = "s.toml"\n[axes]\n"job.queue_depth" = [1]\n')
    code, _, err = cli("sweep", str(sw), "--out", str(tmp_path / "o"), "--workers", "1")
    assert code == 0, err


def test_reliab_lifetime_cli_on_a_trace_without_sizes(tmp_path, cli):
    # Pinatrace gives no access sizes: stored bytes are pandas' NA, printed as n/a.
    t = tmp_path / "p.pin"
    t.write_text("0x1: W 0x1000\n#eof\n")
    code, out, err = cli("lifetime", "--trace", str(t))
    assert code == 0, err
    assert "n/a (store sizes not in the trace format)" in out, out


# ---------------------------------------------------------------- double signals


def _burst(pid: int, n: int, gap_s: float) -> None:
    for _ in range(n):
        try:
            os.kill(pid, signal.SIGINT)
        except ProcessLookupError:
            return
        end = time.perf_counter() + gap_s
        while time.perf_counter() < end:
            pass


def test_reliab_a_second_signal_while_leaving_is_ignored():
    from hmsim import signals

    old = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        signals.install()
        with pytest.raises(KeyboardInterrupt):
            signals._on_signal(signal.SIGTERM, None)
        signals._on_signal(signal.SIGINT, None)  # no second KeyboardInterrupt
        assert signals.exit_status() == 143  # the first one decides
    finally:
        signal.signal(signal.SIGINT, old[0])
        signal.signal(signal.SIGTERM, old[1])


@pytest.mark.parametrize("phase", ["simulating", "writing"])
@pytest.mark.parametrize("gap_s", [0.0, 0.0001])
def test_reliab_two_ctrl_c_during_a_run_exit_130_cleanly(tmp_path, phase, gap_s):
    out = tmp_path / "o"
    example = ROOT / "examples" / "storage-qd16.toml"
    # Simulating: the core runs for minutes. Writing: a short run, signalled once its
    # staging folder appears, while Python draws the figures (where a second
    # KeyboardInterrupt inside clean-up code used to escape as a traceback, exit -2).
    duration = "3000" if phase == "simulating" else "2"
    p = _hmsim("run", str(example), "--out", str(out), "--set", f"job.duration_s={duration}")
    if phase == "simulating":
        _wait_for(lambda: (tmp_path / ".o.lock").exists() or p.poll() is not None, timeout=30)
        time.sleep(0.2)
    else:
        _wait_for(lambda: any(tmp_path.glob(".o.tmp-*")) or p.poll() is not None, timeout=30)
    assert p.poll() is None, p.communicate()
    # Two at once, then a burst: some land while hmsim is already cleaning up and leaving.
    _burst(p.pid, 2, 0.0)
    _burst(p.pid, 400, gap_s)
    _, err = p.communicate(timeout=30)
    assert "Traceback" not in err and "release unlocked lock" not in err, err
    if phase == "writing" and p.returncode == 0:
        # The run's last writes were done as the signals came (it was leaving): a whole
        # result, no staging folder or lock left behind.
        assert (out / "results.csv").exists() and (out / "summary.json").exists()
        assert [x.name for x in tmp_path.iterdir()] == ["o"], list(tmp_path.iterdir())
        return
    assert p.returncode == 130, err
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())


# ---------------------------------------------------------------- swapping results in


def _run_into(cli, tmp_path, out, duration=0.001, *extra):
    s = tmp_path / "s.toml"
    s.write_text(STORAGE.format(duration=duration))
    code, _, err = cli("run", str(s), "--out", str(out), *extra)
    assert code == 0, err
    return (out / "summary.json").read_text()


def test_reliab_swap_is_one_exchange_where_the_os_can(tmp_path, cli, monkeypatch):
    from hmsim import outdir

    out = tmp_path / "o"
    _run_into(cli, tmp_path, out)
    (out / "first").write_text("1")
    seen = []
    real = outdir._exchange

    def spy(a, b):
        ok = real(a, b)
        seen.append((ok, b.exists(), (b / "first").exists(), (a / "first").exists()))
        return ok

    monkeypatch.setattr(outdir, "_exchange", spy)
    _run_into(cli, tmp_path, out)
    if not seen[0][0]:
        pytest.skip("no RENAME_EXCHANGE on this system")
    # One step: the new result at `out`, the old one at the temporary name, then removed.
    assert seen == [(True, True, False, True)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o", "s.toml"]


def test_reliab_interrupt_between_the_two_renames_keeps_a_result(tmp_path, cli, monkeypatch):
    from hmsim import outdir

    out = tmp_path / "o"
    before = _run_into(cli, tmp_path, out)
    monkeypatch.setattr(outdir, "_exchange", lambda a, b: False)  # the two-rename fallback
    real = os.rename

    def interrupted(src, dst):
        if Path(dst) == out and ".o.tmp-" in str(src):
            raise KeyboardInterrupt  # a signal after `out` was moved aside
        return real(src, dst)

    monkeypatch.setattr(os, "rename", interrupted)
    s = tmp_path / "s.toml"
    with pytest.raises(KeyboardInterrupt):
        hmsim.run(s, out=out)
    monkeypatch.setattr(os, "rename", real)
    assert (out / "summary.json").read_text() == before  # put back at once
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o", "s.toml"]


def test_reliab_a_kill_between_the_renames_is_repaired_by_the_next_writer(tmp_path, cli):
    from hmsim.outdir import exclusive, staged

    out = tmp_path / "o"
    before = _run_into(cli, tmp_path, out)
    # What SIGKILL between `out -> .o.old-PID` and `.o.tmp-* -> out` leaves.
    os.rename(out, tmp_path / ".o.old-4242")
    (tmp_path / ".o.tmp-abcd1234").mkdir()
    with pytest.raises(RuntimeError), exclusive(out), staged(out):
        raise RuntimeError("the next run fails too")
    assert (out / "summary.json").read_text() == before  # restored, not deleted
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o", "s.toml"]
    _run_into(cli, tmp_path, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o", "s.toml"]


def test_reliab_glob_characters_in_out_touch_no_other_output(tmp_path, cli):
    g = tmp_path / "g"
    _run_into(cli, tmp_path, g / "abc")
    for left in (".abc.tmp-zzzz1234", ".abc.old-999"):
        (g / left).mkdir()
        (g / left / "x").write_text("not yours")
    for name in ("a*", "a?c", "[a]bc"):
        _run_into(cli, tmp_path, g / name)
        assert (g / name / "summary.json").exists()
    assert (g / ".abc.tmp-zzzz1234" / "x").exists() and (g / ".abc.old-999" / "x").exists()
    assert (g / "abc" / "summary.json").exists()


# ---------------------------------------------------------------- only hmsim's folders


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_reliab_run_and_sweep_refuse_a_user_folder_even_with_a_summary_json(tmp_path, cli, command):
    (tmp_path / "s.toml").write_text(STORAGE.format(duration=0.001))
    sw = tmp_path / "sw.toml"
    sw.write_text('scenario = "s.toml"\n[axes]\n"job.queue_depth" = [1]\n')
    given = str(tmp_path / ("s.toml" if command == "run" else "sw.toml"))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "results.csv").write_text("my,data\n1,2\n")
    for summary in ('{"mine": true}\n', "not json", '["hmsim_version"]'):
        (mine / "summary.json").write_text(summary)
        extra = ["--workers", "1"] if command == "sweep" else []
        code, _, err = cli(command, given, "--out", str(mine), *extra)
        assert code == 2, err
        one_error_line(err, str(mine))
        assert "hmsim did not make" in err
        assert (mine / "results.csv").read_text() == "my,data\n1,2\n"
        assert (mine / "summary.json").read_text() == summary


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_reliab_results_of_earlier_versions_are_still_replaced(tmp_path, cli, command):
    (tmp_path / "s.toml").write_text(STORAGE.format(duration=0.001))
    sw = tmp_path / "sw.toml"
    sw.write_text('scenario = "s.toml"\n[axes]\n"job.queue_depth" = [1]\n')
    old = tmp_path / "old"
    old.mkdir()  # an earlier hmsim's result: no marker, its summary.json says hmsim
    (old / "results.csv").write_text("a\n1\n")
    (old / "summary.json").write_text('{"module": "storage", "hmsim_version": "0.1.0", "seed": 1}\n')
    args = [command, str(tmp_path / ("s.toml" if command == "run" else "sw.toml")), "--out", str(old)]
    code, _, err = cli(*args, *(["--workers", "1"] if command == "sweep" else []))
    assert code == 0, err
    assert (old / ".hmsim").exists() and "queue_depth" in (old / "results.csv").read_text()


def test_reliab_symlinked_out_is_followed_and_leaves_nothing_behind(tmp_path, cli):
    real = tmp_path / "real"
    link = tmp_path / "link"
    link.symlink_to(real)  # dangling at first
    for _ in range(2):
        _run_into(cli, tmp_path, link)
        assert link.is_symlink() and (real / "summary.json").exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real", "s.toml"]


def test_reliab_killed_convert_temps_are_removed_by_the_next_convert(tmp_path, cli):
    t = tmp_path / "t.lackey"
    t.write_text("".join(_lackey(50)))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"t.hmt.tmp-{dead.pid}"
    stale.write_bytes(b"partial")
    live = tmp_path / f"t.hmt.tmp-{os.getppid()}"  # a writer still running: left alone
    live.write_bytes(b"partial")
    other = tmp_path / f"u.hmt.tmp-{dead.pid}"  # another output's
    other.write_bytes(b"partial")
    code, _, err = cli("trace", "convert", str(t), str(tmp_path / "t.hmt"))
    assert code == 0, err
    assert not stale.exists() and live.exists() and other.exists()


# ---------------------------------------------------------------- sweeps and overrides


def test_reliab_table_values_on_a_sweep_axis_are_refused_naming_the_axis(tmp_path, cli):
    (tmp_path / "s.toml").write_text(STORAGE.format(duration=0.001))
    sw = tmp_path / "sw.toml"
    sw.write_text('scenario = "s.toml"\n[axes]\n"job.queue_depth" = [{a = 7}, {b = 9}]\n')
    code, _, err = cli("sweep", str(sw), "--out", str(tmp_path / "o"), "--workers", "1")
    assert code == 2, err
    one_error_line(err, str(sw))
    assert "[axes] job.queue_depth = {a = 7}" in err or "[axes] job.queue_depth = {b = 9}" in err, err
    assert "map" in err, err  # a table, refused as `--set job.queue_depth={a = 7}` is


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda s: hmsim.run(s, set={"job.queue_depth": [1, 2]}), "set['job.queue_depth'] = [1, 2]: "),
        (lambda s: hmsim.run(s, set={"job.bogus": 1}), "set['job.bogus'] = 1: "),
        (lambda s: hmsim.run(s, set=["job.queue_depth"]), "set: 'job.queue_depth' is not key=value"),
        (lambda s: hmsim.sweep(s, axes={"job.queue_depth": [[1, 2]]}), "axes['job.queue_depth'] value [1, 2]: "),
        (lambda s: hmsim.sweep(s, axes={"job.queue_depth": [{"a": 7}]}), "axes['job.queue_depth'] value {a = 7}: "),
        (lambda s: hmsim.sweep(s, axes={"job.queue_depth": [1]}, set={"job.x": [3]}), "set['job.x'] = [3]: "),
        (lambda s: hmsim.sweep(s, axes={1: [1]}), "axes: expected dotted key paths"),
        (lambda s: hmsim.sweep(s, axes={"job.queue_depth": [1]}, set={2: 1}), "set: expected dotted key paths"),
        (lambda s: hmsim.sweep(s, axes=[1]), "axes: expected a non-empty mapping"),
        (lambda s: hmsim.sweep(s, axes={"job.queue_depth": [1]}, backend="dask"), "backend: expected"),
        (lambda s: hmsim.sweep(s, axes={"job.queue_depth": [1]}, workers=0), "workers"),
    ],
)
def test_reliab_python_api_errors_name_the_argument_used(tmp_path, call, words):
    s = tmp_path / "s.toml"
    s.write_text(STORAGE.format(duration=0.001))
    with pytest.raises(hmsim.ConfigError) as e:
        call(s)
    msg = str(e.value)
    assert "\n" not in msg and "--set" not in msg, msg
    assert msg.startswith(words) if words.endswith(": ") else words in msg, msg


def test_reliab_cli_set_errors_stay_worded_as_set_and_one_line(tmp_path, cli):
    s = tmp_path / "s.toml"
    s.write_text(STORAGE.format(duration=0.001))
    code, _, err = cli("run", str(s), "--out", str(tmp_path / "o"), "--set", "job.queue_depth=[1, 2]")
    assert code == 2
    one_error_line(err, "--set job.queue_depth=[1, 2]")
    code, _, err = cli("run", str(s), "--out", str(tmp_path / "o"), "--set", "job.queue_depth")
    assert code == 2
    one_error_line(err, "--set")


@pytest.mark.parametrize(
    "body, key",
    [
        (f'description = "{"d" * 100_000}"\n', "description"),
        ("description = 5\n", "description"),
        ('[set]\n"job.duration_s" = 1e300\n', "set.job.duration_s"),
        (f'[set]\n"device.name" = "{"x" * 5000}"\n', "set.device.name"),
    ],
)
def test_reliab_sweep_files_get_the_scenario_bounds(tmp_path, cli, body, key):
    (tmp_path / "s.toml").write_text(STORAGE.format(duration=0.001))
    sw = tmp_path / "sw.toml"
    sw.write_text('scenario = "s.toml"\n' + body + '[axes]\n"job.queue_depth" = [1]\n')
    code, _, err = cli("sweep", str(sw), "--out", str(tmp_path / "o"), "--workers", "1")
    assert code == 2, err
    one_error_line(err, str(sw))
    assert f"key '{key}'" in err, err
    assert len(err) < 400, err


# ---------------------------------------------------------------- usage errors, full disk


@pytest.mark.parametrize(
    "args, words",
    [
        (["run"], "run: Missing argument 'SCENARIO'"),
        (["run", "--bogus", "x"], "run: No such option '--bogus'"),
        (["bogus"], "No such command 'bogus'"),
        (["sweep", "x", "--out", "o", "--workers", "0"], "sweep: Invalid value for '--workers'"),
    ],
)
def test_reliab_usage_errors_are_one_line_and_a_hint(cli, args, words):
    code, _, err = cli(*args)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith("hmsim: error: ") and words in lines[0], err
    assert lines[1].startswith("hmsim: try 'hmsim") and "--help'" in lines[1], err


def test_reliab_full_disk_on_the_lock_names_it_and_leaves_no_lock(tmp_path, cli, monkeypatch):
    s = tmp_path / "s.toml"
    s.write_text(STORAGE.format(duration=0.001))

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "pwrite", full)
    code, _, err = cli("run", str(s), "--out", str(tmp_path / "o"))
    assert code == 2
    one_error_line(err, ".o.lock")
    assert ".o.lock: write: No space left on device" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]
    monkeypatch.undo()
    # An I/O error nothing named is still one line, without an empty file name.
    monkeypatch.setattr("hmsim.scenario.write_run", full)
    code, _, err = cli("run", str(s), "--out", str(tmp_path / "o"))
    assert code == 2 and err == "hmsim: error: No space left on device\n", err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]


def _sweep_file(tmp_path: Path, n: int, duration: float) -> Path:
    (tmp_path / "s.toml").write_text(STORAGE.format(duration=duration))
    sw = tmp_path / "sw.toml"
    depths = ", ".join(str(i + 1) for i in range(n))
    sw.write_text(f'scenario = "s.toml"\n[axes]\n"job.queue_depth" = [{depths}]\n')
    return sw


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_reliab_signals_while_a_sweep_leaves_give_128_plus_the_signal(tmp_path, sig, status):
    sw = _sweep_file(tmp_path, 6, 0.05)
    out = tmp_path / "o"
    p = _hmsim("sweep", str(sw), "--out", str(out), "--workers", "2")
    _wait_for(lambda: any((out / "points").glob("*.json")) or p.poll() is not None, timeout=30)
    # The first signal interrupts; the rest land while it leaves (the pool's running points
    # are abandoned, the interpreter shuts down) and must not change the status.
    for _ in range(300):
        try:
            os.kill(p.pid, sig)
        except ProcessLookupError:
            break
        time.sleep(0.0002)
    _, err = p.communicate(timeout=30)
    if p.returncode == 0:
        pytest.skip("the sweep finished before the signal")
    assert p.returncode == status, err
    assert "Traceback" not in err, err
    assert not list(tmp_path.glob(".o.*")), list(tmp_path.iterdir())


# ---------------------------------------------------------------- generated families
# `make fuzz` raises these counts; the default run keeps each test to seconds.
FUZZ_FILES = int(os.environ.get("HMSIM_FUZZ_FILES", "40"))
FUZZ_OUTPUTS = int(os.environ.get("HMSIM_FUZZ_OUTPUTS", "25"))
FUZZ_SIGNALS = int(os.environ.get("HMSIM_FUZZ_SIGNALS", "3"))
FUZZ_KILLS = int(os.environ.get("HMSIM_FUZZ_KILLS", "2"))
FIXTURE_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


def _special(folder: Path, kind: str, linked: bool) -> Path:
    """A path of `kind` in `folder` (through a symbolic link when `linked`)."""
    path = folder / f"x-{kind.replace('/', '_')}.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(hmsim.errors.MAX_TEXT_BYTES + 1)
    else:
        path.symlink_to(kind)  # a device: /dev/zero, /dev/urandom, /dev/null
        if linked:
            return path
        return Path(kind)
    if linked:
        link = folder / f"link-{kind.replace('/', '_')}.toml"
        link.symlink_to(path)
        return link
    return path


@settings(max_examples=FUZZ_FILES, deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    kind=st.sampled_from(["fifo", "dir", "huge", "/dev/zero", "/dev/urandom", "/dev/null"]),
    linked=st.booleans(),
    role=st.sampled_from(["scenario", "sweep", "sweep-scenario", "device-file", "device-entry"]),
)
def test_reliab_generated_special_files_never_hang_or_trace(tmp_path_factory, cli, kind, linked, role):
    import faulthandler

    if kind == "dir" and role in ("device-file", "device-entry"):
        return  # a folder is what --device-dir takes (and `*.toml` folders in it are skipped)
    tmp = tmp_path_factory.mktemp("special")
    folder = tmp / "devs"
    folder.mkdir()
    path = _special(folder, kind, linked)
    (tmp / "s.toml").write_text(STORAGE.format(duration=0.001))
    sw = tmp / "sw.toml"
    sw.write_text(f'scenario = "{path}"\n[axes]\n"job.queue_depth" = [1]\n')
    args = {
        "scenario": ["run", str(path)],
        "sweep": ["sweep", str(path)],
        "sweep-scenario": ["sweep", str(sw)],
        "device-file": ["run", str(tmp / "s.toml"), "--device-dir", str(path)],
        "device-entry": ["run", str(tmp / "s.toml"), "--device-dir", str(folder)],
    }[role]
    # A hang (a FIFO opened, a device read without end) fails the run loudly, with stacks.
    faulthandler.dump_traceback_later(60, exit=True, file=sys.__stderr__)
    try:
        code, _, err = cli(*args, "--out", str(tmp / "o"))
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert code == 2, err
    one_error_line(err, path.name)
    assert not (tmp / "o").exists()


_NAME = st.text(alphabet="ab*?[]-._", min_size=1, max_size=6).filter(lambda s: s not in (".", ".."))


@settings(max_examples=FUZZ_OUTPUTS, deadline=None, suppress_health_check=FIXTURE_OK)
@given(name=_NAME, sibling=_NAME, link=st.sampled_from(["none", "to-dir", "dangling"]), runs=st.integers(1, 3))
def test_reliab_generated_outputs_touch_only_their_own_folders(tmp_path_factory, name, sibling, link, runs):
    from hmsim.outdir import MARKER, exclusive, staged

    if name == sibling:
        return
    tmp = tmp_path_factory.mktemp("outs")
    # Another output's folder, lock and leftovers: none of it may be touched.
    theirs = [tmp / sibling, tmp / f".{sibling}.tmp-abc123", tmp / f".{sibling}.old-77"]
    for d in theirs:
        d.mkdir()
        (d / "keep").write_text(d.name)
    out = tmp / name
    if link != "none":
        target = tmp / "target-dir"
        if link == "to-dir":
            target.mkdir()
        out.symlink_to(target)
    for i in range(runs):
        with exclusive(out), staged(out) as t:
            (t / "summary.json").write_text(f'{{"hmsim_version": "x", "run": {i}}}')
    real = out.resolve()
    assert (real / MARKER).exists() and f'"run": {runs - 1}' in (real / "summary.json").read_text()
    if link != "none":
        assert out.is_symlink()
    for d in theirs:
        assert (d / "keep").read_text() == d.name, d
    expected = {sibling, f".{sibling}.tmp-abc123", f".{sibling}.old-77", name} | (
        {"target-dir"} if link != "none" else set()
    )
    assert {p.name for p in tmp.iterdir()} == expected


@settings(max_examples=FUZZ_SIGNALS, deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    sig=st.sampled_from([signal.SIGINT, signal.SIGTERM]),
    count=st.integers(1, 50),
    gap_us=st.integers(0, 500),
    after_s=st.floats(0.0, 0.4),
)
def test_reliab_generated_signal_bursts_during_a_run(tmp_path_factory, sig, count, gap_us, after_s):
    tmp = tmp_path_factory.mktemp("sig")
    out = tmp / "o"
    p = _hmsim("run", str(ROOT / "examples" / "storage-qd16.toml"), "--out", str(out), "--set", "job.duration_s=3000")
    _wait_for(lambda: (tmp / ".o.lock").exists() or p.poll() is not None, timeout=30)
    time.sleep(after_s)
    for _ in range(count):
        try:
            os.kill(p.pid, sig)
        except ProcessLookupError:
            break
        time.sleep(gap_us / 1e6)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 128 + sig, err
    assert "Traceback" not in err, err
    assert list(tmp.iterdir()) == []


@settings(max_examples=FUZZ_KILLS, deadline=None, suppress_health_check=FIXTURE_OK)
@given(sig=st.sampled_from([signal.SIGTERM, signal.SIGKILL]), after_points=st.integers(1, 3))
def test_reliab_generated_mid_sweep_kills_resume_to_the_full_result(tmp_path_factory, sig, after_points):
    tmp = tmp_path_factory.mktemp("kill")
    sw = _sweep_file(tmp, 4, 0.05)
    out = tmp / "o"
    p = _hmsim("sweep", str(sw), "--out", str(out), "--workers", "1")
    _wait_for(lambda: len(list((out / "points").glob("*.json"))) >= after_points or p.poll() is not None)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode in (0, 128 + sig, -sig), err
    assert "Traceback" not in err, err
    p = _hmsim("sweep", str(sw), "--out", str(out), "--workers", "2")
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    df = pd.read_csv(out / "results.csv")
    assert sorted(df["job.queue_depth"]) == [1, 2, 3, 4]
    assert (out / "summary.json").exists() and (out / ".hmsim").exists()
    assert not list((out / "points").glob(".*.tmp")) and not list(tmp.glob(".o.*"))


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "huge"])
def test_reliab_special_files_named_inside_a_scenario_are_refused_by_the_core(tmp_path, cli, kind):
    """A device file named by the scenario itself (`[device] file`) is read by the core: it
    refuses a device, a FIFO with no writer and an oversized file before reading them, in
    well under a second, instead of reading /dev/zero for ever or blocking on the FIFO."""
    import time

    if kind == "fifo":
        path = tmp_path / "d.toml"
        os.mkfifo(path)
    elif kind == "huge":
        path = tmp_path / "d.toml"
        with open(path, "wb") as f:
            f.truncate((4 << 20) + 1)  # sparse: costs no disk
    else:
        path = Path(kind)
    s = tmp_path / "s.toml"
    s.write_text(STORAGE.format(duration=0.001).replace('name = "intel-optane-900p"', f'file = "{path}"'))
    start = time.monotonic()
    code, _, err = cli("run", str(s), "--out", str(tmp_path / "o"))
    assert code == 2, err
    assert time.monotonic() - start < 5
    assert "device.file" in err and re.search(r"FIFO|a device|larger than", err), err
    assert len(err.strip().splitlines()) == 1, err


def test_reliab_a_grid_beyond_the_point_limit_is_refused_before_it_is_built(tmp_path, cli, monkeypatch):
    """A 10^10-point grid used to be built in memory without a word: it is refused at once,
    naming the axes and their sizes, unless HMSIM_ALLOW_LARGE is set."""
    import time

    (tmp_path / "s.toml").write_text(STORAGE.format(duration=0.001))
    sw = tmp_path / "sw.toml"
    axis = list(range(1, 100_001))
    sw.write_text(f'scenario = "s.toml"\n[axes]\n"job.queue_depth" = {axis}\n"seed" = {axis}\n')
    monkeypatch.delenv("HMSIM_ALLOW_LARGE", raising=False)
    start = time.monotonic()
    code, _, err = cli("sweep", str(sw), "--out", str(tmp_path / "o"))
    assert code == 2 and time.monotonic() - start < 30, err
    assert "10,000,000,000 points" in err and "HMSIM_ALLOW_LARGE" in err, err
    assert len(err.strip().splitlines()) == 1, err
    with pytest.raises(hmsim.ConfigError, match="points"):
        hmsim.sweep(tmp_path / "s.toml", axes={"job.queue_depth": axis, "seed": axis}, out=tmp_path / "p")


FUZZ_OVERSIZED = int(os.environ.get("HMSIM_FUZZ_OVERSIZED", "20"))


def _mem_available_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


@pytest.mark.skipif(
    not Path("/proc/meminfo").exists() or _mem_available_bytes() > 200 << 30,
    reason="needs /proc/meminfo and under 200 GiB available (the values below must not fit)",
)
@settings(max_examples=FUZZ_OVERSIZED, deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    case=st.one_of(
        st.tuples(st.just("records"), st.integers(2**31, 2**32)),
        st.tuples(st.just("capacity"), st.integers(2**23, 2**24)),
        st.tuples(st.just("pmem"), st.integers(2**30, 2**40)),
    )
)
def test_reliab_oversized_values_in_range_are_refused_before_allocating(case, monkeypatch):
    """Values inside their documented ranges that need more host memory than the machine has
    are refused with the key that drives them, never an abort on allocation."""
    monkeypatch.delenv("HMSIM_ALLOW_LARGE", raising=False)
    what, v = case
    if what == "records":
        sc, key = {"module": "pm-index", "index": {"name": "cceh"}, "workload": {"records": v}}, "workload.records"
    elif what == "capacity":
        sc, key = {"module": "hybrid", "device": {"capacity_mib": v}}, "device.capacity_mib"
    else:
        sc = {
            "module": "pmem",
            "workload": {
                "pattern": "rand-write",
                "threads": 1024,
                "footprint_bytes": 1 << 40,
                "operations": v,
            },
        }
        key = "workload.footprint_bytes"
    with pytest.raises(hmsim.ConfigError, match="host memory") as e:
        hmsim.run(sc)
    assert key in str(e.value) and "\n" not in str(e.value)
