//! The `tiering` scenario's run: one simulation per (policy, antagonist intensity) on the
//! statistical GUPS workload or a trace / app-analog stream, the best case as a sweep of
//! oracle placements, and the PMem write path fed by the run when configured.

use serde_json::json;

use super::apps::{self, AppStream};
use super::oracle::OracleStatic;
use super::pmem_tier::{dimm_of, PmemFeeder};
use super::policies::{PolicyParams, POLICIES};
use super::policy::TieringPolicy;
use super::prefix::PrefixShelf;
use super::quantum::{quanta_of, Antagonists, EarlyEnd, QuantumRecord, SimParams, SimResult};
use super::replay::{simulate_stream_cached, ReplayCounts, StreamDemand};
use super::rows::{
    row_of, tail, tail_mean, timeline_row, window, window_quanta, CacheColumns, TierRow,
    TimelineRow,
};
use super::scenario::{SimSpec, TierScenario, BEST, PYTHON_POLICY};
use super::sim::{simulate_keeping, simulate_observed};
use super::steady::{nothing_migrated, Steadiness, TraceWindow};
use super::stream::{AccessStream, TraceStream};
use super::workload::{Gups, CACHE_NONE};
use super::LINE_BYTES;
use crate::cache::filter::CacheFilter;
use crate::config::check_host_memory;
use crate::device::{Slot, MEMORY_TIER};
use crate::error::RunError;
use crate::pmem::DimmSpec;
use crate::scenario::{Column, Ctx, Experiment, Output, ResultRow, Scenario, Spelling, Step};

/// The `tiering` module.
pub struct Tiering;

impl Scenario for Tiering {
    const MODULE: &'static str = "tiering";
    const ABOUT: &'static str = "two-tier memory under contention: HeMem, MEMTIS, TPP, Colloid";
    type Config = TierScenario;
    type Row = TierRow;
    const DOCS: &'static str = "tiering.md";
    const STUDY: &'static str = "tiering";
    const SWEEP_METRICS: &'static [&'static str] =
        &["throughput_gb_s", "default_latency_ns", "hot_share_default"];
    const PARAMS_NOTE: &'static str = "; and a tier's `device` (docs/tiering.md, *Parameters*)";
    const PREFIX_KEY: Option<&'static str> = Some("sim.duration_s");
    const STOP_KEYS: &'static [&'static str] = &["sim.until_steady", "sim.max_duration_s"];

    /// A `sim.until_steady` run stops at one of its [`run_lengths`] (as it goes on past a
    /// length or starts again at the next), any other at its `sim.duration_s`.
    fn stop_lengths(resolved: &serde_json::Value) -> Vec<f64> {
        let Some(Ok(sim)) = resolved
            .get("sim")
            .map(|s| serde_json::from_value::<SimSpec>(s.clone()))
        else {
            return Vec::new();
        };
        if sim.until_steady {
            run_lengths(sim.duration_s, sim.cap_s())
        } else {
            vec![sim.duration_s]
        }
    }
    const TABLES: &'static [(&'static str, &'static [Column])] =
        &[("timeline", TimelineRow::COLUMNS)];

    // Tiers that name a catalog device (`device = "cxl-dram"`) get the keys they do not
    // write from it (docs/devices.md).
    const DEVICE_SLOTS: Option<&'static Slot> = Some(&MEMORY_TIER);

    type Experiment<'a> = TierRun;

    fn build<'a>(cfg: &'a TierScenario, ctx: &Ctx<'a>) -> Result<TierRun, RunError> {
        let mut run = build_runs(cfg, ctx, ctx.take_part::<ExternalPolicy>())?;
        run.shelf = ctx.take_part::<PrefixShelf>();
        Ok(run)
    }

    /// Columns named after the tiers (`{tier}_latency_ns`), spelled out for this run's.
    fn column_spellings(cfg: &TierScenario) -> Vec<Spelling> {
        vec![("{tier}", cfg.tiers.iter().map(|t| t.name.clone()).collect())]
    }
}

/// What the caches did in a cache-filtered trace run, and the trace's footprint.
struct CacheReport {
    columns: CacheColumns,
    distinct_lines: u64,
    llc_bytes: u64,
    /// Passes over the trace the run replayed.
    passes: f64,
}

/// One trace-driven run: the scenario's trace file or app analog as the access stream.
fn run_stream(
    sc: &TierScenario,
    p: &SimParams,
    ctx: &Ctx,
    ant: &Antagonists,
    policy: &mut dyn TieringPolicy,
) -> Result<(SimResult, Replayed), RunError> {
    let file = ctx.file();
    let w = &sc.workload;
    let demand = StreamDemand {
        cores: w.cores,
        mlp: w.mlp,
        object_size_bytes: w.object_size_bytes,
        read_fraction: w.read_fraction,
        weight: w.access_weight,
    };
    let mut footprint = None;
    let mut accesses_per_pass = None;
    let (mut stream, key): (Box<dyn AccessStream>, &str) = match (&w.trace, &w.app) {
        (Some(rel), _) => {
            let path = ctx.path(rel);
            let t = TraceStream::open(&path, p.page_bytes, file, "workload.trace")?;
            if t.page_level && w.cache_filtered() {
                return Err(ctx.error(
                    "workload.trace",
                    format!(
                        "{} is a page-level trace (recorded with --page-level: one record per \
                         run of accesses to a page), so its records are not the program's \
                         cache-line accesses and cannot go through the CPU caches; record a \
                         line-level trace (hmsim trace record --kind lackey, without \
                         --page-level), or set workload.cache = \"none\" to count every record \
                         as a memory access (no cache filtering)",
                        path.display()
                    ),
                ));
            }
            footprint = Some(t.distinct_lines);
            accesses_per_pass = Some(t.accesses_per_pass);
            (Box::new(t), "workload.trace")
        }
        (None, Some(app)) => (
            Box::new(AppStream::new(
                app,
                w.scale,
                p.page_bytes,
                ctx.rng("tier.app"),
                file,
            )?),
            "workload.app",
        ),
        (None, None) => unreachable!("run_stream is called for stream workloads only"),
    };
    let cache = w.cache_filtered().then(|| {
        let model = w.cache_model.clone().unwrap_or_default();
        CacheFilter::new(&model, p.seed)
    });
    let (r, counts, cache) =
        simulate_stream_cached(p, &demand, stream.as_mut(), cache, ant, policy)?
            .ok_or_else(|| ctx.error(key, "its pages do not fit in the tiers"))?;
    let report = cache.zip(footprint).map(|(c, lines)| {
        let h = c.hit_rates(counts.accesses);
        CacheReport {
            columns: CacheColumns {
                l1_hit_rate: h.l1,
                l2_hit_rate: h.l2,
                llc_hit_rate: h.llc,
                memory_lines_per_access: h.memory_lines_per_access,
                trace_footprint_bytes: lines * LINE_BYTES as u64,
            },
            distinct_lines: lines,
            llc_bytes: c.llc_bytes(),
            passes: counts.accesses as f64 / accesses_per_pass.unwrap_or(0).max(1) as f64,
        }
    });
    Ok((
        r,
        Replayed {
            counts,
            cache: report,
            accesses_per_pass,
            cached: w.cache_filtered(),
        },
    ))
}

