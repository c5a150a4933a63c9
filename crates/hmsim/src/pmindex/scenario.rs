//! The `pm-index` scenario: one index, one YCSB workload, through the cache + PMem model
//! (per-operation flushes, fences, LLC misses, WPQ inserts, write requests, media writes, WA,
//! lifetime cost) plus real throughput on this machine; optionally a crash-consistency run.

use serde_json::json;

use super::config::PmIndexConfig;
use super::crash::{crash_test, CrashReport};
use super::index::IndexSpec;
use super::key::KeyType;
use super::measure::{
    cost_row, measure, native_key, real_thread_rows, real_throughput, timed_phase, Measured,
};
use super::mem::catch_exhausted;
use super::ops::{random_ops, Op};
use super::region::CrashCapture;
use super::registry;
use super::rows::{CrashRow, PmIndexRow, RealThreadsRow};
use super::timings;
use super::ycsb::{load_ops, run_ops, YcsbSpec, YcsbWorkload};
use crate::config::check_host_memory;
use crate::error::RunError;
use crate::pmem::DimmSpec;
use crate::scenario::{to_map, Column, Ctx, Experiment, Output, ResultRow, Scenario, Step};

/// The `pm-index` module.
pub(crate) struct PmIndexStudy;

/// Host memory a workload run needs at least, bytes (an estimate, a lower bound): the load
/// phase's operations (`workload.records` × the size of one operation), the run phase's
/// (`workload.operations` × the same, unless the workload is `load`) and the index holding
/// every loaded key and its 8-byte value (`workload.records` × (key + 8 B)); the index's own
/// nodes, the cache model and the PM image come on top.
pub(crate) fn host_memory_estimate(sc: &PmIndexConfig) -> u64 {
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
    const DOCS: &'static str = "pm-index.md";
    const STUDY: &'static str = "pm-index";
    const SWEEP_METRICS: &'static [&'static str] =
        &["media_bytes_per_op", "flushes_per_op", "throughput_mops"];
    const TABLES: &'static [(&'static str, &'static [Column])] =
        &[("real_threads", RealThreadsRow::COLUMNS)];
    // Every workload and distribution loads the same records first (`loaded` keeps them);
    // how often and how much of the native run is timed changes nothing the model loads.
    const SAME_START_KEYS: &'static [&'static str] = &[
        "workload.kind",
        "workload.distribution",
        "throughput.repeats",
        "throughput.timed_ops",
    ];

    type Experiment<'a> = PmIndexRun<'a>;

    fn build<'a>(sc: &'a PmIndexConfig, ctx: &Ctx<'a>) -> Result<PmIndexRun<'a>, RunError> {
        let spec = registry::find(&sc.index.name)
            .map_err(|e| RunError::config(ctx.file(), "index.name", e))?;
        let (dev, rated) =
            ctx.memory_device_with_endurance(&sc.model.pmem.device, "model.pmem.device")?;
        let device_warning = ctx.pmem_device_warning(&sc.model.pmem.device, "model.pmem.device");
        let seed = ctx.seed();
        let mode = if let Some(c) = &sc.crash {
            Mode::Crash {
                ops: random_ops(sc.index.key_type, c.operations, c.key_space, seed),
                reports: Vec::new(),
            }
        } else {
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
            let run = if w.kind == YcsbWorkload::Load {
                Vec::new()
            } else {
                run_ops(&y, seed)
            };
            Mode::Cost {
                load,
                run,
                dimm: DimmSpec::from_rating(dev.capacity_bytes, rated),
                measured: None,
                native: native_key(sc, spec, &y, seed),
                repeats_done: 0,
                throughput_mops: None,
            }
        };
        Ok(PmIndexRun {
            sc,
            spec,
            rated,
            device_warning,
            mode,
        })
    }
}

/// One point of a pm-index run.
pub(crate) enum PmIndexPoint {
    /// A crash-consistency run, adversarial or not.
    Crash { adversarial: bool },
    /// The cache + PMem model's measurement of the workload.
    Measure,
    /// One timed repeat of the workload on this host.
    Repeat,
    /// The workload on real threads.
    RealThreads,
}

