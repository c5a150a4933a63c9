//! The page-level "hardware" a kernel policy uses besides PEBS: NUMA hint faults (a scan
//! marks a PTE inaccessible; the next access faults) and the accessed bit (LRU aging). In
//! statistical mode both are drawn from the workload's true per-page access rates — the
//! policy sees only the faults and bits, never the rates.

use rand::Rng;

use crate::hash::FastMap;
use crate::rng::SimRng;

use super::workload::Gups;

/// A NUMA hint fault: `page` was accessed `latency_s` after the scan marked it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HintFault {
    pub page: u64,
    pub latency_s: f64,
}

/// What a kernel policy can do to pages besides migrating them.
pub trait PageHardware {
    /// Mark `page` PROT_NONE: its next access raises a hint fault, delivered in a later
    /// quantum's `Observation::hint_faults`. Marking a page already marked does nothing.
    fn mark(&mut self, page: u64);
    /// Test and clear the page's accessed bit: true if it was accessed since the last clear.
    fn test_and_clear_accessed(&mut self, page: u64) -> bool;
}

/// Hardware with no pages to mark (for policies that do not use it, and tests).
pub struct NoHardware;

impl PageHardware for NoHardware {
    fn mark(&mut self, _page: u64) {}
    fn test_and_clear_accessed(&mut self, _page: u64) -> bool {
        false
    }
}

/// A pending fault: (page, delay after marking in s, fault time in s).
type Fault = (u64, f32, f64);

/// Quanta ahead whose faults go to the ring of buckets (most marked pages fault within a
/// few hundred quanta; the rest wait in a map).
const NEAR_QUANTA: u64 = 512;

/// Sorts faults by (time bits, page) — the order of a comparison sort on that key, which is
/// total — by distributing them into as many buckets as faults by their time's position
/// between the earliest and the latest, then sorting each (small) bucket. The bucket index
/// `⌊(at − min) · n / (max − min)⌋` never decreases as `at` grows (each floating-point step
/// is monotone), so buckets in order hold the faults in order; for non-negative times the
/// bits order as the numbers do (anything else takes the comparison sort).
fn sort_faults(v: &mut Vec<Fault>, scratch: &mut Vec<Fault>, starts: &mut Vec<u32>) {
    let key = |f: &Fault| (f.2.to_bits(), f.0);
    let n = v.len();
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), f| {
            (lo.min(f.2), hi.max(f.2))
        });
    let plain = v
        .iter()
        .all(|f| f.2.is_finite() && f.2.to_bits() >> 63 == 0);
    if n < 64 || !plain || hi <= lo {
        v.sort_unstable_by_key(key);
        return;
    }
    let scale = n as f64 / (hi - lo);
    let bucket = |at: f64| (((at - lo) * scale) as usize).min(n - 1);
    starts.clear();
    starts.resize(n + 1, 0);
    for f in v.iter() {
        starts[bucket(f.2) + 1] += 1;
    }
    for b in 0..n {
        starts[b + 1] += starts[b];
    }
    scratch.clear();
    scratch.resize(n, (0, 0.0, 0.0));
    {
        let mut next = starts[..n].to_vec();
        for f in v.iter() {
            let b = bucket(f.2);
            scratch[next[b] as usize] = *f;
            next[b] += 1;
        }
    }
    std::mem::swap(v, scratch);
    for b in 0..n {
        let (a, z) = (starts[b] as usize, starts[b + 1] as usize);
        if z - a > 1 {
            v[a..z].sort_unstable_by_key(key);
        }
    }
}

/// Statistical-mode hardware: per-page access times are exponential with the page's true
/// access rate at the time of the draw (an approximation when the rate changes while a
/// page is marked: the draw is not redone).
pub struct StatHardware {
    now_s: f64,
    quantum_s: f64,
    quantum: u64,
    accesses_per_s: f64,
    gups: Option<Gups>,
    /// Mark time per page (s), negative when unmarked; allocated on first use.
    marked_at: Vec<f32>,
    /// Time of the last accessed-bit clear per page (s); allocated on first use.
    cleared_at: Vec<f32>,
    /// Faults (page, delay after marking in s, fault time in s) by the quantum they
    /// arrive in: within [`NEAR_QUANTA`] of the current quantum in a ring of buckets
    /// (`near[q % NEAR_QUANTA]`, their buffers reused), later ones in `far`.
    near: Vec<Vec<Fault>>,
    far: FastMap<u64, Vec<Fault>>,
    /// Buffers of the fault sort.
    scratch: Vec<Fault>,
    starts: Vec<u32>,
    rng: SimRng,
    /// Access rate of a (hot, cold) page this quantum, per s.
    rates: (f64, f64),
    /// Memo of the accessed-bit probability this quantum, by (last-clear time bits, hot):
    /// a sweep visits runs of pages cleared at the same time, so one `exp` serves a run
    /// (the same value as computing it per page: results are unchanged).
    seen_memo: [(u32, f64); 2],
}