/// What a stream run replayed.
struct Replayed {
    counts: ReplayCounts,
    cache: Option<CacheReport>,
    /// Accesses in one pass over the trace file (`None` for an application analog).
    accesses_per_pass: Option<u64>,
    /// The stream went through the CPU caches.
    cached: bool,
}

impl Replayed {
    /// Where the measured window (the last `window_quanta` quanta of `quantum_s`) falls in
    /// the trace file, or `None` for a stream that is not a file.
    fn trace_window(&self, window_quanta: usize, quantum_s: f64) -> Option<TraceWindow> {
        let per_pass = self.accesses_per_pass.filter(|&n| n > 0)? as f64;
        let q = &self.counts.per_quantum;
        let split = q.len().saturating_sub(window_quanta);
        let sum = |s: &[u64]| s.iter().sum::<u64>() as f64;
        Some(TraceWindow {
            before_passes: sum(&q[..split]) / per_pass,
            window_passes: sum(&q[split..]) / per_pass,
            window_s: (q.len() - split) as f64 * quantum_s,
            cached: self.cached,
        })
    }
}

/// The run warning of a trace whose footprint fits in the LLC: after its first pass the
/// tiers see (almost) no traffic, so the policies are ranked on the cold misses.
fn llc_fit_warning(rel: &str, c: &CacheReport) -> Option<String> {
    let bytes = c.distinct_lines * LINE_BYTES as u64;
    (bytes <= c.llc_bytes).then(|| {
        format!(
            "workload.trace ({rel}): the trace touches {} distinct 64 B lines ({bytes} bytes), \
             which fit in the {}-byte LLC: after its first pass nearly every access hits the \
             caches (this run replayed {:.2} passes; LLC hit rate {:.3}, {:.4} memory lines \
             per access), so the tiers see little traffic and the policies are compared on \
             cold misses; replay a trace whose footprint exceeds the LLC, or shrink \
             workload.cache_model.llc to study a smaller machine",
            c.distinct_lines,
            c.llc_bytes,
            c.passes,
            c.columns.llc_hit_rate,
            c.columns.memory_lines_per_access
        )
    })
}

/// A policy made outside the registry (a Python policy): its row name and a factory called
/// once per (policy, intensity) run. Handed to a run as one of its parts
/// (`scenario::Parts`, named [`EXTERNAL_POLICY`]); it replaces `policy.names`.
pub struct ExternalPolicy {
    pub name: String,
    pub make: Box<dyn FnMut() -> Box<dyn TieringPolicy>>,
}

/// What [`Parts`] call an [`ExternalPolicy`] in an error.
pub const EXTERNAL_POLICY: &str = "tiering policy hook";

/// Host memory the pages of a working-set workload need at least, bytes (an estimate, a lower
/// bound): one byte per page (`workload.working_set_bytes` / `sim.page_bytes`), the page
/// table's tier of each page; the policies' per-page counters come on top. Trace and app
/// workloads size their pages from the stream and are not estimated.
pub(super) fn host_memory_estimate(sc: &TierScenario) -> u64 {
    if sc.workload.is_stream() {
        return 0;
    }
    sc.workload
        .working_set_bytes
        .div_ceil(sc.sim.page_bytes.max(1))
}

/// The (policy, intensity) runs of a tiering scenario.
pub struct TierRun {
    /// The scenario, with an app analog's sizes filled in.
    sc: TierScenario,
    /// Results of longer runs of this scenario to take, and to keep for shorter ones.
    shelf: Option<PrefixShelf>,
    pp: PolicyParams,
    p: SimParams,
    /// The PMem alternate tier's DIMM and rated bytes written, when there is one.
    pmem_dimm: Option<(DimmSpec, f64)>,
    /// A Python policy brought by the caller, run in place of `policy.names`.
    external: Option<ExternalPolicy>,
    /// The policies' row names.
    names: Vec<String>,
    /// Warnings about the scenario as a whole, before the runs'.
    scenario_warnings: Vec<String>,
    /// The trace's LLC-footprint warning was given (once per scenario).
    llc_warned: bool,
    timeline: Vec<TimelineRow>,
}

/// One run: a policy (index into the run's names) at an antagonist intensity (index into
/// `antagonist.intensities`), for `duration_s` simulated seconds.
pub struct TierPoint {
    policy: usize,
    intensity: usize,
    duration_s: f64,
}

