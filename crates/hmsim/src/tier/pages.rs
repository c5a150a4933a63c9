//! Pages, the page table (page → tier), per-tier free capacity and migration, and splitting a
//! huge page into its base pages (MEMTIS's skew-driven split).
//!
//! Page ids: `0..pages()` are the run's pages (all of `page_bytes`). In a *splittable* table
//! (huge pages with 4 KiB accounting) the base pages of huge page `h` have the ids
//! `pages() + h × units_per_page() + i` (`i` < `units_per_page()`), like 4 KiB frame numbers:
//! fixed, so a policy can name them before the split happens. Until `h` is split its base
//! pages live where `h` lives and cannot move on their own; once split, `h` itself can no
//! longer move and each base page has its own tier.
//!
//! Capacity and use are counted in accounting units: the page size, or 4 KiB in a splittable
//! table, so bytes per tier stay exact whatever mixes of huge and base pages a tier holds.
//! A huge page needs `units_per_page()` free units anywhere in the tier (fragmentation of the
//! free space is not modelled).

/// Base (split) page size.
pub(super) const BASE_PAGE_BYTES: u64 = 4096;

/// `tier_of` entry of a huge page that has been split.
const SPLIT: u8 = u8::MAX;

/// Page table over a workload's pages: one page size, optionally splittable into 4 KiB pages.
#[derive(Debug, Clone, PartialEq)]
pub struct PageTable {
    pub page_bytes: u64,
    tier_of: Vec<u8>,
    /// Accounting unit: `page_bytes`, or 4 KiB in a splittable table.
    unit_bytes: u64,
    units_per_page: u64,
    capacity_units: Vec<u64>,
    used_units: Vec<u64>,
    /// Per huge page: its slot in `sub_tier` once split (empty until the first split).
    split_slot: Vec<u32>,
    /// Tiers of the base pages of split huge pages, `units_per_page` per slot.
    sub_tier: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrateError {
    NoSuchPage,
    NoSuchTier,
    SameTier,
    Full,
    /// The huge page was split (its base pages move instead), or a base page's huge page
    /// was not (it moves as a whole).
    Split,
}

impl PageTable {
    /// Place `n_pages` first-touch: in tier order, each tier filled before the next.
    /// Returns `None` if they do not fit in all tiers together.
    pub fn first_touch(n_pages: u64, page_bytes: u64, capacities_bytes: &[u64]) -> Option<Self> {
        Self::place(n_pages, page_bytes, capacities_bytes, |_| None)
    }

    /// Place pages by `prefer(page)`, falling back to first-touch order when the preferred
    /// tier is full.
    pub fn place(
        n_pages: u64,
        page_bytes: u64,
        capacities_bytes: &[u64],
        prefer: impl Fn(u64) -> Option<usize>,
    ) -> Option<Self> {
        Self::place_with(n_pages, page_bytes, false, capacities_bytes, prefer)
    }

