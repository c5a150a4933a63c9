//! TPP: Linux 6.3 NUMA-balancing memory tiering (`numa_balancing=2`), optionally with
//! Colloid. A periodic scan marks alternate-tier PTEs inaccessible (256 MB per step); a
//! hint fault promotes the page if the default tier has free space above the promotion
//! watermark plus a margin, or else if its fault latency (fault time − scan time) is below
//! the hot threshold and the promotion rate limit allows. The hot threshold is auto-tuned
//! every 60 s toward the rate limit. kswapd demotes inactive pages (accessed bit clear,
//! second-chance clock) when free memory falls below the low watermark, or below the
//! promotion watermark after a promotion found no room. Sources: mm/mempolicy.c,
//! kernel/sched/fair.c (`should_numa_migrate_memory`, `numa_promotion_adjust_threshold`,
//! `pgdat_free_space_enough`), mm/page_alloc.c (watermarks) of Linux 6.3.
//!
//! With Colloid (Vuppalapati & Agarwal, ACM SOSP 2024): hint faults also on default-tier pages; a
//! faulting page's access share is estimated as p_page = 1/(Δt·r) (Δt its fault latency, r the
//! application's read rate); alternate-tier pages are promoted only when L_D < L_A, and
//! default-tier hot pages are demoted when L_D > L_A, Σ p_page ≤ Δp; the latency monitor takes a
//! dedicated core.

use super::colloid::{Colloid, ColloidParams, Direction};
use super::hint_faults::{HintFault, InOrder};
use super::hw::PageHardware;
use super::pages::PageTable;
use super::policy::{Migration, Observation, PolicyWork, TieringPolicy, DEFAULT_TIER};
use crate::config::Validator;

crate::params! {
    #[params(check)]
    /// TPP's NUMA-balancing scanner and promotion, with the Linux sysctl defaults.
    #[derive(Debug, Clone, PartialEq)]
    pub struct TppParams {
        pub scan_step_bytes: u64 = 256 << 20 => range(4096, 1 << 40), "",
            "Bytes unmapped per scan step (`numa_balancing_scan_size_mb`: 256 MB).";
        pub scan_period_min_s: f64 = 1.0 => range(1e-3, 3600.0), "",
            "A full scan pass takes at least this (`numa_balancing_scan_period_min_ms`: 1 s).";
        pub scan_period_max_s: f64 = 60.0 => any, "",
            "... and at most this (`numa_balancing_scan_period_max_ms`: 60 s); scan_period_min_s to 3600.";
        pub max_scan_mb_s: f64 = 2560.0 => range(1.0, 1e7), "",
            "Scanning proceeds at most this fast (`MAX_SCAN_WINDOW`: 2560 MB/s).";
        pub hot_threshold_ms: f64 = 1000.0 => range(0.001, 1e7), "",
            "Hint-fault latency below which a page is hot; the reference of the auto-tuning (`numa_balancing_hot_threshold_ms`: 1000 ms).";
        pub promote_rate_limit_mb_s: f64 = 65536.0 => range(0.001, 1e7), "",
            "Promotion rate limit (`numa_balancing_promote_rate_limit_MBps`: 65536).";
        pub watermark_scale_factor: u32 = 10 => range(1, 3000), "",
            "Gap between watermarks in ten-thousandths of the tier (`watermark_scale_factor`: 10, 0.1 %).";
    }
}

/// Linux watermarks of a tier, in pages: min = √(16·KB) KB (`min_free_kbytes`, ≤ 256 MB),
/// gap = max(min/4, capacity · scale/10000); low = min + gap, high = low + gap,
/// promo = high + gap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Watermarks {
    pub low: u64,
    pub high: u64,
    pub promo: u64,
    /// `pgdat_free_space_enough`: promo + max(1 GB, capacity/16).
    pub enough: u64,
}

