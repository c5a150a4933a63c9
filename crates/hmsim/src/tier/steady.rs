//! Whether a tiering run's measured window (its last `measure_last_s`) is a steady state, and
//! the trust warnings a run's rows carry (docs/tiering.md, *Is the window steady?*).
//!
//! A window is steady when the application's throughput does not move across it and the
//! policy is no longer moving much data in it:
//!
//! - **drift**: (mean throughput of the window's second half − mean of its first half) ÷ the
//!   window's mean. Halves (not a regression over quanta) so that periodic dips — HeMem's
//!   10 ms and MEMTIS's 500 ms migration batches — average out in each half.
//! - **migration share**: bytes the policy copied in the window ÷ application bytes in it.
//!
//! Steady: |drift| ≤ [`DRIFT_MAX`] and migration share ≤ [`MIGRATION_SHARE_MAX`].

use super::quantum::{QuantumRecord, SimResult};

/// Largest |throughput drift| across the measured window of a steady run (1 %).
pub(super) const DRIFT_MAX: f64 = 0.01;
/// Largest share of migration copies in the window's application traffic of a steady run (5 %).
pub(super) const MIGRATION_SHARE_MAX: f64 = 0.05;

/// How steady a measured window is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Steadiness {
    /// Relative change of throughput from the window's first half to its second.
    pub drift: f64,
    /// Migrated bytes ÷ application bytes over the window.
    pub migration_share: f64,
}

impl Steadiness {
    /// The steadiness of `window` (a run's quanta of `quantum_s` each, in order).
    pub(super) fn of(window: &[QuantumRecord], quantum_s: f64) -> Steadiness {
        let mean = |qs: &[QuantumRecord]| {
            qs.iter().map(|q| q.throughput_gb_s).sum::<f64>() / qs.len().max(1) as f64
        };
        let half = window.len() / 2;
        let whole = mean(window);
        // The middle quantum of an odd window belongs to neither half.
        let (first, second) = (&window[..half], &window[window.len() - half..]);
        let drift = if half > 0 && whole.abs() > 0.0 {
            (mean(second) - mean(first)) / whole
        } else {
            0.0
        };
        let migrated: f64 = window.iter().map(|q| q.migrated_bytes as f64).sum();
        let app: f64 = window
            .iter()
            .map(|q| q.throughput_gb_s * 1e9 * quantum_s)
            .sum();
        let migration_share = if app > 0.0 { migrated / app } else { 0.0 };
        Steadiness {
            drift,
            migration_share,
        }
    }

    /// Both numbers within their thresholds (a non-finite number is not steady).
    pub(super) fn converged(&self) -> bool {
        self.flat() && self.quiet()
    }

    fn flat(&self) -> bool {
        self.drift.abs() <= DRIFT_MAX
    }

    fn quiet(&self) -> bool {
        self.migration_share <= MIGRATION_SHARE_MAX
    }

    /// The warning for a window that is not steady, or none.
    /// `hint` says what to change.
    pub(super) fn warning(
        &self,
        who: &str,
        measure_last_s: f64,
        duration_s: f64,
        hint: &str,
    ) -> Option<String> {
        if self.converged() {
            return None;
        }
        let mut why = Vec::new();
        if !self.flat() {
            why.push(format!(
                "throughput changed {:+.1} % from its first half to its second (limit ±{:.0} %)",
                self.drift * 100.0,
                DRIFT_MAX * 100.0
            ));
        }
        if !self.quiet() {
            why.push(format!(
                "migrations were {:.1} % of the application's traffic (limit {:.0} %)",
                self.migration_share * 100.0,
                MIGRATION_SHARE_MAX * 100.0
            ));
        }
        Some(format!(
            "{who}: the measured window (last {measure_last_s} s of {duration_s} s) is not \
             steady: {}; its numbers are a transient. To fix: {hint}",
            why.join(" and ")
        ))
    }
}

/// Policies that never migrate by design (no notice when they move nothing).
fn never_migrates(policy: &str) -> bool {
    matches!(
        policy,
        "static-default" | "static-alternate" | super::scenario::BEST
    )
}

