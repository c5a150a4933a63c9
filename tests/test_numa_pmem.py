"""The numa module through the Python API and CLI: capacity per policy, determinism,
bad topologies, and the study's quick grid."""

from __future__ import annotations

import hmsim
from hmsim.studies.numa_pmem import POLICIES

GIB = 1 << 30


def _run(size_gib: float, **extra):
    sc = {
        "module": "numa",
        "seed": 1,
        "topology_preset": "aliusm-2s",
        "policies": POLICIES,
        "allocation": {"size_bytes": int(size_gib * GIB)},
        "swap": {"bytes": 0},
        **extra,
    }
    return hmsim.run(sc).results.set_index("policy")


def test_capacity_per_policy_on_the_study_machine():
    # After the kernel's own memory: KMEM_DAX the socket's 6 modules (6 x 252 GiB); Memory
    # Mode 4 x (756 - 11.8 struct page - 4 reserved) GiB = 2,960.7 GiB; everything else DRAM
    # (less struct pages incl. the hot-added modules', and 4 GiB) + all PMem = 3,338.7 GiB;
    # each allocation also needs 16 B per page of page tables and page array.
    r = _run(1600)
    assert not r.ok["kmem-dax"] and r.oom_nodes["kmem-dax"] == "4 5 6 7 8 9 + swap"
    assert r.drop(index="kmem-dax").ok.all()
    r = _run(3000)
    assert set(r.index[r.ok]) == {"kmem-dax-all", "kmem-dax-preferred", "linux-default", "interleave-all", "aliusm"}
    assert "struct page" in r.oom_reason["memory-mode"] and "2960.69 GiB usable" in r.oom_reason["memory-mode"]
    assert abs(r.metadata_gib["aliusm"] - 3000 / 256) < 1e-6
    assert abs(r.size_gb["aliusm"] - 3000 * GIB / 1e9) < 1e-9
    r = _run(3040)
    assert set(r.index[r.ok]) == {"kmem-dax-preferred", "linux-default", "interleave-all", "aliusm"}
    assert r.oom_nodes["kmem-dax-all"] == "4 5 6 7 8 9 10 11 12 13 14 15 + swap"
    r = _run(3330)
    assert not r.ok.any()


def test_shares_and_time_follow_placement():
    r = _run(150, app={"kind": "superpi", "threads": 1})
    # 150 GiB fits socket 0's DRAM: Linux default and aliusM keep it there, KMEM_DAX puts it
    # on PMem, PREFERRED too (nearest PMem first), interleave-all spreads it.
    assert r.dram_share["linux-default"] == 1.0 and r.dram_share["aliusm"] == 1.0
    assert r.pmem_share["kmem-dax"] == 1.0 and r.pmem_share["kmem-dax-preferred"] == 1.0
    assert 0.0 < r.dram_share["interleave-all"] < 0.5
    assert r.runtime_s["kmem-dax"] > 1.5 * r.runtime_s["aliusm"]
    assert r.runtime_s["aliusm"] == r.runtime_s["linux-default"]
    assert r.alloc_time_s["kmem-dax"] > r.alloc_time_s["aliusm"]
    # Memory Mode, 150 GiB on node 0 (756 GiB of PMem behind 96 GiB of DRAM), shuffled 4 MiB
    # blocks (default): the cache model agrees with the closed form counted in blocks
    # (m = 7.9 frames per slot): streams hit when alone in their slot, random accesses hit
    # occupied slots / blocks; 70 % streaming, 30 % random.
    p, s, f = 150 * 256, 96 * 256, 756 * 256
    m = f / s
    stream = (1 - (p - 1) / (f - 1)) ** (m - 1)
    rand = s * (1 - (1 - p / f) ** m) / p
    assert abs(r.cache_hit_ratio["memory-mode"] - (0.7 * stream + 0.3 * rand)) < 0.03
    # Consecutive frames: only single-page slots hit when streaming, (2*96 - 150)/150; the
    # random part hits 96/150.
    q = _run(150, app={"kind": "superpi", "threads": 1}, memory_mode={"frame_order": "sequential"})
    assert abs(q.cache_hit_ratio["memory-mode"] - (0.7 * (2 * 96 - 150) / 150 + 0.3 * 96 / 150)) < 0.02
    seq = {"frame_order": "sequential"}
    assert _run(64, app={"kind": "superpi"}, memory_mode=seq).cache_hit_ratio["memory-mode"] == 1.0
    # Shuffled frames alias even when 32 GiB fits the 96 GiB cache: Memory Mode is slower
    # than DRAM-first.
    r = _run(32, app={"kind": "superpi"})
    assert r.cache_hit_ratio["memory-mode"] < 0.9
    assert r.runtime_s["memory-mode"] > 1.05 * r.runtime_s["linux-default"]