    /// As [`place`](Self::place); `splittable` makes huge pages (a multiple of 4 KiB above
    /// it) splittable into 4 KiB pages, with capacity counted in 4 KiB units. A tier still
    /// holds only whole huge pages at placement (its capacity rounded down to them).
    pub fn place_with(
        n_pages: u64,
        page_bytes: u64,
        splittable: bool,
        capacities_bytes: &[u64],
        prefer: impl Fn(u64) -> Option<usize>,
    ) -> Option<Self> {
        let unit_bytes = if splittable
            && page_bytes > BASE_PAGE_BYTES
            && page_bytes.is_multiple_of(BASE_PAGE_BYTES)
        {
            BASE_PAGE_BYTES
        } else {
            page_bytes
        };
        let units_per_page = page_bytes / unit_bytes;
        // Whole pages per tier, as before splitting existed; then in units.
        let capacity_units: Vec<u64> = capacities_bytes
            .iter()
            .map(|c| c / page_bytes * units_per_page)
            .collect();
        if capacity_units.iter().sum::<u64>() / units_per_page < n_pages
            || capacity_units.len() > 254
        {
            return None;
        }
        let mut pt = PageTable {
            page_bytes,
            tier_of: crate::hugevec::with_capacity(n_pages as usize),
            unit_bytes,
            units_per_page,
            used_units: vec![0; capacity_units.len()],
            capacity_units,
            split_slot: Vec::new(),
            sub_tier: Vec::new(),
        };
        // Free whole pages per tier, counted down as pages are placed (the same counts as
        // `free_pages`, without a division per page); free pages only ever decrease, so the
        // first tier with room never moves back.
        let mut free: Vec<u64> = (0..pt.tiers()).map(|t| pt.free_pages(t)).collect();
        let mut first_free = 0;
        for p in 0..n_pages {
            let t = match prefer(p) {
                Some(t) if t < free.len() && free[t] > 0 => t,
                _ => {
                    while free.get(first_free) == Some(&0) {
                        first_free += 1;
                    }
                    if first_free == free.len() {
                        return None;
                    }
                    first_free
                }
            };
            pt.tier_of.push(t as u8);
            free[t] -= 1;
        }
        for (t, used) in pt.used_units.iter_mut().enumerate() {
            *used = pt.capacity_units[t] - free[t] * units_per_page;
        }
        Some(pt)
    }

    pub fn tiers(&self) -> usize {
        self.capacity_units.len()
    }
    /// Pages of the run (the ids below this are whole pages; base pages come after).
    pub fn pages(&self) -> u64 {
        self.tier_of.len() as u64
    }
    /// Whether huge pages can be split here.
    pub fn splittable(&self) -> bool {
        self.units_per_page > 1
    }
    pub fn unit_bytes(&self) -> u64 {
        self.unit_bytes
    }
    /// Accounting units (base pages) per page: 512 for splittable 2 MiB pages, else 1.
    pub fn units_per_page(&self) -> u64 {
        self.units_per_page
    }
    /// Huge pages split so far.
    pub fn split_count(&self) -> u64 {
        (self.sub_tier.len() as u64) / self.units_per_page.max(1)
    }

    /// Tier of page `id` (a page, or a base page: its own tier once its huge page is split,
    /// else the huge page's). A split huge page has no single tier: `u8::MAX`.
    #[inline]
    pub fn tier(&self, id: u64) -> usize {
        match self.tier_of.get(id as usize) {
            Some(&t) => t as usize,
            None => self.base_tier(id),
        }
    }

    /// Start loading the tier byte of page `id` (below [`pages`](Self::pages)) that a
    /// [`tier`](Self::tier) call will soon read: for loops over pages in random order.
    #[inline]
    pub fn prefetch(&self, id: u64) {
        if let Some(b) = self.tier_of.get(id as usize) {
            crate::hostmem::prefetch(b);
        }
    }

    /// [`tier`](Self::tier) for any id: None for an id that names no page.
    pub fn try_tier(&self, id: u64) -> Option<usize> {
        if id < self.pages() || self.parent_of(id).is_some() {
            Some(self.tier(id))
        } else {
            None
        }
    }

    #[cold]
    fn base_tier(&self, id: u64) -> usize {
        let (h, i) = self.parent_of(id).expect("no such page id");
        self.base_tier_of(h, i)
    }

    /// Tier of base page `i` of huge page `h` (the huge page's own until it is split).
    #[inline]
    pub fn base_tier_of(&self, h: u64, i: u64) -> usize {
        match self.tier_of[h as usize] {
            SPLIT => {
                let slot = self.split_slot[h as usize] as u64;
                self.sub_tier[(slot * self.units_per_page + i) as usize] as usize
            }
            t => t as usize,
        }
    }

    /// Huge page and index within it of base page `id` (None: not a base-page id).
    pub fn parent_of(&self, id: u64) -> Option<(u64, u64)> {
        let r = id.checked_sub(self.pages())?;
        let h = r / self.units_per_page;
        (self.splittable() && h < self.pages()).then_some((h, r % self.units_per_page))
    }

    /// Id of base page `i` of huge page `h`.
    pub fn base_id(&self, h: u64, i: u64) -> u64 {
        self.pages() + h * self.units_per_page + i
    }

