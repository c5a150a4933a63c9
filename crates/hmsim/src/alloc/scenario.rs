//! The `allocators` scenario: one workload through each listed allocator.

use serde_json::json;

use super::cost::CostTable;
use super::driver::{self, CostModel, RunResult};
use super::machine::AllocMachine;
use super::rows::{AllocRow, LatencyRow, WearRow};
use super::shapes::SyntheticSpec;
use super::spec::{build, AllocatorSpec};
use super::wear::WearModel;
use super::workload::{from_trace_as, AllocWorkload, Kernel};
use super::MAX_ORDER;
use crate::config::{Validate, Validator};
use crate::error::RunError;
use crate::scenario::{Column, Ctx, Experiment, Output, ResultRow, Scenario, Step};

/// The `allocators` module.
pub struct Allocators;

crate::params! {
    #[params(check)]
    /// A `module = "allocators"` scenario.
    #[derive(Debug, Clone)]
    pub struct AllocConfig {
        // Free lists cost 12 bytes per frame (per layer): 2^25 frames (128 GiB of 4 KiB
        // pages) needs under 1 GB.
        pub frames: u64 = 1 << 18 => range(1, 1 << 25), "frames",
            "Frames (4 KiB pages) in the simulated array.";
        pub cpu_ghz: f64 = 2.4 => range(0.1, 100.0), "",
            "Converts request timestamps (ns) to modelled cycles.";
        pub probe_orders: Vec<u8> = vec![3, 9] => any, "",
            "Orders probed after the run (fragmentation), each 0 to the maximum order.";
        pub probe_requests: u32 = 64 => range(0, 1_000_000), "", "Requests per probed order.";
        pub allocators: Vec<AllocatorSpec> = ["buddy", "lazy-buddy", "ibuddy", "lazy-ibuddy"]
            .iter()
            .map(|n| AllocatorSpec::named(n))
            .collect() => nested, "",
            "The allocators compared, at least one (`[[allocators]]`); default: the four kinds with default parameters.";
        pub workload: AllocWorkloadSpec = AllocWorkloadSpec::default() => nested, "",
            "The request stream: a kmem trace or the synthetic generator.";
        pub cost: CostTable = CostTable::default() => nested, "",
            "Cycles per primitive operation (docs/allocators.md).";
        pub machine: AllocMachine = AllocMachine::default() => nested, "",
            "Cores and caches the cost model runs on (docs/allocators.md).";
        pub wear: WearModel = WearModel::default() => nested, "",
            "Endurance of the memory the frames live in (docs/allocators.md).";
        pub real: bool = false => any, "",
            "Also run each allocator on real threads (one per workload CPU), timing every request with the cycle counter: rows with `source = \"real\"` beside the model's.";
    }
}

crate::params! {
    #[params(check)]
    /// Either a kmem trace (`trace = "path"`, relative to the scenario file) or the synthetic
    /// generator (`[workload.synthetic]`, the default).
    #[derive(Debug, Clone)]
    pub struct AllocWorkloadSpec {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub name: Option<String> = None => any, "", "The workload's name in the results.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub trace: Option<String> = None => any, "",
            "A kmem trace file, relative to the scenario (docs/allocators.md).";
        pub kernel: Kernel = Kernel::AsRecorded => any, "",
            "Trace replay: `as-recorded`, or `2.6.32` (the requests the study's kernel would have made; docs/allocators.md).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub synthetic: Option<SyntheticSpec> = None => nested, "",
            "The synthetic generator's parameters (docs/allocators.md); used when no trace is given.";
    }
}

impl AllocWorkloadSpec {
    fn check(&self, v: &mut Validator) {
        if self.trace.is_some() && self.synthetic.is_some() {
            v.fail(
                "synthetic",
                "give either trace or [workload.synthetic], not both",
            );
        }
    }
}

impl AllocConfig {
    fn check(&self, v: &mut Validator) {
        for (i, &k) in self.probe_orders.iter().enumerate() {
            v.range(&format!("probe_orders.{i}"), k, 0, MAX_ORDER, "");
        }
        if self.allocators.is_empty() {
            v.fail("allocators", "empty; list at least one [[allocators]]");
        }
        for (i, a) in self.allocators.iter().enumerate() {
            v.nested(&format!("allocators.{i}"), &Frames(a, self.frames));
        }
        // An allocator listed twice with the same keys would run twice, two identical rows.
        for (j, b) in self.allocators.iter().enumerate() {
            if let Some(i) = self.allocators[..j].iter().position(|a| a == b) {
                v.fail(
                    &format!("allocators.{j}"),
                    format!(
                        "'{}' repeats entry {i} of 'allocators' with the same keys; list each \
                         configuration once",
                        b.name
                    ),
                );
                break;
            }
        }
    }
}