/// The experiment of `cfg`: the scenario checked and completed once for all its runs;
/// `external` replaces `policy.names`.
fn build_runs(
    cfg: &TierScenario,
    ctx: &Ctx,
    external: Option<ExternalPolicy>,
) -> Result<TierRun, RunError> {
    let mut sc = cfg.clone();
    if let Some(sh) = sc
        .workload
        .app
        .as_deref()
        .and_then(|a| apps::shape(a, sc.workload.scale))
    {
        // The analog fixes its sizes and demand shape (Vuppalapati & Agarwal, ACM SOSP 2024, fig. 6).
        sc.workload.working_set_bytes = sh.working_set_bytes;
        sc.workload.object_size_bytes = sh.object_size_bytes;
        sc.workload.read_fraction = sh.read_fraction;
        sc.tiers[0].capacity_bytes = sh.default_tier_bytes;
    }
    if !sc.workload.is_stream() {
        let (ws, page) = (sc.workload.working_set_bytes, sc.sim.page_bytes);
        check_host_memory(
            host_memory_estimate(&sc),
            "the page table",
            &format!(" for a {ws}-byte working set in {page}-byte pages (sim.page_bytes)"),
        )
        .map_err(|e| ctx.error("workload.working_set_bytes", e))?;
        // Page ids are 32-bit in the statistical hardware's pending faults (16 TiB of 4 KiB
        // pages); a page table that large passed the check above only on a large host.
        let pages = ws.div_ceil(page.max(1));
        if pages > u64::from(u32::MAX) {
            return Err(ctx.error(
                "workload.working_set_bytes",
                format!(
                    "{ws} is {pages} pages of {page} bytes; allowed up to {} pages",
                    u32::MAX
                ),
            ));
        }
    }
    let mut scenario_warnings = Vec::new();
    if let (Some(rel), Some(CACHE_NONE)) = (&sc.workload.trace, sc.workload.cache.as_deref()) {
        scenario_warnings.push(format!(
            "workload.trace ({rel}): cache = \"none\": every record counts as a memory access \
             (no CPU caches in front of the tiers), so the tiers see the program's CPU-level \
             accesses, cache hits included (docs/tiering.md, *Traces behind caches*)"
        ));
    }
    let mut pp = PolicyParams {
        hemem: sc.policy.hemem.clone(),
        colloid: sc.policy.colloid.clone(),
        tpp: sc.policy.tpp.clone(),
        memtis: sc.policy.memtis.clone(),
    };
    // The PMem write path addresses whole pages, and trace replay has no sub-page
    // addresses: MEMTIS does not split there.
    if sc.pmem_tier.is_some() || sc.workload.is_stream() {
        pp.memtis.split = false;
    }
    let p = SimParams {
        tiers: sc.tiers.clone(),
        page_bytes: sc.sim.page_bytes,
        quantum_s: sc.sim.quantum_s,
        duration_s: sc.sim.duration_s,
        sample_period: sc.policy.sample_period,
        migrate_limit_gb_s: sc.sim.migrate_limit_gb_s,
        ewma_alpha: sc.sim.ewma_alpha,
        seed: ctx.seed(),
    };
    let pmem_dimm = match &sc.pmem_tier {
        Some(spec) => Some(dimm_of(spec, ctx)?),
        None => None,
    };
    if let Some(spec) = &sc.pmem_tier {
        scenario_warnings
            .extend(ctx.pmem_device_warning(&spec.path.device, "pmem_tier.path.device"));
    }
    // A Python policy is named `python:…` in the scenario and brought by the caller.
    let python = sc.policy.names.iter().any(|n| n.starts_with(PYTHON_POLICY));
    let names: Vec<String> = match &external {
        Some(e) if python => vec![e.name.clone()],
        Some(_) => {
            return Err(ctx.error(
                "policy.names",
                format!(
                    "a policy hook runs in place of a `{PYTHON_POLICY}…` name; found {:?}",
                    sc.policy.names
                ),
            ))
        }
        None if python => {
            return Err(ctx.error(
                "policy.names",
                format!(
                    "a `{PYTHON_POLICY}…` policy runs from the Python package (`hmsim run`, \
                         `hmsim.tier_hook.run_policy`), which loads it"
                ),
            ))
        }
        None => sc.policy.names.clone(),
    };
    Ok(TierRun {
        sc,
        shelf: None,
        pp,
        p,
        pmem_dimm,
        external,
        names,
        scenario_warnings,
        llc_warned: false,
        timeline: Vec::new(),
    })
}

impl Experiment for TierRun {
    type Point = TierPoint;
    type Row = TierRow;

    fn unit(&self) -> &'static str {
        "runs"
    }

    fn points(&self) -> Vec<TierPoint> {
        let intensities = self.sc.antagonist.intensities.len();
        (0..self.names.len())
            .flat_map(|policy| {
                (0..intensities).map(move |intensity| TierPoint {
                    policy,
                    intensity,
                    duration_s: self.sc.sim.duration_s,
                })
            })
            .collect()
    }

    fn run_point(
        &mut self,
        point: TierPoint,
        ctx: &Ctx,
        out: &mut Output<TierRow>,
    ) -> Result<Step<TierPoint>, RunError> {
        let name = self.names[point.policy].clone();
        let intensity = self.sc.antagonist.intensities[point.intensity];
        let a = &self.sc.antagonist;
        let ant = Antagonists {
            tier: a.tier,
            cores: intensity * a.cores_per_intensity,
            reads_per_core: a.reads_per_core,
            read_fraction: a.read_fraction,
            change: a
                .change_s
                .zip(a.change_to_intensity.map(|i| i * a.cores_per_intensity)),
        };
        let cap = self.sc.sim.cap_s();
        // With `sim.until_steady` a run that is not steady runs for twice as long, up to the
        // cap. A run whose every length is the start of the next (the statistical workload,
        // a registered policy, no PMem feeder: what the prefix shelf relies on) goes on
        // instead of starting again, and stops at the first of those lengths whose window is
        // steady: the run of that length. Others run each length anew (`Step::Again` below).
        let lengths = self
            .continuable(&name)
            .then(|| run_lengths(point.duration_s, cap));
        let mut sc = self.sc.clone();
        sc.sim.duration_s = lengths
            .as_ref()
            .map_or(point.duration_s, |l| l[l.len() - 1]);
        let p = SimParams {
            duration_s: sc.sim.duration_s,
            ..self.p.clone()
        };
        let quanta = |d: f64| quanta_of(d, sc.sim.quantum_s);
        let steady =
            |t: &[QuantumRecord]| Steadiness::of(window(&sc, t), sc.sim.quantum_s).converged();
        let end = lengths.as_ref().map(|l| EarlyEnd {
            at: l.iter().map(|&d| quanta(d)).collect(),
            done: &steady,
        });
        // A longer run of the same simulation in the caller's chain may have kept it.
        let kept = lengths
            .as_ref()
            .and_then(|l| self.take_kept(&sc, l, ctx.seed(), &name, &ant, &steady));
        let (r, feeder, oracle_share, replayed) = match kept {
            Some(r) => (r, None, None, None),
            None => self.simulate(&sc, &p, &name, &ant, ctx, end.as_ref())?,
        };
        let duration = match &lengths {
            // Steady: the first length of that many quanta, where a run started anew stops.
            Some(l) if steady(&r.timeline) => *l
                .iter()
                .find(|&&d| quanta(d) == r.timeline.len() as u64)
                .expect("a continued run ends at one of its lengths"),
            Some(l) => l[l.len() - 1],
            None => point.duration_s,
        };
        let mut sc = sc.clone();
        sc.sim.duration_s = duration;
        let mut row = row_of(&sc, &name, intensity, &r);
        // A run that cannot go on and is not steady runs again at its next length (the model
        // is deterministic: a longer run repeats the shorter one's start). A PMem tier whose
        // last hot pages are still moving is not steady for its no-WL lifetime either.
        let placing = feeder.as_ref().is_some_and(|f| f.placing());
        if !((row.converged && !placing) || duration >= cap) {
            return Ok(Step::Again(TierPoint {
                duration_s: run_lengths(duration, cap)[1],
                ..point
            }));
        }
        let who = format!("{name} at intensity {intensity}×");
        let steady = Steadiness {
            drift: row.window_throughput_drift,
            migration_share: row.window_migration_share,
        };
        let trace_window = replayed
            .as_ref()
            .and_then(|x| x.trace_window(tail(&sc, &r).len(), sc.sim.quantum_s));
        let mut hint = if steady.drift.is_nan() {
            // Validation keeps two quanta in a window; a one-quantum window says so anyway.
            "lengthen sim.measure_last_s".to_string()
        } else if sc.sim.until_steady {
            format!("the run stopped at its cap ({cap} s): raise sim.max_duration_s")
        } else {
            "lengthen sim.duration_s (sim.measure_last_s stays the window at the end), \
             or set sim.until_steady = true"
                .to_string()
        };
        match trace_window {
            // A longer run keeps the window as short in passes: its length is the fix.
            Some(t) if t.short() => {
                hint = "lengthen sim.measure_last_s (see the warning on the window's passes \
                        over the trace)"
                    .to_string()
            }
            Some(t) if t.looped() => hint.push_str(&format!(
                "; or, if it is the trace's phases, lengthen sim.measure_last_s: the window \
                 holds {:.1} passes of a trace replayed in a loop, and the part of a pass in \
                 each half weighs the program's phases unevenly",
                t.window_passes
            )),
            _ => {}
        }
        out.warnings
            .extend(steady.warning(&who, sc.sim.measure_last_s, duration, &hint));
        out.warnings
            .extend(trace_window.and_then(|t| t.warning(&who)));
        out.warnings
            .extend(nothing_migrated(&who, &name, &r, tail(&sc, &r)));
        if sc.sim.until_steady {
            row.run_duration_s = Some(duration);
        }
        row.pmem = feeder.as_ref().map(|f| f.columns(sc.sim.duration_s));
        out.warnings
            .extend(feeder.as_ref().and_then(|f| f.warning(&who)));
        row.oracle_hot_share_default = oracle_share;
        if let Some(x) = replayed {
            row.replayed_accesses = Some(x.counts.accesses);
            row.pebs_samples = Some(x.counts.samples);
            row.window_trace_passes = trace_window.map(|t| t.window_passes);
            if let Some(report) = x.cache {
                // The footprint is the trace's: one warning for the scenario.
                if !self.llc_warned {
                    let rel = sc.workload.trace.as_deref().unwrap_or_default();
                    out.warnings.extend(llc_fit_warning(rel, &report));
                    self.llc_warned = true;
                }
                row.cache = Some(report.columns);
            }
        }
        out.rows.push(row);
        if sc.sim.timeline {
            self.timeline.extend(
                r.timeline
                    .iter()
                    .map(|q| timeline_row(&sc, &name, intensity, q)),
            );
        }
        Ok(Step::Done)
    }

    fn finish(self, mut out: Output<TierRow>) -> Result<Output<TierRow>, RunError> {
        out.warnings.splice(0..0, self.scenario_warnings);
        if self.sc.sim.timeline {
            out.table("timeline", &self.timeline);
        }
        // JSON has no NaN: a non-finite throughput compares as missing, as in the written row.
        let tput = |r: &TierRow| r.throughput_gb_s.is_finite().then_some(r.throughput_gb_s);
        if let Some(best) = out.rows.iter().max_by(|x, y| {
            tput(x)
                .partial_cmp(&tput(y))
                .unwrap_or(std::cmp::Ordering::Equal)
        }) {
            out.headline
                .insert("best_policy".into(), json!(best.policy));
            out.headline
                .insert("best_intensity".into(), json!(best.intensity));
            out.headline
                .insert("best_throughput_gb_s".into(), json!(best.throughput_gb_s));
        }
        out.headline.insert("runs".into(), json!(out.rows.len()));
        Ok(out)
    }
}

