//! The UMD's internal DRAM cache: page frames in LRU order with dirty bits.

use crate::cache::LruOrder;
use crate::flash::NONE;

/// `frames` page frames; each holds one logical page or is free.
pub struct UmdDramCache {
    order: LruOrder,
    lpn: Vec<u32>,
    dirty: Vec<bool>,
}

impl UmdDramCache {
    pub fn new(frames: u32) -> UmdDramCache {
        UmdDramCache {
            order: LruOrder::new(frames),
            lpn: vec![NONE; frames as usize],
            dirty: vec![false; frames as usize],
        }
    }

    pub fn capacity(&self) -> u32 {
        self.order.capacity()
    }

    pub fn used(&self) -> u32 {
        self.order.used()
    }

    pub fn lpn(&self, f: u32) -> u32 {
        self.lpn[f as usize]
    }

    pub fn is_dirty(&self, f: u32) -> bool {
        self.dirty[f as usize]
    }

    /// Marks frame `f` most recently used (and dirty on a write).
    #[inline(always)]
    pub fn touch(&mut self, f: u32, write: bool) {
        self.dirty[f as usize] |= write;
        self.order.touch(f);
    }

    /// A free frame (frame 0 first), if any; it holds no page until [`Self::install`].
    pub fn take_free(&mut self) -> Option<u32> {
        self.order.take_free()
    }

    /// The least recently used frame (the victim), or `None` when nothing is cached.
    pub fn lru(&self) -> Option<u32> {
        self.order.lru()
    }

    /// Puts `lpn` into frame `f` (free or just evicted) as most recently used.
    pub fn install(&mut self, f: u32, lpn: u32, dirty: bool) {
        self.lpn[f as usize] = lpn;
        self.dirty[f as usize] = dirty;
        self.order.touch(f);
    }

    /// Cached pages from most to least recently used.
    pub fn order(&self) -> Vec<u32> {
        self.order
            .iter_from_mru()
            .map(|f| self.lpn[f as usize])
            .collect()
    }
}
