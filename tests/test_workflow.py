"""A researcher's afternoon: catalog devices in tiers, every key overridable and sweepable,
the public sweep API, figures for every run, a Python policy named from TOML."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import hmsim
from hmsim.errors import HmsimError
from hmsim.plotting import PALETTE, color_for, series_style
from hmsim.tier_hook import run_policy

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DEVICES = EXAMPLES / "devices"

TIERING = """module = "tiering"
seed = 2
[workload]
working_set_bytes = 8589934592
hot_set_bytes = 2147483648
[antagonist]
intensities = [0]
[policy]
names = ["hemem"]
[sim]
duration_s = 0.2
measure_last_s = 0.1
timeline = false
[[tiers]]
name = "default"
capacity_bytes = 4000000000
unloaded_latency_ns = 70.0
read_bandwidth_gb_s = 160.0
[[tiers]]
device = "cxl-expander-250"
capacity_bytes = 12000000000
"""


@pytest.fixture
def tiering(tmp_path: Path) -> Path:
    p = tmp_path / "tiering.toml"
    p.write_text(TIERING)
    return p


def test_a_tier_names_a_user_catalog_device_with_overrides_beside_it(tiering):
    r = hmsim.run(tiering, devices=[DEVICES])
    alt = r.resolved["tiers"][1]
    assert alt["name"] == "cxl-expander-250"
    assert alt["unloaded_latency_ns"] == 250.0 and alt["read_bandwidth_gb_s"] == 38.4
    assert alt["write_bandwidth_gb_s"] == 38.4
    # The device's [link] is the tier's path.
    assert alt["path"] == [{"name": "cxl-x8", "read_gb_s": 30.0, "write_gb_s": 30.0, "curve": alt["path"][0]["curve"]}]
    assert alt["capacity_bytes"] == 12_000_000_000  # written beside `device`: wins
    assert r.results["cxl-expander-250_latency_ns"].iloc[0] >= 250.0


def _device_dir(tmp_path: Path, replace: dict[str, str], extra: str = "") -> Path:
    """examples/devices/cxl-expander-250.toml with some lines replaced, in its own folder."""
    text = (DEVICES / "cxl-expander-250.toml").read_text()
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    d = tmp_path / "devices"
    d.mkdir()
    (d / "cxl-expander-250.toml").write_text(text + extra)
    return d


WRITE_BW = "bandwidth_gb_s = 38.4          # the media: the same channel"


def test_a_device_write_bandwidth_changes_the_results(tiering, tmp_path):
    base = hmsim.run(tiering, devices=[DEVICES])
    slow = hmsim.run(tiering, devices=[_device_dir(tmp_path, {WRITE_BW: "bandwidth_gb_s = 1.0"})])
    assert slow.resolved["tiers"][1]["write_bandwidth_gb_s"] == 1.0
    alt = "cxl-expander-250"
    # 1 GB/s of writes saturates the expander: slower, and GUPS slower with it.
    assert slow.results[f"{alt}_latency_ns"].iloc[0] > base.results[f"{alt}_latency_ns"].iloc[0]
    assert slow.results.throughput_gb_s.iloc[0] < base.results.throughput_gb_s.iloc[0]


def test_a_figure_a_tier_cannot_honour_refuses_the_device_at_its_line(cli, tiering, tmp_path):
    d = _device_dir(tmp_path, {"latency_ns = 250.0             # as read": "latency_ns = 400.0 # slow writes"})
    code, _, err = cli("run", str(tiering), "--out", str(tmp_path / "o"), "--device-dir", str(d))
    assert code == 2, err
    assert f"{tiering}:20: key 'tiers.1.device'" in err
    assert f"write.latency_ns (set at {d / 'cxl-expander-250.toml'}:17)" in err
    assert "posted" in err and "curve" in err and "Traceback" not in err


def test_unused_device_figures_from_a_users_file_are_one_warning(cli, tiering, tmp_path):
    extra = "\n[endurance]\nwrite_cycles = 1e15 # what-if\n"
    d = _device_dir(tmp_path, {}, extra)
    code, out, err = cli("run", str(tiering), "--out", str(tmp_path / "o"), "--device-dir", str(d))
    assert code == 0, err
    lines = [x for x in out.splitlines() if x.startswith("warning: tiers.1.device")]
    assert len(lines) == 1, out
    assert "endurance (" in lines[0] and "cxl-expander-250.toml:25" in lines[0]
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert any(w.startswith("tiers.1.device") for w in summary["warnings"])
    # The example's own device file sets nothing a tier ignores: no such warning.
    code, out, err = cli("run", str(tiering), "--out", str(tmp_path / "o2"), "--device-dir", str(DEVICES))
    assert code == 0 and "warning: tiers.1.device" not in out


def test_device_dir_skips_the_scenarios_beside_the_devices(cli, tiering, tmp_path):
    # examples/ holds scenarios and sweeps next to examples/devices/: only devices load.
    code, out, err = cli("devices", "--json", "--device-dir", str(EXAMPLES), "--device-dir", str(DEVICES))
    assert code == 0, err
    names = [d["device"]["name"] for d in json.loads(out)]
    assert "cxl-expander-250" in names
    code, out, err = cli("run", str(tiering), "--out", str(tmp_path / "o"), "--device-dir", str(DEVICES))
    assert code == 0, err


def test_an_unknown_tier_device_is_a_one_line_error_at_its_line(cli, tiering, tmp_path):
    code, _, err = cli("run", str(tiering), "--out", str(tmp_path / "o"))  # no --device-dir
    assert code == 2
    assert f"{tiering}:20: key 'tiers.1.device': unknown device 'cxl-expander-250'" in err


def test_overrides_reach_arrays_of_tables_and_take_lists(tiering):
    r = hmsim.run(
        tiering,
        devices=[DEVICES],
        set={"tiers.1.unloaded_latency_ns": 400.0, "tiers[0].capacity_bytes": 3_000_000_000, "policy.names": ["tpp"]},
    )
    assert r.resolved["tiers"][1]["unloaded_latency_ns"] == 400.0
    assert r.resolved["tiers"][0]["capacity_bytes"] == 3_000_000_000
    assert list(r.results.policy) == ["tpp"]
    with pytest.raises(hmsim.ConfigError, match="out of range"):
        hmsim.run(tiering, devices=[DEVICES], set={"tiers.5.unloaded_latency_ns": 1.0})


def test_public_sweep_api_returns_a_frame_and_writes_figures(tiering, tmp_path):
    axes = {"tiers[1].unloaded_latency_ns": [150.0, 400.0], "policy.names": [["hemem"], ["colloid-hemem"]]}
    df = hmsim.sweep(tiering, axes=axes, devices=[DEVICES], workers=2)
    assert isinstance(df, pd.DataFrame) and len(df) == 4
    assert list(df.columns[:2]) == list(axes)
    assert set(df["policy.names"]) == {'["hemem"]', '["colloid-hemem"]'}
    out = tmp_path / "sweep"
    again = hmsim.sweep(tiering, axes=axes, devices=[DEVICES], out=out)
    assert again.equals(df)  # deterministic
    for ext in ("png", "svg", "pdf"):
        assert (out / f"sweep.{ext}").stat().st_size > 1000
    # Slower alternate tier, same policy: lower throughput.
    hemem = df[df["policy.names"] == '["hemem"]'].sort_values("tiers[1].unloaded_latency_ns")
    assert hemem.throughput_gb_s.iloc[0] > hemem.throughput_gb_s.iloc[1]


def test_every_module_run_writes_png_svg_and_pdf_figures(tmp_path):
    runs = {
        "tiering-cxl-expander.toml": {"sim.duration_s": 0.5, "sim.measure_last_s": 0.2},
        "allocators-compare.toml": {},
        "pm-index-ycsb-a.toml": {"workload.records": 2000, "workload.operations": 2000},
        "numa-cxl-box.toml": {},
        "hybrid-pigz-epf.toml": {"device.capacity_mib": 256, "workload.threads": 2},
        "pmem-clwb-hotspot.toml": {"workload.operations": 1000},
        "storage-qd16.toml": {"job.duration_s": 0.01, "job.total_bytes": 1 << 28},
    }
    modules = set()
    for name, ov in runs.items():
        out = tmp_path / name
        r = hmsim.run(EXAMPLES / name, out=out, set=ov, devices=[DEVICES])
        modules.add(r.module)
        pngs = list(out.glob("*.png"))
        assert pngs, name
        for png in pngs:
            assert png.with_suffix(".pdf").stat().st_size > 1000 and png.with_suffix(".svg").exists()
    assert modules == set(hmsim._core.module_names())


def test_series_never_share_a_colour_or_marker():
    names = [f"s{i}" for i in range(len(PALETTE))]
    style = series_style(names)
    assert len({s["color"] for s in style.values()}) == len(names)
    assert len({s["marker"] for s in style.values()}) == len(names)
    with pytest.raises(ValueError):
        color_for([*names, "one-too-many"])


def test_import_hmsim_keeps_the_matplotlib_backend():
    code = (
        "import matplotlib; before = matplotlib.get_backend(); "
        "import hmsim, hmsim.plotting, hmsim.figures, hmsim.studies; "
        "assert matplotlib.get_backend() == before, (before, matplotlib.get_backend()); print(before)"
    )
    env = {**os.environ, "MPLBACKEND": "svg"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "svg"


POLICY_MODULE = """
class PromoteSampled:
    def __call__(self, obs):
        free = int(obs.free_pages[0])
        return [(int(p), 0) for p in obs.samples[:free] if obs.page_tier[p] != 0][:4]


