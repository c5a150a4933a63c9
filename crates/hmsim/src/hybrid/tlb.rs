//! A fully associative TLB with LRU replacement, caching virtual page → UMD DRAM frame.
//! Empty entries are filled before any valid one is replaced, lowest index first.

use crate::cache::LruOrder;
use crate::flash::NONE;

const HINTS: usize = 64;

pub(super) struct Tlb {
    /// Entry last used for each `vp % HINTS`: most lookups check one entry, not all.
    hint: [u8; HINTS],
    vpage: Vec<u64>,
    frame: Vec<u32>,
    order: LruOrder,
    pub misses: u64,
}

impl Tlb {
    pub(super) fn new(entries: usize) -> Tlb {
        assert!(entries <= 256, "hint indices are bytes");
        Tlb {
            hint: [0; HINTS],
            vpage: vec![u64::MAX; entries],
            frame: vec![NONE; entries],
            order: LruOrder::new(entries as u32),
            misses: 0,
        }
    }

    #[inline(always)]
    pub(super) fn lookup(&mut self, vp: u64) -> Option<u32> {
        let h = vp as usize % HINTS;
        let i = self.hint[h] as usize;
        if self.vpage[i] == vp {
            self.order.touch(i as u32);
            return Some(self.frame[i]);
        }
        match self.vpage.iter().position(|&v| v == vp) {
            Some(i) => {
                self.hint[h] = i as u8;
                self.order.touch(i as u32);
                Some(self.frame[i])
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Inserts into an empty entry, or over the least recently used one.
    pub(super) fn fill(&mut self, vp: u64, frame: u32) {
        let i = match self.order.take_free() {
            Some(i) => i,
            None => {
                let i = self.order.lru().expect("a TLB has entries");
                self.order.touch(i);
                i
            }
        };
        self.vpage[i as usize] = vp;
        self.frame[i as usize] = frame;
        self.hint[vp as usize % HINTS] = i as u8;
    }

    /// Drops entries pointing at `frame` (the device evicted its page).
    pub(super) fn invalidate_frame(&mut self, frame: u32) {
        for i in 0..self.frame.len() {
            if self.frame[i] == frame && self.vpage[i] != u64::MAX {
                self.vpage[i] = u64::MAX;
                self.frame[i] = NONE;
                self.order.release(i as u32);
            }
        }
    }

    /// Drops everything (a switch to another address space without ASIDs).
    pub(super) fn flush(&mut self) {
        self.vpage.fill(u64::MAX);
        self.frame.fill(NONE);
        self.order.clear();
    }
}