/// An allocator with the frame array it runs over: the check that needs both.
struct Frames<'a>(&'a AllocatorSpec, u64);

impl Validate for Frames<'_> {
    fn validate(&self, v: &mut Validator) {
        self.0.check_frames(v, self.1);
    }
}

fn load_workload(sc: &AllocConfig, ctx: &Ctx) -> Result<AllocWorkload, RunError> {
    let mut w = match &sc.workload.trace {
        Some(rel) => from_trace_as(
            &ctx.path(rel),
            ctx.file(),
            "workload.trace",
            sc.workload.kernel,
        )?,
        None => {
            let spec = sc.workload.synthetic.clone().unwrap_or_default();
            let name = format!("synthetic-{}", spec.shape_name());
            spec.resolve().generate(ctx.seed(), &name)
        }
    };
    if let Some(n) = &sc.workload.name {
        w.name = n.clone();
    }
    Ok(w)
}

fn row(spec: &AllocatorSpec, w: &AllocWorkload, sc: &AllocConfig, r: &RunResult) -> AllocRow {
    let life = sc.wear.lifetime_with_start_gap(&r.wear, w.duration_ns);
    let per_req = |x: u64| Some((r.requests != 0).then(|| x as f64 / r.requests as f64));
    let src = r.sources;
    let mut row = AllocRow {
        allocator: spec.label(),
        name: spec.name.clone(),
        batch: spec.batch_column(),
        policy: spec.policy.name(),
        workload: w.name.clone(),
        source: "model",
        threads: w.cpus,
        frames: sc.frames,
        requests: r.requests,
        allocs: r.allocs,
        frees: r.frees,
        failures: r.failures,
        cores: sc.machine.cores,
        // The study's quantity: every memory request, allocations and frees together.
        mean_cycles: r.all.mean,
        std_cycles: r.all.std,
        p50_cycles: r.all.p50 as u64,
        p99_cycles: r.all.p99 as u64,
        p999_cycles: r.all.p999 as u64,
        alloc_mean_cycles: r.alloc.mean,
        alloc_std_cycles: r.alloc.std,
        alloc_p99_cycles: r.alloc.p99 as u64,
        free_mean_cycles: r.free.mean,
        free_std_cycles: r.free.std,
        free_p99_cycles: r.free.p99 as u64,
        alloc_count_max: r.fairness.max,
        alloc_count_mean: r.fairness.mean,
        alloc_count_max_over_mean: r.fairness.max_over_mean,
        alloc_count_cov: r.fairness.cov,
        frames_touched: r.fairness.touched,
        lifetime_runs: life.runs,
        lifetime_ideal_runs: life.ideal_runs,
        lifetime_years: life.years,
        lifetime_start_gap_runs: life.start_gap_runs,
        lifetime_start_gap_random_runs: life.start_gap_random_runs,
        locks_per_request: per_req(r.ops.locks),
        contended_locks: Some(r.ops.contended_locks),
        lock_wait_cycles: Some(r.ops.wait_cycles),
        list_ops_per_request: per_req(r.ops.list_ops),
        bitmap_words_per_request: per_req(r.ops.bitmap_words),
        lines_per_request: per_req(r.ops.lines),
        l1_lines_per_request: per_req(src.l1),
        l2_lines_per_request: per_req(src.l2),
        llc_lines_per_request: per_req(src.llc),
        cross_core_lines_per_request: per_req(src.cross_core),
        dram_lines_per_request: per_req(src.dram),
        splits: Some(r.ops.splits),
        merges: Some(r.ops.merges),
        refills: Some(r.ops.refills),
        drains: Some(r.ops.drains),
        migratetype_steals: Some(r.ops.steals),
        trace_skipped_frees: w.skipped_frees,
        trace_order_mismatch_frees: w.order_mismatch_frees,
        trace_allocs_over_live: w.allocs_over_live,
        trace_orders_above_max: w.orders_above_max,
        ..AllocRow::default()
    };
    // The orders the workload asks for (the same set for every allocator).
    for k in 0..=MAX_ORDER as usize {
        let a = r.order_attempts[k];
        if a > 0 {
            row.set_order_success_rate(k, r.order_successes[k] as f64 / a as f64);
        }
    }
    for p in &r.probes {
        let rate = (p.attempts != 0).then(|| p.successes as f64 / p.attempts as f64);
        row.set_probe(p.order, p.free_blocks, rate, p.mean_cycles);
    }
    row
}

