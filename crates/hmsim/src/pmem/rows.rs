//! The result rows of the `pmem` module and of a trace's lifetime replay: one row per run,
//! plus the hottest 4 KiB ranges (`hot_ranges.csv`). Both rows embed the PMem counters
//! ([`PmemCounters`], as Intel PCM / ipmctl name them) and the lifetime figures
//! ([`LifetimeCols`]), in the same order.

use super::driver::{Persist, PmemPattern};
use super::lifetime::{HotRange, LifetimeReport};
use super::system::PmemCounters;
use serde::Serialize;

use crate::columns::{union, union_len};
use crate::result_row;
use crate::scenario::{to_map, Column, ColumnType, Dtype, Output, ResultRow};

impl ColumnType for PmemPattern {
    const DTYPE: Dtype = Dtype::Str;
}

impl ColumnType for Persist {
    const DTYPE: Dtype = Dtype::Str;
}

/// `a / b`, absent (an empty cell) when `b` is 0.
pub(super) fn ratio(a: f64, b: f64) -> Option<f64> {
    (b != 0.0).then(|| a / b)
}

result_row! {
    /// The lifetime a run's media writes give the DIMMs (columns of the `pmem` and lifetime
    /// rows).
    pub struct LifetimeCols {
        lifetime_years_no_wl: f64 ["years", "hottest logical line to its endurance, no wear leveling (empty: never)"],
        lifetime_years_sim_wl: f64 ["years", "hottest physical line to its endurance under the simulated AIT"],
        lifetime_years_ideal_wl: f64 ["years", "rated bytes written at this write rate (ideal leveling)"],
        rated_fraction_per_hour: f64 ["", "share of the rated bytes written one hour consumes"],
    }
}

impl From<&LifetimeReport> for LifetimeCols {
    fn from(life: &LifetimeReport) -> LifetimeCols {
        LifetimeCols {
            lifetime_years_no_wl: life.years_no_wear_leveling,
            lifetime_years_sim_wl: life.years_simulated_wear_leveling,
            lifetime_years_ideal_wl: life.years_ideal_wear_leveling,
            rated_fraction_per_hour: life.rated_fraction_per_hour,
        }
    }
}

result_row! {
    /// One `pmem` microbenchmark run (`results.csv`).
    pub struct PmemRow {
        pattern: PmemPattern ["", "access pattern"],
        threads: u32 ["threads", "threads, each on its own region"],
        footprint_bytes: u64 ["", "region each thread touches"],
        access_bytes: u64 ["", "bytes per operation"],
        flush: Persist ["", "how written lines are made durable"],
        persistence: String ["", "persistence domain: adr or eadr"],
        dimms: u32 ["DIMMs", "interleaved PMem DIMMs"],
        stored_lines: u64 ["lines", "64 B lines stored by the program"],
        loaded_lines: u64 ["lines", "64 B lines loaded by the program"],
        flushed_lines: u64 ["lines", "lines written back by flush instructions"],
        write_amplification: Option<f64> ["", "media writes per DDR-T write request (empty: no requests)"],
        wa_cache_to_wpq: Option<f64> ["", "WPQ inserts per stored line"],
        wa_wpq_to_requests: Option<f64> ["", "write requests per WPQ insert"],
        wa_end_to_end: Option<f64> ["", "media writes per stored line"],
        bandwidth_gb_s: f64 ["", "program bandwidth"],
        elapsed_s: f64 ["", "simulated time of the run"],
        write_latency_mean_ns: f64 ["", "mean write operation latency"],
        write_latency_p99_ns: f64 ["", "99th percentile write latency"],
        write_latency_p99999_us: f64 ["", "99.999th percentile write latency"],
        read_latency_mean_ns: f64 ["", "mean read operation latency"],
        max_line_media_writes: u32 ["writes", "media writes of the most written logical line"],
        counters: PmemCounters [flatten],
        lifetime: LifetimeCols [flatten],
        l1_hits: u64 ["accesses", "L1 hits"],
        l1_misses: u64 ["accesses", "L1 misses"],
        l1_writebacks: u64 ["lines", "L1 dirty evictions"],
        l2_hits: u64 ["accesses", "L2 hits"],
        l2_misses: u64 ["accesses", "L2 misses"],
        l2_writebacks: u64 ["lines", "L2 dirty evictions"],
        llc_hits: u64 ["accesses", "LLC hits"],
        llc_misses: u64 ["accesses", "LLC misses"],
        llc_writebacks: u64 ["lines", "LLC dirty evictions"],
    }
}

