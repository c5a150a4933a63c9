"""Study `tiering`: HeMem, TPP and MEMTIS with and without Colloid, and the best case, under
memory contention (Vuppalapati & Agarwal, ACM SOSP 2024; docs/tiering.md): figures 1-6."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm

from hmsim import _core
from hmsim.plotting import color_for, declare_series, house_style, marker_for, outside_legend, save_figure
from hmsim.studies import tiering_pmem
from hmsim.studies.base import Published, Study, StudyResult, StudyScenario, comparison_frame, register
from hmsim.sweep import Point, run_points

SYSTEMS = {  # policy name -> (system, colloid)
    "static-default": ("static", False),
    "static-alternate": ("static-alternate", False),
    "hemem": ("hemem", False),
    "colloid-hemem": ("hemem", True),
    "tpp": ("tpp", False),
    "colloid-tpp": ("tpp", True),
    "memtis": ("memtis", False),
    "colloid-memtis": ("memtis", True),
    "best": ("best", False),
}
PAIRS = (("hemem", "colloid-hemem"), ("tpp", "colloid-tpp"), ("memtis", "colloid-memtis"))


# Quick mode's TPP setup, scaled down: the tiers, the working set and the hot set at 1/8 of the
# Colloid setup's sizes and GUPS on 2 cores instead of 15, with 4 KiB pages. Each page then sees
# about the access rate it sees at full size (2/15 of the accesses over 1/8 of the pages), so
# kswapd's accessed-bit test finds cold pages as it does at full size; with 15 cores every page
# of the small setup is touched between two kswapd visits and TPP would stay at first touch.
QUICK_TPP_SCALE = 0.125
QUICK_TPP_CORES = 2


QUICK_TPP_S = 30.0
QUICK_UNTIL_STEADY = tiering_pmem.QUICK_UNTIL_STEADY  # quick 2 MiB runs go on until steady (tiering_pmem says why)


def _quick_tpp(policy: str, quick: bool) -> bool:
    return quick and policy.endswith("tpp")


# Experiments whose quick TPP points run in the scaled-down setup (`_setup_for`, fig. 4's runs).
SCALED_EXPERIMENTS = ("contention", "alt_latency", "object_size", "converge_hot_move", "converge_contention")
SCALED_NOTE = (
    f"[scaled]: quick grid, TPP at 1/{round(1 / QUICK_TPP_SCALE)} size with GUPS on {QUICK_TPP_CORES} cores "
    "instead of 15 (docs/tiering.md): its values are not on the full-size runs' scale"
)


def scaled_down(df: pd.DataFrame, quick: bool) -> pd.Series:
    """Rows (of the results or the timeline) from the scaled-down quick TPP setup: no column
    says so, the run's grid does (`_setup_for`, `_quick_tpp_overrides`)."""
    exp = df["experiment"] if "experiment" in df.columns else df["scenario"]
    return pd.Series(quick, index=df.index) & (df["system"] == "tpp") & exp.isin(SCALED_EXPERIMENTS)


def series_labels(df: pd.DataFrame, quick: bool) -> list[str]:
    """ "system[ + colloid][ [scaled]]" per row: the series name every tiering figure uses."""
    scaled = scaled_down(df, quick)
    return [
        f"{s}{' + colloid' if c else ''}{' [scaled]' if z else ''}"
        for s, c, z in zip(df.system, df.colloid, scaled, strict=True)
    ]


# A line figure's point resting on a run not steady takes a dagger (fig. 1 draws the published
# gains as stars); a heatmap cell takes a star.
UNSTEADY_MARK = "\u2020"


def _footnote(fig: plt.Figure, text: str, line: int = 0) -> None:
    """`text` below the figure, on footnote line `line` (0: the first; lines 0.16 in apart)."""
    fig.text(0.01, -0.02 - line * 0.16 / fig.get_figheight(), text, fontsize=7, ha="left", va="top", color="#444444")


def _mark_unsteady(ax: plt.Axes, x, y, unsteady, color) -> bool:
    """A dagger beside each point of (`x`, `y`) that rests on a run not steady; whether any."""
    marked = False
    for xi, yi, bad in zip(x, y, unsteady, strict=True):
        if bad and np.isfinite(yi):
            ax.annotate(UNSTEADY_MARK, (xi, yi), xytext=(4, 3), textcoords="offset points", fontsize=9, color=color)
            marked = True
    return marked


def _unsteady_note(fig: plt.Figure, labels, mark: str) -> None:
    """The footnote that explains `mark` (points resting on a run not steady), below the
    "[scaled]" one if the figure has it."""
    text = f"{mark}: rests on a run whose measured window is not steady (results.csv: converged = false)"
    _footnote(fig, text, line=int(any(str(lab).endswith("[scaled]") for lab in labels)))


def _scaled_note(fig: plt.Figure, labels) -> None:
    """The footnote that explains "[scaled]", on a figure that shows such a series."""
    if any(str(lab).endswith("[scaled]") for lab in labels):
        _footnote(fig, SCALED_NOTE)


def _quick_tpp_overrides() -> dict:
    return {
        "workload__cores": QUICK_TPP_CORES,
        "workload__working_set_bytes": int((72 << 30) * QUICK_TPP_SCALE),
        "workload__hot_set_bytes": int((24 << 30) * QUICK_TPP_SCALE),
        "sim__page_bytes": 4096,
    }


