//! The `TieringPolicy` trait, what a policy sees each quantum, and the two static
//! placements. The registry of policies by name is in `policies.rs`.

use super::copy::CopyEngine;
use super::hint_faults::HintFaults;
use super::hw::PageHardware;
use super::pages::PageTable;

/// Tier 0 is the default (fast) tier, tier 1 the alternate tier.
pub(super) const DEFAULT_TIER: usize = 0;

/// `Migration::to` that asks to split huge page `page` into its 4 KiB pages instead of moving
/// it (no copy; only a policy that [`splits_pages`](TieringPolicy::splits_pages) gets a
/// splittable page table, elsewhere the request fails).
pub(super) const SPLIT_PAGE: usize = usize::MAX;

/// A migration request: move `page` to `to`. A swap is two requests, the demotion first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub page: u64,
    pub to: usize,
}

/// What a policy observes in one quantum; no oracle knowledge of the access distribution.
pub struct Observation<'a> {
    pub time_s: f64,
    pub quantum_s: f64,
    /// Pages of the PEBS-like load samples taken this quantum.
    pub samples: &'a [u64],
    /// 4 KiB index within its page of each sample's data address, when the page table is
    /// splittable (else empty): PEBS records the address, so a policy can count sub-pages.
    pub sample_subpages: &'a [u16],
    pub sample_period: u64,
    /// Smoothed per-tier latency O/R from the counters (None: no reads yet).
    pub latency_ns: &'a [Option<f64>],
    /// Smoothed application read arrivals per tier (per ns): p = R_D / ΣR.
    pub app_arrivals_per_ns: &'a [f64],
    pub pages: &'a PageTable,
    /// Bytes the policy's copy engine can move this quantum at the tiers' loaded latencies
    /// (less copies still queued from earlier quanta).
    pub migrate_budget_bytes: u64,
    /// NUMA hint faults taken this quantum on pages the policy marked (TPP-like scanning).
    pub hint_faults: &'a HintFaults,
}

pub trait TieringPolicy {
    fn name(&self) -> &'static str;
    /// Called once per quantum; returns the migrations to make, in order.
    fn quantum(&mut self, obs: &Observation) -> Vec<Migration>;
    /// As `quantum`, for policies that also mark pages for hint faults or read accessed
    /// bits; the engine calls this one (default: `quantum`).
    fn quantum_hw(&mut self, obs: &Observation, _hw: &mut dyn PageHardware) -> Vec<Migration> {
        self.quantum(obs)
    }
    /// The PEBS sampling period the policy wants now (None: the scenario's).
    fn sample_period(&self) -> Option<u64> {
        None
    }
    /// Whether the policy may split huge pages (then the engine gives it a splittable page
    /// table and per-sample 4 KiB indices).
    fn splits_pages(&self) -> bool {
        false
    }
    /// Initial placement preference for `page` (default: first-touch order).
    fn initial_tier(&self, _page: u64) -> Option<usize> {
        None
    }
    /// How the system copies migrated pages (default: the kernel's `migrate_pages` on one
    /// thread).
    fn copy_engine(&self) -> CopyEngine {
        CopyEngine::kernel_migrate_pages()
    }
    /// Work done so far, the basis of CPU-cost accounting (policies that do no work: zero).
    fn work(&self) -> PolicyWork {
        PolicyWork::default()
    }
}

/// Work counters of a policy: samples it processed, pages its scans visited, hint faults it
/// took and cores it keeps busy; `cost::cpu_seconds` turns them into CPU time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PolicyWork {
    pub samples_processed: u64,
    pub pages_scanned: u64,
    pub hint_faults: u64,
    pub dedicated_cores: u32,
    /// What a Colloid policy's balancing decided (zero for the others).
    pub colloid: ColloidQuanta,
    /// What HeMem's promotion found (zero for the others).
    pub hemem: HeMemQuanta,
}

/// HeMem's quanta over a run: all of them, those with no page off the default tier at
/// the hot threshold, and those whose hot pages found the default tier full with no page
/// in it cold enough to demote. Why a HeMem run moved (almost) nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeMemQuanta {
    pub quanta: u64,
    pub none_hot: u64,
    pub none_cold: u64,
}

/// Colloid's decisions over a run: the quanta it stepped (both tiers had reads), those
/// whose loaded latencies it found balanced (within δ), and, for Colloid on HeMem, those
/// that pointed a way but moved no page: of them, those whose Δp was 0 (the closed form
/// gives 0 when one tier serves none of the accesses), those whose tier to move pages from
/// had no hot page, and (the rest) those whose every hot page carried more of the accesses
/// than the share Δp to move. Why a Colloid run moved nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ColloidQuanta {
    pub stepped: u64,
    pub balanced: u64,
    pub unmoved: u64,
    pub unmoved_zero_dp: u64,
    pub unmoved_none_hot: u64,
}

/// All in the default tier until it is full, then the next tier; never migrates.
pub(super) struct StaticDefault;

impl TieringPolicy for StaticDefault {
    fn name(&self) -> &'static str {
        "static-default"
    }
    fn quantum(&mut self, _obs: &Observation) -> Vec<Migration> {
        Vec::new()
    }
}

/// Everything in the alternate tier while it has room; never migrates.
pub(super) struct StaticAlternate;

impl TieringPolicy for StaticAlternate {
    fn name(&self) -> &'static str {
        "static-alternate"
    }
    fn quantum(&mut self, _obs: &Observation) -> Vec<Migration> {
        Vec::new()
    }
    fn initial_tier(&self, _page: u64) -> Option<usize> {
        Some(1)
    }
}