result_row! {
    /// The PMem cost of one replayed trace (`hmsim lifetime`, `results.csv`).
    pub struct LifetimeRow {
        trace: String ["", "trace file"],
        device: String ["", "catalog memory device of one DIMM"],
        records: u64 ["records", "trace records replayed"],
        instructions: u64 ["instructions", "instructions between the accesses"],
        program_seconds: f64 ["s", "simulated time of the program"],
        stored_bytes: Option<u64> ["", "bytes stored (empty: the format gives no store sizes)"],
        unsized_writes: u64 ["records", "stores without a size in the trace"],
        flushed_lines: u64 ["lines", "lines written back by flush records"],
        wa_stores_to_wpq: Option<f64> ["", "WPQ bytes per stored byte"],
        write_amplification: Option<f64> ["", "media writes per DDR-T write request"],
        wa_end_to_end: Option<f64> ["", "media bytes per stored byte"],
        media_bytes_per_hour: f64 ["B/h", "media write rate"],
        drain_media_share: Option<f64> ["", "share of the media writes that came from the final write-back of the caches (empty: no media writes)"],
        wl_windows: f64 ["windows", "media writes per DIMM over the AIT's wear-leveling window (below 1: leveling never completed a window)"],
        lifetime_basis: String ["", "what the lifetime rests on: steady-wear, drain-dominated, shorter-than-wl-window or no-media-writes"],
        counters: PmemCounters [flatten],
        lifetime: LifetimeCols [flatten],
    }
}

/// A row of a `pmem` run's `results.csv`: a microbenchmark's, or a trace's lifetime (a run
/// writes one kind only).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum PmemResultRow {
    Bench(Box<PmemRow>),
    Lifetime(Box<LifetimeRow>),
}

const UNION_LEN: usize = union_len(PmemRow::COLUMNS, LifetimeRow::COLUMNS);
static UNION: [Column; UNION_LEN] = union(PmemRow::COLUMNS, LifetimeRow::COLUMNS);

impl ResultRow for PmemResultRow {
    /// The microbenchmark's columns, then the lifetime columns it lacks.
    const COLUMNS: &'static [Column] = &UNION;
}

result_row! {
    /// One of the most written 4 KiB ranges (`hot_ranges.csv`).
    pub struct HotRangeRow {
        start_addr: String ["", "first byte of the range, hexadecimal"],
        bytes: u64 ["", "range size"],
        media_writes_64b: u64 ["64 B", "media writes to the range"],
        share: f64 ["", "share of all media writes"],
    }
}

impl From<&HotRange> for HotRangeRow {
    fn from(h: &HotRange) -> HotRangeRow {
        HotRangeRow {
            start_addr: format!("{:#x}", h.start_addr),
            bytes: h.bytes,
            media_writes_64b: h.media_writes_64b,
            share: h.share,
        }
    }
}

/// The hottest ranges of a lifetime report as rows.
pub(super) fn hot_range_rows(life: &LifetimeReport) -> Vec<HotRangeRow> {
    life.hottest_ranges.iter().map(HotRangeRow::from).collect()
}

/// The output of one run's `row` with the lifetime's hottest ranges (`hot_ranges.csv`) and
/// the row's `headline` columns in the headline.
pub(super) fn lifetime_output<R: ResultRow>(
    row: R,
    headline: &[&str],
    life: &LifetimeReport,
) -> Output<R> {
    let all = to_map(&row);
    let mut out = Output::new(vec![row]);
    for &k in headline {
        out.headline.insert(k.to_string(), all[k].clone());
    }
    out.table("hot_ranges", &hot_range_rows(life));
    out
}
