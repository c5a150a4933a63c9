"""The Python tiering-policy hook: the worked example converges, moves to no such page or
tier are errors naming the move, errors in a policy surface as Python exceptions."""

from __future__ import annotations

import pytest

from hmsim.errors import ConfigError, HmsimError
from hmsim.tier_hook import SampledHotPromotion, TierObservation, run_policy

SMALL = """module = "tiering"
seed = 2
[workload]
working_set_bytes = 8589934592
hot_set_bytes = 2147483648
[antagonist]
intensities = [0]
[sim]
duration_s = 3.0
measure_last_s = 0.5
timeline = false
[[tiers]]
name = "default"
capacity_bytes = 4000000000
unloaded_latency_ns = 70.0
read_bandwidth_gb_s = 160.0
[[tiers]]
name = "alternate"
capacity_bytes = 12000000000
unloaded_latency_ns = 135.0
read_bandwidth_gb_s = 75.0
"""


def test_worked_example_brings_the_hot_set_to_the_default_tier():
    out = run_policy(SMALL, SampledHotPromotion())
    row = out["rows"][0]
    assert row["policy"] == "python"
    assert row["hot_share_default"] > 0.9
    assert row["migrations"] > 0
    assert row["failed_migrations"] == 0


def test_observation_views_and_bad_moves_are_errors():
    seen: list[TierObservation] = []

    def policy(obs: TierObservation):
        seen.append(obs)
        return []

    short = SMALL.replace("duration_s = 3.0", "duration_s = 0.05").replace("last_s = 0.5", "last_s = 0.05")
    out = run_policy(short, policy)
    assert out["rows"][0]["migrations"] == 0
    for bad, message in [((0, 7), "tier 7 is out of range"), ((10**9, 1), "page 1000000000 is out of range")]:
        with pytest.raises(HmsimError, match=message):
            run_policy(short, lambda obs, bad=bad: [bad])
    with pytest.raises(HmsimError, match=r"expected a \(page, tier\) pair"):
        run_policy(short, lambda obs: [(1, 2, 3)])
    obs = seen[-1]
    assert obs.page_tier.dtype.name == "uint8" and len(obs.page_tier) == 4096
    assert obs.samples.dtype.name == "uint64" and len(obs.samples) > 0
    assert obs.latency_ns.shape == (2,) and obs.latency_ns[0] > 60
    assert int(obs.free_pages.sum()) == (4_000_000_000 + 12_000_000_000) // (2 << 20) - 4096


def test_policy_errors_are_raised():
    def broken(obs):
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_policy(SMALL, broken)


USER_DEVICE = """name = "slow-expander"
base = "cxl-dram"
capacity_bytes = 12000000000
[read]
latency_ns = 400.0
bandwidth_gb_s = 20.0
[write]
latency_ns = 400.0
bandwidth_gb_s = 20.0
"""

NAMES_DEVICE = SMALL.replace(
    'name = "alternate"\ncapacity_bytes = 12000000000\nunloaded_latency_ns = 135.0\nread_bandwidth_gb_s = 75.0\n',
    'device = "slow-expander"\n',
)


def test_a_python_policy_run_finds_user_device_files(tmp_path):
    """A tier naming a device from a user's device folder runs with a Python policy as with a
    registered one: the hook and `hmsim.run(devices=...)` both load the folder."""
    import hmsim

    (tmp_path / "devices").mkdir()
    (tmp_path / "devices" / "slow-expander.toml").write_text(USER_DEVICE)
    (tmp_path / "mypol.py").write_text("def stay(obs):\n    return []\n")
    short = NAMES_DEVICE.replace("duration_s = 3.0", "duration_s = 0.1").replace("last_s = 0.5", "last_s = 0.05")
    with pytest.raises(ConfigError, match="unknown device 'slow-expander'"):
        run_policy(short, lambda obs: [])
    out = run_policy(short, lambda obs: [], devices=[tmp_path / "devices"])
    row = out["rows"][0]
    assert "slow-expander_latency_ns" in row
    # The device's 400 ns unloaded latency, not the built-in preset's.
    assert row["slow-expander_latency_ns"] >= 400.0
    scenario = tmp_path / "s.toml"
    scenario.write_text(short.replace("[sim]", '[policy]\nnames = ["python:mypol:stay"]\n[sim]'))
    r = hmsim.run(scenario, devices=[tmp_path / "devices"])
    assert list(r.results.policy) == ["mypol:stay"]
    assert r.results["slow-expander_latency_ns"].iloc[0] == row["slow-expander_latency_ns"]
