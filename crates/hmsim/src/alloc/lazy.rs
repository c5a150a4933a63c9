//! A per-CPU lazy layer in front of a backing allocator, for order-0 requests.
//!
//! Two policies, after the iBuddy talk's table ("bulky" for the lazy buddy, "bypass" for
//! the lazy iBuddy):
//! - [`LazyMode::Bulky`] (Linux pcp lists): an empty list is refilled with `batch` pages
//!   taken under one lock acquisition of the backing allocator; a free that makes the list
//!   longer than `high` drains `batch` pages (the coldest) back under one acquisition.
//! - [`LazyMode::Bypass`]: the list holds at most `capacity` pages; an allocation pops it
//!   if it is not empty, otherwise asks the backing allocator for that one page; a free
//!   pushes if the list is not full, otherwise frees that one page to the backing
//!   allocator. Nothing moves in bulk.
//!
//! Per-CPU lists take no lock (Linux disables interrupts on the local CPU instead); that
//! costs nothing in the model beyond the list op. CPU ids at or above the number of lists
//! share lists by `cpu % cpus`. Higher orders go to the backing allocator directly.

use super::cost::{Ctx, Op, Recorder};
use super::layout;
use super::lists::{FrameLists, FreeListPolicy};
use super::PageAllocator;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LazyMode {
    Bulky { batch: u32, high: u32 },
    Bypass { capacity: u32 },
}

pub struct Lazy<A> {
    inner: A,
    mode: LazyMode,
    lists: FrameLists,
    cpus: usize,
    cached: u64,
    scratch: Vec<u64>,
}

impl<A> Lazy<A> {
    pub fn new(inner: A, mode: LazyMode, cpus: usize, policy: FreeListPolicy) -> Lazy<A>
    where
        A: PageAllocator<Ctx>,
    {
        let frames = inner.frames() as usize;
        let mut lists = FrameLists::new(frames, cpus, policy);
        for c in 0..cpus {
            lists.set_head(c, layout::pcp(c));
        }
        Lazy {
            inner,
            mode,
            lists,
            cpus,
            cached: 0,
            scratch: Vec::new(),
        }
    }

    /// Frames held in per-CPU lists.
    pub fn cached(&self) -> u64 {
        self.cached
    }

    fn alloc_lazy<R: Recorder>(&mut self, order: u8, cpu: u16, ctx: &mut R) -> Option<u64>
    where
        A: PageAllocator<R>,
    {
        if order != 0 {
            return self.inner.alloc(order, cpu, ctx);
        }
        let l = cpu as usize % self.cpus;
        // `pcp->count` and the list heads: one line of this CPU's per-CPU area.
        ctx.touch(layout::pcp(l), true);
        if self.lists.is_empty(l) {
            match self.mode {
                LazyMode::Bypass { .. } => return self.inner.alloc(0, cpu, ctx),
                LazyMode::Bulky { batch, .. } => {
                    let mut got = std::mem::take(&mut self.scratch);
                    got.clear();
                    self.inner.alloc_bulk(batch as usize, cpu, ctx, &mut got);
                    ctx.count(Op::Refill);
                    for &p in &got {
                        self.lists.push(l, p, ctx);
                    }
                    self.cached += got.len() as u64;
                    self.scratch = got;
                }
            }
        }
        let p = self.lists.pop(l, ctx)?;
        self.cached -= 1;
        Some(p)
    }
}

/// The counts of [`PageAllocator`] without naming a recorder.
impl<A: PageAllocator> Lazy<A> {
    pub fn frames(&self) -> u64 {
        self.inner.frames()
    }

    pub fn free_frames(&self) -> u64 {
        self.inner.free_frames() + self.cached
    }

    pub fn free_blocks(&self, order: u8) -> u64 {
        self.inner.free_blocks(order)
    }
}

impl<R: Recorder, A: PageAllocator<R>> PageAllocator<R> for Lazy<A> {
    fn frames(&self) -> u64 {
        self.inner.frames()
    }

    fn alloc(&mut self, order: u8, cpu: u16, ctx: &mut R) -> Option<u64> {
        let r = self.alloc_lazy(order, cpu, ctx);
        if r.is_some() || self.cached == 0 {
            return r;
        }
        // Out of memory while CPUs park frames: drain every per-CPU list and retry once
        // (Linux's `drain_all_pages` in the allocation slow path).
        self.drain_all(ctx);
        self.alloc_lazy(order, cpu, ctx)
    }

    fn free(&mut self, pfn: u64, order: u8, cpu: u16, ctx: &mut R) {
        if order != 0 {
            return self.inner.free(pfn, order, cpu, ctx);
        }
        let l = cpu as usize % self.cpus;
        ctx.touch(layout::pcp(l), true);
        match self.mode {
            LazyMode::Bypass { capacity } => {
                if self.lists.len(l) < capacity as usize {
                    self.lists.push(l, pfn, ctx);
                    self.cached += 1;
                } else {
                    self.inner.free(pfn, 0, cpu, ctx);
                }
            }
            LazyMode::Bulky { batch, high } => {
                self.lists.push(l, pfn, ctx);
                self.cached += 1;
                if self.lists.len(l) > high as usize {
                    let mut out = std::mem::take(&mut self.scratch);
                    out.clear();
                    for _ in 0..batch {
                        match self.lists.pop_cold(l, ctx) {
                            Some(p) => out.push(p),
                            None => break,
                        }
                    }
                    self.cached -= out.len() as u64;
                    self.inner.free_bulk(&out, cpu, ctx);
                    ctx.count(Op::Drain);
                    self.scratch = out;
                }
            }
        }
    }

    fn free_frames(&self) -> u64 {
        self.inner.free_frames() + self.cached
    }

    fn free_blocks(&self, order: u8) -> u64 {
        self.inner.free_blocks(order)
    }

    fn drain_all(&mut self, ctx: &mut R) {
        for l in 0..self.cpus {
            let mut out = Vec::new();
            while let Some(p) = self.lists.pop_cold(l, ctx) {
                out.push(p);
            }
            self.cached -= out.len() as u64;
            if !out.is_empty() {
                self.inner.free_bulk(&out, l as u16, ctx);
                ctx.count(Op::Drain);
            }
        }
        self.inner.drain_all(ctx);
    }
}
