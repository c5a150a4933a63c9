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
}
