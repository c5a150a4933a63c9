//! The halves of a PMem tier's measured window (docs/tiering.md, *PMem as the alternate
//! tier*): what the lifetime without wear leveling needs to be a rate rather than an accident
//! of the window's length.
//!
//! - **Copies that recur.** The most copied page in a window of `T` s is mostly the luckiest
//!   of many pages copied once: one copy in 5 s reads as 0.2 copies/s, in 30 s as 0.033 —
//!   MEMTIS's one-off copies made its no-WL lifetime grow with the window (0.10 years from 5 s,
//!   0.18 from 100 s). So the copy rate is cross-validated: the pages most copied in one half,
//!   counted in the other. A page copied once never counts; a page that keeps being copied
//!   counts at its rate.
//! - **Hot pages still leaving.** The hottest XPLine is a hot page's while any hot page is on
//!   the tier: a placement's last few hot pages, still on their way out of a window whose
//!   throughput is already steady, decide the lifetime. Their count per half says so.
//!
//! Halves as in the throughput drift (`steady.rs`): the middle quantum of an odd window belongs
//! to neither.

use std::ops::Range;

use crate::hash::FastMap;

/// Change of the hot pages on the tier between the halves beyond which the no-WL lifetime is
/// a transient: at least one page, and more than this share of the larger half's mean.
pub(super) const HOT_PAGES_CHANGE_MAX: f64 = 0.1;

/// Per-half counts of a measured window (quanta `window`).
#[derive(Debug, Clone, Default)]
pub(super) struct WindowHalves {
    window: Range<u64>,
    /// Copies into PMem per page in each half.
    copies: [FastMap<u64, u32>; 2],
    /// Hot pages on the tier, summed over each half's quanta, and the half's quanta.
    hot_pages: [f64; 2],
    quanta: [u64; 2],
    seconds: [f64; 2],
}

impl WindowHalves {
    pub(super) fn new(window: Range<u64>) -> WindowHalves {
        WindowHalves {
            window,
            ..Default::default()
        }
    }

    /// The half quantum `q` belongs to, if any.
    fn half(&self, q: u64) -> Option<usize> {
        if !self.window.contains(&q) {
            return None;
        }
        let (k, len) = (q - self.window.start, self.window.end - self.window.start);
        let h = len / 2;
        if k < h {
            Some(0)
        } else if k >= len - h {
            Some(1)
        } else {
            None
        }
    }

    /// Quantum `q` of `quantum_s`: `hot_pages` on the tier, `copied` pages copied into it.
    pub(super) fn quantum(
        &mut self,
        q: u64,
        quantum_s: f64,
        hot_pages: u64,
        copied: impl Iterator<Item = u64>,
    ) {
        let Some(h) = self.half(q) else { return };
        self.hot_pages[h] += hot_pages as f64;
        self.quanta[h] += 1;
        self.seconds[h] += quantum_s;
        for page in copied {
            *self.copies[h].entry(page).or_insert(0) += 1;
        }
    }

    /// Whether both halves were seen (a run that reached the window's end).
    pub(super) fn complete(&self) -> bool {
        self.quanta[0] > 0 && self.quanta[0] == self.quanta[1]
    }

    /// Copies per second into one page, cross-validated: the pages most copied in one half
    /// (all of them, if tied) counted in the other, both ways, averaged. 0 when no page
    /// copied in one half is copied in the other.
    pub(super) fn recurring_copies_per_s(&self) -> f64 {
        let seconds = self.seconds[0];
        if !self.complete() || seconds <= 0.0 {
            return 0.0;
        }
        let seen_in = |pick: &FastMap<u64, u32>, count: &FastMap<u64, u32>| -> f64 {
            let Some(top) = pick.values().copied().max() else {
                return 0.0;
            };
            // Integer sums: the map's order cannot change the result.
            let (mut pages, mut copies) = (0u64, 0u64);
            for (page, &n) in pick {
                if n == top {
                    pages += 1;
                    copies += count.get(page).copied().unwrap_or(0) as u64;
                }
            }
            copies as f64 / pages as f64
        };
        let [a, b] = &self.copies;
        (seen_in(a, b) + seen_in(b, a)) / 2.0 / seconds
    }

    /// Mean hot pages on the tier in each half.
    pub(super) fn hot_pages_per_half(&self) -> [f64; 2] {
        [0, 1].map(|h| self.hot_pages[h] / self.quanta[h].max(1) as f64)
    }

    /// The hot pages on the tier moved between the halves: by at least one page and by more
    /// than [`HOT_PAGES_CHANGE_MAX`] of the larger half's mean.
    pub(super) fn hot_pages_moving(&self) -> bool {
        let [first, second] = self.hot_pages_per_half();
        let change = (second - first).abs();
        self.complete() && change >= 1.0 && change > HOT_PAGES_CHANGE_MAX * first.max(second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quanta of 1 s over window 0..4, the pages copied in each, 10 hot pages throughout.
    fn halves(copies: &[&[u64]]) -> WindowHalves {
        let mut h = WindowHalves::new(0..copies.len() as u64);
        for (q, pages) in copies.iter().enumerate() {
            h.quantum(q as u64, 1.0, 10, pages.iter().copied());
        }
        h
    }

    #[test]
    fn one_off_copies_are_not_a_rate_and_recurring_ones_are() {
        // Every page copied once: none recurs, whatever the window's length.
        assert_eq!(
            halves(&[&[1, 2], &[3], &[4], &[5, 6]]).recurring_copies_per_s(),
            0.0
        );
        // Page 7 copied every second: 2 per 2 s half, seen from both sides.
        let h = halves(&[&[7, 1], &[7], &[7, 2], &[7]]);
        assert_eq!(h.recurring_copies_per_s(), 1.0);
        // Tied pages are averaged: 8 and 9 are the first half's most copied (2 each); 8 is
        // copied twice in the second, 9 never: 1 copy each way round in 2 s ...
        let h = halves(&[&[8, 9], &[8, 9], &[8], &[8]]);
        // ... and the second half's most copied (8) has 2 in the first: (1 + 2) / 2 / 2 s.
        assert_eq!(h.recurring_copies_per_s(), 0.75);
    }

    #[test]
    fn the_middle_quantum_of_an_odd_window_is_in_neither_half() {
        // Page 5 copied only in the middle quantum: it recurs in neither half.
        let h = halves(&[&[1], &[1], &[5, 5], &[1], &[1]]);
        assert_eq!(h.recurring_copies_per_s(), 1.0);
        assert_eq!(h.hot_pages_per_half(), [10.0, 10.0]);
        // A window the run did not finish says nothing.
        let mut h = WindowHalves::new(0..4);
        h.quantum(0, 1.0, 1, [3, 3].into_iter());
        assert!(!h.complete());
        assert_eq!(h.recurring_copies_per_s(), 0.0);
    }

    #[test]
    fn hot_pages_leaving_the_tier_are_a_moving_placement() {
        let hot = |counts: &[u64]| {
            let mut h = WindowHalves::new(0..counts.len() as u64);
            for (q, &n) in counts.iter().enumerate() {
                h.quantum(q as u64, 1.0, n, std::iter::empty());
            }
            h.hot_pages_moving()
        };
        assert!(hot(&[15, 12, 6, 3]), "the last hot pages leaving");
        assert!(hot(&[0, 0, 2, 2]), "hot pages arriving");
        assert!(
            !hot(&[400, 400, 398, 399]),
            "a settled share of the hot set"
        );
        assert!(!hot(&[0, 1, 0, 0]), "a page coming and going");
        assert!(!hot(&[0, 0, 0, 0]));
    }
}
