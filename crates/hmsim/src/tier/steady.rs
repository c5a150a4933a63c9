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

use super::policy::{ColloidQuanta, HeMemQuanta};
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
        // One quantum has no halves to compare: its drift is unknown (not steady), not 0.
        let drift = if half == 0 {
            f64::NAN
        } else if whole.abs() > 0.0 {
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
        if self.drift.is_nan() {
            why.push(
                "it is one quantum, with no halves to compare (sim.measure_last_s must span \
                 at least two of sim.quantum_s)"
                    .to_string(),
            );
        } else if !self.flat() {
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

/// Fewest passes over a trace file a measured window replays for its numbers to describe
/// the whole program: each half of the window then holds a whole pass, so the drift test
/// compares the program with itself rather than one of its phases with another. A choice
/// (docs/tiering.md, *Is the window steady?*).
pub(super) const WINDOW_PASSES_MIN: f64 = 2.0;

/// Where a trace-file run's measured window falls in its trace, in passes over the file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TraceWindow {
    /// Passes the run replayed before its window, and in it.
    pub before_passes: f64,
    pub window_passes: f64,
    /// The window's simulated length.
    pub window_s: f64,
    /// The trace goes through the CPU caches, which start empty: its first pass's misses
    /// are cold ones.
    pub cached: bool,
}

impl TraceWindow {
    /// The window's replay of the trace did not end within it: fewer than
    /// [`WINDOW_PASSES_MIN`] passes (a trace replayed in a loop).
    pub(super) fn short(&self) -> bool {
        self.window_passes > 0.0 && self.window_passes < WINDOW_PASSES_MIN
    }

    /// The trace came round to its start during the run (it is replayed in a loop).
    pub(super) fn looped(&self) -> bool {
        self.before_passes + self.window_passes >= 1.0
    }

    /// The warning for a window that replays too little of the trace, or that starts
    /// inside a cache-filtered trace's first pass; none otherwise.
    pub(super) fn warning(&self, who: &str) -> Option<String> {
        if self.window_passes.is_nan() || self.window_passes <= 0.0 {
            return None;
        }
        // Seconds of one pass at the window's rate.
        let pass_s = self.window_s / self.window_passes;
        let need = format!(
            "sim.measure_last_s ≥ {} s ({WINDOW_PASSES_MIN} passes at this run's rate)",
            round_up(WINDOW_PASSES_MIN * pass_s)
        );
        let cold = self.cached && self.before_passes < 1.0;
        let run = self.before_passes + self.window_passes;
        if run < 1.0 {
            return Some(format!(
                "{who}: the run replayed {run:.2} of one pass over the trace, the measured \
                 window {:.2} of a pass (from {:.0} % to {:.0} % of the way through it): its \
                 numbers describe that part of the program, not all of it{}. To measure the \
                 whole program: {need}, and sim.duration_s longer by as much",
                self.window_passes,
                self.before_passes * 100.0,
                run * 100.0,
                if self.cached {
                    ", and its cache misses are the cold ones of the first pass"
                } else {
                    ""
                }
            ));
        }
        if self.short() {
            return Some(format!(
                "{who}: the measured window replayed {:.2} passes over the trace, which \
                 loops at its end: its numbers weight the program's parts by where the window \
                 falls, and the drift between its halves compares parts of the program, not \
                 times{}. To fix: {need}, and sim.duration_s longer by as much",
                self.window_passes,
                if cold {
                    "; it also starts inside the first pass, whose cache misses are cold"
                } else {
                    ""
                }
            ));
        }
        cold.then(|| {
            format!(
                "{who}: the measured window starts {:.2} passes into the trace, inside its \
                 first pass, whose cache misses are cold (the caches start empty). To fix: \
                 lengthen sim.duration_s by at least {} s, so the window starts after it",
                self.before_passes,
                round_up((1.0 - self.before_passes) * pass_s)
            )
        })
    }
}

/// `x` rounded up to two significant digits, as text (a length to ask for).
fn round_up(x: f64) -> String {
    if !(x > 0.0 && x.is_finite()) {
        return format!("{x}");
    }
    let e = x.log10().floor() as i32 - 1;
    // The tolerance keeps a value a rounding error above a step on that step.
    let up = (x / 10f64.powi(e) - 1e-9).ceil() * 10f64.powi(e);
    format!("{up:.*}", (-e).max(0) as usize)
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
    } else if let Some(why) = colloid_kept(&r.work.colloid) {
        why
    } else if let Some(why) = hemem_kept(&r.work.hemem) {
        why
    } else {
        "its rows equal its first-touch placement".to_string()
    };
    Some(format!(
        "{who} migrated almost nothing ({:.3} GB, {} pages, over the run): {reason}",
        r.migrated_bytes as f64 / 1e9,
        r.migrations
    ))
}

