"""Timed outputs name the machine they were timed on, and how fast it ran (`hmsim bench`, a study's summary)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from hmsim import host
from hmsim.report import wall_text

XEON = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R)   Processor @ 2.10GHz
processor\t: 1
model name\t: Intel(R) Xeon(R)   Processor @ 2.10GHz
"""
ARM = "processor\t: 0\nBogoMIPS\t: 48.00\nProcessor\t: AArch64 Processor rev 4 (aarch64)\n"


def test_the_cpu_model_is_read_from_cpuinfo():
    assert host.cpu_model(XEON) == "Intel(R) Xeon(R) Processor @ 2.10GHz"
    # x86's `processor` lines number the CPUs: not a name.
    assert host.cpu_model(ARM) == "AArch64 Processor rev 4 (aarch64)"


EPYC_ZEN5 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC
stepping\t: 1
processor\t: 1
cpu family\t: 25
model\t\t: 17
"""
ARM_IDS = "processor\t: 0\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: 0xd0c\n"


def test_the_processor_generation_tells_apart_machines_of_one_name():
    # Both 2-core EPYC machines print `AMD EPYC`; Zen 4 and Zen 5 differ by family.
    assert host.cpu_model(EPYC_ZEN5) == "AMD EPYC"
    assert host.cpu_id(EPYC_ZEN5) == "family 26, model 2, stepping 1"
    assert host.cpu_id(ARM_IDS) == "implementer 0x41, part 0xd0c"
    assert host.cpu_id(XEON) == ""
    h = {"cpu_model": "AMD EPYC", "cpu_id": "family 26, model 2, stepping 1", "logical_cpus": 2}
    assert host.text(h) == "AMD EPYC (family 26, model 2, stepping 1), 2 logical CPUs"
    assert host.text({**h, "cpu_id": ""}) == "AMD EPYC, 2 logical CPUs"


@given(st.text())
def test_any_cpuinfo_gives_a_name(text):
    assert isinstance(host.cpu_id(text), str)
    name = host.cpu_model(text)
    assert isinstance(name, str) and name


def test_this_machine_is_described():
    h = host.describe()
    assert h["logical_cpus"] >= 1 and h["cpu_model"] and h["system"]
    assert h["cpu_id"] == host.cpu_id()
    assert host.text({"cpu_model": "X", "logical_cpus": 1}) == "X, 1 logical CPU"
    assert h["build"] in ("profile-guided", "plain")
    assert host.text(h).endswith(f"logical CPU{'s' * (h['logical_cpus'] != 1)}, {h['build']} build")
    assert host.text({"cpu_model": "X", "logical_cpus": 2, "build": "plain"}) == "X, 2 logical CPUs, plain build"


def test_bench_names_its_host(cli):
    code, out, _ = cli("bench", "--module", "storage", "--scale", "0.01", "--json")
    assert code == 0
    (r,) = json.loads(out)
    assert r["host"] == host.describe()
    code, out, _ = cli("bench", "--module", "storage", "--scale", "0.01")
    assert code == 0 and f"host: {host.text(host.describe())}" in out


def test_the_report_names_the_host_of_a_study_time():
    s = {"wall_time_s": 3.0, "wall_time_total_s": 3.0, "points_ran": 2, "points_reused": 0, "runs": 1}
    assert "on " not in wall_text(s)
    s["host"] = {"cpu_model": "Intel(R) Xeon(R) Processor", "logical_cpus": 2}
    assert wall_text(s).endswith(" · on Intel(R) Xeon(R) Processor, 2 logical CPUs")


def test_a_reproduction_reads_the_gauge_once_before_its_points():
    assert host.START_GAUGE.get() is None
    with host.gauged_start():
        g = host.START_GAUGE.get()
        assert g is not None and g["compute_m_per_s"] > 0 and g["memory_m_per_s"] > 0
    assert host.START_GAUGE.get() is None, "the reading belongs to that reproduction only"
    words = host.gauge_text({"compute_m_per_s": 560.4, "memory_m_per_s": 8.04})
    assert words == "host speed gauge: compute 560 M steps/s, memory 8.0 M dependent reads/s"
    s = {"wall_time_s": 3.0, "wall_time_total_s": 3.0, "points_ran": 2, "points_reused": 0, "runs": 1}
    assert "gauge" not in wall_text(s)
    s["host_gauge_at_start"] = {"compute_m_per_s": 560.4, "memory_m_per_s": 8.04}
    assert wall_text(s).endswith(f" · {words} at the start")


ORDER_SCRIPT = """
import json, sys
from hmsim import host
from hmsim.drawing_processes import DrawingProcesses
seen = []
heavy = ("pandas", "matplotlib", "hmsim.studies")
gauge, start = host.gauge, DrawingProcesses.start
def gauge_then_note():
    seen.append(("gauge", [m for m in heavy if m in sys.modules]))
    reading = gauge()
    seen.append(("reading", reading))
    return reading
def start_then_note(self):
    seen.append(("drawing processes", [m for m in heavy if m in sys.modules]))
    return start(self)
host.gauge = gauge_then_note
DrawingProcesses.start = start_then_note
from hmsim.cli import main
status = main(["reproduce", "storage", "--quick", "--out", sys.argv[1]])
print(json.dumps({"status": status, "seen": seen}))
"""


def test_reproduce_reads_the_gauge_then_starts_the_drawing_processes_before_its_imports(tmp_path):
    """The reading alone, first; the drawing processes' imports beside the command's own; the
    summary keeps that one reading."""
    import subprocess
    import sys

    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-c", ORDER_SCRIPT, str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["status"] == 0
    names = [k for k, _ in r["seen"]]
    assert names[:3] == ["gauge", "reading", "drawing processes"], names
    assert r["seen"][0][1] == [] and r["seen"][2][1] == [], "imported before the gauge and the drawing processes"
    assert names.count("gauge") == 1, "one reading per reproduction"
    summary = json.loads((out / "storage" / "summary.json").read_text())
    assert summary["host_gauge_at_start"] == r["seen"][1][1]
