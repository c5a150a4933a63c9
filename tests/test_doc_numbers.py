"""The numbers the docs quote from quick studies are regenerated from this session's quick runs
and must match (python/hmsim/studies/doc_numbers.py; `python scripts/doc_numbers.py` rewrites
them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hmsim.studies.doc_numbers import BLOCKS, blocks_in, render, rewrite

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _pages_with(study: str) -> list[Path]:
    return [
        p for p in sorted(DOCS.glob("*.md")) if any(BLOCKS.get(n, ("",))[0] == study for n in blocks_in(p.read_text()))
    ]


def test_every_block_in_the_docs_has_a_generator():
    for page in sorted(DOCS.glob("*.md")):
        unknown = [n for n in blocks_in(page.read_text()) if n not in BLOCKS]
        assert not unknown, f"{page.name}: no generator for {unknown}"


def test_rewrite_replaces_only_the_block_bodies():
    text = "a\n<!-- numbers x: why -->\nold\n<!-- /numbers -->\nb\n"
    assert rewrite(text, {"x": "new\n"}) == "a\n<!-- numbers x: why -->\nnew\n<!-- /numbers -->\nb\n"
    assert rewrite(text, {}) == text


@pytest.mark.parametrize("study", sorted({s for s, _ in BLOCKS.values()}))
def test_doc_numbers_match_the_quick_study(study, quick_study):
    pages = _pages_with(study)
    assert pages, f"no docs page quotes {study}'s generated numbers"
    res, _ = quick_study(study)
    fresh = render({study: res})
    for page in pages:
        have = blocks_in(page.read_text())
        stale = [n for n in have if n in fresh and have[n] != fresh[n]]
        assert not stale, f"docs/{page.name}: {stale} differ from the quick run; run `python scripts/doc_numbers.py`"
