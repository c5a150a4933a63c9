//! [`PmMem`]: persistent memory as an index sees it, and its two views of the one simulated
//! region ([`PmRegion`]): [`Instr`] (every access instrumented: counted, seen by the cache +
//! PMem model and by crash tracking) and [`Peek`] (read-only and uninstrumented, for
//! invariant checks and listing entries outside the measured workload).
//!
//! The indexes address the region by byte offset (0 = null) and persist through this trait,
//! so the same index code runs measured, in invariant checks and under the crash harness
//! (`crash.rs`), always on a `PmRegion`.

use std::borrow::BorrowMut;
use std::cell::UnsafeCell;

use super::region::{PmRegion, PmStats, LINE};

/// Persistent memory as an index sees it: 8 B loads/stores, allocation, and the
/// persistence primitives. `persist` = flush every line covering the range, then fence.
pub trait PmMem {
    fn load(&self, off: u64) -> u64;
    fn store(&mut self, off: u64, v: u64);
    /// Non-temporal 8 B store (bypasses the caches; durable at the next fence).
    fn ntstore(&mut self, off: u64, v: u64);
    /// Write back the line holding `off`.
    fn flush(&mut self, off: u64);
    fn fence(&mut self);
    /// Zeroed, `align`-aligned block of `size` bytes.
    fn alloc(&mut self, size: u64, align: u64) -> u64;
    /// Return a block of `size` bytes from `alloc`. Contract: the block is unreachable from
    /// the durable structure (the unlinking store is fenced) before it is freed; a crash
    /// between may leak it, never free a reachable block.
    fn free(&mut self, off: u64, size: u64);
    /// Hint that `[off, off+len)` is read soon. Not an access: not counted, not seen by the
    /// model (native speed only).
    #[inline]
    fn prefetch(&self, _off: u64, _len: u64) {}
    /// Mark the persist operations from now on as split / consolidation / resize work (true)
    /// or ordinary insert work (false): they also count in `PmStats::resize_*`.
    fn set_resizing(&mut self, _on: bool) {}
    /// RECIPE's persist helpers (`clflush(ptr, len, front, back)` of P-HOT and P-BwTree,
    /// FAST&FAIR's `clflush`): an optional fence, flush every line covering the range, an
    /// optional fence.
    fn flush_fenced(&mut self, off: u64, len: u64, front: bool, back: bool) {
        if front {
            self.fence();
        }
        let mut line = off & !(LINE - 1);
        while line < off + len.max(1) {
            self.flush(line);
            line += LINE;
        }
        if back {
            self.fence();
        }
    }
    fn persist(&mut self, off: u64, len: u64) {
        let mut line = off & !(LINE - 1);
        while line < off + len.max(1) {
            self.flush(line);
            line += LINE;
        }
        self.fence();
    }
    fn load_bytes(&self, off: u64, out: &mut [u8]) {
        for (i, chunk) in out.chunks_mut(8).enumerate() {
            let w = self.load(off + 8 * i as u64).to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }
    fn store_bytes(&mut self, off: u64, bytes: &[u8]) {
        for (i, chunk) in bytes.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.store(off + 8 * i as u64, u64::from_le_bytes(w));
        }
    }
}

/// The region as a [`PmMem`], every access instrumented (loads too, so the cache model sees
/// them). `R` is `&mut PmRegion` (an index operation on the framework's region) or an owned
/// `PmRegion` (unit tests). Lookups take `&self`, the region's loads `&mut`: the region sits
/// in an `UnsafeCell` (a `RefCell`'s borrow flag cost a load, a compare and two stores on
/// every access of the hot path).
pub struct Instr<R> {
    pm: UnsafeCell<R>,
}

