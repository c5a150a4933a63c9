//! The `TieringPolicy` trait, what a policy sees each quantum, and the policy registry.

use super::colloid::{ColloidHeMem, ColloidParams};
use super::hemem::{HeMem, HeMemParams};
use super::pages::PageTable;

/// Tier 0 is the default (fast) tier, tier 1 the alternate tier.
pub const DEFAULT_TIER: usize = 0;

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
    pub sample_period: u64,
    /// Smoothed per-tier latency O/R from the counters (None: no reads yet).
    pub latency_ns: &'a [Option<f64>],
    /// Smoothed application read arrivals per tier (per ns): p = R_D / ΣR.
    pub app_arrivals_per_ns: &'a [f64],
    pub pages: &'a PageTable,
    /// Bytes the engine will migrate at most this quantum (the migration rate limit).
    pub migrate_budget_bytes: u64,
}

pub trait TieringPolicy {
    fn name(&self) -> &'static str;
    /// Called once per quantum; returns the migrations to make, in order.
    fn quantum(&mut self, obs: &Observation) -> Vec<Migration>;
    /// Initial placement preference for `page` (default: first-touch order).
    fn initial_tier(&self, _page: u64) -> Option<usize> {
        None
    }
    /// Work done so far, the basis of CPU-cost accounting (policies that do no work: zero).
    fn work(&self) -> PolicyWork {
        PolicyWork::default()
    }
}

/// Work counters of a policy: samples it processed and pages its scans visited. Converting
/// them to CPU time needs per-operation costs, which the spec does not give.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PolicyWork {
    pub samples_processed: u64,
    pub pages_scanned: u64,
}

/// All in the default tier until it is full, then the next tier; never migrates.
pub struct StaticDefault;

impl TieringPolicy for StaticDefault {
    fn name(&self) -> &'static str {
        "static-default"
    }
    fn quantum(&mut self, _obs: &Observation) -> Vec<Migration> {
        Vec::new()
    }
}

/// Everything in the alternate tier while it has room; never migrates.
pub struct StaticAlternate;

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

/// Names of registered policies.
pub const POLICIES: &[&str] = &[
    "static-default",
    "static-alternate",
    "hemem",
    "colloid-hemem",
];

/// A policy by name, with HeMem's and Colloid's parameters for the policies that use them.
pub fn make_policy(
    name: &str,
    hemem: &HeMemParams,
    colloid: &ColloidParams,
) -> Option<Box<dyn TieringPolicy>> {
    Some(match name {
        "static-default" => Box::new(StaticDefault),
        "static-alternate" => Box::new(StaticAlternate),
        "hemem" => Box::new(HeMem::new(hemem.clone())),
        "colloid-hemem" => Box::new(ColloidHeMem::new(hemem.clone(), colloid.clone())),
        _ => return None,
    })
}
