//! The binary buddy allocator (Linux-style): free lists per order 0..=10, split on
//! allocate, coalesce with the buddy (`pfn ^ (1 << order)`) on free, one zone lock.
//!
//! Design choices: a frame array whose size is not a multiple of 2^10 is carved greedily
//! into the largest aligned blocks that fit, so the top of the array holds smaller blocks
//! (as Linux does for a zone end). Each free block is recorded at its first frame
//! (`head_order`), which is how the buddy check finds a free buddy of the same order in
//! O(1) (Linux: `PageBuddy` + `page_order`). Searching for the lowest non-empty order costs
//! one list op per order looked at. Migratetypes are not modelled (one free list per order).

use super::cost::Ctx;
use super::lists::{FrameLists, Policy};
use super::{PageAllocator, MAX_ORDER};

const NOT_FREE: u8 = 0;

pub struct Buddy {
    frames: u64,
    lists: FrameLists,
    /// `order + 1` at the first frame of a free block, 0 elsewhere.
    head_order: Vec<u8>,
    free: u64,
    lock: usize,
}

impl Buddy {
    /// A buddy over `frames` frames, all free, using lock `lock` of the context.
    pub fn new(frames: u64, policy: Policy, lock: usize) -> Buddy {
        let mut ctx = Ctx::new(frames as usize, Default::default());
        let mut b = Buddy {
            frames,
            lists: FrameLists::new(frames as usize, MAX_ORDER as usize + 1, policy),
            head_order: vec![NOT_FREE; frames as usize],
            free: 0,
            lock,
        };
        let mut pfn = 0u64;
        while pfn < frames {
            let mut o = MAX_ORDER;
            while !pfn.is_multiple_of(1 << o) || pfn + (1 << o) > frames {
                o -= 1;
            }
            b.insert(pfn, o, &mut ctx);
            pfn += 1 << o;
        }
        b.free = frames;
        b
    }

    fn insert(&mut self, pfn: u64, order: u8, ctx: &mut Ctx) {
        self.lists.push(order as usize, pfn, ctx);
        self.head_order[pfn as usize] = order + 1;
    }

    /// Allocate under an already held lock.
    fn alloc_locked(&mut self, order: u8, ctx: &mut Ctx) -> Option<u64> {
        let mut o = order;
        loop {
            ctx.list_ops(1);
            if !self.lists.is_empty(o as usize) {
                break;
            }
            if o == MAX_ORDER {
                return None;
            }
            o += 1;
        }
        let pfn = self.lists.pop(o as usize, ctx)?;
        self.head_order[pfn as usize] = NOT_FREE;
        while o > order {
            o -= 1;
            self.insert(pfn + (1 << o), o, ctx);
            ctx.ops.splits += 1;
        }
        self.free -= 1 << order;
        Some(pfn)
    }

    /// Free under an already held lock, coalescing upwards.
    fn free_locked(&mut self, pfn: u64, order: u8, ctx: &mut Ctx) {
        debug_assert!(pfn + (1 << order) <= self.frames);
        self.free += 1 << order;
        let (mut b, mut o) = (pfn, order);
        while o < MAX_ORDER {
            let bud = b ^ (1 << o);
            // Reading the buddy's struct page.
            ctx.page_lines(1);
            if bud >= self.frames || self.head_order[bud as usize] != o + 1 {
                break;
            }
            self.lists.remove(bud, ctx);
            self.head_order[bud as usize] = NOT_FREE;
            b = b.min(bud);
            o += 1;
            ctx.ops.merges += 1;
        }
        self.insert(b, o, ctx);
    }
}

impl PageAllocator for Buddy {
    fn frames(&self) -> u64 {
        self.frames
    }

    fn alloc(&mut self, order: u8, cpu: u16, ctx: &mut Ctx) -> Option<u64> {
        ctx.lock(self.lock, cpu);
        let r = self.alloc_locked(order, ctx);
        ctx.unlock(self.lock);
        r
    }

    fn free(&mut self, pfn: u64, order: u8, cpu: u16, ctx: &mut Ctx) {
        ctx.lock(self.lock, cpu);
        self.free_locked(pfn, order, ctx);
        ctx.unlock(self.lock);
    }

    fn alloc_bulk(&mut self, n: usize, cpu: u16, ctx: &mut Ctx, out: &mut Vec<u64>) {
        ctx.lock(self.lock, cpu);
        for _ in 0..n {
            match self.alloc_locked(0, ctx) {
                Some(p) => out.push(p),
                None => break,
            }
        }
        ctx.unlock(self.lock);
    }

    fn free_bulk(&mut self, pfns: &[u64], cpu: u16, ctx: &mut Ctx) {
        ctx.lock(self.lock, cpu);
        for &p in pfns {
            self.free_locked(p, 0, ctx);
        }
        ctx.unlock(self.lock);
    }

    fn free_frames(&self) -> u64 {
        self.free
    }

    fn free_blocks(&self, order: u8) -> u64 {
        (order..=MAX_ORDER)
            .map(|o| (self.lists.len(o as usize) as u64) << (o - order))
            .sum()
    }
}