/// What a pm-index run does: crash tests, or the workload's cost and throughput.
enum Mode {
    Crash {
        ops: Vec<Op>,
        reports: Vec<CrashReport>,
    },
    Cost {
        load: Vec<Op>,
        run: Vec<Op>,
        dimm: DimmSpec,
        measured: Option<Box<Measured>>,
        /// What the timed repeats run (`timings`: points running the same share them).
        native: String,
        repeats_done: usize,
        /// The best of the timed repeats so far.
        throughput_mops: Option<f64>,
    },
}

/// One index under one workload (or crash test).
pub(crate) struct PmIndexRun<'a> {
    sc: &'a PmIndexConfig,
    spec: &'static IndexSpec,
    /// The device's rated bytes written.
    rated: f64,
    device_warning: Option<String>,
    mode: Mode,
}

impl Experiment for PmIndexRun<'_> {
    type Point = PmIndexPoint;
    type Row = PmIndexRow;

    fn unit(&self) -> &'static str {
        match self.mode {
            Mode::Crash { .. } => "crash modes",
            Mode::Cost { .. } => "steps",
        }
    }

    fn points(&self) -> Vec<PmIndexPoint> {
        match &self.mode {
            Mode::Crash { .. } => {
                let adversarial = self.sc.crash.as_ref().is_some_and(|c| c.adversarial);
                let mut points = vec![PmIndexPoint::Crash { adversarial: false }];
                if adversarial {
                    points.push(PmIndexPoint::Crash { adversarial: true });
                }
                points
            }
            Mode::Cost { .. } => {
                let t = &self.sc.throughput;
                let mut points = Vec::new();
                if t.model {
                    let repeats = if t.measure { t.repeats } else { 0 };
                    points.push(PmIndexPoint::Measure);
                    points.extend((0..repeats).map(|_| PmIndexPoint::Repeat));
                }
                if !t.real_threads.is_empty() {
                    points.push(PmIndexPoint::RealThreads);
                }
                points
            }
        }
    }

    fn run_point(
        &mut self,
        point: PmIndexPoint,
        ctx: &Ctx,
        out: &mut Output<PmIndexRow>,
    ) -> Result<Step<PmIndexPoint>, RunError> {
        // A region that cannot grow inside an index operation unwinds to here (see
        // `mem::exhausted`): the user gets its message, not a panic.
        catch_exhausted(|| self.run_point_in(point, ctx, out))
            .unwrap_or_else(|e| Err(run_failed(ctx, e)))
    }

    fn finish(self, mut out: Output<PmIndexRow>) -> Result<Output<PmIndexRow>, RunError> {
        match self.mode {
            Mode::Crash { reports, .. } => {
                let failures: u64 = reports.iter().map(|r| r.failures).sum();
                let images: u64 = reports.iter().map(|r| r.images_checked).sum();
                out.rows
                    .extend(reports.iter().map(|r| PmIndexRow::Crash(CrashRow::from(r))));
                out.headline
                    .insert("crash_failures".into(), json!(failures));
                out.headline.insert("images_checked".into(), json!(images));
            }
            Mode::Cost {
                measured: Some(m),
                throughput_mops,
                ..
            } => {
                let row = cost_row(self.sc, self.spec, &m, throughput_mops, self.rated);
                let all = to_map(&row);
                out.rows.push(PmIndexRow::Cost(Box::new(row)));
                for k in [
                    "flushes_per_op",
                    "media_writes_64b_per_op",
                    "write_amplification",
                    "throughput_mops",
                ] {
                    out.headline.insert(k.into(), all[k].clone());
                }
            }
            // Only real threads timed (`throughput.model = false`): their table, no row; said
            // in the output, so an empty results.csv is not taken for a failed run.
            Mode::Cost { measured: None, .. } if !self.sc.throughput.model => {
                out.warnings.push(
                    "throughput.model = false: the model did not run, so there is no result row; \
                     the real-thread timings are in table real_threads"
                        .into(),
                );
            }
            Mode::Cost { measured: None, .. } => {
                unreachable!("the measurement is the first point of a cost run")
            }
        }
        out.warnings.extend(self.device_warning);
        Ok(out)
    }
}

