//! Tiered memory management (docs/tiering.md; Vuppalapati & Agarwal, ACM SOSP 2024): a tier engine
//! with loaded latency from closed-loop demand, GUPS in statistical mode, PEBS-like sampling, a
//! page table with migration, and tiering policies (static, best case, HeMem, TPP, MEMTIS, each
//! with and without Colloid) behind one trait.

pub mod apps;
pub mod cachefilter;
pub mod colloid;
pub mod copy;
pub mod cost;
pub mod curve;
pub mod engine;
pub mod hemem;
pub mod hw;
pub mod memtis;
mod memtis_bins;
pub mod memtis_split;
pub mod migrate;
pub mod oracle;
pub mod pages;
pub mod params;
pub mod path;
pub mod pmem_tier;
pub mod policies;
pub mod policy;
pub mod quantum;
pub mod reference;
pub mod replay;
mod rows;
mod runner;
mod scenario;
pub mod sim;
mod sim_params;
pub mod source;
pub mod steady;
pub mod stream;
pub mod tpp;
pub mod workload;

pub use curve::LatencyCurve;
pub use engine::{solve_fixed_point, FixedPoint, Source, TierCounters, TierPoint, TierSpec};
pub use pages::PageTable;
pub use path::PathResource;
pub use policies::{make_policy, make_policy_with, PolicyParams, POLICIES};
pub use policy::{Migration, Observation, PolicyWork, TieringPolicy};
pub use runner::{run, run_with_policy, run_with_progress, ExternalPolicy, Tiering};
pub use scenario::TierScenario;
pub use sim::{
    simulate, simulate_observed, Antagonists, QuantumObserver, QuantumView, SimParams, SimResult,
};
pub use workload::{Gups, GupsSpec};

/// Bytes per cache line, the unit of memory traffic.
pub const LINE_BYTES: f64 = crate::cache::LINE_BYTES as f64;