    /// Whether huge page `h` has been split.
    #[inline]
    pub fn is_split(&self, h: u64) -> bool {
        self.tier_of.get(h as usize) == Some(&SPLIT)
    }

    /// Bytes of page `id`.
    pub fn page_size(&self, id: u64) -> u64 {
        if id < self.pages() {
            self.page_bytes
        } else {
            self.unit_bytes
        }
    }

    /// Accounting units of page `id`.
    #[inline]
    fn units_of(&self, id: u64) -> u64 {
        if id < self.pages() {
            self.units_per_page
        } else {
            1
        }
    }

    /// Pages (of `page_bytes`) a tier holds, rounded down when base pages fill part of one.
    pub fn used_pages(&self, tier: usize) -> u64 {
        self.used_units[tier] / self.units_per_page
    }
    pub fn capacity_pages(&self, tier: usize) -> u64 {
        self.capacity_units[tier] / self.units_per_page
    }
    /// Whole pages that still fit in a tier.
    pub fn free_pages(&self, tier: usize) -> u64 {
        self.free_units(tier) / self.units_per_page
    }
    pub fn used_units(&self, tier: usize) -> u64 {
        self.used_units[tier]
    }
    pub fn capacity_units(&self, tier: usize) -> u64 {
        self.capacity_units[tier]
    }
    pub fn free_units(&self, tier: usize) -> u64 {
        self.capacity_units[tier] - self.used_units[tier]
    }
    pub fn free_bytes(&self, tier: usize) -> u64 {
        self.free_units(tier) * self.unit_bytes
    }

    /// Move page `id` to tier `to`; the page table and both tiers' counts change together.
    pub fn migrate(&mut self, id: u64, to: usize) -> Result<(), MigrateError> {
        if to >= self.tiers() {
            return Err(MigrateError::NoSuchTier);
        }
        let size = self.units_of(id);
        let slot: &mut u8 = if let Some(t) = self.tier_of.get_mut(id as usize) {
            if *t == SPLIT {
                return Err(MigrateError::Split);
            }
            t
        } else {
            let (h, i) = self.parent_of(id).ok_or(MigrateError::NoSuchPage)?;
            if self.tier_of[h as usize] != SPLIT {
                return Err(MigrateError::Split);
            }
            let s = self.split_slot[h as usize] as u64;
            &mut self.sub_tier[(s * self.units_per_page + i) as usize]
        };
        let from = *slot as usize;
        if from == to {
            return Err(MigrateError::SameTier);
        }
        if self.capacity_units[to] - self.used_units[to] < size {
            return Err(MigrateError::Full);
        }
        *slot = to as u8;
        self.used_units[from] -= size;
        self.used_units[to] += size;
        Ok(())
    }

    /// Exchange the tiers of two pages of one size (a swap needs no free frame).
    pub fn swap(&mut self, a: u64, b: u64) -> Result<(), MigrateError> {
        let n = self.tier_of.len() as u64;
        if a >= n || b >= n {
            // Base pages swap as a pair of migrations would, without needing a free frame.
            let (ta, tb) = (self.checked_tier(a)?, self.checked_tier(b)?);
            if self.units_of(a) != self.units_of(b) {
                return Err(MigrateError::Split);
            }
            if ta == tb {
                return Err(MigrateError::SameTier);
            }
            self.set_base_tier(a, tb)?;
            self.set_base_tier(b, ta)?;
            return Ok(());
        }
        let (ta, tb) = (self.tier_of[a as usize], self.tier_of[b as usize]);
        if ta == SPLIT || tb == SPLIT {
            return Err(MigrateError::Split);
        }
        if ta == tb {
            return Err(MigrateError::SameTier);
        }
        self.tier_of.swap(a as usize, b as usize);
        Ok(())
    }