/// One allocator on real threads; model-only columns (primitive operation counts, probes)
/// are left out.
fn real_row(spec: &AllocatorSpec, w: &AllocWorkload, sc: &AllocConfig) -> (AllocRow, RunResult) {
    let rr = super::real::run(spec, sc.frames, w);
    let allocs = rr.alloc.count - rr.failures;
    let r = RunResult {
        requests: rr.alloc.count + rr.free.count,
        allocs,
        frees: rr.free.count,
        failures: rr.failures,
        frees_of_failed: 0,
        all: rr.all,
        alloc: rr.alloc,
        free: rr.free,
        quantiles: rr.quantiles,
        order_attempts: [0; MAX_ORDER as usize + 1],
        order_successes: [0; MAX_ORDER as usize + 1],
        ops: Default::default(),
        sources: Default::default(),
        fairness: super::wear::fairness(&rr.wear),
        probes: Vec::new(),
        free_frames_end: rr.free_frames_end,
        wear: rr.wear,
    };
    let model = row(spec, w, sc, &r);
    let m = AllocRow {
        source: "real",
        checker_violations: Some(rr.violations),
        outliers: Some(rr.outliers),
        free_frames_end: Some(rr.free_frames_end),
        // Everything the model counts and a real run cannot see.
        locks_per_request: None,
        contended_locks: None,
        lock_wait_cycles: None,
        list_ops_per_request: None,
        bitmap_words_per_request: None,
        lines_per_request: None,
        l1_lines_per_request: None,
        l2_lines_per_request: None,
        llc_lines_per_request: None,
        cross_core_lines_per_request: None,
        dram_lines_per_request: None,
        splits: None,
        merges: None,
        refills: None,
        drains: None,
        migratetype_steals: None,
        ..model
    };
    (m, r)
}

/// The response-time distribution of one run's requests, one row per quantile.
fn latency_rows(label: &str, source: &'static str, r: &RunResult) -> Vec<LatencyRow> {
    r.quantiles
        .iter()
        .map(|&(q, c)| LatencyRow {
            allocator: label.to_string(),
            source,
            quantile: q,
            cycles: c,
        })
        .collect()
}

/// Allocation-count histogram (log2 bins) per allocator.
fn wear_rows(label: &str, wear: &[u32]) -> Vec<WearRow> {
    let mut bins = [0u64; 33];
    for &c in wear {
        let b = if c == 0 {
            0
        } else {
            33 - c.leading_zeros() as usize
        };
        bins[b] += 1;
    }
    let mut rows = Vec::new();
    for (b, &n) in bins.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let (lo, hi) = if b == 0 {
            (0u64, 0u64)
        } else {
            (1u64 << (b - 1), (1u64 << b) - 1)
        };
        rows.push(WearRow {
            allocator: label.to_string(),
            alloc_count_lo: lo,
            alloc_count_hi: hi,
            frames: n,
        });
    }
    rows
}

/// What a run whose allocations failed says: a failed request is costed (its search of
/// the free lists) and counted in the latency figures, its block is never freed or worn,
/// and where the model fails the kernel would reclaim or compact; so the run's latency,
/// wear and lifetime are not the workload's. Whether the array is too small for what the
/// workload holds at once, or fragmentation left no block of the order asked for, decides
/// what to change.
pub(super) fn failures_warning(
    label: &str,
    failures: u64,
    allocs: u64,
    frames: u64,
    peak_live_frames: u64,
) -> String {
    let attempts = allocs + failures;
    let share = 100.0 * failures as f64 / attempts.max(1) as f64;
    let mib = |f: u64| f as f64 * 4096.0 / (1 << 20) as f64;
    let cause = if peak_live_frames > frames {
        format!(
            "the workload holds up to {peak_live_frames} frames ({:.0} MiB) at once, more than the array's \
             {frames} ({:.0} MiB): raise `frames` to at least {peak_live_frames} (a trace from a larger \
             machine needs its memory)",
            mib(peak_live_frames),
            mib(frames)
        )
    } else {
        format!(
            "the workload holds at most {peak_live_frames} of the array's {frames} frames at once, so \
             the allocator had no free block of the order asked for where it looked (fragmentation, \
             or frames waiting in per-CPU lists)"
        )
    };
    format!(
        "{label}: {failures} of {attempts} allocations ({share:.2} %) failed: {cause}. A failed request is \
         counted in mean_cycles and the percentiles at the cost of its search, its block is never \
         freed or worn, and the kernel would reclaim or compact where the model fails: the run's \
         latency, wear and lifetime figures are not the workload's"
    )
}

