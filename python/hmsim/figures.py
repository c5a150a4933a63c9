"""Figures for a single `hmsim run`, per module (studies draw their own)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from hmsim.plotting import house_style, save_figure


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


FIGURES = {"storage": _storage, "pmem": _pmem, "lifetime": _hot_ranges}


def run_figures(result, out: Path) -> None:
    draw = FIGURES.get(result.module)
    if draw is not None and len(result.results):
        draw(result, out)
