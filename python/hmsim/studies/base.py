"""What a study is, how it compares itself to published numbers, and how it is written."""

from __future__ import annotations

import contextvars
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from hmsim import host
from hmsim.progress import make_console
from hmsim.references import get as get_reference
from hmsim.replicates import scenario_seed
from hmsim.results import MEASURED_STUDY_COLUMNS, write_csv, write_json
from hmsim.sweep import Point

Overrides = Mapping[str, Any] | Iterable[tuple[str, Any]]

#: What a study with replicates writes beside its own files.
REPLICATE_FILES = ("comparison_replicates.csv", "tables_replicates.csv")

#: Added to every study point's seed: a replicate of a study (`Study.run(replicates=N)`)
#: is the same grid at seeds shifted by 1 … N − 1.
SEED_SHIFT: contextvars.ContextVar[int] = contextvars.ContextVar("hmsim_seed_shift", default=0)


def _pairs(overrides: Overrides, keyed: Mapping[str, Any]) -> list[tuple[str, Any]]:
    pairs = list(overrides.items() if isinstance(overrides, Mapping) else overrides)
    return pairs + [(k.replace("__", "."), v) for k, v in keyed.items()]


@dataclass(frozen=True)
class StudyScenario:
    """A study's base scenario (a TOML file under `studies/scenarios/`) and the one way a study
    makes its points from it: settings are Python values at dotted key paths (or keywords
    with `__` for `.`), applied as `--set` would, in order; a study never edits scenario
    text. `label` names the column that a plain string label fills."""

    text: str
    file: str
    label: str = "experiment"
    base: tuple[tuple[str, str], ...] = ()

    @classmethod
    def shipped(cls, name: str, label: str = "experiment") -> StudyScenario:
        f = resources.files("hmsim.studies").joinpath(f"scenarios/{name}")
        return cls(f.read_text(), str(f), label)

    def but(self, overrides: Overrides = (), **keyed: Any) -> StudyScenario:
        """The same scenario with these settings first in every point (a setup variant)."""
        from hmsim.scenario import toml_value

        more = tuple((k, toml_value(v, k)) for k, v in _pairs(overrides, keyed))
        return StudyScenario(self.text, self.file, self.label, self.base + more)

    def point(self, labels: str | Mapping[str, Any], overrides: Overrides = (), **keyed: Any) -> Point:
        """One point: `labels` become its columns in the results (a string: the `label`
        column); the settings follow the variant's own."""
        from hmsim.scenario import toml_value

        cols = {self.label: labels} if isinstance(labels, str) else dict(labels)
        ov = self.base + tuple((k, toml_value(v, k)) for k, v in _pairs(overrides, keyed))
        shift = SEED_SHIFT.get()
        if shift:
            seed = int(dict(ov).get("seed", scenario_seed(self.text)))
            ov = (*ov, ("seed", str(seed + shift)))
        return Point(text=self.text, file=self.file, overrides=ov, labels=tuple(cols.items()))


@dataclass
class Published:
    """One published number beside what the simulator produced."""

    metric: str
    published: float
    simulated: float
    unit: str = ""
    # "validation": nothing was fitted to it; "calibration": the number set a parameter
    # (agreement is a consistency check); "input": a number of the study's setup copied
    # into the model (a capacity, a link speed), echoed back: not a result, never counted.
    role: str = "validation"
    note: str = ""
    # Key of the paper it comes from (hmsim.references); empty: the study's own source.
    source: str = ""
    # Where in that paper (table, figure or experiment), when known.
    where: str = ""


ROLES = ("validation", "calibration", "input")


def comparison_frame(items: list[Published]) -> pd.DataFrame:
    for i in items:
        if i.role not in ROLES:
            raise ValueError(f"{i.metric!r}: role {i.role!r} is not one of {', '.join(ROLES)}")
        if i.source:
            get_reference(i.source)
    df = pd.DataFrame([vars(i) for i in items])
    if df.empty:
        return df
    df["ratio"] = df["simulated"] / df["published"]
    err = (df["ratio"] - 1.0).abs()
    df["within_10pct"] = err <= 0.10
    df["within_15pct"] = err <= 0.15
    df["within_25pct"] = err <= 0.25
    return df


def print_comparison(df: pd.DataFrame, title: str, console: Console | None = None) -> None:
    console = console or make_console()
    t = Table(title=title, title_justify="left")
    for col, just in [
        ("metric", "left"),
        ("published", "right"),
        ("simulated", "right"),
        ("ratio", "right"),
        ("role", "left"),
    ]:
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in df.itertuples():
        t.add_row(
            r.metric,
            f"{r.published:.4g} {r.unit}".strip(),
            f"{r.simulated:.4g} {r.unit}".strip(),
            f"{r.ratio:.3f}",
            r.role,
        )
    console.print(t)


@dataclass
class StudyResult:
    name: str
    results: pd.DataFrame
    tables: dict[str, pd.DataFrame]
    comparison: pd.DataFrame
    summary: dict
    figures: list[Path] = field(default_factory=list)