def _system_overrides(policy: str, quick: bool) -> dict:
    """Run length and page size per system (Colloid setup: HeMem 100 s, TPP 600 s, MEMTIS 180 s,
    averaged over the last 30 s). Quick mode shortens them; its TPP runs with 4 KiB pages in
    the scaled-down setup (`QUICK_TPP_SCALE`, docs/tiering.md): 4 KiB TPP needs ~120
    simulated s (~12 CPU s) to settle at full size."""
    if policy.endswith("tpp"):
        if quick:
            return {"sim__duration_s": QUICK_TPP_S, "sim__measure_last_s": 5.0, **_quick_tpp_overrides()}
        return {"sim__duration_s": 600.0, "sim__measure_last_s": 30.0, "sim__page_bytes": 4096}
    if policy.endswith("memtis"):
        return {"sim__duration_s": 20.0 if quick else 180.0, "sim__measure_last_s": 5.0 if quick else 30.0}
    return {"sim__duration_s": 15.0 if quick else 100.0, "sim__measure_last_s": 5.0 if quick else 30.0}


# Quick figure 1 (the published comparison) runs each system long enough to settle, so the quick
# grid draws the full grid's conclusions (docs/tiering.md, *Quick and full grids*): HeMem's hot
# set is promoted by 30 s, MEMTIS's kernel thread needs ~60 s at 3x, and the scaled-down TPP
# gives the full grid's 3x gain after 60 s. The other quick experiments keep the shorter runs of
# `_system_overrides` (their rows say when they are not steady).
QUICK_FIG1_S = {"hemem": 30.0, "memtis": 60.0, "tpp": 60.0}


def _fig1_overrides(policy: str, quick: bool) -> dict:
    ov = _system_overrides(policy, quick)
    base = policy.removeprefix("colloid-")
    if quick and base in QUICK_FIG1_S:
        ov = {**ov, "sim__duration_s": QUICK_FIG1_S[base]}
    return ov


ALT_LATENCIES_NS = [135.0, 148.0, 168.0, 192.0]
OBJECT_SIZES = [64, 256, 1024, 4096]


# Fig. 6 application analogs (trace-driven mode on generated streams): app -> accesses each
# replayed access stands for, chosen so a 10 ms quantum replays ~10^3 accesses.
APPS = {"cachelib": 100.0, "silo": 400.0, "pagerank": 5000.0}
APP_QUICK_SCALE = 0.125  # quick mode: every app (and its default tier) at 1/8 of the paper's size


def _app_points(sc: StudyScenario, quick: bool) -> list[Point]:
    """Fig. 6: each app under HeMem (2 MiB) and MEMTIS ± Colloid at 0x and 3x contention;
    quick mode runs HeMem ± Colloid only, at 1/8 size, for 10 s and on until steady."""
    pols = PAIRS[0] if quick else PAIRS[0] + PAIRS[2]
    dur = {"sim__duration_s": 10.0 if quick else 60.0, "sim__measure_last_s": 3.0 if quick else 20.0}
    dur |= QUICK_UNTIL_STEADY if quick else {}
    pts = []
    for app, weight in APPS.items():
        for policy in pols:
            for i in (0, 3):
                pts.append(
                    _pt(
                        sc,
                        f"app_{app}",
                        policy,
                        i,
                        workload__app=app,
                        workload__scale=APP_QUICK_SCALE if quick else 1.0,
                        workload__access_weight=weight,
                        **dur,
                    )
                )
    return pts


def _tiers(ns: float | None = None, scale: float = 1.0) -> list[dict]:
    """The reference tiers with the alternate tier's unloaded latency `ns` and capacities × `scale`."""
    tiers = json.loads(_core.tier_reference_tiers())
    if ns is not None:
        tiers[1]["unloaded_latency_ns"] = ns
    for t in tiers:
        t["capacity_bytes"] = int(t["capacity_bytes"] * scale)
    return tiers


def _setup_for(sc: StudyScenario, policy: str, quick: bool, ns: float | None = None) -> StudyScenario:
    """The scenario of a run: quick TPP gets the scaled-down tiers."""
    if _quick_tpp(policy, quick):
        return sc.but(tiers=_tiers(ns, QUICK_TPP_SCALE))
    return sc if ns is None else sc.but(tiers=_tiers(ns))


def _converge_after_s(policy: str, quick: bool) -> float:
    """Fig. 4: simulated time after the event. TPP's scan passes over the full-size working
    set every ~30 s, and after the hot set moves it needs ~100 s to settle again."""
    if quick:
        return 20.0
    return 150.0 if policy.endswith("tpp") else 60.0


def _heatmap_overrides(policy: str, quick: bool) -> dict:
    """Fig. 3 run lengths: HeMem 40 s (quick 15 s, on until steady); MEMTIS as in fig. 1 (quick:
    on until steady); TPP with 4 KiB pages
    for 150 s averaged over the last 30 s, run on until steady (quick: the scaled-down setup
    as in fig. 1). Colloid-TPP and TPP at low contention settle within 150 s; TPP at 2-3x, or
    with objects of 256 B and more, is still losing 2-4 % across its window there, 15-30 %
    above where it settles by 300 s, so those runs go on to 300 s (`sim.until_steady`, which
    continues a run rather than starting it again). 64 points of 600 s (fig. 1's length)
    would take four times as long."""
    if policy.endswith("memtis"):
        return _system_overrides(policy, quick) | (QUICK_UNTIL_STEADY if quick else {})
    if policy.endswith("tpp"):
        if quick:
            return _system_overrides(policy, quick)
        return {
            "sim__duration_s": 150.0,
            "sim__measure_last_s": 30.0,
            "sim__page_bytes": 4096,
            "sim__until_steady": True,
        }
    if quick:
        return {"sim__duration_s": 15.0, "sim__measure_last_s": 5.0, **QUICK_UNTIL_STEADY}
    return {"sim__duration_s": 40.0, "sim__measure_last_s": 10.0}


