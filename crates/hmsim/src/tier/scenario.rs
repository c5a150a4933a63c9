//! The `tiering` scenario: tiers, a GUPS workload, antagonist intensities and policies; one
//! results row per (policy, intensity) and a per-quantum `timeline` table.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::apps::{self, AppStream};
use super::colloid::ColloidParams;
use super::cost;
use super::engine::TierSpec;
use super::hemem::HeMemParams;
use super::memtis::MemtisParams;
use super::oracle::OracleStatic;
use super::params;
use super::pmem_tier::{dimm_of, PmemFeeder, PmemTierSpec};
use super::policy::{make_policy_with, PolicyParams, TieringPolicy, POLICIES};
use super::replay::{simulate_stream, ReplayCounts, StreamDemand};
use super::sim::{
    simulate_observed, Antagonists, QuantumObserver, QuantumRecord, SimParams, SimResult,
};
use super::stream::{AccessStream, TraceStream};
use super::tpp::TppParams;
use super::workload::{Gups, GupsSpec};
use crate::config::{parse_toml, Validate, Validator};
use crate::device::Catalog;
use crate::error::ConfigError;
use crate::registry::RunOutput;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierScenario {
    pub module: String,
    #[serde(default)]
    pub seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Tier 0 is the default tier; default: the study's two tiers (params.rs).
    #[serde(default = "params::reference_tiers")]
    pub tiers: Vec<TierSpec>,
    #[serde(default)]
    pub workload: GupsSpec,
    #[serde(default)]
    pub antagonist: AntagonistSpec,
    #[serde(default)]
    pub policy: PolicySpec,
    #[serde(default)]
    pub sim: SimSpec,
    /// The alternate tier is PMem: feed its writes to the PMem write path (pmem_tier.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmem_tier: Option<PmemTierSpec>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AntagonistSpec {
    #[serde(default)]
    pub tier: usize,
    /// One run per intensity (× `cores_per_intensity` cores).
    #[serde(default = "d_intensities")]
    pub intensities: Vec<u32>,
    #[serde(default = "d_cpi")]
    pub cores_per_intensity: u32,
    #[serde(default = "d_rpc")]
    pub reads_per_core: f64,
    #[serde(default = "d_arf")]
    pub read_fraction: f64,
    /// Contention jumps to `change_to_intensity` at `change_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_to_intensity: Option<u32>,
}

fn d_intensities() -> Vec<u32> {
    vec![0]
}
fn d_cpi() -> u32 {
    params::CORES_PER_INTENSITY
}
fn d_rpc() -> f64 {
    params::ANTAGONIST_READS_PER_CORE
}
fn d_arf() -> f64 {
    params::ANTAGONIST_READ_FRACTION
}

