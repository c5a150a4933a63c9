"""Cross-check of hmsim's persistent indexes against the original RECIPE code (SOSP'19).

Builds RECIPE's indexes and its own YCSB driver (`ycsb.cpp`) natively, with every flush,
fence and non-temporal store instruction of the index code rewritten to a counting call
(`recipe_counters.h`; DRAM stands in for PM, the instructions still execute), runs the
driver's Load phase single-threaded with RECIPE's defaults (its table sizes, integer and
string keys as YCSB generates them), and writes flushes / fences / nt-stores per insert.

Not run in CI: it needs the fetched RECIPE source, cmake, a C++17 compiler, TBB, Boost
(system, thread) and jemalloc. Usage:

    python validation/recipe_flushes.py --recipe PATH/TO/RECIPE [--keys 1000000] \
        [--out validation/recipe_flushes.csv] [--build-dir DIR]

PATH/TO/RECIPE is a checkout of the public utsaslab/RECIPE repository; nothing of it is
copied into hmsim. The keys are the ones YCSB's load phase generates (CoreWorkload, hashed
insert order): key number i becomes "user" + FNV-1a-64(i), and RECIPE's integer workload
keeps the digits as the integer key (index-microbench/gen_workload.py).
"""

from __future__ import annotations

import argparse
import csv
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# RECIPE's index names in its driver, the hmsim registry name, and the key types its
# driver runs them with (the hash tables have an integer driver only).
INDEXES = [
    ("clht", "p-clht", ["randint"]),
    ("cceh", "cceh", ["randint"]),
    ("levelhash", "level-hashing", ["randint"]),
    ("art", "p-art", ["randint", "string"]),
    ("hot", "p-hot", ["randint", "string"]),
    ("masstree", "p-masstree", ["randint", "string"]),
    ("bwtree", "p-bwtree", ["randint", "string"]),
    ("fastfair", "fast-fair", ["randint", "string"]),
]

SOURCE_DIRS = ["P-ART", "P-BwTree", "P-CLHT", "P-HOT", "P-Masstree", "third-party", "ycsb.cpp", "Key.h"]

# The instruction forms RECIPE's persist helpers use (one asm statement each).
FLUSH_ASM = re.compile(
    r'asm\s+volatile\s*\(\s*"(?:clflush %0|\.byte 0x66; clflush %0|\.byte 0x66; xsaveopt %0)"'
    r'\s*:\s*"\+m"\s*\((?P<op>.*?)\)\s*\)\s*;'
)
FENCE_ASM = re.compile(r'asm\s+volatile\s*\(\s*"[ms]fence"\s*:::\s*"memory"\s*\)\s*;')
SFENCE_INTRINSIC = re.compile(r"(?<!define )\b_mm_sfence\(\)")
NTSTORE = re.compile(r"\b_mm_stream_si64\(")


def fnv64(n: int) -> int:
    """YCSB's Utils.FNVhash64 of a key number: FNV-1a over its 8 bytes, as a positive long."""
    h = 0xCBF29CE484222325
    for _ in range(8):
        h ^= n & 0xFF
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
        n >>= 8
    if h >= 1 << 63:
        h -= 1 << 64
    return abs(h)


def write_workloads(root: Path, keys: int) -> None:
    wl = root / "index-microbench" / "workloads"
    wl.mkdir(parents=True, exist_ok=True)
    ints = [fnv64(i) for i in range(keys)]
    with open(wl / "loada_unif_int.dat", "w") as f:
        f.writelines(f"INSERT {k}\n" for k in ints)
    with open(wl / "ycsbkey_load_workloada", "w") as f:
        f.writelines(f"INSERT user{k}\n" for k in ints)
    # The run phase is not measured: one read keeps the driver's file parsing happy.
    for name, key in (("txnsa_unif_int.dat", str(ints[0])), ("ycsbkey_run_workloada", f"user{ints[0]}")):
        (wl / name).write_text(f"READ {key}\n")


def patch_sources(root: Path) -> dict[str, int]:
    counts = {"flush": 0, "fence": 0, "ntstore": 0}
    for p in root.rglob("*"):
        if p.suffix not in (".c", ".cpp", ".h", ".hpp") or "CrashTest" in p.parts:
            continue
        s = p.read_text(errors="replace")
        s, a = FLUSH_ASM.subn(lambda m: f"recipe_flush(&({m.group('op')}));", s)
        s, b = FENCE_ASM.subn("recipe_fence();", s)
        s, c = SFENCE_INTRINSIC.subn("recipe_fence()", s)
        s, d = NTSTORE.subn("recipe_ntstore64(", s)
        if a + b + c + d:
            p.write_text(s)
        counts["flush"] += a
        counts["fence"] += b + c
        counts["ntstore"] += d
    return counts


