//! The `pmem` scenario: a microbenchmark through caches → WPQ → XPBuffer → AIT → media.

use super::config::PmemConfig;
use super::driver::{run_workload, DimmSpec, PmemPattern, PmemWorkload};
use super::lifetime;
use super::replay::{replay_trace, ReplaySetup, TraceReplay};
use super::rows::{
    lifetime_output, ratio, HotRangeRow, LifetimeCols, LifetimeRow, PmemResultRow, PmemRow,
};
use crate::cache::CacheConfig;
use crate::config::{check_host_memory, Validator};
use crate::device::DeviceSpec;
use crate::error::RunError;
use crate::scenario::{Column, Ctx, Experiment, Output, ResultRow, Scenario, Step};
use crate::trace::{open_trace_watched, Format};

/// The `pmem` module.
pub struct Pmem;

crate::params! {
    #[params(check)]
    /// A `pmem` scenario: the PMem system, the caches in front of it, and what runs on it: a
    /// microbenchmark (`[workload]`) or the replay of a trace for its lifetime (`[trace]`).
    #[derive(Debug, Clone)]
    pub struct PmemScenarioConfig {
        pub pmem: PmemConfig = PmemConfig::default() => nested, "", "The PMem system.";
        pub cache: CacheConfig = CacheConfig::default() => nested, "",
            "The CPU caches in front of it.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub workload: Option<PmemWorkload> = None => nested, "",
            "The microbenchmark (give it or `[trace]`).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub trace: Option<TraceReplay> = None => nested, "",
            "A trace to replay for the media writes and lifetime it costs (`hmsim lifetime`; give it or `[workload]`).";
        pub top_n: usize = 10 => range(0, 100_000), "ranges",
            "How many hottest 4 KiB ranges to report.";
    }
}

impl PmemScenarioConfig {
    /// A scenario runs a microbenchmark or a trace, one of them.
    fn check(&self, v: &mut Validator) {
        match (&self.workload, &self.trace) {
            (None, None) => v.fail(
                "workload",
                "missing: give [workload] (a microbenchmark) or [trace] (a trace's lifetime)",
            ),
            (Some(_), Some(_)) => v.fail("trace", "give [workload] or [trace], not both"),
            _ => {}
        }
    }
}

/// Address space one wear-table chunk covers (1024 blocks of 4 KiB), and the size of a dense
/// one (16 four-byte counters per block).
const WEAR_CHUNK_SPAN: u64 = 4 << 20;
const WEAR_CHUNK_BYTES: u64 = 64 << 10;
/// Host memory per line of a sparse wear-table chunk, at least (8 B slots, at most half used).
const WEAR_SPARSE_LINE_BYTES: u64 = 16;

/// Host memory a write workload's wear counters need at least, bytes (an estimate, a lower
/// bound): each thread's writes touch wear-table chunks in its own region, times
/// `workload.threads` when the regions do not overlap. Sequential writes fill their chunks
/// (dense: 64 KiB per full 4 MiB of address written); random writes take at least half of
/// `min(operations, footprint / 4 MiB)` chunks and half of `min(operations, footprint /
/// 256 B)` lines, each chunk no smaller than the lines in it cost sparse (16 B each) or
/// dense (64 KiB). Reads, the caches and the remap tables come on top.
pub(super) fn host_memory_estimate(w: &PmemWorkload) -> u64 {
    let chunks_in = |bytes: u64| bytes.div_ceil(WEAR_CHUNK_SPAN);
    let full_chunks = |bytes: u64| bytes / WEAR_CHUNK_SPAN * WEAR_CHUNK_BYTES;
    let per_thread = match w.pattern {
        PmemPattern::SeqWrite => full_chunks(
            w.operations
                .saturating_mul(w.access_bytes)
                .min(w.footprint_bytes),
        ),
        PmemPattern::XplineHalves => {
            full_chunks(w.operations.saturating_mul(256).min(w.footprint_bytes))
        }
        PmemPattern::RandWrite => {
            let chunks = w.operations.min(chunks_in(w.footprint_bytes)) / 2;
            let lines = w.operations.min(w.footprint_bytes / 256) / 2;
            chunks
                .saturating_mul(WEAR_CHUNK_BYTES)
                .min(lines.saturating_mul(WEAR_SPARSE_LINE_BYTES))
        }
        PmemPattern::SeqRead | PmemPattern::RandRead => 0,
    };
    let disjoint = w.region_stride_bytes.is_none_or(|s| s >= w.footprint_bytes);
    let threads = if disjoint { w.threads as u64 } else { 1 };
    per_thread.saturating_mul(threads)
}

