//! HeMem (SOSP'21) as in the Colloid artifact (`webglider/hemem`): PEBS load samples count
//! per page; a page is hot at 8 read samples; when any count exceeds 18 a global clock ticks
//! and every count is lazily halved; each quantum (the 10 ms migration thread) hot
//! alternate-tier pages move to free default-tier frames, or swap with cold default pages.

use super::pages::PageTable;
use super::policy::{HeMemQuanta, Migration, Observation, PolicyWork, TieringPolicy, DEFAULT_TIER};
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
/// page says which have an entry. A quantum reads neither in full: the pages at the hot
/// threshold are kept in a list (only a sample raises a count, so a sample adds a page; a
/// quantum drops those that cooled below), and the total of the counts is kept as pages per
/// count (a sample moves one page up; a tick of the clock halves the counts, folding the
/// table of pages per count). Nothing depends on the list's order: the hot lists are sorted
/// by a total order, and the total is a sum of whole numbers.
#[derive(Debug, Clone, Default)]
pub struct Heat {
    table: Vec<(u32, u32)>,
    /// One bit per page of `table`: set while the page has an entry.
    listed: Vec<u64>,
    clock: u32,
    cooling_threshold: u32,
    /// The threshold `hot` is kept for (0: none yet): the pages whose count reached it,
    /// found by [`hot_off_default`](Self::hot_off_default) once and then by `sample`, since
    /// only a sample raises a count. HeMem's quantum then reads the hot pages, not every
    /// page with an entry (36,864 at 2 MiB over 72 GiB, every 10 ms).
    hot_at: u32,
    /// Pages whose count was at least `hot_at` when they entered (some have cooled since:
    /// the next quantum drops them), each once.
    hot: Vec<u64>,
    /// One bit per page of `table`: set while the page is in `hot`.
    in_hot: Vec<u64>,
    /// Pages per cooled count from 1 on (index: the count): a sample moves its page up one,
    /// a clock tick halves every count, so `with_count[c]` gathers the old `2c` and `2c + 1`.
    with_count: Vec<u64>,
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
            if self.hot_at > 0 {
                self.in_hot.resize(self.listed.len(), 0);
            }
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
        // The page's count moves from c - 1 (0: not counted) to c.
        let c = e.0 as usize;
        if self.with_count.len() <= c {
            self.with_count.resize(c + 1, 0);
        }
        if c > 1 {
            self.with_count[c - 1] -= 1;
        }
        self.with_count[c] += 1;
        if self.hot_at > 0 && e.0 >= self.hot_at && self.in_hot[i / 64] & bit == 0 {
            self.in_hot[i / 64] |= bit;
            self.hot.push(page);
        }
        if e.0 > self.cooling_threshold {
            self.clock += 1;
            // Every count halves: ascending, each count reads two above it, not yet halved.
            let n = &mut self.with_count;
            for c in 1..n.len() {
                n[c] = n.get(2 * c).copied().unwrap_or(0) + n.get(2 * c + 1).copied().unwrap_or(0);
            }
        }
    }

    /// Current (cooled) count of `page`.
    pub fn count(&self, page: u64) -> u32 {
        self.table.get(page as usize).map_or(0, |&e| self.cooled(e))
    }

    /// Pages with an entry, in page order (this and the next three: the pass over every
    /// count that the kept hot list and total are tested against).
    #[cfg(test)]
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
    #[cfg(test)]
    fn entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.pages()
            .map(|p| (p, self.cooled(self.table[p as usize])))
    }

    /// Pages with count ≥ `threshold` on `tier`, hottest first (ties by page number).
    #[cfg(test)]
    pub fn hot_on(&self, pt: &PageTable, tier: usize, threshold: u32) -> Vec<(u64, u32)> {
        let mut v: Vec<(u64, u32)> = self
            .entries()
            .filter(|&(p, c)| c >= threshold && pt.tier(p) == tier)
            .collect();
        v.sort_unstable_by(hotter_first);
        v
    }

    /// [`hot_on`](Self::hot_on) for every tier from 1 on, only the first `limit` pages of
    /// each (the rest would not be reached): the same pages in the same order (the order is
    /// total). Reads the pages that reached `threshold` (the first call, or one with a new
    /// threshold, finds them in a pass over every entry, which also [prunes](Self::prune)),
    /// and forgets those that cooled below it.
    pub fn hot_off_default(
        &mut self,
        pt: &PageTable,
        threshold: u32,
        limit: usize,
    ) -> Vec<Vec<(u64, u32)>> {
        let mut by_tier = vec![Vec::new(); pt.tiers()];
        self.for_each_hot(threshold, |p, c| {
            let t = pt.tier(p);
            if t != DEFAULT_TIER {
                by_tier[t].push((p, c));
            }
        });
        for v in &mut by_tier {
            if v.len() > limit {
                v.select_nth_unstable_by(limit, hotter_first);
                v.truncate(limit);
            }
            v.sort_unstable_by(hotter_first);
        }
        by_tier
    }

    /// `visit` each page whose count is at least `threshold`, with its count, in no
    /// particular order; pages in `hot` that cooled below it leave.
    fn for_each_hot(&mut self, threshold: u32, mut visit: impl FnMut(u64, u32)) {
        if self.hot_at != threshold || threshold == 0 {
            self.hot_at = threshold;
            self.hot.clear();
            self.in_hot.clear();
            self.in_hot.resize(self.listed.len(), 0);
            let (mut hot, mut in_hot) = (Vec::new(), std::mem::take(&mut self.in_hot));
            self.retain_live(|p, c| {
                if c >= threshold {
                    hot.push(p);
                    in_hot[p as usize / 64] |= 1 << (p % 64);
                }
            });
            (self.hot, self.in_hot) = (hot, in_hot);
        }
        let mut i = 0;
        while i < self.hot.len() {
            let p = self.hot[i];
            let c = self.cooled(self.table[p as usize]);
            if c < threshold {
                self.in_hot[p as usize / 64] &= !(1 << (p % 64));
                self.hot.swap_remove(i);
                continue;
            }
            visit(p, c);
            i += 1;
        }
    }

    /// Sum of cooled counts (the denominator of a page's estimated access share), from the
    /// pages per count: summed as integers, the same number as an f64 sum of the counts
    /// (whole numbers below 2^53 add exactly).
    pub fn total(&self) -> f64 {
        let sum: u64 = (self.with_count.iter().enumerate())
            .map(|(c, &n)| c as u64 * n)
            .sum();
        sum as f64
    }

    /// [`total`](Self::total) and [`hot_on`](Self::hot_on) `tier` (none: an empty list),
    /// from the pages per count and the pages at the threshold, not a pass over every count.
    pub fn total_and_hot_on(
        &mut self,
        pt: &PageTable,
        tier: Option<usize>,
        threshold: u32,
    ) -> (f64, Vec<(u64, u32)>) {
        let mut hot = Vec::new();
        if let Some(tier) = tier {
            self.for_each_hot(threshold, |p, c| {
                if pt.tier(p) == tier {
                    hot.push((p, c));
                }
            });
        }
        hot.sort_unstable_by(hotter_first);
        (self.total(), hot)
    }

    /// Forget pages whose count cooled to zero.
    #[cfg(test)]
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

