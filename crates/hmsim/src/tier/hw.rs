//! The page-level "hardware" a kernel policy uses besides PEBS: NUMA hint faults (a scan
//! marks a PTE inaccessible; the next access faults) and the accessed bit (LRU aging). In
//! statistical mode both are drawn from the workload's true per-page access rates — the
//! policy sees only the faults and bits, never the rates.

use rand::{Rng, RngCore};

use crate::hash::FastMap;
use crate::rng::SimRng;

use super::hint_faults::{Fault, HintFaults};
use super::pages::PageTable;
use super::workload::Gups;

/// What a kernel policy can do to pages besides migrating them.
pub trait PageHardware {
    /// Mark `page` PROT_NONE: its next access raises a hint fault, delivered in a later
    /// quantum's `Observation::hint_faults`. Marking a page already marked does nothing.
    fn mark(&mut self, page: u64);
    /// Test and clear the page's accessed bit: true if it was accessed since the last clear.
    fn test_and_clear_accessed(&mut self, page: u64) -> bool;

    /// Mark the pages among ids `from .. from + len` that are not on `except_tier` (all of
    /// them with `None`), in order: as [`mark`](Self::mark) page by page.
    fn mark_range(&mut self, pt: &PageTable, from: u64, len: u64, except_tier: Option<usize>) {
        for p in from..from.saturating_add(len) {
            if except_tier.is_none_or(|t| pt.tier(p) != t) {
                self.mark(p);
            }
        }
    }

    /// An LRU sweep step: test and clear the accessed bits of `tier`'s pages among ids
    /// `from .. from + len` in order (other tiers' pages are passed over), stopping at the
    /// first page whose bit was clear. The same bits, in the same order, as
    /// [`test_and_clear_accessed`](Self::test_and_clear_accessed) page by page.
    fn sweep_accessed(&mut self, pt: &PageTable, tier: usize, from: u64, len: u64) -> Sweep {
        let end = from.saturating_add(len);
        let mut tested = 0;
        let mut at = from;
        while let Some(p) = pt.next_in_tier(tier, at, end - at) {
            tested += 1;
            if !self.test_and_clear_accessed(p) {
                return Sweep {
                    idle: Some(p),
                    tested,
                };
            }
            at = p + 1;
        }
        Sweep { idle: None, tested }
    }

    /// Sweep steps back to back over `from .. from + len`, each starting after the last
    /// idle page, until `max_idle` idle pages are found or the range ends: the idle pages
    /// go to `idle` in order; returns the pages tested. Exactly what
    /// [`sweep_accessed`](Self::sweep_accessed) called step by step does.
    fn sweep_idle(
        &mut self,
        pt: &PageTable,
        tier: usize,
        (from, len): (u64, u64),
        max_idle: u64,
        idle: &mut Vec<u64>,
    ) -> u64 {
        let end = from.saturating_add(len);
        let (mut at, mut tested, mut found) = (from, 0, 0);
        while found < max_idle && at < end {
            let step = self.sweep_accessed(pt, tier, at, end - at);
            tested += step.tested;
            let Some(p) = step.idle else { break };
            idle.push(p);
            found += 1;
            at = p + 1;
        }
        tested
    }
}

/// What a [`PageHardware::sweep_accessed`] step found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sweep {
    /// The first page whose accessed bit was clear, if any.
    pub idle: Option<u64>,
    /// Pages whose bits were tested (the idle one included).
    pub tested: u64,
}

/// Hardware with no pages to mark (for policies that do not use it, and tests).
pub(super) struct NoHardware;

impl PageHardware for NoHardware {
    fn mark(&mut self, _page: u64) {}
    fn test_and_clear_accessed(&mut self, _page: u64) -> bool {
        false
    }
}

/// The delay, s, from marking a page accessed at `rate` per second to its next access
/// (exponential: the accesses are a Poisson stream). Drawn by the ziggurat method
/// (`rand_distr::Exp1`): almost every draw is a table look-up and a compare, where the
/// inverse transform `-ln(u)` paid a logarithm per marked page (15 % of a Colloid-TPP run's
/// host instructions at 4 KiB pages; docs/performance.md).
#[inline(always)]
fn next_access_delay(rate: f64, rng: &mut SimRng) -> f64 {
    let e: f64 = rand_distr::Distribution::sample(&rand_distr::Exp1, rng);
    e / rate
}