/// The lengths a `sim.until_steady` run is measured at: `duration_s`, then twice the one
/// before, up to and ending with `cap_s` (the lengths its runs started anew would have).
fn run_lengths(duration_s: f64, cap_s: f64) -> Vec<f64> {
    let mut lengths = vec![duration_s];
    while let Some(&d) = lengths.last().filter(|&&d| d < cap_s) {
        lengths.push((2.0 * d).min(cap_s));
    }
    lengths
}

/// Everything a run's simulation depends on but its length, as the shelf's key: the
/// scenario as completed with its length zeroed and the keys that only say where a
/// `sim.until_steady` run stops cleared, the seed, the policy and the antagonists.
fn shelf_what(sc: &TierScenario, seed: u64, name: &str, ant: &Antagonists) -> String {
    let mut what = sc.clone();
    what.sim.duration_s = 0.0;
    what.sim.until_steady = false;
    what.sim.max_duration_s = None;
    format!("{what:?}|{seed}|{name}|{ant:?}")
}

/// What one simulation of a run gives: its result, the PMem feeder it fed, the oracle's
/// best hot share (the `best` sweep) and a replay's counts and cache report.
type Simulated = (SimResult, Option<PmemFeeder>, Option<f64>, Option<Replayed>);

impl TierRun {
    /// Whether a `sim.until_steady` run of policy `name` goes on past a length that is not
    /// steady instead of starting again (see `run_point`): it must be a run whose every
    /// length is the start of the next, as the shelf assumes.
    fn continuable(&self, name: &str) -> bool {
        self.sc.sim.until_steady
            && !self.sc.workload.is_stream()
            && self.external.is_none()
            && self.sc.pmem_tier.is_none()
            && name != BEST
    }

    /// The result a `sim.until_steady` run of `lengths` would stop with, taken from the
    /// caller's shelf (a longer run of the same simulation kept it): the first kept length
    /// whose window is `steady`, or the last length. None, to simulate, when the shelf
    /// lacks a length the run would reach.
    fn take_kept(
        &self,
        sc: &TierScenario,
        lengths: &[f64],
        seed: u64,
        name: &str,
        ant: &Antagonists,
        steady: &dyn Fn(&[QuantumRecord]) -> bool,
    ) -> Option<SimResult> {
        let shelf = self.shelf.as_ref()?;
        let what = shelf_what(sc, seed, name, ant);
        for (k, &d) in lengths.iter().enumerate() {
            let r = shelf.take(&PrefixShelf::key(&what, quanta_of(d, sc.sim.quantum_s)))?;
            if k + 1 == lengths.len() || steady(&r.timeline) {
                return Some(r);
            }
        }
        None
    }

