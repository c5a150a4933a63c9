"""Figures for a single `hmsim run`, per module (studies draw their own)."""

from __future__ import annotations

import functools
from pathlib import Path

import matplotlib.pyplot as plt

from hmsim.humanize import axis_unit, key_seconds_per_unit
from hmsim.plotting import (
    PALETTE,
    color_for,
    declare_series,
    house_style,
    outside_legend,
    save_figure,
    series_style,
)
from hmsim.replicates import SEED, band


def _storage(result, out: Path) -> None:
    row = result.results.iloc[0]
    with house_style():
        if "thermal" in result.tables:
            t = result.tables["thermal"]
            fig, ax = plt.subplots()
            ax.plot(t["time_s"], t["temperature_c"])
            ax.set_xlabel("time (s)")
            ax.set_ylabel("device temperature (°C)")
            ax.set_title(f"{row['device']}: temperature under the job")
            save_figure(fig, out, "temperature")
        fig, ax = plt.subplots()
        names = ["mean", "p50", "p99", "p99.9", "max"]
        keys = ["latency_mean_us", "latency_p50_us", "latency_p99_us", "latency_p999_us", "latency_max_us"]
        ax.bar(names, [row[k] for k in keys])
        ax.set_ylabel("latency (µs)")
        ax.set_title(
            f"{row['device']} {row['pattern']} {row['op']} QD{row['queue_depth']} "
            f"{row['block_size_bytes'] // 1024} KiB: {row['bandwidth_mib_s']:.0f} MiB/s"
        )
        save_figure(fig, out, "latency")


def _pmem(result, out: Path) -> None:
    row = result.results.iloc[0]
    if "pattern" not in row:
        # A trace's lifetime (`[trace]`): its hottest ranges only.
        _hot_ranges(result, out)
        return
    with house_style():
        fig, ax = plt.subplots()
        stages = ["stored_lines", "wpq_inserts", "write_requests", "media_writes_64b"]
        labels = ["stored lines", "WPQ inserts", "write requests", "media writes (64 B)"]
        ax.bar(labels, [row[k] for k in stages])
        ax.set_ylabel("count (64 B units)")
        wa = row["wa_end_to_end"]
        ax.set_title(f"{row['pattern']} {row['flush']}: end-to-end WA {wa:.2f}" if wa == wa else "write path")
        save_figure(fig, out, "write_path")
    _hot_ranges(result, out)


def _hot_ranges(result, out: Path) -> None:
    hot = result.tables.get("hot_ranges")
    if hot is None or not len(hot):
        return
    with house_style():
        fig, ax = plt.subplots()
        ax.barh(hot.start_addr[::-1], hot.media_writes_64b[::-1])
        ax.set_xlabel("media writes (64 B units)")
        ax.set_title("hottest 4 KiB ranges")
        save_figure(fig, out, "hot_ranges")


def _row_labels(df, cols: list[str]) -> list[str]:
    """One label per row from the label columns that exist and vary (the first always)."""
    cols = [c for c in cols if c in df.columns]
    used = cols[:1] + [c for c in cols[1:] if df[c].nunique(dropna=False) > 1]
    return [" ".join(str(v) for v in row) for row in df[used].itertuples(index=False)]


def _readable_duration(col: str, values, axis_label: str):
    """A duration column drawn in the unit its values read best in (hours, days, years …):
    the values rescaled and the label's "(unit)" replaced; other columns unchanged."""
    per = key_seconds_per_unit(col)
    if per is None or not axis_label.endswith(")"):
        return values, axis_label
    name, unit_s = axis_unit(values * per)
    return values * (per / unit_s), f"{axis_label[: axis_label.rindex('(')]}({name})"