impl StatHardware {
    pub fn new(quantum_s: f64, rng: SimRng) -> Self {
        StatHardware {
            now_s: 0.0,
            quantum_s,
            quantum: 0,
            accesses_per_s: 0.0,
            gups: None,
            marked_at: Vec::new(),
            cleared_at: Vec::new(),
            near: Vec::new(),
            far: FastMap::default(),
            scratch: Vec::new(),
            starts: Vec::new(),
            rng,
            rates: (0.0, 0.0),
            seen_memo: [(u32::MAX, 0.0); 2],
        }
    }

    /// Start quantum `q`: the workload's current state and access rate; returns the faults
    /// that arrive in this quantum. Called for every quantum in order (the ring of pending
    /// faults relies on it).
    pub fn begin_quantum(&mut self, q: u64, gups: &Gups, accesses_per_s: f64) -> Vec<HintFault> {
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
        // NaN bits never match a stored time: the memo starts empty every quantum.
        self.seen_memo = [(u32::MAX, 0.0); 2];
        let slot = (q % NEAR_QUANTA) as usize;
        let mut pages = match self.near.get_mut(slot) {
            Some(b) if !b.is_empty() => std::mem::take(b),
            _ => Vec::new(),
        };
        if let Some(f) = self.far.remove(&q) {
            pages.extend(f);
        }
        if pages.is_empty() {
            return Vec::new();
        }
        // In the order they happen within the quantum (the kernel handles them so). Fault
        // times are non-negative, so their bits order as the numbers do, and a page is
        // pending at most once: (time bits, page) is a total order, whatever order the
        // faults were queued in.
        sort_faults(&mut pages, &mut self.scratch, &mut self.starts);
        let mut out = Vec::with_capacity(pages.len());
        for &(page, delay, _) in &pages {
            self.marked_at[page as usize] = -1.0;
            out.push(HintFault {
                page,
                latency_s: delay as f64,
            });
        }
        pages.clear();
        if let Some(b) = self.near.get_mut(slot) {
            *b = pages;
        }
        out
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
}

impl PageHardware for StatHardware {
    fn mark(&mut self, page: u64) {
        if self.marked_at.is_empty() {
            self.marked_at = vec![-1.0; self.pages()];
        }
        let Some(&m) = self.marked_at.get(page as usize) else {
            return;
        };
        if m >= 0.0 {
            return;
        }
        let rate = self.rate(page);
        if rate <= 0.0 {
            return;
        }
        let delay = -(1.0 - self.rng.random::<f64>()).ln() / rate;
        // The fault lands in the quantum in which the access happens (at least the next one).
        let q = self.quantum + 1 + (delay / self.quantum_s) as u64;
        self.marked_at[page as usize] = self.now_s as f32;
        let fault = (page, delay as f32, self.now_s + delay);
        if q - self.quantum < NEAR_QUANTA {
            if self.near.is_empty() {
                self.near = vec![Vec::new(); NEAR_QUANTA as usize];
            }
            self.near[(q % NEAR_QUANTA) as usize].push(fault);
        } else {
            self.far.entry(q).or_default().push(fault);
        }
    }

    fn test_and_clear_accessed(&mut self, page: u64) -> bool {
        if self.cleared_at.is_empty() {
            self.cleared_at = vec![0.0; self.pages()];
        }
        let Some(&c) = self.cleared_at.get(page as usize) else {
            return false;
        };
        self.cleared_at[page as usize] = self.now_s as f32;
        let hot = self.gups.as_ref().is_some_and(|g| g.is_hot(page));
        let memo = &mut self.seen_memo[usize::from(hot)];
        if memo.0 != c.to_bits() {
            let dt = (self.now_s - c as f64).max(0.0);
            let rate = match &self.gups {
                Some(_) if hot => self.rates.0,
                Some(_) => self.rates.1,
                None => 0.0,
            };
            *memo = (c.to_bits(), 1.0 - (-rate * dt).exp());
        }
        let p = memo.1;
        self.rng.random::<f64>() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tier::GupsSpec;

    #[test]
    fn bucket_sort_of_faults_orders_as_the_comparison_sort() {
        let mut rng = crate::rng::stream(3, "t");
        let (mut scratch, mut starts) = (Vec::new(), Vec::new());
        for n in [0usize, 1, 63, 64, 500, 5000] {
            let mut v: Vec<Fault> = (0..n as u64)
                .map(|page| {
                    // Times inside one quantum, some repeated (ties go by page).
                    let at = if rng.random::<f64>() < 0.1 {
                        1.25
                    } else {
                        1.2 + 0.01 * rng.random::<f64>()
                    };
                    (page * 7 % 10_007, rng.random::<f32>(), at)
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable_by_key(|&(page, _, at)| (at.to_bits(), page));
            sort_faults(&mut v, &mut scratch, &mut starts);
            assert_eq!(v, want, "{n}");
        }
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
            for f in hw.begin_quantum(q, &g, 1e4) {
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
