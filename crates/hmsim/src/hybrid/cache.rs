//! The UMD's internal DRAM cache: page frames in an intrusive LRU list with dirty bits.

use crate::flash::NONE;

#[derive(Debug, Clone, Copy)]
struct Frame {
    lpn: u32,
    prev: u32,
    next: u32,
    dirty: bool,
}

/// `frames` page frames; each holds one logical page or is free.
pub struct DramCache {
    frames: Vec<Frame>,
    /// Most and least recently used frame.
    head: u32,
    tail: u32,
    free: Vec<u32>,
}

impl DramCache {
    pub fn new(frames: u32) -> DramCache {
        DramCache {
            frames: vec![
                Frame {
                    lpn: NONE,
                    prev: NONE,
                    next: NONE,
                    dirty: false
                };
                frames as usize
            ],
            head: NONE,
            tail: NONE,
            // Popped from the back: frame 0 first.
            free: (0..frames).rev().collect(),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.frames.len() as u32
    }

    pub fn used(&self) -> u32 {
        self.capacity() - self.free.len() as u32
    }

    pub fn lpn(&self, f: u32) -> u32 {
        self.frames[f as usize].lpn
    }

    pub fn is_dirty(&self, f: u32) -> bool {
        self.frames[f as usize].dirty
    }

    fn unlink(&mut self, f: u32) {
        let Frame { prev, next, .. } = self.frames[f as usize];
        if prev == NONE {
            self.head = next;
        } else {
            self.frames[prev as usize].next = next;
        }
        if next == NONE {
            self.tail = prev;
        } else {
            self.frames[next as usize].prev = prev;
        }
    }

    fn push_front(&mut self, f: u32) {
        let old = self.head;
        let fr = &mut self.frames[f as usize];
        fr.prev = NONE;
        fr.next = old;
        if old == NONE {
            self.tail = f;
        } else {
            self.frames[old as usize].prev = f;
        }
        self.head = f;
    }

    /// Marks frame `f` most recently used (and dirty on a write).
    #[inline(always)]
    pub fn touch(&mut self, f: u32, write: bool) {
        self.frames[f as usize].dirty |= write;
        if self.head != f {
            self.unlink(f);
            self.push_front(f);
        }
    }

    /// A free frame, if any.
    pub fn take_free(&mut self) -> Option<u32> {
        self.free.pop()
    }

    /// The least recently used frame (the victim), or `None` when nothing is cached.
    pub fn lru(&self) -> Option<u32> {
        (self.tail != NONE).then_some(self.tail)
    }

    /// Puts `lpn` into frame `f` (free or just evicted) as most recently used.
    pub fn install(&mut self, f: u32, lpn: u32, dirty: bool) {
        if self.frames[f as usize].lpn != NONE {
            self.unlink(f);
        }
        let fr = &mut self.frames[f as usize];
        fr.lpn = lpn;
        fr.dirty = dirty;
        self.push_front(f);
    }

    /// Cached pages from most to least recently used.
    pub fn order(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut f = self.head;
        while f != NONE {
            out.push(self.frames[f as usize].lpn);
            f = self.frames[f as usize].next;
        }
        out
    }
}
