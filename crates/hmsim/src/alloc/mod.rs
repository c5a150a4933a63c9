//! Physical page-frame allocators for SCM main memory (docs/allocators.md; Park, Choi, Lee & Noh,
//! *iBuddy*, IEEE Transactions on Computers 2015): the binary buddy, the lazy (per-CPU) buddy,
//! iBuddy and the lazy iBuddy, over a simulated frame array, with wear-aware reuse policies, a
//! deterministic cost model, and replay of kmem traces and synthetic allocation streams.
//!
//! - [`PageAllocator`]: the trait every allocator implements; [`build`] makes one from an
//!   [`AllocatorSpec`] by registered name ([`ALLOCATOR_KINDS`]).
//! - [`cost`]: what a path does (lines touched, list and bitmap work, locks) → cycles,
//!   lock hold/wait; [`machine`]: cores and caches the lines are costed through;
//!   [`layout`]: where each structure lives (Linux 2.6.32's layout).
//! - [`lists`]: intrusive free lists and the reuse [`FreeListPolicy`] (LIFO, FIFO,
//!   least-allocated-first).
//! - [`workload`]: kmem trace replay and the synthetic kernel-compile generator.
//! - [`driver`]: runs a workload through an allocator; [`wear`]: fairness and lifetime.
//! - [`run`]: the `allocators` scenario.

pub mod benchmarks;
pub(crate) mod buddy;
pub mod cohort;
pub(crate) mod cost;
pub mod driver;
pub(crate) mod ibuddy;
pub(crate) mod layout;
pub(crate) mod lazy;
pub(crate) mod lists;
pub(crate) mod machine;
pub(crate) mod real;
mod rows;
mod scenario;
mod seen;
pub mod shapes;
pub(crate) mod spec;
pub(crate) mod startgap;
pub(crate) mod timing;
pub(crate) mod wear;
pub mod workload;

#[cfg(test)]
mod tests;

pub use cost::{CostTable, Ctx, NoCost, Op, OpCounts, Recorder};
pub use lists::FreeListPolicy;
pub use machine::AllocMachine;
pub use rows::{AllocRow, LatencyRow, WearRow};
pub use scenario::{AllocConfig, Allocators};
pub use spec::{build, AllocatorSpec, ALLOCATOR_KINDS};

/// Largest order: blocks of 2^10 frames (4 MiB of 4 KiB pages), as Linux's `MAX_ORDER - 1`.
pub const MAX_ORDER: u8 = 10;

/// Most per-CPU lists (and distinct CPUs a workload may use).
pub const MAX_CPUS: usize = 64;

/// A physical page-frame allocator over frames `0..frames()`.
///
/// Every operation reports its primitive operations to the recorder `R`: the cost model's
/// [`Ctx`] (the default), or [`NoCost`] for a run without one (nothing recorded, nothing
/// paid). `alloc` returns the first frame of a free, 2^order-aligned block of 2^order
/// frames, or `None` when no such block is free. `free` must receive a block `alloc`
/// returned, with the same order (the caller, not the allocator, keeps that record — like
/// the kernel).
pub trait PageAllocator<R: Recorder = Ctx>: Send {
    fn frames(&self) -> u64;
    fn alloc(&mut self, order: u8, cpu: u16, ctx: &mut R) -> Option<u64>;
    fn free(&mut self, pfn: u64, order: u8, cpu: u16, ctx: &mut R);

    /// Up to `n` single frames, appended to `out`; an allocator with a shared lock takes it
    /// once for the whole batch.
    fn alloc_bulk(&mut self, n: usize, cpu: u16, ctx: &mut R, out: &mut Vec<u64>) {
        for _ in 0..n {
            match self.alloc(0, cpu, ctx) {
                Some(p) => out.push(p),
                None => break,
            }
        }
    }

    /// Free single frames; an allocator with a shared lock takes it once.
    fn free_bulk(&mut self, pfns: &[u64], cpu: u16, ctx: &mut R) {
        for &p in pfns {
            self.free(p, 0, cpu, ctx);
        }
    }

    /// A per-CPU refill (2.6.32's `rmqueue_bulk`): up to `n` single frames under one
    /// acquisition of the shared lock, each handed to `put` while the lock is still held
    /// (the per-CPU list links it in there), so the lock is held for the whole walk and
    /// every other CPU that needs it waits that long. Returns how many frames it took.
    /// Without a shared lock: one `alloc` per frame.
    fn refill(
        &mut self,
        n: usize,
        cpu: u16,
        ctx: &mut R,
        put: &mut dyn FnMut(u64, &mut R),
    ) -> usize {
        for i in 0..n {
            match self.alloc(0, cpu, ctx) {
                Some(p) => put(p, ctx),
                None => return i,
            }
        }
        n
    }

    /// A per-CPU drain (2.6.32's `free_pcppages_bulk`): under one acquisition of the shared
    /// lock, frees up to `n` single frames that `take` unlinks from the per-CPU list one by
    /// one while the lock is held, until it yields none. Returns how many it freed.
    /// Without a shared lock: one `free` per frame.
    fn drain(
        &mut self,
        n: usize,
        cpu: u16,
        ctx: &mut R,
        take: &mut dyn FnMut(&mut R) -> Option<u64>,
    ) -> usize {
        for i in 0..n {
            match take(ctx) {
                Some(p) => self.free(p, 0, cpu, ctx),
                None => return i,
            }
        }
        n
    }

    /// Free frames, including those parked in per-CPU lists.
    fn free_frames(&self) -> u64;

    /// Free, 2^order-aligned blocks of 2^order frames the backing allocator could hand out
    /// now without touching per-CPU lists (a fragmentation measure).
    fn free_blocks(&self, order: u8) -> u64;

    /// Return frames parked in per-CPU lists to the backing allocator.
    fn drain_all(&mut self, _ctx: &mut R) {}
}

/// Allocate and count the handed-out frames as allocations (wear).
pub fn allocate(a: &mut dyn PageAllocator, order: u8, cpu: u16, ctx: &mut Ctx) -> Option<u64> {
    ctx.call();
    let p = a.alloc(order, cpu, ctx)?;
    // `prep_new_page`: every struct page of the block is checked and the head's count set.
    ctx.touch_pages(p, order, true);
    ctx.record_alloc(p, order);
    Some(p)
}

/// Free a block obtained from [`allocate`].
pub fn release(a: &mut dyn PageAllocator, pfn: u64, order: u8, cpu: u16, ctx: &mut Ctx) {
    ctx.call();
    // `free_pages_check` of every struct page of the block.
    ctx.touch_pages(pfn, order, true);
    a.free(pfn, order, cpu, ctx);
}
