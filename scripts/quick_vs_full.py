"""Compare every study's quick comparison table with its full grid's: each published number a
study compares should land, in quick mode, within 10 % of the full grid's value. Not part of
the tests (the full grids take long); tests/test_quick_vs_full.py checks one cheap point per
tiering system.

    python scripts/quick_vs_full.py [STUDY ...] [--out DIR] [--workers N]

Results go to DIR/quick/STUDY and DIR/full/STUDY (default `quick-vs-full/`); a study already
run there is resumed, not rerun (the sweep runner reuses finished points). Prints one table
per study and exits 1 if any compared number differs by more than 10 %.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

import hmsim
from hmsim.studies import names

TOLERANCE = 0.10


def table(quick: pd.DataFrame, full: pd.DataFrame) -> pd.DataFrame:
    """Quick and full simulated values of each compared metric, side by side."""
    q = quick.set_index("metric")[["published", "simulated"]].rename(columns={"simulated": "quick"})
    f = full.set_index("metric")[["simulated"]].rename(columns={"simulated": "full"})
    t = q.join(f, how="outer")
    t["quick_over_full"] = t["quick"] / t["full"]
    t["agrees"] = (t["quick_over_full"] - 1.0).abs() <= TOLERANCE
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("studies", nargs="*", help="studies to compare (default: all)")
    ap.add_argument("--out", default="quick-vs-full", help="where the quick and full runs go")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()
    studies = args.studies or names()
    out = Path(args.out)
    bad = 0
    pd.set_option("display.width", 200)
    pd.set_option("display.max_colwidth", 70)
    for s in studies:
        runs = {}
        for mode in ("quick", "full"):
            runs[mode] = hmsim.reproduce(s, out=out / mode, quick=mode == "quick", workers=args.workers)
        q, f = runs["quick"].comparison, runs["full"].comparison
        if q.empty and f.empty:
            print(f"\n{s}: compares no published numbers")
            continue
        t = table(q, f)
        bad += int((~t.agrees).sum())
        print(f"\n{s}: quick vs full ({int(t.agrees.sum())} of {len(t)} within {TOLERANCE:.0%})")
        print(t.to_string(float_format=lambda v: f"{v:.4g}"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
