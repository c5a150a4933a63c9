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
    /// arrive in.
    pending: FastMap<u64, Vec<(u64, f32, f64)>>,
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
            pending: FastMap::default(),
            rng,
            rates: (0.0, 0.0),
            seen_memo: [(u32::MAX, 0.0); 2],
        }
    }

    /// Start quantum `q`: the workload's current state and access rate; returns the faults
    /// that arrive in this quantum.
    pub fn begin_quantum(&mut self, q: u64, gups: &Gups, accesses_per_s: f64) -> Vec<HintFault> {
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
        let Some(mut pages) = self.pending.remove(&q) else {
            return Vec::new();
        };
        // In the order they happen within the quantum (the kernel handles them so). Fault
        // times are non-negative, so their bits order as the numbers do, and a page is
        // pending at most once: an unstable sort on (time bits, page) is a total order.
        pages.sort_unstable_by_key(|&(page, _, at)| (at.to_bits(), page));
        let mut out = Vec::with_capacity(pages.len());
        for (page, delay, _) in pages {
            self.marked_at[page as usize] = -1.0;
            out.push(HintFault {
                page,
                latency_s: delay as f64,
            });
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
        self.pending
            .entry(q)
            .or_default()
            .push((page, delay as f32, self.now_s + delay));
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