def _bar_panels(df, label_cols: list[str], metrics: list[tuple[str, str]], out: Path, name: str, title: str):
    """One panel per (column, axis label) in `metrics`, one horizontal bar per row of `df`,
    each row its own colour (the same in every panel)."""
    # A panel of all zeros or all missing says nothing: leave it out.
    metrics = [(c, lab) for c, lab in metrics if c in df.columns and df[c].fillna(0).astype(float).abs().sum() > 0]
    if not metrics or not len(df):
        return []
    labels = _row_labels(df, label_cols)
    colors = list(color_for(labels[: len(PALETTE)]).values())
    colors += ["#888888"] * (len(labels) - len(colors))
    with house_style():
        height = max(2.6, 0.32 * len(labels) + 1.2)
        fig, axs = plt.subplots(1, len(metrics), figsize=(2.9 * len(metrics) + 1.6, height), sharey=True, squeeze=False)
        y = list(range(len(labels)))
        for i, (ax, (col, axis_label)) in enumerate(zip(axs[0], metrics, strict=True)):
            values = df[col].astype(float).to_numpy()
            values, axis_label = _readable_duration(col, values, axis_label)
            ax.barh(y, values, color=colors, height=0.7)
            ax.set_xlabel(axis_label)
            ax.grid(axis="y", visible=False)
            if i == 0:
                ax.set_yticks(y, labels)
                ax.set_ylim(len(labels) - 0.4, -0.6)  # first row on top; a lone bar stays a bar
        fig.suptitle(title)
        declare_series(fig, labels)
        return save_figure(fig, out, name)


def _tiering(result, out: Path) -> None:
    df = result.results
    intensities = sorted(df["intensity"].unique()) if "intensity" in df else []
    policies = list(dict.fromkeys(df["policy"]))
    if len(intensities) > 1:
        style = series_style(policies)
        panels = [
            ("throughput_gb_s", "GUPS throughput (GB/s)"),
            ("default_latency_ns", "default-tier latency (ns)"),
            ("hot_share_default", "hot set in default tier"),
        ]
        panels = [p for p in panels if p[0] in df]
        with house_style():
            fig, axs = plt.subplots(1, len(panels), figsize=(3.3 * len(panels) + 2.2, 3.4), squeeze=False)
            for ax, (col, label) in zip(axs[0], panels, strict=True):
                for pol in policies:
                    g = df[df.policy == pol].sort_values("intensity")
                    ax.plot(g["intensity"], g[col], label=pol, **style[pol])
                ax.set_xlabel("antagonist intensity")
                ax.set_ylabel(label)
                ax.set_xticks(intensities)
            outside_legend(axs[0][-1], title="policy")
            save_figure(fig, out, "throughput_vs_contention")
    else:
        _bar_panels(
            df,
            ["policy"],
            [
                ("throughput_gb_s", "throughput (GB/s)"),
                ("default_latency_ns", "default-tier latency (ns)"),
                ("hot_share_default", "hot set in default tier"),
                ("migrated_gb", "migrated (GB)"),
            ],
            out,
            "policies",
            f"tiering at intensity {intensities[0] if intensities else 0}",
        )
    timeline = result.tables.get("timeline")
    if timeline is not None and len(timeline) and {"time_s", "throughput_gb_s"} <= set(timeline.columns):
        _timeline(timeline, out)


def _timeline(timeline, out: Path) -> list[Path]:
    """Throughput over time, one line per policy and intensity: with several intensities, one
    panel each (a policy keeps its look across panels); every series drawn, none dropped."""
    keys = [c for c in ("policy", "intensity") if c in timeline.columns]
    facet = "intensity" in keys and timeline["intensity"].nunique() > 1
    series = [k for k in keys if not (facet and k == "intensity")]
    panels = list(timeline.groupby("intensity", sort=True)) if facet else [(None, timeline)]

    def name(key) -> str:
        return " ".join(str(x) for x in (key if isinstance(key, tuple) else (key,)))

    names = list(dict.fromkeys(name(k) for k, _ in timeline.groupby(series, sort=False))) if series else [""]
    style = series_style(names)
    with house_style():
        fig, axs = plt.subplots(1, len(panels), figsize=(3.6 * len(panels) + 2.6, 3.4), sharey=True, squeeze=False)
        for ax, (intensity, d) in zip(axs[0], panels, strict=True):
            groups = d.groupby(series, sort=False) if series else [((), d)]
            for key, g in groups:
                n = name(key) if series else ""
                st = {**style[n], "marker": None}
                ax.plot(g["time_s"], g["throughput_gb_s"], label=n or "throughput", **st)
            ax.set_xlabel("simulated time (s)")
            if intensity is not None:
                ax.set_title(f"intensity {intensity}")
        axs[0][0].set_ylabel("throughput (GB/s)")
        outside_legend(axs[0][-1], title=" ".join(series) or None)
        declare_series(fig, [n for n in names if n])
        if facet:
            declare_series(fig, [f"intensity {i}" for i, _ in panels])
        return save_figure(fig, out, "timeline")