/// "of `who`'s N `unit`, in A …, and in B …: it kept (nearly) every page where first touch
/// put it": the reasons (count, why) a policy's own decisions give, when they kept the pages
/// in nine of its `total` decisions in ten or more.
fn kept_by(who: &str, unit: &str, total: u64, reasons: &[(u64, String)]) -> Option<String> {
    let kept: u64 = reasons.iter().map(|r| r.0).sum();
    if total == 0 || kept * 10 < total * 9 {
        return None;
    }
    let said: Vec<String> = reasons
        .iter()
        .filter(|r| r.0 > 0)
        .map(|(n, why)| format!("in {n} {why}"))
        .collect();
    Some(format!(
        "of {who}'s {total} {unit}, {}: it kept (nearly) every page where first touch put it",
        said.join(", and ")
    ))
}

/// Why a Colloid policy kept its pages, when its own steps say so: it found the tiers
/// balanced, or was to move a share of the accesses no hot page fitted in.
fn colloid_kept(q: &ColloidQuanta) -> Option<String> {
    kept_by(
        "Colloid",
        "steps",
        q.stepped,
        &[
            (
                q.balanced,
                "it found the tiers' loaded latencies within δ of each other (balanced)".into(),
            ),
            (
                q.unmoved_zero_dp,
                "its share of the accesses to move, Δp, was 0: the default tier served none of \
                 them, and the closed form's Δp has a factor p (the default tier's share), so it \
                 cannot start (mode = \"binary-search\" can)"
                    .into(),
            ),
            (
                q.unmoved_none_hot,
                "no page in the tier it was to move pages from was hot (at hemem.hot_threshold \
                 samples; see HeMem's cooling in docs/tiering.md, *Nothing migrated*)"
                    .into(),
            ),
            (
                q.unmoved - q.unmoved_zero_dp - q.unmoved_none_hot,
                "it was to move a share Δp of the accesses smaller than any one hot page's (it \
                 moves no page that carries more than Δp, and with skewed access the hottest \
                 pages do)"
                    .into(),
            ),
        ],
    )
}