impl Scenario for Pmem {
    const MODULE: &'static str = "pmem";
    const ABOUT: &'static str =
        "Optane-class persistent memory: XPBuffer, AIT, write amplification, lifetime";
    type Config = PmemScenarioConfig;
    type Row = PmemResultRow;
    const DOCS: &'static str = "pmem.md";
    const STUDY: &'static str = "pmem-wa";
    const SWEEP_METRICS: &'static [&'static str] =
        &["wa_end_to_end", "media_writes_64b", "bandwidth_gb_s"];
    const TABLES: &'static [(&'static str, &'static [Column])] =
        &[("hot_ranges", HotRangeRow::COLUMNS)];

    type Experiment<'a> = PmemRun<'a>;

    fn build<'a>(sc: &'a PmemScenarioConfig, ctx: &Ctx<'a>) -> Result<PmemRun<'a>, RunError> {
        let (dev, rated) = ctx.memory_device_with_endurance(&sc.pmem.device, "pmem.device")?;
        if let Some(w) = &sc.workload {
            check_host_memory(
                host_memory_estimate(w),
                "the wear table",
                &format!(
                    " for {} threads writing {} operations each over {} bytes (workload.threads, \
                     workload.operations)",
                    w.threads, w.operations, w.footprint_bytes
                ),
            )
            .map_err(|e| ctx.error("workload.footprint_bytes", e))?;
        }
        let format = match sc.trace.as_ref().and_then(|t| t.format.as_deref()) {
            Some(f) => Some(
                f.parse::<Format>()
                    .map_err(|e| ctx.error("trace.format", e))?,
            ),
            None => None,
        };
        Ok(PmemRun {
            sc,
            device: dev,
            rated,
            format,
        })
    }
}

/// One run on the scenario's device: its microbenchmark, or the replay of its trace.
pub struct PmemRun<'a> {
    sc: &'a PmemScenarioConfig,
    device: &'a DeviceSpec,
    /// The device's rated bytes written.
    rated: f64,
    /// The trace's format, when the scenario names it.
    format: Option<Format>,
}

impl Experiment for PmemRun<'_> {
    type Point = ();
    type Row = PmemResultRow;

    fn unit(&self) -> &'static str {
        "runs"
    }

    fn points(&self) -> Vec<()> {
        vec![()]
    }

    fn run_point(
        &mut self,
        (): (),
        ctx: &Ctx,
        out: &mut Output<PmemResultRow>,
    ) -> Result<Step<()>, RunError> {
        let run = match (&self.sc.workload, &self.sc.trace) {
            (Some(w), _) => self
                .microbenchmark(w, ctx)
                .map_rows(|r| PmemResultRow::Bench(Box::new(r))),
            (None, Some(t)) => self
                .replay(t, ctx)?
                .map_rows(|r| PmemResultRow::Lifetime(Box::new(r))),
            (None, None) => unreachable!("the configuration's check asks for one of them"),
        };
        out.append(run);
        out.warnings
            .extend(ctx.pmem_device_warning(&self.sc.pmem.device, "pmem.device"));
        Ok(Step::Done)
    }
}