    /// Simulate policy `name` on `sc` (the run's duration set) against antagonists `ant`,
    /// ending early where `end` says (a continued `sim.until_steady` run).
    fn simulate(
        &mut self,
        sc: &TierScenario,
        p: &SimParams,
        name: &str,
        ant: &Antagonists,
        ctx: &Ctx,
        end: Option<&EarlyEnd>,
    ) -> Result<Simulated, RunError> {
        let seed = ctx.seed();
        let no_fit = || ctx.error("workload.working_set_bytes", "does not fit in the tiers");
        let pp = &self.pp;
        let make = |name: &str| -> Result<Box<dyn TieringPolicy>, RunError> {
            let make = POLICIES.require(name, ctx.file(), "policy.names")?;
            make(pp)
        };
        let pmem = sc.pmem_tier.as_ref().zip(self.pmem_dimm);
        // The measured window's quanta: the feeder's lifetimes use its write rate.
        let quanta = quanta_of(sc.sim.duration_s, sc.sim.quantum_s);
        let window = quanta.saturating_sub(window_quanta(sc) as u64)..quanta;
        let new_feeder = || {
            pmem.map(|(spec, (dimm, rated))| {
                PmemFeeder::new(spec, dimm, rated, seed, window.clone())
            })
        };
        let gups = Gups::new(&sc.workload, sc.sim.page_bytes);
        let mut feeder = new_feeder();
        if sc.workload.is_stream() {
            let mut policy: Box<dyn TieringPolicy> = match self.external.as_mut() {
                Some(e) => (e.make)(),
                None if name == BEST => {
                    return Err(ctx.error(
                        "policy.names",
                        "'best' (the oracle sweep) needs the statistical GUPS workload; \
                         remove it or workload.trace/workload.app",
                    ))
                }
                None => make(name)?,
            };
            if sc.pmem_tier.is_some() {
                return Err(ctx.error(
                    "pmem_tier",
                    "the PMem alternate tier is fed by the statistical GUPS workload only; \
                     remove [pmem_tier] or workload.trace/workload.app",
                ));
            }
            let (r, replayed) = run_stream(sc, p, ctx, ant, policy.as_mut())?;
            return Ok((r, feeder, None, Some(replayed)));
        }
        if let Some(e) = self.external.as_mut() {
            let mut policy = (e.make)();
            let r =
                simulate_observed(p, gups, ant, policy.as_mut(), &mut feeder).ok_or_else(no_fit)?;
            return Ok((r, feeder, None, None));
        }
        if name == BEST {
            // Colloid setup (Vuppalapati & Agarwal, ACM SOSP 2024): 0–100 % of the hot set in the default tier in 10 % steps; keep
            // the best steady-state throughput.
            let default_pages = sc.tiers[0].capacity_bytes / sc.sim.page_bytes;
            let mut best: Option<(f64, SimResult, f64, Option<PmemFeeder>)> = None;
            for k in 0..=10 {
                let share = k as f64 / 10.0;
                let mut pol = OracleStatic::new(&gups, default_pages, share);
                let mut f = new_feeder();
                let r =
                    simulate_observed(p, gups.clone(), ant, &mut pol, &mut f).ok_or_else(no_fit)?;
                let tput = tail_mean(sc, &r, |q| q.throughput_gb_s);
                if best.as_ref().is_none_or(|b| tput > b.0) {
                    best = Some((tput, r, share, f));
                }
            }
            let Some((_, r, share, f)) = best else {
                unreachable!("the sweep has eleven runs")
            };
            return Ok((r, f, Some(share), None));
        }
        let mut policy = make(name)?;
        if let Some(end) = end {
            // Its length is not known ahead, so the shelf neither has nor keeps it.
            let r = simulate_keeping(p, gups, ant, policy.as_mut(), &mut (), &[], Some(end))
                .ok_or_else(no_fit)?;
            return Ok((r, None, None, None));
        }
        let Some(shelf) = self.shelf.as_ref().filter(|_| feeder.is_none()) else {
            let r =
                simulate_observed(p, gups, ant, policy.as_mut(), &mut feeder).ok_or_else(no_fit)?;
            return Ok((r, feeder, None, None));
        };
        let what = shelf_what(sc, seed, name, ant);
        let quanta = quanta_of(p.duration_s, p.quantum_s);
        if let Some(r) = shelf.take(&PrefixShelf::key(&what, quanta)) {
            return Ok((r, None, None, None));
        }
        let keep_at = shelf.keep_at(p.quantum_s, quanta);
        let mut r = simulate_keeping(p, gups, ant, policy.as_mut(), &mut (), &keep_at, None)
            .ok_or_else(no_fit)?;
        shelf.put(&what, &mut r);
        Ok((r, None, None, None))
    }
}

#[cfg(test)]
mod tests {
    use crate::registry::run_scenario;

    const SMALL: &str = "module = \"tiering\"\nseed = 3\n[workload]\nworking_set_bytes = 8589934592\nhot_set_bytes = 2147483648\n[antagonist]\nintensities = [0, 3]\n[policy]\nnames = [\"static-default\", \"colloid-hemem\"]\n[sim]\nduration_s = 0.5\nmeasure_last_s = 0.2\n";

    fn err(text: &str) -> crate::ConfigError {
        run_scenario(text, "t.toml", &[], &[]).unwrap_err()
    }

    #[test]
    fn a_page_table_beyond_host_memory_is_refused_before_allocating() {
        // 1 PiB in 4 KiB pages: 2^38 pages, a byte each at least.
        let tier = |name: &str| {
            format!("[[tiers]]\nname = \"{name}\"\ncapacity_bytes = 1125899906842624\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 100.0\n")
        };
        let text = format!(
            "module = \"tiering\"\nseed = 3\n{}{}[workload]\nworking_set_bytes = 1125899906842624\nhot_set_bytes = 0\n[sim]\npage_bytes = 4096\n",
            tier("a"),
            tier("b")
        );
        let e = err(&text);
        assert_eq!(e.key, "workload.working_set_bytes", "{e}");
        assert!(e.message.contains("sim.page_bytes"), "{e}");
        assert!(e.message.contains("HMSIM_ALLOW_LARGE"), "{e}");
        // The shipped examples (those without catalog tiers) need a few MB at most.
        let dir = format!("{}/../../examples", env!("CARGO_MANIFEST_DIR"));
        for f in std::fs::read_dir(dir).unwrap() {
            let path = f.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with("tiering-") && name.ends_with(".toml") {
                let text = std::fs::read_to_string(&path).unwrap();
                // A tier from the device catalog is resolved before parsing: not here.
                if text.contains("\ndevice =") {
                    continue;
                }
                let cfg = crate::scenario::parse_config::<super::Tiering>(&text);
                assert!(super::host_memory_estimate(&cfg) < 64 << 20, "{name}");
            }
        }
    }