impl PmIndexRun<'_> {
    /// One point of the run (`Experiment::run_point` without its catch of a region error).
    fn run_point_in(
        &mut self,
        point: PmIndexPoint,
        ctx: &Ctx,
        out: &mut Output<PmIndexRow>,
    ) -> Result<Step<PmIndexPoint>, RunError> {
        let (sc, spec, seed) = (self.sc, self.spec, ctx.seed());
        let fail = |e: String| run_failed(ctx, e);
        match (point, &mut self.mode) {
            (PmIndexPoint::Crash { adversarial }, Mode::Crash { ops, reports }) => {
                let probability = sc.crash.as_ref().map_or(0.0, |c| c.probability);
                let cap = CrashCapture {
                    probability,
                    adversarial,
                };
                reports.push(crash_test(
                    spec,
                    sc.index.key_type,
                    sc.index.tonic,
                    &sc.pm,
                    ops,
                    cap,
                    seed,
                ));
            }
            (
                PmIndexPoint::Measure,
                Mode::Cost {
                    load,
                    run,
                    dimm,
                    measured,
                    ..
                },
            ) => {
                *measured = Some(Box::new(
                    measure(sc, seed, spec, *dimm, load, run).map_err(fail)?,
                ));
            }
            (
                PmIndexPoint::Repeat,
                Mode::Cost {
                    load,
                    run,
                    native,
                    repeats_done,
                    throughput_mops,
                    ..
                },
            ) => {
                let t = timings::repeat(native, *repeats_done, || {
                    real_throughput(sc, spec, load, run)
                })
                .map_err(fail)?;
                *repeats_done += 1;
                *throughput_mops = Some(throughput_mops.unwrap_or(0.0).max(t));
            }
            (PmIndexPoint::RealThreads, Mode::Cost { load, run, .. }) => {
                // The operations timed: the measured phase, or its first `timed_ops`.
                let ops = timed_phase(sc, load, run).len() as u64;
                let rows = real_thread_rows(sc, spec, load, run, ops).map_err(fail)?;
                out.table("real_threads", &rows);
            }
            _ => unreachable!("the points are listed from the run's mode"),
        }
        Ok(Step::Done)
    }
}

/// A point that could not run: the index's error, under the `index` key.
fn run_failed(ctx: &Ctx, e: impl std::fmt::Display) -> RunError {
    RunError::config(ctx.file(), "index", format!("run failed: {e}"))
}

#[cfg(test)]
mod tests {
    use crate::registry::run_scenario;

    fn scenario(extra: &str) -> String {
        format!("module = \"pm-index\"\nseed = 3\n[index]\nname = \"p-clht\"\n{extra}")
    }

    /// The key path the error names when `scenario(extra)` is refused.
    fn refused_key(extra: &str) -> String {
        run_scenario(&scenario(extra), "s.toml", &[], &[])
            .unwrap_err()
            .key
    }

    fn num(row: &serde_json::Map<String, serde_json::Value>, k: &str) -> f64 {
        row[k].as_f64().unwrap_or_else(|| panic!("{k} missing"))
    }

    #[test]
    fn points_that_time_the_same_native_run_share_its_timings() {
        // Simulated threads and the DIMM count are the model's: the native run is the same,
        // and the second point takes the first one's three timed repeats.
        let base = "[workload]\nrecords = 2500\n[index.tonic]\nno_bloat = true\n";
        let one = run_scenario(&scenario(base), "s.toml", &[], &[]).unwrap();
        let text = format!("{base}[model.pmem]\ndimms = 2\n");
        let four = run_scenario(
            &scenario(&text),
            "s.toml",
            &[("workload.threads".into(), "4".into())],
            &[],
        )
        .unwrap();
        let t = |o: &crate::scenario::RunOutput| num(&o.rows[0], "throughput_mops");
        assert_eq!(t(&one), t(&four));
        // Another seed makes other operations: timed anew (equal timings are all but
        // impossible).
        let other = run_scenario(
            &scenario(base).replace("seed = 3", "seed = 4"),
            "s.toml",
            &[],
            &[],
        )
        .unwrap();
        assert_ne!(t(&one), t(&other));
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
        // A counter per operation is the row's own counter over its operations.
        for k in [
            "wpq_inserts",
            "write_requests",
            "read_requests",
            "media_writes_64b",
        ] {
            let per_op = num(ra, &format!("{k}_per_op"));
            assert_eq!(per_op, num(ra, k) / num(ra, "ops"), "{k}");
        }
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
        assert_eq!(refused_key("[workload]\nkind = \"e\"\n"), "workload.kind");
        assert_eq!(refused_key("[workload]\nthreads = 0\n"), "workload.threads");
        // A Load is timed whole: a cut of it would time a smaller index.
        assert_eq!(
            refused_key("[throughput]\ntimed_ops = 10\n"),
            "throughput.timed_ops"
        );
    }

