//! What drives the per-quantum engine (`quantum.rs`): the application's accesses. The
//! statistical GUPS model (`sim.rs`) draws them from the workload's access distribution; trace
//! replay and the application analogs (`replay.rs`) take them one by one from a stream.

use super::hint_faults::HintFaults;
use super::hw::PageHardware;
use super::pages::PageTable;
use super::policy::TieringPolicy;
use super::sim_params::SimParams;
use crate::error::ConfigError;

/// The application's closed-loop demand: `cores` each keeping `mlp` objects of
/// `lines_per_access` lines in flight, `read_fraction` of its lines read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Demand {
    pub cores: u32,
    pub mlp: f64,
    pub lines_per_access: f64,
    pub read_fraction: f64,
    /// The accesses go through CPU caches first (a cache-filtered trace); `None`: every
    /// access is a memory access.
    pub cache: Option<CachedDemand>,
}

/// What the caches in front of memory make of one application access, as measured on the
/// previous quantum's accesses: memory reads (misses) per access and cache time per access.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct CachedDemand {
    /// Memory reads (LLC misses) per application access.
    pub misses_per_access: f64,
    /// Mean time an access spends in cache hits, ns (hits × their level's latency, over all
    /// accesses; a miss costs the memory latency the fixed point gives).
    pub hit_ns_per_access: f64,
}

impl CachedDemand {
    /// Time outside memory between two memory reads, ns (the closed loop's think time);
    /// `None` when nothing misses (no memory reads at all).
    pub(super) fn think_ns(&self) -> Option<f64> {
        (self.misses_per_access > 0.0).then(|| self.hit_ns_per_access / self.misses_per_access)
    }

    /// Application accesses per ns from the memory reads per ns the fixed point gave, or,
    /// when nothing misses, from `in_flight` accesses each taking the hit time.
    pub(super) fn accesses_per_ns(&self, memory_reads_per_ns: f64, in_flight: f64) -> f64 {
        if self.misses_per_access > 0.0 {
            memory_reads_per_ns / self.misses_per_access
        } else {
            in_flight / self.hit_ns_per_access
        }
    }
}

/// One quantum's access rate and sampling, as the engine solved it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct QuantumRate {
    pub quantum: u64,
    pub time_s: f64,
    pub quantum_s: f64,
    /// Application accesses per ns at this quantum's fixed point.
    pub accesses_per_ns: f64,
    /// PEBS period: one sample per this many LLC-miss loads.
    pub sample_period: u64,
}

/// Where the per-quantum engine's accesses come from; one implementation per execution mode.
pub(super) trait AccessSource {
    /// The page table with `policy`'s initial placement, splittable if huge pages may split
    /// in this mode; `None` when the pages do not fit in the tiers.
    fn place(&mut self, p: &SimParams, policy: &mut dyn TieringPolicy) -> Option<PageTable>;
    fn demand(&self) -> Demand;
    /// GB/s of traffic (reads and write-backs) at `accesses_per_ns`.
    fn gb_s(&self, accesses_per_ns: f64) -> f64;
    /// Start of a quantum: time-driven workload changes (a hot set that moves).
    fn begin_quantum(&mut self, _time_s: f64, _pt: &PageTable) {}
    /// Share of the application's accesses on each tier (the fixed point's spread, and the
    /// alternate-tier traffic share of the quantum's record).
    fn shares(&self) -> &[f64];
    /// The quantum's accesses: PEBS-like load samples into `samples` (and their 4 KiB
    /// sub-page into `subpages` when the table is splittable); returns the hint faults the
    /// policy sees this quantum.
    fn accesses(
        &mut self,
        rate: &QuantumRate,
        pt: &PageTable,
        samples: &mut Vec<u64>,
        subpages: &mut Vec<u16>,
    ) -> Result<HintFaults, ConfigError>;
    /// The page hardware (marks, accessed bits) as the policy sees it at `now_s`.
    fn hardware(&mut self, now_s: f64) -> &mut dyn PageHardware;
    /// A completed migration of `page` (already in the table's new state).
    fn moved(&mut self, pt: &PageTable, page: u64, from: usize, to: usize);
    /// Share of the reference hot set in the default tier (a metric; policies never see it).
    fn hot_share_default(&self) -> f64;
    /// End of a quantum, after its migrations (models fed by the run).
    fn end_quantum(&mut self, _end: &QuantumEnd) {}
}

/// What the engine hands a source at the end of a quantum.
pub(super) struct QuantumEnd<'a> {
    pub quantum: u64,
    pub quantum_s: f64,
    pub pages: &'a PageTable,
    /// Application reads per ns on each tier at this quantum's fixed point.
    pub app_reads_per_ns: &'a [f64],
}