    /// The first page on `tier` among `from .. from + len` (clamped to the table), if any.
    /// Sweeps (kswapd's LRU hand) skip other tiers' pages with it eight at a time.
    pub fn next_in_tier(&self, tier: usize, from: u64, len: u64) -> Option<u64> {
        let start = (from as usize).min(self.tier_of.len());
        let end = (from.saturating_add(len) as usize).min(self.tier_of.len());
        let t = tier as u8;
        let seg = &self.tier_of[start..end];
        let mut chunks = seg.chunks_exact(8);
        let mut base = start;
        for c in &mut chunks {
            // Bytes equal to `t` become zero; the lowest zero byte of a word is found exactly
            // by the classic has-zero-byte trick (only bytes above it can be false hits).
            let x = u64::from_le_bytes(c.try_into().expect("8 bytes"))
                ^ (0x0101_0101_0101_0101 * u64::from(t));
            let z = x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080;
            if z != 0 {
                return Some((base + z.trailing_zeros() as usize / 8) as u64);
            }
            base += 8;
        }
        chunks
            .remainder()
            .iter()
            .position(|&b| b == t)
            .map(|i| (base + i) as u64)
    }

    /// Calls `visit` on each page id among `from .. to` (clamped to the table) whose tier
    /// byte is `tier` (with `other`, is not `tier`), in order, until `visit` returns false;
    /// returns the id it stopped at. Eight tier bytes are matched at once, so a sweep over
    /// a table whose tiers interleave at random does not mispredict a branch per page.
    #[inline]
    pub fn visit_tier(
        &self,
        tier: usize,
        other: bool,
        from: u64,
        to: u64,
        mut visit: impl FnMut(u64) -> bool,
    ) -> Option<u64> {
        const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let start = (from as usize).min(self.tier_of.len());
        let end = (to as usize).min(self.tier_of.len()).max(start);
        let t = tier as u8;
        let seg = &self.tier_of[start..end];
        let mut chunks = seg.chunks_exact(8);
        let mut base = start as u64;
        for c in &mut chunks {
            let x = u64::from_le_bytes(c.try_into().expect("8 bytes"))
                ^ (0x0101_0101_0101_0101 * u64::from(t));
            // The high bit of each byte of `x` that is not zero, exactly (no carries cross
            // bytes: the low seven bits add to at most 0xfe).
            let nonzero = (((x & LOW7) + LOW7) | x) & HIGH;
            let mut hits = if other { nonzero } else { !nonzero & HIGH };
            while hits != 0 {
                let p = base + u64::from(hits.trailing_zeros() / 8);
                hits &= hits - 1;
                if !visit(p) {
                    return Some(p);
                }
            }
            base += 8;
        }
        for &b in chunks.remainder() {
            if (b == t) != other && !visit(base) {
                return Some(base);
            }
            base += 1;
        }
        None
    }

    /// The pages `64·word .. 64·word + 64` whose tier byte is `tier` (with `other`, is not
    /// `tier`) as bits (bit i: page `64·word + i`); ids past the table are never set. The
    /// pages [`visit_tier`](Self::visit_tier) visits, 64 at a time, for loops that combine
    /// them with other per-page bit sets.
    #[inline(always)]
    pub fn tier_mask64(&self, tier: usize, other: bool, word: usize) -> u64 {
        let start = word * 64;
        if let Some(bytes) = self.tier_of.get(start..start + 64) {
            let bytes: &[u8; 64] = bytes.try_into().expect("64 bytes");
            let equal = equal_bytes64(bytes, tier as u8);
            return if other { !equal } else { equal };
        }
        let mut mask = 0u64;
        for (i, &b) in self.tier_of.get(start..).unwrap_or(&[]).iter().enumerate() {
            if (b == tier as u8) != other {
                mask |= 1 << i;
            }
        }
        mask
    }

    /// Tier of a movable page (not a split huge page, not a base page of an unsplit one).
    fn checked_tier(&self, id: u64) -> Result<usize, MigrateError> {
        if id < self.pages() {
            return match self.tier_of[id as usize] {
                SPLIT => Err(MigrateError::Split),
                t => Ok(t as usize),
            };
        }
        let (h, _) = self.parent_of(id).ok_or(MigrateError::NoSuchPage)?;
        if !self.is_split(h) {
            return Err(MigrateError::Split);
        }
        Ok(self.tier(id))
    }

