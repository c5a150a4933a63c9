"""The command-line contract: version, devices, run, and one clear line for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import hmsim


def test_version(cli):
    code, out, _ = cli("--version")
    assert code == 0
    assert out.strip() == f"hmsim {hmsim.__version__}"


def test_devices_json_lists_every_preset_with_sources(cli):
    code, out, _ = cli("devices", "--json")
    assert code == 0
    entries = json.loads(out)
    names = {e["device"]["name"] for e in entries}
    assert {"stt-mram-ssd", "samsung-970-evo", "intel-ssd-750", "intel-optane-900p", "optane-pmem"} <= names
    assert all(e["file"].startswith("builtin:") for e in entries)


def test_devices_table(cli):
    code, out, _ = cli("devices")
    assert code == 0 and "intel-optane-900p" in out


def test_run_writes_results_summary_and_figures(cli, scenario, tmp_path):
    out = tmp_path / "out"
    code, stdout, _ = cli("run", str(scenario), "--out", str(out), "--set", "job.queue_depth=16")
    assert code == 0, stdout
    df = pd.read_csv(out / "results.csv")
    assert len(df) == 1 and df.queue_depth[0] == 16 and df.device[0] == "intel-optane-900p"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 7 and summary["hmsim_version"] == hmsim.__version__
    assert summary["resolved_config"]["job"]["queue_depth"] == 16
    assert summary["wall_time_s"] > 0 and "bandwidth_mib_s" in summary["headline"]
    # The run's host CPU time beside its wall time (measured in the core, on its thread).
    assert 0 < summary["cpu_time_s"] <= summary["wall_time_s"] + 0.05
    for ext in ("png", "svg"):
        assert (out / f"latency.{ext}").stat().st_size > 1000
    assert not list(out.glob(".*.tmp")), "no temp files left behind"


def _bad(cli, tmp_path: Path, text: str, *extra: str) -> str:
    p = tmp_path / "bad.toml"
    p.write_text(text)
    code, out, err = cli("run", str(p), "--out", str(tmp_path / "o"), *extra)
    assert code == 2, (out, err)
    assert "Traceback" not in err and "panicked" not in err
    lines = [line for line in err.strip().splitlines() if line]
    assert len(lines) == 1, err
    assert str(p) in lines[0] or "<override>" in lines[0] or "--set" in lines[0]
    return lines[0]


BASE = (
    'module = "storage"\n[device]\nname = "intel-optane-900p"\n[job]\nop = "read"\n'
    "queue_depth = 4\nblock_size_bytes = 4096\n"
)


def test_typo_key_names_line_key_and_allowed(cli, tmp_path):
    line = _bad(cli, tmp_path, BASE.replace("queue_depth = 4", "queue_dpeth = 4"))
    assert ":6:" in line and "queue_dpeth" in line and "queue_depth" in line


def test_negative_queue_depth(cli, tmp_path):
    line = _bad(cli, tmp_path, BASE.replace("queue_depth = 4", "queue_depth = -4"))
    assert "job.queue_depth" in line and ":6:" in line


def test_queue_depth_out_of_range_states_range(cli, tmp_path):
    line = _bad(cli, tmp_path, BASE.replace("queue_depth = 4", "queue_depth = 65"))
    assert "job.queue_depth" in line and "1 to 64" in line


def test_block_size_of_three_bytes(cli, tmp_path):
    line = _bad(cli, tmp_path, BASE.replace("block_size_bytes = 4096", "block_size_bytes = 3"))
    assert "job.block_size_bytes" in line and "4096" in line and ":7:" in line


def test_unknown_device_lists_known_ones(cli, tmp_path):
    line = _bad(cli, tmp_path, BASE.replace("intel-optane-900p", "intel-optane-9000p"))
    assert "device.name" in line and "intel-optane-900p" in line


def test_device_file_missing_required_field(cli, tmp_path):
    dev = tmp_path / "mydev.toml"
    dev.write_text(
        'name = "mydev"\nkind = "block"\ndescription = "x"\ntechnology = "nand"\n'
        "capacity_bytes = 1000000000 # me\n[read]\nlatency_ns = 1000.0 # me\nbandwidth_gb_s = 1.0 # me\n"
    )
    text = BASE.replace('name = "intel-optane-900p"', 'file = "mydev.toml"')
    p = tmp_path / "bad.toml"
    p.write_text(text)
    code, _, err = cli("run", str(p), "--out", str(tmp_path / "o"))
    assert code == 2
    assert "mydev.toml" in err and "missing required key" in err and "write" in err


def test_unknown_module_and_bad_override(cli, tmp_path):
    line = _bad(cli, tmp_path, BASE.replace('module = "storage"', 'module = "storrage"'))
    assert "storrage" in line and "storage" in line
    line = _bad(cli, tmp_path, BASE, "--set", "job.queue_depth=zero")
    assert "job.queue_depth" in line


def _host_refuses_a_tebibyte() -> str | None:
    """Why a 1 TiB anonymous mapping might succeed here (None: it is refused)."""
    try:
        mode = Path("/proc/sys/vm/overcommit_memory").read_text().strip()
        kib = {
            k: int(v.split()[0])
            for k, v in (line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
            if k in ("MemTotal", "SwapTotal")
        }
    except OSError:
        return "no /proc: the host's overcommit policy is unknown"
    if mode == "1":
        return "vm.overcommit_memory = 1 maps any size"
    if sum(kib.values()) >= 1 << 30:
        return "this host has 1 TiB of memory and swap"
    return None


def test_a_region_the_host_cannot_map_is_a_clear_error(cli, tmp_path):
    """`pm.initial_bytes` within its range but beyond the host: exit 2 naming the key, no
    abort (the region's memory is asked for with a fallible mapping)."""
    if why := _host_refuses_a_tebibyte():
        pytest.skip(why)
    text = (
        'module = "pm-index"\n[pm]\ninitial_bytes = 1099511627776\nmax_bytes = 1099511627776\n'
        '[index]\nname = "p-clht"\n[workload]\nkind = "c"\nrecords = 100\noperations = 100\n'
    )
    line = _bad(cli, tmp_path, text)
    assert "pm.initial_bytes" in line and "1099511627776 bytes" in line


@pytest.mark.parametrize("index", ["p-clht", "fast-fair", "p-bwtree"])
@pytest.mark.parametrize("real_threads", [False, True])
def test_a_region_at_its_limit_is_a_clear_error(cli, tmp_path, index, real_threads):
    """An index that outgrows `pm.max_bytes` inside an operation, on the model's thread or
    on the real threads of a `SharedIndex`: exit 2 naming the limit, no panic, no
    traceback. The hash tables check for room before they write; the trees find out inside
    a node split, which used to end the run with a panic (a traceback, and on real threads
    a poisoned shard lock)."""
    text = (
        f'module = "pm-index"\n[pm]\ninitial_bytes = 65536\nmax_bytes = 262144\n'
        f'[index]\nname = "{index}"\n[workload]\nkind = "load"\nrecords = 400000\n'
        "operations = 400000\n"
    )
    if real_threads:
        text += "[throughput]\nmodel = false\nmeasure = false\nreal_threads = [2, 4]\n"
    line = _bad(cli, tmp_path, text)
    assert "persistent region full" in line and "pm.max_bytes" in line


def test_missing_scenario_file(cli, tmp_path):
    code, _, err = cli("run", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "o"))
    assert code == 2 and "nope.toml" in err


