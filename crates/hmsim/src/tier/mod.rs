//! Tiered memory management (docs/tiering.md; Vuppalapati & Agarwal, ACM SOSP 2024): a tier engine
//! with loaded latency from closed-loop demand, GUPS in statistical mode, PEBS-like sampling, a
//! page table with migration, and tiering policies (static, best case, HeMem, TPP, MEMTIS, each
//! with and without Colloid) behind one trait.

pub mod apps;
pub mod colloid;
pub mod copy;
mod cost;
pub mod hemem;
mod hint_faults;
mod hw;
pub mod memtis;
mod memtis_bins;
mod memtis_cool;
mod memtis_order;
mod memtis_split;
mod migrate;
pub mod oracle;
mod pages;
pub mod params;
mod pmem_halves;
mod pmem_tier;
mod policies;
mod policy;
mod prefix;
mod quantum;
mod reference;
pub mod replay;
mod rows;
mod runner;
mod scenario;
pub mod sim;
mod sim_params;
mod source;
mod steady;
pub mod stream;
mod tpp;
mod workload;

pub use pages::PageTable;
pub use policies::{make_policy, make_policy_with, PolicyParams, POLICIES};
pub use policy::{Migration, Observation, PolicyWork, TieringPolicy};
pub use prefix::PrefixShelf;
pub use runner::{ExternalPolicy, Tiering, EXTERNAL_POLICY};
pub use scenario::TierScenario;
pub use sim::{
    simulate, simulate_observed, Antagonists, QuantumObserver, QuantumView, SimParams, SimResult,
};
pub use workload::{Gups, GupsSpec};

/// Bytes per cache line, the unit of memory traffic.
pub use crate::mempath::LINE_BYTES;
