//! Wear: the per-frame allocation-count distribution and the SCM lifetime it implies.
//!
//! Allocation count stands in for writes (the study's argument: a frame is written after
//! it is allocated, and CPU caches absorb bursts), so a frame's media writes are modelled
//! as `allocations × writes_per_alloc` per cell. The hottest frame wears out first.

use serde::Serialize;

use super::startgap::lifetime_runs;
use crate::stats::Moments;

/// Fairness of an allocation-count distribution over all frames (frames never allocated
/// count as 0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fairness {
    pub max: u32,
    pub mean: f64,
    /// max / mean (1 = perfectly even); 0 when nothing was allocated.
    pub max_over_mean: f64,
    /// Coefficient of variation σ/mean; 0 when nothing was allocated.
    pub cov: f64,
    /// Frames allocated at least once.
    pub touched: u64,
}

pub(crate) fn fairness(counts: &[u32]) -> Fairness {
    let m = Moments::of(counts.iter().map(|&c| c as f64));
    let max = counts.iter().copied().max().unwrap_or(0);
    let mean = m.mean();
    Fairness {
        max,
        mean,
        max_over_mean: if mean > 0.0 { max as f64 / mean } else { 0.0 },
        cov: m.cov(),
        touched: counts.iter().filter(|&&c| c > 0).count() as u64,
    }
}

crate::params! {
    /// The writes-per-allocation lifetime model.
    #[derive(Debug, Clone, PartialEq)]
    pub struct WearModel {
        pub endurance_writes: f64 = 1e7 => range(1.0, 1e18), "writes",
            "Writes a cell endures (PCM: 10^6–10^8).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub device: Option<String> = None => any, "",
            "Take `endurance_writes` from this catalog device's `endurance.write_cycles` instead (e.g. `pcm`): the end-to-end view of allocator choice → SCM lifetime.";
        pub writes_per_alloc: f64 = 1.0 => range(1e-6, 1e9), "writes",
            "Writes each cell of a frame receives per allocation of that frame.";
        pub start_gap_psi: u64 = super::startgap::DEFAULT_PSI => range(1, 1_000_000), "writes",
            "Start-Gap comparison: writes between gap moves (ψ; the paper's 100).";
        pub start_gap_seed: u64 = 1 => any, "",
            "Seed of Start-Gap's static address randomization.";
    }
}

/// Implied lifetime of the workload repeated back to back.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Lifetime {
    /// Repetitions until the most-allocated frame wears out (∞ → `f64::INFINITY`).
    pub runs: f64,
    /// Repetitions if allocations were spread perfectly evenly.
    pub ideal_runs: f64,
    /// `runs` × the workload's duration, in years; `None` without a duration.
    pub years: Option<f64>,
    /// Repetitions under hardware Start-Gap leveling (frames as lines), plain and with
    /// address randomization; `None` when not computed.
    pub start_gap_runs: Option<f64>,
    pub start_gap_random_runs: Option<f64>,
}

impl WearModel {
    pub fn lifetime(&self, f: &Fairness, duration_ns: u64) -> Lifetime {
        let runs = self.endurance_writes / (f.max as f64 * self.writes_per_alloc);
        let ideal_runs = self.endurance_writes / (f.mean * self.writes_per_alloc);
        let years = (duration_ns > 0 && runs.is_finite())
            .then(|| runs * duration_ns as f64 * 1e-9 / crate::units::SECONDS_PER_YEAR);
        Lifetime {
            runs,
            ideal_runs,
            years,
            start_gap_runs: None,
            start_gap_random_runs: None,
        }
    }

    /// [`Self::lifetime`] plus the Start-Gap comparison from the per-frame counts.
    pub fn lifetime_with_start_gap(&self, counts: &[u32], duration_ns: u64) -> Lifetime {
        let mut l = self.lifetime(&fairness(counts), duration_ns);
        let w: Vec<f64> = counts
            .iter()
            .map(|&c| c as f64 * self.writes_per_alloc)
            .collect();
        let sg = |seed| lifetime_runs(&w, self.endurance_writes, self.start_gap_psi, seed);
        l.start_gap_runs = Some(sg(None));
        l.start_gap_random_runs = Some(sg(Some(self.start_gap_seed)));
        l
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fairness_closed_form() {
        let f = fairness(&[0, 2, 2, 4]);
        assert_eq!(f.max, 4);
        assert!((f.mean - 2.0).abs() < 1e-12);
        assert!((f.max_over_mean - 2.0).abs() < 1e-12);
        // σ = sqrt((4 + 0 + 0 + 4) / 4) = sqrt(2)
        assert!((f.cov - 2f64.sqrt() / 2.0).abs() < 1e-12);
        assert_eq!(f.touched, 3);
        let l = WearModel {
            endurance_writes: 1e6,
            writes_per_alloc: 10.0,
            ..Default::default()
        }
        .lifetime(&f, 1_000_000_000);
        assert!((l.runs - 25_000.0).abs() < 1e-9);
        assert!((l.ideal_runs - 50_000.0).abs() < 1e-9);
        assert!((l.years.unwrap() - 25_000.0 / (365.25 * 86400.0)).abs() < 1e-12);
    }
}