def bad(obs):
    return [(0, 9)]
"""


def test_a_python_policy_is_named_from_toml_and_bad_moves_are_errors(tmp_path):
    (tmp_path / "mypolicy.py").write_text(POLICY_MODULE)
    scenario = tmp_path / "py.toml"
    scenario.write_text(
        TIERING.replace('names = ["hemem"]', 'names = ["python:mypolicy:PromoteSampled"]').replace(
            'device = "cxl-expander-250"\n',
            'name = "alternate"\nunloaded_latency_ns = 135.0\nread_bandwidth_gb_s = 75.0\n',
        )
    )
    r = hmsim.run(scenario)
    assert list(r.results.policy) == ["mypolicy:PromoteSampled"]
    # The same as handing the object to the hook directly.
    sys.path.insert(0, str(tmp_path))
    try:
        from mypolicy import PromoteSampled  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    direct = run_policy(scenario.read_text(), PromoteSampled(), name="mypolicy:PromoteSampled")
    assert r.results.throughput_gb_s.iloc[0] == direct["rows"][0]["throughput_gb_s"]
    with pytest.raises(HmsimError, match=r"tier 9 is out of range; allowed 0 to 1"):
        hmsim.run(scenario, set={"policy.names": ["python:mypolicy:bad"]})
    with pytest.raises(HmsimError, match="cannot load policy"):
        hmsim.run(scenario, set={"policy.names": ["python:mypolicy:Missing"]})


def test_cli_prints_summary_keys_verbatim(cli, tmp_path):
    code, out, err = cli(
        "run",
        str(EXAMPLES / "hybrid-pigz-epf.toml"),
        "--out",
        str(tmp_path / "h"),
        "--set",
        "device.capacity_mib=256",
        "--set",
        "workload.threads=2",
    )
    assert code == 0, err
    assert "runtime_s[no_EPF]" in out
