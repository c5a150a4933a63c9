"""Numbers the docs quote from a quick study, generated from its results so they cannot go
stale: a docs page holds each block between

    <!-- numbers NAME: ... -->
    ...
    <!-- /numbers -->

`scripts/doc_numbers.py` rewrites the blocks from fresh quick runs; tests/test_doc_numbers.py
regenerates them from the test session's quick runs and fails on any difference."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from hmsim.studies.base import StudyResult
from hmsim.studies.tiering import SCALED_NOTE, series_labels

OPEN = re.compile(r"<!-- numbers ([\w-]+):[^>]*-->\n")
CLOSE = "<!-- /numbers -->"


def _fmt(v: float, digits: int = 1) -> str:
    return "–" if pd.isna(v) else f"{v:.{digits}f}"


def _label(system: str, colloid: bool) -> str:
    return f"{system}{' + colloid' if colloid else ''}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def tiering_fig1(res: StudyResult) -> str:
    d = res.results[res.results.experiment == "contention"]
    d = d.assign(label=series_labels(d, bool(res.summary.get("quick"))))
    rows = []
    for label, g in d.groupby("label", sort=False):
        g = g.set_index("intensity").sort_index()
        thr = [_fmt(g.throughput_gb_s.get(i)) + ("" if bool(g.converged.get(i, True)) else "*") for i in range(4)]
        moved = "/".join(_fmt(g.migrated_gb.get(i)) for i in range(4))
        rows.append([label, *thr, moved])
    note = "\\* the measured window is not steady (the row's `converged` is false).\n"
    if d.label.str.endswith("[scaled]").any():
        note += f"\n{SCALED_NOTE}.\n"
    return _table(["system", "0×", "1×", "2×", "3×", "migrated GB 0×/1×/2×/3×"], rows) + "\n" + note


def tiering_comparison(res: StudyResult) -> str:
    c = res.comparison[res.comparison["where"].str.startswith("Fig. 1")]
    rows = [[r.metric, f"{r.published:g}", f"{r.simulated:.3f}", f"{r.ratio:.2f}"] for r in c.itertuples()]
    return _table(["metric", "published", "quick", "ratio"], rows)


def tiering_fig3(res: StudyResult) -> str:
    d = res.results
    quick = bool(res.summary.get("quick"))
    rows = []
    for exp, col, unit in (("alt_latency", "alt_unloaded_latency_ns", "ns"), ("object_size", "object_size_bytes", "B")):
        e = d[d.experiment == exp]
        for system in dict.fromkeys(e.system):
            s = e[e.system == system].assign(steady=lambda x: x.converged.astype(bool))
            t = s.pivot_table(index=["intensity", col], columns="colloid", values="throughput_gb_s")
            ok = s.pivot_table(index=["intensity", col], columns="colloid", values="steady", aggfunc="all")
            for (i, v), r in t.iterrows():
                star = {c: "" if bool(ok.loc[(i, v)].get(c, True)) else "*" for c in (False, True)}
                rows.append(
                    [
                        f"{system} [scaled]" if quick and system == "tpp" else system,
                        f"{i}×",
                        f"{v:g} {unit}",
                        _fmt(r.get(False)) + star[False],
                        _fmt(r.get(True)) + star[True],
                        _fmt(r.get(True) / r.get(False), 2),
                    ]
                )
    header = ["base system", "contention", "setting", "base GB/s", "+ colloid GB/s", "gain"]
    return _table(header, rows) + "\n\\* not steady in the measured window.\n"


def tiering_fig6(res: StudyResult) -> str:
    d = res.results[res.results.experiment.str.startswith("app_")]
    rows = []
    for (exp, system, colloid), g in d.groupby(["experiment", "system", "colloid"], sort=False):
        g = g.set_index("intensity").sort_index()
        cells = [_fmt(g.throughput_gb_s.get(i)) + ("" if bool(g.converged.get(i, True)) else "*") for i in (0, 3)]
        rows.append([exp.removeprefix("app_"), _label(system, colloid), *cells])
    return _table(["app", "system", "0× GB/s", "3× GB/s"], rows) + "\n\\* not steady in the measured window.\n"


def tiering_steady(res: StudyResult) -> str:
    s = res.summary
    total = len(res.results)
    return (
        f"The quick study flags {s['not_steady_rows']} of its {total} rows as not steady "
        "(`summary.json` → `not_steady` lists them).\n"
    )


# Block name -> (study, renderer). A block's name says which study and grid it comes from.
BLOCKS: dict[str, tuple[str, Callable[[StudyResult], str]]] = {
    "tiering-quick-fig1": ("tiering", tiering_fig1),
    "tiering-quick-comparison": ("tiering", tiering_comparison),
    "tiering-quick-fig3": ("tiering", tiering_fig3),
    "tiering-quick-fig6": ("tiering", tiering_fig6),
    "tiering-quick-steady": ("tiering", tiering_steady),
}


def blocks_in(text: str) -> dict[str, str]:
    """The generated blocks a page holds: name -> its current text."""
    out = {}
    for m in OPEN.finditer(text):
        end = text.index(CLOSE, m.end())
        out[m.group(1)] = text[m.end() : end]
    return out


def rewrite(text: str, fresh: dict[str, str]) -> str:
    """`text` with every block named in `fresh` replaced by its fresh text."""

    def sub(m: re.Match) -> str:
        name = m.group(1)
        end = text.index(CLOSE, m.end())
        return m.group(0) + fresh.get(name, text[m.end() : end])

    pieces, pos = [], 0
    for m in OPEN.finditer(text):
        end = text.index(CLOSE, m.end())
        pieces += [text[pos : m.start()], sub(m)]
        pos = end
    return "".join(pieces) + text[pos:]


def studies_of(pages: list[Path]) -> set[str]:
    """The studies whose quick runs the blocks of `pages` need."""
    return {BLOCKS[n][0] for p in pages for n in blocks_in(p.read_text()) if n in BLOCKS}


def render(results: dict[str, StudyResult]) -> dict[str, str]:
    """Every block whose study is in `results`."""
    return {n: f(results[s]) for n, (s, f) in BLOCKS.items() if s in results}
