//! A quantum's NUMA hint faults as the policy reads them: in the order they happened, each
//! bucket of them sorted only when the policy reaches it. A policy whose decisions stop
//! depending on the order part-way through (TPP once the default tier is down to its high
//! watermark: every later fault only counts) takes the rest unsorted
//! ([`InOrder::for_each_rest`]), and the sorting of those faults is never done.

use std::cell::Cell;

/// A NUMA hint fault: `page` was accessed `latency_s` after the scan marked it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HintFault {
    pub page: u64,
    pub latency_s: f64,
}

/// A pending fault: (page, delay after marking in s, fault time in s). 16 bytes: the
/// buckets of pending faults are written at random and read back once, so their size is
/// what a mark and a quantum's delivery cost (page ids fit 32 bits: the scenario refuses
/// more pages).
pub(super) type Fault = (u32, f32, f64);

/// The order faults happen in: time, then page (a total order: a page is pending at most
/// once).
#[inline(always)]
fn key(f: &Fault) -> (u64, u32) {
    (f.2.to_bits(), f.0)
}

#[inline(always)]
fn hint(f: &Fault) -> HintFault {
    HintFault {
        page: u64::from(f.0),
        latency_s: f64::from(f.1),
    }
}

/// The faults of one quantum.
#[derive(Default)]
pub struct HintFaults {
    len: usize,
    repr: Repr,
}

enum Repr {
    /// In the order given (a trace replay's faults, as they were taken).
    Given(Vec<HintFault>),
    /// In buckets whose order is the faults' order: bucket `i` is `faults[ends[i - 1] ..
    /// ends[i]]` (from 0 for the first), in no order inside. A reader sorts the buckets it
    /// reaches in place (a bucket sorted is still a bucket), holding the faults meanwhile.
    Buckets {
        faults: Cell<Vec<Fault>>,
        ends: Vec<u32>,
    },
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Given(Vec::new())
    }
}

impl HintFaults {
    /// Faults to hand over in the order of `v`.
    pub fn given(v: Vec<HintFault>) -> HintFaults {
        HintFaults {
            len: v.len(),
            repr: Repr::Given(v),
        }
    }

    fn buckets(faults: Vec<Fault>, ends: Vec<u32>) -> HintFaults {
        HintFaults {
            len: faults.len(),
            repr: Repr::Buckets {
                faults: Cell::new(faults),
                ends,
            },
        }
    }

