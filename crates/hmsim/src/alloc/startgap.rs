//! Start-Gap wear leveling (Qureshi et al., MICRO 2009), the hardware comparison point for
//! the OS-level fair allocation policies.
//!
//! N logical lines live in N + 1 physical slots; one slot, the gap, is empty. Every ψ
//! writes the line just below the gap moves into it (one extra write), so the gap walks
//! down; when it reaches slot 0 the line in slot N moves to slot 0, the gap returns to N and
//! `start` advances by one. The mapping is `p = (l + start) mod N; if p >= gap { p + 1 }`.
//! With randomization a fixed random permutation of the line addresses is applied first
//! (the paper uses a Feistel network; a seeded permutation is the same kind of static
//! bijection), so hot lines that are neighbours in the address space spread apart.
//!
//! Here a line is one page frame: the allocator's per-frame allocation counts, times the
//! writes per allocation, are the writes per logical line.

use rand::seq::SliceRandom;

/// The paper's gap-move interval.
pub(crate) const DEFAULT_PSI: u64 = 100;

/// A Start-Gap remapper over `n` lines, stepped write by write: the reference the closed
/// form [`lifetime_runs`] is tested against (the study uses only the closed form).
#[cfg(test)]
#[derive(Debug, Clone)]
pub(crate) struct StartGap {
    n: u64,
    psi: u64,
    start: u64,
    gap: u64,
    writes_since_move: u64,
    /// Optional static randomization (logical → intermediate line).
    perm: Option<Vec<u64>>,
    /// Writes received per physical slot (`n + 1` slots), gap moves included.
    pub wear: Vec<u64>,
}

#[cfg(test)]
impl StartGap {
    pub(crate) fn new(n: u64, psi: u64, randomize_seed: Option<u64>) -> StartGap {
        assert!(n >= 1 && psi >= 1);
        let perm = randomize_seed.map(|s| permutation(n, s));
        StartGap {
            n,
            psi,
            start: 0,
            gap: n,
            writes_since_move: 0,
            perm,
            wear: vec![0; n as usize + 1],
        }
    }

    pub(crate) fn lines(&self) -> u64 {
        self.n
    }

    pub(crate) fn gap(&self) -> u64 {
        self.gap
    }

    /// Physical slot of logical line `l`.
    pub(crate) fn map(&self, l: u64) -> u64 {
        let l = self.perm.as_ref().map_or(l, |p| p[l as usize]);
        let p = (l + self.start) % self.n;
        if p >= self.gap {
            p + 1
        } else {
            p
        }
    }

    /// One write to logical line `l`; moves the gap after every ψ-th write.
    pub(crate) fn write(&mut self, l: u64) {
        let p = self.map(l);
        self.wear[p as usize] += 1;
        self.writes_since_move += 1;
        if self.writes_since_move == self.psi {
            self.writes_since_move = 0;
            self.move_gap();
        }
    }

    /// Move the gap one slot down (copying one line: one write to the old gap slot).
    pub(crate) fn move_gap(&mut self) {
        if self.gap == 0 {
            // Slot N holds the line that wraps to slot 0.
            self.wear[0] += 1;
            self.gap = self.n;
            self.start = (self.start + 1) % self.n;
        } else {
            self.wear[self.gap as usize] += 1;
            self.gap -= 1;
        }
    }
}

/// A seeded random permutation of `0..n` (the last one is kept per thread: a study asks
/// for the same one for every allocator).
pub(crate) fn permutation(n: u64, seed: u64) -> Vec<u64> {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(u64, u64, Vec<u64>)>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with(|c| {
        let mut c = c.borrow_mut();
        if let Some((n0, s0, v)) = c.as_ref() {
            if (*n0, *s0) == (n, seed) {
                return v.clone();
            }
        }
        let mut v: Vec<u64> = (0..n).collect();
        v.shuffle(&mut crate::rng::stream(seed, "alloc.startgap.randomize"));
        *c = Some((n, seed, v.clone()));
        v
    })
}