    #[test]
    fn runs_one_row_per_policy_and_intensity_with_a_timeline() {
        let out = run_scenario(SMALL, "t.toml", &[], &[]).unwrap();
        assert_eq!(out.module, "tiering");
        assert_eq!(out.rows.len(), 4);
        for k in [
            "policy",
            "intensity",
            "throughput_gb_s",
            "throughput_mops",
            "default_latency_ns",
            "alternate_latency_ns",
            "alt_hot_share",
            "alt_traffic_share",
            "migrations",
        ] {
            assert!(out.rows[0].contains_key(k), "missing {k}");
        }
        assert_eq!(out.tables["timeline"].len(), 4 * 50);
        let again = run_scenario(SMALL, "t.toml", &[], &[]).unwrap();
        assert_eq!(out.rows, again.rows);
        assert_eq!(out.tables, again.tables);
    }

    /// Every key of every row is a declared column, in declaration order (columns of other
    /// configurations may be absent), with `{tier}` spelled out for the scenario's tiers.
    #[test]
    fn rows_hold_the_declared_columns_in_order() {
        let out = run_scenario(SMALL, "t.toml", &[], &[]).unwrap();
        for (table, rows) in [
            ("results", &out.rows),
            ("timeline", &out.tables["timeline"]),
        ] {
            let declared: Vec<&str> = out.columns[table].iter().map(|c| c.name.as_str()).collect();
            assert!(declared.contains(&"alternate_latency_ns"), "{declared:?}");
            assert!(
                !declared.iter().any(|d| d.contains("{tier}")),
                "{declared:?}"
            );
            for row in rows {
                let mut rest = declared.iter();
                for k in row.keys() {
                    assert!(
                        rest.any(|d| d == k),
                        "{table}: {k} undeclared or out of order"
                    );
                }
            }
        }
    }

    #[test]
    fn the_docs_example_runs() {
        let doc = include_str!("../../../../docs/tiering.md");
        // The first full scenario (other TOML blocks are fragments).
        let start = doc.find("```toml\nmodule").unwrap() + 8;
        let end = start + doc[start..].find("```").unwrap();
        let text = doc[start..end]
            .replace("duration_s = 20.0", "duration_s = 0.4")
            .replace("measure_last_s = 5.0", "measure_last_s = 0.1")
            .replace("hot_move_s = 10.0", "hot_move_s = 0.2");
        let out = run_scenario(&text, "tiering.md", &[], &[]).unwrap();
        assert_eq!(out.rows.len(), 12);
    }

    /// The docs' CXL tier (a link + device media path) runs, and a path resource without a
    /// bandwidth is an error naming its key.
    #[test]
    fn the_docs_cxl_path_runs_and_bad_paths_are_named() {
        let doc = include_str!("../../../../docs/tiering.md");
        let start = doc.find("```toml\n[[tiers]]").unwrap() + 8;
        let end = start + doc[start..].find("```").unwrap();
        let default = "[[tiers]]\nname = \"default\"\ncapacity_bytes = 32000000000\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 160.0\n";
        let text = format!("{SMALL}{default}{}", &doc[start..end]);
        let out = run_scenario(&text, "t.toml", &[], &[]).unwrap();
        assert_eq!(out.rows.len(), 4);
        // The 8 GiB working set fits in the default tier: the CXL tier is idle, its mix reads
        // as pure reads, and the link's read direction (32 GB/s) binds before the device DRAM
        // (38.4; for 50/50 traffic the DRAM's 27.6 would bind before the link's 64).
        assert_eq!(out.rows[0]["cxl_bottleneck"], "cxl-x8");
        let bad = text.replace("read_gb_s = 32.0, write_gb_s = 32.0", "read_gb_s = -1.0");
        assert_eq!(err(&bad).key, "tiers.1.path.0.read_gb_s");
        let none = text.replace(
            "read_gb_s = 32.0, write_gb_s = 32.0",
            "curve = [[0.0, 1.0], [1.0, 2.0]]",
        );
        assert_eq!(err(&none).key, "tiers.1.path.0.read_gb_s");
    }

    /// Small tiers (4 + 12 GB) under an 8 GiB GUPS: HeMem moves the 2 GiB hot set into the
    /// default tier within about a second.
    const MOVING: &str = "module = \"tiering\"\nseed = 3\n[[tiers]]\nname = \"default\"\ncapacity_bytes = 4000000000\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 160.0\n[[tiers]]\nname = \"alternate\"\ncapacity_bytes = 12000000000\nunloaded_latency_ns = 135.0\nread_bandwidth_gb_s = 75.0\n[workload]\nworking_set_bytes = 8589934592\nhot_set_bytes = 2147483648\n[antagonist]\nintensities = [0]\n[policy]\nnames = [\"hemem\", \"static-default\", \"tpp\"]\n[sim]\nduration_s = 0.5\nmeasure_last_s = 0.2\n";

    fn set(kv: &[(&str, &str)]) -> Vec<(String, String)> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn steady_warnings(out: &crate::scenario::RunOutput) -> Vec<&String> {
        out.warnings
            .iter()
            .filter(|w| w.contains("not steady"))
            .collect()
    }

    #[test]
    fn a_run_taken_from_a_longer_one_is_that_run() {
        use crate::registry::{run_scenario_chain, run_scenario_with_parts};
        use crate::scenario::{NoProgress, Parts};
        use crate::tier::PrefixShelf;
        // Sampling (HeMem), hint faults and scans (TPP, with Colloid) and huge-page splits
        // (MEMTIS), two intensities, a timeline: every kind of state a run carries.
        let text = MOVING
            .replace("intensities = [0]", "intensities = [0, 2]")
            .replace(
                "names = [\"hemem\", \"static-default\", \"tpp\"]",
                "names = [\"hemem\", \"colloid-tpp\", \"memtis\"]",
            )
            + "timeline = true\n";
        let at = |d: &str| set(&[("sim.duration_s", d)]);
        let alone = |d: &str| {
            let out = run_scenario(&text, "t.toml", &at(d), &[]).unwrap();
            serde_json::to_value(out).unwrap()
        };
        let shelf = PrefixShelf::new(vec![0.3, 0.45, 0.7]);
        let run = |d: &str| {
            let parts = Parts::new().with("a shelf", shelf.clone());
            let out =
                run_scenario_with_parts(&text, "t.toml", &at(d), &[], &NoProgress, &parts).unwrap();
            serde_json::to_value(out).unwrap()
        };
        assert_eq!(run("0.6"), alone("0.6"));
        assert_eq!(shelf.taken(), 0);
        // 0.7 s is longer than the run: nothing was kept for it.
        assert_eq!(run("0.7"), alone("0.7"));
        assert_eq!(shelf.taken(), 0);
        for d in ["0.3", "0.45"] {
            assert_eq!(run(d), alone(d), "{d} s");
        }
        assert_eq!(shelf.taken(), 12, "two lengths of six runs each");
        // Taken once: the same length again simulates.
        assert_eq!(run("0.3"), alone("0.3"));
        assert_eq!(shelf.taken(), 12);

        // Another seed is another simulation: nothing is taken for it.
        let shelf = PrefixShelf::new(vec![0.3]);
        let parts = Parts::new().with("a shelf", shelf.clone());
        run_scenario_with_parts(&text, "t.toml", &at("0.6"), &[], &NoProgress, &parts).unwrap();
        let other = set(&[("sim.duration_s", "0.3"), ("seed", "4")]);
        let parts = Parts::new().with("a shelf", shelf.clone());
        run_scenario_with_parts(&text, "t.toml", &other, &[], &NoProgress, &parts).unwrap();
        assert_eq!(shelf.taken(), 0);

        // The chain as a caller runs it: the longest first.
        let chain: Vec<_> = ["0.6", "0.3"]
            .iter()
            .map(|d| (text.clone(), "t.toml".to_string(), at(d)))
            .collect();
        let outs = run_scenario_chain(&chain, &[0.3], &[]).unwrap();
        assert_eq!(serde_json::to_value(&outs[1].output).unwrap(), alone("0.3"));
    }