def _allocators(result, out: Path) -> None:
    _bar_panels(
        result.results,
        ["name", "source", "workload", "threads"],
        [
            ("mean_cycles", "mean alloc (cycles)"),
            ("p99_cycles", "p99 alloc (cycles)"),
            ("alloc_count_cov", "wear unevenness (CoV)"),
            ("lifetime_years", "lifetime (years)"),
        ],
        out,
        "allocators",
        f"{result.results['workload'].iloc[0]}: speed and wear",
    )


def _pm_index(result, out: Path) -> None:
    _bar_panels(
        result.results,
        ["index", "workload", "threads", "flush"],
        [
            ("flushes_per_op", "flushes per op"),
            ("media_bytes_per_op", "media bytes per op"),
            ("write_amplification", "write amplification"),
            ("throughput_mops", "throughput (Mops/s)"),
        ],
        out,
        "indexes",
        "persistent index cost per operation",
    )


def _numa(result, out: Path) -> None:
    df = result.results
    _bar_panels(
        df,
        ["policy", "experiment"],
        [
            ("alloc_time_s", "allocation time (s)"),
            ("runtime_s", "application runtime (s)"),
            ("dram_share", "share in DRAM"),
            ("remote_share", "share on a remote socket"),
        ],
        out,
        "placement",
        f"{df['topology'].iloc[0]}: {df['size_gb'].iloc[0]:g} GB by policy",
    )
    nodes = result.tables.get("nodes")
    if nodes is None or not len(nodes) or not {"policy", "node", "gb"} <= set(nodes.columns):
        return
    table = nodes.pivot_table(index="policy", columns="node", values="gb", aggfunc="sum", sort=False).fillna(0.0)
    kinds = nodes.drop_duplicates("node").set_index("node")["kind"] if "kind" in nodes else None
    colors = color_for([str(n) for n in table.columns])
    with house_style():
        fig, ax = plt.subplots(figsize=(7.4, max(2.6, 0.4 * len(table) + 1.2)))
        left = [0.0] * len(table)
        for node in table.columns:
            label = f"node {node}" + (f" ({kinds[node]})" if kinds is not None else "")
            ax.barh(list(table.index), table[node], left=left, label=label, color=colors[str(node)])
            left = [a + b for a, b in zip(left, table[node], strict=True)]
        ax.invert_yaxis()
        ax.set_xlabel("placed (GB)")
        ax.grid(axis="y", visible=False)
        outside_legend(ax)
        save_figure(fig, out, "nodes")


def _hybrid(result, out: Path) -> None:
    df = result.results
    _bar_panels(
        df,
        ["label", "dram_mib"],
        [
            ("runtime_s", "runtime (s)"),
            ("stall_s", "stall (s)"),
            ("epf_share", "EPF share of faults"),
            ("service_p99_us", "p99 fault service (µs)"),
        ],
        out,
        "policies",
        f"{df['workload'].iloc[0]}: {df['dram_mib'].iloc[0]:g} MiB DRAM cache",
    )


FIGURES = {
    "storage": _storage,
    "pmem": _pmem,
    "tiering": _tiering,
    "allocators": _allocators,
    "pm-index": _pm_index,
    "numa": _numa,
    "hybrid": _hybrid,
}


def run_figures(result, out: Path) -> None:
    draw = FIGURES.get(result.module)
    if draw is not None and len(result.results):
        draw(result, out)


def sweep_metrics(module: str) -> list[str]:
    """What a sweep plots against its first axis: the module's headline metrics, as its
    registry entry in the core declares them (`hmsim schema --json`)."""
    import json

    from hmsim import _core

    return next((list(m["sweep_metrics"]) for m in json.loads(_core.schema()) if m["module"] == module), [])


# The row labels that tell a point's rows apart (a tiering point has a row per policy and intensity).
SERIES_LABELS = ["policy", "name", "index", "label", "device", "intensity", "workload"]


def _series_name(keys: list[str], values) -> str:
    values = values if isinstance(values, tuple) else (values,)
    return ", ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True))


