//! MEMTIS (Lee et al., ACM SOSP 2023), optionally with Colloid (Vuppalapati & Agarwal, ACM SOSP
//! 2024). PEBS samples count per page; pages sit in a 16-bin log2 histogram of their counts,
//! weighted by size (a 2 MiB page counts as 512 base pages). Every 100,000 samples the hot
//! threshold becomes the lowest bin whose pages (with all hotter bins) fit in the default tier less
//! a 3 % watermark; warm = hot − 1. Every 2,000,000 samples all counts halve. Every 500 ms the
//! migration threads promote hot alternate-tier pages and demote the coldest default-tier pages to
//! make room (keeping the watermark free). The sampling period adapts over a ladder from 199 to
//! 19997 to keep the sampling CPU at or below 3 % of one core.
//!
//! Huge-page splitting (`split`, on by default as in the artifact's run scripts), after
//! the MEMTIS artifact (`mm/htmm_core.c`): PEBS gives each sample's address, so samples on a
//! huge page also count per 4 KiB sub-page (a sub-page sample weighs 512, as a base page's).
//! At every cooling each sampled huge page gets a skewness factor Σ c_i² / 11 / u² over its
//! sub-page counts c_i (u = sub-pages hot by the estimated base-page histogram; 0 when u = 0
//! or the page is very hot, bin ≥ 13), bucketed into 21 skew bins. The estimated hit ratio
//! eHR (samples to sub-pages that were hot by the base-page estimate) is set against the real
//! one rHR (samples in the default tier); once samples since the last decision exceed
//! max(working set ÷ 4, default tier) in 4 KiB units, the next threshold update sets the
//! number of base pages to split N = (0.95·eHR − rHR) / records × Σutil / avg util × (L_A −
//! L_D)/L_D × 512 × γ, and the skew bin threshold so that the most skewed pages cover N.
//! A sampled huge page at or above it is queued; every interval up to 50 queued pages per
//! tier split. Its base pages keep their counts and are promoted/demoted like any page.
//! If a decision follows a split and rHR did not improve by 3 %, splitting stops for good.
//!
//! With Colloid (500 ms quantum, M = 5 GiB): when L_D > L_A, hot pages of the default tier
//! are demoted first-fit with p_k ≤ remaining Δp (p_k = count_k / Σ counts); when
//! L_D < L_A, hot alternate-tier pages are promoted the same way.

use super::colloid::{Colloid, ColloidParams, Direction};
use super::cost::SAMPLE_NS;
pub use super::memtis_bins::bin_of;
use super::memtis_bins::{move_weight, BINS};
use super::memtis_cool::cool as cool_counts;
use super::memtis_order::{by_level, ByLevel};
use super::memtis_split::{skew_of, Skew, MIN_RHR_GAIN, NO_SLOT, SKEW_BINS};
use super::pages::PageTable;
use super::policy::{Migration, Observation, PolicyWork, TieringPolicy, DEFAULT_TIER, SPLIT_PAGE};

/// MEMTIS's sampling periods, from the finest to the coarsest (MEMTIS: 199 … 19997).
pub const PERIOD_LADDER: [u64; 12] = [
    199, 293, 401, 577, 797, 1009, 1999, 3001, 5003, 7001, 10007, 19997,
];

