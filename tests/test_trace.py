"""Trace commands end to end: info, convert, record (live where the tools exist), lifetime."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import hmsim.trace as tr
from hmsim.lifetime import lifetime

DATA = Path(__file__).resolve().parents[1] / "crates" / "hmsim" / "tests" / "data" / "traces"
TRUE_LACKEY = DATA / "true.lackey.xz"


def test_info_of_the_committed_real_trace():
    info = tr.info(TRUE_LACKEY)
    assert info["format"] == "lackey" and info["compression"] == "xz"
    assert info["records"] == 39_656 and info["instructions"] == 127_679


def test_convert_to_native_keeps_every_record(tmp_path):
    out = tmp_path / "true.hmt"
    rep = tr.convert(TRUE_LACKEY, out)
    assert rep["records"] == 39_656
    info = tr.info(out)
    assert info["format"] == "native" and info["records"] == 39_656 and info["instructions"] == 127_679
    assert out.stat().st_size < TRUE_LACKEY.stat().st_size


def test_cli_info_and_bad_inputs(cli, tmp_path):
    code, out, _ = cli("trace", "info", str(TRUE_LACKEY))
    assert code == 0 and "39656" in out
    code, _, err = cli("trace", "info", str(TRUE_LACKEY), "--format", "lackeyy")
    assert code == 2 and "lackeyy" in err and "lackey" in err
    code, _, err = cli("trace", "info", str(tmp_path / "missing.trace"))
    assert code == 2 and "missing.trace" in err
    bad = tmp_path / "bad.lackey"
    bad.write_text("I  04010aa0,3\n L 1ffefffb48,8\n S zz,8\n")
    code, _, err = cli("trace", "info", str(bad), "--format", "lackey")
    assert code == 2 and ":3" in err and "Traceback" not in err


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_record_lackey_live(cli, tmp_path):
    out = tmp_path / "true.hmt"
    code, _, err = cli("trace", "record", "--kind", "lackey", "-o", str(out), "--", "true")
    assert code == 0, err
    info = tr.info(out)
    assert info["records"] > 10_000 and info["source"].startswith("lackey: true")
    paged = tmp_path / "true.pages.hmt"
    code, _, err = cli("trace", "record", "--kind", "lackey", "--page-level", "-o", str(paged), "--", "true")
    assert code == 0, err
    pinfo = tr.info(paged)
    assert pinfo["records"] < info["records"] / 2
    assert pinfo["instructions"] == info["instructions"]


def _kmem_possible() -> str | None:
    if os.geteuid() != 0:
        return "kmem tracing needs root"
    try:
        tr.tracefs_root()
    except Exception as e:
        return f"tracefs unavailable: {e}"
    return None


@pytest.mark.skipif(_kmem_possible() is not None, reason=str(_kmem_possible()))
def test_record_kmem_live_restores_tracing_state(cli, tmp_path):
    root = tr.tracefs_root()
    watched = [
        "tracing_on",
        "buffer_size_kb",
        "set_event_pid",
        "options/event-fork",
        "events/kmem/mm_page_alloc/enable",
        "events/kmem/mm_page_free/enable",
    ]

    def state() -> dict[str, str]:
        # A never-used ring buffer reads "7 (expanded: 1408)"; once a recording has used it
        # the kernel drops the note. The setting itself is what must come back.
        return {f: (root / f).read_text().split(" (expanded")[0].strip() for f in watched}

    before = state()
    out = tmp_path / "k.hmt"
    code, _, err = cli(
        "trace",
        "record",
        "--kind",
        "kmem",
        "-o",
        str(out),
        "--",
        "sh",
        "-c",
        "head -c 4000000 /dev/urandom | gzip > /dev/null",
    )
    assert code == 0, err
    assert state() == before
    info = tr.info(out)
    assert info["kind"] == "pageevents" and info["records"] > 0


def test_record_kmem_failing_command_restores_state(cli, tmp_path):
    reason = _kmem_possible()
    if reason is not None:
        pytest.skip(reason)
    root = tr.tracefs_root()
    before = (root / "events/kmem/mm_page_alloc/enable").read_text()
    code, _, _ = cli("trace", "record", "--kind", "kmem", "-o", str(tmp_path / "k.hmt"), "--", "false")
    assert code == 0  # the command's own failure is reported, not an hmsim error
    assert (root / "events/kmem/mm_page_alloc/enable").read_text() == before


def test_lifetime_of_a_real_trace(tmp_path):
    res = lifetime(TRUE_LACKEY, out=tmp_path / "lt", top_n=5)
    r = res.results.iloc[0]
    assert r.records == 39_656 and r.instructions == 127_679
    assert r.wpq_inserts == r.write_requests > 0
    assert r.media_writes_64b % 4 == 0 and r.media_writes_64b > 0
    assert 0 < r.rated_fraction_per_hour < 1
    assert r.lifetime_years_ideal_wl > r.lifetime_years_no_wl
    assert len(res.tables["hot_ranges"]) == 5
    summary = json.loads((tmp_path / "lt" / "summary.json").read_text())
    # The lifetime of a trace is a `pmem` scenario with a `[trace]` table.
    assert summary["module"] == "pmem" and summary["resolved_config"]["trace"]["path"] == str(TRUE_LACKEY)


def test_lifetime_cli_and_bad_device(cli, tmp_path):
    code, out, _ = cli("lifetime", "--trace", str(TRUE_LACKEY), "--top", "3")
    assert code == 0 and "PMM_WPQ_INSERTS" in out and "hottest" in out
    code, _, err = cli("lifetime", "--trace", str(TRUE_LACKEY), "--device", "intel-ssd-750")
    assert code == 2 and "memory device" in err


RECORDED = {
    "pigz-d.pages.hmt": ("access", 209_162, 1_414_015),
    "sort.pages.hmt": ("access", 399_058, 2_188_053),
    "sqlite3.pages.hmt": ("access", 1_110_624, 4_931_116),
    "gcc.kmem.hmt": ("pageevents", 11_754, None),
    "dbench.kmem.hmt": ("pageevents", 32_994, None),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_committed_recorded_traces_read_back(name):
    kind, records, instructions = RECORDED[name]
    info = tr.info(DATA / name)
    assert (info["kind"], info["records"], info["instructions"]) == (kind, records, instructions)
    assert info["source"].startswith("lackey: " if kind == "access" else "kmem: ")


def test_a_lifetime_resting_on_the_final_drain_is_flagged(cli, tmp_path):
    """sqlite3's trace stays in the caches: every media write comes from the final drain,
    so the lifetime is flagged in the row, on stdout and in summary.json."""
    trace = str(DATA / "sqlite3.pages.hmt")
    code, out, _ = cli("lifetime", "--trace", trace, "--top", "0", "--out", str(tmp_path / "lt"))
    assert code == 0
    assert "drain-dominated" in out and "warning: lifetime rests on the final drain" in out
    summary = json.loads((tmp_path / "lt" / "summary.json").read_text())
    assert summary["warnings"] and "final drain" in summary["warnings"][0]
    r = lifetime(trace, top_n=0, drain=False).results.iloc[0]
    assert r.lifetime_basis == "no-media-writes" and r.media_writes_64b == 0


def test_lifetime_of_the_recorded_pigz_trace():
    r = lifetime(DATA / "pigz-d.pages.hmt").results.iloc[0]
    assert r.instructions == 1_414_015 and r.media_writes_64b > 0


@pytest.mark.skipif(
    shutil.which("valgrind") is None or shutil.which("pigz") is None,
    reason="valgrind or pigz is not installed (apt-get install valgrind pigz)",
)
def test_record_pigz_decompression_live(cli, tmp_path):
    src = tmp_path / "x.txt"
    src.write_text("hello heterogeneous memory\n" * 2000)
    import subprocess

    subprocess.run(["pigz", "-k", str(src)], check=True)
    out = tmp_path / "t.hmt"
    code, _, err = cli(
        "trace", "record", "--kind", "lackey", "-o", str(out), "--", "pigz", "-d", "-k", "-f", str(src) + ".gz"
    )
    assert code == 0, err
    code, text, _ = cli("trace", "info", str(out))
    assert code == 0 and "native" in text