    #[test]
    fn a_short_run_is_flagged_not_steady_and_a_long_one_is_not() {
        let short = run_scenario(MOVING, "t.toml", &[], &[]).unwrap();
        let hemem = &short.rows[0];
        assert_eq!(hemem["converged"], false);
        assert!(hemem["window_throughput_drift"].as_f64().unwrap() > 0.02);
        assert!(hemem["window_migration_share"].as_f64().unwrap() > 0.05);
        let w = steady_warnings(&short);
        assert_eq!(w.len(), 1, "{:?}", short.warnings);
        assert!(
            w[0].starts_with("hemem at intensity 0×")
                && w[0].contains("sim.duration_s")
                && w[0].contains("sim.measure_last_s"),
            "{}",
            w[0]
        );
        // The static placement is steady from the start.
        assert_eq!(short.rows[1]["converged"], true);
        assert_eq!(short.rows[1]["window_throughput_drift"], 0.0);
        let long = run_scenario(MOVING, "t.toml", &set(&[("sim.duration_s", "2")]), &[]).unwrap();
        assert!(long.rows.iter().all(|r| r["converged"] == true));
        assert!(steady_warnings(&long).is_empty(), "{:?}", long.warnings);
        assert!(long.rows.iter().all(|r| !r.contains_key("run_duration_s")));
    }

    #[test]
    fn tpp_with_huge_pages_gets_a_notice_and_static_placements_do_not() {
        let out = run_scenario(MOVING, "t.toml", &[], &[]).unwrap();
        let notices: Vec<_> = out
            .warnings
            .iter()
            .filter(|w| w.contains("migrated almost nothing"))
            .collect();
        assert_eq!(notices.len(), 1, "{:?}", out.warnings);
        assert!(
            notices[0].starts_with("tpp at intensity 0×")
                && notices[0].contains("THP")
                && notices[0].contains("sim.page_bytes = 4096"),
            "{}",
            notices[0]
        );
        // The notice follows the mechanism: everything in the default tier is another reason.
        let fits = run_scenario(
            &MOVING.replace(
                "capacity_bytes = 4000000000",
                "capacity_bytes = 32000000000",
            ),
            "t.toml",
            &[],
            &[],
        )
        .unwrap();
        assert!(
            fits.warnings
                .iter()
                .filter(|w| w.contains("migrated almost nothing"))
                .all(|w| w.contains("sits in the default tier")),
            "{:?}",
            fits.warnings
        );
    }

    #[test]
    fn until_steady_extends_a_run_up_to_its_cap() {
        let out = run_scenario(
            MOVING,
            "t.toml",
            &set(&[("sim.until_steady", "true"), ("sim.max_duration_s", "4")]),
            &[],
        )
        .unwrap();
        assert!(steady_warnings(&out).is_empty(), "{:?}", out.warnings);
        let hemem = &out.rows[0];
        assert_eq!(hemem["converged"], true);
        let d = hemem["run_duration_s"].as_f64().unwrap();
        assert!(d > 0.5 && d <= 4.0, "{d}");
        // Steady from the start: not extended.
        assert_eq!(out.rows[1]["run_duration_s"], 0.5);
        // The extended run went on rather than starting again, and its row is the plain
        // run's of that length, column for column (the run's length aside).
        let plain = run_scenario(
            MOVING,
            "t.toml",
            &set(&[("sim.duration_s", &d.to_string())]),
            &[],
        )
        .unwrap();
        for (k, v) in hemem.iter().filter(|(k, _)| *k != "run_duration_s") {
            assert_eq!(v, &plain.rows[0][k], "{k} at {d} s");
        }
        // A cap too short: the warning says to raise it.
        let capped = run_scenario(
            MOVING,
            "t.toml",
            &set(&[("sim.until_steady", "true"), ("sim.max_duration_s", "0.6")]),
            &[],
        )
        .unwrap();
        assert_eq!(capped.rows[0]["run_duration_s"], 0.6);
        let w = steady_warnings(&capped);
        assert!(w[0].contains("sim.max_duration_s"), "{}", w[0]);
        let e = err(&MOVING.replace(
            "measure_last_s = 0.2",
            "measure_last_s = 0.2\nmax_duration_s = 0.1",
        ));
        assert_eq!(e.key, "sim.max_duration_s");
    }

    #[test]
    fn until_steady_starts_again_where_a_run_cannot_go_on() {
        // A PMem alternate tier's feeder is not carried on: each length runs anew, and the
        // row is still the plain run's of the length it stopped at.
        let pmem = format!("{MOVING}[pmem_tier]\ntier = 1\n");
        let hemem = ("policy.names", "[\"hemem\"]");
        let out = run_scenario(
            &pmem,
            "t.toml",
            &set(&[
                hemem,
                ("sim.until_steady", "true"),
                ("sim.max_duration_s", "4"),
            ]),
            &[],
        )
        .unwrap();
        let row = &out.rows[0];
        let d = row["run_duration_s"].as_f64().unwrap();
        assert!(d > 0.5 && d <= 4.0, "{d}");
        assert!(
            row["pmem_write_requests"].as_f64().unwrap() > 0.0,
            "{row:?}"
        );
        let plain = run_scenario(
            &pmem,
            "t.toml",
            &set(&[hemem, ("sim.duration_s", &d.to_string())]),
            &[],
        )
        .unwrap();
        for (k, v) in row.iter().filter(|(k, _)| *k != "run_duration_s") {
            assert_eq!(v, &plain.rows[0][k], "{k} at {d} s");
        }
    }