    /// The faults of `v` (pending faults in any order), to be read in (time bits, page)
    /// order. They are distributed into as many buckets as faults by their time's position
    /// between the earliest and the latest: the bucket index `⌊(at − min) · n / (max −
    /// min)⌋` never decreases as `at` grows (each floating-point step is monotone), so
    /// buckets in order hold the faults in order; for non-negative times the bits order as
    /// the numbers do (anything else goes into one bucket, sorted whole).
    pub(super) fn bucketed(v: &[Fault]) -> HintFaults {
        let n = v.len();
        // The range in one pass over the bits: they order as the numbers do for
        // non-negative times, and a negative time, an infinite one or NaN has bits at or
        // above +∞'s.
        let (mut lo_bits, mut hi_bits) = (u64::MAX, 0u64);
        for f in v {
            let b = f.2.to_bits();
            lo_bits = lo_bits.min(b);
            hi_bits = hi_bits.max(b);
        }
        let (lo, hi) = (f64::from_bits(lo_bits), f64::from_bits(hi_bits));
        let scale = n as f64 / (hi - lo);
        if n < 64 || hi_bits >= f64::INFINITY.to_bits() || hi <= lo || !scale.is_finite() {
            return HintFaults::buckets(v.to_vec(), vec![n as u32]);
        }
        let bucket = |at: f64| {
            // SAFETY: lo <= at <= hi, all finite, and scale is finite: the product lies in
            // [0, n] up to rounding, well inside i64 (the saturating cast's checks, or an
            // unsigned cast's, would only cost time).
            let b: i64 = unsafe { ((at - lo) * scale).to_int_unchecked() };
            (b as usize).min(n - 1)
        };
        // Counts per bucket, turned in place into each bucket's first slot; the scatter
        // advances each to its bucket's end, which is what `ends` keeps.
        let mut ends = vec![0u32; n];
        for f in v {
            ends[bucket(f.2)] += 1;
        }
        let mut at = 0;
        for e in ends.iter_mut() {
            (*e, at) = (at, at + *e);
        }
        let mut faults: Vec<Fault> = Vec::with_capacity(n);
        let slots = &mut faults.spare_capacity_mut()[..n];
        for f in v {
            let s = &mut ends[bucket(f.2)];
            slots[*s as usize].write(*f);
            *s += 1;
        }
        // SAFETY: the scatter wrote every one of the n slots: bucket b's slots run from the
        // sum of the counts before it for its count, so the buckets' slots tile 0..n.
        unsafe { faults.set_len(n) };
        HintFaults::buckets(faults, ends)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The faults in the order they happened (one reader at a time: the faults are held
    /// by the reader until it is dropped).
    pub fn in_order(&self) -> InOrder<'_> {
        let (given, home, faults, ends): (&[HintFault], _, _, &[u32]) = match &self.repr {
            Repr::Given(v) => (v, None, Vec::new(), &[]),
            Repr::Buckets { faults, ends } => {
                let held = faults.take();
                assert_eq!(
                    held.len(),
                    self.len,
                    "one reader of the hint faults at a time"
                );
                (&[], Some(faults), held, ends)
            }
        };
        InOrder {
            given,
            home,
            faults,
            ends,
            bucket: 0,
            sorted_to: 0,
            next: 0,
        }
    }
}

/// Faults [`InOrder`] sorts at a time: a few buckets' worth.
const CHUNK: usize = 32;

/// [`HintFaults`] read in order: an iterator, whose [`for_each_rest`](InOrder::for_each_rest)
/// gives the faults not read yet without ordering them.
pub struct InOrder<'a> {
    /// The faults of [`Repr::Given`] (empty for buckets), handed out up to `next`.
    given: &'a [HintFault],
    /// Where the bucketed faults go back when the reader is done.
    home: Option<&'a Cell<Vec<Fault>>>,
    faults: Vec<Fault>,
    ends: &'a [u32],
    /// The next bucket to sort, and where it starts: `faults[..sorted_to]` is in order.
    bucket: usize,
    sorted_to: usize,
    /// The next fault to hand out.
    next: usize,
}

impl Drop for InOrder<'_> {
    fn drop(&mut self) {
        if let Some(home) = self.home {
            home.set(std::mem::take(&mut self.faults));
        }
    }
}

impl Iterator for InOrder<'_> {
    type Item = HintFault;

    #[inline(always)]
    fn next(&mut self) -> Option<HintFault> {
        if self.next < self.sorted_to {
            let f = hint(&self.faults[self.next]);
            self.next += 1;
            return Some(f);
        }
        self.refill()
    }
}