impl Default for AntagonistSpec {
    fn default() -> Self {
        AntagonistSpec {
            tier: 0,
            intensities: d_intensities(),
            cores_per_intensity: d_cpi(),
            reads_per_core: d_rpc(),
            read_fraction: d_arf(),
            change_s: None,
            change_to_intensity: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    #[serde(default = "d_names")]
    pub names: Vec<String>,
    /// HeMem's PEBS period 5003 (Raybuck et al., ACM SOSP 2021).
    #[serde(default = "d_period")]
    pub sample_period: u64,
    #[serde(default)]
    pub hemem: HeMemParams,
    #[serde(default)]
    pub colloid: ColloidParams,
    #[serde(default)]
    pub tpp: TppParams,
    #[serde(default)]
    pub memtis: MemtisParams,
}

/// The best case (oracle sweep), run by the scenario rather than as one policy.
pub const BEST: &str = "best";

fn d_names() -> Vec<String> {
    vec!["hemem".into(), "colloid-hemem".into()]
}
fn d_period() -> u64 {
    5003
}

impl Default for PolicySpec {
    fn default() -> Self {
        PolicySpec {
            names: d_names(),
            sample_period: d_period(),
            hemem: HeMemParams::default(),
            colloid: ColloidParams::default(),
            tpp: TppParams::default(),
            memtis: MemtisParams::default(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSpec {
    /// HeMem's 10 ms migration period.
    #[serde(default = "d_quantum")]
    pub quantum_s: f64,
    #[serde(default = "d_duration")]
    pub duration_s: f64,
    /// Steady-state metrics average the last this many seconds.
    #[serde(default = "d_measure")]
    pub measure_last_s: f64,
    /// HeMem's 2 MB pages; 4096 for 4 KB pages.
    #[serde(default = "d_page")]
    pub page_bytes: u64,
    /// Colloid's M = 100 MB per 10 ms quantum = 10 GB/s.
    #[serde(default = "d_limit")]
    pub migrate_limit_gb_s: f64,
    /// Weight of the newest quantum in the counters' EWMA (a modelling choice).
    #[serde(default = "d_alpha")]
    pub ewma_alpha: f64,
    /// Write the per-quantum timeline table.
    #[serde(default = "d_true")]
    pub timeline: bool,
}

fn d_quantum() -> f64 {
    0.01
}
fn d_duration() -> f64 {
    20.0
}
fn d_measure() -> f64 {
    5.0
}
fn d_page() -> u64 {
    2 << 20
}
fn d_limit() -> f64 {
    10.0
}
fn d_alpha() -> f64 {
    0.5
}
fn d_true() -> bool {
    true
}

impl Default for SimSpec {
    fn default() -> Self {
        SimSpec {
            quantum_s: d_quantum(),
            duration_s: d_duration(),
            measure_last_s: d_measure(),
            page_bytes: d_page(),
            migrate_limit_gb_s: d_limit(),
            ewma_alpha: d_alpha(),
            timeline: d_true(),
        }
    }
}

impl Validate for TierSpec {
    fn validate(&self, v: &mut Validator) {
        if self.capacity_bytes == 0 {
            v.fail(
                "capacity_bytes",
                "0 is not allowed; a tier needs capacity (1 byte or more)",
            );
        }
        v.range(
            "unloaded_latency_ns",
            self.unloaded_latency_ns,
            1.0,
            1e6,
            "ns",
        );
        v.range(
            "read_bandwidth_gb_s",
            self.read_bandwidth_gb_s,
            0.01,
            1e5,
            "GB/s",
        );
        v.range("mix_penalty", self.mix_penalty, 0.0, 0.9, "");
        v.range("queue_coeff", self.queue_coeff, 0.0, 100.0, "");
        if let Some(p) = self.curve.problem() {
            v.fail("curve", p);
        }
        for (i, r) in self.path.iter().enumerate() {
            if let Some((key, msg)) = r.problem() {
                v.fail(&format!("path.{i}.{key}"), msg);
            }
        }
    }
}

impl Validate for AntagonistSpec {
    fn validate(&self, v: &mut Validator) {
        if self.intensities.is_empty() {
            v.fail("intensities", "needs at least one intensity");
        }
        v.distinct("intensities", &self.intensities);
        for &i in &self.intensities {
            v.range("intensities", i, 0, 64, "");
        }
        v.range(
            "cores_per_intensity",
            self.cores_per_intensity,
            0,
            256,
            "cores",
        );
        v.range(
            "reads_per_core",
            self.reads_per_core,
            0.1,
            1000.0,
            "reads in flight",
        );
        v.range("read_fraction", self.read_fraction, 0.05, 1.0, "");
        if let Some(t) = self.change_s {
            v.non_negative("change_s", t, "s");
        }
        if self.change_s.is_some() != self.change_to_intensity.is_some() {
            v.fail(
                "change_s",
                "give both change_s and change_to_intensity, or neither",
            );
        }
        if let Some(i) = self.change_to_intensity {
            v.range("change_to_intensity", i, 0, 64, "");
        }
    }
}

impl Validate for PolicySpec {
    fn validate(&self, v: &mut Validator) {
        let allowed: Vec<&str> = POLICIES.iter().copied().chain([BEST]).collect();
        if self.names.is_empty() {
            v.fail(
                "names",
                format!("needs at least one policy; allowed: {}", allowed.join(", ")),
            );
        }
        for n in &self.names {
            v.one_of("names", n, &allowed);
        }
        v.distinct("names", &self.names);
        v.range(
            "sample_period",
            self.sample_period,
            1,
            100_000_000,
            "accesses",
        );
        v.nested("hemem", &self.hemem);
        v.nested("colloid", &self.colloid);
        v.nested("tpp", &self.tpp);
        v.nested("memtis", &self.memtis);
    }
}

impl Validate for HeMemParams {
    fn validate(&self, v: &mut Validator) {
        v.range("hot_threshold", self.hot_threshold, 1, 1_000_000, "samples");
        v.range(
            "cooling_threshold",
            self.cooling_threshold,
            self.hot_threshold,
            1_000_000,
            "samples",
        );
    }
}

impl Validate for ColloidParams {
    fn validate(&self, v: &mut Validator) {
        v.range("epsilon", self.epsilon, 1e-6, 0.5, "");
        v.range("delta", self.delta, 0.0, 1.0, "");
        v.range(
            "max_bytes_per_quantum",
            self.max_bytes_per_quantum,
            1,
            1 << 40,
            "bytes",
        );
    }
}

impl Validate for TppParams {
    fn validate(&self, v: &mut Validator) {
        v.range(
            "scan_step_bytes",
            self.scan_step_bytes,
            4096,
            1 << 40,
            "bytes",
        );
        v.range(
            "scan_period_min_s",
            self.scan_period_min_s,
            1e-3,
            3600.0,
            "s",
        );
        v.range(
            "scan_period_max_s",
            self.scan_period_max_s,
            self.scan_period_min_s,
            3600.0,
            "s",
        );
        v.range("max_scan_mb_s", self.max_scan_mb_s, 1.0, 1e7, "MB/s");
        v.range("hot_threshold_ms", self.hot_threshold_ms, 0.001, 1e7, "ms");
        v.range(
            "promote_rate_limit_mb_s",
            self.promote_rate_limit_mb_s,
            0.001,
            1e7,
            "MB/s",
        );
        v.range(
            "watermark_scale_factor",
            self.watermark_scale_factor,
            1,
            3000,
            "",
        );
    }
}

impl Validate for MemtisParams {
    fn validate(&self, v: &mut Validator) {
        v.range(
            "adapt_every_samples",
            self.adapt_every_samples,
            1,
            1 << 40,
            "samples",
        );
        v.range(
            "cool_every_samples",
            self.cool_every_samples,
            1,
            1 << 40,
            "samples",
        );
        v.range("watermark", self.watermark, 0.0, 0.5, "");
        v.range("interval_s", self.interval_s, 1e-3, 100.0, "s");
        v.range("cpu_limit", self.cpu_limit, 1e-4, 1.0, "cores");
        v.range(
            "colloid_max_bytes",
            self.colloid_max_bytes,
            1,
            1 << 44,
            "bytes",
        );
        v.range("split_gamma", self.split_gamma, 0.0, 100.0, "");
        v.range("split_period_shift", self.split_period_shift, 0, 40, "");
        v.range(
            "split_max_per_interval",
            self.split_max_per_interval,
            0,
            1 << 30,
            "huge pages",
        );
    }
}

impl Validate for SimSpec {
    fn validate(&self, v: &mut Validator) {
        v.range("quantum_s", self.quantum_s, 1e-4, 10.0, "s");
        v.range("duration_s", self.duration_s, self.quantum_s, 1e5, "s");
        v.range(
            "measure_last_s",
            self.measure_last_s,
            self.quantum_s,
            self.duration_s,
            "s",
        );
        if self.page_bytes != 4096 && self.page_bytes != 2 << 20 {
            v.fail(
                "page_bytes",
                format!("{} is not allowed; allowed: 4096, 2097152", self.page_bytes),
            );
        }
        v.range(
            "migrate_limit_gb_s",
            self.migrate_limit_gb_s,
            0.0,
            1000.0,
            "GB/s",
        );
        v.range("ewma_alpha", self.ewma_alpha, 0.01, 1.0, "");
    }
}

impl Validate for TierScenario {
    fn validate(&self, v: &mut Validator) {
        if !(2..=8).contains(&self.tiers.len()) {
            v.fail(
                "tiers",
                format!("{} tiers given; allowed 2 to 8", self.tiers.len()),
            );
        }
        for (i, t) in self.tiers.iter().enumerate() {
            v.nested(&format!("tiers.{i}"), t);
        }
        v.nested("workload", &self.workload);
        v.nested("antagonist", &self.antagonist);
        if self.antagonist.tier >= self.tiers.len() {
            v.fail(
                "antagonist.tier",
                format!(
                    "{} is not a tier; allowed 0 to {}",
                    self.antagonist.tier,
                    self.tiers.len().saturating_sub(1)
                ),
            );
        }
        v.nested("policy", &self.policy);
        v.nested("sim", &self.sim);
        if let Some(pt) = &self.pmem_tier {
            v.nested("pmem_tier", pt);
            if pt.tier == 0 || pt.tier >= self.tiers.len() {
                v.fail(
                    "pmem_tier.tier",
                    format!(
                        "{} is not an alternate tier; allowed 1 to {}",
                        pt.tier,
                        self.tiers.len().saturating_sub(1)
                    ),
                );
            }
        }
        let page = self.sim.page_bytes.max(1);
        let total: u64 = self
            .tiers
            .iter()
            .map(|t| t.capacity_bytes / page * page)
            .fold(0u64, |a, b| a.saturating_add(b));
        if !self.workload.is_stream()
            && self
                .workload
                .working_set_bytes
                .div_ceil(page)
                .saturating_mul(page)
                > total
        {
            v.fail(
                "workload.working_set_bytes",
                format!(
                    "{} does not fit in the tiers; allowed up to {total} bytes",
                    self.workload.working_set_bytes
                ),
            );
        }
    }
}

/// One trace-driven run: the scenario's trace file or app analog as the access stream.
fn run_stream(
    sc: &TierScenario,
    p: &SimParams,
    file: &str,
    ant: &Antagonists,
    policy: &mut dyn TieringPolicy,
) -> Result<(SimResult, ReplayCounts), ConfigError> {
    let w = &sc.workload;
    let demand = StreamDemand {
        cores: w.cores,
        mlp: w.mlp,
        object_size_bytes: w.object_size_bytes,
        read_fraction: w.read_fraction,
        weight: w.access_weight,
    };
    let (mut stream, key): (Box<dyn AccessStream>, &str) = match (&w.trace, &w.app) {
        (Some(rel), _) => {
            let base = Path::new(file).parent().map(Path::to_path_buf);
            let path = base.unwrap_or_default().join(rel);
            (
                Box::new(TraceStream::open(
                    &path,
                    p.page_bytes,
                    file,
                    "workload.trace",
                )?),
                "workload.trace",
            )
        }
        (None, Some(app)) => (
            Box::new(AppStream::new(
                app,
                w.scale,
                p.page_bytes,
                crate::rng::stream(sc.seed, "tier.app"),
                file,
            )?),
            "workload.app",
        ),
        (None, None) => unreachable!("run_stream is called for stream workloads only"),
    };
    simulate_stream(p, &demand, stream.as_mut(), ant, policy)?
        .ok_or_else(|| ConfigError::new(file, key, "its pages do not fit in the tiers"))
}

/// The feeder as the run's observer, or none.
fn observer(f: &mut Option<PmemFeeder>) -> &mut dyn QuantumObserver {
    match f {
        Some(f) => f,
        // () is zero-sized: leaking its box allocates nothing.
        None => Box::leak(Box::new(())),
    }
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

/// Mean of `f` over the last `measure_last_s` of a run.
fn tail_mean(sc: &TierScenario, r: &SimResult, f: impl Fn(&QuantumRecord) -> f64) -> f64 {
    let keep = ((sc.sim.measure_last_s / sc.sim.quantum_s).round() as usize).max(1);
    mean(
        r.timeline[r.timeline.len().saturating_sub(keep)..]
            .iter()
            .map(f),
    )
}

fn row_of(sc: &TierScenario, policy: &str, intensity: u32, r: &SimResult) -> Map<String, Value> {
    let keep = ((sc.sim.measure_last_s / sc.sim.quantum_s).round() as usize).max(1);
    let tail = &r.timeline[r.timeline.len().saturating_sub(keep)..];
    let avg = |f: &dyn Fn(&super::sim::QuantumRecord) -> f64| mean(tail.iter().map(f));
    let mut m = Map::new();
    m.insert("policy".into(), json!(policy));
    m.insert("intensity".into(), json!(intensity));
    m.insert(
        "antagonist_cores".into(),
        json!(intensity * sc.antagonist.cores_per_intensity),
    );
    m.insert(
        "object_size_bytes".into(),
        json!(sc.workload.object_size_bytes),
    );
    m.insert("page_bytes".into(), json!(sc.sim.page_bytes));
    m.insert("throughput_gb_s".into(), json!(avg(&|q| q.throughput_gb_s)));
    m.insert("throughput_mops".into(), json!(avg(&|q| q.mops)));
    for (t, spec) in sc.tiers.iter().enumerate() {
        m.insert(
            format!("{}_latency_ns", spec.name),
            json!(avg(&|q| q.latency_ns[t])),
        );
        let bw = avg(&|q| q.bandwidth_gb_s[t]);
        m.insert(format!("{}_bandwidth_gb_s", spec.name), json!(bw));
        // How close the tier runs to its tightest resource, and which resource that is.
        let rf = avg(&|q| q.read_fraction[t]);
        m.insert(
            format!("{}_utilization", spec.name),
            json!(bw / spec.saturation_gb_s(rf)),
        );
        let b = spec.bottleneck(rf);
        let name = if b == 0 {
            "media"
        } else {
            spec.path[b - 1].name.as_str()
        };
        m.insert(format!("{}_bottleneck", spec.name), json!(name));
    }
    m.insert(
        "hot_share_default".into(),
        json!(avg(&|q| q.hot_share_default)),
    );
    m.insert(
        "alt_hot_share".into(),
        json!(1.0 - avg(&|q| q.hot_share_default)),
    );
    m.insert(
        "alt_traffic_share".into(),
        json!(avg(&|q| q.alt_traffic_share)),
    );
    m.insert("migrations".into(), json!(r.migrations));
    m.insert("migrated_gb".into(), json!(r.migrated_bytes as f64 / 1e9));
    m.insert("failed_migrations".into(), json!(r.failed_migrations));
    m.insert("huge_pages_split".into(), json!(r.pages.split_count()));
    m.insert("policy_samples".into(), json!(r.work.samples_processed));
    m.insert("policy_pages_scanned".into(), json!(r.work.pages_scanned));
    m.insert("policy_hint_faults".into(), json!(r.work.hint_faults));
    // Mean bytes per migration: split huge pages move 4 KiB at a time.
    let mean_bytes = r
        .migrated_bytes
        .checked_div(r.migrations)
        .unwrap_or(sc.sim.page_bytes);
    let cpu = cost::cpu_seconds(&r.work, r.migrations, mean_bytes, sc.sim.duration_s);
    m.insert("policy_cpu_s".into(), json!(cpu));
    m.insert("policy_cpu_cores".into(), json!(cpu / sc.sim.duration_s));
    m
}

/// Run a tiering scenario given as TOML text (overrides already applied).
pub fn run(text: &str, file: &str, catalog: &Catalog) -> Result<RunOutput, ConfigError> {
    with_tier_devices(text, file, catalog, |t| run_impl(t, file, catalog, None))
}

/// Tiers that name a catalog device (`device = "cxl-dram"`) get the keys they do not write
/// from it (docs/devices.md); errors point at what the user wrote.
fn with_tier_devices(
    text: &str,
    file: &str,
    catalog: &Catalog,
    run: impl FnOnce(&str) -> Result<RunOutput, ConfigError>,
) -> Result<RunOutput, ConfigError> {
    use crate::device::{blame_slot, fill_slots, MEMORY_TIER};
    match fill_slots(text, file, catalog, &MEMORY_TIER)? {
        Some(filled) => run(&filled).map_err(|e| blame_slot(e, text, file, &MEMORY_TIER)),
        None => run(text),
    }
}

/// A policy made outside the registry (the Python hook): its row name and a factory called
/// once per run.
pub type ExternalPolicy<'a> = (&'a str, &'a mut dyn FnMut() -> Box<dyn TieringPolicy + 'a>);

/// Run a tiering scenario with `external`'s policy instead of `policy.names`: one row per
/// antagonist intensity, everything else as [`run`].
pub fn run_with_policy(
    text: &str,
    file: &str,
    external: ExternalPolicy,
) -> Result<RunOutput, ConfigError> {
    let catalog = Catalog::builtin();
    with_tier_devices(text, file, &catalog, |t| {
        run_impl(t, file, &catalog, Some(external))
    })
}

fn run_impl(
    text: &str,
    file: &str,
    catalog: &Catalog,
    mut external: Option<ExternalPolicy>,
) -> Result<RunOutput, ConfigError> {
    let mut sc: TierScenario = parse_toml(text, file)?;
    Validator::check(file, text, &sc)?;
    if let Some(sh) = sc
        .workload
        .app
        .as_deref()
        .and_then(|a| apps::shape(a, sc.workload.scale))
    {
        // The analog fixes its sizes and demand shape (the Colloid study's applications;
        // docs/tiering.md, fig. 6).
        sc.workload.working_set_bytes = sh.working_set_bytes;
        sc.workload.object_size_bytes = sh.object_size_bytes;
        sc.workload.read_fraction = sh.read_fraction;
        sc.tiers[0].capacity_bytes = sh.default_tier_bytes;
    }
    let mut out = RunOutput::new(
        "tiering",
        sc.seed,
        serde_json::to_value(&sc).unwrap_or(Value::Null),
    );
    let mut timeline = Vec::new();
    let a = &sc.antagonist;
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
        seed: sc.seed,
    };
    let no_fit = || {
        ConfigError::new(
            file,
            "workload.working_set_bytes",
            "does not fit in the tiers",
        )
    };
    let unknown = |name: &str| {
        ConfigError::new(
            file,
            "policy.names",
            format!("unknown policy '{name}'; allowed: {}", POLICIES.join(", ")),
        )
    };
    let pmem_dimm = match &sc.pmem_tier {
        Some(spec) => Some((spec, dimm_of(spec, catalog, file)?)),
        None => None,
    };
    let names: Vec<String> = match &external {
        Some((n, _)) => vec![n.to_string()],
        None => sc.policy.names.clone(),
    };
    for name in &names {
        for &intensity in &a.intensities {
            let ant = Antagonists {
                tier: a.tier,
                cores: intensity * a.cores_per_intensity,
                reads_per_core: a.reads_per_core,
                read_fraction: a.read_fraction,
                change: a
                    .change_s
                    .zip(a.change_to_intensity.map(|i| i * a.cores_per_intensity)),
            };
            let gups = Gups::new(&sc.workload, sc.sim.page_bytes);
            let new_feeder = || {
                pmem_dimm.map(|(spec, (dimm, rated))| PmemFeeder::new(spec, dimm, rated, sc.seed))
            };
            let mut feeder = new_feeder();
            let mut replayed = None;
            let (r, oracle_share) = if sc.workload.is_stream() {
                let mut policy: Box<dyn TieringPolicy> = match external.as_mut() {
                    Some((_, make)) => make(),
                    None if name == BEST => {
                        return Err(ConfigError::new(
                            file,
                            "policy.names",
                            "'best' (the oracle sweep) needs the statistical GUPS workload; \
                             remove it or workload.trace/workload.app",
                        ))
                    }
                    None => make_policy_with(name, &pp).ok_or_else(|| unknown(name))?,
                };
                if sc.pmem_tier.is_some() {
                    return Err(ConfigError::new(
                        file,
                        "pmem_tier",
                        "the PMem alternate tier is fed by the statistical GUPS workload only; \
                         remove [pmem_tier] or workload.trace/workload.app",
                    ));
                }
                let (r, counts) = run_stream(&sc, &p, file, &ant, policy.as_mut())?;
                replayed = Some(counts);
                (r, None)
            } else if let Some((_, make)) = external.as_mut() {
                let mut policy = make();
                let r = simulate_observed(&p, gups, &ant, policy.as_mut(), observer(&mut feeder))
                    .ok_or_else(no_fit)?;
                (r, None)
            } else if name == BEST {
                // Colloid's best case: 0–100 % of the hot set in the default tier in 10 % steps;
                // keep the best steady-state throughput.
                let default_pages = sc.tiers[0].capacity_bytes / sc.sim.page_bytes;
                let mut best: Option<(f64, SimResult, f64, Option<PmemFeeder>)> = None;
                for k in 0..=10 {
                    let share = k as f64 / 10.0;
                    let mut pol = OracleStatic::new(&gups, default_pages, share);
                    let mut f = new_feeder();
                    let r = simulate_observed(&p, gups.clone(), &ant, &mut pol, observer(&mut f))
                        .ok_or_else(no_fit)?;
                    let tput = tail_mean(&sc, &r, |q| q.throughput_gb_s);
                    if best.as_ref().is_none_or(|b| tput > b.0) {
                        best = Some((tput, r, share, f));
                    }
                }
                let (_, r, share, f) = best.expect("eleven runs");
                feeder = f;
                (r, Some(share))
            } else {
                let mut policy = make_policy_with(name, &pp).ok_or_else(|| unknown(name))?;
                let r = simulate_observed(&p, gups, &ant, policy.as_mut(), observer(&mut feeder))
                    .ok_or_else(no_fit)?;
                (r, None)
            };
            let mut row = row_of(&sc, name, intensity, &r);
            if let Some(f) = &feeder {
                for (k, v) in f.columns(sc.sim.duration_s) {
                    row.insert(k.into(), v);
                }
            }
            row.insert("oracle_hot_share_default".into(), json!(oracle_share));
            if let Some(c) = replayed {
                row.insert("replayed_accesses".into(), json!(c.accesses));
                row.insert("pebs_samples".into(), json!(c.samples));
            }
            out.rows.push(row);
            if sc.sim.timeline {
                for q in &r.timeline {
                    let mut m = Map::new();
                    m.insert("policy".into(), json!(name));
                    m.insert("intensity".into(), json!(intensity));
                    m.insert("time_s".into(), json!(q.time_s));
                    m.insert("throughput_gb_s".into(), json!(q.throughput_gb_s));
                    m.insert("throughput_mops".into(), json!(q.mops));
                    for (t, spec) in sc.tiers.iter().enumerate() {
                        m.insert(format!("{}_latency_ns", spec.name), json!(q.latency_ns[t]));
                    }
                    m.insert("hot_share_default".into(), json!(q.hot_share_default));
                    m.insert("migrated_bytes".into(), json!(q.migrated_bytes));
                    timeline.push(m);
                }
            }
        }
    }
    if sc.sim.timeline {
        out.tables.insert("timeline".into(), timeline);
    }
    if let Some(best) = out.rows.iter().max_by(|x, y| {
        x["throughput_gb_s"]
            .as_f64()
            .partial_cmp(&y["throughput_gb_s"].as_f64())
            .unwrap_or(std::cmp::Ordering::Equal)
    }) {
        out.headline
            .insert("best_policy".into(), best["policy"].clone());
        out.headline
            .insert("best_intensity".into(), best["intensity"].clone());
        out.headline.insert(
            "best_throughput_gb_s".into(),
            best["throughput_gb_s"].clone(),
        );
    }
    out.headline.insert("runs".into(), json!(out.rows.len()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::registry::run_scenario;

    const SMALL: &str = "module = \"tiering\"\nseed = 3\n[workload]\nworking_set_bytes = 8589934592\nhot_set_bytes = 2147483648\n[antagonist]\nintensities = [0, 3]\n[policy]\nnames = [\"static-default\", \"colloid-hemem\"]\n[sim]\nduration_s = 0.5\nmeasure_last_s = 0.2\n";

    fn err(text: &str) -> crate::ConfigError {
        run_scenario(text, "t.toml", &[], &[]).unwrap_err()
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
    fn user_curve_is_accepted_and_checked() {
        let curve = "[[tiers]]\nname = \"default\"\ncapacity_bytes = 32000000000\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 140.0\ncurve = [[0.0, 1.0], [0.5, 1.2], [1.0, 2.5]]\n[[tiers]]\nname = \"alternate\"\ncapacity_bytes = 96000000000\nunloaded_latency_ns = 135.0\nread_bandwidth_gb_s = 75.0\n";
        assert!(run_scenario(&format!("{SMALL}{curve}"), "t.toml", &[], &[]).is_ok());
        let bad = curve.replace("[0.5, 1.2]", "[0.5, 0.8]");
        let e = err(&format!("{SMALL}{bad}"));
        assert_eq!(e.key, "tiers.0.curve");
    }
}
