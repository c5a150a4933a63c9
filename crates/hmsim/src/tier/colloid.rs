//! Colloid (SOSP'24): balance the tiers' loaded access latencies. Δp is the share of
//! accesses to move between the default tier (D) and the alternate tier (A), by the
//! binary search of the paper or the closed form the HeMem artifact used.

use serde::{Deserialize, Serialize};

use super::hemem::{HeMemParams, HotTracker};
use super::policy::{
    ColloidQuanta, Migration, Observation, PolicyWork, TieringPolicy, DEFAULT_TIER,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeltaMode {
    BinarySearch,
    ClosedForm,
}

crate::params! {
    /// Colloid's balancing (Vuppalapati & Agarwal, ACM SOSP 2024).
    #[derive(Debug, Clone, PartialEq)]
    pub struct ColloidParams {
        pub epsilon: f64 = 0.01 => range(1e-6, 0.5), "",
            "Binary search: stop when the access-share bounds are closer than this (paper: ε = 0.01).";
        pub delta: f64 = 0.05 => range(0.0, 1.0), "",
            "Tiers are balanced when their latencies differ by at most this share of the default tier's (paper: δ = 0.05).";
        pub mode: DeltaMode = DeltaMode::ClosedForm => any, "",
            "How Δp is found: `binary-search` (the paper) or `closed-form` (the Colloid artifact's HeMem integration).";
        pub max_bytes_per_quantum: u64 = 100_000_000 => range(1, 1 << 40), "B",
            "HeMem+Colloid moves at most M bytes per quantum (paper: 100 MB).";
    }
}

/// Which way Colloid moves hot pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Balanced,
    ToDefault,
    ToAlternate,
}

/// The binary-search state (p_lo, p_hi) of Colloid's algorithm (docs/tiering.md).
#[derive(Debug, Clone, PartialEq)]
pub struct Colloid {
    pub params: ColloidParams,
    pub p_lo: f64,
    pub p_hi: f64,
    /// Its decisions so far (`unmoved` is the policy's to count).
    pub quanta: ColloidQuanta,
}

impl Colloid {
    pub fn new(params: ColloidParams) -> Self {
        Colloid {
            params,
            p_lo: 0.0,
            p_hi: 1.0,
            quanta: ColloidQuanta::default(),
        }
    }

    /// Δp and direction from smoothed latencies and p = R_D / (R_D + R_A).
    pub fn step(&mut self, l_d: f64, l_a: f64, p: f64) -> (f64, Direction) {
        self.quanta.stepped += 1;
        if (l_d - l_a).abs() <= self.params.delta * l_d {
            self.quanta.balanced += 1;
            return (0.0, Direction::Balanced);
        }
        let dir = if l_d < l_a {
            Direction::ToDefault
        } else {
            Direction::ToAlternate
        };
        let dp = match self.params.mode {
            DeltaMode::ClosedForm => {
                p * (1.0 - p) * (l_d - l_a).abs() / ((1.0 - p) * l_d + p * l_a)
            }
            DeltaMode::BinarySearch => {
                if l_d < l_a {
                    self.p_lo = p;
                    if self.p_hi <= self.p_lo {
                        self.p_hi = 1.0;
                    }
                } else {
                    self.p_hi = p;
                    if self.p_lo >= self.p_hi {
                        self.p_lo = 0.0;
                    }
                }
                if self.p_hi - self.p_lo < self.params.epsilon {
                    if l_d < l_a {
                        self.p_hi = 1.0;
                    } else {
                        self.p_lo = 0.0;
                    }
                }
                ((self.p_lo + self.p_hi) / 2.0 - p).abs()
            }
        };
        (dp, dir)
    }
}

impl Colloid {
    /// One Colloid step on an observation's smoothed counters: (Δp, direction, the
    /// application's total read rate per s). None until both tiers have seen reads.
    pub fn step_obs(&mut self, obs: &Observation) -> Option<(f64, Direction, f64)> {
        let alt = 1;
        let (Some(l_d), Some(l_a)) = (obs.latency_ns[DEFAULT_TIER], obs.latency_ns[alt]) else {
            return None;
        };
        let (r_d, r_a) = (
            obs.app_arrivals_per_ns[DEFAULT_TIER],
            obs.app_arrivals_per_ns[alt],
        );
        if r_d + r_a <= 0.0 {
            return None;
        }
        let (dp, dir) = self.step(l_d, l_a, r_d / (r_d + r_a));
        Some((dp, dir, (r_d + r_a) * 1e9))
    }
}

/// Colloid on HeMem: HeMem's sampled counts; each quantum moves hot pages toward the tier
/// with lower loaded latency, Σ p_page ≤ Δp and at most M bytes.
pub struct ColloidHeMem {
    pub hemem: HeMemParams,
    pub colloid: Colloid,
    tracker: HotTracker,
    /// This quantum's Δp, and whether the tier it was to move pages from had no hot page,
    /// if its step pointed a way (not balanced).
    last_directed: Option<(f64, bool)>,
}

impl ColloidHeMem {
    pub fn new(hemem: HeMemParams, colloid: ColloidParams) -> Self {
        ColloidHeMem {
            tracker: HotTracker::new(hemem.cooling_threshold),
            hemem,
            colloid: Colloid::new(colloid),
            last_directed: None,
        }
    }
}

