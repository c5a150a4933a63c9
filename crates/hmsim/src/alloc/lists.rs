//! Intrusive doubly linked free lists over the frame array, one node per frame (like the
//! `lru` links of Linux's `struct page`), with the reuse policy that decides which free
//! frame is handed out next.
//!
//! Every list op reports to the cost model: one list op, and the lines it touches: the
//! frame's own `struct page`, each neighbour whose link is rewritten, and the list head
//! (its address set by the owner with [`FrameLists::set_head`]) when the frame is or
//! becomes first or last.

use serde::{Deserialize, Serialize};

use super::cost::Recorder;

/// Which free frame (or block, by its first frame) is reused first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FreeListPolicy {
    /// Linux's: the most recently freed frame first (cache-warm, wear-concentrating).
    #[default]
    Lifo,
    /// The least recently freed frame first (round-robin reuse).
    Fifo,
    /// The least-allocated frame first, approximately: frames sit in bins by
    /// ⌊log2(allocations + 1)⌋ (32 bins, a bitmask of non-empty bins makes the lowest bin
    /// an O(1) lookup), FIFO within a bin.
    LeastAllocated,
}

impl FreeListPolicy {
    pub const NAMES: [&'static str; 3] = ["lifo", "fifo", "least-allocated"];

    pub fn name(self) -> &'static str {
        match self {
            FreeListPolicy::Lifo => "lifo",
            FreeListPolicy::Fifo => "fifo",
            FreeListPolicy::LeastAllocated => "least-allocated",
        }
    }

    fn bins(self) -> usize {
        match self {
            FreeListPolicy::LeastAllocated => BINS,
            _ => 1,
        }
    }
}

const BINS: usize = 32;
const NIL: u32 = u32::MAX;

/// `lists` logical lists over `frames` frames; a frame is on at most one list.
#[derive(Clone)]
pub(crate) struct FrameLists {
    policy: FreeListPolicy,
    bins: usize,
    /// One node per frame, links and list together: one cache line per touched frame.
    nodes: Vec<Node>,
    head: Vec<u32>,
    tail: Vec<u32>,
    /// Per logical list: bit b set when bin b is non-empty.
    nonempty: Vec<u32>,
    len: Vec<u32>,
    /// Address of each logical list's head (`NO_ADDR`: not modelled).
    head_addr: Vec<u64>,
}

const NO_ADDR: u64 = u64::MAX;

#[derive(Clone, Copy)]
struct Node {
    next: u32,
    prev: u32,
    /// Physical list (logical × bins + bin) the frame is on, or NIL.
    on: u32,
}

#[inline]
fn bin_of(count: u32) -> usize {
    (32 - (count.saturating_add(1)).leading_zeros() - 1) as usize
}

impl FrameLists {
    pub(crate) fn new(frames: usize, lists: usize, policy: FreeListPolicy) -> FrameLists {
        let bins = policy.bins();
        FrameLists {
            policy,
            bins,
            nodes: vec![
                Node {
                    next: NIL,
                    prev: NIL,
                    on: NIL
                };
                frames
            ],
            head: vec![NIL; lists * bins],
            tail: vec![NIL; lists * bins],
            nonempty: vec![0; lists],
            len: vec![0; lists],
            head_addr: vec![NO_ADDR; lists],
        }
    }

    /// Where `list`'s head lives (for the cost model).
    pub(crate) fn set_head(&mut self, list: usize, addr: u64) {
        self.head_addr[list] = addr;
    }

    /// Read `list`'s head (an emptiness check).
    #[inline]
    pub(crate) fn peek(&self, list: usize, ctx: &mut impl Recorder) {
        let a = self.head_addr[list];
        if a != NO_ADDR {
            ctx.touch(a, false);
        }
    }

    #[inline]
    fn touch_head(&self, list: usize, ctx: &mut impl Recorder) {
        let a = self.head_addr[list];
        if a != NO_ADDR {
            ctx.touch(a, true);
        }
    }

    #[inline]
    pub(crate) fn len(&self, list: usize) -> usize {
        self.len[list] as usize
    }

    #[inline]
    pub(crate) fn is_empty(&self, list: usize) -> bool {
        self.len[list] == 0
    }

    /// Put `pfn` on `list` where the policy wants it.
    #[inline]
    pub(crate) fn push(&mut self, list: usize, pfn: u64, ctx: &mut impl Recorder) {
        self.insert(list, pfn, self.policy != FreeListPolicy::Lifo, ctx)
    }

    /// Put `pfn` behind every frame of `list` (or of its bin): the order the frames are
    /// pushed in is the order they are handed out. A per-CPU refill links its batch so
    /// (2.6.32's `rmqueue_bulk` adds each page after the previous one).
    #[inline]
    pub(crate) fn push_tail(&mut self, list: usize, pfn: u64, ctx: &mut impl Recorder) {
        self.insert(list, pfn, true, ctx)
    }