def _pt(sc: StudyScenario, exp: str, policy: str, intensity: int, **ov) -> Point:
    system, colloid = SYSTEMS[policy]
    run = {"policy.names": [policy], "antagonist.intensities": [intensity]}
    return sc.point({"experiment": exp, "system": system, "colloid": colloid}, run, **ov)


PLACEMENT_SHARES = [k / 10 for k in range(11)]


def _placement_points(sc: StudyScenario) -> list[Point]:
    """Fig. 7: static placements with 0-100 % of the hot set in the alternate tier at each
    intensity (first touch fills the default tier from the start of the buffer, so the hot
    set's offset sets how much of it lands there). Static runs are steady from the start."""
    tiers = json.loads(_core.tier_reference_tiers())
    page = 2 << 20
    default_pages = tiers[0]["capacity_bytes"] // page
    hot_pages = (24 << 30) // page
    pts = []
    for i in range(4):
        for alt_share in PLACEMENT_SHARES:
            offset = default_pages - round((1.0 - alt_share) * hot_pages)
            ov = {"workload__hot_offset_bytes": offset * page, "sim__duration_s": 1.0, "sim__measure_last_s": 0.5}
            pts.append(_pt(sc, "placement", "static-default", i, **ov))
    return pts


def build_points(quick: bool) -> list[Point]:
    sc = StudyScenario.shipped("tiering.toml")
    dur = {"sim__duration_s": 15.0 if quick else 40.0, "sim__measure_last_s": 5.0 if quick else 10.0}
    pts: list[Point] = _placement_points(sc)
    for i in range(4):  # the contention model's calibration: hot set placed in the default tier
        pts.append(_pt(sc, "calibration", "static-default", i, workload__hot_offset_bytes=0, **dur))
    for policy in SYSTEMS:
        for i in range(4):
            ov = _fig1_overrides(policy, quick)
            pts.append(_pt(_setup_for(sc, policy, quick), "contention", policy, i, **ov))
    if quick:
        # Fig. 1's share of the best case for the scaled-down quick TPP: the best case in that
        # setup. Its placements are static, so steady from the start (as fig. 7's).
        for i in (0, 3):
            ov = {**_quick_tpp_overrides(), "sim__duration_s": 2.0, "sim__measure_last_s": 1.0}
            pts.append(_pt(_setup_for(sc, "tpp", quick), "scaled_best", "best", i, **ov))
    lat = [135.0, 192.0] if quick else ALT_LATENCIES_NS
    sizes = [64, 4096] if quick else OBJECT_SIZES
    intens = [0, 3] if quick else [0, 1, 2, 3]
    # Fig. 3: Colloid's gain over each base system (Colloid setup), HeMem, TPP and MEMTIS.
    for policy in (p for pair in PAIRS for p in pair):
        hd = _heatmap_overrides(policy, quick)
        for i in intens:
            for ns in lat:
                pts.append(_pt(_setup_for(sc, policy, quick, ns), "alt_latency", policy, i, **hd))
            for size in sizes:
                t = _setup_for(sc, policy, quick)
                pts.append(_pt(t, "object_size", policy, i, workload__object_size_bytes=size, **hd))
    pts += _app_points(sc, quick)
    pts += tiering_pmem.points(_pt, sc, quick)
    move = 10.0 if quick else 100.0
    for policy in (p for pair in PAIRS for p in pair):
        run = {
            "sim__duration_s": move + _converge_after_s(policy, quick),
            "sim__measure_last_s": 5.0,
            "sim__timeline": True,
        }
        if policy.endswith("tpp"):
            run["sim__page_bytes"] = 4096  # THP stays at first touch (docs/tiering.md)
            if quick:
                run.update(_quick_tpp_overrides())
        t = _setup_for(sc, policy, quick)
        pts.append(_pt(t, "converge_hot_move", policy, 0, workload__hot_move_s=move, **run))
        pts.append(
            _pt(
                t,
                "converge_contention",
                policy,
                0,
                antagonist__change_s=move,
                antagonist__change_to_intensity=3,
                **run,
            )
        )
    return pts


def colloid_gain(df: pd.DataFrame, experiment: str, system: str, col: str) -> pd.DataFrame:
    """Fig. 3: Colloid's throughput over its base system's, intensity x `col`."""
    d = df[(df.experiment == experiment) & (df.system == system)]
    base = d[~d.colloid.astype(bool)].set_index(["intensity", col]).throughput_gb_s
    coll = d[d.colloid.astype(bool)].set_index(["intensity", col]).throughput_gb_s
    return (coll / base).unstack(col)


def colloid_gain_unsteady(df: pd.DataFrame, experiment: str, system: str, col: str) -> pd.DataFrame:
    """The cells of `colloid_gain` that rest on a run (with or without Colloid) whose measured
    window is not steady."""
    d = df[(df.experiment == experiment) & (df.system == system)]
    return (~d.converged.astype(bool)).groupby([d.intensity, d[col]]).any().unstack(col)


