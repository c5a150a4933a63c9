//! The AIT of one DIMM: 4 KiB logical blocks mapped to physical media blocks, wear leveling
//! by hotness (a block written `migration_threshold_writes` times within a window of the
//! DIMM's media writes is swapped with a random block: both are copied), and the wear map
//! (media writes per physical 256 B line).

use rand::Rng;

use super::config::AitConfig;
use crate::cache::{Replacement, SetAssocCache};
use crate::hash::FastMap;
use crate::rng::SimRng;

/// XPLines per 4 KiB block.
pub(super) const XPLINES_PER_BLOCK: u64 = 16;

pub(super) use super::wear_table::BlockWear;
use super::wear_table::{LineTally, WearTable};

#[derive(Clone)]
pub struct Ait {
    cfg: AitConfig,
    blocks: u64,
    rng: SimRng,
    window_writes: u64,
    counts: WindowCounts,
    l2p: FastMap<u64, u64>,
    p2l: FastMap<u64, u64>,
    /// Media writes per logical block and line (what the program caused, before leveling).
    logical: WearTable,
    /// Physical wear of the blocks migrations touched; any other physical block has only
    /// ever held its own logical block, so its wear is that block's logical wear.
    physical: FastMap<u64, BlockWear>,
    pub migrations: u64,
    /// Blocks retired because a line reached its endurance, and the next spare block.
    pub bad_block_remaps: u64,
    endurance: u32,
    next_spare: u64,
    /// 256 B media writes and reads done by migrations.
    pub migration_writes: u64,
    pub migration_reads: u64,
    /// The on-DIMM AIT buffer: block translations, in the one set-associative cache model
    /// (a "line" here is a 4 KiB block).
    buffer: SetAssocCache,
}

/// Ways of the AIT buffer.
const AIT_BUFFER_WAYS: usize = 16;

impl Ait {
    /// `line_endurance_writes`: writes after which a physical line fails.
    pub fn new(
        cfg: &AitConfig,
        capacity_bytes: u64,
        line_endurance_writes: u32,
        rng: SimRng,
    ) -> Ait {
        let blocks = (capacity_bytes / 4096).max(2);
        Ait {
            cfg: cfg.clone(),
            blocks,
            rng,
            window_writes: 0,
            counts: WindowCounts::default(),
            l2p: FastMap::default(),
            p2l: FastMap::default(),
            logical: WearTable::default(),
            physical: FastMap::default(),
            migrations: 0,
            bad_block_remaps: 0,
            endurance: cfg
                .line_endurance_writes
                .unwrap_or(line_endurance_writes)
                .max(1),
            next_spare: blocks,
            migration_writes: 0,
            migration_reads: 0,
            buffer: SetAssocCache::new(
                cfg.buffer_blocks as u64 * 64,
                AIT_BUFFER_WAYS,
                Replacement::Lru,
                crate::rng::stream(0, "pmem.ait.buffer"),
            ),
        }
    }

    /// Look up the translation of logical block `block` in the AIT buffer, filling it on a
    /// miss; true on a hit.
    #[inline]
    pub fn translate(&mut self, block: u64) -> bool {
        if self.buffer.lookup(block, false) {
            return true;
        }
        self.buffer.insert(block, false);
        false
    }

    /// AIT buffer (hits, misses).
    pub fn buffer_stats(&self) -> (u64, u64) {
        (self.buffer.stats.hits, self.buffer.stats.misses)
    }

    fn logical_of(&self, pblock: u64) -> u64 {
        *self.p2l.get(&pblock).unwrap_or(&pblock)
    }

    /// Start tracking `pblock`'s physical wear separately (from the identity-mapped state).
    fn track(&mut self, pblock: u64) -> &mut BlockWear {
        if !self.physical.contains_key(&pblock) {
            let w = self.logical.get(pblock);
            self.physical.insert(pblock, w);
        }
        self.physical.get_mut(&pblock).expect("inserted above")
    }

    /// One 256 B media write of logical XPLine `xpline`; true if it triggered a migration.
    #[inline]
    pub fn media_write(&mut self, xpline: u64) -> bool {
        let block = xpline / XPLINES_PER_BLOCK;
        let i = (xpline % XPLINES_PER_BLOCK) as usize;
        let mut pw = self.logical.increment(xpline);
        if let Some(&p) = self.l2p.get(&block) {
            let w = &mut self.track(p)[i];
            *w += 1;
            pw = *w;
        }
        if pw >= self.endurance {
            self.retire(block);
        }
        if !self.cfg.wear_leveling {
            return false;
        }
        self.window_writes += 1;
        if self.window_writes >= self.cfg.window_media_writes {
            self.window_writes = 0;
            self.counts.clear();
        }
        let c = self.counts.entry(block);
        *c += 1;
        if *c < self.cfg.migration_threshold_writes {
            return false;
        }
        *c = 0;
        self.migrate(block);
        true
    }

