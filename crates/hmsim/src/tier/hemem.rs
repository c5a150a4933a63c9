//! HeMem (SOSP'21) as in the Colloid artifact (`webglider/hemem`): PEBS load samples count
//! per page; a page is hot at 8 read samples; when any count exceeds 18 a global clock ticks
//! and every count is lazily halved; each quantum (the 10 ms migration thread) hot
//! alternate-tier pages move to free default-tier frames, or swap with cold default pages.

use crate::hash::FastMap;

use super::pages::PageTable;
use super::policy::{Migration, Observation, PolicyWork, TieringPolicy, DEFAULT_TIER};
use crate::config::Validator;

crate::params! {
    #[params(check)]
    /// HeMem's hot/cold classification (Raybuck et al., ACM SOSP 2021).
    #[derive(Debug, Clone, PartialEq)]
    pub struct HeMemParams {
        pub hot_threshold: u32 = 8 => range(1, 1_000_000), "samples",
            "A page is hot at this many read samples (HeMem: 8).";
        pub cooling_threshold: u32 = 18 => any, "samples",
            "When any page's count exceeds this, every count halves (HeMem: 18); hot_threshold to 1000000.";
    }
}

/// Sampled access counts with HeMem's lazy global cooling.
#[derive(Debug, Clone, Default)]
pub struct Heat {
    counts: FastMap<u64, (u32, u32)>,
    clock: u32,
    cooling_threshold: u32,
}

impl Heat {
    pub fn new(cooling_threshold: u32) -> Self {
        Heat {
            cooling_threshold,
            ..Default::default()
        }
    }

    fn cooled(&self, (count, clock): (u32, u32)) -> u32 {
        let shift = self.clock - clock;
        if shift >= 32 {
            0
        } else {
            count >> shift
        }
    }

    /// Record one sample on `page`.
    pub fn sample(&mut self, page: u64) {
        let now = self.clock;
        let e = self.counts.entry(page).or_insert((0, now));
        let shift = now - e.1;
        e.0 = if shift >= 32 { 0 } else { e.0 >> shift };
        e.1 = now;
        e.0 += 1;
        if e.0 > self.cooling_threshold {
            self.clock += 1;
        }
    }

    /// Current (cooled) count of `page`.
    pub fn count(&self, page: u64) -> u32 {
        self.counts.get(&page).map_or(0, |&e| self.cooled(e))
    }

    /// Pages with count ≥ `threshold` on `tier`, hottest first (ties by page number).
    pub fn hot_on(&self, pt: &PageTable, tier: usize, threshold: u32) -> Vec<(u64, u32)> {
        let mut v: Vec<(u64, u32)> = self
            .counts
            .iter()
            .map(|(&p, &e)| (p, self.cooled(e)))
            .filter(|&(p, c)| c >= threshold && pt.tier(p) == tier)
            .collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    /// [`hot_on`](Self::hot_on) for every tier from 1 on, only the first `limit` pages of
    /// each (the rest would not be reached), and then [`prune`](Self::prune), in one pass
    /// over the counts: the same pages in the same order (the order is total) and the same
    /// counts left.
    pub fn hot_off_default_and_prune(
        &mut self,
        pt: &PageTable,
        threshold: u32,
        limit: usize,
    ) -> Vec<Vec<(u64, u32)>> {
        let mut by_tier = vec![Vec::new(); pt.tiers()];
        let clock = self.clock;
        self.counts.retain(|&p, e| {
            let shift = clock - e.1;
            let c = if shift >= 32 { 0 } else { e.0 >> shift };
            if c >= threshold {
                let t = pt.tier(p);
                if t != DEFAULT_TIER {
                    by_tier[t].push((p, c));
                }
            }
            c > 0
        });
        let order = |a: &(u64, u32), b: &(u64, u32)| b.1.cmp(&a.1).then(a.0.cmp(&b.0));
        for v in &mut by_tier {
            if v.len() > limit {
                v.select_nth_unstable_by(limit, order);
                v.truncate(limit);
            }
            v.sort_unstable_by(order);
        }
        by_tier
    }

    /// Sum of cooled counts (the denominator of a page's estimated access share).
    pub fn total(&self) -> f64 {
        self.counts.values().map(|&e| self.cooled(e) as f64).sum()
    }

    /// Forget pages whose count cooled to zero (keeps the map small).
    pub fn prune(&mut self) {
        let clock = self.clock;
        self.counts
            .retain(|_, e| clock - e.1 < 32 && (e.0 >> (clock - e.1)) > 0);
    }
}

/// A clock hand over page numbers that finds cold pages on a tier.
#[derive(Debug, Clone, Default)]
pub struct ColdScan {
    hand: u64,
    /// Pages visited so far.
    pub scanned: u64,
}

impl ColdScan {
    /// Next page on `tier` with count below `threshold`, not in `taken`; scans each page at
    /// most once per call.
    pub fn next(
        &mut self,
        pt: &PageTable,
        heat: &Heat,
        tier: usize,
        threshold: u32,
        taken: &[u64],
    ) -> Option<u64> {
        let n = pt.pages();
        for _ in 0..n {
            self.scanned += 1;
            let p = self.hand % n;
            self.hand = (self.hand + 1) % n;
            if pt.tier(p) == tier && heat.count(p) < threshold && !taken.contains(&p) {
                return Some(p);
            }
        }
        None
    }
}

/// What HeMem and Colloid-on-HeMem share: page heat from the samples, the cold-page scan,
/// and the work they cost.
#[derive(Debug, Clone)]
pub struct HotTracker {
    pub heat: Heat,
    pub scan: ColdScan,
    pub samples: u64,
}

impl HotTracker {
    pub fn new(cooling_threshold: u32) -> Self {
        HotTracker {
            heat: Heat::new(cooling_threshold),
            scan: ColdScan::default(),
            samples: 0,
        }
    }