/// The hot lists' order, total: higher count first, then lower page number.
fn hotter_first(a: &(u64, u32), b: &(u64, u32)) -> std::cmp::Ordering {
    b.1.cmp(&a.1).then(a.0.cmp(&b.0))
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
    quanta: HeMemQuanta,
}

impl HeMem {
    pub fn new(params: HeMemParams) -> Self {
        HeMem {
            tracker: HotTracker::new(params.cooling_threshold),
            params,
            quanta: HeMemQuanta::default(),
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
        PolicyWork {
            hemem: self.quanta,
            ..self.tracker.work()
        }
    }

    fn quantum(&mut self, obs: &Observation) -> Vec<Migration> {
        self.tracker.observe(obs);
        self.quanta.quanta += 1;
        let pt = obs.pages;
        let th = self.params.hot_threshold;
        let mut budget = obs.migrate_budget_bytes;
        let mut free = pt.free_pages(DEFAULT_TIER);
        let mut out = Vec::new();
        let mut demoted = Vec::new();
        // Each page taken uses at least a page of budget, so no more than this many of a
        // tier's hot pages are reached.
        let limit = (budget / pt.page_bytes).saturating_add(1) as usize;
        let hot = self.tracker.heat.hot_off_default(pt, th, limit);
        if hot.iter().all(Vec::is_empty) {
            self.quanta.none_hot += 1;
        }
        // Hot pages found the default tier full and nothing in it to demote.
        let mut no_cold = false;
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
                        no_cold = true;
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
        if no_cold && out.is_empty() {
            self.quanta.none_cold += 1;
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

    /// The hot pages kept from quantum to quantum (found once, then by the samples) and the
    /// total kept as pages per count are what a pass over every count finds, through
    /// cooling, pruning and a new threshold.
    #[test]
    fn kept_hot_lists_and_total_equal_a_pass_over_the_counts() {
        let pt = PageTable::first_touch(4000, 4096, &[2000 * 4096, 4000 * 4096]).unwrap();
        let mut rng = crate::rng::stream(6, "t");
        let mut heat = Heat::new(18);
        for round in 0..300 {
            for _ in 0..[500, 50, 3000][round % 3] {
                heat.sample(skewed(&mut rng, 4000));
            }
            let th = if round < 150 { 8 } else { 5 };
            for limit in [0usize, 3, 100, 10_000] {
                let want = heat.hot_on(&pt, 1, th);
                let got = heat.hot_off_default(&pt, th, limit);
                assert!(got[0].is_empty());
                assert_eq!(got[1], want[..limit.min(want.len())], "round {round}");
            }
            // Colloid's form: the total from the pages per count, as a pass sums it.
            let sum: u64 = heat.entries().map(|(_, c)| u64::from(c)).sum();
            for tier in [None, Some(0), Some(1)] {
                let want = tier.map_or(Vec::new(), |t| heat.hot_on(&pt, t, th));
                assert_eq!(heat.total_and_hot_on(&pt, tier, th), (sum as f64, want));
            }
            // Each page listed once, every listed one still at the threshold.
            let mut hot = heat.hot.clone();
            hot.sort_unstable();
            hot.dedup();
            assert_eq!(hot.len(), heat.hot.len());
            assert!(hot.iter().all(|&p| heat.count(p) >= th));
            if round % 7 == 0 {
                heat.prune();
            }
        }
    }
}