impl InOrder<'_> {
    /// The next fault once the sorted ones are handed out: sort the next buckets in place.
    #[inline(never)]
    fn refill(&mut self) -> Option<HintFault> {
        if !self.given.is_empty() {
            let f = self.given.get(self.next).copied();
            self.next += usize::from(f.is_some());
            return f;
        }
        let target = self.sorted_to + CHUNK;
        while self.sorted_to < target {
            let Some(&end) = self.ends.get(self.bucket) else {
                break;
            };
            let s = &mut self.faults[self.sorted_to..end as usize];
            if s.len() > 8 {
                s.sort_unstable_by_key(key);
            } else {
                // Most buckets hold one or two faults: an insertion sort, no call.
                for i in 1..s.len() {
                    let mut j = i;
                    while j > 0 && key(&s[j]) < key(&s[j - 1]) {
                        s.swap(j, j - 1);
                        j -= 1;
                    }
                }
            }
            self.bucket += 1;
            self.sorted_to = end as usize;
        }
        let f = (self.next < self.sorted_to).then(|| hint(&self.faults[self.next]));
        self.next += usize::from(f.is_some());
        f
    }

    /// The page of the fault `k` further on (in the buckets' order past the sorted ones):
    /// for fetching the policy's state of pages it reads soon.
    #[inline(always)]
    pub fn page_ahead(&self, k: usize) -> Option<u64> {
        match self.faults.get(self.next + k) {
            Some(f) => Some(u64::from(f.0)),
            None => self.given.get(self.next + k).map(|f| f.page),
        }
    }

    /// Calls `f` on each fault not handed out yet, in no particular order, with the page of
    /// the fault `ahead` calls further on (if any; for fetching what `f` reads of it).
    #[inline(always)]
    pub fn for_each_rest(&self, ahead: usize, mut f: impl FnMut(HintFault, Option<u64>)) {
        let given = self.given.get(self.next..).unwrap_or_default();
        for (i, g) in given.iter().enumerate() {
            f(*g, given.get(i + ahead).map(|a| a.page));
        }
        let rest = self.faults.get(self.next..).unwrap_or_default();
        for (i, h) in rest.iter().enumerate() {
            f(hint(h), rest.get(i + ahead).map(|a| u64::from(a.0)));
        }
    }

    /// The faults not handed out yet, in no particular order.
    #[cfg(test)]
    pub fn rest(&self) -> Vec<HintFault> {
        let mut v = Vec::new();
        self.for_each_rest(0, |f, _| v.push(f));
        v
    }
}

#[cfg(test)]
mod tests {
    use rand::Rng;

    use super::*;

    fn faults(n: usize, seed: u64) -> Vec<Fault> {
        let mut rng = crate::rng::stream(seed, "t");
        let mut v: Vec<Fault> = (0..n as u64)
            .map(|page| {
                // Times inside one quantum, some repeated (ties go by page).
                let at = if rng.random::<f64>() < 0.1 {
                    1.25
                } else {
                    1.2 + 0.01 * rng.random::<f64>()
                };
                ((page * 7 % 10_007) as u32, rng.random::<f32>(), at)
            })
            .collect();
        if n == 5001 {
            // A time with no place in the buckets: one bucket, sorted whole.
            v[7].2 = -0.0;
        }
        v
    }

    fn sorted(v: &[Fault]) -> Vec<HintFault> {
        let mut want = v.to_vec();
        want.sort_unstable_by_key(key);
        want.iter().map(hint).collect()
    }

    #[test]
    fn read_in_order_as_the_comparison_sort() {
        for n in [0usize, 1, 63, 64, 500, 5000, 5001] {
            let v = faults(n, 3);
            let got: Vec<HintFault> = HintFaults::bucketed(&v).in_order().collect();
            assert_eq!(got, sorted(&v), "{n}");
        }
        let given = sorted(&faults(100, 4));
        let h = HintFaults::given(given.clone());
        assert_eq!(h.in_order().collect::<Vec<_>>(), given);
        assert_eq!(h.len(), 100);
    }

    proptest::proptest! {
        /// Read in order up to any point, the rest holds every fault not read, once.
        #[test]
        fn the_rest_is_every_fault_not_read(n in 0usize..3000, stop in 0usize..3000, seed in 0u64..50, given: bool) {
            let v = faults(n, seed);
            let h = if given {
                HintFaults::given(sorted(&v))
            } else {
                HintFaults::bucketed(&v)
            };
            let mut it = h.in_order();
            let read: Vec<HintFault> = it.by_ref().take(stop).collect();
            let all = sorted(&v);
            proptest::prop_assert_eq!(&read[..], &all[..stop.min(n)]);
            let key = |f: &HintFault| (f.page, f.latency_s.to_bits());
            let mut rest: Vec<_> = it.rest().iter().map(key).collect();
            let mut want: Vec<_> = all[stop.min(n)..].iter().map(key).collect();
            rest.sort_unstable();
            want.sort_unstable();
            proptest::prop_assert_eq!(rest, want);
            // And the order goes on where it stopped.
            let after: Vec<HintFault> = it.collect();
            proptest::prop_assert_eq!(&after[..], &all[stop.min(n)..]);
        }
    }
}