/// Repetitions of a workload (writes per logical line per run: `writes`) until the most
/// written physical slot reaches `endurance` writes, under Start-Gap with interval `psi`,
/// in the long-run limit.
///
/// After R runs `start` has advanced `R·r` slots, r = total writes / (ψ (N + 1)) per run,
/// so each physical slot has received the writes of a window of `1 + ⌊R·r⌋` consecutive
/// (after randomization) logical lines, each window position for 1/r runs; the gap moves
/// add 1/ψ writes per write. The hottest slot's wear is the heaviest circular window sum
/// divided by r, which grows monotonically with R: bisection finds where it meets the
/// endurance. Slots are treated as receiving their window's writes evenly in time
/// (an approximation: the gap's one-slot shifts are ignored).
pub(crate) fn lifetime_runs(
    writes: &[f64],
    endurance: f64,
    psi: u64,
    randomize_seed: Option<u64>,
) -> f64 {
    let n = writes.len();
    let total: f64 = writes.iter().sum();
    if n == 0 || total <= 0.0 {
        return f64::INFINITY;
    }
    let w: Vec<f64> = match randomize_seed {
        Some(s) => {
            let p = permutation(n as u64, s);
            let mut w = vec![0.0; n];
            for (l, &x) in writes.iter().enumerate() {
                w[p[l] as usize] = x;
            }
            w
        }
        None => writes.to_vec(),
    };
    let overhead = 1.0 + 1.0 / psi as f64;
    let r = total / (psi as f64 * (n as f64 + 1.0));
    let mut windows = WindowSums::new(&w);
    // Hottest-slot wear after `runs` runs.
    let mut wear_after = |runs: f64| -> f64 {
        let window = ((1.0 + (runs * r).floor()) as usize).min(n);
        runs * windows.max(window) / window as f64 * overhead
    };
    let max = w.iter().cloned().fold(0.0, f64::max);
    // Bounds: never worse than without leveling, never better than perfectly even.
    let (mut lo, mut hi) = (endurance / (max * overhead), endurance * n as f64 / total);
    if wear_after(hi) < endurance {
        return hi;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if wear_after(mid) >= endurance {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo <= 1e-6 * hi {
            break;
        }
    }
    hi
}

/// Largest sums of circularly consecutive entries of `w`, window by window, for the
/// bisection above: it asks about the same window again as its bracket narrows (the last
/// answer is kept), and for whole numbers of writes (allocation counts times a whole number
/// of writes) each window is a difference of two prefix sums. Those sums are exact, as is
/// every step of the running sum [`max_window_sum`] takes, so both give the same number; the
/// differences are independent of one another, the running sum is one long chain of adds.
struct WindowSums<'a> {
    w: &'a [f64],
    /// Sums of the first `i` entries of `w` repeated twice (`2n` sums), when exact.
    prefix: Option<Vec<f64>>,
    last: Option<(usize, f64)>,
}

impl<'a> WindowSums<'a> {
    fn new(w: &'a [f64]) -> Self {
        // Whole, non-negative and small enough that twice their total is exact in an f64.
        let whole = w.iter().all(|&x| x >= 0.0 && x.fract() == 0.0)
            && w.iter().sum::<f64>() * 2.0 <= (1u64 << 53) as f64;
        let prefix = whole.then(|| {
            let mut p = Vec::with_capacity(2 * w.len());
            let mut s = 0.0;
            for &x in w.iter().chain(w) {
                p.push(s);
                s += x;
            }
            p
        });
        WindowSums {
            w,
            prefix,
            last: None,
        }
    }

    /// Largest sum of `k` (1..=n) circularly consecutive entries.
    fn max(&mut self, k: usize) -> f64 {
        if let Some((k0, m)) = self.last {
            if k0 == k {
                return m;
            }
        }
        let n = self.w.len();
        let m = match &self.prefix {
            // Window [i, i + k) for every start i < n: p[i + k] - p[i], with i + k at most
            // 2n - 1, the last of the 2n prefix sums.
            Some(p) => max_difference(&p[..n], &p[k..k + n]),
            _ => max_window_sum(self.w, k),
        };
        self.last = Some((k, m));
        m
    }
}

/// The largest `hi[i] - lo[i]` (slices of one length, at least 1): four running maxima, so
/// the subtractions and comparisons of neighbouring windows overlap.
fn max_difference(lo: &[f64], hi: &[f64]) -> f64 {
    let mut best = [f64::NEG_INFINITY; 4];
    let (lo4, hi4) = (lo.chunks_exact(4), hi.chunks_exact(4));
    let (lo_rest, hi_rest) = (lo4.remainder(), hi4.remainder());
    for (a, b) in lo4.zip(hi4) {
        for j in 0..4 {
            let d = b[j] - a[j];
            best[j] = if d > best[j] { d } else { best[j] };
        }
    }
    let mut m = best.into_iter().fold(f64::NEG_INFINITY, f64::max);
    for (a, b) in lo_rest.iter().zip(hi_rest) {
        m = m.max(b - a);
    }
    m
}