/// The notice for a migrating policy that moved (almost) nothing over the whole run — under
/// 1 % of the pages' bytes — with the reason where the model knows it, or none.
pub(super) fn nothing_migrated(
    who: &str,
    policy: &str,
    r: &SimResult,
    window: &[QuantumRecord],
) -> Option<String> {
    // From the tiers' counts, which move with every placement and migration (equal to a
    // count over the table, as the page-table tests check), not a pass over every page.
    let pt = &r.pages;
    let footprint: u64 = (0..pt.tiers()).map(|t| pt.used_units(t)).sum::<u64>() * pt.unit_bytes();
    if never_migrates(policy) || r.migrated_bytes as f64 > footprint as f64 * 1e-2 {
        return None;
    }
    let page = r.pages.page_bytes;
    let mean = |f: &dyn Fn(&QuantumRecord) -> f64| {
        window.iter().map(f).sum::<f64>() / window.len().max(1) as f64
    };
    let base = policy.strip_prefix("colloid-").unwrap_or(policy);
    let reason = if mean(&|q| q.alt_traffic_share) == 0.0 && mean(&|q| q.hot_share_default) >= 1.0 {
        "every accessed page sits in the default tier from first touch, so there is nothing to \
         promote"
            .to_string()
    } else if base == "tpp" && page > 4096 {
        format!(
            "with {} KiB (THP) pages each page has one accessed bit for all its base pages, \
             so under this workload kswapd finds no page with the bit clear, demotes nothing, \
             and promotions find no free frame: TPP keeps its first-touch placement \
             (docs/tiering.md, Limits). Set sim.page_bytes = 4096 to see TPP migrate",
            page >> 10
        )
    } else if policy.starts_with("colloid-")
        && window
            .iter()
            .all(|q| q.latency_ns.len() > 1 && q.latency_ns[0] >= q.latency_ns[1])
    {
        "the default tier's loaded latency stayed at or above the alternate tier's, so \
         Colloid promotes nothing (its first-touch placement is where it keeps pages)"
            .to_string()
    } else {
        "its rows equal its first-touch placement".to_string()
    };
    Some(format!(
        "{who} migrated almost nothing ({:.3} GB, {} pages, over the run): {reason}",
        r.migrated_bytes as f64 / 1e9,
        r.migrations
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(tputs: &[f64], migrated: u64) -> Vec<QuantumRecord> {
        tputs
            .iter()
            .enumerate()
            .map(|(i, &t)| QuantumRecord {
                time_s: i as f64 * 0.01,
                throughput_gb_s: t,
                mops: 0.0,
                latency_ns: vec![70.0, 135.0],
                bandwidth_gb_s: vec![0.0, 0.0],
                read_fraction: vec![0.5, 0.5],
                little_ns: vec![70.0, 135.0],
                hot_share_default: 0.5,
                alt_traffic_share: 0.5,
                migrated_bytes: migrated,
                fixed_point_iterations: 1,
                converged: true,
                antagonist_cores: 0,
            })
            .collect()
    }

    #[test]
    fn a_flat_window_is_steady_and_a_climbing_one_is_not() {
        let flat = Steadiness::of(&window(&[50.0; 100], 0), 0.01);
        assert_eq!(flat.drift, 0.0);
        assert!(flat.converged());
        assert!(flat.warning("hemem at 0×", 5.0, 20.0, "h").is_none());
        let climb: Vec<f64> = (0..100).map(|i| 50.0 + 0.2 * i as f64).collect();
        let s = Steadiness::of(&window(&climb, 0), 0.01);
        // Halves average 54.9 and 64.9 around 59.9.
        assert!((s.drift - 10.0 / 59.9).abs() < 1e-9, "{s:?}");
        let w = s
            .warning("hemem at 0×", 5.0, 20.0, "lengthen sim.duration_s")
            .unwrap();
        assert!(
            w.contains("sim.duration_s") && w.contains("hemem at 0×"),
            "{w}"
        );
        // 1 GB/quantum of copies against 50 GB/s × 10 ms = 0.5 GB of application traffic.
        let busy = Steadiness::of(&window(&[50.0; 10], 1_000_000_000), 0.01);
        assert!((busy.migration_share - 2.0).abs() < 1e-12);
        assert!(!busy.converged());
        assert!(busy
            .warning("x", 1.0, 2.0, "h")
            .unwrap()
            .contains("migrations were"));
        // One quantum has no halves: no drift to measure.
        assert_eq!(Steadiness::of(&window(&[1.0], 0), 0.01).drift, 0.0);
    }
}
