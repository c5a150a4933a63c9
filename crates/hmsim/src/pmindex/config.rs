//! The parameters of a `pm-index` scenario: the region, the index, the workload, the model,
//! what is timed on this machine, and the crash-consistency run.

use super::index::TonicOpts;
use super::key::KeyType;
use super::region::RegionConfig;
use super::registry;
use super::shared::{DEFAULT_SHARDS, MAX_SHARDS};
use super::ycsb::{Distribution, YcsbWorkload};
use crate::cache::CacheConfig;
use crate::config::Validator;
use crate::pmem::PmemConfig;

crate::params! {
    #[params(required)]
    /// The index under test.
    #[derive(Debug, Clone)]
    pub(crate) struct IndexSection {
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
    pub(crate) struct WorkloadSection {
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
    pub(crate) struct ModelSection {
        pub pmem: PmemConfig = PmemConfig::default() => nested, "", "The PMem model (docs/pmem.md).";
        pub cache: CacheConfig = CacheConfig::default() => nested, "", "The cache hierarchy.";
    }
}

crate::params! {
    #[params(check)]
    /// What is timed on this machine.
    #[derive(Debug, Clone)]
    pub(crate) struct ThroughputSection {
        pub model: bool = true => any, "",
            "Run the workload through the cache + PMem model: the run's row. false: only the `real_threads` timings (no row; `measure` must be false too), for a sweep whose model row is another point's.";
        pub measure: bool = true => any, "",
            "Time the workload on this machine without the model (real instructions if `pm.hardware_flush`).";
        pub repeats: u32 = 3 => any, "",
            "Timed runs (each on a fresh index); the best is reported (a shared machine's noise only ever slows a run down). Runs in one process that differ only in the model's settings share them.";
        pub timed_ops: u64 = 0 => range(0, 1 << 32), "operations",
            "Time only the run phase's first N operations on this machine (0: all of them; column `timed_ops` says how many were, `real_threads` rows count them in `ops`): a throughput reference that need not time the whole phase. Run phases only (a, b, c, e): a Load's speed changes as its index grows, so a Load is timed whole. The model always runs every operation.";
        pub real_threads: Vec<u32> = Vec::new() => any, "OS threads",
            "Also time the measured phase on each of these numbers of OS threads (1 to 256), through a sharded index (no model, wall clock): table `real_threads`.";
        pub shards: usize = DEFAULT_SHARDS => any, "",
            "Shards of that sharded index (a power of two, at most the maximum).";
    }
}

impl ThroughputSection {
    fn check(&self, v: &mut Validator) {
        if !self.model {
            // Without the model there is no row for a native timing to go in.
            if self.measure {
                v.fail(
                    "measure",
                    "must be false when model = false (its timing is the model row's column)",
                );
            }
            if self.real_threads.is_empty() {
                v.fail(
                    "model",
                    "false leaves nothing to run unless real_threads lists thread counts",
                );
            }
        }
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
    pub(crate) struct CrashSection {
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
    pub(crate) struct LifetimeSection {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub inserts_per_s: Option<f64> = None => range(1e-9, 1e15), "",
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
    pub(crate) struct PmIndexConfig {
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
                if self.throughput.timed_ops > 0 && self.workload.kind == YcsbWorkload::Load {
                    v.fail(
                        "throughput.timed_ops",
                        "applies to the run phases (workload.kind a, b, c or e): a Load is timed \
                         whole, as its speed changes while the index grows (set it to 0)",
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