impl Watermarks {
    pub(super) fn new(capacity_pages: u64, page_bytes: u64, scale_factor: u32) -> Self {
        let cap_kb = capacity_pages * page_bytes / 1024;
        let min_kb = ((16.0 * cap_kb as f64).sqrt() as u64).clamp(128, 262_144);
        let to_pages = |kb: u64| (kb * 1024).div_ceil(page_bytes);
        let min = to_pages(min_kb);
        let gap = (min / 4).max(capacity_pages * scale_factor as u64 / 10_000);
        let promo = min + 3 * gap;
        Watermarks {
            low: min + gap,
            high: min + 2 * gap,
            promo,
            enough: promo + ((1u64 << 30) / page_bytes).max(capacity_pages / 16),
        }
    }
}

/// Hint faults ahead whose pages' tiers are fetched: the faulting pages come in no order.
const AHEAD: usize = 8;

pub(super) struct Tpp {
    pub params: TppParams,
    colloid: Option<Colloid>,
    /// Current hot threshold (auto-tuned), s.
    pub threshold_s: f64,
    scan_hand: u64,
    scan_carry: f64,
    lru_hand: u64,
    /// kswapd was woken by a failed promotion: reclaim up to the promotion watermark.
    promo_wake: bool,
    window_start_s: f64,
    window_bytes: f64,
    adjust_start_s: f64,
    candidates: u64,
    work: PolicyWork,
    /// kswapd's buffer of idle pages found by a sweep.
    idle: Vec<u64>,
    /// Tests: read every fault in order, and the quanta whose tail was counted unordered
    /// (TPP) or left unread (Colloid-TPP).
    #[cfg(test)]
    reference_tail: bool,
    #[cfg(test)]
    tails: u64,
}

impl Tpp {
    pub(super) fn new(params: TppParams, colloid: Option<ColloidParams>) -> Self {
        let work = PolicyWork {
            dedicated_cores: u32::from(colloid.is_some()),
            ..Default::default()
        };
        Tpp {
            threshold_s: params.hot_threshold_ms / 1e3,
            params,
            colloid: colloid.map(Colloid::new),
            scan_hand: 0,
            scan_carry: 0.0,
            lru_hand: 0,
            promo_wake: false,
            window_start_s: 0.0,
            window_bytes: 0.0,
            adjust_start_s: 0.0,
            candidates: 0,
            work,
            idle: Vec::new(),
            #[cfg(test)]
            reference_tail: false,
            #[cfg(test)]
            tails: 0,
        }
    }

    /// Pages the scanner visits per second: the whole space once per period, the period
    /// bounded by [min, max] and by the maximum scan rate.
    fn scan_pages_per_s(&self, pt: &PageTable) -> f64 {
        let bytes = (pt.pages() * pt.page_bytes) as f64;
        let period = (bytes / (self.params.max_scan_mb_s * 1e6))
            .clamp(self.params.scan_period_min_s, self.params.scan_period_max_s);
        pt.pages() as f64 / period
    }

    /// `numa_promotion_adjust_threshold`: every 60 s, compare candidate promotions with the
    /// rate limit and step the threshold by 1/16 of twice the reference.
    fn adjust_threshold(&mut self, now_s: f64, page_bytes: u64) {
        const PERIOD_S: f64 = 60.0;
        if now_s - self.adjust_start_s < PERIOD_S {
            return;
        }
        let ref_th = self.params.hot_threshold_ms / 1e3;
        let unit = ref_th * 2.0 / 16.0;
        let ref_cand = self.params.promote_rate_limit_mb_s * 1e6 * PERIOD_S / page_bytes as f64;
        let cand = self.candidates as f64;
        if cand > ref_cand * 1.1 {
            self.threshold_s = (self.threshold_s - unit).max(unit);
        } else if cand < ref_cand * 0.9 {
            self.threshold_s = (self.threshold_s + unit).min(ref_th * 2.0);
        }
        self.candidates = 0;
        self.adjust_start_s = now_s;
    }