    /// A line of `block`'s physical block wore out: copy the block to a fresh spare (outside
    /// the user-visible capacity) and point the AIT at it.
    fn retire(&mut self, block: u64) {
        let old = *self.l2p.get(&block).unwrap_or(&block);
        let spare = self.next_spare;
        self.next_spare += 1;
        self.p2l.remove(&old);
        self.l2p.insert(block, spare);
        self.p2l.insert(spare, block);
        self.physical.insert(spare, [1; XPLINES_PER_BLOCK as usize]);
        self.track(old);
        self.bad_block_remaps += 1;
        self.migration_writes += XPLINES_PER_BLOCK;
        self.migration_reads += XPLINES_PER_BLOCK;
    }

    /// Swap `block` with a random other physical block: both are copied (16 XPLine reads
    /// and writes each).
    fn migrate(&mut self, block: u64) {
        let pblock = *self.l2p.get(&block).unwrap_or(&block);
        let mut target = self.rng.random_range(0..self.blocks);
        if target == pblock {
            target = (target + 1) % self.blocks;
        }
        let other = self.logical_of(target);
        for pb in [pblock, target] {
            for w in self.track(pb).iter_mut() {
                *w += 1;
            }
        }
        self.l2p.insert(block, target);
        self.p2l.insert(target, block);
        self.l2p.insert(other, pblock);
        self.p2l.insert(pblock, other);
        self.migrations += 1;
        self.migration_writes += 2 * XPLINES_PER_BLOCK;
        self.migration_reads += 2 * XPLINES_PER_BLOCK;
    }

    /// Most media writes any physical / logical XPLine received.
    pub fn max_physical_wear(&self) -> u32 {
        let tracked = self
            .physical
            .values()
            .flat_map(|w| w.iter())
            .copied()
            .max()
            .unwrap_or(0);
        // Every block not tracked holds its own logical block's wear.
        let identity = if self.physical.is_empty() {
            self.logical.max_line()
        } else {
            let mut m = 0;
            self.logical.for_each_block(|b, w| {
                if !self.physical.contains_key(&b) {
                    m = w.iter().copied().fold(m, u32::max);
                }
            });
            m
        };
        tracked.max(identity)
    }

    pub fn max_logical_wear(&self) -> u32 {
        self.logical.max_line()
    }

    /// The logical XPLines written, tallied.
    pub fn logical_tally(&self) -> LineTally {
        self.logical.tally()
    }

    /// `f(block, media writes)` for every logical block written (summed over its lines),
    /// each once, in no set order.
    pub fn block_writes(&self, mut f: impl FnMut(u64, u64)) {
        self.logical.for_each_block_sum(&mut f);
    }

    /// Ask the host to fetch XPLine `xpline`'s wear counter (and its block's count in the
    /// wear-leveling window) ahead of its media write.
    #[inline]
    pub fn prefetch_wear(&self, xpline: u64) {
        self.logical.prefetch(xpline);
        if self.cfg.wear_leveling {
            self.counts.prefetch(xpline / XPLINES_PER_BLOCK);
        }
    }
}

/// Media writes per block in the current wear-leveling window: open addressing (linear
/// probing, at most half full) rather than a std map, so the slot a block's count sits in is
/// known ahead of its media write and can be prefetched (over a large footprint every count
/// is a host-cache miss).
#[derive(Default, Clone)]
struct WindowCounts {
    /// (block + 1, writes); key 0: an empty slot.
    slots: Vec<(u64, u32)>,
    len: usize,
}

impl WindowCounts {
    const MIN_SLOTS: usize = 1024;