def test_unknown_study(cli):
    code, _, err = cli("reproduce", "storag", "--quick")
    assert code == 2 and "storage" in err


def test_bad_figure_formats_name_the_option_and_the_formats(cli, tmp_path):
    code, _, err = cli("reproduce", "storage", "--quick", "--out", str(tmp_path), "--figure-formats", "png,jpg")
    assert code == 2 and "--figure-formats" in err and "png, svg, pdf" in err and "Traceback" not in err
    assert not (tmp_path / "storage").exists()


def test_a_quick_study_draws_png_and_svg_and_figure_formats_chooses(cli, tmp_path):
    code, _, err = cli("reproduce", "storage", "--quick", "--out", str(tmp_path))
    assert code == 0, err
    out = tmp_path / "storage"
    pngs = sorted(out.glob("*.png"))
    assert pngs and not list(out.glob("*.pdf"))
    assert all(p.with_suffix(".svg").exists() for p in pngs)
    code, _, err = cli("reproduce", "storage", "--quick", "--out", str(tmp_path), "--figure-formats", "pdf")
    assert code == 0, err
    pdfs = sorted(out.glob("*.pdf"))
    assert [p.stem for p in pdfs] == [p.stem for p in pngs]
    assert not list(out.glob("*.png")) and not list(out.glob("*.svg"))
    figures = json.loads((out / "summary.json").read_text())["figures"]
    assert figures and all(f.endswith(".pdf") for f in figures)


def test_installed_entry_point_exit_status():
    """The real console script, not just main(): exit 2 and no traceback."""
    exe = Path(sys.executable).parent / "hmsim"
    if not exe.exists():
        pytest.skip("hmsim console script not installed in this environment")
    p = subprocess.run([str(exe), "reproduce", "nope"], capture_output=True, text=True)
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_bench_reports_requests_per_second(cli):
    code, out, _ = cli("bench", "--module", "storage", "--scale", "0.01", "--json")
    assert code == 0
    (r,) = json.loads(out)
    assert r["unit"] == "requests" and r["count"] == 50000 and r["per_wall_second"] > 0


