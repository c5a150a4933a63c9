//! Loads and stores that repeat the line of the event just before them, held back by the
//! region as counts for an observer that answers such accesses by their count alone
//! ([`super::region::PmObserver::takes_repeats`]: the cache model, where the line is still
//! in the issuing core's L1, in the slot its last access left it). Most of an index's
//! accesses are such repeats (a node's keys and pointers read one after another: 49–71 % of
//! a 1 M-key Load's events, 69 % of P-ART's scans), and counting one costs a compare where
//! an event costs a call into the model.

use super::region::{PmEvent, LINE};

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

    /// `e` was delivered by `core` (after `take`): a single-line load or store opens a run
    /// of repeats, anything else ends it.
    #[inline(always)]
    pub(super) fn delivered(&mut self, core: usize, e: &PmEvent) {
        self.line = match *e {
            PmEvent::Load { off, len } | PmEvent::Store { off, len }
                if self.on && off / LINE == (off + u64::from(len.max(1)) - 1) / LINE =>
            {
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
    use crate::pmindex::region::{PmObserver, PmRegion, RegionConfig};

    fn on() -> Repeats {
        let mut r = Repeats::OFF;
        r.set_on(true);
        r
    }

    #[test]
    fn only_single_line_accesses_of_the_last_events_line_and_core_are_held() {
        let mut r = on();
        assert!(!r.absorb(0, 64, 8, false), "nothing delivered yet");
        r.delivered(0, &PmEvent::Load { off: 64, len: 8 });
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
        // A two-line event, a flush or a fence opens no run; a store does.
        for (e, opens) in [
            (PmEvent::Store { off: 60, len: 8 }, false),
            (
                PmEvent::Flush {
                    off: 64,
                    kind: crate::cache::FlushKind::Clwb,
                },
                false,
            ),
            (PmEvent::Fence, false),
            (PmEvent::NtStore { off: 64, len: 8 }, false),
            (PmEvent::Store { off: 64, len: 8 }, true),
        ] {
            r.delivered(0, &e);
            assert_eq!(r.absorb(0, 64, 8, false), opens, "{e:?}");
            r.take();
        }
        r.forget_line();
        assert!(!r.absorb(0, 64, 8, false));
        let mut off = Repeats::OFF;
        off.delivered(0, &PmEvent::Load { off: 64, len: 8 });
        assert!(!off.absorb(0, 64, 8, false), "off holds nothing");
    }

    /// Logs events and held repeats, taking repeats.
    #[derive(Default)]
    struct Log {
        seen: Vec<String>,
    }

    impl PmObserver for Log {
        fn event(&mut self, core: usize, e: PmEvent) {
            self.seen.push(format!("{core} {e:?}"));
        }
        fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
            self
        }
        fn takes_repeats(&self) -> bool {
            true
        }
        fn repeats(&mut self, h: Held) {
            self.seen.push(format!("{h:?}"));
        }
        fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
            Some(self)
        }
    }

    fn seen(r: &mut PmRegion) -> Vec<String> {
        let o = r.observer_mut().and_then(|o| o.as_any_mut()).unwrap();
        std::mem::take(&mut o.downcast_mut::<Log>().unwrap().seen)
    }

    /// Every access reaches the observer once, as an event or in a count, each count before
    /// the event after it and before anyone looks at the observer.
    #[test]
    fn the_region_delivers_every_access_once_in_order() {
        let mut r = PmRegion::anonymous(RegionConfig::default()).unwrap();
        r.set_observer(Some(Box::new(Log::default())));
        let b = 4096;
        r.write_u64(b, 1);
        r.read_u64(b + 8);
        r.write_u64(b + 16, 2);
        r.read_u64(b);
        r.read_u64(b + 64); // another line: an event
        r.read_u64(b + 72);
        r.set_thread(1);
        r.read_u64(b + 80); // another core: an event
        assert_eq!(
            seen(&mut r),
            [
                format!("0 Store {{ off: {b}, len: 8 }}"),
                format!(
                    "{:?}",
                    Held {
                        core: 0,
                        line: b / 64,
                        loads: 2,
                        stores: 1,
                        store_bytes: 8
                    }
                ),
                format!("0 Load {{ off: {}, len: 8 }}", b + 64),
                format!(
                    "{:?}",
                    Held {
                        core: 0,
                        line: b / 64 + 1,
                        loads: 1,
                        stores: 0,
                        store_bytes: 0
                    }
                ),
                format!("1 Load {{ off: {}, len: 8 }}", b + 80),
            ]
        );
        // Looking ended the run: the next access is an event again.
        r.read_u64(b + 88);
        r.fence();
        r.read_u64(b + 88);
        r.read_u64(b + 88);
        let log = r.set_observer(None).unwrap().into_any();
        let log = log.downcast::<Log>().unwrap().seen;
        assert_eq!(log.len(), 4, "{log:?}");
        assert!(log[3].starts_with("Held"), "{log:?}");
        assert_eq!(r.stats().loads, 8);
    }
}