def patch_driver(root: Path, keys: int) -> None:
    p = root / "ycsb.cpp"
    s = p.read_text()
    s = re.sub(r"static uint64_t LOAD_SIZE = \d+;", f"static uint64_t LOAD_SIZE = {keys};", s)
    s = re.sub(r"static uint64_t RUN_SIZE = \d+;", "static uint64_t RUN_SIZE = 1;", s)
    # Count the Load phase only: reset where it starts, report where it prints its throughput.
    s, n_reset = re.subn(r"(\n\s*)// Load\n", r"\1// Load\1recipe_reset();\n", s)
    s, n_report = re.subn(r'(\n\s*)(printf\("Throughput: load.*?\);)', r"\1\2\1recipe_report(LOAD_SIZE);", s)
    if n_reset == 0 or n_reset != n_report:
        sys.exit(f"ycsb.cpp: found {n_reset} load phases but {n_report} load reports; driver layout changed")
    # Build fixes for today's tool chain, no change of behaviour: oneTBB dropped
    # task_scheduler_init (global_control is its replacement), and current g++ rejects
    # P-BwTree's access of its base class's private members from a nested class.
    s = s.replace(
        "tbb::task_scheduler_init init(num_thread);",
        "tbb::global_control init(tbb::global_control::max_allowed_parallelism, num_thread);",
    )
    p.write_text(s)
    bw = root / "P-BwTree" / "src" / "bwtree.h"
    bw.write_text(
        re.sub(r"\bprivate:", "public:", bw.read_text()).replace(
            "class BwTreeBase {", "class BwTreeBase {\n public:", 1
        )
    )
    cm = root / "CMakeLists.txt"
    c = cm.read_text()
    # Before any target: the counting helpers are force-included into every source.
    c = c.replace(
        "project(RECIPE)\n",
        f"project(RECIPE)\nadd_compile_options(-mclwb -include {root / 'recipe_counters.h'})\n",
        1,
    )
    c += "\ntarget_sources(Indexes PRIVATE recipe_counters.c)\n"
    cm.write_text(c)


def build(root: Path, jobs: int) -> Path:
    b = root / "build"
    b.mkdir(exist_ok=True)
    subprocess.run(["cmake", "-DCMAKE_BUILD_TYPE=Release", ".."], cwd=b, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["make", f"-j{jobs}", "ycsb"], cwd=b, check=True)
    return b / "ycsb"


def run_one(exe: Path, root: Path, index: str, key_type: str) -> dict[str, float] | None:
    out = subprocess.run(
        [str(exe), index, "a", key_type, "uniform", "1"], cwd=root, capture_output=True, text=True, timeout=3600
    )
    m = re.search(r"HMSIM_COUNTS inserts=(\d+) flushes=(\d+) fences=(\d+) ntstores=(\d+)", out.stdout)
    if not m:
        print(f"{index}/{key_type}: no counts (exit {out.returncode}): {out.stderr[-400:]}", file=sys.stderr)
        return None
    n, fl, fe, nt = (int(x) for x in m.groups())
    return {"flushes_per_insert": fl / n, "fences_per_insert": fe / n, "ntstores_per_insert": nt / n}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recipe", type=Path, required=True, help="checkout of utsaslab/RECIPE")
    ap.add_argument("--keys", type=int, default=1_000_000, help="Load keys (RECIPE's default is 64 M)")
    ap.add_argument("--out", type=Path, default=HERE / "recipe_flushes.csv")
    ap.add_argument("--build-dir", type=Path, default=None, help="kept build tree (default: a temp dir)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default=None, help="comma-separated RECIPE index names")
    a = ap.parse_args()
    if not (a.recipe / "ycsb.cpp").is_file():
        sys.exit(f"--recipe {a.recipe}: no ycsb.cpp there (expected a checkout of utsaslab/RECIPE)")
    work = a.build_dir or Path(tempfile.mkdtemp(prefix="recipe-xcheck-"))
    root = work / "RECIPE"
    if not (root / "build" / "ycsb").exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for name in [*SOURCE_DIRS, "CMakeLists.txt"]:
            src = a.recipe / name
            (shutil.copytree if src.is_dir() else shutil.copy2)(src, root / name)
        print("rewritten instructions:", patch_sources(root), file=sys.stderr)
        # After the rewrite: the counting helpers themselves execute the real instructions.
        shutil.copy2(HERE / "recipe_counters.h", root)
        shutil.copy2(HERE / "recipe_counters.c", root)
        patch_driver(root, a.keys)
    write_workloads(root, a.keys)
    exe = root / "build" / "ycsb"
    if not exe.exists():
        exe = build(root, a.jobs)
    only = set(a.only.split(",")) if a.only else None
    rows = []
    for recipe_name, hmsim_name, kts in INDEXES:
        if only and recipe_name not in only:
            continue
        for kt in kts:
            r = run_one(exe, root, recipe_name, kt)
            if r:
                rows.append(
                    {"index": hmsim_name, "key_type": "int" if kt == "randint" else "string", "keys": a.keys, **r}
                )
                print(rows[-1], file=sys.stderr)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()})
    print(f"wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
