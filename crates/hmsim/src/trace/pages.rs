//! Per-page access counts for `trace info`, fast and with bounded memory.
//!
//! Programs touch pages in clusters, so counts live in dense 512-entry arrays, one per
//! touched 2 MB region: the common case is an array index, not a hash lookup. A trace that
//! scatters over more than [`MAX_DENSE_REGIONS`] regions spills the rest into a hash map,
//! so a sparse trace cannot make the dense arrays grow without bound.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const REGION_PAGES: usize = 512; // 2 MB / 4 KB
const REGION_SHIFT: u32 = 9;
/// 32 Ki regions × 4 KB of counters = 128 MB at most.
pub(super) const MAX_DENSE_REGIONS: usize = 32 * 1024;

/// Multiply-shift hash: page numbers are not adversarial, and SipHash would dominate.
#[derive(Default)]
pub(super) struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type FastMap<V> = HashMap<u64, V, BuildHasherDefault<FastHasher>>;

#[derive(Default)]
pub(super) struct PageCounter {
    /// Region number → index into `dense`.
    regions: FastMap<u32>,
    dense: Vec<Box<[u64; REGION_PAGES]>>,
    /// Pages of regions that did not get a dense array.
    sparse: FastMap<u64>,
    last_region: Option<(u64, u32)>,
}

impl PageCounter {
    /// Adds `n` accesses to 4 KB page number `page`.
    #[inline]
    pub(super) fn add(&mut self, page: u64, n: u64) {
        let region = page >> REGION_SHIFT;
        let slot = (page as usize) & (REGION_PAGES - 1);
        let idx = match self.last_region {
            Some((r, i)) if r == region => i,
            _ => match self.region_index(region) {
                Some(i) => {
                    self.last_region = Some((region, i));
                    i
                }
                None => {
                    *self.sparse.entry(page).or_insert(0) += n;
                    return;
                }
            },
        };
        self.dense[idx as usize][slot] += n;
    }

    fn region_index(&mut self, region: u64) -> Option<u32> {
        if let Some(&i) = self.regions.get(&region) {
            return Some(i);
        }
        if self.dense.len() >= MAX_DENSE_REGIONS {
            return None;
        }
        let i = self.dense.len() as u32;
        self.dense.push(Box::new([0; REGION_PAGES]));
        self.regions.insert(region, i);
        Some(i)
    }

    /// Every touched page with its count, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let dense = self.regions.iter().flat_map(move |(&region, &i)| {
            self.dense[i as usize]
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(move |(slot, &n)| ((region << REGION_SHIFT) | slot as u64, n))
        });
        dense.chain(self.sparse.iter().map(|(&p, &n)| (p, n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_page_counter_dense_and_sparse_agree() {
        let mut c = PageCounter::default();
        let mut want: HashMap<u64, u64> = HashMap::new();
        // More regions than the dense cap, so both paths are used.
        for i in 0..(MAX_DENSE_REGIONS as u64 + 100) {
            for page in [i << REGION_SHIFT, (i << REGION_SHIFT) + 3] {
                c.add(page, i + 1);
                *want.entry(page).or_default() += i + 1;
            }
        }
        c.add(5, 2);
        *want.entry(5).or_default() += 2;
        let got: HashMap<u64, u64> = c.iter().collect();
        assert_eq!(got, want);
        assert!(!c.sparse.is_empty());
    }
}
