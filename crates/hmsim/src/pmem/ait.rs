//! The AIT of one DIMM: 4 KiB logical blocks mapped to physical media blocks, wear leveling
//! by hotness (a block written `migration_threshold_writes` times within a window of the
//! DIMM's media writes is swapped with a random block: both are copied), and the wear map
//! (media writes per physical 256 B line).

use rand::Rng;

use super::config::AitConfig;
use crate::hash::FastMap;
use crate::rng::SimRng;

/// XPLines per 4 KiB block.
pub const XPLINES_PER_BLOCK: u64 = 16;

pub struct Ait {
    cfg: AitConfig,
    blocks: u64,
    rng: SimRng,
    window_writes: u64,
    counts: FastMap<u64, u32>,
    l2p: FastMap<u64, u64>,
    p2l: FastMap<u64, u64>,
    /// Media writes per physical XPLine.
    pub wear: FastMap<u64, u32>,
    /// Media writes per logical XPLine (what the program caused, before wear leveling).
    pub logical_wear: FastMap<u64, u32>,
    pub migrations: u64,
    /// 256 B media writes and reads done by migrations.
    pub migration_writes: u64,
    pub migration_reads: u64,
}

impl Ait {
    pub fn new(cfg: &AitConfig, capacity_bytes: u64, rng: SimRng) -> Ait {
        Ait {
            cfg: cfg.clone(),
            blocks: (capacity_bytes / 4096).max(2),
            rng,
            window_writes: 0,
            counts: FastMap::default(),
            l2p: FastMap::default(),
            p2l: FastMap::default(),
            wear: FastMap::default(),
            logical_wear: FastMap::default(),
            migrations: 0,
            migration_writes: 0,
            migration_reads: 0,
        }
    }

    fn physical(&self, block: u64) -> u64 {
        *self.l2p.get(&block).unwrap_or(&block)
    }

    fn logical(&self, pblock: u64) -> u64 {
        *self.p2l.get(&pblock).unwrap_or(&pblock)
    }

    fn wear_block(&mut self, pblock: u64) {
        for i in 0..XPLINES_PER_BLOCK {
            *self.wear.entry(pblock * XPLINES_PER_BLOCK + i).or_insert(0) += 1;
        }
    }

    /// One 256 B media write of logical XPLine `xpline`; true if it triggered a migration.
    #[inline]
    pub fn media_write(&mut self, xpline: u64) -> bool {
        let block = xpline / XPLINES_PER_BLOCK;
        let pblock = self.physical(block);
        *self
            .wear
            .entry(pblock * XPLINES_PER_BLOCK + xpline % XPLINES_PER_BLOCK)
            .or_insert(0) += 1;
        *self.logical_wear.entry(xpline).or_insert(0) += 1;
        if !self.cfg.wear_leveling {
            return false;
        }
        self.window_writes += 1;
        if self.window_writes >= self.cfg.window_media_writes {
            self.window_writes = 0;
            self.counts.clear();
        }
        let c = self.counts.entry(block).or_insert(0);
        *c += 1;
        if *c < self.cfg.migration_threshold_writes {
            return false;
        }
        *c = 0;
        // Swap with a random other physical block: copy both (read + write 16 XPLines each).
        let mut target = self.rng.random_range(0..self.blocks);
        if target == pblock {
            target = (target + 1) % self.blocks;
        }
        let other = self.logical(target);
        self.l2p.insert(block, target);
        self.p2l.insert(target, block);
        self.l2p.insert(other, pblock);
        self.p2l.insert(pblock, other);
        self.wear_block(target);
        self.wear_block(pblock);
        self.migrations += 1;
        self.migration_writes += 2 * XPLINES_PER_BLOCK;
        self.migration_reads += 2 * XPLINES_PER_BLOCK;
        true
    }

    /// Most media writes any physical / logical XPLine received.
    pub fn max_physical_wear(&self) -> u32 {
        self.wear.values().copied().max().unwrap_or(0)
    }
    pub fn max_logical_wear(&self) -> u32 {
        self.logical_wear.values().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(wl: bool) -> AitConfig {
        AitConfig {
            wear_leveling: wl,
            migration_threshold_writes: 10,
            window_media_writes: 1000,
            migration_stall_ns: 0.0,
        }
    }

    #[test]
    fn hot_block_migrates_and_spreads_physical_wear() {
        let mut a = Ait::new(&cfg(true), 1 << 30, crate::rng::stream(1, "ait"));
        let migrated = (0..100).filter(|_| a.media_write(5)).count();
        assert_eq!(migrated, 10);
        assert_eq!(a.max_logical_wear(), 100);
        assert!(
            a.max_physical_wear() < 100,
            "wear leveling moved the hot line"
        );
    }

    #[test]
    fn without_wear_leveling_physical_equals_logical() {
        let mut a = Ait::new(&cfg(false), 1 << 30, crate::rng::stream(1, "ait"));
        for _ in 0..100 {
            assert!(!a.media_write(5));
        }
        assert_eq!(a.max_physical_wear(), 100);
        assert_eq!(a.migrations, 0);
    }

    #[test]
    fn the_window_forgets_old_writes() {
        let mut c = cfg(true);
        c.window_media_writes = 5;
        let mut a = Ait::new(&c, 1 << 30, crate::rng::stream(1, "ait"));
        assert_eq!((0..100).filter(|_| a.media_write(5)).count(), 0);
    }
}