impl Scenario for Allocators {
    const MODULE: &'static str = "allocators";
    const ABOUT: &'static str = "page allocators: buddy, per-CPU lists, iBuddy; latency and wear";
    type Config = AllocConfig;
    type Row = AllocRow;
    const DOCS: &'static str = "allocators.md";
    const STUDY: &'static str = "allocators";
    const SWEEP_METRICS: &'static [&'static str] =
        &["mean_cycles", "p99_cycles", "alloc_count_cov"];
    const TABLES: &'static [(&'static str, &'static [Column])] =
        &[("wear", WearRow::COLUMNS), ("latency", LatencyRow::COLUMNS)];

    type Experiment<'a> = AllocRun;

    fn build<'a>(cfg: &'a AllocConfig, ctx: &Ctx<'a>) -> Result<AllocRun, RunError> {
        let mut sc = cfg.clone();
        if let Some(d) = &sc.wear.device {
            let spec = ctx.device(d, "wear.device")?;
            sc.wear.endurance_writes = spec
                .endurance
                .as_ref()
                .and_then(|e| e.write_cycles)
                .ok_or_else(|| {
                    ctx.error(
                        "wear.device",
                        format!("device '{d}' has no endurance.write_cycles; give wear.endurance_writes instead"),
                    )
                })?;
        }
        let w = load_workload(&sc, ctx)?;
        Ok(AllocRun {
            peak_live_frames: None,
            sc,
            w,
            wear: Vec::new(),
            latency: Vec::new(),
            best: None,
            fairest: None,
        })
    }
}

/// The request stream replayed through each allocator of the scenario.
pub struct AllocRun {
    /// The configuration, with the wear device's endurance filled in.
    sc: AllocConfig,
    w: AllocWorkload,
    /// The most frames the workload holds at once ([`AllocWorkload::peak_live_frames`]),
    /// worked out when a run's allocations first fail (only their warning reads it: a pass
    /// over the requests every run would pay for nothing).
    peak_live_frames: Option<u64>,
    wear: Vec<WearRow>,
    latency: Vec<LatencyRow>,
    /// The lowest mean cycles so far, and the fairest wear (lowest CoV), with their labels.
    best: Option<(f64, String)>,
    fairest: Option<(f64, String)>,
}

impl Experiment for AllocRun {
    /// The index of an allocator in `allocators`.
    type Point = usize;
    type Row = AllocRow;

    fn unit(&self) -> &'static str {
        "allocators"
    }

    fn points(&self) -> Vec<usize> {
        (0..self.sc.allocators.len()).collect()
    }

    fn run_point(
        &mut self,
        i: usize,
        ctx: &Ctx,
        out: &mut Output<AllocRow>,
    ) -> Result<Step<usize>, RunError> {
        let (sc, w) = (&self.sc, &self.w);
        let spec = &sc.allocators[i];
        let mut a = build(spec, sc.frames).map_err(|e| ctx.error("allocators", e))?;
        let model = CostModel {
            cost: sc.cost,
            machine: sc.machine,
            cpu_ghz: sc.cpu_ghz,
            seed: ctx.seed(),
            pipelined: driver::pipelined_by_default(),
        };
        let r = driver::run(a.as_mut(), w, &model, &sc.probe_orders, sc.probe_requests);
        let label = spec.label();
        if self.best.as_ref().is_none_or(|b| r.all.mean < b.0) {
            self.best = Some((r.all.mean, label.clone()));
        }
        if self.fairest.as_ref().is_none_or(|b| r.fairness.cov < b.0) {
            self.fairest = Some((r.fairness.cov, label.clone()));
        }
        if r.failures > 0 {
            let peak = *self
                .peak_live_frames
                .get_or_insert_with(|| w.peak_live_frames());
            let f = sc.frames;
            out.warnings
                .push(failures_warning(&label, r.failures, r.allocs, f, peak));
        }
        out.rows.push(row(spec, w, sc, &r));
        self.wear.extend(wear_rows(&label, &r.wear));
        self.latency.extend(latency_rows(&label, "model", &r));
        if sc.real {
            let (m, rr) = real_row(spec, w, sc);
            out.rows.push(m);
            self.latency.extend(latency_rows(&label, "real", &rr));
        }
        Ok(Step::Done)
    }

    fn finish(self, mut out: Output<AllocRow>) -> Result<Output<AllocRow>, RunError> {
        let (sc, w) = (&self.sc, &self.w);
        out.table("wear", &self.wear);
        out.table("latency", &self.latency);
        let h = &mut out.headline;
        h.insert("workload".into(), json!(w.name));
        h.insert("endurance_writes".into(), json!(sc.wear.endurance_writes));
        h.insert("requests".into(), json!(w.reqs.len()));
        if let Some((c, l)) = self.best {
            h.insert("fastest_allocator".into(), json!(l));
            h.insert("fastest_mean_cycles".into(), json!(c));
        }
        if let Some((c, l)) = self.fairest {
            h.insert("fairest_allocator".into(), json!(l));
            h.insert("fairest_alloc_count_cov".into(), json!(c));
        }
        Ok(out)
    }
}