/// Why HeMem kept its pages, when its quanta say so: no page off the default tier was hot,
/// or the hot ones found the default tier full and none of its pages cold enough to make room.
fn hemem_kept(q: &HeMemQuanta) -> Option<String> {
    kept_by(
        "HeMem",
        "quanta",
        q.quanta,
        &[
            (
                q.none_hot,
                "no page outside the default tier was hot (at hemem.hot_threshold samples; \
                 HeMem halves every count whenever one page passes hemem.cooling_threshold, so \
                 only pages sampled nearly as often as the hottest stay hot, and under skewed \
                 access few are)"
                    .into(),
            ),
            (
                q.none_cold,
                "its hot pages found the default tier full and no page in it below the hot \
                 threshold to demote"
                    .into(),
            ),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_colloid_run_that_kept_its_pages_says_which_of_its_decisions_kept_them() {
        let q = |stepped, balanced, unmoved, unmoved_zero_dp| ColloidQuanta {
            stepped,
            balanced,
            unmoved,
            unmoved_zero_dp,
            unmoved_none_hot: 0,
        };
        let all_balanced = colloid_kept(&q(1500, 1500, 0, 0)).unwrap();
        assert!(
            all_balanced.starts_with("of Colloid's 1500 steps, in 1500 it found"),
            "{all_balanced}"
        );
        let mixed = colloid_kept(&q(100, 50, 45, 5)).unwrap();
        assert!(
            mixed.contains("in 50 it found") && mixed.contains("in 5 its share"),
            "{mixed}"
        );
        assert!(mixed.contains("in 40 it was to move"), "{mixed}");
        let none_hot = colloid_kept(&ColloidQuanta {
            unmoved_none_hot: 30,
            ..q(100, 50, 45, 5)
        })
        .unwrap();
        assert!(
            none_hot.contains("in 30 no page in the tier")
                && none_hot.contains("in 10 it was to move"),
            "{none_hot}"
        );
        // Fewer than nine in ten of its steps kept the pages: not the reason.
        assert_eq!(colloid_kept(&q(100, 50, 39, 0)), None);
        assert_eq!(colloid_kept(&q(0, 0, 0, 0)), None);
    }

    #[test]
    fn a_hemem_run_that_kept_its_pages_says_whether_none_was_hot_or_none_cold() {
        let q = |quanta, none_hot, none_cold| HeMemQuanta {
            quanta,
            none_hot,
            none_cold,
        };
        let none_hot = hemem_kept(&q(1000, 998, 0)).unwrap();
        assert!(
            none_hot.starts_with("of HeMem's 1000 quanta, in 998 no page outside"),
            "{none_hot}"
        );
        let both = hemem_kept(&q(100, 60, 35)).unwrap();
        assert!(
            both.contains("in 60 no page") && both.contains("in 35 its hot pages found"),
            "{both}"
        );
        assert_eq!(hemem_kept(&q(100, 60, 29)), None);
    }

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
        // One quantum has no halves: its drift is unknown, and it is not called steady.
        let one = Steadiness::of(&window(&[1.0], 0), 0.01);
        assert!(one.drift.is_nan() && !one.converged());
        let w = one.warning("x", 0.01, 1.0, "h").unwrap();
        assert!(w.contains("one quantum, with no halves"), "{w}");
    }

    fn trace_window(before_passes: f64, window_passes: f64, cached: bool) -> TraceWindow {
        TraceWindow {
            before_passes,
            window_passes,
            window_s: 0.5,
            cached,
        }
    }

    #[test]
    fn a_trace_window_warns_when_it_holds_under_two_passes_or_a_cold_start() {
        // 0.9 passes in 0.5 s: a pass takes 0.556 s, two 1.11 s, asked for as 1.2 s.
        let w = trace_window(3.0, 0.9, false).warning("tpp at 0×").unwrap();
        assert!(
            w.starts_with("tpp at 0×: the measured window replayed 0.90 passes"),
            "{w}"
        );
        assert!(
            w.contains("sim.measure_last_s ≥ 1.2 s") && !w.contains("cold"),
            "{w}"
        );
        // The run as a whole short of one pass: a part of the program.
        let w = trace_window(0.2, 0.1, true).warning("x").unwrap();
        assert!(
            w.contains("0.30 of one pass") && w.contains("from 20 % to 30 %"),
            "{w}"
        );
        assert!(w.contains("cold"), "{w}");
        // Enough passes, but a filtered trace's window starting in its first pass.
        let w = trace_window(0.5, 4.0, true).warning("x").unwrap();
        assert!(w.contains("inside its first pass"), "{w}");
        // 0.5 of a pass at 0.125 s a pass: at least 0.063 s more.
        assert!(w.contains("by at least 0.063 s"), "{w}");
        // Enough passes after a warm start, or unfiltered: nothing to say.
        assert!(trace_window(1.0, 2.0, true).warning("x").is_none());
        assert!(trace_window(0.5, 4.0, false).warning("x").is_none());
        // Nothing replayed in the window: no pass length to speak of.
        assert!(trace_window(1.0, 0.0, false).warning("x").is_none());
        assert!(trace_window(3.0, 0.9, false).short() && !trace_window(3.0, 2.0, false).short());
    }

    #[test]
    fn lengths_are_asked_for_rounded_up_to_two_digits() {
        assert_eq!(round_up(1.111), "1.2");
        assert_eq!(round_up(1.2), "1.2");
        assert_eq!(round_up(0.0625), "0.063");
        assert_eq!(round_up(37.01), "38");
        assert_eq!(round_up(1234.0), "1300");
    }
}