/// Quanta ahead whose faults go to the ring of buckets (most marked pages fault within a
/// few hundred quanta; the rest wait in a map).
const NEAR_QUANTA: u64 = 512;

/// Faults past a bucket's end whose line a push asks the host for (one 64-byte line ahead).
const PREFETCH_FAULTS: usize = 64 / std::mem::size_of::<Fault>();

/// Statistical-mode hardware: per-page access times are exponential with the page's true
/// access rate at the time of the draw (an approximation when the rate changes while a
/// page is marked: the draw is not redone).
pub(super) struct StatHardware {
    now_s: f64,
    quantum_s: f64,
    quantum: u64,
    accesses_per_s: f64,
    gups: Option<Gups>,
    /// One bit per page, set while the page is marked (its fault pending); allocated on
    /// first use. A bit set is 2.4 MB for 18.9 M pages, where a mark time per page was
    /// 75 MB read at random: only whether a page is marked was ever asked.
    marked: Vec<u64>,
    /// Pages the `marked` bits cover.
    marked_pages: usize,
    /// When each page's accessed bit was last cleared; allocated on first use.
    cleared_at: Cleared,
    /// Faults (page, delay after marking in s, fault time in s) by the quantum they
    /// arrive in: within [`NEAR_QUANTA`] of the current quantum in a ring of buckets
    /// (`near[q % NEAR_QUANTA]`), later ones in `far`.
    near: Vec<Vec<Fault>>,
    far: FastMap<u64, Vec<Fault>>,
    /// Emptied bucket buffers, the last emptied on top: a bucket takes one when its first
    /// fault comes. Most faults land a few quanta ahead, so a few buffers go round; a buffer
    /// kept per bucket grew every bucket of the ring to a busy quantum's size (512 buffers,
    /// 40 MB of a quick Colloid-TPP point's 128 MB resident).
    spare: Vec<Vec<Fault>>,
    rng: SimRng,
    /// Access rate of a (hot, cold) page this quantum, per s.
    rates: (f64, f64),
    /// Memo of the accessed-bit probability this quantum, by (last-clear time bits, hot):
    /// a sweep visits runs of pages cleared at the same time, so one `exp` serves a run
    /// (the same value as computing it per page: results are unchanged).
    seen_memo: [(u32, f64); 2],
}

/// The last accessed-bit clear per page. A clear happens at a quantum's start time
/// `(q · quantum_s) as f32` (or never: 0 s, quantum 0), so while the quanta fit 16 bits the
/// quantum index stands for that time exactly, in half the bytes a kswapd sweep streams
/// through; past quantum 65535 the indices are converted to the times themselves.
enum Cleared {
    Unallocated,
    Quanta(Vec<u16>),
    Times(Vec<f32>),
}

/// A stored clear: its memo key (equal keys mean equal times) and its time in s.
trait ClearStamp: Copy {
    fn key(self) -> u32;
    fn time_s(self, quantum_s: f64) -> f32;
}

impl ClearStamp for u16 {
    #[inline(always)]
    fn key(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn time_s(self, quantum_s: f64) -> f32 {
        // The same expression as `StatHardware::begin_quantum`'s `now_s`, then as f32.
        (self as u64 as f64 * quantum_s) as f32
    }
}

impl ClearStamp for f32 {
    #[inline(always)]
    fn key(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn time_s(self, _quantum_s: f64) -> f32 {
        self
    }
}

/// What the accessed-bit draws of one quantum need, copied out of [`StatHardware`] so a
/// sweep keeps them (and the random stream) in registers.
struct AccessDraw {
    now_s: f64,
    now_f32: f32,
    quantum_s: f64,
    /// Hot page range [lo, hi) (empty without a workload).
    hot: (u64, u64),
    /// Rate of a (hot, cold) page, per s (0 without a workload).
    rates: (f64, f64),
}

impl AccessDraw {
    /// Whether `page`, last cleared at `*cleared`, was accessed since; clears it (`now`:
    /// this quantum as a stamp).
    #[inline(always)]
    fn test_and_clear<T: ClearStamp>(
        &self,
        page: u64,
        cleared: &mut T,
        now: T,
        memo: &mut [(u32, f64); 2],
        rng: &mut SimRng,
    ) -> bool {
        let c = *cleared;
        *cleared = now;
        let hot = page >= self.hot.0 && page < self.hot.1;
        let memo = &mut memo[usize::from(hot)];
        if memo.0 != c.key() {
            *memo = (c.key(), self.probability(c.time_s(self.quantum_s), hot));
        }
        rng.random::<f64>() < memo.1
    }