impl<'a> Instr<&'a mut PmRegion> {
    pub fn new(pm: &'a mut PmRegion) -> Instr<&'a mut PmRegion> {
        Instr {
            pm: UnsafeCell::new(pm),
        }
    }
}

impl Instr<PmRegion> {
    /// A view that owns its region (tests drive an index directly on it).
    pub fn owned(pm: PmRegion) -> Instr<PmRegion> {
        Instr {
            pm: UnsafeCell::new(pm),
        }
    }
}

impl<R: BorrowMut<PmRegion>> Instr<R> {
    /// The region for one primitive.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    fn raw(&self) -> &mut PmRegion {
        // SAFETY: `Instr` is `!Sync` (UnsafeCell) and never hands out this reference: each
        // primitive below takes it, makes one region call (which cannot reach this `Instr`:
        // the region and its observer know nothing of it) and drops it before returning, so
        // no two `&mut` to the region are ever live at once.
        unsafe { (*self.pm.get()).borrow_mut() }
    }

    #[inline(always)]
    fn raw_mut(&mut self) -> &mut PmRegion {
        self.pm.get_mut().borrow_mut()
    }

    /// The region (its counters, allocator, crash images), between index operations.
    pub fn region_mut(&mut self) -> &mut PmRegion {
        self.raw_mut()
    }

    /// The region's instrumentation counters.
    pub fn stats(&self) -> PmStats {
        self.raw().stats()
    }

    /// Bytes allocated and not freed since the region was opened.
    pub fn live_bytes(&self) -> u64 {
        self.raw().live_bytes()
    }

    /// The allocator's high-water mark (see [`PmRegion::used_bytes`]).
    pub fn used_bytes(&self) -> u64 {
        self.raw().used_bytes()
    }
}

impl<R: BorrowMut<PmRegion>> PmMem for Instr<R> {
    #[inline(always)]
    fn load(&self, off: u64) -> u64 {
        self.raw().read_u64(off)
    }
    #[inline(always)]
    fn store(&mut self, off: u64, v: u64) {
        self.raw_mut().write_u64(off, v)
    }
    fn ntstore(&mut self, off: u64, v: u64) {
        self.raw_mut().ntstore_u64(off, v)
    }
    fn flush(&mut self, off: u64) {
        self.raw_mut().flush(off)
    }
    fn fence(&mut self) {
        self.raw_mut().fence()
    }
    fn persist(&mut self, off: u64, len: u64) {
        self.raw_mut().persist(off, len)
    }
    /// Zeroed (the allocator may hand out a freed block; the index's constructors zero).
    fn alloc(&mut self, size: u64, align: u64) -> u64 {
        let pm = self.raw_mut();
        // Anonymous regions grow; only a full file-backed region fails here.
        let off = pm
            .alloc(size, align)
            .unwrap_or_else(|e| panic!("persistent region exhausted: {e}"));
        pm.zero(off, size);
        off
    }
    fn free(&mut self, off: u64, size: u64) {
        self.raw_mut().free(off, size)
    }
    fn set_resizing(&mut self, on: bool) {
        self.raw_mut().set_resizing(on)
    }
    #[inline(always)]
    fn prefetch(&self, off: u64, len: u64) {
        self.raw().prefetch(off, len)
    }
    fn load_bytes(&self, off: u64, out: &mut [u8]) {
        self.raw().read_bytes(off, out)
    }
    fn store_bytes(&mut self, off: u64, bytes: &[u8]) {
        self.raw_mut().write_bytes(off, bytes)
    }
}

/// A read-only, uninstrumented view (invariant checks and `entries`).
pub struct Peek<'a>(pub &'a PmRegion);

impl PmMem for Peek<'_> {
    fn load(&self, off: u64) -> u64 {
        self.0.peek_u64(off)
    }
    fn load_bytes(&self, off: u64, out: &mut [u8]) {
        self.0.peek_bytes(off, out)
    }
    fn store(&mut self, _: u64, _: u64) {
        unreachable!("read-only view")
    }
    fn ntstore(&mut self, _: u64, _: u64) {
        unreachable!("read-only view")
    }
    fn flush(&mut self, _: u64) {
        unreachable!("read-only view")
    }
    fn fence(&mut self) {
        unreachable!("read-only view")
    }
    fn alloc(&mut self, _: u64, _: u64) -> u64 {
        unreachable!("read-only view")
    }
    fn free(&mut self, _: u64, _: u64) {
        unreachable!("read-only view")
    }
}
