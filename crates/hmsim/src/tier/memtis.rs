//! MEMTIS (SOSP'23), optionally with Colloid (spec §2). PEBS samples count per page; pages
//! sit in a 16-bin log2 histogram of their counts, weighted by size (a 2 MiB page counts as
//! 512 base pages). Every 100,000 samples the hot threshold becomes the lowest bin whose
//! pages (with all hotter bins) fit in the default tier less a 3 % watermark; warm = hot − 1.
//! Every 2,000,000 samples all counts halve. Every 500 ms the migration threads promote hot
//! alternate-tier pages and demote the coldest default-tier pages to make room (keeping the
//! watermark free). The sampling period adapts over a ladder from 199 to 19997 to keep the
//! sampling CPU at or below 3 % of one core. Not modelled: splitting skewed huge pages.
//!
//! With Colloid (500 ms quantum, M = 5 GiB): when L_D > L_A, hot pages of the default tier
//! are demoted first-fit with p_k ≤ remaining Δp (p_k = count_k / Σ counts); when
//! L_D < L_A, hot alternate-tier pages are promoted the same way.

use serde::{Deserialize, Serialize};

use super::colloid::{Colloid, ColloidParams, Direction};
use super::cost::SAMPLE_NS;
use super::pages::PageTable;
use super::policy::{Migration, Observation, PolicyWork, TieringPolicy, DEFAULT_TIER};

const BINS: usize = 16;