    /// [`PageHardware::sweep_idle`] over the clears `cleared` (`now`: this quantum as a
    /// stamp); returns the pages tested.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn sweep<T: ClearStamp>(
        &self,
        pt: &PageTable,
        tier: usize,
        (from, end): (u64, u64),
        cleared: &mut [T],
        now: T,
        memo: &mut [(u32, f64); 2],
        rng: &mut SimRng,
        (max_idle, idle): (u64, &mut Vec<u64>),
    ) -> u64 {
        if max_idle == 0 {
            return 0;
        }
        let mut found = 0;
        let mut below = memo.map(|(_, p)| below_of(p));
        let mut tested = 0;
        // Pages with a clear stamp, cut where hotness changes: each piece tests one memo
        // entry, and no page needs a bounds check.
        let known = end.min(cleared.len() as u64).max(from);
        let (lo, hi) = self.hot;
        let hot_from = lo.clamp(from, known);
        let hot_to = hi.max(lo).clamp(hot_from, known);
        for (a, b, hot) in [
            (from, hot_from, 0),
            (hot_from, hot_to, 1),
            (hot_to, known, 0),
        ] {
            if a >= b {
                continue;
            }
            // The piece's memo entry in registers; the pages on `tier` 64 at a time.
            let (mut key, mut prob) = memo[hot];
            let mut bel = below[hot];
            'words: for w in a / 64..=(b - 1) / 64 {
                let base = w * 64;
                let mut todo = pt.tier_mask64(tier, false, w as usize) & word_range(base, a, b);
                while todo != 0 {
                    let p = base + u64::from(todo.trailing_zeros());
                    todo &= todo - 1;
                    tested += 1;
                    // SAFETY: a <= p < b <= known <= cleared.len().
                    let c = unsafe { cleared.get_unchecked_mut(p as usize) };
                    let last = *c;
                    *c = now;
                    if key != last.key() {
                        key = last.key();
                        prob = self.probability(last.time_s(self.quantum_s), hot == 1);
                        bel = below_of(prob);
                    }
                    if !accessed(rng.next_u64(), bel) {
                        idle.push(p);
                        found += 1;
                        if found == max_idle {
                            break 'words;
                        }
                    }
                }
            }
            memo[hot] = (key, prob);
            below[hot] = bel;
            if found == max_idle {
                return tested;
            }
        }
        // Ids past the workload's pages (none in its own table) were never accessed.
        let mut at = known;
        while found < max_idle {
            let Some(p) = pt.next_in_tier(tier, at, end.saturating_sub(at)) else {
                break;
            };
            tested += 1;
            idle.push(p);
            found += 1;
            at = p + 1;
        }
        tested
    }

    /// Probability that a (hot) page last cleared at `cleared` s was accessed since.
    #[inline]
    fn probability(&self, cleared: f32, hot: bool) -> f64 {
        let dt = (self.now_s - cleared as f64).max(0.0);
        let rate = if hot { self.rates.0 } else { self.rates.1 };
        1.0 - (-rate * dt).exp()
    }
}

/// `rng.random::<f64>() < p` is `(x >> 11) as f64 · 2⁻⁵³ < p` for the stream's next `x`:
/// both sides scale exactly by 2⁵³, and an integer is below a real number exactly when it
/// is below its ceiling. This is that ceiling (0 for NaN: nothing is below NaN).
fn below_of(p: f64) -> u64 {
    (p * (1u64 << 53) as f64).ceil() as u64
}

/// The draw `x` of [`below_of`]'s comparison: true when the page was accessed.
#[inline(always)]
fn accessed(x: u64, below: u64) -> bool {
    (x >> 11) < below
}

impl StatHardware {
    pub(super) fn new(quantum_s: f64, rng: SimRng) -> Self {
        StatHardware {
            now_s: 0.0,
            quantum_s,
            quantum: 0,
            accesses_per_s: 0.0,
            gups: None,
            marked: Vec::new(),
            marked_pages: 0,
            cleared_at: Cleared::Unallocated,
            near: Vec::new(),
            far: FastMap::default(),
            spare: Vec::new(),
            rng,
            rates: (0.0, 0.0),
            seen_memo: [(u32::MAX, 0.0); 2],
        }
    }

