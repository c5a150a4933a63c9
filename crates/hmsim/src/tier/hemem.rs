//! HeMem (SOSP'21) as in the Colloid artifact (`webglider/hemem`): PEBS load samples count
//! per page; a page is hot at 8 read samples; when any count exceeds 18 a global clock ticks
//! and every count is lazily halved; each quantum (the 10 ms migration thread) hot
//! alternate-tier pages move to free default-tier frames, or swap with cold default pages.

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
///
/// Each page's (count, clock at its last sample) sits in a table by page id, and a bit per
/// page says which have an entry: a quantum's passes (the hot pages, the total, forgetting
/// pages cooled to zero) go through the set bits and the table in page order, where a hash
/// map's iteration read its buckets in hash order. Nothing depends on the order: the hot
/// lists are sorted by a total order and the total sums whole numbers.
#[derive(Debug, Clone, Default)]
pub struct Heat {
    table: Vec<(u32, u32)>,
    /// One bit per page of `table`: set while the page has an entry.
    listed: Vec<u64>,
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
        let i = page as usize;
        if i >= self.table.len() {
            self.table.resize(i + 1, (0, 0));
            self.listed.resize(self.table.len().div_ceil(64), 0);
        }
        let bit = 1u64 << (i % 64);
        if self.listed[i / 64] & bit == 0 {
            // A new entry starts at zero now, as a map's insert of (0, now) did.
            self.listed[i / 64] |= bit;
            self.table[i] = (0, now);
        }
        let e = &mut self.table[i];
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
        self.table.get(page as usize).map_or(0, |&e| self.cooled(e))
    }

    /// Pages with an entry, in page order.
    fn pages(&self) -> impl Iterator<Item = u64> + '_ {
        self.listed.iter().enumerate().flat_map(|(w, &bits)| {
            let base = w as u64 * 64;
            std::iter::successors((bits != 0).then_some(bits), |&b| {
                let rest = b & (b - 1);
                (rest != 0).then_some(rest)
            })
            .map(move |b| base + u64::from(b.trailing_zeros()))
        })
    }

    /// Pages with an entry and their cooled counts.
    fn entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.pages()
            .map(|p| (p, self.cooled(self.table[p as usize])))
    }

    /// Pages with count ≥ `threshold` on `tier`, hottest first (ties by page number).
    pub fn hot_on(&self, pt: &PageTable, tier: usize, threshold: u32) -> Vec<(u64, u32)> {
        let mut v: Vec<(u64, u32)> = self
            .entries()
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
        self.retain_live(|p, c| {
            if c >= threshold {
                let t = pt.tier(p);
                if t != DEFAULT_TIER {
                    by_tier[t].push((p, c));
                }
            }
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

    /// Sum of cooled counts (the denominator of a page's estimated access share). Summed as
    /// integers: an f64 sum of whole numbers below 2^53 is exact, so the same number, and
    /// integer adds do not wait on one another's rounding.
    pub fn total(&self) -> f64 {
        self.entries().map(|(_, c)| u64::from(c)).sum::<u64>() as f64
    }

    /// [`total`](Self::total), [`hot_on`](Self::hot_on) `tier` (none: an empty list) and
    /// then [`prune`](Self::prune), in one pass over the counts: the same total, pages and
    /// counts left.
    pub fn total_hot_on_and_prune(
        &mut self,
        pt: &PageTable,
        tier: Option<usize>,
        threshold: u32,
    ) -> (f64, Vec<(u64, u32)>) {
        let (mut total, mut hot) = (0u64, Vec::new());
        self.retain_live(|p, c| {
            total += u64::from(c);
            if c >= threshold && Some(pt.tier(p)) == tier {
                hot.push((p, c));
            }
        });
        hot.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        (total as f64, hot)
    }

    /// Forget pages whose count cooled to zero (keeps the passes short).
    pub fn prune(&mut self) {
        self.retain_live(|_, _| {});
    }

    /// `visit` each page with an entry and its cooled count, then forget those at zero.
    fn retain_live(&mut self, mut visit: impl FnMut(u64, u32)) {
        let clock = self.clock;
        for (w, word) in self.listed.iter_mut().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                let p = w * 64 + b as usize;
                let (count, at) = self.table[p];
                let shift = clock - at;
                let c = if shift >= 32 { 0 } else { count >> shift };
                visit(p as u64, c);
                if c == 0 {
                    *word &= !(1u64 << b);
                }
            }
        }
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
    use std::collections::HashMap;

    /// HeMem's counts as a map of the pages sampled, cooled lazily by the global clock:
    /// the table must answer as it does.
    #[derive(Default)]
    struct MapHeat {
        counts: HashMap<u64, (u32, u32)>,
        clock: u32,
    }

    impl MapHeat {
        fn cooled(&self, (c, at): (u32, u32)) -> u32 {
            let shift = self.clock - at;
            if shift >= 32 {
                0
            } else {
                c >> shift
            }
        }
        fn sample(&mut self, page: u64, cooling_threshold: u32) {
            let now = self.clock;
            let e = self.counts.entry(page).or_insert((0, now));
            e.0 = if now - e.1 >= 32 {
                0
            } else {
                e.0 >> (now - e.1)
            } + 1;
            e.1 = now;
            if e.0 > cooling_threshold {
                self.clock += 1;
            }
        }
        fn prune(&mut self) {
            let clock = self.clock;
            self.counts
                .retain(|_, e| clock - e.1 < 32 && (e.0 >> (clock - e.1)) > 0);
        }
    }

    /// A page below `n`, low pages far hotter: counts cool and some reach zero.
    fn skewed(rng: &mut crate::rng::SimRng, n: u64) -> u64 {
        rng.random_range(0..n).min(rng.random_range(0..n))
    }

    #[test]
    fn the_table_answers_as_a_map_of_sampled_pages() {
        let pt = PageTable::first_touch(3000, 4096, &[1500 * 4096, 3000 * 4096]).unwrap();
        let mut rng = crate::rng::stream(9, "t");
        let (mut heat, mut map) = (Heat::new(18), MapHeat::default());
        for round in 0..150 {
            for _ in 0..400 {
                let p = skewed(&mut rng, 3000);
                heat.sample(p);
                map.sample(p, 18);
            }
            let live: Vec<u64> = heat.pages().collect();
            let mut want: Vec<u64> = map.counts.keys().copied().collect();
            want.sort_unstable();
            assert_eq!(live, want, "round {round}: the pages with an entry");
            for p in 0..3100 {
                let c = map.counts.get(&p).map_or(0, |&e| map.cooled(e));
                assert_eq!(heat.count(p), c, "round {round}, page {p}");
            }
            let total: u64 = map.counts.values().map(|&e| u64::from(map.cooled(e))).sum();
            assert_eq!(heat.total(), total as f64);
            let mut hot: Vec<(u64, u32)> = map
                .counts
                .iter()
                .map(|(&p, &e)| (p, map.cooled(e)))
                .filter(|&(p, c)| c >= 8 && pt.tier(p) == 1)
                .collect();
            hot.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            assert_eq!(heat.hot_on(&pt, 1, 8), hot);
            if round % 3 == 0 {
                heat.prune();
                map.prune();
            }
        }
        assert!(
            map.clock >= 3,
            "the counts must have cooled ({} ticks)",
            map.clock
        );
    }

    #[test]
    fn one_pass_hot_lists_equal_hot_on_then_prune() {
        let pt = PageTable::first_touch(4000, 4096, &[2000 * 4096, 4000 * 4096]).unwrap();
        let mut rng = crate::rng::stream(5, "t");
        let mut heat = Heat::new(18);
        let sorted = |h: &Heat| {
            let mut v: Vec<(u64, (u32, u32))> =
                h.pages().map(|p| (p, h.table[p as usize])).collect();
            v.sort_unstable();
            v
        };
        for _ in 0..200 {
            for _ in 0..500 {
                heat.sample(skewed(&mut rng, 4000));
            }
            let hot = heat.hot_on(&pt, 1, 8);
            let mut pruned = heat.clone();
            pruned.prune();
            for tier in [None, Some(0), Some(1)] {
                let mut h = heat.clone();
                let (total, got) = h.total_hot_on_and_prune(&pt, tier, 8);
                assert_eq!(total, heat.total());
                assert_eq!(got, tier.map_or(Vec::new(), |t| heat.hot_on(&pt, t, 8)));
                assert_eq!(sorted(&h), sorted(&pruned));
            }
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