def _smoothed(tl: pd.DataFrame, window_s: float) -> pd.Series:
    """Throughput averaged over a centred `window_s` window: periodic migration dips (HeMem's
    10 ms thread, MEMTIS's 500 ms batches) do not read as leaving the steady state."""
    dt = float(tl.time_s.diff().median()) if len(tl) > 1 else window_s
    w = max(1, round(window_s / dt)) if dt > 0 else 1
    return tl.throughput_gb_s.rolling(w, center=True, min_periods=1).mean()


def convergence(tl: pd.DataFrame, event_s: float, band: float = 0.05, window_s: float = 1.0) -> tuple[float, float]:
    """(first entry, settle) times after `event_s`: when the smoothed throughput first comes
    within `band` of the new steady state (the mean of the last 5 s), and from when it stays
    there to the end of the run."""
    tl = tl.sort_values("time_s").reset_index(drop=True)
    smooth = _smoothed(tl, window_s)
    final = tl[tl.time_s >= tl.time_s.max() - 5.0].throughput_gb_s.mean()
    after = tl.time_s >= event_s
    inside = ((smooth - final).abs() <= band * final) & after
    if not inside.any():  # never settled within the run: report the whole time after the event
        span = float(tl.time_s.max() - event_s)
        return span, span
    first = float(tl.time_s[inside].iloc[0] - event_s)
    outside = tl.time_s[after & ~inside]
    settle = 0.0 if outside.empty else float(outside.max() - event_s + (tl.time_s.diff().median() or 0.0))
    return first, max(first, settle)


def convergence_time_s(tl: pd.DataFrame, event_s: float, band: float = 0.05) -> float:
    """Time after `event_s` from which the smoothed throughput stays within `band` of its
    final level (see `convergence`)."""
    return convergence(tl, event_s, band)[1]


# The experiment of the study the calibration numbers come from.
CALIB = "GUPS with antagonists, hot set in the default tier"


# Fig. 1's published results (validation: the model was built without them): Colloid's gain over
# each base system at 3x and at 0x, and its throughput as a share of the best case at 3x.
FIG1_GAIN_3X = {"hemem": 2.3, "tpp": 2.35, "memtis": 2.3}
FIG1_GAIN_0X = 1.0
FIG1_SHARE_OF_BEST_3X = {"hemem": 0.97, "tpp": 0.92, "memtis": 0.87}
FIG1 = "Fig. 1 (GUPS, throughput vs contention)"


def _row(df: pd.DataFrame, experiment: str, system: str, colloid: bool, intensity: int) -> pd.DataFrame:
    s = df[(df.experiment == experiment) & (df.system == system) & (df.colloid == colloid)]
    return s[s.intensity == intensity]


def _throughput(df: pd.DataFrame, experiment: str, system: str, colloid: bool, intensity: int) -> float:
    s = _row(df, experiment, system, colloid, intensity)
    return float(s.throughput_gb_s.iloc[0]) if len(s) else float("nan")


def _unsteady(df: pd.DataFrame, rows: list[tuple[str, str, bool, int]]) -> str:
    """ "; rests on rows not steady: ..." for those of `rows` whose measured window is not."""
    bad = [
        f"{system}{' + colloid' if colloid else ''} {i}x"
        for exp, system, colloid, i in rows
        if not _row(df, exp, system, colloid, i).converged.astype(bool).all()
    ]
    return f"; rests on rows not steady: {', '.join(bad)}" if bad else ""


def fig1_items(df: pd.DataFrame, quick: bool) -> list[Published]:
    """Fig. 1's published gains and shares of the best case beside the simulated ones. Quick TPP
    runs in the scaled-down setup, so its share of the best case is taken against the best case
    run in that same setup (experiment `scaled_best`)."""
    items = []
    for system, pub in FIG1_GAIN_3X.items():
        for i, p in ((3, pub), (0, FIG1_GAIN_0X)):
            base = _throughput(df, "contention", system, False, i)
            items.append(
                Published(
                    f"Colloid's gain over {system} at {i}x",
                    p,
                    _throughput(df, "contention", system, True, i) / base,
                    "x",
                    "validation",
                    "not fitted"
                    + (" (quick: scaled-down TPP setup)" if quick and system == "tpp" else "")
                    + _unsteady(df, [("contention", system, c, i) for c in (False, True)]),
                    source="colloid-sosp24",
                    where=FIG1,
                )
            )
    for system, pub in FIG1_SHARE_OF_BEST_3X.items():
        scaled = _quick_tpp(system, quick)
        best = _throughput(df, "scaled_best" if scaled else "contention", "best", False, 3)
        items.append(
            Published(
                f"{system} + colloid as a share of the best case at 3x",
                pub,
                _throughput(df, "contention", system, True, 3) / best,
                "",
                "validation",
                f"published: within {round((1 - pub) * 100)} % of the best case"
                + ("; quick: both in the scaled-down TPP setup" if scaled else "")
                + _unsteady(
                    df, [("contention", system, True, 3), ("scaled_best" if scaled else "contention", "best", False, 3)]
                ),
                source="colloid-sosp24",
                where=FIG1,
            )
        )
    return items


