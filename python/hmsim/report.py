"""The reproduction report: one page with every study's figures and its numbers beside the
published ones (validation first, then calibration, inputs apart), the agreement on top and
the cited papers at the end (`hmsim reproduce` writes it, for one study or all)."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pandas as pd

from hmsim.atomic import atomic_write
from hmsim.host import gauge_text
from hmsim.host import text as host_text
from hmsim.humanize import duration
from hmsim.references import cite
from hmsim.references import get as get_reference
from hmsim.studies.base import StudyResult

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{margin-bottom:.2em} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
h3{font-size:1em;margin:1.2em 0 0}
table{border-collapse:collapse;font-size:.9em;margin:1em 0} td,th{border:1px solid #ddd;padding:.25em .5em}
th{background:#f4f4f4;text-align:left} td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.ok td.ratio{background:#e3f4e3} tr.near td.ratio{background:#fff4d6} tr.far td.ratio{background:#fbe3e3}
tr.input td{color:#555}
.figs img{max-width:100%;border:1px solid #eee;margin:.5em 0} .meta{color:#666;font-size:.9em}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}
"""

# Validation first: the numbers nothing was fitted to are the model's evidence.
ROLE_LABELS = {
    "validation": "validation (not fitted)",
    "calibration": "calibration (set a parameter: a consistency check)",
    "all": "all compared (validation + calibration)",
}
SECTION_TITLES = {
    "validation": "Validation: published numbers nothing was fitted to",
    "calibration": "Calibration: published numbers that set a parameter",
    "input": "Inputs: numbers of the study's setup copied into the model (echoed, not results)",
}
NO_NUMBERS = "No published numbers are compared for this study; its docs page says what the source reports."
# Study tables the report shows besides the published numbers, by table name: cross-checks
# against an original implementation (counted, not published) and a study's headline
# comparison when its source gives no numbers to set beside it.
CROSSCHECK_TABLES = {
    "recipe_crosscheck": "Cross-check: flushes / fences / nt-stores per insert, RECIPE's original code vs hmsim",
    "table_lazy_ibuddy_b1_improvement": (
        "Improvement (c − e) / c of lazy iBuddy batch 1 (e) over lazy buddy batch 31 (c): "
        "mean model cycles of a memory request, alloc and free together"
    ),
}


def _band(ratio: float) -> str:
    err = abs(ratio - 1.0)
    return "ok" if err <= 0.10 else ("near" if err <= 0.25 else "far")


def _agreement(g: pd.DataFrame) -> dict[str, int]:
    return {
        "numbers": len(g),
        "within_10pct": int(g.within_10pct.sum()),
        "within_25pct": int(g.within_25pct.sum()),
    }


def summary_counts(comparisons: dict[str, pd.DataFrame]) -> dict[str, dict[str, int]]:
    """Published numbers within 10 % / 25 % of the simulation: validation, calibration and
    both together ("all"). Inputs copied from a study's setup are only counted ("input") and
    never enter the agreement."""
    frames = [c.assign(study=n) for n, c in comparisons.items() if not c.empty]
    if not frames:
        return {}
    df = pd.concat(frames)
    compared = df[df.role != "input"]
    out = {role: _agreement(compared[compared.role == role]) for role in ("validation", "calibration")}
    out["all"] = _agreement(compared)
    inputs = int((df.role == "input").sum())
    if inputs:
        out["input"] = {"numbers": inputs}
    return out


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _scenarios(study: str) -> list[tuple[str, str]]:
    from importlib import resources

    folder = resources.files("hmsim.studies").joinpath("scenarios")
    stem = {"pmem-wa": "pmem"}.get(study, study)
    return [
        (f.name, f.read_text())
        for f in sorted(folder.iterdir(), key=lambda f: f.name)
        if f.name.startswith(stem) and f.name.endswith(".toml")
    ]


def _source(row) -> str:
    return cite(getattr(row, "source", "") or "", getattr(row, "where", "") or "")


