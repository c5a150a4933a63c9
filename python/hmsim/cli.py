"""The `hmsim` command line (the commands are described in docs/getting-started.md)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click
from rich.table import Table

from hmsim import _core
from hmsim.errors import ConfigError, HmsimError, SimulationError
from hmsim.progress import make_console

console = make_console()


def replicates_option(help: str) -> Callable:
    """`--replicates N` (1 … 1000 runs, one seed each; docs/configuration.md#replicates)."""
    return click.option("--replicates", type=click.IntRange(1, 1000), default=1, show_default=True, help=help)


device_dir_option = click.option(
    "--device-dir",
    "device_dirs",
    multiple=True,
    type=click.Path(),
    help="Extra device TOML files or directories (also $HMSIM_DEVICE_PATH).",
)


def backend_options(command):
    """`--backend`, `--scheduler` and `--scheduler-timeout`, for `reproduce` and `sweep`
    (each passes them to `_backend`)."""
    options = [
        click.option(
            "--backend",
            type=click.Choice(["local", "dask"]),
            default="local",
            show_default=True,
            help="local: threads here; dask: a Dask cluster (--scheduler, or a LocalCluster).",
        ),
        click.option("--scheduler", default=None, metavar="ADDR", help="Dask scheduler, e.g. tcp://host:8786."),
        click.option(
            "--scheduler-timeout",
            "scheduler_timeout_s",
            type=click.FloatRange(min=0, min_open=True),
            default=None,
            metavar="SECONDS",
            help="How long to keep trying to reach --scheduler (default: 10).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_core.__version__, prog_name="hmsim", message="%(prog)s %(version)s")
def cli() -> None:
    """hmsim: simulate heterogeneous memory systems (DRAM, CXL, PMem, STT-MRAM, PCM, flash)."""
    # Figures are files here: no display backend (the Python API leaves the backend alone).
    os.environ.setdefault("MPLBACKEND", "Agg")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Full resolved specs as JSON.")
@device_dir_option
def devices(as_json: bool, device_dirs: tuple[str, ...]) -> None:
    """List the device catalog."""
    from hmsim.catalog import device_list
    from hmsim.catalog import devices as frame

    if as_json:
        click.echo(json.dumps(device_list(device_dirs), indent=2))
        return
    df = frame(device_dirs)
    t = Table(title="hmsim device catalog", title_justify="left")
    for c in ["name", "kind", "technology", "capacity", "read lat", "read GB/s", "write lat", "write GB/s"]:
        t.add_column(c)
    for r in df.itertuples():
        t.add_row(
            r.name,
            r.kind,
            r.technology,
            _size(r.capacity_bytes),
            _ns(r.read_latency_ns),
            f"{r.read_bandwidth_gb_s:g}",
            _ns(r.write_latency_ns),
            f"{r.write_bandwidth_gb_s:g}",
        )
    console.print(t)


def _size(b: int) -> str:
    for unit, div in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if b >= div:
            return f"{b / div:.3g} {unit}"
    return f"{b} B"


def _ns(ns: float) -> str:
    return f"{ns / 1e3:.3g} µs" if ns >= 1e3 else f"{ns:.3g} ns"


@cli.command()
@click.argument("scenario", type=click.Path())
@click.option("--out", required=True, type=click.Path(), help="Output directory.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a scenario key.")
@replicates_option("Run at N seeds (the scenario's and the N-1 after it) and say how far the seed moves each number.")
@device_dir_option
def run(scenario: str, out: str, overrides: tuple[str, ...], replicates: int, device_dirs: tuple[str, ...]) -> None:
    """Run one scenario; write results.csv, summary.json and figures into OUT."""
    from hmsim.humanize import duration, headline_value
    from hmsim.scenario import _run

    if replicates > 1:
        from hmsim.sweep import run_replicates

        res = run_replicates(scenario, out, overrides, replicates, devices=device_dirs)
        _print_sweep(res, out)
        return

    res = _run(scenario, out, list(overrides), device_dirs, origin="--set")
    for k, v in res.headline.items():
        # Keys verbatim: no rich markup ([no_EPF] is a key, not a style).
        console.print(f"{k:>24}: {headline_value(k, v)}", markup=False)
    console.print(f"results in {out}/ ({duration(res.wall_time_s)})", markup=False)
    print_warnings(res.warnings)


# A sweep prints this many of its points' warnings; summary.json keeps them all.
SWEEP_WARNINGS_SHOWN = 20


def replicates_line(info: dict) -> str:
    """What the seed moves, in one line: the seeds, each headline metric's widest 95 %
    interval, and how many row pairs keep their order in every seed."""
    seeds = info["seeds"]
    widest = ", ".join(f"{m} ±{rel:.1%}" for m, rel in info["ci95_rel_max"].items()) or "none"
    pairs = info["order_pairs"]
    order = (
        f"; rows in the same order in every seed: {pairs - info['order_unsettled']} of {pairs} pairs" if pairs else ""
    )
    return (
        f"replicates: {info['count']} seeds ({seeds[0]}–{seeds[-1]}); widest 95 % interval of a mean: {widest}"
        f"{order} (replicates.csv, replicates_order.csv)"
    )


def print_warnings(warnings: list[str]) -> None:
    """Each of a run's trust warnings, after its numbers (also in summary.json)."""
    for w in warnings:
        click.echo(f"warning: {w}")


@cli.command()
@click.argument("study")
@click.option("--out", default="results", show_default=True, type=click.Path(), help="Output directory.")
@click.option("--quick", is_flag=True, help="Reduced grid: seconds to a minute.")
@click.option("--workers", type=click.IntRange(1, 1024), default=None, help="Parallel points (default: cores).")
@backend_options
@replicates_option("Run each study's grid at N seeds and say how far the seed moves its compared numbers.")
@click.option(
    "--figure-formats",
    "formats",
    default=None,
    metavar="LIST",
    help="Figure formats, comma-separated from png, svg, pdf (default: all three; png,svg with --quick).",
)
def reproduce(
    study: str,
    out: str,
    quick: bool,
    workers: int | None,
    backend: str,
    scheduler: str | None,
    scheduler_timeout_s: float | None,
    replicates: int,
    formats: str | None,
) -> None:
    """Reproduce a published study (or `all`), printing simulated vs published numbers."""
    from hmsim import host
    from hmsim.drawing_processes import PROCESSES

    start, cpu = time.perf_counter(), host.process_cpu_s()
    # The host-speed reading first, while nothing else runs; then the drawing processes, so
    # that their imports run beside this process's own (below) instead of beside the points.
    reading = host.gauge()
    PROCESSES.start()
    from hmsim.humanize import duration
    from hmsim.plotting import figure_formats, parse_formats
    from hmsim.report import cpu_text
    from hmsim.reproduce import cpu_breakdown, run_studies
    from hmsim.studies import get, names
    from hmsim.sweep import using_backend

    todo = names() if study == "all" else [get(study).name]

    def finished(name: str, res) -> None:
        get(name).echo(res)
        wall = duration(res.summary["wall_time_s"])
        if rep := res.summary.get("replicates"):
            wall += f", its {rep['count'] - 1} other seeds {duration(rep['wall_time_s'])}"
        console.print(f"{name}: results in {Path(out) / name}/ ({wall}{cpu_text(res.summary)})", markup=False)

    # `all`: the studies run side by side on one pool of --workers, one progress display.
    try:
        chosen = parse_formats(formats) if formats is not None else None
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--figure-formats") from None
    with using_backend(_backend(backend, scheduler, scheduler_timeout_s)), figure_formats(chosen):
        done = run_studies(
            todo, Path(out), quick=quick, workers=workers, on_done=finished, start_gauge=reading, replicates=replicates
        )
    from hmsim.report import with_studies_on_disk, write_report

    # A single study's report also shows the studies an earlier run left in `out`.
    report = done if study == "all" else with_studies_on_disk(Path(out), done)
    console.print(f"report: {write_report(Path(out), report)}")
    if len(done) > 1:
        wall = time.perf_counter() - start
        console.print(cpu_breakdown(done, host.process_cpu_s() - cpu, wall, local=backend == "local"), markup=False)


@cli.command()
@click.argument("sweep_file", type=click.Path())
@click.option("--out", required=True, type=click.Path(), help="Output directory (re-run to resume).")
@backend_options
@click.option("--workers", type=click.IntRange(1, 1024), default=None, help="Parallel points (default: cores).")
@device_dir_option
def sweep(
    sweep_file: str,
    out: str,
    backend: str,
    scheduler: str | None,
    scheduler_timeout_s: float | None,
    workers: int | None,
    device_dirs: tuple[str, ...],
) -> None:
    """Run a parameter sweep: a scenario plus axes, in parallel, resumable."""
    from hmsim.sweep import run_sweep

    res = run_sweep(
        sweep_file, out, workers=workers, devices=device_dirs, backend=_backend(backend, scheduler, scheduler_timeout_s)
    )
    _print_sweep(res, out)


def _print_sweep(res, out: str) -> None:
    """A finished sweep's counts, what the seed moves (with replicates) and its warnings."""
    from hmsim.sweep import SweepInterrupted

    try:
        shared = f" ({res.shared} sharing another's run)" if res.shared else ""
        console.print(f"{res.ran} points run{shared}, {res.reused} reused; results in {out}/")
        if res.replicates is not None:
            click.echo(replicates_line(res.replicates.info))
        print_warnings(res.warnings[:SWEEP_WARNINGS_SHOWN])
        if len(res.warnings) > SWEEP_WARNINGS_SHOWN:
            more = len(res.warnings) - SWEEP_WARNINGS_SHOWN
            click.echo(f"warning: … and {more} more from the points' runs (summary.json: warnings)")
    except KeyboardInterrupt:
        # The sweep is written whole; a re-run reuses every point.
        n = res.ran + res.reused
        raise SweepInterrupted(n, n, Path(out)) from None


@cli.command()
@click.option("--module", default=None, help="Only this module's benchmarks.")
@click.option(
    "--scale", type=click.FloatRange(1e-4, 100.0), default=1.0, show_default=True, help="Scale the work per benchmark."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--repeat",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="Run every benchmark N times, passes interleaved; report the median and the range.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False),
    default=None,
    help="Compare with an earlier `hmsim bench --json` run: each benchmark's ratio, whether it is "
    "outside both runs' pass spread, and whether the two ran on the same machine and build at the same speed.",
)
def bench(module: str | None, scale: float, as_json: bool, repeat: int, baseline: str | None) -> None:
    """Measure simulation speed (simulated requests or accesses per wall second)."""
    from hmsim import host
    from hmsim.bench_runs import (
        combine,
        compare,
        gauge_moved,
        gauge_range_text,
        gauge_summary,
        load_average,
        load_baseline,
        ratio_text,
    )

    # Read first: a bad baseline is an error before minutes of benchmarks, not after.
    before = load_baseline(baseline) if baseline is not None else None
    machine = host.describe()
    load_before = load_average()
    passes, gauges = [], []
    for _ in range(repeat):
        gauges.append(host.gauge())
        passes.append(json.loads(_core.bench(module, scale)))
    gauges.append(host.gauge())
    results = combine(passes)
    gauge = gauge_summary(gauges)
    load_after = load_average()
    for r in results:
        r["load_average"] = [load_before, load_after]
        r["host"] = machine
        r["host_gauge"] = gauge
    rows, warnings = compare(results, before) if before is not None else ([], [])
    if as_json:
        for r, row in zip(results, rows, strict=False):
            r["vs_baseline"] = {k: row[k] for k in ("ratio", "overlap", "note")}
        click.echo(json.dumps(results, indent=2))
        for w in warnings:
            click.echo(f"warning: {w}", err=True)
        return
    if load_before is not None and load_after is not None:
        # A wall time means little without the load it was measured under, and the machine.
        console.print(f"load average (1 min): {load_before:.2f} before, {load_after:.2f} after")
    console.print(f"host: {host.text(machine)}", markup=False)
    console.print(gauge_range_text(gauge), markup=False)
    if moved := gauge_moved(gauge):
        console.print(moved, markup=False)
    for r in results:
        rate = r["per_wall_second"]
        shown = f"{rate / 1e6:.2f} M" if rate >= 1e5 else f"{rate:.3g}"
        spread = ""
        if r["repeats"] > 1:
            lo, hi = min(r["wall_s_runs"]), max(r["wall_s_runs"])
            spread = f"; median of {r['repeats']}, {lo:.3f}–{hi:.3f} s"
        console.print(
            f"{r['module']:>10}  {r['case']}: {shown} {r['unit']}/s ({r['count']} in {r['wall_s']:.3f} s{spread})",
            markup=False,
        )
    if before is not None:
        console.print(f"against the baseline {baseline}:", markup=False)
        for row in rows:
            console.print(f"{row['module']:>10}  {row['case']}: {ratio_text(row)}", markup=False)
        for w in warnings:
            console.print(f"warning: {w}", markup=False)


@cli.command()
@click.argument("module", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def schema(module: str | None, as_json: bool) -> None:
    """List the output tables of every module (or MODULE) and their declared columns."""
    modules = json.loads(_core.schema())
    if module is not None:
        names = [m["module"] for m in modules]
        if module not in names:
            raise ConfigError("schema", f"unknown module '{module}'; allowed: {', '.join(names)}")
        modules = [m for m in modules if m["module"] == module]
    if as_json:
        click.echo(json.dumps(modules, indent=2))
        return
    for m in modules:
        for table in m["tables"]:
            t = Table(title=f"{m['module']}: {table['name']}.csv", title_justify="left")
            for c in ["column", "unit", "dtype", "measured", "doc"]:
                t.add_column(c)
            for c in table["columns"]:
                dtype = c["dtype"] + ("?" if c["nullable"] else "")
                t.add_row(c["name"], c["unit"], dtype, "measured" if c["measured"] else "", c["doc"])
            console.print(t)


@cli.command()
@click.option("--trace", "trace_file", required=True, type=click.Path(), help="Any readable memory trace.")
@click.option("--device", default="optane-pmem", show_default=True, help="Catalog memory device of one DIMM.")
@click.option("--format", "fmt", default=None, help="Trace format (default: sniffed).")
@click.option("--dimms", type=click.IntRange(1, 64), default=6, show_default=True, help="Interleaved DIMMs.")
@click.option(
    "--cores", type=click.IntRange(1, 4096), default=1, show_default=True, help="Cores the trace's CPU ids fold onto."
)
@click.option(
    "--ns-per-instruction",
    type=click.FloatRange(0, 1e6),
    default=1 / 3,
    show_default=True,
    help="Compute time per instruction between accesses.",
)
@click.option(
    "--flush",
    type=click.Choice(["clflush", "clflushopt", "clwb"]),
    default="clwb",
    show_default=True,
    help="What the trace's flush records execute.",
)
@click.option("--clwb-keeps", is_flag=True, help="clwb keeps the line cached (Ice Lake and later).")
@click.option("--eadr", is_flag=True, help="Caches are in the persistence domain.")
@click.option("--no-drain", is_flag=True, help="Do not write back lines still dirty at the end.")
@click.option("--top", type=click.IntRange(0, 100_000), default=10, show_default=True, help="Hottest ranges.")
@click.option("--out", type=click.Path(), default=None, help="Also write results.csv, hot_ranges.csv, summary.json.")
@device_dir_option
def lifetime(
    trace_file: str,
    device: str,
    fmt: str | None,
    dimms: int,
    cores: int,
    ns_per_instruction: float,
    flush: str,
    clwb_keeps: bool,
    eadr: bool,
    no_drain: bool,
    top: int,
    out: str | None,
    device_dirs: tuple[str, ...],
) -> None:
    """PMem lifetime cost of a program: replay its trace through caches and the PMem path."""
    from hmsim.lifetime import lifetime_output

    # The core's output as it came, not DataFrames: without --out, pandas is never loaded.
    res = lifetime_output(
        trace_file,
        device=device,
        out=out,
        fmt=fmt,
        devices=device_dirs,
        pmem={"dimms": dimms, "persistence": "eadr" if eadr else "adr"},
        cache={"clwb_invalidates": not clwb_keeps},
        cores=cores,
        ns_per_instruction=ns_per_instruction,
        flush=flush,
        drain=not no_drain,
        top_n=top,
    )
    for k, v in lifetime_rows(res["rows"][0]):
        console.print(f"{k:>34}: {v}")
    hot = res["tables"].get("hot_ranges")
    if hot:
        console.print(f"{'hottest 4 KiB ranges':>34}:")
        for h in hot:
            console.print(f"{'':>36}{h['start_addr']}  {h['media_writes_64b']} media writes ({h['share']:.1%})")
    print_warnings(res.get("warnings", []))


def lifetime_rows(r: dict) -> list[tuple[str, str]]:
    """The lifetime summary as (label, text) from the core's result row (a dict, as its JSON
    gave it); a figure the trace cannot give (no writes, no sizes, no time) reads "n/a" with
    the reason rather than a number made from 0 or 1."""
    import math

    from hmsim.humanize import duration, years

    def missing(v) -> bool:
        # JSON has no NaN: the core writes a figure it cannot give as null.
        return v is None or (isinstance(v, float) and math.isnan(v))

    def num(v, spec: str, unit: str = "", why: str = "") -> str:
        if missing(v):
            return f"n/a ({why})" if why else "n/a"
        return f"{v:{spec}}{unit}"

    def human(v, fmt, why: str = "") -> str:
        # Durations in the unit their magnitude calls for (hours, days, years …).
        if missing(v):
            return f"n/a ({why})" if why else "n/a"
        return fmt(v)

    unsized = "store sizes not in the trace format"
    no_writes = "no writes reach PMem"
    stored = r.get("stored_bytes")
    if missing(stored):
        stored = None
    per_byte = unsized if stored is None else "no stores"
    return [
        ("records / instructions", f"{r['records']} / {r['instructions']}"),
        ("program time (simulated)", human(r["program_seconds"], duration)),
        ("bytes stored by the program", num(stored, "", why=unsized)),
        (
            "WPQ inserts (PMM_WPQ_INSERTS)",
            f"{r['wpq_inserts']}  ({num(r['wa_stores_to_wpq'], '.3g', why=per_byte)} x stored bytes)",
        ),
        ("write requests (WriteRequests)", f"{r['write_requests']}"),
        (
            "media writes (MediaWrites, 64 B)",
            f"{r['media_writes_64b']}  (WA {num(r['write_amplification'], '.3g')} per request)"
            if not missing(r["write_requests"]) and r["write_requests"]
            else f"{r['media_writes_64b']}",
        ),
        (
            "end-to-end WA (media / stored)",
            num(r["wa_end_to_end"], ".3g", why=per_byte),
        ),
        ("media bytes per hour", num(r["media_bytes_per_hour"], ".4g", why="no simulated time")),
        ("rated PBW used per hour", num(r["rated_fraction_per_hour"], ".3e", why="no simulated time")),
        ("media writes from the final drain", num(r.get("drain_media_share"), ".1%", why=no_writes)),
        ("lifetime, hottest line, no WL", human(r["lifetime_years_no_wl"], years, no_writes)),
        ("lifetime, simulated AIT WL", human(r["lifetime_years_sim_wl"], years, no_writes)),
        ("lifetime, ideal WL (rated PBW)", human(r["lifetime_years_ideal_wl"], years, no_writes)),
        ("lifetime rests on", str(r.get("lifetime_basis", "n/a"))),
    ]


@cli.group()
def trace() -> None:
    """Record, inspect and convert traces."""


@trace.command("info")
@click.argument("file", type=click.Path())
@click.option("--format", "fmt", default=None, help="Format (default: sniffed).")
@click.option("--top", type=click.IntRange(0, 10_000), default=10, show_default=True, help="Top pages to list.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def trace_info(file: str, fmt: str | None, top: int, as_json: bool) -> None:
    """Format, records, footprint (4 KB / 2 MB pages), read/write mix, top pages."""
    from hmsim.trace import info

    res = info(file, fmt, top)
    if as_json:
        click.echo(json.dumps(res, indent=2))
        return
    for k, v in res.items():
        if not isinstance(v, list | dict):
            console.print(f"{k:>22}: {v}")
    for name in ("top_pages_4k", "top_pages"):
        if res.get(name):
            console.print(f"{'top 4 KB pages':>22}:")
            for p in res[name][:top]:
                console.print(f"{'':>24}{p['page_address']:#014x}  {p['records']} records")
            break


@trace.command("convert")
@click.argument("src", type=click.Path())
@click.argument("dst", type=click.Path())
@click.option("--to", "to", default="native", show_default=True, help="Target format.")
@click.option("--from", "fmt", default=None, help="Source format (default: sniffed).")
@click.option(
    "--synthetic-cycles",
    type=click.IntRange(1, 1 << 40),
    default=None,
    metavar="N",
    help="dramsim target: give records without a cycle one N cycles after the previous request.",
)
@click.option(
    "--max-output-bytes",
    type=click.IntRange(0, (1 << 64) - 1),
    default=None,
    metavar="N",
    help="Text and champsim targets: refuse an output above N bytes before compression "
    "(default: 1000 x the input's size, at least 1 GiB; 0: no limit).",
)
def trace_convert(
    src: str, dst: str, to: str, fmt: str | None, synthetic_cycles: int | None, max_output_bytes: int | None
) -> None:
    """Convert a trace to another format (default: hmsim native)."""
    from hmsim.trace import convert

    res = convert(src, dst, to, fmt, synthetic_cycles=synthetic_cycles, max_output_bytes=max_output_bytes)
    console.print(f"{res.get('records', '?')} records written to {dst}")


@trace.command("record", context_settings={"ignore_unknown_options": True})
@click.option("--kind", type=click.Choice(["lackey", "kmem"]), required=True)
@click.option("-o", "--out", "out", required=True, type=click.Path(), help="Output trace (hmsim native).")
@click.option("--page-level", is_flag=True, help="lackey: one event per change of page, with instruction counts.")
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED, required=True)
def trace_record(kind: str, out: str, page_level: bool, cmd: tuple[str, ...]) -> None:
    """Run CMD under a tracer and save its trace: `hmsim trace record --kind lackey -o t.hmt -- CMD ARGS`."""
    from hmsim.trace import record_kmem, record_lackey

    if kind == "lackey":
        res = record_lackey(list(cmd), out, page_level=page_level)
    else:
        if page_level:
            raise ConfigError("--page-level", "applies to --kind lackey only")
        res = record_kmem(list(cmd), out)
    console.print(f"{res.get('records', '?')} records written to {out} (command exit status {res['exit_status']})")


def _backend(name: str, scheduler: str | None, timeout_s: float | None):
    from hmsim.sweep import Backend

    if scheduler and name != "dask":
        raise ConfigError("--scheduler", "goes with --backend dask")
    if timeout_s is not None and not scheduler:
        raise ConfigError("--scheduler-timeout", "goes with --scheduler")
    return Backend(name, scheduler) if timeout_s is None else Backend(name, scheduler, timeout_s)


def main(argv: list[str] | None = None) -> int:
    """Entry point: bad input (configuration, input data) → one line on stderr and exit status
    2; a valid run that could not complete → one line and 1; Ctrl-C → 130, SIGTERM
    → 143 (finished sweep points kept, temporaries removed)."""
    from hmsim import gc_policy, signals

    gc_policy.collect_less()
    signals.install()
    try:
        status = _main(argv)
    except KeyboardInterrupt:  # a first signal just after the command's own handling
        status = signals.exit_status()
    if argv is None:
        # The `hmsim` command, its work done (files written, lock released): leave now. At
        # interpreter shutdown Python resets the signal handlers, so a signal there (a second
        # Ctrl-C) would end it with a raw -2 after tracebacks from threading's exit hooks.
        signals.install_leaving()
        signals.exit_now(status)
    return status


def _sweep_interrupted(e: Exception) -> bool:
    """Whether `e` is a sweep's Ctrl-C. hmsim.sweep (and pandas with it) is loaded only by
    the commands that sweep, so a command that never loaded it cannot have raised one."""
    sweep = sys.modules.get("hmsim.sweep")
    return sweep is not None and isinstance(e, sweep.SweepInterrupted)


def _main(argv: list[str] | None) -> int:
    from hmsim import signals

    try:
        cli.main(args=argv, prog_name="hmsim", standalone_mode=False)
    except SimulationError as e:
        # A valid run that could not complete: not the user's input, so not status 2.
        click.echo(f"hmsim: simulation failed: {e}", err=True)
        return 1
    except HmsimError as e:
        click.echo(f"hmsim: error: {e}", err=True)
        return 2
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.UsageError as e:
        # One line naming the command and what was wrong, then where help is: not click's
        # four-line usage block.
        where = e.ctx.command_path if e.ctx is not None else "hmsim"
        sub = where.removeprefix("hmsim").strip()
        click.echo(f"hmsim: error: {sub + ': ' if sub else ''}{e.format_message()}", err=True)
        click.echo(f"hmsim: try '{where} --help'", err=True)
        return e.exit_code
    except click.ClickException as e:
        click.echo(f"hmsim: error: {e.format_message()}", err=True)
        return e.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo(f"hmsim: interrupted ({signals.signal_name()})", err=True)
        signals.leave_if_busy(signals.exit_status())
        return signals.exit_status()
    except OSError as e:
        # Only an I/O error no code path named reaches here: say what is known, never `: :`.
        where = f"{e.filename}: " if e.filename else ""
        click.echo(f"hmsim: error: {where}{e.strerror or e}", err=True)
        return 2
    except Exception as e:
        # A sweep's Ctrl-C (an Exception of its own, none of the kinds above).
        if _sweep_interrupted(e):
            click.echo(f"hmsim: {e}", err=True)
            signals.leave_if_busy(signals.exit_status())
            return signals.exit_status()
        if not signals.interrupted():
            raise
        # The signal's KeyboardInterrupt surfaced as another error: raised inside a C
        # extension's initialisation (a module loaded on first use, e.g. matplotlib for the
        # figures), it becomes "ImportError: initialization failed".
        click.echo(f"hmsim: interrupted ({signals.signal_name()})", err=True)
        signals.leave_if_busy(signals.exit_status())
        return signals.exit_status()
    return 0


if __name__ == "__main__":
    sys.exit(main())