def test_runs_are_deterministic():
    a = _run(500, app={"kind": "gups", "threads": 4}, memory_mode={"frame_order": "random"})
    b = _run(500, app={"kind": "gups", "threads": 4}, memory_mode={"frame_order": "random"})
    assert a.equals(b)


def test_bad_topologies_exit_2_with_the_key(cli, tmp_path):
    topo = tmp_path / "t.toml"
    topo.write_text(
        'name = "bad"\ndistances = [[10]]\n[[sockets]]\ncores = 4\n'
        "[[controllers]]\nsocket = 0\ndram_bytes = 1073741824\n"
        "[[controllers]]\nsocket = 0\n"
        '[media.dram]\ndevice = "ddr4-dram"\n'
    )
    sc = tmp_path / "s.toml"
    sc.write_text('module = "numa"\ntopology_preset = "t.toml"\n[allocation]\nsize_bytes = 4096\n')
    code, _, err = cli("run", str(sc), "--out", str(tmp_path / "o"))
    assert code == 2 and "controllers.1" in err and "no memory" in err and "Traceback" not in err
    topo.write_text(topo.read_text().replace("[[controllers]]\nsocket = 0\n[media", "[media"))
    topo.write_text(topo.read_text().replace("distances = [[10]]", "distances = [[10, 20], [20, 10]]"))
    code, _, err = cli("run", str(sc), "--out", str(tmp_path / "o"))
    assert code == 2 and "distances" in err and "expected 1" in err
    topo.write_text(topo.read_text().replace("distances = [[10, 20], [20, 10]]", "distances = [[10]]"))
    code, _, err = cli("run", str(sc), "--out", str(tmp_path / "o"), "--set", 'policies=["aliusn"]')
    assert code == 2 and "aliusn" in err and "aliusm" in err


def test_numa_pmem_study_quick(quick_study):
    res, out = quick_study("numa-pmem")
    df = res.results
    for col in [
        "experiment",
        "policy",
        "size_gib",
        "size_gb",
        "oom_reason",
        "ok",
        "alloc_time_s",
        "runtime_s",
        "dram_share",
        "pmem_share",
        "cache_hit_ratio",
    ]:
        assert col in df.columns
    a = df[df.experiment == "allocation"].set_index(["size_gib", "policy"])
    assert a.ok[(3000.0, "aliusm")] and not a.ok[(3000.0, "kmem-dax")]
    assert not a.ok[(3000.0, "memory-mode")]
    # Allocation time grows with size for every policy that succeeds.
    t = a.alloc_time_s.unstack("policy")
    assert (t.loc[400.0] > t.loc[100.0]).all()
    c = res.comparison.set_index("metric")
    assert abs(c.ratio["PMem read bandwidth, six interleaved DIMMs"] - 1.0) < 0.1
    assert abs(c.ratio["DRAM + PMem capacity"] - 1.0) < 1e-9
    i = df[df.experiment == "interleave"].set_index("policy")
    assert i.bandwidth_gb_s["interleave:4,5,6,7,8,9"] > 5 * i.bandwidth_gb_s["bind:4"]
    assert i.idle_latency_ns["interleave:10,11,12,13,14,15"] > i.idle_latency_ns["interleave:4,5,6,7,8,9"]
    # Remote DRAM is bound by the Cascade Lake UPI links (3 x 20.8 GB/s); six interleaved
    # PMem modules reach 39 GB/s, 0.62 of it.
    assert abs(i.bandwidth_gb_s["interleave:2,3"] - 62.4) < 1e-6
    assert 0.55 < i.bandwidth_gb_s["interleave:4,5,6,7,8,9"] / i.bandwidth_gb_s["interleave:2,3"] < 0.7
    # Memory Mode vs DRAM-first over footprint x threads x frame order.
    mm = res.tables["memory_mode"].set_index(["frame_order", "threads", "size_gib"])
    assert len(mm) == 18
    assert mm.hit_ratio[("sequential", 1, 32.0)] == 1.0
    assert mm.hit_ratio[("shuffled", 1, 32.0)] < 0.9
    assert mm.mm_vs_dram_first[("shuffled", 1, 32.0)] > 1.05
    for order in ("sequential", "shuffled", "random"):
        h = mm.hit_ratio[(order, 1)]
        assert (h.diff().dropna() <= 0.02).all(), order
    for name in ("fig_allocation", "fig_superpi", "fig_interleave", "fig_placement", "fig_mm_hit_ratio"):
        assert (out / f"{name}.png").stat().st_size > 5000
