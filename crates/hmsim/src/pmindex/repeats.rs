//! Loads and stores that repeat the line of the event just before them, held back by the
//! region as counts for an observer that answers such accesses by their count alone
//! (`PmObserver::takes_repeats`: the cache model, where the line is still
//! in the issuing core's L1, in the slot its last access left it). Most of an index's
//! accesses are such repeats (a node's keys and pointers read one after another: 49–71 % of
//! a 1 M-key Load's events, 69 % of P-ART's scans), and counting one costs a compare where
//! an event costs a call into the model.

use crate::cache::LINE_BYTES as LINE;

/// Repeats held back, to be delivered in place of their events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// The core that issued them, and their line (line number, not address).
    pub core: usize,
    pub line: u64,
    pub loads: u64,
    pub stores: u64,
    /// Bytes the stores wrote, together.
    pub store_bytes: u64,
}

/// No line: lines of a region are far below it.
const NONE: u64 = u64::MAX;

/// The region's side: the last delivered event's line while repeats are taken, and the
/// counts held since.
#[derive(Debug, Clone, Copy)]
pub(super) struct Repeats {
    on: bool,
    /// The line of the last delivered event when it was a single-line load or store by
    /// `core` (NONE otherwise, and always NONE while off).
    line: u64,
    core: usize,
    loads: u64,
    stores: u64,
    store_bytes: u64,
}

impl Repeats {
    pub(super) const OFF: Repeats = Repeats {
        on: false,
        line: NONE,
        core: 0,
        loads: 0,
        stores: 0,
        store_bytes: 0,
    };

    /// Whether `core`'s access of `len` bytes at `off` lies in the line of the event just
    /// delivered, by the same core: then it is counted here (as a store when `store`) and
    /// no event is due.
    #[inline(always)]
    pub(super) fn absorb(&mut self, core: usize, off: u64, len: u64, store: bool) -> bool {
        let line = off / LINE;
        if line != self.line || core != self.core || (off + len.max(1) - 1) / LINE != line {
            return false;
        }
        if store {
            self.stores += 1;
            self.store_bytes += len;
        } else {
            self.loads += 1;
        }
        true
    }

    /// `absorb` of `loads` single-line loads of `line` by `core` together: they are held
    /// when the run is on that line and core (each alone would be), and then true.
    #[inline(always)]
    pub(super) fn absorb_loads(&mut self, core: usize, line: u64, loads: u64) -> bool {
        if line != self.line || core != self.core {
            return false;
        }
        self.loads += loads;
        true
    }

    /// The counts held, cleared (None when there are none).
    #[inline(always)]
    pub(super) fn take(&mut self) -> Option<Held> {
        if self.loads | self.stores == 0 {
            return None;
        }
        let h = Held {
            core: self.core,
            line: self.line,
            loads: self.loads,
            stores: self.stores,
            store_bytes: self.store_bytes,
        };
        (self.loads, self.stores, self.store_bytes) = (0, 0, 0);
        Some(h)
    }

    /// An event by `core` was delivered (after `take`): a load or store of `len` bytes at
    /// `off` within one line (`Some((off, len))`) opens a run of repeats, anything else
    /// (None) ends it.
    #[inline(always)]
    pub(super) fn delivered(&mut self, core: usize, access: Option<(u64, u64)>) {
        self.line = match access {
            Some((off, len)) if self.on && off / LINE == (off + len.max(1) - 1) / LINE => {
                off / LINE
            }
            _ => NONE,
        };
        self.core = core;
    }

    /// The observer was reached other than by an event (after `take`): no run continues.
    pub(super) fn forget_line(&mut self) {
        self.line = NONE;
    }

    /// Take repeats from now on (`on`) or not (after `take`).
    pub(super) fn set_on(&mut self, on: bool) {
        debug_assert!(self.loads | self.stores == 0, "counts held across a switch");
        self.on = on;
        self.line = NONE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> Repeats {
        let mut r = Repeats::OFF;
        r.set_on(true);
        r
    }

    #[test]
    fn only_single_line_accesses_of_the_last_events_line_and_core_are_held() {
        let mut r = on();
        assert!(!r.absorb(0, 64, 8, false), "nothing delivered yet");
        r.delivered(0, Some((64, 8)));
        assert!(r.absorb(0, 120, 8, false));
        assert!(r.absorb(0, 64, 64, true));
        assert!(!r.absorb(1, 72, 8, false), "another core");
        assert!(!r.absorb(0, 128, 8, false), "another line");
        assert!(!r.absorb(0, 120, 16, false), "two lines");
        let held = Held {
            core: 0,
            line: 1,
            loads: 1,
            stores: 1,
            store_bytes: 64,
        };
        assert_eq!(r.take(), Some(held));
        assert_eq!(r.take(), None);
        // A two-line access or any other event opens no run; a one-line access does.
        for (e, opens) in [(Some((60, 8)), false), (None, false), (Some((64, 8)), true)] {
            r.delivered(0, e);
            assert_eq!(r.absorb(0, 64, 8, false), opens, "{e:?}");
            r.take();
        }
        r.forget_line();
        assert!(!r.absorb(0, 64, 8, false));
        let mut off = Repeats::OFF;
        off.delivered(0, Some((64, 8)));
        assert!(!off.absorb(0, 64, 8, false), "off holds nothing");
    }
}