    fn insert(&mut self, list: usize, pfn: u64, at_tail: bool, ctx: &mut impl Recorder) {
        let bin = match self.policy {
            FreeListPolicy::LeastAllocated => bin_of(ctx.wear_of(pfn)),
            _ => 0,
        };
        let phys = list * self.bins + bin;
        let f = pfn as u32;
        debug_assert_eq!(
            self.nodes[pfn as usize].on, NIL,
            "frame {pfn} already on a list"
        );
        self.nodes[pfn as usize].on = phys as u32;
        ctx.touch_page(pfn, true);
        self.touch_head(list, ctx);
        if !at_tail {
            let h = self.head[phys];
            self.nodes[pfn as usize].prev = NIL;
            self.nodes[pfn as usize].next = h;
            if h == NIL {
                self.tail[phys] = f;
            } else {
                self.nodes[h as usize].prev = f;
                ctx.touch_page(h as u64, true);
            }
            self.head[phys] = f;
        } else {
            let t = self.tail[phys];
            self.nodes[pfn as usize].next = NIL;
            self.nodes[pfn as usize].prev = t;
            if t == NIL {
                self.head[phys] = f;
            } else {
                self.nodes[t as usize].next = f;
                ctx.touch_page(t as u64, true);
            }
            self.tail[phys] = f;
        }
        self.nonempty[list] |= 1 << bin;
        self.len[list] += 1;
        ctx.list_ops(1);
    }

    /// The frame the policy hands out next from `list`, without removing it.
    #[inline]
    pub(crate) fn front(&self, list: usize) -> Option<u64> {
        let m = self.nonempty[list];
        if m == 0 {
            return None;
        }
        let phys = list * self.bins + m.trailing_zeros() as usize;
        Some(self.head[phys] as u64)
    }

    /// Remove and return the frame the policy hands out next.
    pub(crate) fn pop(&mut self, list: usize, ctx: &mut impl Recorder) -> Option<u64> {
        let f = self.front(list)?;
        self.remove(f, ctx);
        Some(f)
    }

    /// Remove and return the frame the policy would hand out last (the coldest for LIFO,
    /// the most-allocated bin for least-allocated); used to drain per-CPU lists.
    pub(crate) fn pop_cold(&mut self, list: usize, ctx: &mut impl Recorder) -> Option<u64> {
        let m = self.nonempty[list];
        if m == 0 {
            return None;
        }
        let f = match self.policy {
            FreeListPolicy::Lifo => self.tail[list],
            FreeListPolicy::Fifo => self.head[list],
            FreeListPolicy::LeastAllocated => {
                self.head[list * self.bins + (31 - m.leading_zeros()) as usize]
            }
        } as u64;
        self.remove(f, ctx);
        Some(f)
    }

    /// Unlink `pfn` from whatever list it is on (it must be on one).
    pub(crate) fn remove(&mut self, pfn: u64, ctx: &mut impl Recorder) {
        let i = pfn as usize;
        let phys = self.nodes[i].on;
        debug_assert_ne!(phys, NIL, "frame {pfn} is on no list");
        let phys = phys as usize;
        let (p, n) = (self.nodes[i].prev, self.nodes[i].next);
        // One bin per list unless least-allocated: no division then.
        let (list, bin) = if self.bins == 1 {
            (phys, 0)
        } else {
            (phys / self.bins, phys % self.bins)
        };
        ctx.touch_page(pfn, true);
        if p == NIL {
            self.head[phys] = n;
            self.touch_head(list, ctx);
        } else {
            self.nodes[p as usize].next = n;
            ctx.touch_page(p as u64, true);
        }
        if n == NIL {
            self.tail[phys] = p;
            self.touch_head(list, ctx);
        } else {
            self.nodes[n as usize].prev = p;
            ctx.touch_page(n as u64, true);
        }
        self.nodes[i].on = NIL;
        if self.head[phys] == NIL {
            self.nonempty[list] &= !(1 << bin);
        }
        self.len[list] -= 1;
        ctx.list_ops(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::cost::{CostTable, Ctx};

    #[test]
    fn lifo_fifo_and_bins() {
        let mut ctx = Ctx::new(8, CostTable::default());
        let mut l = FrameLists::new(8, 1, FreeListPolicy::Lifo);
        for p in [1, 2, 3] {
            l.push(0, p, &mut ctx);
        }
        assert_eq!(l.pop(0, &mut ctx), Some(3));
        assert_eq!(l.pop_cold(0, &mut ctx), Some(1));
        let mut l = FrameLists::new(8, 1, FreeListPolicy::Fifo);
        for p in [1, 2, 3] {
            l.push(0, p, &mut ctx);
        }
        assert_eq!(l.pop(0, &mut ctx), Some(1));
        ctx.wear[5] = 10;
        ctx.wear[6] = 0;
        let mut l = FrameLists::new(8, 2, FreeListPolicy::LeastAllocated);
        l.push(1, 5, &mut ctx);
        l.push(1, 6, &mut ctx);
        assert_eq!(l.len(1), 2);
        assert_eq!(l.pop(1, &mut ctx), Some(6));
        assert_eq!(l.pop(1, &mut ctx), Some(5));
        assert_eq!(l.pop(1, &mut ctx), None);
        assert_eq!(bin_of(0), 0);
        assert_eq!(bin_of(1), 1);
        assert_eq!(bin_of(3), 2);
        assert_eq!(bin_of(u32::MAX), 31);
    }
}
