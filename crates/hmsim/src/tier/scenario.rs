//! The `tiering` scenario's configuration: tiers, a GUPS workload (or a trace / app analog),
//! antagonist intensities, policies and the simulation's timing, each checked beside its
//! struct. The run is in `runner.rs`, its result rows in `rows.rs`.

use serde::{Deserialize, Serialize};

use super::colloid::ColloidParams;
use super::engine::TierSpec;
use super::hemem::HeMemParams;
use super::memtis::MemtisParams;
use super::params;
use super::pmem_tier::PmemTierSpec;
use super::policies::POLICIES;
use super::tpp::TppParams;
use super::workload::GupsSpec;
use crate::config::{Validate, Validator};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierScenario {
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
    /// An explicit cap on the migration copy rate, GB/s (default none: the policy's copy
    /// threads set the rate, docs/tiering.md, *Migration copies*).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrate_limit_gb_s: Option<f64>,
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
            migrate_limit_gb_s: None,
            ewma_alpha: d_alpha(),
            timeline: d_true(),
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
        let allowed: Vec<&str> = POLICIES.names().into_iter().chain([BEST]).collect();
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
        if let Some(limit) = self.migrate_limit_gb_s {
            v.range("migrate_limit_gb_s", limit, 0.0, 1000.0, "GB/s");
        }
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