    #[inline]
    fn home(block: u64, n: usize) -> usize {
        (block.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - n.trailing_zeros())) as usize
    }

    /// `block`'s count, inserted as 0 if absent.
    #[inline]
    fn entry(&mut self, block: u64) -> &mut u32 {
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut s = Self::home(block, self.slots.len());
        while self.slots[s].0 != 0 && self.slots[s].0 != block + 1 {
            s = (s + 1) & mask;
        }
        if self.slots[s].0 == 0 {
            self.slots[s] = (block + 1, 0);
            self.len += 1;
        }
        &mut self.slots[s].1
    }

    #[cold]
    fn grow(&mut self) {
        let n = (2 * self.slots.len()).max(Self::MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![(0, 0); n]);
        for (k, c) in old.into_iter().filter(|e| e.0 != 0) {
            let mut s = Self::home(k - 1, n);
            while self.slots[s].0 != 0 {
                s = (s + 1) & (n - 1);
            }
            self.slots[s] = (k, c);
        }
    }

    /// Forget every count (the window restarts); the table keeps its size.
    fn clear(&mut self) {
        if self.len > 0 {
            self.slots.fill((0, 0));
            self.len = 0;
        }
    }

    /// Ask the host to fetch the slot `block`'s count starts its search at (a hint).
    #[inline]
    fn prefetch(&self, block: u64) {
        if !self.slots.is_empty() {
            crate::hostmem::prefetch(&self.slots[Self::home(block, self.slots.len())]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The window counts agree with a std map of block -> count through inserts,
        /// growth and clears.
        #[test]
        fn window_counts_match_a_map(
            ops in proptest::collection::vec((0u64..5000, 0u32..50), 0..4000),
        ) {
            let mut t = WindowCounts::default();
            let mut m: FastMap<u64, u32> = FastMap::default();
            for &(block, op) in &ops {
                if op == 0 {
                    t.clear();
                    m.clear();
                    continue;
                }
                let b = if op < 25 { block % 64 } else { block * 0x1_0000_0001 };
                t.prefetch(b);
                let c = t.entry(b);
                let e = m.entry(b).or_insert(0);
                proptest::prop_assert_eq!(*c, *e);
                *c += op;
                *e += op;
            }
            for (&b, &e) in &m {
                proptest::prop_assert_eq!(*t.entry(b), e);
            }
            proptest::prop_assert_eq!(t.len, m.len());
        }
    }

    fn cfg(wl: bool) -> AitConfig {
        AitConfig {
            wear_leveling: wl,
            migration_threshold_writes: 10,
            window_media_writes: 1000,
            migration_stall_ns: 0.0,
            line_endurance_writes: None,
            buffer_blocks: 4096,
        }
    }

    #[test]
    fn hot_block_migrates_and_spreads_physical_wear() {
        let mut a = Ait::new(&cfg(true), 1 << 30, u32::MAX, crate::rng::stream(1, "ait"));
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
        let mut a = Ait::new(&cfg(false), 1 << 30, u32::MAX, crate::rng::stream(1, "ait"));
        for _ in 0..100 {
            assert!(!a.media_write(5));
        }
        assert_eq!(a.max_physical_wear(), 100);
        assert_eq!(a.migrations, 0);
    }

    #[test]
    fn a_worn_out_line_retires_its_block_to_a_spare() {
        let mut a = Ait::new(&cfg(false), 1 << 30, 50, crate::rng::stream(1, "ait"));
        for _ in 0..120 {
            a.media_write(5);
        }
        assert_eq!(
            a.bad_block_remaps, 2,
            "at 50 writes, and again 50 writes into the spare"
        );
        assert_eq!(a.max_logical_wear(), 120);
        assert!(a.max_physical_wear() <= 50);
    }

    #[test]
    fn the_ait_buffer_holds_its_capacity_of_translations() {
        let mut c = cfg(false);
        c.buffer_blocks = 64;
        let mut a = Ait::new(&c, 1 << 30, u32::MAX, crate::rng::stream(1, "ait"));
        assert!((0..64).all(|b| !a.translate(b)), "cold misses");
        assert!((0..64).all(|b| a.translate(b)), "64 blocks fit");
        // Cycling over more blocks than a set holds misses every time (LRU).
        let many: Vec<u64> = (0..17).map(|i| i * 4).collect();
        for _ in 0..3 {
            for &b in &many {
                a.translate(b);
            }
        }
        assert_eq!(a.buffer_stats(), (64 + 16, 64 + 1 + 2 * 17));
    }

    #[test]
    fn one_hot_line_migrates_floor_window_over_threshold_times_per_window() {
        // Defaults: threshold 14 336, window 65 536 media writes of the DIMM. A single hot
        // XPLine takes every write of the window: 4 migrations per window (the remaining
        // 8 192 writes are forgotten when the window restarts), one per 16 384 writes.
        let c = AitConfig::default();
        let (t, w) = (c.migration_threshold_writes as u64, c.window_media_writes);
        assert_eq!((t, w), (896 * 16, 4096 * 16));
        let mut a = Ait::new(&c, 1 << 30, u32::MAX, crate::rng::stream(1, "ait"));
        let windows = 3;
        let migrated = (0..windows * w).filter(|_| a.media_write(7)).count() as u64;
        assert_eq!(migrated, windows * (w / t));
        assert_eq!(windows * w / migrated, 16_384);
    }

    #[test]
    fn a_region_migrates_only_while_its_blocks_per_dimm_are_at_most_window_over_threshold() {
        // Writes spread round-robin over k blocks of one DIMM: each block gets window / k
        // writes per window, so it reaches the threshold only if k <= 65 536 / 14 336 = 4.57.
        let c = AitConfig::default();
        let w = c.window_media_writes;
        for (k, per_block_per_window) in [(4u64, 1u64), (5, 0)] {
            let mut a = Ait::new(&c, 1 << 30, u32::MAX, crate::rng::stream(1, "ait"));
            let windows = 2;
            let migrated = (0..windows * w)
                .filter(|i| a.media_write((i % k) * XPLINES_PER_BLOCK))
                .count() as u64;
            assert_eq!(migrated, windows * k * per_block_per_window, "{k} blocks");
        }
    }

    #[test]
    fn the_window_forgets_old_writes() {
        let mut c = cfg(true);
        c.window_media_writes = 5;
        let mut a = Ait::new(&c, 1 << 30, u32::MAX, crate::rng::stream(1, "ait"));
        assert_eq!((0..100).filter(|_| a.media_write(5)).count(), 0);
    }
}