    #[test]
    fn an_until_steady_run_takes_where_it_stops_from_a_longer_run() {
        use crate::registry::run_scenario_chain;
        use crate::scenario::Scenario;
        let on = set(&[("sim.until_steady", "true"), ("sim.max_duration_s", "4")]);
        let resolved = crate::registry::resolve_scenario(MOVING, "t.toml", &on, &[]).unwrap();
        let lengths = super::Tiering::stop_lengths(&resolved);
        assert_eq!(lengths, [0.5, 1.0, 2.0, 4.0]);
        let plain = crate::registry::resolve_scenario(MOVING, "t.toml", &[], &[]).unwrap();
        assert_eq!(super::Tiering::stop_lengths(&plain), [0.5]);
        // The chain's longest run (4 s, not until steady) keeps every length the other may
        // stop at; the other's output is its own run's, each policy stopping where it would.
        let chain = vec![
            (
                MOVING.to_string(),
                "t.toml".to_string(),
                set(&[("sim.duration_s", "4")]),
            ),
            (MOVING.to_string(), "t.toml".to_string(), on.clone()),
        ];
        let outs = run_scenario_chain(&chain, &lengths[..3], &[]).unwrap();
        let alone = run_scenario(MOVING, "t.toml", &on, &[]).unwrap();
        assert_eq!(
            serde_json::to_value(&outs[1].output).unwrap(),
            serde_json::to_value(&alone).unwrap()
        );
        let stopped: Vec<f64> = alone
            .rows
            .iter()
            .map(|r| r["run_duration_s"].as_f64().unwrap())
            .collect();
        assert!(
            stopped.contains(&0.5) && stopped.iter().any(|&d| d > 0.5),
            "{stopped:?}"
        );
        // Nothing simulated: far less host time than the run it was taken from.
        assert!(
            outs[1].cpu_s < outs[0].cpu_s / 5.0,
            "{} vs {}",
            outs[1].cpu_s,
            outs[0].cpu_s
        );
    }

    #[test]
    fn until_steady_lengths_double_up_to_the_cap() {
        assert_eq!(super::run_lengths(0.5, 4.0), [0.5, 1.0, 2.0, 4.0]);
        assert_eq!(super::run_lengths(0.5, 0.6), [0.5, 0.6]);
        assert_eq!(
            super::run_lengths(150.0, 1200.0),
            [150.0, 300.0, 600.0, 1200.0]
        );
        assert_eq!(super::run_lengths(1.0, 1.0), [1.0]);
    }

    #[test]
    fn hot_set_larger_than_working_set_is_an_error() {
        let e = err(&SMALL.replace("hot_set_bytes = 2147483648", "hot_set_bytes = 9999999999"));
        assert_eq!(e.key, "workload.hot_set_bytes");
        assert_eq!(e.line, Some(5));
        assert!(e.message.contains("larger than working_set_bytes"), "{e}");
    }

    #[test]
    fn zero_capacity_tier_and_unknown_keys_are_errors() {
        let tiers = "[[tiers]]\nname = \"d\"\ncapacity_bytes = 0\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 140.0\n[[tiers]]\nname = \"a\"\ncapacity_bytes = 96000000000\nunloaded_latency_ns = 135.0\nread_bandwidth_gb_s = 75.0\n";
        let e = err(&format!("{SMALL}{tiers}"));
        assert_eq!(e.key, "tiers.0.capacity_bytes");
        assert!(e.message.contains("capacity"), "{e}");
        let e = err(&SMALL.replace("seed = 3", "seed = 3\nquantum = 1"));
        assert!(e.message.contains("unknown key"), "{e}");
        let e = err(&SMALL.replace("duration_s = 0.5", "duration_s = 0.5\npage_bytes = 0"));
        assert_eq!(e.key, "sim.page_bytes");
        let e = err(&SMALL.replace(
            "working_set_bytes = 8589934592",
            "working_set_bytes = 200000000000",
        ));
        assert_eq!(e.key, "workload.working_set_bytes");
        let e = err(&SMALL.replace("\"static-default\"", "\"tpp-6.9\""));
        assert_eq!(e.key, "policy.names");
        assert!(
            e.message.contains("colloid-memtis") && e.message.contains("best"),
            "{e}"
        );
        let e = err(&SMALL.replace("[sim]", "[policy.tpp]\nhot_threshold_ms = 0.0\n[sim]"));
        assert_eq!(e.key, "policy.tpp.hot_threshold_ms");
    }

    #[test]
    fn declared_and_cross_key_checks_name_the_key_path() {
        let nested = |table: &str| err(&SMALL.replace("[sim]", &format!("{table}\n[sim]")));
        let e = nested("[policy.memtis]\nwatermark = 0.9");
        assert_eq!(e.key, "policy.memtis.watermark");
        assert!(e.message.contains("0.5"), "{e}");
        let e = nested("[policy.hemem]\nhot_threshold = 10\ncooling_threshold = 5");
        assert_eq!(e.key, "policy.hemem.cooling_threshold");
        let e = nested("[pmem_tier]\nchunk_bytes = 3000");
        assert_eq!(e.key, "pmem_tier.chunk_bytes");
        assert!(e.message.contains("power of two"), "{e}");
        let e = nested("[policy.tpp]\nscan_step = 5");
        assert!(e.message.contains("unknown key"), "{e}");
        assert!(e.key.starts_with("policy.tpp"), "{e}");
        let e = err(&SMALL.replace("duration_s = 0.5", "duration_s = 0.5\nquantum_s = 1.0"));
        assert_eq!(e.key, "sim.duration_s");
    }

    #[test]
    fn user_curve_is_accepted_and_checked() {
        let curve = "[[tiers]]\nname = \"default\"\ncapacity_bytes = 32000000000\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 140.0\ncurve = [[0.0, 1.0], [0.5, 1.2], [1.0, 2.5]]\n[[tiers]]\nname = \"alternate\"\ncapacity_bytes = 96000000000\nunloaded_latency_ns = 135.0\nread_bandwidth_gb_s = 75.0\n";
        assert!(run_scenario(&format!("{SMALL}{curve}"), "t.toml", &[], &[]).is_ok());
        let bad = curve.replace("[0.5, 1.2]", "[0.5, 0.8]");
        let e = err(&format!("{SMALL}{bad}"));
        assert_eq!(e.key, "tiers.0.curve");
    }
}
