//! The `allocators` scenario: one workload through each listed allocator.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::cost::CostTable;
use super::driver::{self, CostModel, RunResult};
use super::machine::AllocMachine;
use super::shapes::SyntheticSpec;
use super::spec::{build, AllocatorSpec};
use super::wear::WearModel;
use super::workload::{from_trace_as, AllocWorkload, Kernel};
use super::MAX_ORDER;
use crate::config::{parse_toml, Validate, Validator};
use crate::device::Catalog;
use crate::error::ConfigError;
use crate::registry::RunOutput;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocScenario {
    pub module: String,
    #[serde(default)]
    pub seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Frames (4 KiB pages) in the simulated array.
    #[serde(default = "default_frames")]
    pub frames: u64,
    /// Converts request timestamps (ns) to modelled cycles.
    #[serde(default = "default_ghz")]
    pub cpu_ghz: f64,
    /// Orders probed after the run (fragmentation).
    #[serde(default = "default_probe_orders")]
    pub probe_orders: Vec<u8>,
    /// Requests per probed order.
    #[serde(default = "default_probe_requests")]
    pub probe_requests: u32,
    #[serde(default = "default_allocators")]
    pub allocators: Vec<AllocatorSpec>,
    #[serde(default)]
    pub workload: AllocWorkloadSpec,
    #[serde(default)]
    pub cost: CostTable,
    /// Cores and caches the cost model runs on.
    #[serde(default)]
    pub machine: AllocMachine,
    #[serde(default)]
    pub wear: WearModel,
    /// Also run each allocator on real threads (one per workload CPU), timing every request
    /// with the cycle counter: rows with `source = "real"` beside the model's.
    #[serde(default)]
    pub real: bool,
}

fn default_frames() -> u64 {
    1 << 18
}
fn default_ghz() -> f64 {
    2.4
}
fn default_probe_orders() -> Vec<u8> {
    vec![3, 9]
}
fn default_probe_requests() -> u32 {
    64
}
fn default_allocators() -> Vec<AllocatorSpec> {
    ["buddy", "lazy-buddy", "ibuddy", "lazy-ibuddy"]
        .iter()
        .map(|n| AllocatorSpec::named(n))
        .collect()
}

/// Either a kmem trace (`trace = "path"`, relative to the scenario file) or the synthetic
/// generator (`[workload.synthetic]`, the default).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocWorkloadSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Trace replay: `"as-recorded"` (default) or `"2.6.32"` (the requests the study's
    /// kernel would have made; see `docs/allocators.md`).
    #[serde(default)]
    pub kernel: Kernel,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<SyntheticSpec>,
}

impl Validate for AllocWorkloadSpec {
    fn validate(&self, v: &mut Validator) {
        if self.trace.is_some() && self.synthetic.is_some() {
            v.fail(
                "synthetic",
                "give either trace or [workload.synthetic], not both",
            );
        }
        if let Some(s) = &self.synthetic {
            v.nested("synthetic", s);
        }
    }
}

impl Validate for AllocScenario {
    fn validate(&self, v: &mut Validator) {
        // Free lists cost 12 bytes per frame (per layer): 2^25 frames (128 GiB of 4 KiB
        // pages) needs under 1 GB.
        v.range("frames", self.frames, 1, 1 << 25, "frames");
        v.range("cpu_ghz", self.cpu_ghz, 0.1, 100.0, "GHz");
        for (i, &k) in self.probe_orders.iter().enumerate() {
            v.range(&format!("probe_orders.{i}"), k, 0, MAX_ORDER, "");
        }
        v.range("probe_requests", self.probe_requests, 0, 1_000_000, "");
        if self.allocators.is_empty() {
            v.fail("allocators", "empty; list at least one [[allocators]]");
        }
        for (i, a) in self.allocators.iter().enumerate() {
            v.nested(&format!("allocators.{i}"), &Frames(a, self.frames));
        }
        v.nested("workload", &self.workload);
        v.nested("cost", &self.cost);
        v.nested("machine", &self.machine);
        v.nested("wear", &self.wear);
    }
}

struct Frames<'a>(&'a AllocatorSpec, u64);

impl Validate for Frames<'_> {
    fn validate(&self, v: &mut Validator) {
        self.0.validate_for(v, self.1);
    }
}

fn load_workload(sc: &AllocScenario, file: &str) -> Result<AllocWorkload, ConfigError> {
    let mut w = match &sc.workload.trace {
        Some(rel) => {
            let base: PathBuf = Path::new(file)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            from_trace_as(&base.join(rel), file, "workload.trace", sc.workload.kernel)?
        }
        None => {
            let spec = sc.workload.synthetic.clone().unwrap_or_default();
            let name = format!("synthetic-{}", spec.shape_name());
            spec.resolve().generate(sc.seed, &name)
        }
    };
    if let Some(n) = &sc.workload.name {
        w.name = n.clone();
    }
    Ok(w)
}

fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

fn row(
    spec: &AllocatorSpec,
    w: &AllocWorkload,
    sc: &AllocScenario,
    r: &RunResult,
) -> Map<String, Value> {
    let life = sc.wear.lifetime_with_start_gap(&r.wear, w.duration_ns);
    let per_req = |x: u64| {
        if r.requests == 0 {
            Value::Null
        } else {
            json!(x as f64 / r.requests as f64)
        }
    };
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    put("allocator", json!(spec.label()));
    put("name", json!(spec.name));
    put("batch", json!(spec.batch_column()));
    put("policy", json!(spec.policy.name()));
    put("workload", json!(w.name));
    put("source", json!("model"));
    put("threads", json!(w.cpus));
    put("frames", json!(sc.frames));
    put("requests", json!(r.requests));
    put("allocs", json!(r.allocs));
    put("frees", json!(r.frees));
    put("failures", json!(r.failures));
    put("cores", json!(sc.machine.cores));
    // The study's quantity: every memory request, allocations and frees together.
    put("mean_cycles", json!(r.all.mean));
    put("std_cycles", json!(r.all.std));
    put("p50_cycles", json!(r.all.p50));
    put("p99_cycles", json!(r.all.p99));
    put("p999_cycles", json!(r.all.p999));
    put("alloc_mean_cycles", json!(r.alloc.mean));
    put("alloc_std_cycles", json!(r.alloc.std));
    put("alloc_p99_cycles", json!(r.alloc.p99));
    put("free_mean_cycles", json!(r.free.mean));
    put("free_std_cycles", json!(r.free.std));
    put("free_p99_cycles", json!(r.free.p99));
    put("alloc_count_max", json!(r.fairness.max));
    put("alloc_count_mean", json!(r.fairness.mean));
    put("alloc_count_max_over_mean", json!(r.fairness.max_over_mean));
    put("alloc_count_cov", json!(r.fairness.cov));
    put("frames_touched", json!(r.fairness.touched));
    put("lifetime_runs", finite(life.runs));
    put("lifetime_ideal_runs", finite(life.ideal_runs));
    put("lifetime_years", life.years.map_or(Value::Null, finite));
    put(
        "lifetime_start_gap_runs",
        life.start_gap_runs.map_or(Value::Null, finite),
    );
    put(
        "lifetime_start_gap_random_runs",
        life.start_gap_random_runs.map_or(Value::Null, finite),
    );
    put("locks_per_request", per_req(r.ops.locks));
    put("contended_locks", json!(r.ops.contended_locks));
    put("lock_wait_cycles", json!(r.ops.wait_cycles));
    put("list_ops_per_request", per_req(r.ops.list_ops));
    put("bitmap_words_per_request", per_req(r.ops.bitmap_words));
    put("lines_per_request", per_req(r.ops.lines));
    let src = r.sources;
    for (k, n) in [
        ("l1", src.l1),
        ("l2", src.l2),
        ("llc", src.llc),
        ("cross_core", src.cross_core),
        ("dram", src.dram),
    ] {
        put(&format!("{k}_lines_per_request"), per_req(n));
    }
    put("splits", json!(r.ops.splits));
    put("merges", json!(r.ops.merges));
    put("refills", json!(r.ops.refills));
    put("drains", json!(r.ops.drains));
    put("migratetype_steals", json!(r.ops.steals));
    // The orders the workload asks for (the same set for every allocator).
    for k in 0..=MAX_ORDER as usize {
        let a = r.order_attempts[k];
        if a > 0 {
            put(
                &format!("order{k}_success_rate"),
                json!(r.order_successes[k] as f64 / a as f64),
            );
        }
    }
    for p in &r.probes {
        let k = p.order;
        put(&format!("probe_order{k}_free_blocks"), json!(p.free_blocks));
        put(
            &format!("probe_order{k}_success_rate"),
            if p.attempts == 0 {
                Value::Null
            } else {
                json!(p.successes as f64 / p.attempts as f64)
            },
        );
        put(&format!("probe_order{k}_mean_cycles"), json!(p.mean_cycles));
    }
    put("trace_skipped_frees", json!(w.skipped_frees));
    put("trace_order_mismatch_frees", json!(w.order_mismatch_frees));
    put("trace_allocs_over_live", json!(w.allocs_over_live));
    put("trace_orders_above_max", json!(w.orders_above_max));
    m
}

