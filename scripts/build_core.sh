#!/usr/bin/env bash
# Build the Rust core into the active virtualenv (`make build`), profile-guided when it can be:
# an instrumented build of the training driver (crates/hmsim-prof/src/bin/pgo_train.rs) runs every
# module's hot paths, llvm-profdata merges what it counted, and the extension is built with that
# profile (docs/performance.md, "Profile-guided build"). Results are the same either way; only
# the speed differs. The profile is made again when a source of the core crate, the training
# driver, the workspace's Cargo.toml or Cargo.lock, or an example scenario is newer than it.
#
# HMSIM_PGO=auto (default): profile-guided when an llvm-profdata of rustc's LLVM version is
# found, else a plain build, saying why. HMSIM_PGO=0: plain. HMSIM_PGO=1: profile-guided or fail.
# `scripts/build_core.sh --which` prints the llvm-profdata it would use (nothing: none) and exits.
# `scripts/build_core.sh --wheel DIR` builds a wheel into DIR instead of installing into the
# virtualenv, from the same build (the same flags, target directory and interpreter): after
# `make build` it only packages what that build compiled (tests/test_wheel.py).
set -euo pipefail
cd "$(dirname "$0")/.."

wheel_dir=""
if [ "${1:-}" = --wheel ]; then
    wheel_dir="${2:?build: --wheel needs a directory}"
    mkdir -p "$wheel_dir"
    wheel_dir="$(cd "$wheel_dir" && pwd)"
fi

# The extension, built into the virtualenv (`maturin develop`) or as a wheel for the same
# interpreter: PyO3 rebuilds when the interpreter changes, so the wheel names the one
# `maturin develop` uses.
maturin_release() {
    if [ -z "$wheel_dir" ]; then
        maturin develop --release
    else
        local python="${VIRTUAL_ENV:+$VIRTUAL_ENV/bin/python}"
        maturin build --release --interpreter "${python:-$(command -v python3)}" --auditwheel skip \
            --quiet -o "$wheel_dir"
    fi
}

mode="${HMSIM_PGO:-auto}"
pgo=target/pgo
profile="$pgo/hmsim.profdata"

case "$mode" in
auto | 0 | off | 1 | on) ;;
*)
    echo "build: HMSIM_PGO=$mode: expected auto (the default), 0 or off (plain), 1 or on (profile-guided or fail)" >&2
    exit 2
    ;;
esac

plain() {
    echo "build: $1; building without profile-guided optimisation"
    (
        unset HMSIM_BUILD
        maturin_release
    )
}

if [ "${1:-}" != --which ] && { [ "$mode" = 0 ] || [ "$mode" = off ]; }; then
    plain "HMSIM_PGO=$mode"
    exit 0
fi

# llvm-profdata must be of rustc's LLVM major version (its profile format follows LLVM's).
llvm_major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
host=$(rustc -vV | sed -n 's/^host: //p')
profdata=""
for c in "$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata" \
    "llvm-profdata-$llvm_major" "/usr/lib/llvm-$llvm_major/bin/llvm-profdata" llvm-profdata; do
    p=$(command -v "$c" 2>/dev/null) || continue
    # Some releases (LLVM 14's) answer --version with an error: not ours, and no reason to stop.
    v=$({ "$p" --version 2>/dev/null || true; } | sed -n 's/.*LLVM version \([0-9]*\).*/\1/p' | head -n1)
    if [ "$v" = "$llvm_major" ]; then
        profdata="$p"
        break
    fi
done
if [ "${1:-}" = --which ]; then
    echo "$profdata"
    exit 0
fi
if [ -z "$profdata" ]; then
    why="no llvm-profdata of LLVM $llvm_major (rustc's) found (Debian: apt-get install llvm-$llvm_major; rustup: rustup component add llvm-tools)"
    if [ "$mode" = 1 ] || [ "$mode" = on ]; then
        echo "build: HMSIM_PGO=$mode but $why" >&2
        exit 2
    fi
    plain "$why"
    exit 0
fi

# Every input of the profile: the core crate and the training driver (the bindings run no hot
# loop), the workspace's manifest and lock file, the driver's example scenarios.
stale=yes
if [ -f "$profile" ]; then
    stale=$(find crates/hmsim crates/hmsim-prof/Cargo.toml crates/hmsim-prof/src/bin/pgo_train.rs \
        Cargo.lock Cargo.toml examples -newer "$profile" -type f \
        \( -name '*.rs' -o -name '*.toml' -o -name Cargo.lock \) -print -quit)
fi
if [ -n "$stale" ]; then
    echo "build: training the profile-guided build (instrumented driver, then $profdata)"
    rm -rf "$pgo/raw"
    mkdir -p "$pgo/raw"
    RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$PWD/$pgo/raw" CARGO_TARGET_DIR="$pgo/gen" \
        cargo build --release --quiet -p hmsim-prof --bin pgo_train
    LLVM_PROFILE_FILE="$PWD/$pgo/raw/train_%m_%p.profraw" "$pgo/gen/release/pgo_train"
    "$profdata" merge -o "$profile.tmp" "$pgo"/raw/*.profraw
    mv "$profile.tmp" "$profile"
    rm -rf "$pgo/raw"
fi
echo "build: profile-guided ($profile)"
HMSIM_BUILD=profile-guided RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$PWD/$profile" \
    CARGO_TARGET_DIR="$pgo/use" maturin_release