crate::params! {
    /// MEMTIS (Lee et al., ACM SOSP 2023), with its artifact's defaults.
    #[derive(Debug, Clone, PartialEq)]
    pub struct MemtisParams {
        pub adapt_every_samples: u64 = 100_000 => range(1, 1 << 40), "samples",
            "Samples between adaptations of the hot threshold.";
        pub cool_every_samples: u64 = 2_000_000 => range(1, 1 << 40), "samples",
            "Samples between coolings (every count halves).";
        pub watermark: f64 = 0.03 => range(0.0, 0.5), "",
            "Share of the default tier kept free (and left out of the hot threshold).";
        pub interval_s: f64 = 0.5 => range(1e-3, 100.0), "",
            "Period of the migration thread (kmigraterd).";
        pub cpu_limit: f64 = 0.03 => range(1e-4, 1.0), "cores",
            "Sampling CPU ceiling, share of one core.";
        pub colloid_max_bytes: u64 = 5 << 30 => range(1, 1 << 44), "",
            "Colloid's M for MEMTIS: bytes moved at most per interval (5 GiB per 500 ms).";
        pub split: bool = true => any, "",
            "Split skewed huge pages (artifact `htmm_thres_split`, 1 in its run scripts).";
        pub split_gamma: f64 = 0.4 => range(0.0, 100.0), "",
            "γ, the scale-down of the split target (artifact `htmm_gamma` = 4 tenths).";
        pub split_period_shift: u32 = 2 => range(0, 40), "",
            "A split decision waits for more samples than the working set (4 KiB units) shifted right by this, and than the default tier (artifact `htmm_split_period` = 2).";
        pub split_max_per_interval: u64 = 50 => range(0, 1 << 30), "huge pages",
            "Huge pages split per interval on each tier (artifact: 50 per kmigraterd pass).";
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
    /// Sub-page counts and split state, when the page table is splittable and `split` is on.
    skew: Option<Box<Skew>>,
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
            skew: None,
        }
    }

    /// Huge pages split so far (asked for; the engine splits them in order).
    pub fn huge_pages_split(&self) -> u64 {
        self.skew.as_ref().map_or(0, |k| k.split_pages.len() as u64)
    }

    fn record(&mut self, page: u64, weight: u64, pt: &PageTable) {
        self.count(page, weight);
        self.tick(pt);
    }

    /// A sample's count and histogram update, without the bookkeeping of [`tick`](Self::tick).
    #[inline(always)]
    fn count(&mut self, page: u64, weight: u64) {
        let c = &mut self.counts[page as usize];
        let old = bin_of(*c);
        *c = c.saturating_add(1);
        let new = bin_of(*c);
        move_weight(&mut self.hist, old, new, weight);
    }

    /// Samples until the next one [`tick`](Self::tick) acts on (at least 1).
    fn samples_to_event(&self) -> u64 {
        let left = |every: u64, since: u64| every.saturating_sub(since);
        left(self.params.adapt_every_samples, self.since_adapt)
            .min(left(self.params.cool_every_samples, self.since_cool))
            .max(1)
    }

    /// [`record`](Self::record) of each of `samples` on a page of `pt`, the samples'
    /// bookkeeping added once per run up to the next sample it acts on (the same events at the
    /// same samples: the counters it tests stay in registers between them).
    fn record_all(&mut self, samples: &[u64], weight: u64, pt: &PageTable) {
        let pages = pt.pages();
        let mut left = self.samples_to_event();
        let mut run = 0;
        for &p in samples {
            if p >= pages {
                continue;
            }
            self.count(p, weight);
            run += 1;
            if run == left {
                self.add_samples(run);
                self.tick_events(pt);
                run = 0;
                left = self.samples_to_event();
            }
        }
        self.add_samples(run);
    }

    #[inline(always)]
    fn add_samples(&mut self, n: u64) {
        self.total_count += n;
        self.since_adapt += n;
        self.since_cool += n;
    }

    /// Sample bookkeeping after a recorded sample: threshold adaptation and cooling. The
    /// counting is inlined into the per-sample loops; the rare events are not.
    #[inline(always)]
    fn tick(&mut self, pt: &PageTable) {
        self.add_samples(1);
        if self.since_adapt >= self.params.adapt_every_samples
            || self.since_cool >= self.params.cool_every_samples
        {
            self.tick_events(pt);
        }
    }

    /// The threshold adaptation and cooling that [`tick`](Self::tick)'s counts call for.
    #[inline(never)]
    fn tick_events(&mut self, pt: &PageTable) {
        if self.since_adapt >= self.params.adapt_every_samples {
            self.since_adapt = 0;
            let weight = (pt.page_bytes / 4096).max(1);
            let cap = pt.capacity_pages(DEFAULT_TIER) as f64 * weight as f64;
            let cap = (cap * (1.0 - self.params.watermark)) as u64;
            self.hot = hot_bin(&self.hist, cap);
            if let Some(k) = self.skew.as_mut() {
                k.bp_hot = hot_bin(&k.ebp, cap);
                if k.cooled {
                    k.cooled = false;
                    if k.need_split {
                        k.set_nr_split(self.params.cool_every_samples, self.params.split_gamma);
                        k.set_threshold();
                        k.sampled_for_split = 0;
                        k.need_split = false;
                    }
                }
            }
        }
        if self.since_cool >= self.params.cool_every_samples {
            self.since_cool = 0;
            self.cool(pt);
        }
    }

    fn cool(&mut self, pt: &PageTable) {
        let weight = (pt.page_bytes / 4096).max(1);
        self.hist = [0; BINS];
        self.total_count = 0;
        let Some(k) = self.skew.as_mut() else {
            for c in self.counts.iter_mut() {
                *c /= 2;
                self.hist[bin_of(*c)] += weight;
                self.total_count += *c as u64;
            }
            return;
        };
        // Skewness from the counts before they halve (artifact `check_transhuge_cooling`).
        k.access_map = [0; SKEW_BINS];
        k.sum_util = 0;
        k.num_util = 0;
        k.ebp = [0; BINS];
        let upp = k.upp as usize;
        // The lowest count whose weighted bin is hot by the base-page estimate (at least 1:
        // the hot bin is never bin 0, so a count of 0 is never hot).
        let hot_min = (0..256)
            .find(|&c| k.bin_tab[c] as usize >= k.bp_hot)
            .unwrap_or(256);
        let (mut hist, mut ebp, mut total) = ([0u64; BINS], [0u64; BINS], 0u64);
        let steps = k.bin_steps;
        for (h, c) in self.counts.iter_mut().enumerate() {
            let s = k.slot[h];
            if s == NO_SLOT {
                *c /= 2;
                hist[bin_of(*c)] += weight;
                total += *c as u64;
                ebp[0] += k.upp;
                continue;
            }
            let s = s as usize;
            let split = k.state[s] == 2;
            // Skewness inputs from the counts before they halve, then halve.
            let r = cool_counts(&mut k.sub[s * upp..(s + 1) * upp], hot_min, &steps);
            r.per_bin(&steps, |b, n| {
                ebp[b] += n;
                if split {
                    hist[b] += n;
                }
            });
            if !split {
                let sk = skew_of(r.sum_sq, r.hot, k.upp, bin_of(*c));
                k.skew[s] = sk as u8;
                k.access_map[sk] += 1;
                if r.hot_refs > 0 {
                    k.sum_util += r.hot_refs;
                    k.num_util += 1;
                }
                *c /= 2;
                hist[bin_of(*c)] += weight;
                total += *c as u64;
            } else {
                total += r.halved_sum;
            }
        }
        self.hist = hist;
        k.ebp = ebp;
        self.total_count = total;
        k.cooling_clock += 1;
        let rhr_before = k.prev_dram;
        k.prev_dram = k.prev_dram / 2 + k.dram_sampled;
        k.dram_sampled = 0;
        k.prev_max = k.prev_max / 2 + k.max_dram_sampled;
        k.max_dram_sampled = 0;
        k.cooled = true;
        if k.disabled || k.need_split {
            return;
        }
        let usage = (pt.pages() * k.upp) >> self.params.split_period_shift;
        let usage = usage.max(pt.capacity_units(DEFAULT_TIER));
        if k.sampled_for_split > usage {
            if k.split_happened && (k.prev_dram as f64) < rhr_before as f64 * MIN_RHR_GAIN {
                k.disabled = true;
                return;
            }
            k.split_happened = false;
            k.need_split = true;
        } else {
            k.nr_split += k.nr_split_tail;
            k.nr_split_tail = 0;
            k.set_threshold();
        }
    }

    /// One sample on page `p` (a huge page with sub-page `sub`, or a base page).
    fn record_split(&mut self, p: u64, sub: u16, pt: &PageTable) {
        let n = pt.pages();
        let k = self.skew.as_mut().expect("split state");
        k.sampled_for_split += 1;
        if pt.tier(p) == DEFAULT_TIER {
            k.dram_sampled += 1;
        }
        // A huge page asked to split but not split yet counts as its base pages.
        let slot = (p < n).then(|| k.slot_of(p));
        if let Some(s) = slot.filter(|&s| k.state[s] != 2) {
            k.bump_slot(s, sub as u64);
            let weight = k.upp;
            if k.state[s] == 0 {
                k.check_split(p, s);
            }
            self.record(p, weight, pt);
        } else if let Some((h, i)) = pt.parent_of(p).or((p < n).then_some((p, sub as u64))) {
            let (old, new) = k.bump(h, i);
            move_weight(&mut self.hist, old, new, 1);
            self.tick(pt);
        }
    }

    fn sub_count(&self, pt: &PageTable, id: u64) -> u8 {
        let (Some(k), Some((h, i))) = (self.skew.as_ref(), pt.parent_of(id)) else {
            return 0;
        };
        match k.slot[h as usize] {
            NO_SLOT => 0,
            s => k.sub[s as usize * k.upp as usize + i as usize],
        }
    }

    fn share(&self, pt: &PageTable, page: u64) -> f64 {
        let raw = if page < pt.pages() {
            self.counts[page as usize] as f64
        } else {
            self.sub_count(pt, page) as f64
        };
        raw / self.total_count.max(1) as f64
    }

    /// `(level, id)` of every movable page id on `tier` whose bin passes `keep`, in id
    /// order within whole pages, then the base pages of split ones in split order. Walks
    /// the counts and the tier bytes directly: a base page's tier and count come from its
    /// huge page's slot without the divisions an id lookup pays (with split pages these
    /// scans, two a MEMTIS interval, were a fifth of a 2 MiB run's host instructions).
    fn levels_on(
        &self,
        pt: &PageTable,
        tier: usize,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<(u64, u64)> {
        let skew = self.skew.as_deref();
        let mut v = Vec::new();
        for (p, &c) in self.counts.iter().enumerate() {
            let p = p as u64;
            // A page being split (state 2) has moved into its base pages.
            if pt.tier(p) == tier && keep(bin_of(c)) && skew.is_none_or(|k| k.split_state(p) != 2) {
                v.push((u64::from(c), p));
            }
        }
        let Some(k) = skew else {
            return v;
        };
        let upp = k.upp;
        for &h in &k.split_pages {
            let s = k.slot[h as usize];
            for i in 0..upp {
                let level = match s {
                    NO_SLOT => 0,
                    s => u64::from(k.sub[(s as u64 * upp + i) as usize]) * upp,
                };
                if pt.base_tier_of(h, i) == tier && keep(bin_of(level.min(u32::MAX as u64) as u32))
                {
                    v.push((level, pt.base_id(h, i)));
                }
            }
        }
        v
    }

    /// Pages on `tier` with bin ≥ `min_bin`, hottest first.
    fn pages_on(&self, pt: &PageTable, tier: usize, min_bin: usize) -> ByLevel {
        by_level(self.levels_on(pt, tier, |b| b >= min_bin), true)
    }

    /// Default-tier pages below the hot bin, coldest first (victims for demotion).
    fn coldest_default(&self, pt: &PageTable) -> ByLevel {
        by_level(self.levels_on(pt, DEFAULT_TIER, |b| b < self.hot), false)
    }

    /// Split requests for this interval: up to `split_max_per_interval` queued huge pages
    /// per tier, in queue order. Their base pages enter the histogram with their counts.
    fn take_splits(&mut self, pt: &PageTable) -> Vec<Migration> {
        let Some(k) = self.skew.as_mut() else {
            return Vec::new();
        };
        let mut per_tier = vec![0u64; pt.tiers()];
        let mut out = Vec::new();
        let mut keep = std::collections::VecDeque::new();
        while let Some(h) = k.queue.pop_front() {
            let t = pt.tier(h);
            if per_tier[t] >= self.params.split_max_per_interval {
                keep.push_back(h);
                continue;
            }
            per_tier[t] += 1;
            let s = k.slot[h as usize] as usize;
            k.state[s] = 2;
            k.split_pages.push(h);
            k.split_happened = true;
            let c = std::mem::take(&mut self.counts[h as usize]);
            self.hist[bin_of(c)] -= k.upp;
            self.total_count -= c as u64;
            let upp = k.upp as usize;
            for &c in &k.sub[s * upp..(s + 1) * upp] {
                self.hist[k.bin_tab[c as usize] as usize] += 1;
                self.total_count += c as u64;
            }
            out.push(Migration {
                page: h,
                to: SPLIT_PAGE,
            });
        }
        k.queue = keep;
        out
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
        PolicyWork {
            colloid: self.colloid.as_ref().map(|c| c.quanta).unwrap_or_default(),
            ..self.work
        }
    }

    fn sample_period(&self) -> Option<u64> {
        Some(PERIOD_LADDER[self.period_idx])
    }

    fn splits_pages(&self) -> bool {
        self.params.split
    }

    fn quantum(&mut self, obs: &Observation) -> Vec<Migration> {
        let pt = obs.pages;
        if self.counts.is_empty() {
            self.counts = vec![0; pt.pages() as usize];
            self.hist[0] = pt.pages() * (pt.page_bytes / 4096).max(1);
            if self.params.split && pt.splittable() {
                self.skew = Some(Box::new(Skew::new(pt)));
            }
        }
        if self.skew.is_some() && obs.sample_subpages.len() == obs.samples.len() {
            // Sub-page counts are spread over many megabytes: fetch a few samples ahead so
            // the cache misses overlap instead of queueing one after the other.
            const AHEAD: usize = 16;
            let (ps, subs) = (obs.samples, obs.sample_subpages);
            for k in 0..ps.len() {
                if let (Some(&q), Some(sk)) = (ps.get(k + AHEAD), self.skew.as_deref()) {
                    sk.prefetch(pt, q, subs[k + AHEAD]);
                }
                self.record_split(ps[k], subs[k], pt);
            }
        } else {
            self.record_all(obs.samples, (pt.page_bytes / 4096).max(1), pt);
        }
        if let Some(k) = self.skew.as_mut() {
            for (t, n) in k.nominal_ns.iter_mut().enumerate() {
                if let Some(Some(l)) = obs.latency_ns.get(t) {
                    *n = n.min(*l);
                }
            }
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
        // Splits first: the engine applies requests in order, so the base pages named below
        // exist by the time their migrations run.
        let mut out = self.take_splits(pt);
        let n = pt.pages();
        let upp = pt.units_per_page();
        let units = |id: u64| if id < n { upp } else { 1 };
        let wm_units = (pt.capacity_units(DEFAULT_TIER) as f64 * self.params.watermark) as u64;
        self.work.pages_scanned +=
            pt.pages() + self.skew.as_ref().map_or(0, |k| k.split_pages.len() as u64) * upp;

        // Which alternate-tier pages to promote and default-tier hot pages to demote.
        let mut promote = Vec::new();
        // Or, without Colloid, every hot alternate-tier page, hottest first (read below only
        // as far as the budget carries).
        let mut hottest = None;
        let mut demote_hot = Vec::new();
        match step {
            None if self.colloid.is_some() => {}
            None => hottest = Some(self.pages_on(pt, 1, self.hot)),
            Some((dp, dir, _)) => {
                let mut remaining = dp;
                let (tier, list) = match dir {
                    Direction::Balanced => (1, &mut promote),
                    Direction::ToDefault => (1, &mut promote),
                    Direction::ToAlternate => (DEFAULT_TIER, &mut demote_hot),
                };
                if dir != Direction::Balanced {
                    for p in self.pages_on(pt, tier, self.hot) {
                        let s = self.share(pt, p);
                        if s <= remaining {
                            remaining -= s;
                            list.push(p);
                        }
                    }
                }
            }
        }
        // Copies stop when the budget or room runs out for even a base page.
        let min_bytes = pt.unit_bytes();
        let mut alt_free = pt.free_units(1);
        let mut demoted = 0u64;
        for p in demote_hot {
            let (b, u) = (pt.page_size(p), units(p));
            if budget < min_bytes || alt_free == 0 {
                break;
            }
            if budget < b || alt_free < u {
                continue;
            }
            budget -= b;
            alt_free -= u;
            demoted += u;
            out.push(Migration { page: p, to: 1 });
        }
        // Room for the promotions plus the watermark, from the coldest default pages. Only
        // the promotions this interval's copy budget can carry, with the demotions that make
        // their room, are planned: demoting room for every hot page first would spend a
        // small budget on demotions alone, interval after interval.
        let free = pt.free_units(DEFAULT_TIER) + demoted;
        let unit_bytes = pt.unit_bytes();
        let mut acc_units = 0u64;
        let mut acc_bytes = 0u64;
        let mut fitting = Vec::new();
        for p in promote.into_iter().chain(hottest.into_iter().flatten()) {
            let (u, b) = (acc_units + units(p), acc_bytes + pt.page_size(p));
            let room_bytes = (u + wm_units).saturating_sub(free) * unit_bytes;
            if b + room_bytes > budget {
                break;
            }
            (acc_units, acc_bytes) = (u, b);
            fitting.push(p);
        }
        let promote = fitting;
        let promote_units: u64 = promote.iter().map(|&p| units(p)).sum();
        let want = (promote_units + wm_units).saturating_sub(free);
        let mut freed = 0u64;
        if want > 0 {
            for p in self.coldest_default(pt) {
                if freed >= want || budget < min_bytes || alt_free == 0 {
                    break;
                }
                let (b, u) = (pt.page_size(p), units(p));
                if budget < b || alt_free < u {
                    continue;
                }
                budget -= b;
                alt_free -= u;
                freed += u;
                out.push(Migration { page: p, to: 1 });
            }
        }
        let mut room = (free + freed).saturating_sub(wm_units);
        for p in promote {
            if budget < min_bytes || room == 0 {
                break;
            }
            let (b, u) = (pt.page_size(p), units(p));
            if budget < b || room < u {
                continue;
            }
            budget -= b;
            room -= u;
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

    proptest::proptest! {
        /// A quantum's samples recorded at once leave the counts, the histogram, the hot
        /// threshold and the sample counters exactly as recording them one by one does:
        /// adaptations and coolings at the same samples, pages out of range skipped.
        #[test]
        fn samples_recorded_at_once_equal_one_by_one(
            samples in proptest::collection::vec(0u64..80, 0..600),
            adapt in 1u64..40,
            cool in 1u64..120,
        ) {
            let pt = PageTable::first_touch(64, 2 << 20, &[40 << 21, 1 << 40]).unwrap();
            let params = MemtisParams {
                adapt_every_samples: adapt,
                cool_every_samples: cool,
                split: false,
                ..Default::default()
            };
            let fresh = || {
                let mut m = Memtis::new(params.clone(), None);
                m.counts = vec![0; pt.pages() as usize];
                m.hist[0] = pt.pages() * 512;
                m
            };
            let (mut once, mut each) = (fresh(), fresh());
            // Two quanta: the second starts part-way to the next event.
            for half in samples.chunks(samples.len().div_ceil(2).max(1)) {
                once.record_all(half, 512, &pt);
                for &p in half.iter().filter(|&&p| p < pt.pages()) {
                    each.record(p, 512, &pt);
                }
            }
            proptest::prop_assert_eq!(&once.counts, &each.counts);
            proptest::prop_assert_eq!(once.hist, each.hist);
            proptest::prop_assert_eq!(
                (once.hot, once.since_adapt, once.since_cool, once.total_count),
                (each.hot, each.since_adapt, each.since_cool, each.total_count)
            );
        }
    }
}
