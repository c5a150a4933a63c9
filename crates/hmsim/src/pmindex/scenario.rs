//! The `pm-index` scenario: one index, one YCSB workload, through the cache + PMem model
//! (per-operation flushes, fences, LLC misses, WPQ inserts, write requests, media writes, WA,
//! lifetime cost) plus real throughput on this machine; optionally a crash-consistency run.

use serde_json::json;

use super::crash::{crash_test, CrashReport};
use super::index::TonicOpts;
use super::key::KeyType;
use super::measure::{cost_row, measure, real_thread_rows, real_throughput};
use super::region::{CrashCapture, RegionConfig};
use super::registry;
use super::rows::{CrashRow, PmIndexRow, RealThreadsRow};
use super::shared::{DEFAULT_SHARDS, MAX_SHARDS};
use super::testing::random_ops;
use super::ycsb::{load_ops, run_ops, Distribution, YcsbSpec, YcsbWorkload};
use crate::cache::CacheConfig;
use crate::config::{check_host_memory, Validator};
use crate::error::RunError;
use crate::pmem::{DimmSpec, PmemConfig};
use crate::scenario::{to_map, Column, Ctx, Output, ResultRow, Scenario};

/// The `pm-index` module.
pub struct PmIndexStudy;

crate::params! {
    #[params(required)]
    /// The index under test.
    #[derive(Debug, Clone)]
    pub struct IndexSection {
        pub name: String => any, "", "A registered index (docs/pm-index.md lists them).";
        pub key_type: KeyType = KeyType::Int => any, "",
            "Key type: `int` (8-byte integers) or `string`; the index must support it.";
        pub capacity_hint: u64 = 1024 => range(1, 1 << 36), "keys",
            "Expected keys at creation (indexes grow past it, resizing as they do).";
        pub tonic: TonicOpts = TonicOpts::default() => any, "",
            "Tonic's per-index optimizations: `no_bloat`, `evict_volatile`, `xpline_nodes` (docs/pm-index.md).";
    }
}

crate::params! {
    /// The YCSB workload.
    #[derive(Debug, Clone)]
    pub struct WorkloadSection {
        pub kind: YcsbWorkload = YcsbWorkload::Load => any, "",
            "YCSB workload: `load`, `a`, `b`, `c` or `e` (scans; ordered indexes only).";
        pub distribution: Distribution = Distribution::Uniform => any, "",
            "Key popularity of the run phase: `uniform` or `zipfian`.";
        pub zipf_theta: f64 = 0.99 => range(0.01, 0.999), "", "Skew of the zipfian distribution.";
        pub records: u64 = 100_000 => range(1, 1 << 32), "keys", "Keys inserted by the load phase.";
        pub operations: u64 = 100_000 => range(1, 1 << 32), "operations",
            "Run-phase operations (A/B/C/E).";
        pub threads: u32 = 1 => range(1, 256), "threads",
            "Simulated threads (operations interleave round-robin over the model's cores).";
        pub scan_max: usize = 100 => range(1, 10_000), "keys", "Longest scan of workload e.";
    }
}

crate::params! {
    /// The cache + PMem model the events run through.
    #[derive(Debug, Clone)]
    pub struct ModelSection {
        pub pmem: PmemConfig = PmemConfig::default() => nested, "", "The PMem model (docs/pmem.md).";
        pub cache: CacheConfig = CacheConfig::default() => nested, "", "The cache hierarchy.";
    }
}

crate::params! {
    #[params(check)]
    /// What is timed on this machine.
    #[derive(Debug, Clone)]
    pub struct ThroughputSection {
        pub measure: bool = true => any, "",
            "Time the workload on this machine without the model (real instructions if `pm.hardware_flush`).";
        pub repeats: u32 = 3 => any, "",
            "Timed runs (each on a fresh index); the best is reported (a shared machine's noise only ever slows a run down).";
        pub real_threads: Vec<u32> = Vec::new() => any, "OS threads",
            "Also time the measured phase on each of these numbers of OS threads (1 to 256), through a sharded index (no model, wall clock): table `real_threads`.";
        pub shards: usize = DEFAULT_SHARDS => any, "",
            "Shards of that sharded index (a power of two, at most the maximum).";
    }
}

impl ThroughputSection {
    fn check(&self, v: &mut Validator) {
        for &t in &self.real_threads {
            v.range("real_threads", t, 1, 256, "OS threads");
        }
        let s = self.shards;
        if !(s.is_power_of_two() && s <= MAX_SHARDS) {
            v.fail(
                "shards",
                format!("must be a power of two in 1..={MAX_SHARDS}, got {s}"),
            );
        }
    }
}

