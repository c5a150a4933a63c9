//! Where the allocators' data lives in the modelled address space, laid out as Linux
//! 2.6.32 lays out the buddy's (`struct page`, `struct zone`, `struct per_cpu_pages`) and
//! as the iBuddy talk describes its own (per-space lock and level heads, one bitmap bit
//! per frame). The cost model charges each distinct 64-byte line a path touches, so only
//! the addresses matter, not the data.

/// `sizeof(struct page)` on x86-64 Linux 2.6.32 (flags, counts, private, mapping, index,
/// `lru`): 56 bytes, so adjacent frames' `struct page`s share lines.
pub(crate) const STRUCT_PAGE_BYTES: u64 = 56;

const MEMMAP_BASE: u64 = 1 << 36;
const ZONE_BASE: u64 = 1 << 37;
const PCP_BASE: u64 = ZONE_BASE + (1 << 30);
const SPACE_BASE: u64 = ZONE_BASE + (2 << 30);
const BITMAP_BASE: u64 = ZONE_BASE + (3 << 30);

/// `struct free_area`: `free_list[MIGRATE_TYPES = 5]` (16 bytes each) and `nr_free`.
const FREE_AREA_BYTES: u64 = 5 * 16 + 8;
/// The zone lock's word; `free_area[]` follows it in the same cache-line group.
const ZONE_LOCK_BYTES: u64 = 8;
// The lock and the eleven free areas end before the reclaim line.
const _: () = assert!(ZONE_LOCK_BYTES + 11 * FREE_AREA_BYTES <= 1024);

/// The `struct page` of frame `pfn`.
#[inline]
pub(crate) fn struct_page(pfn: u64) -> u64 {
    MEMMAP_BASE + pfn * STRUCT_PAGE_BYTES
}

/// The lines of the `struct page`s of `frames` frames.
pub(crate) fn memmap_lines(frames: u64) -> std::ops::Range<u64> {
    (MEMMAP_BASE >> 6)..(struct_page(frames) + 63) >> 6
}

/// `zone->lock`.
#[inline]
pub(crate) fn zone_lock() -> u64 {
    ZONE_BASE
}

/// `zone->free_area[order].free_list[migratetype]` (`nr_free` is in the same
/// `free_area`, updated with every list change).
#[inline]
pub(crate) fn free_list(order: u8, migratetype: usize) -> u64 {
    ZONE_BASE + ZONE_LOCK_BYTES + order as u64 * FREE_AREA_BYTES + 16 * migratetype as u64
}

/// `zone->pages_scanned` and `zone->flags`: after the free areas, past the zone's
/// `ZONE_PADDING`, in the reclaim section of `struct zone` (their own line in the model).
/// Every free into the buddy writes them (`free_one_page`, `free_pcppages_bulk`).
#[inline]
pub(crate) fn zone_reclaim() -> u64 {
    ZONE_BASE + 1024
}

/// `zone->free_area[order].nr_free`.
#[inline]
pub(crate) fn nr_free(order: u8) -> u64 {
    ZONE_BASE + ZONE_LOCK_BYTES + order as u64 * FREE_AREA_BYTES + 80
}

/// The per-CPU page list of `core` (`count`, `high`, `batch`, list heads): one line in
/// that CPU's per-CPU area, which no other CPU writes.
#[inline]
pub(crate) fn pcp(core: usize) -> u64 {
    PCP_BASE + core as u64 * 4096
}

/// iBuddy space `s`: its lock, free count and `next_allocation_level` share one line.
#[inline]
pub(crate) fn space_lock(s: usize) -> u64 {
    SPACE_BASE + s as u64 * 4096
}

/// iBuddy space `s`'s free-list head of `level`, after the lock's line.
#[inline]
pub(crate) fn space_level(s: usize, level: usize) -> u64 {
    space_lock(s) + 64 + 16 * level as u64
}

/// The bitmap word holding frame `pfn`'s bit.
#[inline]
pub(crate) fn bitmap_word(pfn: u64) -> u64 {
    BITMAP_BASE + (pfn / 64) * 8
}