@dataclass
class Study:
    name: str
    title: str
    # run(out_dir, quick, workers) -> (results, tables, comparison items, extra summary, figures)
    body: Callable[..., StudyResult]
    # Key of the study's source paper (hmsim.references): the source of every published
    # number that does not name its own.
    source: str = ""
    # The kinds of point warning the study's design produces on purpose, each a regular
    # expression searched in the warning and why the design expects it: a study run prints
    # them as expected notes with their count, and any other as a warning (summary.json
    # keeps every one in `point_warnings`, the expected kinds' counts in
    # `point_warnings_expected`).
    expected_warnings: tuple[tuple[str, str], ...] = ()

    def sort_point_warnings(self, warnings: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
        """`warnings` as (each expected kind with its count, in `expected_warnings`' order;
        the rest, unexpected, in order)."""
        counts = [0] * len(self.expected_warnings)
        unexpected = []
        for w in warnings:
            k = next((i for i, (rx, _) in enumerate(self.expected_warnings) if re.search(rx, w)), None)
            if k is None:
                unexpected.append(w)
            else:
                counts[k] += 1
        kinds = [
            {"pattern": rx, "why": why, "count": n}
            for (rx, why), n in zip(self.expected_warnings, counts, strict=True)
            if n
        ]
        return kinds, unexpected

    def run(
        self, out: Path, quick: bool = True, workers: int | None = None, echo: bool = True, replicates: int = 1
    ) -> StudyResult:
        """The study into `out`; with `replicates` ≥ 2 also its grid at the N − 1 next seeds,
        each into `out/replicates/seed+K/`, and what the seed moves in its comparison
        (`comparison_replicates.csv`, summary.json's `replicates`, warnings)."""
        from hmsim import __version__
        from hmsim.plotting import FORMATS, QUICK_FORMATS, chosen_formats, figure_formats, figures_in_background
        from hmsim.sweep import points_ledger, turn_released

        out = Path(out)
        start = time.perf_counter()
        before = _previous_summary(out / "summary.json")
        formats = chosen_formats() or (QUICK_FORMATS if quick else FORMATS)
        with points_ledger() as ledger, figure_formats(formats), figures_in_background(turn_released):
            res = self.body(out, quick=quick, workers=workers)
        if len(res.comparison) and self.source:
            res.comparison["source"] = res.comparison["source"].replace("", self.source)
        if SEED_SHIFT.get() and "seed" in res.summary:
            res.summary["seed"] += SEED_SHIFT.get()
        write_csv(out / "results.csv", res.results)
        for name, table in res.tables.items():
            write_csv(out / f"{name}.csv", table)
        # No published numbers on this grid: no comparison file (an empty one reads as a
        # comparison that found nothing); a stale one from an earlier run goes too.
        if len(res.comparison):
            write_csv(out / "comparison.csv", res.comparison)
        else:
            (out / "comparison.csv").unlink(missing_ok=True)
        res.summary = {
            "study": self.name,
            "title": self.title,
            "source": self.source,
            "hmsim_version": __version__,
            "quick": quick,
            **_wall_times(time.perf_counter() - start, ledger, before, quick),
            "figures_cpu_time_s": _figures_cpu_s(res.figures),
            # What the points' own runs said about trusting them (`hmsim run` prints these).
            "point_warnings": ledger["warnings"],
            "point_warnings_expected": self.sort_point_warnings(ledger["warnings"])[0],
            **res.summary,
            "comparison": res.comparison.to_dict(orient="records"),
            "figures": [str(p.relative_to(out)) for p in res.figures],
        }
        if replicates > 1:
            self._replicates(res, out, quick, workers, replicates)
        else:
            # An earlier run's replicate tables would read as this run's.
            for stale in REPLICATE_FILES:
                (out / stale).unlink(missing_ok=True)
        write_json(out / "summary.json", res.summary)
        if echo:
            self.echo(res)
        return res

    def _replicates(self, res: StudyResult, out: Path, quick: bool, workers: int | None, n: int) -> None:
        """The grid again at the next n − 1 seeds, and their comparisons set beside this one's."""
        from hmsim.replicates import compare_seeds, tables_across_seeds
        from hmsim.sweep import cpu_sum

        start = time.perf_counter()
        runs = [res]
        for k in range(1, n):
            token = SEED_SHIFT.set(SEED_SHIFT.get() + k)
            try:
                runs.append(self.run(out / "replicates" / f"seed+{k}", quick=quick, workers=workers, echo=False))
            finally:
                SEED_SHIFT.reset(token)
        base = int(res.summary.get("seed", 1))
        seeds = [base + k for k in range(n)]
        info: dict[str, Any] = {"count": n, "seeds": seeds, "compared": 0}
        warnings: list[str] = []
        compared = compare_seeds([r.comparison for r in runs], seeds)
        if compared is not None and len(compared.table):
            write_csv(out / REPLICATE_FILES[0], compared.table)
            info |= compared.info
            warnings += compared.warnings
        per_seed = [{"results": r.results, **r.tables} for r in runs]
        tables = tables_across_seeds(per_seed, warn=list(res.tables), host_timed=MEASURED_STUDY_COLUMNS)
        if tables is not None:
            write_csv(out / REPLICATE_FILES[1], tables.table)
            info |= tables.info
            warnings += tables.warnings
        # What the other seeds' runs took, for `hmsim reproduce`'s times.
        info["wall_time_s"] = time.perf_counter() - start
        info["points_cpu_time_s"] = cpu_sum([r.summary.get("points_cpu_time_s") for r in runs[1:]])
        info["figures_cpu_time_s"] = sum(float(r.summary.get("figures_cpu_time_s") or 0.0) for r in runs[1:])
        res.summary["replicates"] = info
        res.summary["warnings"] = [*warnings, *res.summary.get("warnings", [])]

    def echo(self, res: StudyResult) -> None:
        """Print the study's numbers beside the published ones, then its warnings."""
        if not res.comparison.empty:
            print_comparison(res.comparison, f"{self.name}: simulated vs published")
        rep = res.summary.get("replicates")
        if rep and rep.get("compared"):
            seeds = f"over {rep['count']} seeds ({rep['seeds'][0]}–{rep['seeds'][-1]})"
            widest = (
                f"the compared numbers' widest 95 % interval is ±{rep['ci95_rel_max']:.1%} "
                f"({rep['ci95_rel_max_metric']})"
                if rep["ci95_rel_max"] > 0
                else "the seed moves none of the compared numbers"
            )
            print(
                f"{self.name}: {seeds} {widest}; {rep['verdict_changes']} of {rep['compared']} change their "
                "within-10 % verdict with the seed (comparison_replicates.csv)"
            )
        # How far to trust the study's numbers (e.g. rows whose window is not steady): after
        # them on stdout, as `hmsim run` prints a run's, and in summary.json.
        for w in res.summary.get("warnings", []):
            print(f"warning: {self.name}: {w}")
        # The points' run warnings: the kinds the study's design expects as notes with their
        # count; any other as a warning, how many, and the first, with where the rest are.
        kinds, unexpected = self.sort_point_warnings(res.summary.get("point_warnings", []))
        for k in kinds:
            print(f"{self.name}: {k['count']} point note(s) of a kind the study expects: {k['why']}")
        if unexpected:
            expected = sum(k["count"] for k in kinds)
            also = f" (and {expected} expected, above)" if expected else ""
            print(
                f"warning: {self.name}: {len(unexpected)} warning(s) from its points' runs{also} "
                f"(summary.json: point_warnings); the first: {unexpected[0]}"
            )


def _previous_summary(path: Path) -> dict:
    """The summary.json an earlier run left (empty if none or unreadable)."""
    import json

    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _wall_times(elapsed: float, ledger: dict, before: dict, quick: bool) -> dict:
    """A resumed run's wall time counts only what it ran: beside it, the real time of every
    completed run that made these results (this one plus the earlier ones whose points it
    reused; a run interrupted before its summary was written is not known) and the points'
    own run times summed over all of them (new and reused, on however many workers)."""
    reused = ledger["reused"] > 0 and before.get("quick") == quick
    earlier = float(before.get("wall_time_total_s", before.get("wall_time_s", 0.0)) or 0.0) if reused else 0.0
    runs = int(before.get("runs", 1)) + 1 if reused else 1
    return {
        "wall_time_s": elapsed,
        "wall_time_total_s": elapsed + earlier,
        "runs": runs,
        "points_ran": ledger["ran"],
        "points_reused": ledger["reused"],
        # Of the points run, those that took another's run (the same simulation, labelled
        # differently): `points_ran - points_shared` simulations ran.
        "points_shared": ledger["shared"],
        "points_wall_time_s": ledger["points_wall_time_s"],
        # Their CPU time (their threads', wherever they ran), which other work sharing the
        # cores does not inflate as it does the wall time; None if a reused point's saved
        # output has none.
        "points_cpu_time_s": ledger["points_cpu_time_s"],
        # The machine these times were measured on (the same build's times differ by
        # machine: docs/performance.md).
        "host": host.describe(),
        # How fast that machine ran when the reproduction began (None outside one).
        "host_gauge_at_start": host.START_GAUGE.get(),
    }


def _figures_cpu_s(figures: list[Path]) -> float:
    """The CPU seconds this run spent drawing the study's figures (their layout and every
    format's file, in whichever process drew them; `hmsim.plotting.DRAWN`)."""
    from hmsim.plotting import DRAWN

    # A figure's files are `DRAWN`'s key (its folder and name) with each format's suffix.
    stems = {str(Path(f).with_suffix("")) for f in figures}
    return sum(float(DRAWN.get(s, {}).get("cpu_time_s") or 0.0) for s in stems)


_REGISTRY: dict[str, Study] = {}


def register(study: Study) -> Study:
    _REGISTRY[study.name] = study
    return study


def registry() -> dict[str, Study]:
    return dict(_REGISTRY)
