//! The persistent allocator. Its metadata lives in the region header and is crash-consistent:
//! - space is reserved from the heap in 64 KiB chunks; the reservation's end (`reserved_top`)
//!   is persisted before any block in the chunk is handed out, so after a crash every block
//!   ever handed out lies below the durable `reserved_top` and is never handed out again
//!   (the rest of the last chunk leaks; recovery starts at `reserved_top`);
//! - freed blocks go onto per-size-class free lists whose links are persisted before the
//!   head is (a crash between leaks the block, it never hands it out twice). Contract: the
//!   caller unlinks a block from its structure, durably, before freeing it.
//!
//! Layout of the header (4 KiB at offset 0): magic, region size, `reserved_top`, 8 root
//! slots (indexes keep their top-level object there), free-list heads per class.

use super::region::{POff, PmRegion, PmResult, HEADER_BYTES, OFF_RESERVED};

const OFF_ROOTS: u64 = 64;
pub(crate) const ROOT_SLOTS: u64 = 8;

/// Offset of root slot `i` (0..8) in the region header, where an index keeps the offset of
/// its top-level object (read and published through `PmMem::root` / `set_root`).
pub(super) fn root_offset(i: u64) -> POff {
    assert!(i < ROOT_SLOTS);
    OFF_ROOTS + 8 * i
}
const OFF_FREE: u64 = 128;
/// Size classes: 64 B steps up to 4 KiB (64 classes), then powers of two up to 2^40.
const N_CLASSES: u64 = 64 + 28;
const CHUNK: u64 = 64 << 10;

fn class_of(size: u64) -> (u64, u64) {
    let s = size.max(1).next_multiple_of(64);
    if s <= 4096 {
        (s / 64 - 1, s)
    } else {
        let p = s.next_power_of_two();
        (64 + p.trailing_zeros() as u64 - 13, p)
    }
}

impl PmRegion {
    /// Allocate `size` bytes aligned to `align` (a power of two, ≥ 64). The block's contents
    /// are unspecified (a reused block keeps old bytes); the caller initializes and persists
    /// it before publishing a pointer to it.
    pub(crate) fn alloc(&mut self, size: u64, align: u64) -> PmResult<POff> {
        let align = align.max(64);
        debug_assert!(align.is_power_of_two());
        let (class, csize) = class_of(size);
        let head_off = OFF_FREE + 8 * class;
        let head = self.peek_u64(head_off);
        self.in_alloc = true;
        let res = if head != 0 && head.is_multiple_of(align) {
            let next = self.read_u64(head);
            self.write_u64(head_off, next);
            self.persist(head_off, 8);
            Ok(head)
        } else {
            self.bump_alloc(csize, align)
        };
        self.in_alloc = false;
        if res.is_ok() {
            self.live_bytes += size;
        }
        res
    }

    fn bump_alloc(&mut self, size: u64, align: u64) -> PmResult<POff> {
        let start = self.bump.next_multiple_of(align);
        let end = start + size;
        let reserved = self.peek_u64(OFF_RESERVED);
        if end > reserved {
            let new_top = end.next_multiple_of(CHUNK);
            self.ensure(new_top)?;
            self.write_u64(OFF_RESERVED, new_top);
            self.persist(OFF_RESERVED, 8);
        }
        self.bump = end;
        Ok(start)
    }

    /// Return a block (see the module contract: unlink it durably first).
    pub(crate) fn free(&mut self, off: POff, size: u64) {
        let (class, _) = class_of(size);
        let head_off = OFF_FREE + 8 * class;
        self.in_alloc = true;
        let head = self.read_u64(head_off);
        self.write_u64(off, head);
        self.persist(off, 8);
        self.write_u64(head_off, off);
        self.persist(head_off, 8);
        self.in_alloc = false;
        // Saturating: a block allocated before a reopen was never counted.
        self.live_bytes = self.live_bytes.saturating_sub(size);
    }

    #[cfg(test)]
    /// Bytes handed out by `alloc` and not freed since the region was opened (volatile
    /// bookkeeping for tests that bound an index's memory; requested sizes, not classes).
    pub(crate) fn live_bytes(&self) -> u64 {
        self.live_bytes
    }

    /// Walk the free lists (for invariant checks): every block in range, aligned, no cycle.
    pub(crate) fn check_allocator(&self) -> Result<(), String> {
        let top = self.peek_u64(OFF_RESERVED);
        for class in 0..N_CLASSES {
            let mut b = self.peek_u64(OFF_FREE + 8 * class);
            let mut n = 0u64;
            while b != 0 {
                if b < HEADER_BYTES || b >= top || !b.is_multiple_of(64) {
                    return Err(format!("free list {class}: bad block {b}"));
                }
                n += 1;
                if n > top / 64 {
                    return Err(format!("free list {class}: cycle"));
                }
                b = self.peek_u64(b);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::region::RegionConfig;
    use super::*;

    #[test]
    fn classes_round_up_and_blocks_are_reused() {
        assert_eq!(class_of(1), (0, 64));
        assert_eq!(class_of(4096), (63, 4096));
        assert_eq!(class_of(4097), (64, 8192));
        let mut r = PmRegion::anonymous(RegionConfig::default()).unwrap();
        let a = r.alloc(100, 64).unwrap();
        let b = r.alloc(100, 256).unwrap();
        assert!(a >= HEADER_BYTES && b.is_multiple_of(256) && b >= a + 128);
        r.free(a, 100);
        assert_eq!(r.alloc(128, 64).unwrap(), a);
        r.check_allocator().unwrap();
        // Allocator persists are charged apart from the index's.
        assert_eq!(r.stats().flushes, 0);
        assert!(r.stats().alloc_flushes > 0);
    }

    #[test]
    fn reopening_an_image_never_hands_out_a_used_block() {
        let mut r = PmRegion::anonymous(RegionConfig::default()).unwrap();
        let a = r.alloc(64, 64).unwrap();
        let mut img = vec![0u8; r.used_bytes() as usize];
        r.peek_bytes(0, &mut img);
        let mut r2 = PmRegion::from_image(&img, RegionConfig::default()).unwrap();
        let b = r2.alloc(64, 64).unwrap();
        assert!(b > a);
        assert!(PmRegion::from_image(&[0u8; 64], RegionConfig::default()).is_err());
    }
}