def test_the_package_and_the_cli_load_without_pandas_or_matplotlib():
    """`import hmsim` and the CLI's own module load the rest on first use, so a command
    that needs no DataFrame or figure (`hmsim check`, `--version`) starts fast; the public
    names still resolve, and `hmsim.reproduce` / `hmsim.sweep` stay callable whichever
    import came first."""
    code = (
        "import sys, hmsim, hmsim.cli\n"
        "heavy = sorted(m for m in ('pandas', 'matplotlib', 'dask') if m in sys.modules)\n"
        "assert not heavy, heavy\n"
        "import hmsim.reproduce, hmsim.sweep\n"
        "assert callable(hmsim.reproduce) and callable(hmsim.sweep)\n"
        "from hmsim import RunResult, devices, run, run_sweep\n"
        "assert callable(run) and callable(devices) and callable(run_sweep)\n"
        "assert 'reproduce' in dir(hmsim) and 'run' in dir(hmsim)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_lifetime_prints_its_summary_without_loading_pandas(tmp_path):
    """`hmsim lifetime` without --out prints from the core's output as it came: pandas (a
    quarter of a second to import) is not loaded; with --out the files are written from
    DataFrames and the summary printed is the same."""
    t = tmp_path / "t.vans"
    t.write_text("".join(f"{a:#x} W\n" for a in (0, 64, 4096, 1 << 30)))
    code = (
        "import sys, hmsim.cli as c\n"
        f"status = c._main(['lifetime', '--trace', {str(t)!r}, '--format', 'vans'] + sys.argv[1:])\n"
        "heavy = sorted(m for m in ('pandas', 'matplotlib') if m in sys.modules)\n"
        "print('heavy', heavy, 'status', status)\n"
    )
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr
    summary, last = plain.stdout.rsplit("heavy", 1)
    assert last.strip() == "[] status 0", plain.stdout
    assert "records / instructions: 4 / 0" in summary
    assert "bytes stored by the program: 256" in summary
    files = subprocess.run([sys.executable, "-c", code, "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert files.returncode == 0, files.stderr
    assert files.stdout.rsplit("heavy", 1)[0] == summary
    assert (tmp_path / "out" / "results.csv").exists()


def test_only_a_sweeps_own_interrupt_is_reported_as_one():
    from hmsim import cli as _cli
    from hmsim.sweep import SweepInterrupted

    assert _cli._sweep_interrupted(SweepInterrupted(1, 2, Path("x")))
    assert not _cli._sweep_interrupted(ValueError("x"))


def test_an_error_raised_by_the_interrupt_itself_still_reports_the_signal(monkeypatch, capsys):
    """A signal landing inside a C extension's initialisation (matplotlib, loaded on first
    use when a sweep draws its figures) surfaces as ImportError, not KeyboardInterrupt: the
    CLI still leaves with 128 + the signal and one line, no traceback. Without a signal the
    same error is not swallowed."""
    import signal as _signal

    from hmsim import cli as _cli
    from hmsim import signals

    def interrupted_import(*a, **k):
        raise ImportError("initialization failed")

    monkeypatch.setattr(_cli.cli, "main", interrupted_import)
    monkeypatch.setattr(signals, "leave_if_busy", lambda status: None)
    monkeypatch.setattr(signals, "_received", _signal.SIGTERM)
    assert _cli._main([]) == 143
    assert "interrupted (SIGTERM)" in capsys.readouterr().err
    monkeypatch.setattr(signals, "_received", None)
    with pytest.raises(ImportError):
        _cli._main([])


def test_leave_if_busy_waits_for_a_thread_that_is_ending_and_leaves_past_one_that_is_not(monkeypatch):
    """After an interrupt the CLI ends the process at once only if work is still running: a
    pool thread that is just unwinding the interrupt is given a moment (`LEAVE_GRACE_S`) to
    end, so the exit stays a normal one; a thread still busy after it does not hold the exit."""
    import threading
    import time

    from hmsim import signals

    exits: list[int] = []

    def hard_exit(status: int) -> None:
        exits.append(status)

    monkeypatch.setattr(signals.os, "_exit", hard_exit)
    ending = threading.Thread(target=time.sleep, args=(0.05,))
    ending.start()
    signals.leave_if_busy(130)
    assert exits == [] and not ending.is_alive()

    release = threading.Event()
    busy = threading.Thread(target=release.wait, args=(10,))
    busy.start()
    started = time.monotonic()
    signals.leave_if_busy(143)
    waited = time.monotonic() - started
    release.set()
    busy.join()
    assert exits == [143]
    assert signals.LEAVE_GRACE_S * 0.9 <= waited < signals.LEAVE_GRACE_S + 2
