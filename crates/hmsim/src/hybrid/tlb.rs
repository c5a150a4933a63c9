//! A fully associative TLB with LRU replacement, caching virtual page → UMD DRAM frame.

use crate::flash::NONE;

const HINTS: usize = 64;

pub struct Tlb {
    /// Entry last used for each `vp % HINTS`: most lookups check one entry, not all.
    hint: [u8; HINTS],
    vpage: Vec<u64>,
    frame: Vec<u32>,
    stamp: Vec<u64>,
    clock: u64,
    pub misses: u64,
}

impl Tlb {
    pub fn new(entries: usize) -> Tlb {
        assert!(entries <= 256, "hint indices are bytes");
        Tlb {
            hint: [0; HINTS],
            vpage: vec![u64::MAX; entries],
            frame: vec![NONE; entries],
            stamp: vec![0; entries],
            clock: 0,
            misses: 0,
        }
    }

    #[inline(always)]
    pub fn lookup(&mut self, vp: u64) -> Option<u32> {
        self.clock += 1;
        let h = vp as usize % HINTS;
        let i = self.hint[h] as usize;
        if self.vpage[i] == vp {
            self.stamp[i] = self.clock;
            return Some(self.frame[i]);
        }
        match self.vpage.iter().position(|&v| v == vp) {
            Some(i) => {
                self.hint[h] = i as u8;
                self.stamp[i] = self.clock;
                Some(self.frame[i])
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Inserts over the least recently used entry.
    pub fn fill(&mut self, vp: u64, frame: u32) {
        let i = (0..self.stamp.len())
            .min_by_key(|&i| self.stamp[i])
            .expect("a TLB has entries");
        self.vpage[i] = vp;
        self.frame[i] = frame;
        self.hint[vp as usize % HINTS] = i as u8;
        self.clock += 1;
        self.stamp[i] = self.clock;
    }

    /// Drops entries pointing at `frame` (the device evicted its page).
    pub fn invalidate_frame(&mut self, frame: u32) {
        for i in 0..self.frame.len() {
            if self.frame[i] == frame {
                self.vpage[i] = u64::MAX;
                self.frame[i] = NONE;
                self.stamp[i] = 0;
            }
        }
    }

    /// Drops everything (a switch to another address space without ASIDs).
    pub fn flush(&mut self) {
        self.vpage.fill(u64::MAX);
        self.frame.fill(NONE);
        self.stamp.fill(0);
    }
}
