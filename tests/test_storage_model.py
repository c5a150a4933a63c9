"""The storage model through the Python API: closed forms, determinism, thermal, energy."""

from __future__ import annotations

import hmsim
from hmsim.catalog import device_list


def spec(name: str) -> dict:
    return next(e["device"] for e in device_list() if e["device"]["name"] == name)


def job(device: str, **job) -> dict:
    base = {"op": "read", "pattern": "sequential", "queue_depth": 16, "block_size_bytes": 262144, "duration_s": 0.02}
    return {"module": "storage", "seed": 1, "device": {"name": device}, "job": {**base, **job}}


def test_saturation_is_capped_by_the_host_link(tmp_path, monkeypatch):
    # A hypothetical 10 GB/s media behind PCIe 3.0 x4 (3.9 GB/s) delivers the link's rate.
    (tmp_path / "wide.toml").write_text(
        'name = "wide"\nbase = "intel-optane-900p"\ndescription = "media faster than its link"\n'
        "[read]\nbandwidth_gb_s = 10.0 # test\nlatency_ns = 1000.0 # test\n"
    )
    monkeypatch.setenv("HMSIM_DEVICE_PATH", str(tmp_path))
    r = hmsim.run(job("wide", queue_depth=64, block_size_bytes=4 << 20)).results
    assert abs(r.bandwidth_gb_s[0] - 3.9) / 3.9 < 0.02
    r = hmsim.run(job("intel-optane-900p", queue_depth=64, block_size_bytes=4 << 20)).results
    assert abs(r.bandwidth_gb_s[0] - 2.5) / 2.5 < 0.02


def test_littles_law(tmp_path):
    r = hmsim.run(job("samsung-970-evo", pattern="random", block_size_bytes=4096, queue_depth=32)).results
    in_flight = r.iops[0] * r.latency_mean_us[0] * 1e-6
    assert abs(in_flight - 32) / 32 < 0.01


def test_determinism_same_seed_identical():
    a = hmsim.run(job("intel-ssd-750", op="mix", pattern="random", block_size_bytes=4096)).results
    b = hmsim.run(job("intel-ssd-750", op="mix", pattern="random", block_size_bytes=4096)).results
    assert a.equals(b)
    c = hmsim.run({**job("intel-ssd-750", op="mix", pattern="random", block_size_bytes=4096), "seed": 2}).results
    assert not a.equals(c)


def test_fan_steady_state_is_ambient_plus_power_times_r():
    s = spec("stt-mram-ssd")
    cfg = job("stt-mram-ssd", op="write")
    cfg["thermal"] = {"fan": True, "ambient_c": 25.0, "duration_s": 5000.0, "step_s": 5.0}
    r = hmsim.run(cfg)
    p = r.results.avg_power_w[0]
    expect = 25.0 + p * s["thermal"]["r_fan_k_per_w"]
    assert abs(r.tables["thermal"].temperature_c.iloc[-1] - expect) < 0.01
    assert r.results.stop_time_s.isna()[0]


def test_initial_temperature_is_separate_from_ambient():
    cfg = job("stt-mram-ssd", op="write")
    cfg["thermal"] = {"ambient_c": 30.0, "initial_c": 32.2, "duration_s": 1000.0}
    r = hmsim.run(cfg)
    assert r.tables["thermal"].temperature_c.iloc[0] == 32.2
    assert 400 < r.results.stop_time_s[0] < 600


def test_energy_above_idle_scales_with_time_at_saturation():
    a = hmsim.run(job("intel-optane-900p", duration_s=0.2)).results
    b = hmsim.run(job("intel-optane-900p", duration_s=0.4)).results  # drain tail < 1 %
    assert abs(b.energy_above_idle_j[0] / a.energy_above_idle_j[0] - 2.0) < 0.02
    s = spec("intel-optane-900p")["power"]
    assert abs(a.avg_power_w[0] - s["read_active_w"]) / s["read_active_w"] < 0.02


def test_user_device_directory_and_inheritance(tmp_path, monkeypatch):
    d = tmp_path / "devs"
    d.mkdir()
    (d / "fast.toml").write_text(
        'name = "fast-900p"\nbase = "intel-optane-900p"\ndescription = "faster"\n'
        "[read]\nbandwidth_gb_s = 3.5 # my measurement\nlatency_ns = 2000.0 # mine\n"
    )
    monkeypatch.setenv("HMSIM_DEVICE_PATH", str(d))
    assert "fast-900p" in set(hmsim.devices().name)
    r = hmsim.run(job("fast-900p", queue_depth=64, block_size_bytes=4 << 20)).results
    assert abs(r.bandwidth_gb_s[0] - 3.5) / 3.5 < 0.02
