"""Rewrite the generated number blocks of the docs (`<!-- numbers NAME: ... -->`) from fresh
quick runs of the studies they come from (python/hmsim/studies/doc_numbers.py).

    python scripts/doc_numbers.py            # rewrite docs/*.md in place
    python scripts/doc_numbers.py --check    # exit 1 if any block is stale
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import hmsim
from hmsim.studies.doc_numbers import blocks_in, render, rewrite, studies_of

DOCS = Path(__file__).resolve().parent.parent / "docs"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report stale blocks, change nothing")
    args = ap.parse_args()
    pages = sorted(DOCS.glob("*.md"))
    with tempfile.TemporaryDirectory() as tmp:
        results = {s: hmsim.reproduce(s, out=tmp, quick=True) for s in sorted(studies_of(pages))}
    fresh = render(results)
    stale = []
    for page in pages:
        text = page.read_text()
        names = [n for n in blocks_in(text) if n in fresh]
        new = rewrite(text, fresh)
        if new != text:
            stale += [f"{page.name}: {n}" for n in names if blocks_in(text)[n] != fresh[n]]
            if not args.check:
                page.write_text(new)
    for s in stale:
        print(("stale: " if args.check else "rewrote: ") + s)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
