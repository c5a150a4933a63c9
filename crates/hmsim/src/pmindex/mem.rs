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

use super::alloc::root_offset;
use super::region::{POff, PmError, PmRegion, PmResult, LINE};

/// A region that could not give an index the memory it asked for (full, over
/// `pm.max_bytes`, or beyond the host). An index's code has no error path for this, so
/// [`exhausted`] unwinds with it, and the run's point or a `SharedIndex` shard lock
/// ([`catch_exhausted`]) turns it back into an error for the user: a clear message and exit 2, not a panic.
pub(crate) struct RegionExhausted(pub(crate) PmError);

/// Unwind out of an index operation with `e` (`resume_unwind`: no panic message, no
/// backtrace; the error is reported where it is caught).
pub(crate) fn exhausted(e: PmError) -> ! {
    std::panic::resume_unwind(Box::new(RegionExhausted(e)))
}

/// `f()`, or the region error an index operation inside it unwound with. Any other panic
/// goes on unwinding.
pub(crate) fn catch_exhausted<T>(f: impl FnOnce() -> T) -> Result<T, PmError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        match payload.downcast::<RegionExhausted>() {
            Ok(e) => e.0,
            Err(other) => std::panic::resume_unwind(other),
        }
    })
}

/// Persistent memory as an index sees it: 8 B loads/stores, allocation, and the
/// persistence primitives. `persist` = flush every line covering the range, then fence.
pub(crate) trait PmMem {
    fn load(&self, off: u64) -> u64;
    fn store(&mut self, off: u64, v: u64);
    /// Non-temporal 8 B store (bypasses the caches; durable at the next fence).
    fn ntstore(&mut self, off: u64, v: u64);
    /// Write back the line holding `off`.
    fn flush(&mut self, off: u64);
    fn fence(&mut self);
    /// Zeroed, `align`-aligned block of `size` bytes.
    fn alloc(&mut self, size: u64, align: u64) -> u64;
    /// `alloc` for a design that keeps free memory zero (Tonic's `no_bloat`: fresh region
    /// memory is zero and its indexes zero a node's lines, durably, before freeing it), so
    /// only the lines the allocator wrote itself (its free-list link) hold data: zeros are
    /// stored over those alone and the other lines stay clean, so skipping their flush
    /// also skips their write-back. Default: `alloc`.
    fn alloc_clean(&mut self, size: u64, align: u64) -> u64 {
        self.alloc(size, align)
    }
    /// Return a block of `size` bytes from `alloc`. Contract: the block is unreachable from
    /// the durable structure (the unlinking store is fenced) before it is freed; a crash
    /// between may leak it, never free a reachable block.
    fn free(&mut self, off: u64, size: u64);
    /// The allocator's block as it comes (not zeroed: the caller zeroes what its design
    /// zeroes), or the region's error once a file-backed region is full. The hash indexes
    /// allocate through this, as their allocation failures are errors, not panics.
    fn try_alloc(&mut self, size: u64, align: u64) -> PmResult<POff>;
    /// Store zeros over `[off, off+len)` (one store of `len` bytes).
    fn zero(&mut self, off: u64, len: u64) {
        self.store_bytes(off, &vec![0u8; len as usize]);
    }
    /// Uninstrumented 8 B load: walks that are no part of the measured work (RECIPE's
    /// flush loops over a table it has just written, recovery scans).
    fn peek(&self, off: u64) -> u64;
    /// Size of the region in bytes (recovery checks offsets read from an image against it).
    fn region_bytes(&self) -> u64;
    /// Root slot `i` of the region (0..8): the offset of an index's top-level object.
    fn root(&self, i: u64) -> POff {
        self.load(root_offset(i))
    }
    /// Set and persist root slot `i` (store, flush, fence): a new top-level object's
    /// publication point.
    fn set_root(&mut self, i: u64, v: POff) {
        let off = root_offset(i);
        self.store(off, v);
        self.persist(off, 8);
    }
    /// Publish root slot `i` with a non-temporal store and a fence (RECIPE's `movnt64`
    /// publication of a new table).
    fn set_root_nt(&mut self, i: u64, v: POff) {
        self.ntstore(root_offset(i), v);
        self.fence();
    }
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
    /// Flush every line covering `[off, off+len)`, no fence; the first flush names `off`
    /// itself (an unaligned start), as the hash indexes' flush loops do.
    fn flush_range(&mut self, off: u64, len: u64) {
        let first = off / LINE;
        let last = (off + len.max(1) - 1) / LINE;
        for l in first..=last {
            self.flush((l * LINE).max(off));
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
    /// `out.len()` 8 B loads from `off` on, in order (as many `load`s).
    fn load_words(&self, off: u64, out: &mut [u64]) {
        for (i, w) in out.iter_mut().enumerate() {
            *w = self.load(off + 8 * i as u64);
        }
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
pub(crate) struct Instr<R> {
    pm: UnsafeCell<R>,
}

impl<'a> Instr<&'a mut PmRegion> {
    pub(crate) fn new(pm: &'a mut PmRegion) -> Instr<&'a mut PmRegion> {
        Instr {
            pm: UnsafeCell::new(pm),
        }
    }
}

#[cfg(test)]
impl Instr<PmRegion> {
    /// A view that owns its region (tests drive an index directly on it).
    pub(crate) fn owned(pm: PmRegion) -> Instr<PmRegion> {
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

    #[cfg(test)]
    /// The region (its counters, allocator, crash images), between index operations.
    pub(crate) fn region_mut(&mut self) -> &mut PmRegion {
        self.raw_mut()
    }

    #[cfg(test)]
    /// The region's instrumentation counters.
    pub(crate) fn stats(&self) -> super::counters::PmStats {
        self.raw().stats()
    }

    #[cfg(test)]
    /// Bytes allocated and not freed since the region was opened.
    pub(crate) fn live_bytes(&self) -> u64 {
        self.raw().live_bytes()
    }

    #[cfg(test)]
    /// The allocator's high-water mark (see [`PmRegion::used_bytes`]).
    pub(crate) fn used_bytes(&self) -> u64 {
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
        // Anonymous regions grow; a full file-backed region, one at `pm.max_bytes` or one the
        // host cannot map larger fails here.
        let off = pm.alloc(size, align).unwrap_or_else(|e| exhausted(e));
        pm.zero(off, size);
        off
    }
    fn alloc_clean(&mut self, size: u64, align: u64) -> u64 {
        let pm = self.raw_mut();
        let off = pm.alloc(size, align).unwrap_or_else(|e| exhausted(e));
        let end = off + size;
        let mut line = off;
        while line < end {
            let stop = (line - line % 64 + 64).min(end);
            if (line..stop).step_by(8).any(|w| pm.peek_u64(w) != 0) {
                pm.zero(line, stop - line);
            }
            line = stop;
        }
        off
    }
    fn free(&mut self, off: u64, size: u64) {
        self.raw_mut().free(off, size)
    }
    fn try_alloc(&mut self, size: u64, align: u64) -> PmResult<POff> {
        self.raw_mut().alloc(size, align)
    }
    fn zero(&mut self, off: u64, len: u64) {
        self.raw_mut().zero(off, len)
    }
    #[inline(always)]
    fn peek(&self, off: u64) -> u64 {
        self.raw().peek_u64(off)
    }
    fn region_bytes(&self) -> u64 {
        self.raw().len()
    }
    fn flush_range(&mut self, off: u64, len: u64) {
        self.raw_mut().flush_range(off, len)
    }
    fn set_resizing(&mut self, on: bool) {
        self.raw_mut().set_resizing(on)
    }
    #[inline(always)]
    fn prefetch(&self, off: u64, len: u64) {
        self.raw().prefetch(off, len)
    }
    fn load_words(&self, off: u64, out: &mut [u64]) {
        self.raw().read_words(off, out)
    }
    fn load_bytes(&self, off: u64, out: &mut [u8]) {
        self.raw().read_bytes(off, out)
    }
    fn store_bytes(&mut self, off: u64, bytes: &[u8]) {
        self.raw_mut().write_bytes(off, bytes)
    }
}

/// A read-only, uninstrumented view (invariant checks and `entries`).
pub(crate) struct Peek<'a>(pub &'a PmRegion);

impl PmMem for Peek<'_> {
    fn load(&self, off: u64) -> u64 {
        self.0.peek_u64(off)
    }
    fn load_bytes(&self, off: u64, out: &mut [u8]) {
        self.0.peek_bytes(off, out)
    }
    fn peek(&self, off: u64) -> u64 {
        self.0.peek_u64(off)
    }
    fn region_bytes(&self) -> u64 {
        self.0.len()
    }
    fn try_alloc(&mut self, _: u64, _: u64) -> PmResult<POff> {
        unreachable!("read-only view")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pmindex::region::RegionConfig;

    /// `alloc_clean` stores zeros over the lines of a reused block that hold data and leaves
    /// the zero lines unstored (clean), where `alloc` stores over the whole block.
    #[test]
    fn alloc_clean_zeroes_only_the_lines_that_hold_data() {
        let zeroed_bytes = |clean: bool| {
            let mut r = PmRegion::anonymous(RegionConfig::default()).unwrap();
            let mut pm = Instr::new(&mut r);
            let b = pm.alloc(256, 64);
            pm.store(b + 8, 7);
            pm.store(b + 2 * LINE, 9);
            pm.free(b, 256);
            let before = pm.raw().stats().store_bytes;
            let again = if clean {
                pm.alloc_clean(256, 64)
            } else {
                pm.alloc(256, 64)
            };
            assert_eq!(again, b, "the freed block is reused");
            assert!((0..32).all(|i| pm.peek(b + 8 * i) == 0));
            pm.raw().stats().store_bytes - before
        };
        // The allocator's own stores are the same in both; the zeroing differs by the two
        // clean lines.
        assert_eq!(zeroed_bytes(false), zeroed_bytes(true) + 2 * LINE);
    }

    /// The host hints the scans and searches give (`prefetch`, and `peek` to find what to
    /// prefetch) are no accesses: the observer sees no event and no counter moves, so the
    /// model's results cannot depend on them.
    #[test]
    fn host_hints_are_not_accesses() {
        use crate::pmindex::region::EventLog;
        let mut r = PmRegion::anonymous(RegionConfig::default()).unwrap();
        let b = Instr::new(&mut r).alloc(4 * LINE, LINE);
        Instr::new(&mut r).store(b + 8, 42);
        r.set_observer(Some(Box::new(EventLog::default())));
        let before = r.stats();
        let pm = Instr::new(&mut r);
        pm.prefetch(b, 4 * LINE);
        pm.prefetch(pm.region_bytes() - 8, 4 * LINE); // runs past the end: clamped
        assert_eq!(pm.peek(b + 8), 42);
        assert_eq!(r.stats(), before);
        let log = r.set_observer(None).unwrap().into_any();
        assert!(log.downcast::<EventLog>().unwrap().0.is_empty());
    }

    /// The model gets the region's host hints (it fetches its own cache sets for the lines):
    /// its caches, counters and clocks stay as they were.
    #[test]
    fn a_host_hint_leaves_the_model_as_it_was() {
        use crate::cache::CacheConfig;
        use crate::pmem::{DimmSpec, PmemConfig};
        use crate::pmindex::sim::ModelObserver;
        let mut r = PmRegion::anonymous(RegionConfig::default()).unwrap();
        let b = Instr::new(&mut r).alloc(64 * LINE, LINE);
        let dimm = DimmSpec::from_rating(128 << 30, 1e15);
        let m = ModelObserver::new(&PmemConfig::default(), &CacheConfig::default(), 1, dimm, 9);
        r.set_observer(Some(Box::new(m)));
        Instr::new(&mut r).store(b + 8, 42);
        let state = |r: &mut PmRegion| {
            let o = r.observer_mut().and_then(|o| o.as_any_mut()).unwrap();
            let m = &o.downcast_mut::<ModelObserver>().unwrap().m;
            let lines = (m.loaded_lines, m.stored_lines, m.stored_bytes);
            let levels = format!("{:?}", m.h.level_stats());
            (levels, lines, m.clocks.clone())
        };
        let before = state(&mut r);
        Instr::new(&mut r).prefetch(b, 64 * LINE);
        assert_eq!(state(&mut r), before);
        // A load after the hint is modelled as without it: the line stored above hits L1.
        assert_eq!(Instr::new(&mut r).load(b + 8), 42);
        let (levels, (loaded, _, _), _) = state(&mut r);
        assert_eq!(loaded, 1);
        assert_ne!(levels, before.0);
    }
}