crate::params! {
    /// A crash-consistency run instead of the cost measurement.
    #[derive(Debug, Clone)]
    pub struct CrashSection {
        pub operations: usize = 2000 => range(1, 10_000_000), "operations",
            "Random operations (insert-heavy, with updates, deletes, lookups, scans).";
        pub key_space: u64 = 1000 => range(1, 1 << 40), "keys", "Keys the operations draw from.";
        pub probability: f64 = 1.0 => range(0.0, 1.0), "", "Share of persist points crashed at (1 = all).";
        pub adversarial: bool = true => any, "",
            "Run the strict and the adversarial image mode (else strict only).";
    }
}

crate::params! {
    /// The rate and modules a lifetime in years is stated for.
    #[derive(Debug, Clone)]
    pub struct LifetimeSection {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub inserts_per_s: Option<f64> = None => range(1e-9, 1e15), "inserts/s",
            "Sustained insert rate; default: the simulated insert rate (the index inserting without pause).";
        pub modules: u32 = 1 => range(1, 4096), "modules",
            "PMem modules of `model.pmem.device` the writes are spread over (ideal wear leveling).";
    }
}

crate::params! {
    #[params(required, check)]
    /// A `pm-index` scenario: the region, the index, the workload, the model, and what to
    /// measure on this machine (or a crash-consistency run instead).
    #[derive(Debug, Clone)]
    pub struct PmIndexConfig {
        pub pm: RegionConfig = RegionConfig::default() => nested, "", "How the region persists.";
        pub index: IndexSection => nested, "", "The index under test.";
        pub workload: WorkloadSection = WorkloadSection::default() => nested, "", "The YCSB workload.";
        pub model: ModelSection = ModelSection::default() => nested, "",
            "The cache + PMem model.";
        pub throughput: ThroughputSection = ThroughputSection::default() => nested, "",
            "What is timed on this machine.";
        pub lifetime: LifetimeSection = LifetimeSection::default() => nested, "",
            "What the lifetime in years assumes.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub crash: Option<CrashSection> = None => nested, "",
            "A crash-consistency run instead of the cost measurement.";
    }
}

impl PmIndexConfig {
    /// The index's name, its key type and the workload together.
    fn check(&self, v: &mut Validator) {
        match registry::find(&self.index.name) {
            Err(e) => v.fail("index.name", e),
            Ok(spec) => {
                if !spec.key_types.contains(&self.index.key_type) {
                    v.fail(
                        "index.key_type",
                        format!(
                            "'{}' does not support {} keys",
                            spec.name,
                            self.index.key_type.name()
                        ),
                    );
                }
                if self.workload.kind == YcsbWorkload::E && !spec.ordered() {
                    v.fail(
                        "workload.kind",
                        format!(
                            "workload e scans ranges; '{}' is a hash index (pick an ordered index)",
                            spec.name
                        ),
                    );
                }
            }
        }
    }
}

/// Host memory a workload run needs at least, bytes (an estimate, a lower bound): the load
/// phase's operations (`workload.records` × the size of one operation), the run phase's
/// (`workload.operations` × the same, unless the workload is `load`) and the index holding
/// every loaded key and its 8-byte value (`workload.records` × (key + 8 B)); the index's own
/// nodes, the cache model and the PM image come on top.
pub fn host_memory_estimate(sc: &PmIndexConfig) -> u64 {
    let w = &sc.workload;
    let op = std::mem::size_of::<super::ops::Op>() as u64;
    let key = match sc.index.key_type {
        KeyType::Int => 8,
        KeyType::Str => 24,
    };
    let run = if w.kind == YcsbWorkload::Load {
        0
    } else {
        w.operations.saturating_mul(op)
    };
    w.records.saturating_mul(op + key + 8).saturating_add(run)
}

impl Scenario for PmIndexStudy {
    const MODULE: &'static str = "pm-index";
    const ABOUT: &'static str =
        "persistent indexes on simulated PM: flushes, crash consistency, throughput";
    type Config = PmIndexConfig;
    type Row = PmIndexRow;
    const TABLES: &'static [(&'static str, &'static [Column])] =
        &[("real_threads", RealThreadsRow::COLUMNS)];

