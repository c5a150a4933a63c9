//! The kernel's own memory: what of a node's usable capacity an allocation can get.
//!
//! usable for pages = managed bytes − `struct page` array kept on the node − per-node
//! reserves (the kernel's boot allocations, an input, plus the min watermark), and every
//! allocation also needs its own page tables and vmalloc's page array. Figures are Linux 5.4
//! x86-64 (the aliusM kernel); see docs/numa-pmem.md "The kernel's own memory".

/// `sizeof(struct page)` on x86-64: one per 4 KiB base page (the memmap).
pub(super) const STRUCT_PAGE_BYTES: u64 = 64;
/// Base page the memmap counts, whatever the allocation's page size.
pub(super) const BASE_PAGE_BYTES: u64 = 4096;
/// One page-table entry (x86-64: 8 B per mapped page).
pub(super) const PTE_BYTES: u64 = 8;
/// One entry of vmalloc's `struct page *` array (a pointer per page).
pub(super) const PAGE_ARRAY_ENTRY_BYTES: u64 = 8;
/// Linux 5.4 `init_per_zone_wmark_min`: min_free_kbytes = sqrt(16 × managed KiB), clamped to
/// 128 KiB … 64 MiB, split over zones in proportion to their size.
const MIN_FREE_KIB_CAP: f64 = 65536.0;
const MIN_FREE_KIB_FLOOR: f64 = 128.0;

/// Bytes of `struct page` describing `managed_bytes` of memory.
pub(super) fn struct_page_bytes(managed_bytes: u64) -> u64 {
    managed_bytes / BASE_PAGE_BYTES * STRUCT_PAGE_BYTES
}

/// The whole machine's min watermark (bytes) for `total_managed_bytes` of memory.
pub(super) fn min_free_bytes(total_managed_bytes: u64) -> u64 {
    let kib = (16.0 * total_managed_bytes as f64 / 1024.0).sqrt();
    (kib.clamp(MIN_FREE_KIB_FLOOR, MIN_FREE_KIB_CAP) * 1024.0) as u64
}

/// Pages of kernel metadata an allocation of `pages` pages of `page_bytes` needs: the
/// last-level page-table pages mapping it and vmalloc's page array (both rounded up to whole
/// pages; upper table levels are under 1/512 of that and left out).
pub(super) fn metadata_pages(pages: u64, page_bytes: u64) -> u64 {
    (pages * PTE_BYTES).div_ceil(page_bytes) + (pages * PAGE_ARRAY_ENTRY_BYTES).div_ceil(page_bytes)
}

/// What the kernel takes from one node before any allocation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NodeBudget {
    /// Usable bytes of the node's memory (DRAM, or the modules' usable capacity).
    pub managed_bytes: u64,
    /// `struct page` arrays kept on this node (its own, and hot-added modules' in flat mode).
    pub struct_page_bytes: u64,
    /// Boot allocations (topology input) plus this node's share of the min watermark.
    pub reserve_bytes: u64,
}

impl NodeBudget {
    pub fn free_bytes(&self) -> u64 {
        self.managed_bytes
            .saturating_sub(self.struct_page_bytes + self.reserve_bytes)
    }
}
