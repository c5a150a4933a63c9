"""Study `pmem-wa`: write amplification along the Optane PMem write path (Tonic, IEEE Access
2021) and the device characterization it rests on (Yang et al., USENIX FAST 2020); docs/pmem.md."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hmsim.plotting import color_for, declare_series, house_style, log2_axis, save_figure
from hmsim.studies.base import Published, Study, StudyResult, StudyScenario, comparison_frame, register
from hmsim.sweep import Point, run_points

FOOTPRINTS = [64, 128, 256, 512, 1024, 4096, 16384, 65536, 1 << 20]
FLUSHES = ["clflush", "clflushopt", "clwb", "ntstore"]
THREADS = [1, 2, 4, 8, 16, 24]
BIG = 1 << 30  # a region far larger than every buffer
# Table 3's placement, as the study group's public benchmark (pmkiller) lays it out: each
# thread maps offset 0 of a file in its own 1 GiB fsdax namespace (`ndctl create-namespace
# --size 1G -a 2M`). Namespaces on an interleaved region start at multiples of the region's
# alignment, itself a multiple of the interleave set (6 DIMMs x 4 KiB), so every thread's
# region has the same interleave phase and lands on the same DIMM. 1 GiB rounded up to a
# multiple of 96 MiB (16 MiB x 6 ways) is the distance between two namespaces' starts.
NAMESPACE_STRIDE = 11 * 96 * (1 << 20)
# VANS's controller (MICRO'20) as a sensitivity case, not the default: the DIMM takes requests in
# order (its load-store queue serves the head only, and a head waiting for a pending write to its
# XPLine holds everything behind it), and a media write holds its XPLine for the media write
# latency (300 cycles at 0.75 ns). docs/pmem.md says what it changes and why it stays off.
VANS_CONTROLLER = {"pmem__xpbuffer__in_order_requests": True, "pmem__timing__media_write_latency_ns": 225.0}
# Table 3's loop as the study group's public benchmark runs it (oslab-swrc/pmperf,
# pmkiller/pmkiller.cpp): each thread stores one 64 B line (one AVX-512 store) and flushes it,
# line after line over its region, with an mfence only before and after the whole loop: no
# fence per operation, so clflushopt and clwb overlap while clflush stays ordered.
TABLE3_LOOP = {"workload__fence": False}
# FAST'20's XPBuffer probe as LATTester runs it (NVSL/OptaneStudy, src/kernel/memaccess.c
# `cacheprobe`, driven by tasks.c `cacheprobe_job`): each 64 B line is one AVX-512 store and a
# `clflush`, two lines per half XPLine, over the first halves of the region's XPLines and then
# the second halves, with an `mfence` only at the end of each half pass (clflush orders the
# lines anyway). Every store re-reads the line the previous pass flushed.
PROBE_LOOP = {"workload__persist": "clflush", "workload__fence": False}


def build_points(quick: bool) -> list[Point]:
    sc = StudyScenario.shipped("pmem.toml")
    n = 20_000 if quick else 200_000
    pts: list[Point] = []
    for fp in FOOTPRINTS:  # Table 2
        pts.append(sc.point("table2", workload__footprint_bytes=fp, workload__operations=n))
    for fp in (256, 1024):  # Table 3
        for fl in FLUSHES:
            pts.append(
                sc.point(
                    "table3",
                    workload__threads=28,
                    workload__footprint_bytes=fp,
                    workload__region_stride_bytes=NAMESPACE_STRIDE,
                    workload__persist=fl,
                    workload__operations=n // 10,
                    **TABLE3_LOOP,
                )
            )
    for fp in (256, 1024):  # Table 3 under VANS's in-order controller (sensitivity)
        for fl in FLUSHES:
            pts.append(
                sc.point(
                    "table3_vans_controller",
                    workload__threads=28,
                    workload__footprint_bytes=fp,
                    workload__region_stride_bytes=NAMESPACE_STRIDE,
                    workload__persist=fl,
                    workload__operations=n // 10,
                    **TABLE3_LOOP,
                    **VANS_CONTROLLER,
                )
            )
    lat = {
        "seq_read": ("seq-read", "clwb"),
        "rand_read": ("rand-read", "clwb"),
        "write_ntstore": ("seq-write", "ntstore"),
        "write_clwb": ("seq-write", "clwb"),
    }
    for name, (pat, fl) in lat.items():
        pts.append(
            sc.point(
                f"latency_{name}",
                workload__pattern=pat,
                workload__persist=fl,
                workload__footprint_bytes=BIG,
                workload__operations=n,
            )
        )
    for dimms in (1, 6):
        for th in THREADS:
            for pat, acc in (("seq-read", 256), ("seq-write", 256)):
                pts.append(
                    sc.point(
                        f"bw_threads_{pat}",
                        pmem__dimms=dimms,
                        workload__pattern=pat,
                        workload__threads=th,
                        workload__access_bytes=acc,
                        workload__persist="ntstore",
                        workload__fence=False,
                        workload__footprint_bytes=BIG,
                        workload__operations=n // 10,
                    )
                )
    # What the 24-thread write rows rest on: the same runs under VANS's in-order controller, and
    # (six DIMMs) with thread regions 1 GiB + 4 KiB apart so that the threads start on all six
    # DIMMs instead of three (docs/pmem.md, "Thread scaling").
    for dimms, extra in (
        (1, VANS_CONTROLLER),
        (6, VANS_CONTROLLER),
        (6, {"workload__region_stride_bytes": BIG + 4096}),
    ):
        pts.append(
            sc.point(
                "write_threads_sensitivity",
                pmem__dimms=dimms,
                workload__pattern="seq-write",
                workload__threads=24,
                workload__access_bytes=256,
                workload__persist="ntstore",
                workload__fence=False,
                workload__footprint_bytes=BIG,
                workload__operations=n // 10,
                **extra,
            )
        )
    for acc in (64, 128, 256):
        for pat in ("rand-read", "rand-write"):
            pts.append(
                sc.point(
                    f"bw_access_{pat}",
                    pmem__dimms=1,
                    workload__pattern=pat,
                    # 4 threads: enough to saturate reads, few enough that write streams do
                    # not contend (FAST'20: write bandwidth peaks at 1-4 threads).
                    workload__threads=4,
                    workload__access_bytes=acc,
                    workload__persist="ntstore",
                    workload__fence=False,
                    workload__footprint_bytes=BIG,
                    workload__operations=n // 10,
                )
            )
        for th in (1, 8):
            pts.append(
                sc.point(
                    "wa_access",
                    pmem__dimms=1,
                    workload__pattern="rand-write",
                    workload__threads=th,
                    workload__access_bytes=acc,
                    workload__persist="ntstore",
                    workload__footprint_bytes=BIG,
                    workload__operations=n // th,
                )
            )
    for s in (256, 4096, 16384, 18432, 20480, 32768, 65536, 262144, 1 << 20):
        pts.append(
            sc.point(
                "xpbuffer_probe",
                pmem__dimms=1,
                workload__pattern="xpline-halves",
                workload__footprint_bytes=s,
                workload__operations=_whole_probe_passes(n, s),
                **PROBE_LOOP,
            )
        )
    # FAST'20's hot-spot test (LATTester's overwrite task): each operation writes one whole
    # 256 B XPLine with four ntstores and a fence, cycling over the region; 2 x 2^20
    # operations. The quick grid runs 200 000, enough for each block of a 32 KiB region to
    # reach the wear-levelling threshold once.
    for s in (256, 4096, 16384, 32768, 131072, 1 << 20):
        pts.append(
            sc.point(
                "hot_spot",
                workload__footprint_bytes=s,
                workload__access_bytes=256,
                workload__persist="ntstore",
                workload__operations=10 * n,
            )
        )
    return pts


# The study's source and the experiments of it each number comes from.
S = "yang-fast20"
BW_THREADS = "bandwidth vs thread count"
BW_SIZE = "bandwidth vs access size"


def compare(df: pd.DataFrame) -> list[Published]:
    def one(exp: str, **match) -> pd.Series:
        sub = df[df.experiment == exp]
        for k, v in match.items():
            sub = sub[sub[k] == v]
        return sub.iloc[0]

    items = [
        Published(
            "idle latency, sequential read",
            169,
            one("latency_seq_read").read_latency_mean_ns,
            "ns",
            "calibration",
            "XPBuffer-hit read latency set from it",
            source=S,
            where="idle latency",
        ),
        Published(
            "idle latency, random read",
            305,
            one("latency_rand_read").read_latency_mean_ns,
            "ns",
            "calibration",
            source=S,
            where="idle latency",
        ),
        Published(
            "idle latency, ntstore + fence",
            90,
            one("latency_write_ntstore").write_latency_mean_ns,
            "ns",
            "calibration",
            source=S,
            where="idle latency",
        ),
        Published(
            "idle latency, store + clwb + fence",
            62,
            one("latency_write_clwb").write_latency_mean_ns,
            "ns",
            "calibration",
            "includes the cached store; re-read after clwb not counted as idle",
            source=S,
            where="idle latency",
        ),
    ]
    bt = df[df.experiment.str.startswith("bw_threads")]

    def bw(pat: str, dimms: int, th: int) -> float:
        s = bt[(bt.experiment == f"bw_threads_{pat}") & (bt.dimms == dimms) & (bt.threads == th)]
        return float(s.bandwidth_gb_s.iloc[0])

    items += [
        Published(
            "1 DIMM read bandwidth, 4 threads",
            6.5,
            bw("seq-read", 1, 4),
            "GB/s",
            "calibration",
            source=S,
            where=BW_THREADS,
        ),
        Published(
            "1 DIMM ntstore bandwidth, 1 thread",
            2.2,
            bw("seq-write", 1, 1),
            "GB/s",
            "calibration",
            source=S,
            where=BW_THREADS,
        ),
        # FAST'20's raw sweep (NVSL/OptaneStudy data/bandwidth.csv: StrideBW, one DIMM, 256 B
        # ntstores) also records the DIMM's effective write ratio (host / media bytes): the
        # medians of its six 8-thread runs are 1.536 GB/s and 0.7066 (WA 1.415).
        Published(
            "1 DIMM ntstore bandwidth, 8 threads",
            1.536,
            bw("seq-write", 1, 8),
            "GB/s",
            "validation",
            "raw sweep data: bandwidth / effective write ratio is the media's 2.2-2.3 GB/s from 1 to 8"
            " threads, so the fall to 8 threads is write amplification, as modelled",
            source=S,
            where=BW_THREADS,
        ),
        Published(
            "1 DIMM ntstore WA, 8 threads",
            1.415,
            _wa(bt, 1, 8),
            "x",
            "validation",
            "1 / effective write ratio of the raw sweep's 8-thread runs (median; 1.17-1.64 across runs)",
            source=S,
            where=BW_THREADS,
        ),
        Published(
            "1 DIMM ntstore bandwidth, 24 threads",
            0.8,
            bw("seq-write", 1, 24),
            "GB/s",
            "validation",
            "interleaved streams overflow the XPBuffer entries free under a full media queue;"
            " queued read-modify-writes patched while their fill read is out; FAST'20's other cause,"
            " iMC scheduling of many threads to one DIMM, is not modelled (VANS's in-order queue"
            " raises it instead, experiment write_threads_sensitivity); the same DIMM's reads fall"
            " by the same factor (next row)",
            source=S,
            where=BW_THREADS,
        ),
        Published(
            "1 DIMM read bandwidth, 24 threads",
            3.89,
            bw("seq-read", 1, 24),
            "GB/s",
            "validation",
            "FAST'20 raw data (graphs/04-bandwidth_thcount_optane_ni.csv): one DIMM's reads fall"
            " from 6.52 GB/s at 4 threads to 3.89 at 24, the model's gap (1.67x) that of its ntstore"
            " writes (1.64x): a per-DIMM cost of many streams that reads pay too, so not the"
            " XPBuffer's write combining; not modelled",
            source=S,
            where=BW_THREADS,
        ),
        Published(
            "6 DIMM read bandwidth, 24 threads",
            38.5,
            bw("seq-read", 6, 24),
            "GB/s",
            "validation",
            source=S,
            where=BW_THREADS,
        ),
        Published(
            "6 DIMM write bandwidth, 4 threads",
            13.2,
            bw("seq-write", 6, 4),
            "GB/s",
            "validation",
            source=S,
            where=BW_THREADS,
        ),
        Published(
            "6 DIMM write bandwidth, 24 threads",
            7.5,
            bw("seq-write", 6, 24),
            "GB/s",
            "validation",
            "measures 3 DIMMs, 8 streams each: regions 1 GiB apart (4 chunks mod 6) and threads in"
            " lockstep put every thread on a DIMM of one parity; started on all 6 DIMMs nothing"
            " contends (experiment write_threads_sensitivity); unsynchronised threads lie between",
            source=S,
            where=BW_THREADS,
        ),
    ]
    for acc, r_pub, w_pub in ((64, 1.68, 0.55), (128, 3.34, 1.10), (256, 6.5, 2.2)):
        r = one("bw_access_rand-read", access_bytes=acc).bandwidth_gb_s
        w = one("bw_access_rand-write", access_bytes=acc).bandwidth_gb_s
        items.append(
            Published(f"1 DIMM {acc} B random read bandwidth", r_pub, r, "GB/s", "validation", source=S, where=BW_SIZE)
        )
        items.append(
            Published(
                f"1 DIMM {acc} B random ntstore bandwidth", w_pub, w, "GB/s", "validation", source=S, where=BW_SIZE
            )
        )
    for acc, wa in ((64, 4.0), (128, 2.0), (256, 1.0)):
        items.append(
            Published(
                f"WA, {acc} B random writes, 1 thread",
                wa,
                one("wa_access", access_bytes=acc, threads=1).write_amplification,
                "x",
                "validation",
                source=S,
                where="write amplification of small random writes, one DIMM",
            )
        )
    items.append(
        Published(
            "WA, 256 B random writes, 8 threads",
            1.5,
            one("wa_access", access_bytes=256, threads=8).write_amplification,
            "x",
            "calibration",
            "published 1.4-1.6; with flat 1-4 thread bandwidth sets xpbuffer.backlog_write_entries = 4;"
            " patched queued read-modify-writes keep it below",
            source=S,
            where="write amplification of small random writes, one DIMM",
        )
    )
    # What FAST'20's raw probe data (NVSL/OptaneStudy, graphs/09-infer_xpbuffer.csv) shows at
    # each compared size; docs/pmem.md has the analysis.
    probe_notes = {
        256: "LATTester's probe (store + clflush per 64 B line, 1 GiB per point, AEPWatch's on-DIMM"
        " counters around the whole run): raw data 0.80 at 256 B, 0.91 at 512 B, 0.97 at 1 KiB,"
        " 1.04 from 2 KiB, i.e. 0.23-0.26 XPLine writes absorbed per pass at 1-4 XPLines, none"
        " from 8; lines still buffered at the counter read are < 2e-5 of the run, and VANS's"
        " write-through RMW buffer combines only while a line's write is pending (>= 1 at this"
        " rate): no public mechanism gives it, not modelled",
        16384: "the published plateau (1.036 from 2 to 18 KiB; 2.076 = 2 x 1.038 from 128 KiB, where"
        " no block is hot) is a ~3.7 % media overhead on every write, not wear levelling; not modelled",
        20480: "knee between 72 and 80 XPLines (18-20 KiB): the DIMM keeps more than 64 partly written"
        " lines, then splits a gradually growing share (0.31 at 80, 0.75 at 128, 0.97 at 256"
        " XPLines); LRU over 64 entries splits every line from 65 on; the probe's clflush re-reads"
        " touch the XPLines in its write order and VANS evicts LRU among idle entries, so neither"
        " moves the knee",
        65536: "",
    }
    for s, wa in ((256, 0.80), (16384, 1.03), (20480, 1.36), (65536, 2.07)):
        items.append(
            Published(
                f"XPBuffer probe WA, {s // 1024 or s} {'KB' if s >= 1024 else 'B'} region",
                wa,
                one("xpbuffer_probe", footprint_bytes=s).write_amplification,
                "x",
                "validation",
                probe_notes[s],
                source=S,
                where="XPBuffer size probe",
            )
        )
    items.append(
        Published(
            "p99.999 write latency, 4 KB hot spot",
            50.0,
            one("hot_spot", footprint_bytes=4096).write_latency_p99999_us,
            "µs",
            "calibration",
            "migration stall (VANS cost); operations as FAST'20's: 256 B ntstore + fence",
            source=S,
            where="tail latency of a rewritten hot spot",
        )
    )
    items.append(
        Published(
            "p99.999 write latency, 128 KB region",
            0.4,
            one("hot_spot", footprint_bytes=131072).write_latency_p99999_us,
            "µs",
            "validation",
            "measures the ordinary write tail, not the hot spot: FAST'20's raw data has p99.99 = 0.37-0.39"
            " µs at every region from 256 B to 64 MiB; the model's 256 B ntstore + fence is 0.157 µs"
            " with no variance (out of scope)",
            source=S,
            where="tail latency of a rewritten hot spot",
        )
    )
    hs = one("hot_spot", footprint_bytes=256)
    # LENS (MICRO'20) counts repetitions of the whole 256 B region (four 64 B stores each).
    per_stall = hs.stored_lines / 4 / hs.migrations if hs.migrations else float("nan")
    items.append(
        Published(
            "256 B region: 256 B overwrites between stalls",
            14000,
            per_stall,
            "",
            "validation",
            "published 10-18 thousand (LENS raw trace: 13.4-18.7 k, mean 16.0 k); threshold 896 x 16"
            " media writes (VANS's 896 AIT requests carried 16 overwrites each in VANS's own run of"
            " this probe); the window's restarts give one per 16 384",
            "wang-micro20",
            "LENS wear-levelling probe",
        )
    )
    return items


def figures(out: Path, df: pd.DataFrame) -> list[Path]:
    paths: list[Path] = []
    with house_style():
        t2 = df[df.experiment == "table2"].sort_values("footprint_bytes")
        fig, ax = plt.subplots()
        x = np.arange(len(t2))
        for i, (col, lab) in enumerate(
            (
                ("wpq_inserts", "WPQ inserts"),
                ("write_requests", "write requests"),
                ("media_writes_64b", "media writes (64 B units)"),
            )
        ):
            ax.bar(x + (i - 1) * 0.27, t2[col], 0.27, label=lab)
        ax.set_xticks(x, [_size(v) for v in t2.footprint_bytes])
        ax.set_xlabel("footprint rewritten sequentially (clflush)")
        ax.set_ylabel("count")
        ax.set_title("Table 2: merging along the write path (1 thread)")
        ax.legend()
        declare_series(fig, [_size(v) for v in t2.footprint_bytes])
        paths += save_figure(fig, out, "fig_table2_merging")

        t3 = df[df.experiment == "table3"]
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        colors = color_for(FLUSHES)
        for j, fp in enumerate((256, 1024)):
            s = t3[t3.footprint_bytes == fp].set_index("flush").reindex(FLUSHES)
            axes[0].bar(
                np.arange(4) + (j - 0.5) * 0.4,
                s.wa_end_to_end,
                0.4,
                label=_size(fp),
                color=[colors[f] for f in FLUSHES],
                alpha=1.0 - 0.4 * j,
            )
            axes[1].bar(
                np.arange(4) + (j - 0.5) * 0.4,
                s.bandwidth_gb_s,
                0.4,
                label=_size(fp),
                color=[colors[f] for f in FLUSHES],
                alpha=1.0 - 0.4 * j,
            )
        for ax, lab in zip(axes, ("media bytes / stored bytes", "bandwidth (GB/s)"), strict=True):
            ax.set_xticks(range(4), FLUSHES)
            ax.set_ylabel(lab)
        axes[0].set_title("Table 3: 28 threads, own 256 B (dark) / 1 KB (light) region")
        declare_series(fig, dict.fromkeys(t3.flush))
        paths += save_figure(fig, out, "fig_table3_threads")

        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        bt = df[df.experiment.str.startswith("bw_threads")]
        for ax, dimms in zip(axes, (1, 6), strict=True):
            for pat, lab in (("seq-read", "read"), ("seq-write", "ntstore write")):
                s = bt[(bt.experiment == f"bw_threads_{pat}") & (bt.dimms == dimms)].sort_values("threads")
                ax.plot(s.threads, s.bandwidth_gb_s, marker="o", label=f"hmsim {lab}")
            pub = {1: ([4, 24], [6.5, 3.89], [1, 4, 24], [2.2, 2.2, 0.8]), 6: ([24], [38.5], [4, 24], [13.2, 7.5])}[
                dimms
            ]
            ax.plot(pub[0], pub[1], "k^", label="published read")
            ax.plot(pub[2], pub[3], "kv", label="published write")
            ax.set_xlabel("threads")
            ax.set_ylabel("bandwidth (GB/s)")
            ax.set_title(f"{dimms} DIMM{'s' if dimms > 1 else ''}")
        axes[0].legend()
        declare_series(fig, [f"{d} DIMM{'s' if d > 1 else ''}" for d in sorted(bt.dimms.unique())])
        paths += save_figure(fig, out, "fig_bandwidth_vs_threads")

        fig, ax = plt.subplots()
        pr = df[df.experiment == "xpbuffer_probe"].sort_values("footprint_bytes")
        ax.plot(pr.footprint_bytes / 1024, pr.write_amplification, marker="o", label="hmsim")
        ax.plot([0.25, 16, 20, 64], [0.80, 1.03, 1.36, 2.07], "k*", ms=9, label="published")
        log2_axis(ax)
        ax.set_xlabel("region: first halves of its XPLines, then second halves (KiB)")
        ax.set_ylabel("write amplification (media / requests)")
        ax.set_title("XPBuffer size probe, 1 DIMM")
        ax.legend()
        declare_series(fig, ["hmsim"] if len(pr) else [])
        paths += save_figure(fig, out, "fig_xpbuffer_probe")

        fig, ax = plt.subplots()
        hs = df[df.experiment == "hot_spot"].sort_values("footprint_bytes")
        ax.plot(hs.footprint_bytes / 1024, hs.write_latency_p99999_us, marker="o", label="hmsim")
        ax.plot([4, 32, 128], [50, 50, 0.4], "k*", ms=9, label="published")
        log2_axis(ax)
        ax.set_yscale("log")
        ax.set_xlabel("hot region rewritten (KiB)")
        ax.set_ylabel("p99.999 write latency (µs)")
        ax.set_title("Wear-leveling stalls")
        ax.legend()
        declare_series(fig, ["hmsim"] if len(hs) else [])
        paths += save_figure(fig, out, "fig_hot_spot_tail")
    return paths


def _wa(bt: pd.DataFrame, dimms: int, threads: int) -> float:
    """Write amplification of the sequential ntstore row with `dimms` DIMMs and `threads` threads."""
    s = bt[(bt.experiment == "bw_threads_seq-write") & (bt.dimms == dimms) & (bt.threads == threads)]
    return float(s.write_amplification.iloc[0])


def _whole_probe_passes(operations: int, region_bytes: int) -> int:
    """`operations` rounded down to whole passes of the XPBuffer probe over `region_bytes`
    (two 128 B operations per XPLine; at least one pass): LATTester's `cacheprobe_job` always
    writes both halves of the region before it stops, so no XPLine is left half written."""
    per_pass = 2 * max(region_bytes // 256, 1)
    return max(operations // per_pass, 1) * per_pass


def _size(b: int) -> str:
    return f"{b // (1 << 20)} MB" if b >= 1 << 20 else (f"{b // 1024} KB" if b >= 1024 else f"{b} B")


def _run(out: Path, quick: bool = True, workers: int | None = None) -> StudyResult:
    points = build_points(quick)
    res = run_points(points, out, workers=workers, label="pmem-wa")
    df = res.results.copy()
    df.insert(0, "table", df.experiment.map(lambda e: e if e in ("table2", "table3") else "validation"))
    comp = comparison_frame(compare(df))
    figs = figures(out, df)
    return StudyResult(
        name="pmem-wa",
        results=df,
        tables={"hot_ranges": res.tables.get("hot_ranges", pd.DataFrame())},
        comparison=comp,
        summary={"seed": 1, "points": len(points)},
        figures=figs,
    )


STUDY = register(Study("pmem-wa", "Write amplification along the Optane PMem write path", _run, source="yang-fast20"))
