"""The Dask backend: a real LocalCluster with 2 workers, a killed worker, an unreachable scheduler."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed")

from hmsim.errors import HmsimError  # noqa: E402
from hmsim.sweep import Backend, run_sweep  # noqa: E402

SWEEP = """\
scenario = "scenario.toml"
[set]
"job.duration_s" = {duration}
[axes]
"job.queue_depth" = [1, 2, 4, 8, 16, 32]
"device.name" = ["intel-optane-900p", "stt-mram-ssd"]
"""


def sweep_file(scenario: Path, duration: float) -> Path:
    p = scenario.parent / "sweep.toml"
    p.write_text(SWEEP.format(duration=duration))
    return p


@pytest.fixture(scope="module")
def cluster():
    from dask.distributed import LocalCluster

    c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    yield c
    c.close()


def test_dask_sweep_matches_local(scenario, tmp_path, cluster):
    f = sweep_file(scenario, 0.005)
    local = run_sweep(f, tmp_path / "local", workers=2)
    assert local.ran == 12
    remote = run_sweep(f, tmp_path / "dask", backend=Backend("dask", cluster.scheduler_address))
    assert remote.ran == 12
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "local" / "results.csv"), pd.read_csv(tmp_path / "dask" / "results.csv")
    )
    again = run_sweep(f, tmp_path / "dask", backend=Backend("dask", cluster.scheduler_address))
    assert again.ran == 0 and again.reused == 12


def test_killed_worker_only_reruns_its_task(scenario, tmp_path, cluster):
    from dask.distributed import Client

    f = sweep_file(scenario, 40.0)  # 0.4-2 s of work per point: the kill lands mid-sweep
    with Client(cluster.scheduler_address) as c:
        pids = list(c.run(os.getpid).values())
    box: dict = {}

    def go():
        box["res"] = run_sweep(f, tmp_path / "out", backend=Backend("dask", cluster.scheduler_address))

    t = threading.Thread(target=go)
    t.start()
    time.sleep(1.5)
    assert t.is_alive(), "the sweep must still be running when the worker is killed"
    os.kill(pids[0], signal.SIGKILL)
    t.join(timeout=240)
    assert not t.is_alive()
    res = box["res"]
    assert res.ran == 12
    files = list((tmp_path / "out" / "points").glob("*.json"))
    assert len(files) == 12, "no point lost or duplicated"
    assert len(pd.read_csv(tmp_path / "out" / "results.csv")) == 12


def test_unreachable_scheduler_fails_fast(scenario, tmp_path, cli):
    f = sweep_file(scenario, 0.005)
    # The default wait, 10 s, is the one `--scheduler-timeout` names; a shorter one is kept.
    assert Backend("dask", "tcp://127.0.0.1:9").connect_timeout_s == 10
    code, out, _ = cli("sweep", "--help")
    assert code == 0 and "(default: 10)" in " ".join(out.split())
    start = time.monotonic()
    with pytest.raises(HmsimError) as e:
        run_sweep(f, tmp_path / "o", backend=Backend("dask", "tcp://127.0.0.1:9", 1.0))
    assert time.monotonic() - start < 6
    assert "tcp://127.0.0.1:9" in str(e.value) and "within 1 s" in str(e.value)
    start = time.monotonic()
    code, _, err = cli(
        "sweep",
        str(f),
        "--out",
        str(tmp_path / "o2"),
        "--backend",
        "dask",
        "--scheduler",
        "tcp://127.0.0.1:9",
        "--scheduler-timeout",
        "0.5",
    )
    assert code == 2 and "scheduler" in err and "within 0.5 s" in err
    assert time.monotonic() - start < 6


def test_scheduler_timeout_needs_a_scheduler(scenario, tmp_path, cli):
    f = sweep_file(scenario, 0.005)
    code, _, err = cli("sweep", str(f), "--out", str(tmp_path / "o"), "--scheduler-timeout", "1")
    assert code == 2 and "--scheduler-timeout" in err and "--scheduler" in err
    code, _, err = cli("reproduce", "storage", "--backend", "dask", "--scheduler-timeout", "0")
    assert code == 2 and "--scheduler-timeout" in err