/// One allocator on real threads; model-only columns (primitive operation counts, probes)
/// are left out.
fn real_row(
    spec: &AllocatorSpec,
    w: &AllocWorkload,
    sc: &AllocScenario,
) -> (Map<String, Value>, RunResult) {
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
    let mut m = row(spec, w, sc, &r);
    m.retain(|k, _| {
        !(k.ends_with("_per_request")
            || k.starts_with("probe_")
            || matches!(
                k.as_str(),
                "contended_locks"
                    | "lock_wait_cycles"
                    | "splits"
                    | "merges"
                    | "refills"
                    | "drains"
                    | "migratetype_steals"
            ))
    });
    m.insert("source".into(), json!("real"));
    m.insert("checker_violations".into(), json!(rr.violations));
    m.insert("outliers".into(), json!(rr.outliers));
    m.insert("free_frames_end".into(), json!(rr.free_frames_end));
    (m, r)
}

/// The response-time distribution of one run's requests, one row per quantile.
fn latency_rows(label: &str, source: &str, r: &RunResult) -> Vec<Map<String, Value>> {
    r.quantiles
        .iter()
        .map(|&(q, c)| {
            let mut m = Map::new();
            m.insert("allocator".into(), json!(label));
            m.insert("source".into(), json!(source));
            m.insert("quantile".into(), json!(q));
            m.insert("cycles".into(), json!(c));
            m
        })
        .collect()
}

/// Allocation-count histogram (log2 bins) per allocator.
fn wear_rows(label: &str, wear: &[u32]) -> Vec<Map<String, Value>> {
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
        let mut m = Map::new();
        m.insert("allocator".into(), json!(label));
        m.insert("alloc_count_lo".into(), json!(lo));
        m.insert("alloc_count_hi".into(), json!(hi));
        m.insert("frames".into(), json!(n));
        rows.push(m);
    }
    rows
}

pub fn run(text: &str, file: &str, catalog: &Catalog) -> Result<RunOutput, ConfigError> {
    let mut sc: AllocScenario = parse_toml(text, file)?;
    Validator::check(file, text, &sc)?;
    if let Some(d) = &sc.wear.device {
        let spec = catalog.require(d, file, "wear.device")?;
        sc.wear.endurance_writes = spec
            .endurance
            .as_ref()
            .and_then(|e| e.write_cycles)
            .ok_or_else(|| {
                ConfigError::new(
                    file,
                    "wear.device",
                    format!("device '{d}' has no endurance.write_cycles; give wear.endurance_writes instead"),
                )
            })?;
    }
    let w = load_workload(&sc, file)?;
    let mut out = RunOutput::new(
        "allocators",
        sc.seed,
        serde_json::to_value(&sc).unwrap_or(Value::Null),
    );
    let (mut wear, mut latency) = (Vec::new(), Vec::new());
    let mut best: Option<(f64, String)> = None;
    let mut fairest: Option<(f64, String)> = None;
    for spec in &sc.allocators {
        let mut a = build(spec, sc.frames);
        let model = CostModel {
            cost: sc.cost,
            machine: sc.machine,
            cpu_ghz: sc.cpu_ghz,
            seed: sc.seed,
        };
        let r = driver::run(a.as_mut(), &w, &model, &sc.probe_orders, sc.probe_requests);
        let label = spec.label();
        if best.as_ref().is_none_or(|b| r.all.mean < b.0) {
            best = Some((r.all.mean, label.clone()));
        }
        if fairest.as_ref().is_none_or(|b| r.fairness.cov < b.0) {
            fairest = Some((r.fairness.cov, label.clone()));
        }
        out.rows.push(row(spec, &w, &sc, &r));
        wear.extend(wear_rows(&label, &r.wear));
        latency.extend(latency_rows(&label, "model", &r));
        if sc.real {
            let (m, rr) = real_row(spec, &w, &sc);
            out.rows.push(m);
            latency.extend(latency_rows(&label, "real", &rr));
        }
    }
    out.tables.insert("wear".into(), wear);
    out.tables.insert("latency".into(), latency);
    let h = &mut out.headline;
    h.insert("workload".into(), json!(w.name));
    h.insert("endurance_writes".into(), json!(sc.wear.endurance_writes));
    h.insert("requests".into(), json!(w.reqs.len()));
    if let Some((c, l)) = best {
        h.insert("fastest_allocator".into(), json!(l));
        h.insert("fastest_mean_cycles".into(), json!(c));
    }
    if let Some((c, l)) = fairest {
        h.insert("fairest_allocator".into(), json!(l));
        h.insert("fairest_alloc_count_cov".into(), json!(c));
    }
    Ok(out)
}