def compare(df: pd.DataFrame, quick: bool = False) -> list[Published]:
    c = df[df.experiment == "calibration"].set_index("intensity")
    items = [
        Published(
            "GUPS throughput at 0x, hot set in default tier",
            79.0,
            c.loc[0, "throughput_gb_s"],
            "GB/s",
            "calibration",
            "published 78-80",
            source="colloid-sosp24",
            where=CALIB,
        )
    ]
    for i, pub in ((1, 175.0), (2, 266.0), (3, 350.0)):
        items.append(
            Published(
                f"default-tier loaded latency at {i}x (hot set in default)",
                pub,
                c.loc[i, "default_latency_ns"],
                "ns",
                "calibration",
                source="colloid-sosp24",
                where=CALIB,
            )
        )
    items.append(
        Published(
            "alternate-tier latency at 3x (hot set in default)",
            146.0,
            c.loc[3, "alternate_latency_ns"],
            "ns",
            "validation",
            "not fitted: the UPI and remote DRAM run at a few % load here, near unloaded",
            source="colloid-sosp24",
            where=CALIB,
        )
    )
    return items + fig1_items(df, quick)


PUBLISHED_LABEL = "published (Colloid paper)"


def _fig1_gain_panel(
    ax: plt.Axes, cont: pd.DataFrame, colors: dict, markers: dict, line: dict
) -> tuple[list[str], bool]:
    """Fig. 1's right panel: Colloid's gain over each base system vs contention, with the
    published gains at 0x and 3x overlaid (open stars). Returns the series it drew, and
    whether it marked a gain resting on a run not steady."""
    drawn = []
    marked = False
    for k, system in enumerate(FIG1_GAIN_3X):
        base = cont[(cont.system == system) & ~cont.colloid.astype(bool)].set_index("intensity")
        coll = cont[(cont.system == system) & cont.colloid.astype(bool)].set_index("intensity")
        if base.empty or coll.empty:
            continue
        gain = (coll.throughput_gb_s / base.throughput_gb_s).dropna().sort_index()
        lab = f"{coll.label.iloc[0]} / {base.label.iloc[0]}"
        ax.plot(
            gain.index,
            gain.values,
            marker=markers[coll.label.iloc[0]],
            color=colors[coll.label.iloc[0]],
            label=lab,
            **line[coll.label.iloc[0]],
        )
        steady = base.converged.astype(bool) & coll.converged.astype(bool)
        bad = ~steady.reindex(gain.index, fill_value=True)
        marked |= _mark_unsteady(ax, gain.index, gain.values, bad, colors[coll.label.iloc[0]])
        dx = (k - 1) * 0.08  # equal published gains side by side, not on top of each other
        ax.plot(
            [dx, 3 + dx],
            [FIG1_GAIN_0X, FIG1_GAIN_3X[system]],
            ls="none",
            marker="*",
            ms=12,
            mfc="none",
            color=colors[coll.label.iloc[0]],
        )
        drawn.append(lab)
    ax.plot([], [], ls="none", marker="*", ms=12, mfc="none", color="#444444", label=PUBLISHED_LABEL)
    ax.axhline(1.0, color="#888888", lw=0.8, zorder=0)
    ax.set_xticks(range(4), ["0x", "1x", "2x", "3x"])
    ax.set_xlabel("memory contention (antagonist intensity)")
    ax.set_ylabel("Colloid's gain over its base system (x)")
    ax.set_title("Colloid's gain (published: stars)")
    return [*drawn, PUBLISHED_LABEL], marked


