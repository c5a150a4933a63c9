//! A per-CPU lazy layer in front of a backing allocator, for order-0 requests.
//!
//! Two policies, after the iBuddy talk's table ("bulky" for the lazy buddy, "bypass" for
//! the lazy iBuddy):
//! - [`LazyMode::Bulky`] (Linux pcp lists, 2.6.32's `buffered_rmqueue` and
//!   `free_hot_cold_page`): an empty list is refilled with `batch` pages taken under one
//!   lock acquisition of the backing allocator (`rmqueue_bulk`), linked into the list in
//!   the order taken, under that lock; a free that brings the list to `high` pages drains
//!   `batch` of them from the cold end (the tail) back under one acquisition
//!   (`free_pcppages_bulk`), each unlinked from the list under that lock. Allocations and
//!   frees use the hot end (the head).
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
                    let lists = &mut self.lists;
                    let got = self.inner.refill(batch as usize, cpu, ctx, &mut |p, ctx| {
                        lists.push_tail(l, p, ctx)
                    });
                    ctx.count(Op::Refill);
                    self.cached += got as u64;
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
                // 2.6.32: `if (pcp->count >= pcp->high)`.
                if self.lists.len(l) >= high as usize {
                    let lists = &mut self.lists;
                    let freed = self
                        .inner
                        .drain(batch as usize, cpu, ctx, &mut |ctx| lists.pop_cold(l, ctx));
                    self.cached -= freed as u64;
                    ctx.count(Op::Drain);
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
        // 2.6.32's `drain_pages`: `free_pcppages_bulk` of each CPU's whole list.
        for l in 0..self.cpus {
            if self.lists.is_empty(l) {
                continue;
            }
            let lists = &mut self.lists;
            let n = lists.len(l);
            let freed = self
                .inner
                .drain(n, l as u16, ctx, &mut |ctx| lists.pop_cold(l, ctx));
            self.cached -= freed as u64;
            ctx.count(Op::Drain);
        }
        self.inner.drain_all(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::buddy::Buddy;
    use crate::alloc::cost::{CostTable, NoCost};

    const FRAMES: u64 = 2048;

    /// A buddy of 2048 frames, every frame allocated as a single page, then frames
    /// `0, 8, 16, …` of `freed` (in that order) freed back: each stays a single free page
    /// (its buddy `8i + 1` is allocated), and its 56-byte `struct page` starts a 64-byte
    /// line of its own (8 structs = 448 bytes = 7 lines).
    fn stride8(freed: u64) -> Buddy {
        let mut b = Buddy::new(FRAMES, FreeListPolicy::Lifo, 0);
        for _ in 0..FRAMES {
            PageAllocator::<NoCost>::alloc(&mut b, 0, 0, &mut NoCost).unwrap();
        }
        for i in 0..freed {
            PageAllocator::<NoCost>::free(&mut b, 8 * i, 0, 0, &mut NoCost);
        }
        b
    }

    fn bulky(b: Buddy, batch: u32) -> Lazy<Buddy> {
        let high = 6 * batch;
        Lazy::new(b, LazyMode::Bulky { batch, high }, 2, FreeListPolicy::Lifo)
    }

    /// A refill of `batch` pages (2.6.32's `rmqueue_bulk` from `buffered_rmqueue`), counted
    /// by hand. The zone's order-0 list holds frames 8·batch (head), …, 8, 0 (LIFO).
    /// Distinct lines of the request:
    /// - 1: the CPU's `per_cpu_pages` (count and list head),
    /// - 1: `zone->lock`, which shares its line with `free_area[0].free_list`,
    /// - 1: `free_area[0].nr_free` (offset 88: the next line),
    /// - batch: the `struct page` of each page taken (`list_del` from the zone list,
    ///   `list_add` to the per-CPU list: the page, the previous page, the list heads),
    /// - 1: the `struct page` of frame 0, the zone list's new first page after the last
    ///   `list_del`.
    ///
    /// = batch + 4 lines. Cycles with the flat 40-cycle line: 40 (batch + 4) + 20 (lock) +
    /// 3 × 3 per page (the order-0 head check, `list_del`, `list_add`) + 3 (the pop from
    /// the per-CPU list). The zone lock is held from its acquisition to after the last
    /// page was linked: everything but the per-CPU line before it and the pop after it.
    #[test]
    fn closed_form_refill_of_batch_pages() {
        for batch in [1u64, 7, 31] {
            let mut a = bulky(stride8(batch + 1), batch as u32);
            let mut c = Ctx::new(FRAMES as usize, CostTable::default());
            c.begin(0);
            let p = a.alloc(0, 0, &mut c);
            assert_eq!(
                p,
                Some(8 * batch),
                "the first page taken is handed out first"
            );
            assert_eq!(c.ops.lines, batch + 4, "batch {batch}");
            let total = 40 * (batch + 4) + 20 + 9 * batch + 3;
            assert_eq!(c.now(), total, "batch {batch}");
            assert_eq!(c.ops.refills, 1);
            // Linked in the order taken: the next pop is the second page taken.
            if batch > 1 {
                assert_eq!(a.alloc(0, 0, &mut c), Some(8 * (batch - 1)));
            }
            // Another CPU asking the zone for a block at cycle 0 waits for the release: the
            // refill's cycles less the pop after it (3).
            let mut a = bulky(stride8(batch + 1), batch as u32);
            let mut c = Ctx::new(FRAMES as usize, CostTable::default());
            c.begin(0);
            a.alloc(0, 0, &mut c);
            c.begin(1);
            c.set_now(0);
            a.alloc(1, 1, &mut c);
            assert_eq!(c.lock_waits(), (1, total - 3), "batch {batch}");
        }
    }

    /// A drain of `batch` pages (2.6.32's `free_hot_cold_page` reaching `pcp->high` and
    /// calling `free_pcppages_bulk`), counted by hand. The CPU's list holds frames
    /// 8·(high − 2) (head), …, 8, 0 (tail); the free of frame 8·(high − 1) brings it to
    /// `high`. Distinct lines of the request:
    /// - 1: the CPU's `per_cpu_pages`,
    /// - 2: the freed page's `struct page` and the old first page's (`list_add` at the head),
    /// - 1: `zone->lock` (with `free_area[0].free_list`),
    /// - 1: `zone->pages_scanned` / `zone->flags` (a locked `clear_bit` and a store),
    /// - batch + 1: the `struct page`s of the drained frames 0, 8, …, 8·(batch − 1), taken
    ///   from the tail (`list_del`), and of frame 8·batch, the list's new last page,
    /// - batch: the second line of each drained page's buddy `8i + 1` (`page_is_buddy`
    ///   reads it; its first line is the drained page's),
    /// - 1: `free_area[0].nr_free`.
    ///
    /// = 2 batch + 7 lines. Cycles: 40 (2 batch + 7) + 20 (lock) + 20 (`clear_bit`) + 3 ×
    /// (1 + 2 batch) (the `list_add`, then per page `list_del` and the zone list's
    /// `list_add`). The lock is held from after the first three lines to the end.
    #[test]
    fn closed_form_drain_of_batch_pages() {
        for batch in [1u64, 7, 31] {
            let high = 6 * batch;
            let setup = || {
                let mut a = bulky(stride8(0), batch as u32);
                for i in 0..high - 1 {
                    a.free(8 * i, 0, 0, &mut NoCost);
                }
                assert_eq!(a.cached(), high - 1);
                a
            };
            let mut a = setup();
            let mut c = Ctx::new(FRAMES as usize, CostTable::default());
            c.begin(0);
            a.free(8 * (high - 1), 0, 0, &mut c);
            assert_eq!(c.ops.drains, 1);
            assert_eq!(a.cached(), high - batch);
            assert_eq!(c.ops.lines, 2 * batch + 7, "batch {batch}");
            let total = 40 * (2 * batch + 7) + 20 + 20 + 3 * (1 + 2 * batch);
            assert_eq!(c.now(), total, "batch {batch}");
            // The coldest pages went back: the zone's order-0 list now holds frames
            // 0 … 8·(batch − 1), the last one freed first.
            let mut c2 = Ctx::new(FRAMES as usize, CostTable::default());
            assert_eq!(a.inner.alloc(0, 1, &mut c2), Some(8 * (batch - 1)));
            // Another CPU asking the zone at cycle 0 waits for the whole walk: everything
            // after the first three lines (the per-CPU line and the `list_add`).
            let mut a = setup();
            let mut c = Ctx::new(FRAMES as usize, CostTable::default());
            c.begin(0);
            a.free(8 * (high - 1), 0, 0, &mut c);
            c.begin(1);
            c.set_now(0);
            a.alloc(1, 1, &mut c);
            assert_eq!(c.lock_waits(), (1, total), "batch {batch}");
        }
    }
}
