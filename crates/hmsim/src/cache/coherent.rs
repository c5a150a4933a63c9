//! A multi-core hierarchy for latency-only users that move lines between cores: private L1
//! and L2 per core, one shared LLC, *non-inclusive* (a miss fills every level it passes; a
//! line leaving a level is dropped there, its data written to the level below if dirty),
//! LRU in every level, coherent for lines that migrate between cores, and anonymous fills
//! ([`SetAssocCache::pollute_lines`]) for lines the user writes but never asks about.
//!
//! This is the organization of Nehalem/Westmere, the allocator cost model's machine: L2 is
//! neither inclusive nor exclusive of L1, and the L3 is filled by every miss (it is
//! inclusive there; the back-invalidation that inclusion implies when the L3 evicts a line
//! a core still holds is not modelled). Because every level sees each fill, anonymous
//! fills are exact per level: a zeroing store miss fills L1, L2 and the LLC as a real one
//! does, and lines they push out of a level are simply gone from it. The persistence
//! models use [`super::Hierarchy`] (exclusive, with flushes and a memory sink).

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::hierarchy::{levels, CacheConfig, HitLevel, LineHasher};
use super::set_assoc::{Replacement, SetAssocCache};

type LineMap<V> = HashMap<u64, V, BuildHasherDefault<LineHasher>>;

/// A line's last holder: the core (low bits) and which of its private levels the line
/// entered since it took the line. A level whose bit is clear does not hold the line (lines
/// enter private levels only here), so it is not searched; a set bit means "may hold it"
/// (the line may since have been evicted).
#[derive(Clone, Copy)]
struct Holder(u32);

impl Holder {
    const IN_L1: u32 = 1 << 16;
    const IN_L2: u32 = 1 << 17;
    /// No core holds the line.
    const NONE: Holder = Holder(u16::MAX as u32);

    #[inline]
    fn core(self) -> usize {
        (self.0 & 0xffff) as usize
    }
}

pub struct CoherentHierarchy {
    l1: Vec<SetAssocCache>,
    l2: Vec<SetAssocCache>,
    llc: SetAssocCache,
    /// The core whose private caches last took each line: a line sits in at most one core's
    /// private caches (a line another core uses moves, as MESI does for a line written on
    /// one core and used on another), so looking only there finds it where a search of every
    /// core would.
    holder: LineMap<Holder>,
}

impl CoherentHierarchy {
    /// LRU levels of `cfg`'s sizes (its replacement and `clwb` switches do not apply).
    pub fn new(cfg: &CacheConfig, cores: usize, seed: u64) -> CoherentHierarchy {
        let (l1, l2, llc) = levels(cfg, Replacement::Lru, cores, seed);
        CoherentHierarchy {
            l1,
            l2,
            llc,
            holder: LineMap::default(),
        }
    }

    /// A load or store by `core` of the line holding `addr`: where it was found, and whether
    /// that was another core's private cache (then `HitLevel::Llc`: the request went through
    /// the shared level, which snooped the holder). An L1 miss that hits L2 fills L1; a miss
    /// in both private levels looks up the LLC (filling it on a miss) and the line's last
    /// holder, whose copies move to this core.
    #[inline]
    pub fn access(&mut self, core: usize, addr: u64, write: bool) -> (HitLevel, bool) {
        let line = addr >> 6;
        if self.l1[core].lookup(line, write) {
            return (HitLevel::L1, false);
        }
        self.llc.prefetch(line);
        let h = self.holder.entry(line).or_insert(Holder::NONE);
        let was = *h;
        *h = Holder(core as u32 | Holder::IN_L1 | Holder::IN_L2);
        if was.core() == core && was.0 & Holder::IN_L2 != 0 && self.l2[core].lookup(line, write) {
            self.l1[core].insert(line, write);
            return (HitLevel::L2, false);
        }
        let mut remote = false;
        let o = was.core();
        if o != core && o < self.l1.len() {
            // Both private levels may hold it (non-inclusive): it leaves both.
            remote |= was.0 & Holder::IN_L1 != 0 && self.l1[o].invalidate(line).is_some();
            remote |= was.0 & Holder::IN_L2 != 0 && self.l2[o].invalidate(line).is_some();
        }
        let in_llc = self.llc.lookup(line, write);
        if !in_llc {
            self.llc.insert(line, write);
        }
        self.l2[core].insert(line, write);
        self.l1[core].insert(line, write);
        match (remote, in_llc) {
            (true, _) => (HitLevel::Llc, true),
            (false, true) => (HitLevel::Llc, false),
            (false, false) => (HitLevel::Memory, false),
        }
    }

    /// A hardware prefetch of the line holding `addr` into `core`'s L2 and the LLC (the
    /// adjacent-line prefetcher): read from memory unless some cache holds it already.
    /// True if fetched.
    pub fn prefetch_to_l2(&mut self, core: usize, addr: u64) -> bool {
        let line = addr >> 6;
        if self.llc.contains(line) {
            return false;
        }
        let h = self.holder.entry(line).or_insert(Holder::NONE);
        let was = *h;
        let o = was.core();
        if o < self.l1.len()
            && ((was.0 & Holder::IN_L1 != 0 && self.l1[o].contains(line))
                || (was.0 & Holder::IN_L2 != 0 && self.l2[o].contains(line)))
        {
            return false;
        }
        *h = Holder(core as u32 | Holder::IN_L2);
        self.llc.insert(line, false);
        self.l2[core].insert(line, false);
        true
    }