    fn run(sc: &PmIndexConfig, ctx: &Ctx) -> Result<Output<PmIndexRow>, RunError> {
        let spec = registry::find(&sc.index.name)
            .map_err(|e| RunError::config(ctx.file(), "index.name", e))?;
        let (dev, rated) =
            ctx.memory_device_with_endurance(&sc.model.pmem.device, "model.pmem.device")?;
        let device_warning = ctx.pmem_device_warning(&sc.model.pmem.device, "model.pmem.device");
        let seed = ctx.seed();
        let fail = |e: String| RunError::config(ctx.file(), "index", format!("run failed: {e}"));
        if let Some(c) = &sc.crash {
            let ops = random_ops(sc.index.key_type, c.operations, c.key_space, seed);
            let modes: &[bool] = if c.adversarial {
                &[false, true]
            } else {
                &[false]
            };
            let reports: Vec<CrashReport> = modes
                .iter()
                .map(|&adversarial| {
                    let cap = CrashCapture {
                        probability: c.probability,
                        adversarial,
                    };
                    crash_test(
                        spec,
                        sc.index.key_type,
                        sc.index.tonic,
                        &sc.pm,
                        &ops,
                        cap,
                        seed,
                    )
                })
                .collect();
            let failures: u64 = reports.iter().map(|r| r.failures).sum();
            let images: u64 = reports.iter().map(|r| r.images_checked).sum();
            let mut out = Output::new(
                reports
                    .iter()
                    .map(|r| PmIndexRow::Crash(CrashRow::from(r)))
                    .collect(),
            );
            out.headline
                .insert("crash_failures".into(), json!(failures));
            out.headline.insert("images_checked".into(), json!(images));
            out.warnings.extend(device_warning);
            return Ok(out);
        }
        let w = &sc.workload;
        let need = host_memory_estimate(sc);
        check_host_memory(need, "the index", &format!(" for {} records", w.records))
            .map_err(|e| ctx.error("workload.records", e))?;
        let y = YcsbSpec {
            workload: w.kind,
            key_type: sc.index.key_type,
            distribution: w.distribution,
            zipf_theta: w.zipf_theta,
            records: w.records,
            operations: w.operations,
            scan_max: w.scan_max,
        };
        let load = load_ops(&y, seed);
        let run_o = if w.kind == YcsbWorkload::Load {
            Vec::new()
        } else {
            run_ops(&y, seed)
        };
        let dimm = DimmSpec::from_rating(dev.capacity_bytes, rated);
        let m = measure(sc, seed, spec, dimm, &load, &run_o).map_err(fail)?;
        let tput = if sc.throughput.measure {
            let mut best: f64 = 0.0;
            for _ in 0..sc.throughput.repeats {
                best = best.max(real_throughput(sc, spec, &load, &run_o).map_err(fail)?);
            }
            Some(best)
        } else {
            None
        };
        let row = cost_row(sc, spec, &m, tput, rated);
        let all = to_map(&row);
        let mut out = Output::new(vec![PmIndexRow::Cost(Box::new(row))]);
        if !sc.throughput.real_threads.is_empty() {
            let rows = real_thread_rows(sc, spec, &load, &run_o, m.ops).map_err(fail)?;
            out.table("real_threads", &rows);
        }
        for k in [
            "flushes_per_op",
            "media_writes_64b_per_op",
            "write_amplification",
            "throughput_mops",
        ] {
            out.headline.insert(k.into(), all[k].clone());
        }
        out.warnings.extend(device_warning);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::registry::run_scenario;

    fn scenario(extra: &str) -> String {
        format!("module = \"pm-index\"\nseed = 3\n[index]\nname = \"p-clht\"\n{extra}")
    }

    fn num(row: &serde_json::Map<String, serde_json::Value>, k: &str) -> f64 {
        row[k].as_f64().unwrap_or_else(|| panic!("{k} missing"))
    }

    #[test]
    fn load_rows_have_the_study_columns_and_are_deterministic() {
        let text = scenario("[workload]\nrecords = 3000\n");
        let a = run_scenario(&text, "s.toml", &[], &[]).unwrap();
        let b = run_scenario(&text, "s.toml", &[], &[]).unwrap();
        let (ra, rb) = (&a.rows[0], &b.rows[0]);
        for k in [
            "flushes_per_op",
            "fences_per_op",
            "llc_misses_per_op",
            "wpq_inserts_per_op",
            "media_writes_64b_per_op",
            "write_amplification",
            "inserts_per_module",
        ] {
            assert_eq!(ra[k], rb[k], "{k} differs between identical runs");
        }
        // One flush per insert plus the resizes' table flushes; two fences per insert.
        let f = num(ra, "flushes_per_op");
        assert!((1.0..3.0).contains(&f), "{f}");
        assert!(num(ra, "fences_per_op") >= 2.0);
        // The key is nt-stored, or a new overflow bucket's link (RECIPE's movnt64); each
        // resize adds the nt-stored root.
        assert!((1.0..=1.01).contains(&num(ra, "ntstores_per_op")));
        // Every flushed dirty line and ntstore is a WPQ insert; evictions add more.
        assert!(num(ra, "wpq_inserts_per_op") >= 1.0);
        assert!(ra["throughput_mops"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn ycsb_c_reads_persist_and_write_nothing() {
        let text = scenario("[workload]\nkind = \"c\"\nrecords = 2000\noperations = 2000\n");
        let out = run_scenario(&text, "s.toml", &[], &[]).unwrap();
        let r = &out.rows[0];
        assert_eq!(
            (num(r, "flushes_per_op"), num(r, "fences_per_op")),
            (0.0, 0.0)
        );
        // The load's dirty lines are drained before the run phase is measured.
        assert_eq!(num(r, "wpq_inserts_per_op"), 0.0);
    }

    #[test]
    fn an_index_beyond_host_memory_is_refused_before_allocating() {
        let text = scenario("[workload]\nrecords = 4294967296\n");
        let e = run_scenario(&text, "s.toml", &[], &[]).unwrap_err();
        assert_eq!(e.key, "workload.records", "{e}");
        assert!(e.line.is_some(), "{e}");
        assert!(e.message.contains("for 4294967296 records"), "{e}");
        assert!(e.message.contains("HMSIM_ALLOW_LARGE"), "{e}");
        // The shipped examples are far below any machine's memory.
        for ex in ["pm-index-ycsb-a.toml", "pm-index-crash.toml"] {
            let path = format!("{}/../../examples/{ex}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(path).unwrap();
            let cfg = crate::scenario::parse_config::<super::PmIndexStudy>(&text);
            assert!(super::host_memory_estimate(&cfg) < 256 << 20, "{ex}");
        }
    }

    #[test]
    fn bad_input_names_the_key() {
        let e = run_scenario(
            &scenario("").replace("p-clht", "p-clhtt"),
            "s.toml",
            &[],
            &[],
        )
        .unwrap_err();
        assert_eq!(e.key, "index.name");
        assert!(e.message.contains("allowed: p-clht, cceh"), "{}", e.message);
        let e =
            run_scenario(&scenario("[workload]\nkind = \"e\"\n"), "s.toml", &[], &[]).unwrap_err();
        assert_eq!(e.key, "workload.kind");
        let e =
            run_scenario(&scenario("[workload]\nthreads = 0\n"), "s.toml", &[], &[]).unwrap_err();
        assert_eq!(e.key, "workload.threads");
    }

    #[test]
    fn real_thread_rows_say_what_they_are() {
        let text = format!(
            "{}[workload]\nkind = \"a\"\nrecords = 2000\noperations = 2000\n\
             [throughput]\nmeasure = false\nrepeats = 1\nreal_threads = [1, 3]\nshards = 8\n",
            scenario("").replace("p-clht", "fast-fair")
        );
        let out = run_scenario(&text, "s.toml", &[], &[]).unwrap();
        let t = &out.tables["real_threads"];
        assert_eq!(t.len(), 2);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        for (r, threads) in t.iter().zip([1, 3]) {
            assert_eq!(
                (&r["source"], &r["clock"]),
                (&"real".into(), &"wall".into())
            );
            assert_eq!(r["os_threads"], threads);
            assert_eq!(r["oversubscribed"], threads > cores);
            assert_eq!(
                (r["ops"].as_u64(), r["shards"].as_u64()),
                (Some(2000), Some(8))
            );
            assert!(num(r, "throughput_mops") > 0.0);
            // Each thread's CPU time fits in its own wall interval: at most one core each.
            let used = num(r, "cores_used");
            assert!(used > 0.0 && used <= threads as f64 * 1.001, "{used}");
            let waits = num(r, "lock_waits_per_op");
            assert!(
                if threads == 1 {
                    waits == 0.0
                } else {
                    waits < 1.0
                },
                "{waits}"
            );
        }
        assert!(out.rows[0]["throughput_mops"].is_null());
        let e =
            run_scenario(&scenario("[throughput]\nshards = 48\n"), "s.toml", &[], &[]).unwrap_err();
        assert_eq!(e.key, "throughput.shards");
        let e = run_scenario(
            &scenario("[throughput]\nreal_threads = [0]\n"),
            "s.toml",
            &[],
            &[],
        )
        .unwrap_err();
        assert_eq!(e.key, "throughput.real_threads");
    }

    #[test]
    fn crash_runs_report_no_failures() {
        let text = scenario("key_type = \"string\"\n[crash]\noperations = 300\nkey_space = 100\n");
        let out = run_scenario(&text, "s.toml", &[], &[]).unwrap();
        assert_eq!(out.rows.len(), 2);
        assert_eq!(out.headline["crash_failures"], 0);
        assert!(out.headline["images_checked"].as_u64().unwrap() > 300);
    }
}
