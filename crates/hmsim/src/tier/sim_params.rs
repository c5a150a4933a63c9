//! The parameters of one per-quantum simulation run, apart from the engine that runs it so
//! that an access source can take them without importing the engine.

use crate::mempath::TierSpec;

#[derive(Debug, Clone, PartialEq)]
pub struct SimParams {
    pub tiers: Vec<TierSpec>,
    pub page_bytes: u64,
    pub quantum_s: f64,
    pub duration_s: f64,
    pub sample_period: u64,
    /// An explicit cap on the copy rate, GB/s, on top of the copy engine's own rate (None:
    /// only the copy threads limit it).
    pub migrate_limit_gb_s: Option<f64>,
    pub ewma_alpha: f64,
    pub seed: u64,
}