    /// The hint faults from the first one that finds the default tier down to its high
    /// watermark (without Colloid): in any order, each does what it would do in order. None
    /// can promote: the tier is not above `enough` (which is at or above the promotion
    /// watermark), so a page promotes only if hot and within the rate limit, and then the
    /// high watermark sends it to wake kswapd instead; and nothing they do changes what the
    /// next one does. A hot fault on an alternate-tier page is a
    /// candidate for the threshold's tuning, and one within the rate limit wakes kswapd.
    fn count_tail(&mut self, pt: &PageTable, first: HintFault, rest: &InOrder, page_bytes: u64) {
        let threshold_s = self.threshold_s;
        let candidate = |f: HintFault| f.latency_s < threshold_s && pt.tier(f.page) != DEFAULT_TIER;
        let mut candidates = u64::from(candidate(first));
        rest.for_each_rest(AHEAD, |f, ahead| {
            if let Some(g) = ahead {
                pt.prefetch(g);
            }
            candidates += u64::from(candidate(f));
        });
        self.candidates += candidates;
        let limit = self.params.promote_rate_limit_mb_s * 1e6;
        // The same comparison as the loop's (a NaN would fail both ways alike).
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let within = !(self.window_bytes + page_bytes as f64 > limit);
        self.promo_wake |= candidates > 0 && within;
        #[cfg(test)]
        {
            self.tails += 1;
        }
    }

    /// Whether every fault is read in order, the tail too (the reference the tests compare
    /// [`Self::count_tail`] with).
    #[inline(always)]
    fn tail_in_order(&self) -> bool {
        #[cfg(test)]
        return self.reference_tail;
        #[cfg(not(test))]
        false
    }

    /// kswapd: demote pages whose accessed bit is clear (second chance) until the default
    /// tier has `target` free pages; returns the demotions.
    fn kswapd(
        &mut self,
        pt: &PageTable,
        hw: &mut dyn PageHardware,
        need: u64,
        budget: &mut u64,
    ) -> Vec<Migration> {
        let mut out = Vec::new();
        let n = pt.pages();
        let mut alt_free = pt.free_pages(1);
        // Visit at most 32 pages per page wanted (SWAP_CLUSTER_MAX batches) and at most one
        // sweep per quantum: a page whose bit this pass clears is judged a quantum later.
        let mut visits = n.min((32 * need).max(4096));
        let pb = pt.page_bytes;
        let mut idle = std::mem::take(&mut self.idle);
        while (out.len() as u64) < need && visits > 0 && alt_free > 0 && *budget >= pb {
            // Up to the table's end (the hand then wraps), one batch of sweep steps finds the
            // idle pages wanted: as many as the first of the three limits allows.
            let span = visits.min(n - self.lru_hand);
            let wanted = (need - out.len() as u64).min(alt_free).min(*budget / pb);
            idle.clear();
            let tested = hw.sweep_idle(pt, DEFAULT_TIER, (self.lru_hand, span), wanted, &mut idle);
            self.work.pages_scanned += tested;
            out.extend(idle.iter().map(|&p| Migration { page: p, to: 1 }));
            alt_free -= idle.len() as u64;
            *budget -= idle.len() as u64 * pb;
            // A limit reached: the hand stops after the last idle page; otherwise the span
            // was swept to its end.
            match idle.last() {
                Some(&p) if idle.len() as u64 == wanted => {
                    visits -= p - self.lru_hand + 1;
                    self.lru_hand = p + 1;
                }
                _ => {
                    visits -= span;
                    self.lru_hand += span;
                }
            }
            if self.lru_hand >= n {
                self.lru_hand = 0;
            }
        }
        self.idle = idle;
        out
    }
}

/// Colloid-TPP's fault loop in one quantum: the direction and rate it acts on, and the
/// least share of traffic a hot fault's page carries.
#[derive(Clone, Copy)]
struct ColloidLoop {
    dir: Direction,
    rate: f64,
    least_share: f64,
}

impl ColloidLoop {
    fn new(dir: Direction, rate: f64, threshold_s: f64) -> ColloidLoop {
        ColloidLoop {
            dir,
            rate,
            // A hot fault's share is `1 / (latency · rate)` with its latency below the
            // threshold: at least this (rounding keeps products and quotients monotone).
            least_share: 1.0 / (threshold_s.max(1e-9) * rate),
        }
    }