    /// Set a page's tier with no accounting change (half of a swap).
    fn set_base_tier(&mut self, id: u64, t: usize) -> Result<(), MigrateError> {
        if id < self.pages() {
            self.tier_of[id as usize] = t as u8;
            return Ok(());
        }
        let (h, i) = self.parent_of(id).ok_or(MigrateError::NoSuchPage)?;
        let s = self.split_slot[h as usize] as u64;
        self.sub_tier[(s * self.units_per_page + i) as usize] = t as u8;
        Ok(())
    }

    /// Split huge page `h` into its base pages, each on `h`'s tier (no copy: only the page
    /// table changes, so per-tier bytes are unchanged).
    pub fn split(&mut self, h: u64) -> Result<(), MigrateError> {
        if !self.splittable() {
            return Err(MigrateError::Split);
        }
        let t = *self
            .tier_of
            .get(h as usize)
            .ok_or(MigrateError::NoSuchPage)?;
        if t == SPLIT {
            return Err(MigrateError::Split);
        }
        if self.split_slot.is_empty() {
            self.split_slot = vec![u32::MAX; self.tier_of.len()];
        }
        self.split_slot[h as usize] = self.split_count() as u32;
        self.sub_tier
            .extend(std::iter::repeat_n(t, self.units_per_page as usize));
        self.tier_of[h as usize] = SPLIT;
        Ok(())
    }

    /// Accounting units per tier counted from the table itself (for conservation checks;
    /// pages when the table is not splittable).
    pub fn count_by_tier(&self) -> Vec<u64> {
        let mut c = vec![0; self.tiers()];
        for &t in &self.tier_of {
            if t != SPLIT {
                c[t as usize] += self.units_per_page;
            }
        }
        for &t in &self.sub_tier {
            c[t as usize] += 1;
        }
        c
    }

    /// Bytes per tier counted from the table itself.
    pub fn bytes_by_tier(&self) -> Vec<u64> {
        self.count_by_tier()
            .into_iter()
            .map(|u| u * self.unit_bytes)
            .collect()
    }
}

/// Bit i set when `bytes[i] == t`: 16 bytes per compare on x86_64 (SSE2 is part of the
/// architecture), eight per word elsewhere.
#[inline(always)]
fn equal_bytes64(bytes: &[u8; 64], t: u8) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
        };
        let mut mask = 0u64;
        // SAFETY: SSE2 is always present on x86_64; each load reads 16 of the 64 bytes.
        unsafe {
            let tv = _mm_set1_epi8(t as i8);
            for i in 0..4 {
                let v = _mm_loadu_si128(bytes.as_ptr().add(16 * i) as *const __m128i);
                let m = _mm_movemask_epi8(_mm_cmpeq_epi8(v, tv)) as u32 as u64;
                mask |= m << (16 * i);
            }
        }
        mask
    }
    #[cfg(not(target_arch = "x86_64"))]
    equal_bytes64_words(bytes, t)
}