    /// Count this quantum's samples.
    pub fn observe(&mut self, obs: &Observation) {
        self.samples += obs.samples.len() as u64;
        for &p in obs.samples {
            self.heat.sample(p);
        }
    }

    pub fn work(&self) -> PolicyWork {
        PolicyWork {
            samples_processed: self.samples,
            pages_scanned: self.scan.scanned,
            ..Default::default()
        }
    }
}

pub struct HeMem {
    pub params: HeMemParams,
    tracker: HotTracker,
}

impl HeMem {
    pub fn new(params: HeMemParams) -> Self {
        HeMem {
            tracker: HotTracker::new(params.cooling_threshold),
            params,
        }
    }
}

impl TieringPolicy for HeMem {
    fn copy_engine(&self) -> super::copy::CopyEngine {
        super::copy::CopyEngine::hemem_dma()
    }
    fn name(&self) -> &'static str {
        "hemem"
    }

    fn work(&self) -> PolicyWork {
        self.tracker.work()
    }

    fn quantum(&mut self, obs: &Observation) -> Vec<Migration> {
        self.tracker.observe(obs);
        let pt = obs.pages;
        let th = self.params.hot_threshold;
        let mut budget = obs.migrate_budget_bytes;
        let mut free = pt.free_pages(DEFAULT_TIER);
        let mut out = Vec::new();
        let mut demoted = Vec::new();
        // Each page taken uses at least a page of budget, so no more than this many of a
        // tier's hot pages are reached. Pruning here (not after the loop) changes nothing:
        // a page whose count cooled to zero counts as zero whether it is kept or not.
        let limit = (budget / pt.page_bytes).saturating_add(1) as usize;
        let hot = self.tracker.heat.hot_off_default_and_prune(pt, th, limit);
        for (t, hot_on_t) in hot.into_iter().enumerate().skip(1) {
            for (page, _) in hot_on_t {
                if free > 0 {
                    if budget < pt.page_bytes {
                        break;
                    }
                    budget -= pt.page_bytes;
                    free -= 1;
                    out.push(Migration {
                        page,
                        to: DEFAULT_TIER,
                    });
                } else {
                    if budget < 2 * pt.page_bytes {
                        break;
                    }
                    let Some(cold) =
                        self.tracker
                            .scan
                            .next(pt, &self.tracker.heat, DEFAULT_TIER, th, &demoted)
                    else {
                        break;
                    };
                    budget -= 2 * pt.page_bytes;
                    demoted.push(cold);
                    out.push(Migration { page: cold, to: t });
                    out.push(Migration {
                        page,
                        to: DEFAULT_TIER,
                    });
                }
            }
        }
        out
    }
}

impl HeMemParams {
    fn check(&self, v: &mut Validator) {
        v.range(
            "cooling_threshold",
            self.cooling_threshold,
            self.hot_threshold,
            1_000_000,
            "samples",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn one_pass_hot_lists_equal_hot_on_then_prune() {
        let pt = PageTable::first_touch(4000, 4096, &[2000 * 4096, 4000 * 4096]).unwrap();
        let mut rng = crate::rng::stream(5, "t");
        let mut heat = Heat::new(18);
        let sorted = |h: &Heat| {
            let mut v: Vec<(u64, (u32, u32))> = h.counts.iter().map(|(&p, &e)| (p, e)).collect();
            v.sort_unstable();
            v
        };
        for _ in 0..200 {
            for _ in 0..500 {
                // Skewed: low pages far hotter, so counts cool and some reach zero.
                let p = rng
                    .random_range(0..4000u64)
                    .min(rng.random_range(0..4000u64));
                heat.sample(p);
            }
            let hot = heat.hot_on(&pt, 1, 8);
            let mut pruned = heat.clone();
            pruned.prune();
            for limit in [0usize, 3, 100, 10_000] {
                let mut h = heat.clone();
                let got = h.hot_off_default_and_prune(&pt, 8, limit);
                assert!(got[0].is_empty());
                assert_eq!(got[1], hot[..limit.min(hot.len())]);
                assert_eq!(sorted(&h), sorted(&pruned));
            }
            heat.prune();
        }
    }
}