def sources_used(results: dict[str, StudyResult]) -> list[str]:
    """Reference keys of every study's source and every compared number, in order of use."""
    keys: list[str] = []
    for r in results.values():
        keys.append(r.summary.get("source", ""))
        if "source" in r.comparison:
            keys += list(r.comparison.source)
    return [k for k in dict.fromkeys(keys) if k]


def _crosscheck_tables(r: StudyResult) -> tuple[list[str], list[str]]:
    """(HTML, Markdown) of the study's cross-check tables (`CROSSCHECK_TABLES`), if any."""
    h: list[str] = []
    md: list[str] = []
    for name, title in CROSSCHECK_TABLES.items():
        t = r.tables.get(name)
        if t is None or t.empty:
            continue
        cols = [str(c) for c in t.columns]
        h.append(f"<h3>{html.escape(title)}</h3><table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols))
        h.append("</tr>")
        md += [f"### {title}", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for row in t.itertuples(index=False):
            cells = [_fmt(v) if isinstance(v, float) else str(v) for v in row]
            h.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
            md.append("| " + " | ".join(cells) + " |")
        h.append("</table>")
        md.append("")
    return h, md


def wall_text(s: dict) -> str:
    """The real time behind a study's results: a resumed run's own wall time counts only the
    points it ran, so the total over the runs that made them comes first, then this run's."""
    wall = float(s.get("wall_time_s", 0.0) or 0.0)
    if "wall_time_total_s" not in s:  # a summary from before the totals were kept
        return f"wall {duration(wall)}"
    ran, reused, runs = int(s.get("points_ran", 0)), int(s.get("points_reused", 0)), int(s.get("runs", 1))
    if not reused:
        text = f"wall {duration(wall)}"
    elif runs > 1:
        text = f"wall {duration(s['wall_time_total_s'])} over {runs} runs (the last {duration(wall)}, "
        text += f"{ran} of {ran + reused} points new)"
    else:
        text = f"wall {duration(wall)} resumed: {ran} of {ran + reused} points new"
        text += ", the earlier (interrupted) run untimed"
    text += f" · points' own run time {duration(float(s.get('points_wall_time_s', 0.0)))}"
    text += cpu_text(s)
    # The same build's times differ by machine: say which one these are from.
    text += f" · on {host_text(s['host'])}" if isinstance(s.get("host"), dict) else ""
    # And how fast that machine ran when the reproduction began.
    return text + (f" · {gauge_text(g)} at the start" if isinstance(g := s.get("host_gauge_at_start"), dict) else "")


def cpu_text(s: dict) -> str:
    """What a study's points and figures cost in CPU time (a summary from before these were
    kept says nothing): the honest cost where points share the cores, whose wall times grow
    with whatever else runs."""
    parts = []
    if isinstance(cpu := s.get("points_cpu_time_s"), int | float):
        parts.append(f"points {duration(float(cpu))}")
    if isinstance(cpu := s.get("figures_cpu_time_s"), int | float):
        parts.append(f"figures {duration(float(cpu))}")
    return f" · CPU: {', '.join(parts)}" if parts else ""


def _study_tables(r: StudyResult) -> tuple[list[str], list[str]]:
    """(HTML, Markdown) of a study's numbers: validation, calibration, then inputs apart."""
    if r.comparison.empty:
        return [f"<p class='meta'>{NO_NUMBERS}</p>"], [NO_NUMBERS, ""]
    h: list[str] = []
    md: list[str] = []
    for role in ("validation", "calibration", "input"):
        rows = r.comparison[r.comparison.role == role]
        if rows.empty:
            continue
        counted = role != "input"
        head = ["metric", "published", "simulated", *(["ratio"] if counted else []), "source", "note"]
        h.append(f"<h3>{html.escape(SECTION_TITLES[role])}</h3><table><tr>")
        h.append("".join(f"<th>{c}</th>" for c in head) + "</tr>")
        md += [f"### {SECTION_TITLES[role]}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for c in rows.itertuples():
            unit = f" {c.unit}" if c.unit else ""
            pub, sim = f"{_fmt(c.published)}{unit}", f"{_fmt(c.simulated)}{unit}"
            ratio = f"<td class='num ratio'>{c.ratio:.3f}</td>" if counted else ""
            band = _band(c.ratio) if counted else "input"
            h.append(
                f"<tr class='{band}'><td>{html.escape(c.metric)}</td><td class=num>{html.escape(pub)}</td>"
                f"<td class=num>{html.escape(sim)}</td>{ratio}<td>{html.escape(_source(c))}</td>"
                f"<td>{html.escape(c.note)}</td></tr>"
            )
            cells = [c.metric, pub, sim, *([f"{c.ratio:.3f}"] if counted else []), _source(c), c.note]
            md.append("| " + " | ".join(cells) + " |")
        h.append("</table>")
        md.append("")
    return h, md


def load_study(folder: Path) -> StudyResult | None:
    """A study's result as an earlier `hmsim reproduce` left it in `folder` (its summary.json,
    comparison and cross-check tables), for the report; None if it holds no finished study."""
    summary_path = Path(folder) / "summary.json"
    try:
        summary = json.loads(summary_path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict) or "study" not in summary:
        return None
    comparison = pd.DataFrame(summary.get("comparison") or [])
    for col in comparison.columns:
        if comparison[col].dtype == object:
            comparison[col] = comparison[col].fillna("")
    tables = {}
    for name in CROSSCHECK_TABLES:
        f = Path(folder) / f"{name}.csv"
        if f.exists():
            tables[name] = pd.read_csv(f)
    return StudyResult(summary["study"], pd.DataFrame(), tables, comparison, summary)


def with_studies_on_disk(out: Path, done: dict[str, StudyResult]) -> dict[str, StudyResult]:
    """`done` and every other study an earlier run left under `out`, in the registry's order:
    a report after `hmsim reproduce STUDY` covers every study reproduced into `out`."""
    from hmsim.studies import names

    found: dict[str, StudyResult] = {}
    for name in names():
        r = done.get(name) or load_study(Path(out) / name)
        if r is not None:
            found[name] = r
    return {**found, **{n: r for n, r in done.items() if n not in found}}


NOT_COMPARED_TITLE = "Published but not compared: figures and numbers of the source that the tables above leave out"


def _not_compared(name: str) -> tuple[list[str], list[str]]:
    """(HTML, Markdown): what the study's sources publish that its tables do not compare."""
    from hmsim.studies.not_compared import NOT_COMPARED

    items = NOT_COMPARED.get(name, [])
    if not items:
        return [], []
    title = NOT_COMPARED_TITLE
    h = [f"<h3>{html.escape(title)}</h3><table><tr><th>published figure or number</th><th>why</th></tr>"]
    md = [f"### {title}", "", "| published figure or number | why |", "|---|---|"]
    for item, why in items:
        h.append(f"<tr><td>{html.escape(item)}</td><td>{html.escape(why)}</td></tr>")
        md.append(f"| {item} | {why} |")
    h.append("</table>")
    md.append("")
    return h, md


def write_report(out: Path, results: dict[str, StudyResult]) -> Path:
    """Write `out/report/index.html` and `out/report/README.md`; returns the HTML path."""
    rep = Path(out) / "report"
    comparisons = {n: r.comparison for n, r in results.items()}
    counts = summary_counts(comparisons)
    version = next(iter(results.values())).summary.get("hmsim_version", "") if results else ""
    h: list[str] = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>hmsim reproduction report</title>"
        f"<style>{CSS}</style></head><body>",
        "<h1>hmsim reproduction report</h1>",
        f"<p class='meta'>hmsim {html.escape(version)} · {len(results)} studies</p>",
        "<h2>Agreement with the published numbers</h2><table><tr><th>numbers</th><th>count</th>"
        "<th>within 10 %</th><th>within 25 %</th></tr>",
    ]
    md: list[str] = [
        "# hmsim reproduction report",
        "",
        f"hmsim {version}; {len(results)} studies.",
        "",
        "## Agreement with the published numbers",
        "",
        "| numbers | count | within 10 % | within 25 % |",
        "|---|---|---|---|",
    ]
    for role, label in ROLE_LABELS.items():
        c = counts.get(role)
        if c is None:
            continue
        h.append(
            f"<tr><td>{label}</td><td class=num>{c['numbers']}</td><td class=num>{c['within_10pct']}</td>"
            f"<td class=num>{c['within_25pct']}</td></tr>"
        )
        md.append(f"| {label} | {c['numbers']} | {c['within_10pct']} | {c['within_25pct']} |")
    inputs = counts.get("input", {}).get("numbers", 0)
    legend = (
        "Validation numbers were not fitted: their agreement is the model's evidence. Calibration "
        "numbers set a parameter; their agreement only checks that the model holds the fit. "
        f"{inputs} further published numbers are inputs of a study's setup (capacities, link speeds, "
        "catalog values) that the model echoes: each study lists them apart, and they are not counted. "
        "Every number names its paper; the full references are at the end."
    )
    h.append(f"</table><p class='meta'>{html.escape(legend)}</p>")
    md += ["", legend, ""]
    for name, r in results.items():
        s = r.summary
        h.append(f"<h2 id='{html.escape(name)}'>{html.escape(name)}: {html.escape(s.get('title', ''))}</h2>")
        src = cite(s["source"]) if s.get("source") else ""
        meta = (
            (f"source: {src} · " if src else "")
            + f"seed {s.get('seed')} · {'quick' if s.get('quick') else 'full'} grid · "
            + f"{s.get('points', '?')} points · {wall_text(s)} · "
            + f"hmsim {s.get('hmsim_version')}"
        )
        h.append(f"<p class='meta'>{html.escape(meta)}</p>")
        md += [f"## {name}: {s.get('title', '')}", "", meta, ""]
        th, tmd = _study_tables(r)
        h += th
        md += tmd
        ch, cmd = _crosscheck_tables(r)
        h += ch
        md += cmd
        nh, nmd = _not_compared(name)
        h += nh
        md += nmd
        h.append("<div class='figs'>")
        for fig in s.get("figures", []):
            if fig.endswith(".png"):
                h.append(f"<img src='../{html.escape(name)}/{html.escape(fig)}' alt='{html.escape(fig)}'>")
                md.append(f"![{fig}](../{name}/{fig})")
        h.append("</div>")
        for fname, text in _scenarios(name):
            h.append(f"<p class='meta'>scenario <code>{html.escape(fname)}</code></p><pre>{html.escape(text)}</pre>")
        md.append("")
    used = sources_used(results)
    if used:
        h.append("<h2 id='references'>References</h2><ul>")
        md += ["## References", ""]
        for key in used:
            ref = get_reference(key)
            h.append(f"<li><b>{html.escape(ref.short())}</b>: {html.escape(ref.full()).replace('*', '')}</li>")
            md.append(f"- **{ref.short()}**: {ref.full()}")
        h.append("</ul>")
        md.append("")
    h.append("</body></html>")
    html_path = rep / "index.html"
    atomic_write(html_path, lambda f: f.write("\n".join(h)))
    atomic_write(rep / "README.md", lambda f: f.write("\n".join(md) + "\n"))
    atomic_write(rep / "summary.json", lambda f: f.write(json.dumps(counts, indent=2) + "\n"))
    return html_path


def write_validation_doc(out: Path, doc: Path) -> None:
    """docs/validation.md from a report under `out`: the tables without the figures."""
    lines = (Path(out) / "report" / "README.md").read_text().splitlines()
    body = [ln for ln in lines[1:] if not ln.startswith("![")]
    head = [
        "# Validation: hmsim against the published numbers",
        "",
        "Generated from a `hmsim reproduce` report by `hmsim.report.write_validation_doc`",
        "(`make validation` runs every study's full grid); each study's line below names the",
        "grid it ran (full or quick) and its wall time, summed over the runs a resumed study took.",
        "The figures are in the report itself (`results/report/index.html` after `make validation`).",
        "",
    ]
    atomic_write(Path(doc), lambda f: f.write("\n".join(head + body) + "\n"))
