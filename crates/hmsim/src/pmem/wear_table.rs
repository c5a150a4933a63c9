//! Per-block wear counters in a two-level table: 1024-block chunks (4 MiB of address space)
//! found through a small map, then indexed directly. A random write costs one small-map
//! probe that stays in the host's cache and one access into the chunk, where one big hash
//! map cost two misses.

use crate::hash::FastMap;

/// Writes per XPLine of one 4 KiB block.
pub type BlockWear = [u32; 16];

const CHUNK_BLOCKS: usize = 1024;

#[derive(Default)]
pub struct WearTable {
    chunks: FastMap<u64, Box<[BlockWear]>>,
}

impl WearTable {
    #[inline]
    pub fn get_mut(&mut self, block: u64) -> &mut BlockWear {
        let chunk = self
            .chunks
            .entry(block / CHUNK_BLOCKS as u64)
            .or_insert_with(|| vec![[0u32; 16]; CHUNK_BLOCKS].into_boxed_slice());
        &mut chunk[(block % CHUNK_BLOCKS as u64) as usize]
    }

    /// The block's counters (zeros if never written).
    #[inline]
    pub fn get(&self, block: u64) -> BlockWear {
        self.chunks
            .get(&(block / CHUNK_BLOCKS as u64))
            .map_or([0; 16], |c| c[(block % CHUNK_BLOCKS as u64) as usize])
    }

    /// Every block with at least one write.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &BlockWear)> + '_ {
        self.chunks.iter().flat_map(|(&c, blocks)| {
            blocks
                .iter()
                .enumerate()
                .filter(|(_, w)| w.iter().any(|&x| x > 0))
                .map(move |(i, w)| (c * CHUNK_BLOCKS as u64 + i as u64, w))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_land_where_they_are_read() {
        let mut t = WearTable::default();
        t.get_mut(5)[3] += 2;
        t.get_mut(5000)[0] += 1;
        assert_eq!(t.get(5)[3], 2);
        assert_eq!(t.get(6), [0; 16]);
        let mut blocks: Vec<u64> = t.iter().map(|(b, _)| b).collect();
        blocks.sort();
        assert_eq!(blocks, vec![5, 5000]);
    }
}