    /// Start quantum `q`: the workload's current state and access rate; returns the faults
    /// that arrive in this quantum. Called for every quantum in order (the ring of pending
    /// faults relies on it).
    pub(super) fn begin_quantum(&mut self, q: u64, gups: &Gups, accesses_per_s: f64) -> HintFaults {
        debug_assert!(q == 0 || q == self.quantum + 1, "quanta in order");
        self.quantum = q;
        self.now_s = q as f64 * self.quantum_s;
        self.accesses_per_s = accesses_per_s;
        if self.gups.as_ref() != Some(gups) {
            self.gups = Some(gups.clone());
        }
        // Per-page rates for this quantum, two divisions once instead of per page visited.
        let (hot, cold) = gups.probabilities();
        self.rates = (hot * accesses_per_s, cold * accesses_per_s);
        // NaN bits never match a stored time, nor a 16-bit quantum: the memo starts empty
        // every quantum.
        self.seen_memo = [(u32::MAX, 0.0); 2];
        if q > u64::from(u16::MAX) {
            if let Cleared::Quanta(v) = &self.cleared_at {
                let mut times = crate::hugevec::with_capacity(v.len());
                times.extend(v.iter().map(|c| c.time_s(self.quantum_s)));
                self.cleared_at = Cleared::Times(times);
            }
        }
        let slot = (q % NEAR_QUANTA) as usize;
        // An empty bucket has no buffer: the far faults, if any, go into a spare one (a new
        // buffer here would join the spares and never leave).
        let mut pages = match self.near.get_mut(slot) {
            Some(b) if !b.is_empty() => std::mem::take(b),
            _ => self.spare.pop().unwrap_or_default(),
        };
        if let Some(f) = self.far.remove(&q) {
            pages.extend(f);
        }
        if pages.is_empty() {
            if pages.capacity() > 0 {
                self.spare.push(pages);
            }
            return HintFaults::default();
        }
        // Unmark first, in the order the faults were queued: a scan queues them in page
        // order, so the bits are cleared nearly in sequence rather than at random.
        for &(page, _, _) in &pages {
            self.marked[page as usize / 64] &= !(1u64 << (page % 64));
        }
        // The policy reads them in the order they happen within the quantum (the kernel
        // handles them so): (time bits, page), a total order, whatever order they were
        // queued in.
        let out = HintFaults::bucketed(&pages);
        pages.clear();
        self.spare.push(pages);
        out
    }

    fn draw(&self) -> AccessDraw {
        let (hot, rates) = match &self.gups {
            Some(g) => ((g.hot_start, g.hot_start + g.hot_pages), self.rates),
            None => ((0, 0), (0.0, 0.0)),
        };
        AccessDraw {
            now_s: self.now_s,
            now_f32: self.now_s as f32,
            quantum_s: self.quantum_s,
            hot,
            rates,
        }
    }

    fn rate(&self, page: u64) -> f64 {
        match &self.gups {
            Some(g) if g.is_hot(page) => self.rates.0,
            Some(_) => self.rates.1,
            None => 0.0,
        }
    }

    fn pages(&self) -> usize {
        self.gups.as_ref().map_or(0, |g| g.pages as usize)
    }

    /// Mark `page` (below `marked_pages`) with the random stream `rng`: unless it is
    /// marked already, draw the delay to its next access and queue the fault.
    #[inline(always)]
    fn mark_with(&mut self, page: u64, rate: f64, rng: &mut SimRng) {
        let (w, bit) = (page as usize / 64, 1u64 << (page % 64));
        if self.marked[w] & bit != 0 || rate <= 0.0 {
            return;
        }
        self.alloc_near();
        self.queue_delay(page, next_access_delay(rate, rng));
        self.marked[w] |= bit;
    }

