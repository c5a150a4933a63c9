#!/usr/bin/env python3
"""Check that refactoring left every study's and example's results unchanged.

Runs every `hmsim reproduce NAME --quick` and every example scenario or sweep in
`examples/`, then fingerprints each CSV it wrote (SHA-256 of its text with the columns
measured on the host removed, as `hmsim schema` declares them: they differ from run to run
by nature). `--record FILE` stores the fingerprints; `--check FILE` compares with stored
ones and names every CSV that changed, with its first differing line.

    python scripts/results_identical.py --record before.json     # on the old commit (--full:
                                                                 #  keep lines, to show diffs)
    python scripts/results_identical.py --check before.json      # on the new one

`--studies-from DIR` fingerprints the studies an earlier `hmsim reproduce all --quick --out
DIR` (or one `--quick` study at a time into DIR) wrote instead of running them again: the
test suite passes the directory its quick studies already ran into.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def schema() -> list[dict]:
    """Every module's output tables with their declared columns (`hmsim schema --json`)."""
    from hmsim import _core

    return json.loads(_core.schema())


def measured_columns(table: str, header: list[str], modules: list[dict]) -> set[str]:
    """Columns of a `table.csv` with `header` measured on the host (they differ from run to
    run by nature): those the core declares `measured` for that table, plus those studies add
    (`hmsim.results.MEASURED_STUDY_COLUMNS`). Several modules write a `results` table and
    declare the same name differently (`throughput_mops` is simulated in tiering, the host's
    rate in pm-index): the module whose declaration shares most columns with the header wrote
    it (on a tie, the union of the tied modules' measured columns)."""
    from hmsim.results import MEASURED_STUDY_COLUMNS

    have = set(header)
    best: set[str] = set()
    most = 0
    for m in modules:
        for t in m["tables"]:
            if t["name"] != table:
                continue
            shared = len(have & {c["name"] for c in t["columns"]})
            measured = {c["name"] for c in t["columns"] if c["measured"]}
            if shared > most:
                best, most = measured, shared
            elif shared == most and shared > 0:
                best |= measured
    return best | MEASURED_STUDY_COLUMNS.get(table, frozenset())


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _hmsim() -> str:
    exe = shutil.which("hmsim")
    if exe is None:
        sys.exit("results_identical: `hmsim` is not on PATH (run inside the project's .venv)")
    return exe


def _run(args: list[str]) -> None:
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"results_identical: {' '.join(args)} failed:\n{done.stderr[-2000:]}")


def run_studies(out: Path, only: str | None = None) -> None:
    """Run every quick study into `out/reproduce` (only those whose name contains `only`,
    when given)."""
    exe = _hmsim()
    if only is None:
        _run([exe, "reproduce", "all", "--quick", "--workers", "2", "--out", str(out / "reproduce")])
        return
    from hmsim.studies import names

    for study in names():
        if only in study:
            _run([exe, "reproduce", study, "--quick", "--workers", "2", "--out", str(out / "reproduce")])


def run_examples(out: Path, only: str | None = None) -> None:
    """Run every example into `out/examples` (only those whose name contains `only`, when
    given)."""
    exe = _hmsim()
    devices = ["--device-dir", str(ROOT / "examples" / "devices")]
    commands = []
    for ex in sorted((ROOT / "examples").glob("*.toml")):
        if only is not None and only not in ex.stem:
            continue
        how = ["sweep", str(ex), "--workers", "2"] if "[axes]" in ex.read_text() else ["run", str(ex)]
        commands.append([exe, *how, "--out", str(out / "examples" / ex.stem), *devices])
    # Two at a time: most of an example's run is its interpreter starting on one core. Each
    # writes its own directory, and the fingerprints are read in path order afterwards.
    # On a failure the examples not started are dropped, not run before it is reported.
    pool = ThreadPoolExecutor(max_workers=2)
    runs = [pool.submit(_run, c) for c in commands]
    try:
        for r in runs:
            r.result()
    finally:
        pool.shutdown(cancel_futures=True)