    /// Whether no later fault can move a page or wake kswapd, so the loop may stop (every
    /// one would be passed over by the loop's own tests): no fault's share fits in
    /// `remaining`; no direction (balanced) or no rate moves nothing; demotions need a
    /// free alternate frame; and with promotion blocked (`promote_blocked`: the default
    /// tier at or below its high watermark) a promotion only wakes kswapd, once. In each
    /// case the loop's state only moves further that way, so it holds for the rest of the
    /// quantum.
    #[inline(always)]
    fn done(self, remaining: f64, promote_blocked: bool, promo_wake: bool, alt_free: u64) -> bool {
        self.rate <= 0.0
            || remaining < self.least_share
            || match self.dir {
                Direction::Balanced => true,
                Direction::ToAlternate => alt_free == 0,
                Direction::ToDefault => promote_blocked && promo_wake,
            }
    }
}

impl TieringPolicy for Tpp {
    fn name(&self) -> &'static str {
        if self.colloid.is_some() {
            "colloid-tpp"
        } else {
            "tpp"
        }
    }

    fn work(&self) -> PolicyWork {
        PolicyWork {
            colloid: self.colloid.as_ref().map(|c| c.quanta).unwrap_or_default(),
            ..self.work
        }
    }

    fn quantum(&mut self, obs: &Observation) -> Vec<Migration> {
        self.quantum_hw(obs, &mut super::hw::NoHardware)
    }

    fn quantum_hw(&mut self, obs: &Observation, hw: &mut dyn PageHardware) -> Vec<Migration> {
        let pt = obs.pages;
        let pb = pt.page_bytes;
        let now = obs.time_s;
        let wm = Watermarks::new(
            pt.capacity_pages(DEFAULT_TIER),
            pb,
            self.params.watermark_scale_factor,
        );
        self.adjust_threshold(now, pb);
        if now - self.window_start_s >= 1.0 {
            self.window_start_s = now;
            self.window_bytes = 0.0;
        }
        let mut budget = obs.migrate_budget_bytes;
        let colloid = self.colloid.as_mut().and_then(|c| {
            let m = c.params.max_bytes_per_quantum;
            c.step_obs(obs).map(|s| (s, m))
        });
        if let Some((_, m)) = colloid {
            budget = budget.min(m);
        }

        // kswapd first, so promotions below find the frames it frees.
        let free = pt.free_pages(DEFAULT_TIER);
        let target = if self.promo_wake { wm.promo } else { wm.high };
        let mut out = if free < wm.low || (self.promo_wake && free < wm.promo) {
            self.kswapd(pt, hw, target - free, &mut budget)
        } else {
            Vec::new()
        };
        self.promo_wake = false;
        let mut free = free + out.len() as u64;
        let mut alt_free = pt.free_pages(1).saturating_sub(out.len() as u64);

        let mut remaining = colloid.map_or(0.0, |((dp, _, _), _)| dp);
        // Every delivered fault was taken (a trap and its handling), whether or not the
        // migration budget left room to act on it.
        self.work.hint_faults += obs.hint_faults.len() as u64;
        // Each fault migrates at most one page, within the budget: room for them at once
        // (thousands a quantum at 4 KiB; grown one push at a time they were ≈ 1.5 % of a run).
        out.reserve(obs.hint_faults.len().min((budget / pb) as usize));
        // The faulting pages are in no order: fetch their tiers a few faults ahead.
        let mut faults = obs.hint_faults.in_order();
        let colloid_loop =
            colloid.map(|((_, dir, rate), _)| ColloidLoop::new(dir, rate, self.threshold_s));
        loop {
            if let Some(c) = colloid_loop {
                if c.done(remaining, free <= wm.high, self.promo_wake, alt_free)
                    && !self.tail_in_order()
                {
                    // No fault behind can act: they are neither sorted nor read.
                    #[cfg(test)]
                    {
                        self.tails += 1;
                    }
                    break;
                }
            }
            let Some(f) = faults.next() else { break };
            if let Some(g) = faults.page_ahead(AHEAD) {
                pt.prefetch(g);
            }
            if colloid.is_none() && free <= wm.high && !self.tail_in_order() {
                // Free frames only fall in this loop: no later fault can promote.
                self.count_tail(pt, f, &faults, pb);
                break;
            }
            let on_default = pt.tier(f.page) == DEFAULT_TIER;
            let hot = f.latency_s < self.threshold_s;
            match colloid {
                None => {
                    if on_default {
                        continue;
                    }
                    let enough = free > wm.enough;
                    if !enough {
                        if !hot {
                            continue;
                        }
                        self.candidates += 1;
                        let limit = self.params.promote_rate_limit_mb_s * 1e6;
                        if self.window_bytes + pb as f64 > limit {
                            continue;
                        }
                    }
                    if free <= wm.high {
                        self.promo_wake = true;
                        continue;
                    }
                }
                Some(((_, dir, rate), _)) => {
                    if !hot || rate <= 0.0 {
                        continue;
                    }
                    let p_page = 1.0 / (f.latency_s.max(1e-9) * rate);
                    let wanted = match dir {
                        Direction::ToDefault => !on_default,
                        Direction::ToAlternate => on_default,
                        Direction::Balanced => false,
                    };
                    if !wanted || p_page > remaining {
                        continue;
                    }
                    if !on_default && free <= wm.high {
                        self.promo_wake = true;
                        continue;
                    }
                    if on_default && alt_free == 0 {
                        continue;
                    }
                    remaining -= p_page;
                }
            }
            if budget < pb {
                break;
            }
            budget -= pb;
            if on_default {
                alt_free -= 1;
                free += 1;
                out.push(Migration {
                    page: f.page,
                    to: 1,
                });
            } else {
                free -= 1;
                self.window_bytes += pb as f64;
                out.push(Migration {
                    page: f.page,
                    to: DEFAULT_TIER,
                });
            }
        }

        // The scan: mark the next pages (alternate-tier only, or all with Colloid).
        self.scan_carry += self.scan_pages_per_s(pt) * obs.quantum_s;
        let n = self.scan_carry as u64;
        self.scan_carry -= n as f64;
        let except = if self.colloid.is_some() {
            None
        } else {
            Some(DEFAULT_TIER)
        };
        let pages = pt.pages();
        let mut left = n.min(pages);
        self.work.pages_scanned += left;
        while left > 0 {
            // Up to the end of the table, then from its start (the hand wraps).
            let run = left.min(pages - self.scan_hand);
            hw.mark_range(pt, self.scan_hand, run, except);
            self.scan_hand += run;
            if self.scan_hand >= pages {
                self.scan_hand = 0;
            }
            left -= run;
        }
        out
    }
}

