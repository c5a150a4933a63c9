//! Pages, the page table (page → tier), per-tier free capacity and migration.

/// Page table over a workload's pages, all of one size.
#[derive(Debug, Clone, PartialEq)]
pub struct PageTable {
    pub page_bytes: u64,
    tier_of: Vec<u8>,
    /// Pages each tier can hold.
    capacity_pages: Vec<u64>,
    used_pages: Vec<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrateError {
    NoSuchPage,
    NoSuchTier,
    SameTier,
    Full,
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
        let capacity_pages: Vec<u64> = capacities_bytes.iter().map(|c| c / page_bytes).collect();
        if capacity_pages.iter().sum::<u64>() < n_pages || capacity_pages.len() > 255 {
            return None;
        }
        let mut pt = PageTable {
            page_bytes,
            tier_of: Vec::with_capacity(n_pages as usize),
            used_pages: vec![0; capacity_pages.len()],
            capacity_pages,
        };
        for p in 0..n_pages {
            let t = match prefer(p) {
                Some(t) if t < pt.tiers() && pt.free_pages(t) > 0 => t,
                _ => (0..pt.tiers()).find(|&t| pt.free_pages(t) > 0)?,
            };
            pt.tier_of.push(t as u8);
            pt.used_pages[t] += 1;
        }
        Some(pt)
    }

    pub fn tiers(&self) -> usize {
        self.capacity_pages.len()
    }
    pub fn pages(&self) -> u64 {
        self.tier_of.len() as u64
    }
    pub fn tier(&self, page: u64) -> usize {
        self.tier_of[page as usize] as usize
    }
    pub fn used_pages(&self, tier: usize) -> u64 {
        self.used_pages[tier]
    }
    pub fn capacity_pages(&self, tier: usize) -> u64 {
        self.capacity_pages[tier]
    }
    pub fn free_pages(&self, tier: usize) -> u64 {
        self.capacity_pages[tier] - self.used_pages[tier]
    }
    pub fn free_bytes(&self, tier: usize) -> u64 {
        self.free_pages(tier) * self.page_bytes
    }

    /// Move `page` to tier `to`; the page table and both tiers' counts change together.
    pub fn migrate(&mut self, page: u64, to: usize) -> Result<(), MigrateError> {
        let from = *self
            .tier_of
            .get(page as usize)
            .ok_or(MigrateError::NoSuchPage)? as usize;
        if to >= self.tiers() {
            return Err(MigrateError::NoSuchTier);
        }
        if from == to {
            return Err(MigrateError::SameTier);
        }
        if self.free_pages(to) == 0 {
            return Err(MigrateError::Full);
        }
        self.tier_of[page as usize] = to as u8;
        self.used_pages[from] -= 1;
        self.used_pages[to] += 1;
        Ok(())
    }

    /// Exchange the tiers of two pages (a swap needs no free frame).
    pub fn swap(&mut self, a: u64, b: u64) -> Result<(), MigrateError> {
        let n = self.tier_of.len() as u64;
        if a >= n || b >= n {
            return Err(MigrateError::NoSuchPage);
        }
        if self.tier_of[a as usize] == self.tier_of[b as usize] {
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

    /// Pages per tier counted from the table itself (for conservation checks).
    pub fn count_by_tier(&self) -> Vec<u64> {
        let mut c = vec![0; self.tiers()];
        for &t in &self.tier_of {
            c[t as usize] += 1;
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