/// [`equal_bytes64`] eight bytes per word, on any architecture.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn equal_bytes64_words(bytes: &[u8; 64], t: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let tt = 0x0101_0101_0101_0101 * u64::from(t);
    let mut mask = 0u64;
    for (i, c) in bytes.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(c.try_into().expect("8 bytes")) ^ tt;
        // The high bit of each zero byte, as in `visit_tier`; then the eight high bits
        // gathered into one byte (the products' bits do not overlap).
        let zero = !((((x & LOW7) + LOW7) | x) & HIGH) & HIGH;
        let byte = (zero >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        mask |= byte << (8 * i);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `visit_tier` visits exactly the pages of a tier (or of the others) in order and
    /// stops where its visitor does.
    #[test]
    fn visit_tier_matches_a_page_by_page_scan() {
        let mut rng = crate::rng::stream(9, "t");
        use rand::Rng;
        let caps = [300 * 4096, 300 * 4096, 300 * 4096];
        let mut pt = PageTable::first_touch(700, 4096, &caps).unwrap();
        for p in 0..700 {
            let to = rng.random_range(0..3usize);
            let _ = pt.migrate(p, to);
        }
        for tier in 0..3 {
            for other in [false, true] {
                for (from, to) in [(0, 700), (3, 650), (17, 18), (699, 800), (5, 5)] {
                    let want: Vec<u64> = (from..to.min(700))
                        .filter(|&p| (pt.tier(p) == tier) != other)
                        .collect();
                    let mut got = Vec::new();
                    assert_eq!(
                        pt.visit_tier(tier, other, from, to, |p| {
                            got.push(p);
                            true
                        }),
                        None
                    );
                    assert_eq!(got, want, "tier {tier} other {other} {from}..{to}");
                    if let Some(&stop) = want.get(want.len() / 2) {
                        let mut n = 0;
                        let at = pt.visit_tier(tier, other, from, to, |p| {
                            n += 1;
                            p != stop
                        });
                        assert_eq!((at, n), (Some(stop), want.len() / 2 + 1));
                    }
                }
            }
        }
    }

    #[test]
    fn first_touch_fills_in_order_and_migration_conserves() {
        let mut pt = PageTable::first_touch(10, 4096, &[4 * 4096, 8 * 4096]).unwrap();
        assert_eq!(pt.count_by_tier(), vec![4, 6]);
        assert_eq!(pt.migrate(0, 0), Err(MigrateError::SameTier));
        assert_eq!(pt.migrate(9, 0), Err(MigrateError::Full));
        pt.migrate(0, 1).unwrap();
        pt.migrate(9, 0).unwrap();
        pt.swap(1, 8).unwrap();
        assert_eq!(pt.count_by_tier(), vec![4, 6]);
        assert_eq!(pt.used_pages(0), 4);
        assert!(PageTable::first_touch(13, 4096, &[4 * 4096, 8 * 4096]).is_none());
        assert_eq!(
            pt.split(0),
            Err(MigrateError::Split),
            "4 KiB pages do not split"
        );
    }

    const HUGE: u64 = 2 << 20;

    #[test]
    fn a_split_huge_page_moves_as_base_pages_and_bytes_are_conserved() {
        // 4 huge pages; the default tier holds 2, the alternate 3.
        let mut pt = PageTable::place_with(4, HUGE, true, &[2 * HUGE, 3 * HUGE], |_| None).unwrap();
        assert_eq!(pt.units_per_page(), 512);
        assert_eq!(pt.bytes_by_tier(), vec![2 * HUGE, 2 * HUGE]);
        pt.split(2).unwrap();
        assert_eq!(pt.split(2), Err(MigrateError::Split));
        assert_eq!(pt.split_count(), 1);
        assert_eq!(pt.migrate(2, 0), Err(MigrateError::Split));
        // Base pages of an unsplit page follow it and cannot move alone.
        assert_eq!(pt.tier(pt.base_id(0, 7)), 0);
        assert_eq!(pt.migrate(pt.base_id(0, 7), 1), Err(MigrateError::Split));
        // The default tier is full: a base page cannot come in until one leaves.
        let b = pt.base_id(2, 5);
        assert_eq!(pt.tier(b), 1);
        assert_eq!(pt.migrate(b, 0), Err(MigrateError::Full));
        pt.migrate(0, 1).unwrap();
        pt.migrate(b, 0).unwrap();
        assert_eq!(pt.tier(b), 0);
        assert_eq!(pt.page_size(b), 4096);
        // A whole page no longer fits beside the base page.
        assert_eq!(pt.free_pages(0), 0);
        assert_eq!(pt.free_units(0), 511);
        assert_eq!(pt.migrate(3, 0), Err(MigrateError::Full));
        assert_eq!(pt.swap(b, 3), Err(MigrateError::Split), "sizes differ");
        pt.swap(b, pt.base_id(2, 6)).unwrap();
        assert_eq!(pt.tier(b), 1);
        assert_eq!(pt.tier(pt.base_id(2, 6)), 0);
        // Page 1 and one base page in the default tier; a swap moves no bytes.
        assert_eq!(pt.bytes_by_tier(), vec![HUGE + 4096, 3 * HUGE - 4096]);
        for t in 0..2 {
            assert_eq!(pt.count_by_tier()[t], pt.used_units(t));
        }
    }

    proptest! {
        /// Any sequence of splits, migrations and swaps keeps the per-tier bytes counted
        /// from the table equal to the accounting, within capacity, and the total fixed.
        #[test]
        fn splits_and_migrations_conserve_bytes_per_tier(
            ops in proptest::collection::vec((0u8..4, 0u64..6, 0u64..512, 0u64..6, 0u64..512, 0usize..3), 1..200)
        ) {
            let caps = [3 * HUGE + 4096 * 7, 2 * HUGE, 2 * HUGE];
            let mut pt = PageTable::place_with(6, HUGE, true, &caps, |p| Some((p % 3) as usize)).unwrap();
            let total: u64 = pt.bytes_by_tier().iter().sum();
            let id = |pt: &PageTable, h: u64, i: u64, base: bool| if base { pt.base_id(h, i) } else { h };
            for (op, h, i, h2, i2, to) in ops {
                let _ = match op {
                    0 => pt.split(h),
                    1 => pt.migrate(id(&pt, h, i, pt.is_split(h)), to),
                    2 => pt.swap(id(&pt, h, i, pt.is_split(h)), id(&pt, h2, i2, pt.is_split(h2))),
                    _ => pt.migrate(id(&pt, h, i, true), to),
                };
                let bytes = pt.bytes_by_tier();
                prop_assert_eq!(bytes.iter().sum::<u64>(), total);
                for t in 0..pt.tiers() {
                    prop_assert_eq!(pt.count_by_tier()[t], pt.used_units(t));
                    prop_assert!(pt.used_units(t) <= pt.capacity_units(t));
                }
            }
        }
    }

    #[test]
    fn tier_masks_hold_the_pages_visit_tier_visits() {
        let pt = PageTable::place(203, 4096, &[90 * 4096, 120 * 4096], |p| {
            Some(usize::from((p * p / 7 + p / 13) % 3 == 0))
        })
        .unwrap();
        for tier in 0..3 {
            for other in [false, true] {
                let mut want = [0u64; 5];
                pt.visit_tier(tier, other, 0, 320, |p| {
                    want[p as usize / 64] |= 1 << (p % 64);
                    true
                });
                let got: Vec<u64> = (0..5).map(|w| pt.tier_mask64(tier, other, w)).collect();
                assert_eq!(got, want, "tier {tier} other {other}");
            }
        }
        // Both byte comparisons, on bytes of every value.
        use rand::Rng;
        let mut r = crate::rng::stream(11, "t");
        for _ in 0..200 {
            let bytes: [u8; 64] = std::array::from_fn(|_| r.random_range(0..4u8) * 85);
            for t in [0u8, 85, 170, 255, 1] {
                let want = (0..64).fold(0u64, |m, i| m | (u64::from(bytes[i] == t) << i));
                assert_eq!(equal_bytes64(&bytes, t), want);
                assert_eq!(equal_bytes64_words(&bytes, t), want);
            }
        }
    }

    #[test]
    fn next_in_tier_equals_a_page_by_page_search() {
        // Tiers in irregular runs, so words hold mixes, whole runs and tails.
        let pt = PageTable::place(203, 4096, &[90 * 4096, 120 * 4096], |p| {
            Some(usize::from((p * p / 7 + p / 13) % 3 == 0))
        })
        .unwrap();
        for tier in 0..2 {
            for from in 0..210u64 {
                for len in [0u64, 1, 5, 8, 9, 17, 64, 300] {
                    let want = (from..(from + len).min(pt.pages())).find(|&p| pt.tier(p) == tier);
                    assert_eq!(
                        pt.next_in_tier(tier, from, len),
                        want,
                        "{tier} {from} {len}"
                    );
                }
            }
        }
    }
}
