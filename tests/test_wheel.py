"""The wheel works without the source tree: `scripts/build_core.sh --wheel` makes it (`maturin
build`, packaging what `make build` compiled), a fresh venv installs
it, and `hmsim reproduce storage --quick` runs from a directory outside the checkout (the
study's scenario and trace files come from the package, not from ../crates/...)."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ALL_FORMATS = ("--figure-formats", "png,svg,pdf")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    maturin = shutil.which("maturin")
    if maturin is None:
        pytest.skip("maturin is not installed")
    out = tmp_path_factory.mktemp("wheel")
    # The build `make build` made (profile-guided or plain, its target directory, this
    # interpreter): after it, this only packages what it compiled.
    env = {**os.environ, "VIRTUAL_ENV": sys.prefix, "PATH": f"{Path(maturin).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(
        [str(ROOT / "scripts" / "build_core.sh"), "--wheel", str(out)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    wheels = list(out.glob("hmsim-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_installs_and_reproduces_outside_the_checkout(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    # The dependencies (pandas, matplotlib, ...) from this environment, after the venv's own
    # site-packages: the installed wheel's hmsim comes first, and the checkout's editable
    # hmsim (a .pth file here) is not processed from a path listed in another .pth.
    fresh_site = next((venv / "lib").glob("python3*/site-packages"))
    (fresh_site / "zz-deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [str(py), "-c", "import hmsim; print(hmsim.__file__)"],
        cwd=elsewhere,
        check=True,
        capture_output=True,
        text=True,
    )
    assert str(venv) in where.stdout, where.stdout
    # Every format, so the installed package's drawing processes write each.
    run = subprocess.run(
        [str(venv / "bin" / "hmsim"), "reproduce", "storage", "--quick", "--out", "r", *ALL_FORMATS],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    out = elsewhere / "r" / "storage"
    assert (out / "results.csv").stat().st_size > 1000
    assert (out / "comparison.csv").stat().st_size > 100
    assert list(out.glob("*.pdf")) and list(out.glob("*.png")) and list(out.glob("*.svg"))
    # The study traces ship as package data (allocators and hybrid replay them).
    traces = subprocess.run(
        [
            str(py),
            "-c",
            "from hmsim.studies.allocators import _trace_dir; print(len(list(_trace_dir().glob('*.hmt'))))",
        ],
        cwd=elsewhere,
        check=True,
        capture_output=True,
        text=True,
    )
    assert int(traces.stdout) >= 7