def column_units(module: str = "") -> dict[str, str]:
    """Declared unit of every result column (`hmsim schema`): of `module`, or of every module
    (a name's first declaration) when it is empty or unknown."""
    import json

    from hmsim import _core

    units: dict[str, str] = {}
    mods = json.loads(_core.schema())
    chosen = [m for m in mods if m["module"] == module] or mods
    for m in chosen:
        for table in m["tables"]:
            for c in table["columns"]:
                units.setdefault(c["name"], c["unit"])
    return units


def measured_columns(module: str) -> frozenset[str]:
    """The result columns of `module` timed on the host, not simulated (`hmsim schema`'s
    `measured`): they move from run to run whatever the seed."""
    import json

    from hmsim import _core

    mods = [m for m in json.loads(_core.schema()) if m["module"] == module]
    return frozenset(c["name"] for m in mods for t in m["tables"] for c in t["columns"] if c.get("measured"))


_ACRONYMS = {"wa": "WA", "dram": "DRAM", "pmem": "PMem", "cpu": "CPU", "epf": "EPF", "cov": "CoV", "qd": "QD"}


@functools.cache
def unit_suffixes() -> list[tuple[str, str]]:
    """The core's one vocabulary of units, `(suffix, unit)`, longest suffix first: a key or
    column named `..._<suffix>` is in that unit."""
    import json

    from hmsim import _core

    pairs = [(s, u) for s, u in json.loads(_core.unit_suffixes())]
    return sorted(pairs, key=lambda p: -len(p[0]))


def suffix_unit(name: str) -> str:
    """The unit `name`'s suffix states ("" if none): `bandwidth_gb_s` -> "GB/s"."""
    name = name.lower()
    return next((u for s, u in unit_suffixes() if name == s or name.endswith("_" + s)), "")


def _unit_tokens(unit: str) -> list[str]:
    """How a unit is spelled at the end of a column name: "MiB/s" -> ["mib", "s"], "B" -> ["bytes"]."""
    spelled = next((s for s, u in unit_suffixes() if u == unit), None)
    if spelled is not None:
        return spelled.split("_")
    return [t for t in unit.lower().replace("µ", "u").replace("/", " ").replace(" ", "_").split("_") if t]


def axis_label(column: str, units: dict[str, str]) -> str:
    """An axis label for a result column or a scenario key path: its name (the unit suffix
    dropped, underscores as spaces) and its declared unit in parentheses: `latency_p99_us` ->
    "latency p99 (µs)", `job.queue_depth` -> "job.queue_depth (requests)"."""
    leaf = column.rsplit(".", 1)[-1]
    unit = units.get(column) or units.get(leaf)
    tokens = leaf.split("_")
    if unit is None:
        unit = suffix_unit(leaf)
    unit = unit or ""
    if column != leaf:  # a key path names the scenario key: keep it as written
        return f"{column} ({unit})" if unit else column
    ut = _unit_tokens(unit)
    for k in range(len(ut), 0, -1):
        if len(tokens) > k and [t.lower() for t in tokens[-k:]] == ut[:k]:
            tokens = tokens[:-k]
            break
    else:
        if len(tokens) > 1 and tokens[-1].lower() == "".join(ut):  # media_writes_64b: "64 B"
            tokens = tokens[:-1]
    name = " ".join(_ACRONYMS.get(t, t) for t in tokens)
    if not unit or (unit.startswith("1/") and "per" in tokens):
        return name
    return f"{name} ({unit})"