    #[test]
    fn timed_ops_times_a_prefix_of_the_run_phase_and_says_so() {
        let text = scenario("[workload]\nkind = \"c\"\nrecords = 2000\noperations = 3000\n");
        let cut = [("throughput.timed_ops".to_string(), "500".to_string())];
        let whole = run_scenario(&text, "s.toml", &[], &[]).unwrap();
        let part = run_scenario(&text, "s.toml", &cut, &[]).unwrap();
        let (w, p) = (&whole.rows[0], &part.rows[0]);
        assert_eq!((num(w, "timed_ops"), num(p, "timed_ops")), (3000.0, 500.0));
        // Its own timing, not the whole phase's kept one (equal timings are all but
        // impossible).
        assert!(num(p, "throughput_mops") > 0.0);
        assert_ne!(num(p, "throughput_mops"), num(w, "throughput_mops"));
        // The model runs every operation either way: its columns are the same.
        for (k, v) in w.iter() {
            if !["throughput_mops", "timed_ops"].contains(&k.as_str()) {
                assert_eq!(&p[k], v, "{k}");
            }
        }
        // A cut longer than the phase times all of it; a Load is timed whole.
        let long = [("throughput.timed_ops".to_string(), "9000".to_string())];
        let all = run_scenario(&text, "s.toml", &long, &[]).unwrap();
        assert_eq!(num(&all.rows[0], "timed_ops"), 3000.0);
        let load = run_scenario(&scenario("[workload]\nrecords = 700\n"), "s.toml", &[], &[]);
        assert_eq!(num(&load.unwrap().rows[0], "timed_ops"), 700.0);
        // Not measured: no count.
        let off = [("throughput.measure".to_string(), "false".to_string())];
        let none = run_scenario(&text, "s.toml", &off, &[]).unwrap();
        assert!(none.rows[0]["timed_ops"].is_null());
        // The real-thread timings take the same cut, and count it.
        let threads = [
            cut[0].clone(),
            ("throughput.real_threads".to_string(), "[1, 2]".to_string()),
        ];
        let real = run_scenario(&text, "s.toml", &threads, &[]).unwrap();
        for r in &real.tables["real_threads"] {
            assert_eq!(r["ops"].as_u64(), Some(500));
        }
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
        assert_eq!(
            refused_key("[throughput]\nshards = 48\n"),
            "throughput.shards"
        );
        assert_eq!(
            refused_key("[throughput]\nreal_threads = [0]\n"),
            "throughput.real_threads"
        );
    }

    #[test]
    fn real_threads_alone_time_the_same_phase_without_a_model_row() {
        let base = "[workload]\nkind = \"a\"\nrecords = 2000\noperations = 1500\n\
             [throughput]\nmeasure = false\nrepeats = 1\nreal_threads = [1, 2]\n";
        let with = run_scenario(&scenario(base), "s.toml", &[], &[]).unwrap();
        let alone = run_scenario(
            &scenario(&format!("{base}model = false\n")),
            "s.toml",
            &[],
            &[],
        )
        .unwrap();
        assert!(alone.rows.is_empty() && alone.headline.is_empty());
        assert!(alone.warnings.iter().any(|w| w.contains("no result row")));
        assert!(with.warnings.is_empty());
        assert_eq!(with.rows.len(), 1);
        let t = &alone.tables["real_threads"];
        assert_eq!(t.len(), 2);
        // The same phase (its operation count as the model's row has it), on the same threads.
        for (a, w) in t.iter().zip(&with.tables["real_threads"]) {
            assert_eq!((&a["ops"], &a["os_threads"]), (&w["ops"], &w["os_threads"]));
            assert_eq!(a["ops"], with.rows[0]["ops"]);
        }
        // Without the model, a native timing has no row to go in, and nothing else would run.
        assert_eq!(
            refused_key("[throughput]\nmodel = false\nreal_threads = [1]\n"),
            "throughput.measure"
        );
        assert_eq!(
            refused_key("[throughput]\nmodel = false\nmeasure = false\n"),
            "throughput.model"
        );
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