    /// `lines` lines from `first_line` written by `core` that no one reads again and that
    /// were not cached (zeroing a newly allocated page, data streaming past): `core`'s L1
    /// and L2 and the LLC each count them as anonymous fills of their sets
    /// ([`SetAssocCache::pollute_lines`]): exact for this hierarchy, where a store miss
    /// fills every level.
    pub fn pollute_lines(&mut self, core: usize, first_line: u64, lines: u64) {
        self.l1[core].pollute_lines(first_line, lines);
        self.l2[core].pollute_lines(first_line, lines);
        self.llc.pollute_lines(first_line, lines);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::LevelConfig;

    /// L1 2 sets × 2 ways, L2 4 × 2, LLC 8 × 2 (line l maps to set l % sets).
    fn small(cores: usize) -> CoherentHierarchy {
        let lvl = |sets: u64, ways: usize| LevelConfig {
            size_bytes: 64 * sets * ways as u64,
            ways,
        };
        let cfg = CacheConfig {
            l1: lvl(2, 2),
            l2: lvl(4, 2),
            llc: lvl(8, 2),
            ..CacheConfig::default()
        };
        CoherentHierarchy::new(&cfg, cores, 1)
    }

    fn at(line: u64) -> u64 {
        line * 64
    }

    #[test]
    fn a_miss_fills_every_level_and_an_l1_victim_stays_in_l2() {
        let mut h = small(1);
        assert_eq!(h.access(0, at(0), false), (HitLevel::Memory, false));
        assert_eq!(h.access(0, at(0), true), (HitLevel::L1, false));
        // Lines 2 and 4 share L1 set 0 with line 0: two more push it out of L1 only
        // (L2 sets 0, 2, 0: line 0 and 4 share one, with room).
        h.access(0, at(2), false);
        h.access(0, at(4), false);
        assert!(!h.l1[0].contains(0) && h.l2[0].contains(0) && h.llc.contains(0));
        assert_eq!(h.access(0, at(0), false), (HitLevel::L2, false));
        assert_eq!(h.access(0, at(0), false), (HitLevel::L1, false));
    }

    #[test]
    fn a_line_another_core_holds_moves_as_a_cross_core_transfer() {
        let mut h = small(2);
        h.access(0, at(5), true);
        assert_eq!(h.access(1, at(5), false), (HitLevel::Llc, true));
        assert!(!h.l1[0].contains(5) && !h.l2[0].contains(5));
        assert_eq!(h.access(1, at(5), false), (HitLevel::L1, false));
        // Back to core 0: another transfer.
        assert_eq!(h.access(0, at(5), true), (HitLevel::Llc, true));
        // A line core 1 no longer holds privately comes from the LLC.
        h.access(1, at(7), false);
        for l in [9, 11, 13, 15, 17] {
            h.access(1, at(l), false); // evict line 7 from core 1's L1 and L2
        }
        assert!(!h.l1[1].contains(7) && !h.l2[1].contains(7));
        let got = h.access(0, at(7), false);
        assert!(!got.1, "no private copy left: {got:?}");
    }

    #[test]
    fn the_adjacent_line_prefetch_fills_l2_and_the_llc_once() {
        let mut h = small(2);
        assert_eq!(h.access(0, at(6), false).0, HitLevel::Memory);
        assert!(h.prefetch_to_l2(0, at(7)));
        assert!(!h.prefetch_to_l2(1, at(7)), "cached already");
        assert_eq!(h.access(0, at(7), false), (HitLevel::L2, false));
        assert_eq!(h.access(1, at(7), false), (HitLevel::Llc, true));
    }

    /// Lines far above every tracked line that map to the same sets in every level.
    const FRESH: u64 = 1 << 30;

    proptest::proptest! {
        /// Anonymous fills are exact for this hierarchy: polluting `n` lines gives the same
        /// answer to every later access as accessing `n` never-seen lines of the same sets
        /// (which fill L1, L2 and the LLC as misses). And a line is never in two cores'
        /// private caches.
        #[test]
        fn anonymous_fills_equal_fresh_lines_and_one_core_holds_a_line(
            ops in proptest::collection::vec((0u8..6, 0usize..3, 0u64..40, 1u64..20), 1..300),
        ) {
            let (mut a, mut b) = (small(3), small(3));
            let mut fresh = 0u64;
            for (op, core, line, n) in ops {
                match op {
                    0 => {
                        a.pollute_lines(core, line, n);
                        for k in 0..n {
                            fresh += 1;
                            b.access(core, at(FRESH * fresh + line + k), true);
                        }
                    }
                    1 => {
                        proptest::prop_assert_eq!(
                            a.prefetch_to_l2(core, at(line)),
                            b.prefetch_to_l2(core, at(line))
                        );
                    }
                    _ => {
                        let w = op % 2 == 0;
                        proptest::prop_assert_eq!(a.access(core, at(line), w), b.access(core, at(line), w));
                    }
                }
                for l in 0..40 {
                    let holders = (0..3)
                        .filter(|&c| a.l1[c].contains(l) || a.l2[c].contains(l))
                        .count();
                    proptest::prop_assert!(holders <= 1, "line {} in {} cores", l, holders);
                }
            }
        }
    }
}