    /// Queue the fault of `page` (unmarked), whose next access comes `delay` s after its
    /// marking; the caller sets the page's mark and has made the ring ([`Self::alloc_near`]).
    #[inline(always)]
    fn queue_delay(&mut self, page: u64, delay: f64) {
        // The fault lands in the quantum in which the access happens (at least the next one).
        // Quanta ahead through i64: the same count below 2^63 (delays are never negative)
        // with fewer clamps than the saturating u64 cast (this line: 18 → 11 host
        // instructions of a mark's ≈ 175); a delay past 2^63 quanta stays that far ahead
        // instead of wrapping `q` around.
        let q = self.quantum + 1 + (delay / self.quantum_s) as i64 as u64;
        debug_assert!(page <= u64::from(u32::MAX), "page ids fit 32 bits");
        let fault = (page as u32, delay as f32, self.now_s + delay);
        if q - self.quantum < NEAR_QUANTA {
            debug_assert_eq!(self.near.len(), NEAR_QUANTA as usize);
            // SAFETY: the ring has NEAR_QUANTA buckets (`alloc_near`) and the index is below.
            let bucket = unsafe { self.near.get_unchecked_mut((q % NEAR_QUANTA) as usize) };
            if bucket.capacity() == 0 {
                if let Some(b) = self.spare.pop() {
                    *bucket = b;
                }
            }
            bucket.push(fault);
            // Ask for the bucket's next line now, so the pushes a few marks later do not wait
            // on it.
            crate::hostmem::prefetch(bucket.as_ptr().wrapping_add(bucket.len() + PREFETCH_FAULTS));
        } else {
            self.far.entry(q).or_default().push(fault);
        }
    }

    /// The ring of buckets of near faults, made on first use.
    fn alloc_near(&mut self) {
        if self.near.is_empty() {
            self.near = vec![Vec::new(); NEAR_QUANTA as usize];
        }
    }

    fn alloc_marks(&mut self) {
        if self.marked.is_empty() {
            self.marked_pages = self.pages();
            self.marked = vec![0; self.marked_pages.div_ceil(64)];
        }
    }

    fn alloc_cleared(&mut self) {
        if matches!(self.cleared_at, Cleared::Unallocated) {
            // Quantum 0 starts at 0 s only for a finite quantum; otherwise keep the times.
            self.cleared_at = if self.quantum <= u64::from(u16::MAX) && self.quantum_s.is_finite() {
                Cleared::Quanta(crate::hugevec::filled(self.pages(), 0))
            } else {
                Cleared::Times(crate::hugevec::filled(self.pages(), 0.0))
            };
        }
    }
}

impl PageHardware for StatHardware {
    fn mark(&mut self, page: u64) {
        self.alloc_marks();
        if page as usize >= self.marked_pages {
            return;
        }
        let rate = self.rate(page);
        let mut rng = self.rng.clone();
        self.mark_with(page, rate, &mut rng);
        self.rng = rng;
    }

    fn mark_range(&mut self, pt: &PageTable, from: u64, len: u64, except_tier: Option<usize>) {
        self.alloc_marks();
        let d = self.draw();
        let mut rng = self.rng.clone();
        let end = from.saturating_add(len).min(self.marked_pages as u64);
        if from >= end {
            return;
        }
        self.alloc_near();
        // A word's delays (its first `n` entries written before they are read), zeroed once
        // per call rather than once per word: 1 KiB a word was ≈ 1 % of Colloid-TPP's run.
        let mut delays = [(0u32, 0.0f64); 64];
        // 64 pages at a time: those to mark that are not marked already, as bits. Marking a
        // page changes no other page's bit, so the words can be read before the marks, and
        // a word's new marks are set together after its faults are queued.
        for w in (from / 64) as usize..=((end - 1) / 64) as usize {
            let base = w as u64 * 64;
            let mut todo = match except_tier {
                Some(t) => pt.tier_mask64(t, true, w),
                None => u64::MAX,
            } & !self.marked[w]
                & word_range(base, from, end);
            // The word's delays first, then their faults: the draws depend on nothing but
            // the random stream, so they overlap one another when no bucket writes sit
            // between them. The same draws, in the same order.
            let mut marks = 0;
            let mut n = 0;
            while todo != 0 {
                let b = todo.trailing_zeros();
                let p = base + u64::from(b);
                todo &= todo - 1;
                let rate = if p >= d.hot.0 && p < d.hot.1 {
                    d.rates.0
                } else {
                    d.rates.1
                };
                if rate <= 0.0 {
                    continue;
                }
                delays[n] = (b, next_access_delay(rate, &mut rng));
                n += 1;
                marks |= 1u64 << b;
            }
            for &(b, delay) in &delays[..n] {
                self.queue_delay(base + u64::from(b), delay);
            }
            self.marked[w] |= marks;
        }
        self.rng = rng;
    }

    fn test_and_clear_accessed(&mut self, page: u64) -> bool {
        self.alloc_cleared();
        let d = self.draw();
        let memo = &mut self.seen_memo;
        match &mut self.cleared_at {
            Cleared::Quanta(v) => v.get_mut(page as usize).is_some_and(|c| {
                d.test_and_clear(page, c, self.quantum as u16, memo, &mut self.rng)
            }),
            Cleared::Times(v) => v
                .get_mut(page as usize)
                .is_some_and(|c| d.test_and_clear(page, c, d.now_f32, memo, &mut self.rng)),
            Cleared::Unallocated => false,
        }
    }