impl TieringPolicy for ColloidHeMem {
    fn copy_engine(&self) -> super::copy::CopyEngine {
        super::copy::CopyEngine::hemem_dma()
    }
    fn name(&self) -> &'static str {
        "colloid-hemem"
    }

    fn work(&self) -> PolicyWork {
        PolicyWork {
            colloid: self.colloid.quanta,
            ..self.tracker.work()
        }
    }

    fn quantum(&mut self, obs: &Observation) -> Vec<Migration> {
        let out = self.moves(obs);
        if out.is_empty() {
            if let Some((dp, none_hot)) = self.last_directed {
                let q = &mut self.colloid.quanta;
                q.unmoved += 1;
                if dp <= 0.0 {
                    q.unmoved_zero_dp += 1;
                } else if none_hot {
                    q.unmoved_none_hot += 1;
                }
            }
        }
        out
    }
}

impl ColloidHeMem {
    /// One quantum's migrations (`quantum`, which counts the directed quanta that moved
    /// nothing).
    fn moves(&mut self, obs: &Observation) -> Vec<Migration> {
        self.last_directed = None;
        self.tracker.observe(obs);
        let pt = obs.pages;
        let alt = 1;
        let Some((dp, dir, _)) = self.colloid.step_obs(obs) else {
            return Vec::new();
        };
        // The hot pages of the tier pages leave, the total and the pruning in one pass (the
        // counts do not change within the quantum: pruning first or last is the same).
        let from = match dir {
            Direction::Balanced => None,
            Direction::ToAlternate => Some(DEFAULT_TIER),
            Direction::ToDefault => Some(alt),
        };
        let th = self.hemem.hot_threshold;
        let (total, hot) = self.tracker.heat.total_and_hot_on(pt, from, th);
        self.last_directed = (dir != Direction::Balanced).then_some((dp, hot.is_empty()));
        if dp <= 0.0 || total <= 0.0 {
            return Vec::new();
        }
        let mut budget = obs
            .migrate_budget_bytes
            .min(self.colloid.params.max_bytes_per_quantum);
        let mut remaining = dp;
        let mut out = Vec::new();
        let share = |c: u32| c as f64 / total;
        match dir {
            Direction::Balanced => {}
            Direction::ToAlternate => {
                let mut free = pt.free_pages(alt);
                for (page, c) in hot {
                    if budget < pt.page_bytes || free == 0 || remaining <= 0.0 {
                        break;
                    }
                    if share(c) <= remaining {
                        remaining -= share(c);
                        budget -= pt.page_bytes;
                        free -= 1;
                        out.push(Migration { page, to: alt });
                    }
                }
            }
            Direction::ToDefault => {
                let mut free = pt.free_pages(DEFAULT_TIER);
                let mut taken = Vec::new();
                for (page, c) in hot {
                    if remaining <= 0.0 {
                        break;
                    }
                    if free > 0 {
                        if budget < pt.page_bytes {
                            break;
                        }
                        if share(c) <= remaining {
                            remaining -= share(c);
                            budget -= pt.page_bytes;
                            free -= 1;
                            out.push(Migration {
                                page,
                                to: DEFAULT_TIER,
                            });
                        }
                    } else {
                        if budget < 2 * pt.page_bytes {
                            break;
                        }
                        let Some(cold) = self.tracker.scan.next(
                            pt,
                            &self.tracker.heat,
                            DEFAULT_TIER,
                            th,
                            &taken,
                        ) else {
                            break;
                        };
                        let gain = share(c) - share(self.tracker.heat.count(cold));
                        if gain <= remaining {
                            remaining -= gain;
                            budget -= 2 * pt.page_bytes;
                            taken.push(cold);
                            out.push(Migration {
                                page: cold,
                                to: alt,
                            });
                            out.push(Migration {
                                page,
                                to: DEFAULT_TIER,
                            });
                        }
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_hand_worked() {
        let mut c = Colloid::new(ColloidParams::default());
        // p = 0.5, L_D = 300, L_A = 150: 0.25·150 / (150 + 75) = 1/6.
        let (dp, dir) = c.step(300.0, 150.0, 0.5);
        assert!((dp - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(dir, Direction::ToAlternate);
        assert_eq!(c.step(100.0, 104.0, 0.5).1, Direction::Balanced);
        // Its decisions are counted: two steps, one balanced.
        assert_eq!((c.quanta.stepped, c.quanta.balanced), (2, 1));
        // The closed form's Δp has a factor p: a default tier serving nothing moves nothing.
        assert_eq!(c.step(100.0, 300.0, 0.0), (0.0, Direction::ToDefault));
    }

    #[test]
    fn binary_search_hand_worked() {
        let mut c = Colloid::new(ColloidParams {
            mode: DeltaMode::BinarySearch,
            ..Default::default()
        });
        // L_D > L_A at p = 0.9: p_hi = 0.9, target 0.45, Δp = 0.45.
        let (dp, dir) = c.step(300.0, 150.0, 0.9);
        assert!((dp - 0.45).abs() < 1e-12);
        assert_eq!(dir, Direction::ToAlternate);
        // Now L_D < L_A at p = 0.45: p_lo = 0.45, target (0.45+0.9)/2 = 0.675.
        let (dp, dir) = c.step(100.0, 150.0, 0.45);
        assert!((dp - 0.225).abs() < 1e-12);
        assert_eq!(dir, Direction::ToDefault);
        assert_eq!((c.p_lo, c.p_hi), (0.45, 0.9));
        // Interval collapsed below ε: reopen toward the lower-latency side.
        c.p_lo = 0.5;
        c.p_hi = 0.505;
        let (_, dir) = c.step(300.0, 150.0, 0.502);
        assert_eq!(dir, Direction::ToAlternate);
        assert_eq!(c.p_lo, 0.0);
    }
}