/// MEMTIS's sampling periods, from the finest to the coarsest (spec §2: 199 … 19997).
pub const PERIOD_LADDER: [u64; 12] = [
    199, 293, 401, 577, 797, 1009, 1999, 3001, 5003, 7001, 10007, 19997,
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemtisParams {
    #[serde(default = "d_adapt")]
    pub adapt_every_samples: u64,
    #[serde(default = "d_cool")]
    pub cool_every_samples: u64,
    /// Share of the default tier kept free (and left out of the hot threshold).
    #[serde(default = "d_wm")]
    pub watermark: f64,
    #[serde(default = "d_interval")]
    pub interval_s: f64,
    /// Sampling CPU ceiling, share of one core.
    #[serde(default = "d_cpu")]
    pub cpu_limit: f64,
    /// Colloid's M for MEMTIS: 5 GiB per 500 ms.
    #[serde(default = "d_m")]
    pub colloid_max_bytes: u64,
}

fn d_adapt() -> u64 {
    100_000
}
fn d_cool() -> u64 {
    2_000_000
}
fn d_wm() -> f64 {
    0.03
}
fn d_interval() -> f64 {
    0.5
}
fn d_cpu() -> f64 {
    0.03
}
fn d_m() -> u64 {
    5 << 30
}

impl Default for MemtisParams {
    fn default() -> Self {
        MemtisParams {
            adapt_every_samples: d_adapt(),
            cool_every_samples: d_cool(),
            watermark: d_wm(),
            interval_s: d_interval(),
            cpu_limit: d_cpu(),
            colloid_max_bytes: d_m(),
        }
    }
}

/// Bin of a count: 0 for none, else ⌊log2 count⌋ + 1, capped at 15.
pub fn bin_of(count: u32) -> usize {
    if count == 0 {
        0
    } else {
        ((32 - count.leading_zeros()) as usize).min(BINS - 1)
    }
}

/// The lowest bin whose pages, with all hotter bins, fit in `capacity` (same units).
pub fn hot_bin(hist: &[u64; BINS], capacity: u64) -> usize {
    let mut sum = 0u64;
    for b in (1..BINS).rev() {
        sum += hist[b];
        if sum > capacity {
            return (b + 1).min(BINS - 1);
        }
    }
    1
}

pub struct Memtis {
    pub params: MemtisParams,
    colloid: Option<Colloid>,
    counts: Vec<u32>,
    /// Base pages (4 KiB units) per bin.
    hist: [u64; BINS],
    pub hot: usize,
    since_adapt: u64,
    since_cool: u64,
    total_count: u64,
    next_run_s: f64,
    period_idx: usize,
    interval_samples: u64,
    work: PolicyWork,
}

impl Memtis {
    pub fn new(params: MemtisParams, colloid: Option<ColloidParams>) -> Self {
        Memtis {
            params,
            colloid: colloid.map(Colloid::new),
            counts: Vec::new(),
            hist: [0; BINS],
            hot: 1,
            since_adapt: 0,
            since_cool: 0,
            total_count: 0,
            next_run_s: 0.0,
            period_idx: 0,
            interval_samples: 0,
            work: PolicyWork::default(),
        }
    }

    fn record(&mut self, page: u64, weight: u64, pt: &PageTable) {
        let c = &mut self.counts[page as usize];
        let old = bin_of(*c);
        *c = c.saturating_add(1);
        let new = bin_of(*c);
        self.hist[old] -= weight;
        self.hist[new] += weight;
        self.total_count += 1;
        self.since_adapt += 1;
        self.since_cool += 1;
        if self.since_adapt >= self.params.adapt_every_samples {
            self.since_adapt = 0;
            let cap = pt.capacity_pages(DEFAULT_TIER) as f64 * weight as f64;
            self.hot = hot_bin(&self.hist, (cap * (1.0 - self.params.watermark)) as u64);
        }
        if self.since_cool >= self.params.cool_every_samples {
            self.since_cool = 0;
            self.hist = [0; BINS];
            self.total_count = 0;
            for c in self.counts.iter_mut() {
                *c /= 2;
                self.hist[bin_of(*c)] += weight;
                self.total_count += *c as u64;
            }
        }
    }

    fn share(&self, page: u64) -> f64 {
        self.counts[page as usize] as f64 / self.total_count.max(1) as f64
    }

    /// Pages on `tier` with bin ≥ `min_bin`, hottest first.
    fn pages_on(&self, pt: &PageTable, tier: usize, min_bin: usize) -> Vec<u64> {
        let mut v: Vec<u64> = (0..pt.pages())
            .filter(|&p| pt.tier(p) == tier && bin_of(self.counts[p as usize]) >= min_bin)
            .collect();
        v.sort_by_key(|&p| (std::cmp::Reverse(self.counts[p as usize]), p));
        v
    }

    /// Default-tier pages below the hot bin, coldest first (victims for demotion).
    fn coldest_default(&self, pt: &PageTable) -> Vec<u64> {
        let mut v: Vec<u64> = (0..pt.pages())
            .filter(|&p| pt.tier(p) == DEFAULT_TIER && bin_of(self.counts[p as usize]) < self.hot)
            .collect();
        v.sort_by_key(|&p| (self.counts[p as usize], p));
        v
    }

    fn adapt_period(&mut self, interval_s: f64) {
        let cpu = self.interval_samples as f64 * SAMPLE_NS * 1e-9 / interval_s;
        if cpu > self.params.cpu_limit && self.period_idx + 1 < PERIOD_LADDER.len() {
            self.period_idx += 1;
        } else if cpu < self.params.cpu_limit / 2.0 && self.period_idx > 0 {
            self.period_idx -= 1;
        }
        self.interval_samples = 0;
    }
}

impl TieringPolicy for Memtis {
    fn name(&self) -> &'static str {
        if self.colloid.is_some() {
            "colloid-memtis"
        } else {
            "memtis"
        }
    }

    fn work(&self) -> PolicyWork {
        self.work
    }

    fn sample_period(&self) -> Option<u64> {
        Some(PERIOD_LADDER[self.period_idx])
    }

    fn quantum(&mut self, obs: &Observation) -> Vec<Migration> {
        let pt = obs.pages;
        if self.counts.is_empty() {
            self.counts = vec![0; pt.pages() as usize];
            self.hist[0] = pt.pages() * (pt.page_bytes / 4096).max(1);
        }
        let weight = (pt.page_bytes / 4096).max(1);
        for &p in obs.samples {
            self.record(p, weight, pt);
        }
        self.work.samples_processed += obs.samples.len() as u64;
        self.interval_samples += obs.samples.len() as u64;
        // Colloid's counters are read every quantum (EWMA), acted on every interval.
        if obs.time_s + 1e-9 < self.next_run_s {
            return Vec::new();
        }
        self.next_run_s = obs.time_s + self.params.interval_s;
        self.adapt_period(self.params.interval_s);
        let mut budget =
            (obs.migrate_budget_bytes as f64 / obs.quantum_s * self.params.interval_s) as u64;
        let step = self.colloid.as_mut().and_then(|c| c.step_obs(obs));
        if self.colloid.is_some() {
            budget = budget.min(self.params.colloid_max_bytes);
        }
        let pb = pt.page_bytes;
        let wm_pages = (pt.capacity_pages(DEFAULT_TIER) as f64 * self.params.watermark) as u64;
        self.work.pages_scanned += pt.pages();

        // Which alternate-tier pages to promote and default-tier hot pages to demote.
        let mut promote = Vec::new();
        let mut demote_hot = Vec::new();
        match step {
            None if self.colloid.is_some() => {}
            None => promote = self.pages_on(pt, 1, self.hot),
            Some((dp, dir, _)) => {
                let mut remaining = dp;
                let (tier, list) = match dir {
                    Direction::Balanced => (1, &mut promote),
                    Direction::ToDefault => (1, &mut promote),
                    Direction::ToAlternate => (DEFAULT_TIER, &mut demote_hot),
                };
                if dir != Direction::Balanced {
                    for p in self.pages_on(pt, tier, self.hot) {
                        let s = self.share(p);
                        if s <= remaining {
                            remaining -= s;
                            list.push(p);
                        }
                    }
                }
            }
        }
        let mut out = Vec::new();
        let mut alt_free = pt.free_pages(1);
        for p in demote_hot {
            if budget < pb || alt_free == 0 {
                break;
            }
            budget -= pb;
            alt_free -= 1;
            out.push(Migration { page: p, to: 1 });
        }
        // Room for the promotions plus the watermark, from the coldest default pages.
        let free = pt.free_pages(DEFAULT_TIER) + out.len() as u64;
        let want = (promote.len() as u64 + wm_pages).saturating_sub(free);
        let mut freed = 0u64;
        if want > 0 {
            for p in self.coldest_default(pt).into_iter().take(want as usize) {
                if budget < pb || alt_free == 0 {
                    break;
                }
                budget -= pb;
                alt_free -= 1;
                freed += 1;
                out.push(Migration { page: p, to: 1 });
            }
        }
        let mut room = (free + freed).saturating_sub(wm_pages);
        for p in promote {
            if budget < pb || room == 0 {
                break;
            }
            budget -= pb;
            room -= 1;
            out.push(Migration {
                page: p,
                to: DEFAULT_TIER,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_log2_and_the_threshold_fits_the_tier() {
        assert_eq!(
            [0, 1, 2, 3, 4, 7, 8, 1 << 20].map(bin_of),
            [0, 1, 2, 2, 3, 3, 4, 15]
        );
        let mut h = [0u64; BINS];
        h[1] = 100;
        h[3] = 40;
        h[5] = 20;
        // Capacity 70: bins ≥ 2 (60) fit, adding bin 1 (160) does not: hot = 2.
        assert_eq!(hot_bin(&h, 70), 2);
        assert_eq!(hot_bin(&h, 1000), 1);
        assert_eq!(hot_bin(&h, 10), 6);
    }
}
