//! The `pmem` scenario: a microbenchmark through caches → WPQ → XPBuffer → AIT → media.

use super::config::PmemConfig;
use super::driver::{run_workload, DimmSpec, PmemWorkload};
use super::lifetime;
use super::rows::{lifetime_output, ratio, HotRangeRow, LifetimeCols, PmemRow};
use crate::cache::CacheConfig;
use crate::error::RunError;
use crate::scenario::{Column, Ctx, Output, ResultRow, Scenario};

/// The `pmem` module.
pub struct Pmem;

crate::params! {
    #[params(required)]
    /// A `pmem` scenario: the PMem system, the caches in front of it and the microbenchmark.
    #[derive(Debug, Clone)]
    pub struct PmemScenarioConfig {
        pub pmem: PmemConfig = PmemConfig::default() => nested, "", "The PMem system.";
        pub cache: CacheConfig = CacheConfig::default() => nested, "",
            "The CPU caches in front of it.";
        pub workload: PmemWorkload => nested, "", "The microbenchmark (required).";
        pub top_n: usize = 10 => range(0, 10_000), "ranges",
            "How many hottest 4 KiB ranges to report.";
    }
}

impl Scenario for Pmem {
    const MODULE: &'static str = "pmem";
    const ABOUT: &'static str =
        "Optane-class persistent memory: XPBuffer, AIT, write amplification, lifetime";
    type Config = PmemScenarioConfig;
    type Row = PmemRow;
    const TABLES: &'static [(&'static str, &'static [Column])] =
        &[("hot_ranges", HotRangeRow::COLUMNS)];

    fn run(sc: &PmemScenarioConfig, ctx: &Ctx) -> Result<Output<PmemRow>, RunError> {
        let (dev, rated) = ctx.memory_device_with_endurance(&sc.pmem.device, "pmem.device")?;
        let w = &sc.workload;
        let dimm = DimmSpec::from_rating(dev.capacity_bytes, rated);
        ctx.progress().start(1, "runs");
        let (r, m) = run_workload(&sc.pmem, &sc.cache, w, dimm, ctx.seed());
        ctx.progress().advance(1);
        let life = lifetime::of_run(
            &m.sys,
            r.elapsed_s,
            rated,
            dev.capacity_bytes as f64,
            sc.pmem.dimms,
            sc.top_n,
        );
        let c = r.counters;
        let ratio = |a: u64, b: u64| ratio(a as f64, b as f64);
        let [l1, l2, llc] = m.h.level_stats();
        let row = PmemRow {
            pattern: w.pattern,
            threads: w.threads,
            footprint_bytes: w.footprint_bytes,
            access_bytes: w.access_bytes,
            flush: w.persist,
            persistence: sc.pmem.persistence.clone(),
            dimms: sc.pmem.dimms,
            stored_lines: r.stored_lines,
            loaded_lines: r.loaded_lines,
            flushed_lines: r.flushed_lines,
            write_amplification: ratio(c.media_writes_64b, c.write_requests),
            wa_cache_to_wpq: ratio(c.wpq_inserts, r.stored_lines),
            wa_wpq_to_requests: ratio(c.write_requests, c.wpq_inserts),
            wa_end_to_end: ratio(c.media_writes_64b, r.stored_lines),
            bandwidth_gb_s: r.bandwidth_gb_s,
            elapsed_s: r.elapsed_s,
            write_latency_mean_ns: r.write_latency.mean_us * 1e3,
            write_latency_p99_ns: r.write_latency.p99_us * 1e3,
            write_latency_p99999_us: r.write_p99999_us,
            read_latency_mean_ns: r.read_latency.mean_us * 1e3,
            max_line_media_writes: r.max_logical_line_writes,
            counters: c,
            lifetime: LifetimeCols::from(&life),
            l1_hits: l1.hits,
            l1_misses: l1.misses,
            l1_writebacks: l1.writebacks,
            l2_hits: l2.hits,
            l2_misses: l2.misses,
            l2_writebacks: l2.writebacks,
            llc_hits: llc.hits,
            llc_misses: llc.misses,
            llc_writebacks: llc.writebacks,
        };
        Ok(lifetime_output(
            row,
            &[
                "write_amplification",
                "wa_end_to_end",
                "bandwidth_gb_s",
                "lifetime_years_no_wl",
                "rated_fraction_per_hour",
            ],
            &life,
        ))
    }
}
