"""The reproduction report: one page with every study's figures and its numbers beside the
published ones, and a validation summary on top (`hmsim reproduce all` writes it)."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pandas as pd

from hmsim.results import _atomic_write
from hmsim.studies.base import StudyResult

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{margin-bottom:.2em} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.9em;margin:1em 0} td,th{border:1px solid #ddd;padding:.25em .5em}
th{background:#f4f4f4;text-align:left} td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.ok td.ratio{background:#e3f4e3} tr.near td.ratio{background:#fff4d6} tr.far td.ratio{background:#fbe3e3}
.figs img{max-width:100%;border:1px solid #eee;margin:.5em 0} .meta{color:#666;font-size:.9em}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}
"""


def _band(ratio: float) -> str:
    err = abs(ratio - 1.0)
    return "ok" if err <= 0.10 else ("near" if err <= 0.25 else "far")


def summary_counts(comparisons: dict[str, pd.DataFrame]) -> dict[str, dict[str, int]]:
    """Published numbers within 10 % / 25 % of the simulation, per role and overall."""
    out: dict[str, dict[str, int]] = {}
    frames = [c.assign(study=n) for n, c in comparisons.items() if not c.empty]
    if not frames:
        return out
    df = pd.concat(frames)
    for role, g in [("all", df), *df.groupby("role")]:
        out[str(role)] = {
            "numbers": len(g),
            "within_10pct": int(g.within_10pct.sum()),
            "within_25pct": int(g.within_25pct.sum()),
        }
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
        "<h2>Validation summary</h2><table><tr><th>numbers</th><th>count</th><th>within 10 %</th>"
        "<th>within 25 %</th></tr>",
    ]
    md: list[str] = [
        "# hmsim reproduction report",
        "",
        f"hmsim {version}; {len(results)} studies.",
        "",
        "## Validation summary",
        "",
        "| numbers | count | within 10 % | within 25 % |",
        "|---|---|---|---|",
    ]
    for role, c in counts.items():
        label = {
            "all": "all published numbers",
            "calibration": "used for calibration",
            "validation": "not fitted (validation)",
        }.get(role, role)
        h.append(
            f"<tr><td>{label}</td><td class=num>{c['numbers']}</td><td class=num>{c['within_10pct']}</td>"
            f"<td class=num>{c['within_25pct']}</td></tr>"
        )
        md.append(f"| {label} | {c['numbers']} | {c['within_10pct']} | {c['within_25pct']} |")
    h.append(
        "</table><p class='meta'>Calibration numbers set a device parameter; their agreement checks "
        "consistency. Validation numbers were not fitted.</p>"
    )
    md += [
        "",
        "Calibration numbers set a device parameter; their agreement checks consistency. "
        "Validation numbers were not fitted.",
        "",
    ]
    for name, r in results.items():
        s = r.summary
        h.append(f"<h2 id='{html.escape(name)}'>{html.escape(name)}: {html.escape(s.get('title', ''))}</h2>")
        meta = (
            f"seed {s.get('seed')} · {'quick' if s.get('quick') else 'full'} grid · "
            f"{s.get('points', '?')} points · wall {s.get('wall_time_s', 0):.1f} s · hmsim {s.get('hmsim_version')}"
        )
        h.append(f"<p class='meta'>{html.escape(meta)}</p>")
        md += [f"## {name}: {s.get('title', '')}", "", meta, ""]
        if r.comparison.empty:
            h.append("<p class='meta'>The spec gives no published numbers for this study.</p><div class='figs'>")
            md += ["The spec gives no published numbers for this study.", ""]
        else:
            h.append(
                "<table><tr><th>metric</th><th>published</th><th>simulated</th><th>ratio</th><th>role</th>"
                "<th>note</th></tr>"
            )
            md += ["| metric | published | simulated | ratio | role | note |", "|---|---|---|---|---|---|"]
            for c in r.comparison.itertuples():
                unit = f" {c.unit}" if c.unit else ""
                h.append(
                    f"<tr class='{_band(c.ratio)}'><td>{html.escape(c.metric)}</td>"
                    f"<td class=num>{_fmt(c.published)}{html.escape(unit)}</td>"
                    f"<td class=num>{_fmt(c.simulated)}{html.escape(unit)}</td>"
                    f"<td class='num ratio'>{c.ratio:.3f}</td><td>{c.role}</td><td>{html.escape(c.note)}</td></tr>"
                )
                md.append(
                    f"| {c.metric} | {_fmt(c.published)}{unit} | {_fmt(c.simulated)}{unit} | {c.ratio:.3f} "
                    f"| {c.role} | {c.note} |"
                )
            h.append("</table><div class='figs'>")
        md.append("")
        for fig in s.get("figures", []):
            if fig.endswith(".png"):
                h.append(f"<img src='../{html.escape(name)}/{html.escape(fig)}' alt='{html.escape(fig)}'>")
                md.append(f"![{fig}](../{name}/{fig})")
        h.append("</div>")
        for fname, text in _scenarios(name):
            h.append(f"<p class='meta'>scenario <code>{html.escape(fname)}</code></p><pre>{html.escape(text)}</pre>")
        md.append("")
    h.append("</body></html>")
    html_path = rep / "index.html"
    _atomic_write(html_path, lambda f: f.write("\n".join(h)))
    _atomic_write(rep / "README.md", lambda f: f.write("\n".join(md) + "\n"))
    _atomic_write(rep / "summary.json", lambda f: f.write(json.dumps(counts, indent=2) + "\n"))
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
        "grid it ran (full or quick) — wall times of resumed runs count only the new points.",
        "The figures are in `results/report/index.html`.",
        "",
    ]
    _atomic_write(Path(doc), lambda f: f.write("\n".join(head + body) + "\n"))