    fn sweep_accessed(&mut self, pt: &PageTable, tier: usize, from: u64, len: u64) -> Sweep {
        let mut idle = Vec::with_capacity(1);
        let tested = self.sweep_idle(pt, tier, (from, len), 1, &mut idle);
        Sweep {
            idle: idle.first().copied(),
            tested,
        }
    }

    fn sweep_idle(
        &mut self,
        pt: &PageTable,
        tier: usize,
        (from, len): (u64, u64),
        max_idle: u64,
        idle: &mut Vec<u64>,
    ) -> u64 {
        self.alloc_cleared();
        let d = self.draw();
        let mut rng = self.rng.clone();
        let mut memo = self.seen_memo;
        let range = (from, from.saturating_add(len));
        let out = (max_idle, idle);
        let tested = match &mut self.cleared_at {
            Cleared::Quanta(v) => {
                let now = self.quantum as u16;
                d.sweep(pt, tier, range, v, now, &mut memo, &mut rng, out)
            }
            Cleared::Times(v) => d.sweep(pt, tier, range, v, d.now_f32, &mut memo, &mut rng, out),
            Cleared::Unallocated => unreachable!("allocated above"),
        };
        self.rng = rng;
        self.seen_memo = memo;
        tested
    }
}

/// The bits of the 64-page word starting at page `base` that fall in pages `[from, end)`
/// (the word overlaps the range).
fn word_range(base: u64, from: u64, end: u64) -> u64 {
    let low = if from > base {
        u64::MAX << (from - base)
    } else {
        u64::MAX
    };
    let high = if end - base < 64 {
        (1u64 << (end - base)) - 1
    } else {
        u64::MAX
    };
    low & high
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tier::pages::PageTable;
    use crate::tier::GupsSpec;

    /// Only the page-by-page methods: the trait's own run methods call them.
    struct PageByPage<'a>(&'a mut StatHardware);

    impl PageHardware for PageByPage<'_> {
        fn mark(&mut self, page: u64) {
            self.0.mark(page)
        }
        fn test_and_clear_accessed(&mut self, page: u64) -> bool {
            self.0.test_and_clear_accessed(page)
        }
    }

    /// StatHardware's run methods mark, fault and sweep exactly as page-by-page calls do,
    /// on a table whose tiers interleave and which holds ids past the workload's pages.
    #[test]
    fn runs_draw_as_page_by_page_calls() {
        let spec = GupsSpec {
            working_set_bytes: 64 << 20,
            hot_set_bytes: 16 << 20,
            hot_offset_bytes: Some(8 << 20),
            ..Default::default()
        };
        let g = Gups::new(&spec, 4096);
        let n = g.pages + 500;
        let half = n * 4096 / 2 + 4096 * 64;
        let mut pt = PageTable::first_touch(n, 4096, &[half, half]).unwrap();
        let mut r = crate::rng::stream(4, "t");
        for p in 0..n {
            if r.random::<f64>() < 0.4 {
                let _ = pt.migrate(p, 1 - pt.tier(p));
            }
        }
        let new = || StatHardware::new(0.01, crate::rng::stream(2, "t"));
        let (mut a, mut b) = (new(), new());
        let mut hand = 0;
        for q in 0..300 {
            let fa: Vec<_> = a.begin_quantum(q, &g, 2e6).in_order().collect();
            let fb: Vec<_> = b.begin_quantum(q, &g, 2e6).in_order().collect();
            assert_eq!(fa, fb, "quantum {q}");
            let from = (q * 577) % g.pages;
            let len = (700 + q % 97).min(g.pages - from);
            let except = [Some(0), Some(1), None][q as usize % 3];
            a.mark_range(&pt, from, len, except);
            PageByPage(&mut b).mark_range(&pt, from, len, except);
            for _ in 0..4 {
                let len = (n - hand).min(3000);
                let sa = a.sweep_accessed(&pt, q as usize % 2, hand, len);
                let sb = PageByPage(&mut b).sweep_accessed(&pt, q as usize % 2, hand, len);
                assert_eq!(sa, sb, "quantum {q} from {hand}");
                hand = sa.idle.map_or(hand + len, |p| p + 1) % n;
            }
            // Runs of steps, stopped by the count or by the range's end.
            let (mut ia, mut ib) = (Vec::new(), Vec::new());
            let len = (n - hand).min(5000);
            let max_idle = [1, 3, 40, u64::MAX][q as usize % 4];
            let ta = a.sweep_idle(&pt, q as usize % 2, (hand, len), max_idle, &mut ia);
            let tb =
                PageByPage(&mut b).sweep_idle(&pt, q as usize % 2, (hand, len), max_idle, &mut ib);
            assert_eq!((ta, &ia), (tb, &ib), "quantum {q} run from {hand}");
            hand = ia.last().map_or(hand + len, |p| p + 1) % n;
        }
        assert_eq!(a.rng.random::<u64>(), b.rng.random::<u64>());
    }

    /// A bucket's buffer goes back to the spares when its quantum comes, and a bucket that
    /// gets its first fault, or a quantum whose only faults were far ahead, takes the last
    /// one back: the buffers number at most the most buckets that held faults at once (plus
    /// one), not one per bucket of the ring, and do not grow with the quanta; every fault still
    /// arrives in its quantum, once. Two access rates: faults within a quantum, and faults
    /// mostly past the ring (in `far`).
    #[test]
    fn bucket_buffers_go_round_instead_of_one_per_bucket() {
        let spec = GupsSpec {
            working_set_bytes: 64 << 20,
            hot_set_bytes: 16 << 20,
            ..Default::default()
        };
        let g = Gups::new(&spec, 4096);
        let pt = PageTable::first_touch(g.pages, 4096, &[0, g.pages * 4096]).unwrap();
        let count = |hw: &StatHardware| hw.marked.iter().map(|w| w.count_ones()).sum::<u32>();
        for accesses_per_s in [2e8, 50.0] {
            let mut hw = StatHardware::new(0.01, crate::rng::stream(5, "t"));
            let (mut marked, mut faulted, mut peak) = (0, 0, 0);
            for q in 0..3 * NEAR_QUANTA {
                faulted += hw.begin_quantum(q, &g, accesses_per_s).len();
                // A sixteenth of the pages each quantum, each of them marked again once its
                // fault has come.
                let len = g.pages / 16;
                let before = count(&hw);
                hw.mark_range(&pt, (q * len) % g.pages, len, Some(0));
                marked += (count(&hw) - before) as usize;
                peak = peak.max(hw.near.iter().filter(|b| !b.is_empty()).count());
            }
            let pending = count(&hw) as usize;
            assert_eq!(marked, faulted + pending, "every marked page faults once");
            assert!(
                faulted > 500,
                "{faulted} faults at {accesses_per_s} accesses/s"
            );
            let with_room = hw.near.iter().filter(|b| b.capacity() > 0).count();
            let buffers = with_room + hw.spare.len();
            // At most one buffer more than the most buckets that held faults at once.
            assert!(
                buffers <= peak + 1,
                "{buffers} buffers for at most {peak} buckets in use at {accesses_per_s} accesses/s"
            );
            if accesses_per_s > 1e6 {
                assert!(peak < 64, "{peak} buckets held faults at once");
            } else {
                assert!(!hw.far.is_empty(), "faults past the ring");
            }
        }
    }

    /// Clears kept as 16-bit quanta draw as clears kept as times, also after the quanta
    /// outgrow 16 bits and are converted (some pages then last cleared long before).
    #[test]
    fn quantum_clears_draw_as_time_clears() {
        let spec = GupsSpec {
            working_set_bytes: 4 << 20,
            hot_set_bytes: 1 << 20,
            ..Default::default()
        };
        let g = Gups::new(&spec, 4096);
        let pt = PageTable::first_touch(g.pages, 4096, &[g.pages * 4096, 0]).unwrap();
        let new = || StatHardware::new(0.013, crate::rng::stream(3, "t"));
        let (mut a, mut b) = (new(), new());
        b.cleared_at = Cleared::Times(vec![0.0; g.pages as usize]);
        for q in 0..65_600u64 {
            a.begin_quantum(q, &g, 50.0);
            b.begin_quantum(q, &g, 50.0);
            // A few pages every quantum, a long run now and then.
            let (from, len) = if q % 5000 == 7 || q > 65_530 {
                (0, g.pages)
            } else {
                ((q * 37) % g.pages, 3)
            };
            let sa = a.sweep_accessed(&pt, 0, from, len);
            assert_eq!(sa, b.sweep_accessed(&pt, 0, from, len), "quantum {q}");
            let p = (q * 11) % g.pages;
            assert_eq!(a.test_and_clear_accessed(p), b.test_and_clear_accessed(p));
        }
        assert!(
            matches!(a.cleared_at, Cleared::Times(_)),
            "converted past 16 bits"
        );
        assert_eq!(a.rng.random::<u64>(), b.rng.random::<u64>());
    }

    /// The delays are exponential with mean 1/rate: the mean, the median (ln 2 / rate) and
    /// the tail beyond 5/rate (e^-5) of 400 k draws, within a few standard errors.
    #[test]
    fn access_delays_are_exponential() {
        let mut r = crate::rng::stream(9, "t");
        let rate = 250.0;
        let n = 400_000;
        let mut d: Vec<f64> = (0..n).map(|_| next_access_delay(rate, &mut r)).collect();
        assert!(d.iter().all(|&x| x >= 0.0 && x.is_finite()));
        let mean = d.iter().sum::<f64>() / n as f64;
        // The mean's standard error is (1/rate)/sqrt(n): 0.16 % here.
        assert!((mean * rate - 1.0).abs() < 0.008, "mean {mean}");
        let tail = d.iter().filter(|&&x| x > 5.0 / rate).count() as f64 / n as f64;
        assert!((tail / (-5.0f64).exp() - 1.0).abs() < 0.06, "tail {tail}");
        d.sort_by(f64::total_cmp);
        let median = d[n / 2] * rate;
        assert!((median - 2f64.ln()).abs() < 0.006, "median {median}");
    }

    /// The integer comparison of a sweep draws the same bits as `random::<f64>() < p`.
    #[test]
    fn integer_threshold_matches_the_float_comparison() {
        let mut r = crate::rng::stream(5, "t");
        let mut ps = vec![
            0.0,
            1.0,
            f64::MIN_POSITIVE,
            1e-300,
            0.5,
            1.0 - f64::EPSILON / 2.0,
        ];
        ps.extend((0..2000).map(|_| r.random::<f64>()));
        ps.extend((0..2000).map(|_| 1.0 - (-r.random::<f64>() * 40.0).exp()));
        for p in ps {
            let below = below_of(p);
            for _ in 0..200 {
                let (mut a, mut b) = (r.clone(), r.clone());
                let x = a.next_u64();
                assert_eq!(accessed(x, below), b.random::<f64>() < p, "p {p} x {x}");
                r = a;
            }
            // The draws on either side of the boundary.
            let k = ((p * (1u64 << 53) as f64) as u64).min((1 << 53) - 1);
            // (x >> 11 is below 2^53.)
            for v in [k.saturating_sub(1), k, k + 1]
                .into_iter()
                .filter(|&v| v < 1 << 53)
            {
                let f = v as f64 * (1.0 / (1u64 << 53) as f64);
                assert_eq!(accessed(v << 11, below), f < p, "p {p} v {v}");
            }
        }
        assert_eq!(below_of(f64::NAN), 0);
    }

    #[test]
    fn hot_pages_fault_sooner_than_cold_ones() {
        let spec = GupsSpec {
            working_set_bytes: 1 << 30,
            hot_set_bytes: 256 << 20,
            ..Default::default()
        };
        let g = Gups::new(&spec, 2 << 20);
        let mut hw = StatHardware::new(0.01, crate::rng::stream(1, "t"));
        hw.begin_quantum(0, &g, 1e4);
        for p in 0..g.pages {
            hw.mark(p);
        }
        let (mut hot, mut cold) = (Vec::new(), Vec::new());
        for q in 1..20_000 {
            for f in hw.begin_quantum(q, &g, 1e4).in_order() {
                if g.is_hot(f.page) {
                    hot.push(f.latency_s)
                } else {
                    cold.push(f.latency_s)
                }
            }
        }
        assert_eq!(
            (hot.len() + cold.len()) as u64,
            g.pages,
            "every page faults once"
        );
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        // Rates: hot 1e4·(0.1/512 + 0.9/128) ≈ 72/s, cold 1e4·0.1/512 ≈ 2/s; mean = 1/rate.
        assert!((mean(&hot) * 72.27 - 1.0).abs() < 0.25, "{}", mean(&hot));
        assert!((mean(&cold) * 1.953 - 1.0).abs() < 0.25, "{}", mean(&cold));
    }
}
