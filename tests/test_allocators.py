"""The allocators module through the Python API and CLI: trace replay, fairness, bad input."""

from __future__ import annotations

from pathlib import Path

import hmsim

DBENCH = Path(__file__).resolve().parents[1] / "crates" / "hmsim" / "tests" / "data" / "traces" / "dbench.kmem.hmt"


def test_replay_of_a_real_kmem_trace_conserves_requests():
    r = hmsim.run(
        {
            "module": "allocators",
            "seed": 1,
            "frames": 262144,
            "allocators": [{"name": "buddy"}, {"name": "ibuddy", "spaces": 2}],
            "workload": {"trace": str(DBENCH)},
        }
    ).results
    assert list(r.name) == ["buddy", "ibuddy"]
    assert (r.failures == 0).all()
    assert (r.requests == r.allocs + r.frees).all()
    assert r.requests.nunique() == 1


def test_least_allocated_reuse_spreads_wear():
    base = {
        "module": "allocators",
        "seed": 3,
        "frames": 65536,
        "workload": {"synthetic": {"threads": 2, "allocs_per_thread": 20000}},
    }
    r = hmsim.run({**base, "allocators": [{"name": "buddy"}, {"name": "ibuddy", "policy": "least-allocated"}]}).results
    assert r.alloc_count_cov[1] < r.alloc_count_cov[0]


def test_bad_allocator_inputs(cli, tmp_path):
    p = tmp_path / "a.toml"
    p.write_text(
        'module = "allocators"\nframes = 65536\n[[allocators]]\nname = "budy"\n'
        "[workload.synthetic]\nthreads = 1\nallocs_per_thread = 10\n"
    )
    code, _, err = cli("run", str(p), "--out", str(tmp_path / "o"))
    assert code == 2 and "budy" in err and "buddy" in err and ":4:" in err
    code, _, err = cli("run", str(p), "--out", str(tmp_path / "o"), "--set", "frames=0")
    assert code == 2 and "frames" in err


def test_allocators_study_quick(tmp_path):
    res = hmsim.reproduce("allocators", out=tmp_path, quick=True)
    out = tmp_path / "allocators"
    df = res.results
    assert df.allocator.nunique() == 6
    assert set(df.workload) >= {"synthetic-kernel-compile"}
    assert (df.failures == 0).all()
    assert set(res.summary["lazy_ibuddy_b1_speedup_over_lazy_buddy_b31"]) == {"1", "4", "16"}
    for name in ("fig_response_vs_threads", "fig_wear_fairness"):
        assert (out / f"{name}.png").stat().st_size > 5000