def figures(out: Path, df: pd.DataFrame, timeline: pd.DataFrame, quick: bool = False) -> list[Path]:
    """Figures 1-7; `quick` marks the scaled-down quick TPP series "[scaled]" (`scaled_down`)."""
    paths: list[Path] = []
    cont = df[df.experiment == "contention"]
    names = series_labels(cont, quick)
    cont = cont.assign(label=names)
    labels = list(dict.fromkeys(names))
    colors = color_for(labels)
    markers = marker_for(labels)
    # A scaled-down series: dashed, hollow markers, "[scaled]" in its name and a footnote.
    line = {lab: {"ls": "--", "mfc": "none"} if lab.endswith("[scaled]") else {} for lab in labels}
    with house_style():
        fig, (ax, gx) = plt.subplots(1, 2, figsize=(12.0, 4.0), gridspec_kw={"width_ratios": [3, 2]})
        any_unsteady = False
        for lab in labels:
            s = cont[cont.label == lab].sort_values("intensity")
            ax.plot(s.intensity, s.throughput_gb_s, marker=markers[lab], color=colors[lab], label=lab, **line[lab])
            any_unsteady |= _mark_unsteady(ax, s.intensity, s.throughput_gb_s, ~s.converged.astype(bool), colors[lab])
        ax.set_xticks(range(4), ["0x", "1x", "2x", "3x"])
        ax.set_xlabel("memory contention (antagonist intensity)")
        ax.set_ylabel("GUPS throughput (GB/s)")
        ax.set_title("Fig. 1: throughput vs contention")
        gains, marked = _fig1_gain_panel(gx, cont, colors, markers, line)
        any_unsteady |= marked
        outside_legend(gx)
        # Below the throughput panel: beside it the gain panel would cover it.
        ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.16), ncol=3, borderaxespad=0.0)
        _scaled_note(fig, labels)
        if any_unsteady:
            _unsteady_note(fig, labels, UNSTEADY_MARK)
        declare_series(fig, [*labels, *gains])
        paths += save_figure(fig, out, "fig1_throughput_vs_contention")

        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        any_unsteady = False
        for lab in labels:
            s = cont[cont.label == lab].sort_values("intensity")
            m = markers[lab]
            axes[0].plot(s.intensity, s.default_latency_ns, marker=m, color=colors[lab], label=f"{lab} default")
            axes[0].plot(s.intensity, s.alternate_latency_ns, marker=m, ls="--", color=colors[lab], mfc="none")
            axes[1].plot(s.intensity, s.alt_hot_share, marker=m, color=colors[lab], label=lab, **line[lab])
            bad = ~s.converged.astype(bool)
            for ax, y in ((axes[0], s.default_latency_ns), (axes[0], s.alternate_latency_ns)):
                any_unsteady |= _mark_unsteady(ax, s.intensity, y, bad, colors[lab])
            any_unsteady |= _mark_unsteady(axes[1], s.intensity, s.alt_hot_share, bad, colors[lab])
        axes[0].set_ylabel("loaded latency (ns): default solid, alternate dashed")
        axes[1].set_ylabel("share of hot pages in the alternate tier")
        for ax in axes:
            ax.set_xticks(range(4), ["0x", "1x", "2x", "3x"])
            ax.set_xlabel("contention")
        outside_legend(axes[1])
        _scaled_note(fig, labels)
        if any_unsteady:
            _unsteady_note(fig, labels, UNSTEADY_MARK)
        declare_series(fig, labels)
        paths += save_figure(fig, out, "fig2_latency_and_hot_share")

        heat = df[df.experiment.isin(["alt_latency", "object_size"])]
        systems = [s for s, _ in PAIRS if s in set(heat.system)]
        panels = [
            (system, exp, col, lab, colloid_gain(df, exp, system, col), colloid_gain_unsteady(df, exp, system, col))
            for system in systems
            for exp, col, lab in (
                ("alt_latency", "alt_unloaded_latency_ns", "alternate-tier unloaded latency (ns)"),
                ("object_size", "object_size_bytes", "object size (B)"),
            )
        ]
        # One colour scale for every panel, centred on 1 (no gain): a colour means the same
        # gain everywhere, and gains and losses read apart.
        finite = np.concatenate([p[4].to_numpy(dtype=float).ravel() for p in panels]) if panels else np.ones(1)
        finite = finite[np.isfinite(finite)]
        reach = max(abs(finite.max() - 1.0), abs(1.0 - finite.min()), 0.05) if finite.size else 0.05
        norm = TwoSlopeNorm(vcenter=1.0, vmin=1.0 - reach, vmax=1.0 + reach)
        fig, axes = plt.subplots(len(systems), 2, figsize=(10, 3.4 * len(systems) + 0.6), squeeze=False)
        im = None
        any_unsteady = False
        for ax, (system, _exp, _col, lab, gain, unsteady) in zip(axes.ravel(), panels, strict=True):
            im = ax.imshow(gain.values, cmap="RdBu", norm=norm, origin="lower", aspect="auto")
            ax.set_xticks(range(len(gain.columns)), [f"{v:g}" for v in gain.columns])
            ax.set_yticks(range(len(gain.index)), [f"{i}x" for i in gain.index])
            ax.grid(False)
            flag = unsteady.reindex(index=gain.index, columns=gain.columns).fillna(False).to_numpy(dtype=bool)
            any_unsteady |= bool(flag.any())
            for (r, cidx), v in np.ndenumerate(gain.values):
                # Dark text on pale cells, white on saturated ones; a cell resting on a run
                # that is not steady says so with a star (explained below the figure).
                strong = np.isfinite(v) and abs(v - 1.0) > 0.6 * reach
                star = "*" if flag[r, cidx] else ""
                ax.text(cidx, r, f"{v:.2f}{star}", ha="center", va="center", fontsize=8, color="w" if strong else "k")
            ax.set_xlabel(lab)
            ax.set_ylabel("contention")
            scaled = " [scaled]" if quick and system == "tpp" else ""
            ax.set_title(f"Fig. 3: Colloid on {system}{scaled}", fontsize=9)
        if im is not None:
            fig.colorbar(im, ax=axes.ravel().tolist(), label="Colloid gain (throughput with / without)", shrink=0.8)
        fig.set_layout_engine("constrained")
        panel_names = [f"{system}{' [scaled]' if quick and system == 'tpp' else ''}" for system in systems]
        _scaled_note(fig, panel_names)
        if any_unsteady:
            _unsteady_note(fig, panel_names, "*")
        declare_series(fig, panel_names)
        paths += save_figure(fig, out, "fig3_colloid_gain_heatmaps")

        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
        for ax, scen, title in (
            (axes[0], "converge_hot_move", "hot set moves"),
            (axes[1], "converge_contention", "contention 0x → 3x"),
        ):
            t = timeline[timeline.scenario == scen]
            t = t.assign(label=series_labels(t, quick))
            for lab, g in t.groupby("label", sort=False):
                # A base system wide, its Colloid variant thin on top: where they coincide
                # (Colloid idle at 0x), both stay visible.
                lw = 1.2 if "colloid" in lab else 2.8
                style = {"lw": lw, **line.get(lab, {})}
                style.pop("mfc", None)
                ax.plot(g.time_s, g.throughput_gb_s, label=lab, color=colors.get(lab), **style)
            ax.set_title(f"Fig. 4: {title}")
            ax.set_xlabel("time (s)")
        axes[0].set_ylabel("GUPS throughput (GB/s)")
        outside_legend(axes[1])
        tl_labels = series_labels(timeline, quick) if len(timeline) else []
        _scaled_note(fig, tl_labels)
        declare_series(fig, tl_labels)
        paths += save_figure(fig, out, "fig4_convergence")

        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        pol = cont[~cont.system.isin(["static", "static-alternate", "best"])]
        for ax, col, ylab in (
            (axes[0], "policy_cpu_cores", "policy CPU (cores, modelled costs)"),
            (axes[1], "migrated_gb", "migrated (GB over the run)"),
        ):
            width = 0.8 / 4
            labs = list(dict.fromkeys(pol.label))
            for k, i in enumerate(range(4)):
                v = pol[pol.intensity == i].set_index("label").reindex(labs)[col]
                ax.bar(np.arange(len(labs)) + k * width, v.values, width, label=f"{i}x")
            ax.set_xticks(np.arange(len(labs)) + 1.5 * width, labs, rotation=30, ha="right")
            ax.set_ylabel(ylab)
        axes[0].legend(title="contention")
        axes[0].set_title("Fig. 5: policy CPU overhead")
        axes[1].set_title("migration traffic")
        _scaled_note(fig, pol.label)
        declare_series(fig, [*dict.fromkeys(pol.label), *(f"{i}x" for i in sorted(pol.intensity.unique()))])
        paths += save_figure(fig, out, "fig5_overhead")

        apps = df[df.experiment.str.startswith("app_")]
        if len(apps):
            fig, axes = plt.subplots(1, len(APPS), figsize=(4 * len(APPS), 4))
            for ax, app in zip(np.atleast_1d(axes), APPS, strict=False):
                d = apps[apps.experiment == f"app_{app}"]
                names = zip(d.system, d.colloid, strict=True)
                d = d.assign(label=[f"{s}{' + colloid' if c else ''}" for s, c in names])
                labs = list(dict.fromkeys(d.label))
                ints = sorted(d.intensity.unique())
                width = 0.8 / max(len(labs), 1)
                for k, lab in enumerate(labs):
                    v = d[d.label == lab].set_index("intensity").reindex(ints).throughput_gb_s
                    ax.bar(np.arange(len(ints)) + k * width, v.values, width, label=lab, color=colors.get(lab))
                ax.set_xticks(np.arange(len(ints)) + width * (len(labs) - 1) / 2, [f"{i}x" for i in ints])
                ax.set_xlabel("contention")
                ax.set_title(f"Fig. 6: {app} analog")
            np.atleast_1d(axes)[0].set_ylabel("application throughput (GB/s)")
            np.atleast_1d(axes)[0].legend()
            app_labels = [f"{s}{' + colloid' if c else ''}" for s, c in zip(apps.system, apps.colloid, strict=True)]
            panels = [f"Fig. 6: {a.removeprefix('app_')} analog" for a in dict.fromkeys(apps.experiment)]
            declare_series(fig, [*dict.fromkeys(app_labels), *panels])
            paths += save_figure(fig, out, "fig6_app_analogs")
    paths += tiering_pmem.figure(out, df)
    paths += placement_figure(out, df, quick)
    return paths


