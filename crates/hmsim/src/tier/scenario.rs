//! The `tiering` scenario's configuration: tiers, a GUPS workload (or a trace / app analog),
//! antagonist intensities, policies and the simulation's timing, each checked beside its
//! struct. The run is in `runner.rs`, its result rows in `rows.rs`.

use super::colloid::ColloidParams;
use super::hemem::HeMemParams;
use super::memtis::MemtisParams;
use super::params;
use super::pmem_tier::PmemTierSpec;
use super::policies::POLICIES;
use super::tpp::TppParams;
use super::workload::GupsSpec;
use crate::config::Validator;
use crate::mempath::TierSpec;

crate::params! {
    #[params(check)]
    /// A `module = "tiering"` scenario.
    #[derive(Debug, Clone)]
    pub struct TierScenario {
        pub tiers: Vec<TierSpec> = params::reference_tiers() => nested, "",
            "The tiers, 2 to 8; tier 0 is the default tier. Default: the Colloid paper's two tiers (local DRAM, and remote DRAM over UPI; docs/tiering.md, *Calibration*).";
        pub workload: GupsSpec = GupsSpec::default() => nested, "", "The workload.";
        pub antagonist: AntagonistSpec = AntagonistSpec::default() => nested, "",
            "Memory antagonists contending on one tier.";
        pub policy: PolicySpec = PolicySpec::default() => nested, "",
            "The tiering policies compared, and their parameters.";
        pub sim: SimSpec = SimSpec::default() => nested, "", "Timing of the simulation.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub pmem_tier: Option<PmemTierSpec> = None => nested, "",
            "The alternate tier is PMem: feed its writes to the PMem write path (docs/tiering.md, *PMem as the alternate tier*).";
    }
}

crate::params! {
    #[params(check)]
    /// Streaming antagonists (Colloid setup: 50 % reads, 5 cores per intensity step).
    #[derive(Debug, Clone)]
    pub struct AntagonistSpec {
        pub tier: usize = 0 => any, "", "The tier the antagonists stream from; 0 to the last tier.";
        pub intensities: Vec<u32> = vec![0] => any, "",
            "One run per intensity (× `cores_per_intensity` cores), each 0 to 64, distinct.";
        pub cores_per_intensity: u32 = params::CORES_PER_INTENSITY => range(0, 256), "cores",
            "Antagonist cores per intensity step (Colloid setup: 0×/1×/2×/3× = 0/5/10/15 cores).";
        pub reads_per_core: f64 = params::ANTAGONIST_READS_PER_CORE => range(0.1, 1000.0), "reads in flight",
            "Reads in flight per antagonist core; fitted (docs/tiering.md, *Calibration*).";
        pub read_fraction: f64 = params::ANTAGONIST_READ_FRACTION => range(0.05, 1.0), "",
            "Fraction of the antagonists' line traffic that is reads (Colloid setup: 0.5).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub change_s: Option<f64> = None => non_negative, "",
            "Contention jumps to `change_to_intensity` at this time (give both or neither).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub change_to_intensity: Option<u32> = None => range(0, 64), "",
            "The intensity from `change_s` on.";
    }
}

crate::params! {
    #[params(check)]
    /// The policies compared, and each policy's parameters.
    #[derive(Debug, Clone)]
    pub struct PolicySpec {
        pub names: Vec<String> = vec!["hemem".into(), "colloid-hemem".into()] => any, "",
            "Policies run, distinct; a registered policy (docs/tiering.md, *Policies*), `best` (the oracle sweep), or alone `python:package.module:Name` (a policy written in Python, run by the Python package).";
        pub sample_period: u64 = 5003 => range(1, 100_000_000), "accesses",
            "PEBS sampling period (HeMem: 5003; Raybuck et al., ACM SOSP 2021).";
        pub hemem: HeMemParams = HeMemParams::default() => nested, "", "HeMem's parameters.";
        pub colloid: ColloidParams = ColloidParams::default() => nested, "", "Colloid's parameters.";
        pub tpp: TppParams = TppParams::default() => nested, "", "TPP's parameters.";
        pub memtis: MemtisParams = MemtisParams::default() => nested, "", "MEMTIS's parameters.";
    }
}

/// The best case (oracle sweep), run by the scenario rather than as one policy.
pub(super) const BEST: &str = "best";