/// Largest sum of `k` circularly consecutive entries.
fn max_window_sum(w: &[f64], k: usize) -> f64 {
    let n = w.len();
    let mut s: f64 = w[..k].iter().sum();
    let mut best = s;
    // Window [i+1, i+k]: enters w[i+k] (wrapping past the end), leaves w[i].
    for i in 0..n - 1 {
        let j = i + k;
        s += w[if j >= n { j - n } else { j }] - w[i];
        best = best.max(s);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn assert_bijection(sg: &StartGap) {
        let mut seen = vec![false; sg.lines() as usize + 1];
        for l in 0..sg.lines() {
            let p = sg.map(l) as usize;
            assert!(p <= sg.lines() as usize, "slot {p} out of range");
            assert!(!seen[p], "two lines map to slot {p}");
            assert_ne!(p as u64, sg.gap(), "a line maps to the gap");
            seen[p] = true;
        }
    }

    proptest! {
        /// The prefix-sum windows give exactly the running sum's answer for whole numbers of
        /// writes, and fractional ones take the running sum itself.
        #[test]
        fn window_sums_equal_the_running_sum(
            counts in proptest::collection::vec(0u32..5000, 1..300),
            per in prop_oneof![Just(1.0), Just(64.0), Just(0.37)],
            ks in proptest::collection::vec(0usize..400, 1..12),
        ) {
            let w: Vec<f64> = counts.iter().map(|&c| c as f64 * per).collect();
            let mut sums = WindowSums::new(&w);
            if per != 0.37 {
                prop_assert!(sums.prefix.is_some(), "whole numbers of writes take the prefix sums");
            }
            for k in ks {
                let k = 1 + k % w.len();
                prop_assert_eq!(sums.max(k).to_bits(), max_window_sum(&w, k).to_bits(), "k {}", k);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn mapping_is_a_bijection_at_every_step(
            n in 1u64..40,
            psi in 1u64..5,
            rand in proptest::option::of(0u64..1000),
            writes in proptest::collection::vec(0u64..40, 0..300),
        ) {
            let mut sg = StartGap::new(n, psi, rand);
            assert_bijection(&sg);
            for l in writes {
                sg.write(l % n);
                assert_bijection(&sg);
            }
        }
    }

    #[test]
    fn a_full_rotation_shifts_every_line_by_one() {
        let n = 8;
        let mut sg = StartGap::new(n, 1, None);
        let before: Vec<u64> = (0..n).map(|l| sg.map(l)).collect();
        for _ in 0..=n {
            sg.move_gap();
        }
        // Back to gap N, start advanced: line l now sits where line l+1 sat.
        assert_eq!(sg.gap(), n);
        for l in 0..n {
            assert_eq!(sg.map(l), before[((l + 1) % n) as usize]);
        }
    }

    #[test]
    fn no_leveling_needed_for_even_writes_and_one_hot_line_spreads() {
        // Even writes: lifetime is the ideal minus the gap-move overhead.
        let even = vec![1.0; 64];
        let l = lifetime_runs(&even, 1e6, 100, None);
        assert!((l - 1e6 / 1.01).abs() / l < 1e-6, "{l}");
        // One hot line: without leveling it dies after E/hot runs; Start-Gap spreads it.
        let mut hot = vec![0.0; 64];
        hot[5] = 1000.0;
        let l = lifetime_runs(&hot, 1e6, 100, None);
        assert!(l > 10.0 * 1e6 / 1000.0, "{l}");
        assert!(l <= 1e6 * 64.0 / 1000.0 + 1e-6);
    }

    #[test]
    fn analytic_lifetime_matches_stepped_simulation() {
        // A hot region of 8 lines among 64; repeat the run until a slot reaches endurance.
        let n = 64u64;
        let mut writes = vec![1.0; n as usize];
        for w in &mut writes[10..18] {
            *w = 20.0;
        }
        let endurance = 4000.0;
        for rand in [None, Some(7)] {
            let model = lifetime_runs(&writes, endurance, 4, rand);
            let mut sg = StartGap::new(n, 4, rand);
            let mut runs = 0u64;
            while *sg.wear.iter().max().unwrap() < endurance as u64 {
                // Interleave lines as a workload would.
                for k in 0..20 {
                    for l in 0..n {
                        if (writes[l as usize] as u64) > k {
                            sg.write(l);
                        }
                    }
                }
                runs += 1;
            }
            let ratio = model / runs as f64;
            assert!(
                (0.75..1.33).contains(&ratio),
                "{rand:?}: model {model} vs stepped {runs}"
            );
        }
    }
}