def sweep_figures(
    results, axes: list[str], out: Path, module: str = "", metrics: list[str] | None = None
) -> list[Path]:
    """`sweep.png/.svg/.pdf`: the module's main metrics against the first axis, one series per
    combination of the other axes and of the row labels that vary within a point (distinct
    colour, marker and line style each), legend outside; axes labelled with their declared
    units. Every series is drawn: past 16 they go in further rows of panels. With
    replicates (a `seed` column not among `axes`), each series is the seeds' mean with
    its 95 % interval as a band."""
    if results is None or not len(results) or not axes:
        return []
    x = axes[0]
    metrics = [m for m in (metrics or sweep_metrics(module)) if m in results.columns]
    metrics = [m for m in metrics if results[m].dtype.kind in "fi" and results[m].notna().any()]
    if not metrics:
        return []
    units = column_units(module)
    others = [a for a in axes[1:] if a in results.columns]
    per_point = results.groupby(list(axes), sort=False)
    labels = [c for c in SERIES_LABELS if c in results.columns and c not in axes and (per_point[c].nunique() > 1).any()]
    keys = others + labels
    groups = list(results.groupby(keys, sort=False)) if keys else [((), results)]
    names = [_series_name(keys, key) for key, _ in groups]
    per_row = len(PALETTE)  # a row of panels per 16 series: each legend stays readable
    rows = [list(range(i, min(i + per_row, len(groups)))) for i in range(0, len(groups), per_row)]
    style = series_style(names[:per_row])
    numeric_x = results[x].dtype.kind in "fi"
    # Replicates (a seed column that is not an axis): each x's seeds are one point's runs.
    replicated = SEED in results.columns and SEED not in axes and results[SEED].nunique() > 1
    with house_style():
        fig, axs = plt.subplots(
            len(rows), len(metrics), figsize=(3.4 * len(metrics) + 1.8, 3.4 * len(rows)), squeeze=False
        )
        for r, idx in enumerate(rows):
            for ax, m in zip(axs[r], metrics, strict=True):
                for k in idx:
                    name, (_, g) = names[k], groups[k]
                    if replicated:
                        # The replicates' mean, and their 95 % interval as a band (or bars).
                        b = g.groupby(x, sort=numeric_x)[m].apply(band)
                        xs = b.index if numeric_x else b.index.astype(str)
                        mean, lo, hi = (b.map(lambda t, i=i: t[i]).to_numpy() for i in range(3))
                        (line,) = ax.plot(xs, mean, label=name or m, **style[names[k % per_row]])
                        if numeric_x:
                            ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.18, linewidth=0)
                        else:
                            ax.errorbar(xs, mean, yerr=[mean - lo, hi - mean], fmt="none", ecolor=line.get_color())
                        continue
                    g = g.groupby(x, sort=numeric_x, as_index=False)[m].mean()
                    xs = g[x] if numeric_x else g[x].astype(str)
                    ax.plot(xs, g[m], label=name or m, **style[names[k % per_row]])
                ax.set_xlabel(axis_label(x, units))
                ax.set_ylabel(axis_label(m, units))
                if not numeric_x:
                    ax.tick_params(axis="x", labelrotation=30)
            if keys:
                outside_legend(axs[r][-1])
        if keys:
            declare_series(fig, names)
        if replicated:
            fig.suptitle(f"{results[SEED].nunique()} seeds per point: their mean, and its 95 % interval shaded")
        return save_figure(fig, out, "sweep")


def replicates_figure(table, metrics: list[str], out: Path, module: str = "") -> list[Path]:
    """`sweep.png/.svg/.pdf` of replicates without axes (one scenario at several seeds): per
    headline metric, each row's mean over the seeds with its 95 % interval as a bar."""
    if table is None or not len(table):
        return []
    metrics = [m for m in metrics if (table["metric"] == m).any()]
    if not metrics:
        return []
    units = column_units(module)
    n = int(table["replicates"].max())
    with house_style():
        rows = table[table["metric"] == metrics[0]]["row"].tolist()
        fig, axs = plt.subplots(
            1, len(metrics), figsize=(3.4 * len(metrics) + 1.8, 0.5 * len(rows) + 1.6), squeeze=False
        )
        for ax, m in zip(axs[0], metrics, strict=True):
            t = table[table["metric"] == m]
            ys = range(len(t))
            mean = t["mean"].to_numpy()
            err = [
                mean - t["ci95_low"].fillna(t["mean"]).to_numpy(),
                t["ci95_high"].fillna(t["mean"]).to_numpy() - mean,
            ]
            ax.errorbar(mean, ys, xerr=err, fmt="o", capsize=3)
            ax.set_yticks(list(ys), t["row"].tolist() if ax is axs[0][0] else [""] * len(t))
            ax.set_xlabel(axis_label(m, units))
            ax.invert_yaxis()
        fig.suptitle(f"{n} seeds: each row's mean and its 95 % interval")
        return save_figure(fig, out, "sweep")