def placement_figure(out: Path, df: pd.DataFrame, quick: bool = False) -> list[Path]:
    """Fig. 7 (explains the study): per-tier loaded latency vs the share of the hot set in the
    alternate tier, one panel per intensity, from static placements; each policy's operating
    point on both curves; points at >= 90 % of the tier's tightest resource marked
    with that resource's name."""
    pl = df[df.experiment == "placement"]
    if pl.empty:
        return []
    cont = df[df.experiment == "contention"]
    names = series_labels(cont, quick)
    cont = cont.assign(label=names)
    labels = list(dict.fromkeys(names))
    colors = color_for(labels)
    with house_style():
        fig, axes = plt.subplots(1, 4, figsize=(16, 4.2), sharey=True)
        for i, ax in enumerate(axes):
            notes: list[str] = []  # the saturated resources: under the panel title, off the markers
            p = pl[pl.intensity == i].sort_values("alt_hot_share")
            for tier, style in (("default", "-"), ("alternate", "--")):
                ax.plot(p.alt_hot_share, p[f"{tier}_latency_ns"], style, color="k", label=f"{tier} tier")
                col = f"{tier}_utilization"
                if col in p.columns:
                    sat = p[p[col] >= 0.9]
                    if len(sat):
                        ax.scatter(sat.alt_hot_share, sat[f"{tier}_latency_ns"], marker="s", s=40, color="k", zorder=3)
                        last = sat.iloc[-1]
                        notes.append(f"{tier}: {last[f'{tier}_bottleneck']} at {last[col]:.0%}")
            # Each system's point per tier: one scatter per tier (a collection per point was
            # ≈ 130 of them, most of this figure's making and drawing).
            c = cont[cont.intensity == i]
            if len(c):
                point_colors = [colors[x] for x in c.label]
                for tier, mk in (("default", "o"), ("alternate", "^")):
                    ax.scatter(c.alt_hot_share, c[f"{tier}_latency_ns"], marker=mk, color=point_colors, zorder=4)
            ax.set_title("\n".join([f"{i}x contention", *notes]), fontsize=9)
            ax.set_xlabel("share of the hot set in the alternate tier")
        axes[0].set_ylabel("loaded latency (ns)")
        handles = [plt.Line2D([], [], color=colors[lab], marker="o", ls="", label=lab) for lab in labels]
        handles += [
            plt.Line2D([], [], color="k", ls="-", label="default tier (static placements)"),
            plt.Line2D([], [], color="k", ls="--", label="alternate tier"),
            plt.Line2D([], [], color="k", marker="s", ls="", label=">= 90 % of tightest resource"),
        ]
        axes[-1].legend(handles=handles, fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
        fig.suptitle("Fig. 7: per-tier latency vs hot-set share in the alternate tier (o default, ^ alternate)")
        _scaled_note(fig, labels)
        declare_series(fig, [*labels, *(f"{i}x contention" for i in range(len(axes)))])
        return save_figure(fig, out, "fig7_latency_vs_placement")


def _run(out: Path, quick: bool = True, workers: int | None = None) -> StudyResult:
    points = build_points(quick)
    res = run_points(points, out, workers=workers, label="tiering")
    df = res.results.copy()
    alt, dur = [], []
    for o in res.outputs:
        tiers = o["resolved"].get("tiers") or json.loads(_core.tier_reference_tiers())
        alt += [tiers[1]["unloaded_latency_ns"]] * len(o["rows"])
        dur += [o["resolved"]["sim"]["duration_s"]] * len(o["rows"])
    df["alt_unloaded_latency_ns"] = alt
    df["duration_s"] = dur
    if "run_duration_s" in df.columns:
        # A run that went on until steady (fig. 3's TPP) lasted its own length.
        df["duration_s"] = df.run_duration_s.fillna(df.duration_s)
    tl = res.tables.get("timeline", pd.DataFrame())
    timeline = (
        tl.rename(columns={"experiment": "scenario"})[
            ["system", "colloid", "scenario", "time_s", "throughput_gb_s", "default_latency_ns", "alternate_latency_ns"]
        ]
        if len(tl)
        else pd.DataFrame()
    )
    move = 10.0 if quick else 100.0
    conv, first = {}, {}
    for (scen, system, colloid), g in timeline.groupby(["scenario", "system", "colloid"]) if len(timeline) else []:
        key = f"{scen}/{system}{'+colloid' if colloid else ''}"
        first[key], conv[key] = convergence(g, move)
    cols = [
        "experiment",
        "system",
        "colloid",
        "intensity",
        "alt_unloaded_latency_ns",
        "object_size_bytes",
        "throughput_gb_s",
        "default_latency_ns",
        "alternate_latency_ns",
        "alt_traffic_share",
        "alt_hot_share",
        "migrated_gb",
        "migrations",
        "huge_pages_split",
        "policy_samples",
        "policy_pages_scanned",
        "policy_hint_faults",
        "policy_cpu_cores",
        "oracle_hot_share_default",
        "converged",
        "window_throughput_drift",
        "window_migration_share",
    ]
    tier_cols = [f"{t}_{k}" for t in ("default", "alternate") for k in ("utilization", "bottleneck")]
    cols += [c for c in tier_cols if c in df.columns]
    cols += [c for c in tiering_pmem.COLUMNS if c in df.columns]
    steady = df[~df.experiment.str.startswith("converge")][cols].reset_index(drop=True)
    # Rows whose measured window is not steady (docs/tiering.md, *Is the window steady?*).
    unsteady = [
        f"{r.experiment}/{r.system}{'+colloid' if r.colloid else ''}/{r.intensity}x"
        f"/{r.alt_unloaded_latency_ns:g}ns/{r.object_size_bytes}B"
        for r in steady[~steady.converged.astype(bool)].itertuples()
    ]
    return StudyResult(
        name="tiering",
        results=steady,
        tables={"timeline": timeline},
        comparison=comparison_frame(compare(steady, quick)),
        summary={
            "seed": 1,
            "points": len(points),
            "convergence_time_s": conv,
            "convergence_first_entry_s": first,
            "not_steady_rows": len(unsteady),
            "not_steady": unsteady,
            "warnings": [
                f"{len(unsteady)} of {len(steady)} rows are not steady in their measured window "
                "(their runs are too short to settle; summary.json lists them under not_steady, results.csv "
                "marks them converged = false, and a comparison row resting on one says so in its note)"
            ]
            if unsteady
            else [],
        },
        figures=figures(out, steady, timeline, quick),
    )


STUDY = register(
    Study(
        "tiering",
        "HeMem, TPP and MEMTIS with and without Colloid under memory contention",
        _run,
        source="colloid-sosp24",
        expected_warnings=(
            (
                r"so Colloid promotes nothing",
                "a Colloid policy moves pages only while the default tier's loaded latency is below the "
                "alternate tier's, and at this point it never is, so first touch stands (docs/tiering.md, "
                "*Nothing migrated*)",
            ),
            (
                r"migrated almost nothing .*: of Colloid's \d+ steps, in \d+ ",
                "Colloid's own steps kept the pages: it found the tiers balanced (loaded latencies within δ), "
                "or the share Δp it was to move was smaller than any one hot page's, as with the apps' skewed "
                "access (docs/tiering.md, *Application analogs*)",
            ),
            (
                r"migrated almost nothing .*: of HeMem's \d+ quanta, in \d+ ",
                "HeMem's cooling halves every count whenever one page passes its cooling threshold, so under "
                "the apps' skewed access only pages sampled nearly as often as the hottest reach the hot "
                "threshold, and it promotes a few huge pages only (docs/tiering.md, *Nothing migrated*)",
            ),
            (
                r"\(THP\) pages each page has one accessed bit",
                "TPP with 2 MiB pages keeps its first-touch placement under GUPS: one accessed bit per huge "
                "page, so kswapd finds no cold page (docs/tiering.md, *Limits*)",
            ),
        ),
    )
)