impl PmemRun<'_> {
    /// Replay the trace `t` for its lifetime.
    fn replay(&self, t: &TraceReplay, ctx: &Ctx) -> Result<Output<LifetimeRow>, RunError> {
        let sc = self.sc;
        let mut reader = open_trace_watched(&ctx.path(&t.path), self.format, ctx.progress())?;
        let setup = ReplaySetup {
            pmem: &sc.pmem,
            cache: &sc.cache,
            trace: t,
            top_n: sc.top_n,
            seed: ctx.seed(),
            device: self.device,
            rated: self.rated,
        };
        replay_trace(&mut reader, &t.path, &setup)
    }

    /// Run the microbenchmark `w`.
    fn microbenchmark(&self, w: &PmemWorkload, ctx: &Ctx) -> Output<PmemRow> {
        let (sc, rated) = (self.sc, self.rated);
        let capacity_bytes = self.device.capacity_bytes;
        let dimm = DimmSpec::from_rating(capacity_bytes, rated);
        let (r, m) = run_workload(&sc.pmem, &sc.cache, w, dimm, ctx.seed());
        let life = lifetime::of_run(
            &m.sys,
            r.elapsed_s,
            rated,
            capacity_bytes as f64,
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
            write_latency_mean_ns: r.write_latency.mean * 1e3,
            write_latency_p99_ns: r.write_latency.p99 * 1e3,
            write_latency_p99999_us: r.write_p99999_us,
            read_latency_mean_ns: r.read_latency.mean * 1e3,
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
        lifetime_output(
            row,
            &[
                "write_amplification",
                "wa_end_to_end",
                "bandwidth_gb_s",
                "lifetime_years_no_wl",
                "rated_fraction_per_hour",
            ],
            &life,
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::registry::run_scenario;

    #[test]
    fn wear_tables_beyond_host_memory_are_refused_before_allocating() {
        // 1024 threads each writing 10^8 random lines of 1 TiB: half of them at least, 16 B
        // each in sparse chunks, 800 MB a thread.
        let text = "module = \"pmem\"\nseed = 1\n[workload]\npattern = \"rand-write\"\nthreads = 1024\nfootprint_bytes = 1099511627776\noperations = 100000000\n";
        let e = run_scenario(text, "p.toml", &[], &[]).unwrap_err();
        assert_eq!(e.key, "workload.footprint_bytes", "{e}");
        assert!(e.message.contains("1024 threads"), "{e}");
        assert!(e.message.contains("HMSIM_ALLOW_LARGE"), "{e}");
        for ex in ["pmem-28-threads-clwb.toml", "pmem-clwb-hotspot.toml"] {
            let path = format!("{}/../../examples/{ex}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(path).unwrap();
            let cfg = crate::scenario::parse_config::<super::Pmem>(&text);
            assert!(
                super::host_memory_estimate(cfg.workload.as_ref().unwrap()) < 256 << 20,
                "{ex}"
            );
        }
    }

    /// The lifetime of a trace is a mode of the scenario: `[trace]` (relative to the
    /// scenario's folder) instead of `[workload]`, exactly one of them.
    #[test]
    fn a_trace_replaces_the_microbenchmark() {
        let dir = std::env::temp_dir().join(format!("hmsim-pmem-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lines: String = (0..2048).map(|i| format!("{:#x} W\n", i * 64)).collect();
        std::fs::write(dir.join("w.vans"), lines).unwrap();
        let file = dir.join("s.toml").display().to_string();
        let text =
            "module = \"pmem\"\n[pmem]\ndimms = 1\n[trace]\npath = \"w.vans\"\nformat = \"vans\"\n";
        let out = run_scenario(text, &file, &[], &[]).unwrap();
        let row = &out.rows[0];
        assert_eq!(row["records"], 2048);
        assert_eq!(row["trace"], "w.vans");
        assert_eq!(row["lifetime_basis"], "drain-dominated");
        assert!(row.get("pattern").is_none());
        let both = format!(
            "{text}[workload]\npattern = \"seq-write\"\nfootprint_bytes = 4096\noperations = 10\n"
        );
        let e = run_scenario(&both, &file, &[], &[]).unwrap_err();
        assert_eq!(e.key, "trace", "{e}");
        let e = run_scenario("module = \"pmem\"\n", &file, &[], &[]).unwrap_err();
        assert_eq!(e.key, "workload", "{e}");
        let bad = text.replace("\"vans\"", "\"vanz\"");
        let e = run_scenario(&bad, &file, &[], &[]).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("trace.format", Some(6)), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A user's device that changes media figures the PMem write path takes from
    /// `[pmem.timing]` runs with one warning naming them; the built-in device warns of none.
    #[test]
    fn media_figures_a_users_file_sets_are_named_in_a_warning() {
        let dir = std::env::temp_dir().join(format!("hmsim-pmem-warn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dev = "name = \"my-pmem\"\nbase = \"optane-pmem\"\n[write]\nbandwidth_gb_s = 1.1\n";
        std::fs::write(dir.join("my-pmem.toml"), dev).unwrap();
        let text = "module = \"pmem\"\n[pmem]\ndevice = \"my-pmem\"\n[workload]\npattern = \"seq-write\"\nfootprint_bytes = 4096\noperations = 1000\n";
        let out = run_scenario(text, "p.toml", &[], std::slice::from_ref(&dir)).unwrap();
        let builtin = text.replace("my-pmem", "optane-pmem");
        let quiet = run_scenario(&builtin, "p.toml", &[], std::slice::from_ref(&dir)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let w: Vec<&String> = out
            .warnings
            .iter()
            .filter(|w| w.starts_with("pmem.device"))
            .collect();
        assert_eq!(w.len(), 1, "{:?}", out.warnings);
        assert!(w[0].contains("write.bandwidth_gb_s ("), "{w:?}");
        assert!(w[0].contains("my-pmem.toml:4"), "{w:?}");
        assert!(w[0].contains("media_write_gb_s"), "{w:?}");
        assert!(
            !quiet.warnings.iter().any(|w| w.starts_with("pmem.device")),
            "{:?}",
            quiet.warnings
        );
    }
}