impl TppParams {
    fn check(&self, v: &mut Validator) {
        v.range(
            "scan_period_max_s",
            self.scan_period_max_s,
            self.scan_period_min_s,
            3600.0,
            "s",
        );
    }
}

#[cfg(test)]
mod tests {
    use rand::Rng;

    use super::*;
    use crate::tier::hint_faults::{HintFault, HintFaults};

    /// A test quantum of 10 ms as TPP sees it: hint faults, no samples, tiers at 70 and
    /// 135 ns.
    fn seen<'a>(
        time_s: f64,
        pages: &'a PageTable,
        migrate_budget_bytes: u64,
        hint_faults: &'a HintFaults,
    ) -> Observation<'a> {
        Observation {
            time_s,
            quantum_s: 0.01,
            samples: &[],
            sample_subpages: &[],
            sample_period: 1,
            latency_ns: &[Some(70.0), Some(135.0)],
            app_arrivals_per_ns: &[0.0, 0.0],
            pages,
            migrate_budget_bytes,
            hint_faults,
        }
    }

    #[test]
    fn watermarks_of_a_32_gb_tier() {
        // 32 GB in 4 KiB pages: min_free_kbytes = √(16·31,250,000) = 22,360 KB;
        // gap = 0.1 % of the tier (7812 pages) > min/4.
        let w = Watermarks::new(32_000_000_000 / 4096, 4096, 10);
        let min = (22_360u64 * 1024).div_ceil(4096);
        assert_eq!(w.low, min + 7812);
        assert_eq!(w.high, min + 2 * 7812);
        assert_eq!(w.promo, min + 3 * 7812);
        assert_eq!(w.enough, w.promo + 7_812_500 / 16);
    }

    #[test]
    fn threshold_tunes_toward_the_rate_limit() {
        let mut t = Tpp::new(
            TppParams {
                promote_rate_limit_mb_s: 1.0,
                ..Default::default()
            },
            None,
        );
        // 60 s at 1 MB/s = 14,648 candidate 4 KiB pages; far more: the threshold drops.
        t.candidates = 100_000;
        t.adjust_threshold(60.0, 4096);
        assert!((t.threshold_s - (1.0 - 0.125)).abs() < 1e-12);
        // Far fewer: it rises, capped at twice the reference.
        for k in 2..40 {
            t.adjust_threshold(60.0 * k as f64, 4096);
        }
        assert!((t.threshold_s - 2.0).abs() < 1e-12);
    }

    /// A hint fault is a trap whether or not the policy can act on it: the faults after the
    /// quantum's migration budget is spent count as work too.
    #[test]
    fn every_delivered_hint_fault_counts_as_work() {
        // 64 pages, all on the alternate tier; the default tier is empty and large, so
        // every fault asks for a promotion; the budget holds 4 pages.
        let caps = [64 << 30, 64 << 30];
        let pt = PageTable::place_with(64, 4096, false, &caps, |_| Some(1)).unwrap();
        let faults: Vec<HintFault> = (0..10)
            .map(|p| HintFault {
                page: p,
                latency_s: 0.01,
            })
            .collect();
        let mut t = Tpp::new(TppParams::default(), None);
        let migs = t.quantum(&seen(0.5, &pt, 4 * 4096, &HintFaults::given(faults)));
        assert_eq!(migs.len(), 4, "the budget moves 4 pages");
        assert!(migs.iter().all(|m| m.to == DEFAULT_TIER));
        assert_eq!(t.work().hint_faults, 10, "all 10 faults were taken");
    }

    /// Up to 400 hint faults of the quantum starting at `t` s, on pages below `n`, with
    /// latencies of 0–2 s; a page faults at most once per quantum.
    fn random_faults(rng: &mut crate::rng::SimRng, t: f64, n: u64) -> HintFaults {
        let mut pages = std::collections::HashSet::new();
        let faults: Vec<(u32, f32, f64)> = (0..rng.random_range(0..400))
            .map(|_| {
                let page = rng.random_range(0..n) as u32;
                (
                    page,
                    rng.random::<f32>() * 2.0,
                    t + 0.01 * rng.random::<f64>(),
                )
            })
            .filter(|f| pages.insert(f.0))
            .collect();
        HintFaults::bucketed(&faults)
    }

    /// Once the default tier is down to its high watermark, the rest of a quantum's faults
    /// counted in no order leave TPP as reading each in order does: the same migrations,
    /// threshold candidates and kswapd wake-ups, quantum after quantum, with the tier
    /// filling and draining, budgets that stop the loop and a rate limit that does.
    #[test]
    fn the_tail_counted_unordered_acts_as_read_in_order() {
        for limit_mb_s in [65536.0, 0.3] {
            let params = TppParams {
                promote_rate_limit_mb_s: limit_mb_s,
                ..Default::default()
            };
            let caps = [4000 * 4096, 8000 * 4096];
            let n = 10_000;
            let pt = PageTable::place_with(n, 4096, false, &caps, |p| Some(usize::from(p >= 3950)))
                .unwrap();
            let (mut fast, mut slow) = (Tpp::new(params.clone(), None), Tpp::new(params, None));
            slow.reference_tail = true;
            let (mut pf, mut ps) = (pt.clone(), pt);
            let mut rng = crate::rng::stream(9, "t");
            for q in 0..7000u64 {
                let t = q as f64 * 0.01;
                let faults = random_faults(&mut rng, t, n);
                let budget = 4096 * rng.random_range(0..300);
                let step = |tpp: &mut Tpp, pt: &mut PageTable| {
                    let migs = tpp.quantum(&seen(t, pt, budget, &faults));
                    for m in &migs {
                        let _ = pt.migrate(m.page, m.to);
                    }
                    migs
                };
                assert_eq!(
                    step(&mut fast, &mut pf),
                    step(&mut slow, &mut ps),
                    "quantum {q}"
                );
                assert_eq!(
                    (fast.candidates, fast.promo_wake, fast.threshold_s.to_bits()),
                    (slow.candidates, slow.promo_wake, slow.threshold_s.to_bits()),
                    "quantum {q}"
                );
            }
            assert_eq!(pf, ps);
            assert_eq!(fast.work(), slow.work());
            assert_eq!(slow.tails, 0);
            assert!(
                fast.tails > 100,
                "limit {limit_mb_s}: the tail was counted in {} quanta",
                fast.tails
            );
            assert_ne!(fast.threshold_s, 1.0, "the threshold was tuned");
        }
    }

    /// Colloid-TPP stops reading a quantum's faults once none behind can act; it leaves
    /// the policy as reading every fault does: the same migrations and kswapd wake-ups,
    /// quantum after quantum, in every direction, with shares that fit a few pages or
    /// none, alternate frames running out, promotion blocked and budgets that stop the
    /// loop first.
    #[test]
    fn colloid_stopping_where_no_fault_can_act_acts_as_reading_them_all() {
        let caps = [4000 * 4096, 6200 * 4096];
        let n = 10_000;
        let pt =
            PageTable::place_with(n, 4096, false, &caps, |p| Some(usize::from(p >= 3900))).unwrap();
        let colloid = || Some(ColloidParams::default());
        let (mut fast, mut slow) = (
            Tpp::new(TppParams::default(), colloid()),
            Tpp::new(TppParams::default(), colloid()),
        );
        slow.reference_tail = true;
        let (mut pf, mut ps) = (pt.clone(), pt);
        let mut rng = crate::rng::stream(11, "t");
        let mut moved = [0usize; 2];
        for q in 0..5000u64 {
            let t = q as f64 * 0.01;
            let faults = random_faults(&mut rng, t, n);
            // Loaded latencies either way round or within Colloid's δ of each other, and
            // read rates at which one hot page is 0.5–50 % of the traffic.
            let latency_ns = [
                Some(rng.random_range(60.0..200.0)),
                Some(rng.random_range(60.0..200.0)),
            ];
            let arrivals = [rng.random_range(0.0..2e-7), rng.random_range(0.0..2e-7)];
            let budget = 4096 * rng.random_range(0..60);
            let step = |tpp: &mut Tpp, pt: &mut PageTable| {
                let obs = Observation {
                    latency_ns: &latency_ns,
                    app_arrivals_per_ns: &arrivals,
                    ..seen(t, pt, budget, &faults)
                };
                let migs = tpp.quantum(&obs);
                for m in &migs {
                    let _ = pt.migrate(m.page, m.to);
                }
                migs
            };
            let migs = step(&mut fast, &mut pf);
            for m in &migs {
                moved[m.to] += 1;
            }
            assert_eq!(migs, step(&mut slow, &mut ps), "quantum {q}");
            assert_eq!(fast.promo_wake, slow.promo_wake, "quantum {q}");
        }
        assert_eq!(pf, ps);
        assert_eq!(fast.work(), slow.work());
        assert_eq!(slow.tails, 0);
        assert!(fast.tails > 1000, "stopped early in {} quanta", fast.tails);
        assert!(
            moved[0] > 100 && moved[1] > 100,
            "promoted and demoted: {moved:?}"
        );
    }
}