/// Prefix of a policy written in Python (`python:package.module:Name`): the Python package
/// loads it and hands it to the run as a part (`ExternalPolicy`).
pub(super) const PYTHON_POLICY: &str = "python:";

crate::params! {
    #[params(check)]
    /// Timing of the simulation.
    #[derive(Debug, Clone)]
    pub struct SimSpec {
        pub quantum_s: f64 = 0.01 => range(1e-4, 10.0), "",
            "Simulated quantum; policies act once per quantum (HeMem's 10 ms migration period).";
        pub duration_s: f64 = 20.0 => any, "", "Simulated time of a run; quantum_s to 100000.";
        pub measure_last_s: f64 = 5.0 => any, "",
            "Steady-state metrics average the last this many seconds; 2 × quantum_s (a window with two halves to compare for steadiness) to duration_s.";
        pub page_bytes: u64 = 2 << 20 => any, "",
            "Page size: 2097152 (HeMem's 2 MB pages) or 4096 (4 KB pages).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub migrate_limit_gb_s: Option<f64> = None => range(0.0, 1000.0), "",
            "An explicit cap on the migration copy rate (default none: the policy's copy threads set the rate, docs/tiering.md, *Migration copies*).";
        pub ewma_alpha: f64 = 0.5 => range(0.01, 1.0), "",
            "Weight of the newest quantum in the counters' EWMA (a modelling choice).";
        pub timeline: bool = true => any, "", "Write the per-quantum timeline table.";
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        pub until_steady: bool = false => any, "",
            "Extend each run (doubling `duration_s`) until its measured window is steady or `max_duration_s` is reached (docs/tiering.md, *Is the window steady?*).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub max_duration_s: Option<f64> = None => any, "",
            "Cap on a run's simulated time with `until_steady`; duration_s to 100000 (default 8 × duration_s).";
    }
}

impl AntagonistSpec {
    fn check(&self, v: &mut Validator) {
        if self.intensities.is_empty() {
            v.fail("intensities", "needs at least one intensity");
        }
        v.distinct("intensities", &self.intensities);
        for &i in &self.intensities {
            v.range("intensities", i, 0, 64, "");
        }
        if self.change_s.is_some() != self.change_to_intensity.is_some() {
            v.fail(
                "change_s",
                "give both change_s and change_to_intensity, or neither",
            );
        }
    }
}

impl PolicySpec {
    fn check(&self, v: &mut Validator) {
        let allowed: Vec<&str> = POLICIES.names().into_iter().chain([BEST]).collect();
        if self.names.is_empty() {
            v.fail(
                "names",
                format!("needs at least one policy; allowed: {}", allowed.join(", ")),
            );
        }
        for n in &self.names {
            if !n.starts_with(PYTHON_POLICY) {
                v.one_of("names", n, &allowed);
            } else if self.names.len() > 1 {
                v.fail(
                    "names",
                    format!(
                        "a {PYTHON_POLICY} policy runs alone; found {:?}",
                        self.names
                    ),
                );
            }
        }
        v.distinct("names", &self.names);
    }
}

impl SimSpec {
    /// The longest a run may last: `duration_s`, or with `until_steady` its cap.
    pub fn cap_s(&self) -> f64 {
        if self.until_steady {
            self.max_duration_s
                .unwrap_or(8.0 * self.duration_s)
                .min(1e5)
        } else {
            self.duration_s
        }
    }

    fn check(&self, v: &mut Validator) {
        v.range("duration_s", self.duration_s, self.quantum_s, 1e5, "s");
        // Two quanta at least: the steadiness test compares the window's halves.
        v.range(
            "measure_last_s",
            self.measure_last_s,
            2.0 * self.quantum_s,
            self.duration_s,
            "s",
        );
        if let Some(cap) = self.max_duration_s {
            v.range("max_duration_s", cap, self.duration_s, 1e5, "s");
        }
        if self.page_bytes != 4096 && self.page_bytes != 2 << 20 {
            v.fail(
                "page_bytes",
                format!("{} is not allowed; allowed: 4096, 2097152", self.page_bytes),
            );
        }
    }
}

impl TierScenario {
    fn check(&self, v: &mut Validator) {
        if !(2..=8).contains(&self.tiers.len()) {
            v.fail(
                "tiers",
                format!("{} tiers given; allowed 2 to 8", self.tiers.len()),
            );
        }
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
        if let Some(pt) = &self.pmem_tier {
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
