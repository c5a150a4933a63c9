"""The core's build script (`scripts/build_core.sh`, `make build`): which llvm-profdata it takes
for the profile-guided build, and what it says when there is none. The build itself is what
every other test runs on."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "build_core.sh"


def fake_tools(bin_dir: Path, llvm: str, profdatas: dict[str, str]) -> dict[str, str]:
    """A PATH whose `rustc` reports LLVM `llvm` and whose llvm-profdata commands (name →
    the LLVM version each reports) are `profdatas`; the system's tools after them."""
    bin_dir.mkdir()
    tools = {
        "rustc": f"""case "$1" in -vV) printf 'rustc 9.9.9\\nhost: x86_64-unknown-linux-gnu\\nLLVM version: {llvm}\\n';;
--print) echo /nonexistent;; esac""",
        **{name: f"echo 'LLVM (http://llvm.org/):'; echo '  LLVM version {v}'" for name, v in profdatas.items()},
    }
    for name, body in tools.items():
        f = bin_dir / name
        f.write_text(f"#!/bin/sh\n{body}\n")
        f.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "HMSIM_PGO": "1"}


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=60)


def test_it_takes_the_llvm_profdata_of_rustcs_llvm_version(tmp_path):
    env = fake_tools(tmp_path / "bin", "901.1.2", {"llvm-profdata": "14.0.6", "llvm-profdata-901": "901.1.8"})
    r = run(env, "--which")
    assert r.returncode == 0 and r.stdout.strip() == str(tmp_path / "bin" / "llvm-profdata-901")


def test_without_one_a_required_profile_guided_build_fails_saying_why(tmp_path):
    # Only an llvm-profdata of another LLVM: its profiles would not load into this rustc.
    env = fake_tools(tmp_path / "bin", "901.1.2", {"llvm-profdata": "14.0.6"})
    assert run(env, "--which").stdout.strip() == ""
    r = run(env)
    assert r.returncode == 2
    assert "no llvm-profdata of LLVM 901" in r.stderr and "apt-get install llvm-901" in r.stderr


def test_an_unknown_hmsim_pgo_value_is_refused(tmp_path):
    env = fake_tools(tmp_path / "bin", "901.1.2", {})
    r = run({**env, "HMSIM_PGO": "yes"})
    assert r.returncode == 2 and "HMSIM_PGO=yes: expected auto" in r.stderr


def test_an_llvm_profdata_that_refuses_version_is_passed_over(tmp_path):
    # LLVM 14's llvm-profdata answers `--version` with "Unknown command!" and exit status 1
    # (Debian 12's /usr/bin/llvm-profdata): not ours, and no reason for the build to stop.
    env = fake_tools(tmp_path / "bin", "901.1.2", {})
    bad = tmp_path / "bin" / "llvm-profdata"
    bad.write_text("#!/bin/sh\necho 'llvm-profdata: Unknown command!' >&2\nexit 1\n")
    bad.chmod(0o755)
    r = run(env, "--which")
    assert r.returncode == 0 and r.stdout.strip() == ""
    r = run(env)
    assert r.returncode == 2 and "no llvm-profdata of LLVM 901" in r.stderr


def test_the_profile_names_the_extensions_own_functions():
    """The profile-guided build really guides the extension: the training profile names the
    core's functions by the symbols the extension has. LLVM matches a profile to functions by
    name, and a Rust symbol carries a hash of its crate's build; a core built for the training
    driver with other dependency features (as an example of `hmsim` is, with its
    dev-dependencies) has other names, and the extension was then built as if without a
    profile while it said "profile-guided". With the driver in its own crate, the profile names
    990 of the extension's 1,092 core functions, and 0 of an example's 1,026."""
    from hmsim import _core

    if _core.BUILD != "profile-guided":
        pytest.skip(f"the extension is a {_core.BUILD} build (no llvm-profdata of rustc's LLVM)")
    profdata = run(dict(os.environ), "--which").stdout.strip()
    nm = shutil.which("nm")
    assert profdata and nm, "a profile-guided build needs llvm-profdata; nm comes with the linker"
    listed = subprocess.run(
        [profdata, "show", "--all-functions", str(ROOT / "target" / "pgo" / "hmsim.profdata")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # Functions are the lines indented by two; one of a single object file is "<object>;<symbol>".
    profiled = {
        line.strip().rstrip(":").rpartition(";")[2]
        for line in listed.splitlines()
        if line.startswith("  ") and line[2] != " "
    }
    symbols = subprocess.run([nm, _core.__file__], capture_output=True, text=True, check=True).stdout
    core = {
        f[2]
        for f in (line.split() for line in symbols.splitlines())
        if len(f) == 3 and f[1] in "tT" and f[2].startswith("_ZN5hmsim")
    }
    named = core & profiled
    assert len(named) >= len(core) // 2, f"the profile names {len(named)} of the extension's {len(core)} core functions"
    # The allocator replay's request loop and the cache model's line loop among them.
    for hot in ("5alloc6driver5issue17h", "8coherent17CoherentHierarchy12access_lines17h"):
        assert any(hot in s for s in named), hot