def fingerprint(path: Path, modules: list[dict]) -> tuple[str, list[str]]:
    """SHA-256 of a CSV without its measured values, and the normalised lines."""
    rows = list(csv.reader(io.StringIO(path.read_text())))
    if not rows:
        return hashlib.sha256(b"").hexdigest(), []
    header = rows[0]
    wall = measured_columns(path.stem, header, modules)
    keep = [i for i, c in enumerate(header) if c not in wall]
    # Rows measured on the host (a real allocator or index run against the wall clock): only
    # their labels are results; every number in them is a measurement of this machine.
    markers = [header.index(c) for c in ("clock", "source") if c in header]
    lines = [",".join(header[i] for i in keep)]
    for r in rows[1:]:
        measured = any(m < len(r) and r[m] in ("wall", "real") for m in markers)
        cells = [r[i] if i < len(r) else "" for i in keep]
        if measured:
            cells = ["" if _is_number(c) else c for c in cells]
        lines.append(",".join(cells))
    text = "\n".join(lines)
    return hashlib.sha256(text.encode()).hexdigest(), lines


def collect(out: Path, prefix: str = "") -> dict[str, dict]:
    """The fingerprint and lines of every result CSV under `out`, by path under it (after
    `prefix`)."""
    modules = schema()
    found = {}
    for p in sorted(out.rglob("*.csv")):
        rel = prefix + p.relative_to(out).as_posix()
        if "/points/" in rel or rel.endswith("comparison.csv"):
            continue  # sweep points are merged into results.csv; comparison holds published ratios
        digest, lines = fingerprint(p, modules)
        found[rel] = {"sha256": digest, "lines": lines}
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--record", type=Path, help="write the fingerprints to this JSON file")
    g.add_argument("--check", type=Path, help="compare with fingerprints in this JSON file")
    ap.add_argument("--keep", type=Path, help="run into this directory and keep it")
    ap.add_argument("--full", action="store_true", help="with --record: store every line, to show where a CSV changed")
    ap.add_argument("--only", help="check only the studies and examples whose name contains this word")
    ap.add_argument(
        "--studies-from",
        type=Path,
        help="fingerprint the quick studies already run into this directory instead of running them",
    )
    a = ap.parse_args()
    out = a.keep or Path(tempfile.mkdtemp(prefix="hmsim-identical-"))
    try:
        if a.studies_from is None:
            run_studies(out, a.only)
        run_examples(out, a.only)
        now = collect(out)
        if a.studies_from is not None:
            studies = collect(a.studies_from, "reproduce/")
            now |= {k: v for k, v in studies.items() if a.only is None or a.only in k.split("/")[1]}
    finally:
        if a.keep is None:
            shutil.rmtree(out, ignore_errors=True)
    if a.record:
        stored = {
            k: {"sha256": v["sha256"], "rows": len(v["lines"]) - 1, "header": v["lines"][0] if v["lines"] else ""}
            | ({"lines": v["lines"]} if a.full else {})
            for k, v in now.items()
        }
        tmp = a.record.with_suffix(".tmp")
        tmp.write_text(json.dumps(stored, indent=0, sort_keys=True) + "\n")
        os.replace(tmp, a.record)
        print(f"results identical: recorded {len(now)} CSV files into {a.record}")
        return 0
    before = json.loads(a.check.read_text())
    if a.only is not None:
        before = {k: v for k, v in before.items() if a.only in k.split("/")[1]}
    bad = 0
    for rel in sorted(set(before) | set(now)):
        if rel not in now:
            print(f"MISSING  {rel}")
            bad += 1
        elif rel not in before:
            print(f"NEW      {rel}")
            bad += 1
        elif before[rel]["sha256"] != now[rel]["sha256"]:
            if "lines" in before[rel]:
                old, new = before[rel]["lines"], now[rel]["lines"]
                i = next((j for j in range(min(len(old), len(new))) if old[j] != new[j]), min(len(old), len(new)))
                print(f"CHANGED  {rel} (line {i + 1})")
                print(f"   before: {old[i] if i < len(old) else '<end>'}")
                print(f"   after:  {new[i] if i < len(new) else '<end>'}")
            else:
                rows = f"{before[rel]['rows']} -> {len(now[rel]['lines']) - 1} rows"
                same_header = before[rel]["header"] == now[rel]["lines"][0]
                print(f"CHANGED  {rel} ({rows}; header {'same' if same_header else 'changed'})")
            bad += 1
    same = len(set(before) & set(now)) - sum(
        1 for r in set(before) & set(now) if before[r]["sha256"] != now[r]["sha256"]
    )
    verdict = "identical" if bad == 0 else "DIFFERENT"
    print(f"results {verdict}: {same} of {len(before)} CSV files unchanged")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
