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

pub struct SetAssocCache {
    sets: u64,
    ways: usize,
    tags: Vec<u64>,
    dirty: Vec<bool>,
    stamp: Vec<u64>,
    clock: u64,
    policy: Replacement,
    rng: SimRng,
    pub stats: CacheStats,
}

impl SetAssocCache {
    /// `size_bytes / (64 * ways)` sets; callers validate that this is at least one.
    pub fn new(size_bytes: u64, ways: usize, policy: Replacement, rng: SimRng) -> Self {
        let sets = (size_bytes / (64 * ways as u64)).max(1);
        let n = sets as usize * ways;
        SetAssocCache {
            sets,
            ways,
            tags: vec![INVALID; n],
            dirty: vec![false; n],
            stamp: vec![0; n],
            clock: 0,
            policy,
            rng,
            stats: CacheStats::default(),
        }
    }

    #[inline]
    fn base(&self, line: u64) -> usize {
        (line % self.sets) as usize * self.ways
    }

    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        let b = self.base(line);
        (b..b + self.ways).find(|&i| self.tags[i] == line)
    }

    /// Look the line up; on a hit refresh its recency and, for a write, dirty it.
    #[inline]
    pub fn lookup(&mut self, line: u64, write: bool) -> bool {
        match self.find(line) {
            Some(i) => {
                self.clock += 1;
                if self.policy == Replacement::Lru {
                    self.stamp[i] = self.clock;
                }
                self.dirty[i] |= write;
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
        let slot = match (b..b + self.ways).find(|&i| self.tags[i] == INVALID) {
            Some(i) => i,
            None => match self.policy {
                Replacement::Random => b + self.rng.random_range(0..self.ways),
                _ => (b..b + self.ways)
                    .min_by_key(|&i| self.stamp[i])
                    .expect("ways >= 1"),
            },
        };
        let victim = (self.tags[slot] != INVALID).then(|| (self.tags[slot], self.dirty[slot]));
        if let Some((_, d)) = victim {
            self.stats.evictions += 1;
            self.stats.writebacks += d as u64;
        }
        self.clock += 1;
        self.tags[slot] = line;
        self.dirty[slot] = dirty;
        self.stamp[slot] = self.clock;
        victim
    }

    /// Remove the line; `Some(dirty)` if it was present.
    #[inline]
    pub fn invalidate(&mut self, line: u64) -> Option<bool> {
        self.find(line).map(|i| {
            self.tags[i] = INVALID;
            std::mem::take(&mut self.dirty[i])
        })
    }

    /// Mark the line clean, keeping it; `Some(was_dirty)` if present.
    #[inline]
    pub fn clean(&mut self, line: u64) -> Option<bool> {
        self.find(line).map(|i| std::mem::take(&mut self.dirty[i]))
    }

    pub fn is_dirty(&self, line: u64) -> bool {
        self.find(line).is_some_and(|i| self.dirty[i])
    }

    pub fn contains(&self, line: u64) -> bool {
        self.find(line).is_some()
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
