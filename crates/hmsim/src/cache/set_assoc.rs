//! One set-associative, write-back cache of 64 B lines, addressed by line number.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::rng::SimRng;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Replacement {
    Lru,
    Fifo,
    Random,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    /// Dirty lines evicted (written to the next level).
    pub writebacks: u64,
    pub evictions: u64,
}

const INVALID: u64 = u64::MAX;

/// One way: the line it holds and its recency stamp with the dirty bit in the top bit, so a
/// set's ways sit together in host memory (one or two host cache lines per lookup).
#[derive(Clone, Copy)]
struct Way {
    tag: u64,
    meta: u64,
}

const DIRTY: u64 = 1 << 63;

impl Way {
    #[inline]
    fn dirty(&self) -> bool {
        self.meta & DIRTY != 0
    }
    #[inline]
    fn stamp(&self) -> u64 {
        self.meta & !DIRTY
    }
}

pub struct SetAssocCache {
    sets: u64,
    /// `sets - 1` when `sets` is a power of two (index by mask, not division).
    mask: Option<u64>,
    ways: usize,
    slots: Vec<Way>,
    clock: u64,
    policy: Replacement,
    rng: SimRng,
    /// Slot of the last hit. A line sits in at most one slot, so when this slot's tag is
    /// the line looked up, it is the slot the set search would find: repeated accesses to
    /// one line (most loads of an index walking a node) skip the search, same result.
    last_hit: usize,
    pub stats: CacheStats,
}

impl SetAssocCache {
    /// `size_bytes / (64 * ways)` sets; callers validate that this is at least one.
    pub fn new(size_bytes: u64, ways: usize, policy: Replacement, rng: SimRng) -> Self {
        let sets = (size_bytes / (64 * ways as u64)).max(1);
        SetAssocCache {
            sets,
            mask: sets.is_power_of_two().then_some(sets - 1),
            ways,
            slots: vec![
                Way {
                    tag: INVALID,
                    meta: 0
                };
                sets as usize * ways
            ],
            clock: 0,
            policy,
            rng,
            last_hit: 0,
            stats: CacheStats::default(),
        }
    }

    #[inline]
    fn base(&self, line: u64) -> usize {
        let set = match self.mask {
            Some(m) => line & m,
            None => line % self.sets,
        };
        set as usize * self.ways
    }

    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        let b = self.base(line);
        self.slots[b..b + self.ways]
            .iter()
            .position(|w| w.tag == line)
            .map(|i| b + i)
    }

    /// Look the line up; on a hit refresh its recency and, for a write, dirty it.
    #[inline]
    pub fn lookup(&mut self, line: u64, write: bool) -> bool {
        let found = if self.slots[self.last_hit].tag == line {
            Some(self.last_hit)
        } else {
            self.find(line)
        };
        match found {
            Some(i) => {
                self.last_hit = i;
                self.clock += 1;
                let w = &mut self.slots[i];
                let dirty = if write || w.dirty() { DIRTY } else { 0 };
                let stamp = if self.policy == Replacement::Lru {
                    self.clock
                } else {
                    w.stamp()
                };
                w.meta = stamp | dirty;
                self.stats.hits += 1;
                true
            }
            None => {
                self.stats.misses += 1;
                false
            }
        }
    }

    /// Insert a line that is not present; returns the victim `(line, dirty)` if one was evicted.
    #[inline]
    pub fn insert(&mut self, line: u64, dirty: bool) -> Option<(u64, bool)> {
        let b = self.base(line);
        let set = &self.slots[b..b + self.ways];
        let slot = match set.iter().position(|w| w.tag == INVALID) {
            Some(i) => b + i,
            None => match self.policy {
                Replacement::Random => b + self.rng.random_range(0..self.ways),
                _ => {
                    b + (0..self.ways)
                        .min_by_key(|&i| set[i].stamp())
                        .expect("ways >= 1")
                }
            },
        };
        let old = self.slots[slot];
        let victim = (old.tag != INVALID).then(|| (old.tag, old.dirty()));
        if let Some((_, d)) = victim {
            self.stats.evictions += 1;
            self.stats.writebacks += d as u64;
        }
        self.clock += 1;
        self.slots[slot] = Way {
            tag: line,
            meta: self.clock | if dirty { DIRTY } else { 0 },
        };
        victim
    }

    /// Remove the line; `Some(dirty)` if it was present.
    #[inline]
    pub fn invalidate(&mut self, line: u64) -> Option<bool> {
        self.find(line).map(|i| {
            let d = self.slots[i].dirty();
            self.slots[i] = Way {
                tag: INVALID,
                meta: 0,
            };
            d
        })
    }

    /// Mark the line clean, keeping it; `Some(was_dirty)` if present.
    #[inline]
    pub fn clean(&mut self, line: u64) -> Option<bool> {
        self.find(line).map(|i| {
            let d = self.slots[i].dirty();
            self.slots[i].meta &= !DIRTY;
            d
        })
    }

    pub fn is_dirty(&self, line: u64) -> bool {
        self.find(line).is_some_and(|i| self.slots[i].dirty())
    }

    pub fn contains(&self, line: u64) -> bool {
        self.find(line).is_some()
    }

    /// Mark every dirty line clean, calling `f` with each (the end-of-run write-back).
    pub fn drain_dirty(&mut self, mut f: impl FnMut(u64)) {
        for w in self
            .slots
            .iter_mut()
            .filter(|w| w.tag != INVALID && w.dirty())
        {
            w.meta &= !DIRTY;
            f(w.tag);
        }
    }

    pub fn capacity_lines(&self) -> u64 {
        self.sets * self.ways as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(ways: usize, policy: Replacement) -> SetAssocCache {
        SetAssocCache::new(
            64 * ways as u64 * 4,
            ways,
            policy,
            crate::rng::stream(1, "c"),
        )
    }

    #[test]
    fn lru_evicts_least_recent_in_the_set() {
        let mut c = cache(2, Replacement::Lru);
        // Lines 0, 4, 8 map to set 0 of 4 sets.
        assert!(c.insert(0, false).is_none());
        assert!(c.insert(4, true).is_none());
        assert!(c.lookup(0, false));
        assert_eq!(c.insert(8, false), Some((4, true)));
        assert_eq!(c.stats.writebacks, 1);
    }

    #[test]
    fn fifo_ignores_hits() {
        let mut c = cache(2, Replacement::Fifo);
        c.insert(0, false);
        c.insert(4, false);
        c.lookup(0, false);
        assert_eq!(c.insert(8, false), Some((0, false)));
    }

    #[test]
    fn clean_keeps_and_invalidate_removes() {
        let mut c = cache(2, Replacement::Lru);
        c.insert(3, true);
        assert_eq!(c.clean(3), Some(true));
        assert!(c.contains(3) && !c.is_dirty(3));
        assert_eq!(c.invalidate(3), Some(false));
        assert!(!c.contains(3));
    }
}
