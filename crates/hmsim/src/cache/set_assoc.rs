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

/// A way's word: a line number with the dirty bit at the top, or all ones when free. Its
/// width is the cache's: [`SetAssocCache`] keeps 64-bit words (any line below 2^58); the
/// PMem path's hierarchy keeps 32-bit words while every line it has seen is below
/// [`NARROW_LINES`] (half the host bytes per set: an 11-way LLC set takes 44 bytes, not 88, and
/// the model's sets miss the host's caches less), widening once when one is not.
pub trait Way: Copy + Eq + std::fmt::Debug {
    /// A free way. Its tag bits (all ones but the top) match no line the cache may hold.
    const INVALID: Self;
    /// The line (without the dirty bit).
    fn line(self) -> u64;
    fn dirty(self) -> bool;
    /// The word of `line` (below the width's limit), dirty or not.
    fn of(line: u64, dirty: bool) -> Self;
    fn dirtied(self) -> Self;
    fn cleaned(self) -> Self;
}

/// Lines a 32-bit way can hold: below its free word's tag bits (2^31 - 1), i.e. byte
/// addresses below 128 GiB.
pub const NARROW_LINES: u64 = (1 << 31) - 1;

/// `Way` for an unsigned word whose top bit is the dirty bit and whose other bits hold the
/// line (below all ones, the free word's).
macro_rules! way {
    ($t:ty) => {
        impl Way for $t {
            const INVALID: $t = <$t>::MAX;
            #[inline(always)]
            fn line(self) -> u64 {
                u64::from(self & (<$t>::MAX >> 1))
            }
            #[inline(always)]
            fn dirty(self) -> bool {
                self > <$t>::MAX >> 1
            }
            #[inline(always)]
            fn of(line: u64, dirty: bool) -> $t {
                debug_assert!(line < u64::from(<$t>::MAX >> 1), "line {line:#x} too wide");
                line as $t | <$t>::from(dirty) << (<$t>::BITS - 1)
            }
            #[inline(always)]
            fn dirtied(self) -> $t {
                self | !(<$t>::MAX >> 1)
            }
            #[inline(always)]
            fn cleaned(self) -> $t {
                self & (<$t>::MAX >> 1)
            }
        }
    };
}

way!(u64);
way!(u32);

/// Ways are one word each (line | dirty bit), a set's ways adjacent, so a lookup reads one
/// to three host cache lines. LRU and FIFO keep each set in recency (or insertion) order,
/// newest first, with the free ways at the end: the victim is the last way and no stamps are
/// stored or compared. The line evicted is the one stamp-based LRU/FIFO would evict; only
/// the ways' positions differ (which `drain_dirty`'s order shows). Random replacement picks a
/// way by position, so its sets are not reordered.
#[derive(Clone)]
pub struct Cache<W: Way> {
    sets: u64,
    /// `sets - 1` when `sets` is a power of two (index by mask, not division).
    mask: Option<u64>,
    ways: usize,
    slots: Vec<W>,
    policy: Replacement,
    rng: SimRng,
    /// Slot of the last hit or insert. A line sits in at most one slot, so when this slot
    /// holds the line looked up it is the slot the set search would find: repeated accesses
    /// to one line (most loads of an index walking a node) skip the search, same result.
    last_hit: usize,
    /// A line `probe_hit` found absent (INVALID: none). Only `insert` adds lines, and it
    /// clears this, so the `lookup` that follows the probe can count the miss unsearched.
    probed_absent: u64,
    /// Valid ways per set under LRU and FIFO (a prefix: free ways are kept at the end), so
    /// searches, inserts and removals touch only those; empty under random replacement.
    lens: Vec<u8>,
    pub stats: CacheStats,
}

/// The cache of 64-bit ways: any line below 2^58.
pub type SetAssocCache = Cache<u64>;

/// Move every way one place towards the end, dropping the last (a set is at most 64 ways:
/// a plain loop beats the general slice rotation).
#[inline]
fn shift_right<W: Copy>(ways: &mut [W]) {
    for k in (1..ways.len()).rev() {
        ways[k] = ways[k - 1];
    }
}

/// Move every way one place towards the front, dropping the first (its last stays).
#[inline]
fn shift_left<W: Copy>(ways: &mut [W]) {
    for k in 1..ways.len() {
        ways[k - 1] = ways[k];
    }
}

impl<W: Way> Cache<W> {
    /// `size_bytes / (64 * ways)` sets; callers validate that this is at least one.
    pub fn new(size_bytes: u64, ways: usize, policy: Replacement, rng: SimRng) -> Self {
        let sets = (size_bytes / (64 * ways as u64)).max(1);
        Cache {
            sets,
            mask: sets.is_power_of_two().then_some(sets - 1),
            ways,
            // One spare way past the last set: `last_hit` points there when no slot is valid.
            slots: crate::hugevec::filled(sets as usize * ways + 1, W::INVALID),
            policy,
            rng,
            last_hit: 0,
            probed_absent: u64::MAX,
            lens: if policy == Replacement::Random {
                Vec::new()
            } else {
                vec![0; sets as usize]
            },
            stats: CacheStats::default(),
        }
    }

    #[inline]
    fn set_index(&self, line: u64) -> usize {
        (match self.mask {
            Some(m) => line & m,
            None => line % self.sets,
        }) as usize
    }

    #[inline]
    fn base(&self, line: u64) -> usize {
        self.set_index(line) * self.ways
    }

    /// Ask the host to fetch the set `line` maps to (the lookup that follows then overlaps
    /// its host-memory latency with other work).
    #[inline]
    pub fn prefetch(&self, line: u64) {
        crate::hostmem::prefetch(self.slots.as_ptr().wrapping_add(self.base(line)));
    }

    /// The line an insert of `line` would evict now, if its set is full (LRU and FIFO:
    /// the set's last way; None under random replacement, whose victim is drawn).
    #[inline]
    pub fn victim(&self, line: u64) -> Option<u64> {
        if !self.ordered() {
            return None;
        }
        let s = self.set_index(line);
        (self.lens[s] as usize == self.ways).then(|| self.slots[(s + 1) * self.ways - 1].line())
    }

    /// (set index, set base, way) of the line, if present.
    #[inline]
    fn find_way(&self, line: u64) -> Option<(usize, usize, usize)> {
        let s = self.set_index(line);
        let b = s * self.ways;
        let n = if self.lens.is_empty() {
            self.ways
        } else {
            self.lens[s] as usize
        };
        let p = self.slots[b..b + n]
            .iter()
            .position(|&w| w.line() == line)?;
        Some((s, b, p))
    }

    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        self.find_way(line).map(|(_, b, p)| b + p)
    }

    /// Whether the policy keeps sets ordered (newest first).
    #[inline]
    fn ordered(&self) -> bool {
        self.policy != Replacement::Random
    }

    /// A lookup that hits the slot of the last hit or insert: the hit `lookup` would count,
    /// without searching. Under LRU that slot is always at the front of its set (hits and
    /// inserts put lines there, and invalidations only move later ways), so nothing moves.
    /// False (and nothing counted) when the line is elsewhere or absent.
    #[inline(always)]
    pub fn hit_last(&mut self, line: u64, write: bool) -> bool {
        self.hits_last(line, 1, write)
    }

    /// `n` lookups of `hit_last`'s kind at once (the line dirtied when any writes): as
    /// many hits, the same set.
    #[inline(always)]
    pub fn hits_last(&mut self, line: u64, n: u64, write: bool) -> bool {
        let i = self.last_hit;
        if self.slots[i].line() != line {
            return false;
        }
        if write {
            self.slots[i] = self.slots[i].dirtied();
        }
        self.stats.hits += n;
        true
    }

    /// A lookup that hits the first way of the line's set: the hit `lookup` would count,
    /// without searching. Under LRU and FIFO that way is the set's newest and a hit leaves
    /// it there; random replacement never moves a line. False (nothing counted) otherwise.
    /// An index walking a node touches lines of different sets, each the newest of its
    /// set, so most hits that are not on the last hit's slot are here.
    #[inline(always)]
    fn hit_front(&mut self, line: u64, write: bool) -> bool {
        let b = self.base(line);
        if self.slots[b].line() != line {
            return false;
        }
        if write {
            self.slots[b] = self.slots[b].dirtied();
        }
        self.last_hit = b;
        self.stats.hits += 1;
        true
    }

    /// Look the line up; on a hit refresh its recency and, for a write, dirty it.
    #[inline]
    pub fn lookup(&mut self, line: u64, write: bool) -> bool {
        if line != self.probed_absent
            && (self.hit_last(line, write) || self.hit_search(line, write))
        {
            return true;
        }
        self.stats.misses += 1;
        false
    }

    /// `lookup` for a line that may be absent, counting only a hit: a miss is left for the
    /// `lookup` that follows to count (fast paths that handle hits and defer misses).
    #[inline]
    pub fn probe_hit(&mut self, line: u64, write: bool) -> bool {
        let hit = self.hit_last(line, write)
            || self.hit_front(line, write)
            || self.hit_search(line, write);
        if !hit {
            self.probed_absent = line;
        }
        hit
    }

    /// The set search of a lookup; on a hit as `lookup`, on a miss nothing counted.
    #[inline(never)]
    fn hit_search(&mut self, line: u64, write: bool) -> bool {
        let Some((_, b, p)) = self.find_way(line) else {
            return false;
        };
        let mut i = b + p;
        if self.policy == Replacement::Lru && p != 0 {
            // Move the line to the front of its set.
            let w = self.slots[i];
            shift_right(&mut self.slots[b..=i]);
            self.slots[b] = w;
            i = b;
        }
        if write {
            self.slots[i] = self.slots[i].dirtied();
        }
        self.last_hit = i;
        self.stats.hits += 1;
        true
    }

    /// Insert a line that is not present; returns the victim `(line, dirty)` if one was evicted.
    #[inline]
    pub fn insert(&mut self, line: u64, dirty: bool) -> Option<(u64, bool)> {
        let s = self.set_index(line);
        let b = s * self.ways;
        self.probed_absent = u64::MAX;
        let w = W::of(line, dirty);
        let (slot, old) = if self.ordered() {
            // Newest first: the last way is the victim of a full set; otherwise the first
            // free way takes the shift.
            let n = self.lens[s] as usize;
            let old = if n == self.ways {
                self.slots[b + n - 1]
            } else {
                self.lens[s] = (n + 1) as u8;
                W::INVALID
            };
            shift_right(&mut self.slots[b..b + (n + 1).min(self.ways)]);
            self.slots[b] = w;
            (b, old)
        } else {
            let set = &self.slots[b..b + self.ways];
            let i = match set.iter().position(|&x| x == W::INVALID) {
                Some(i) => i,
                None => self.rng.random_range(0..self.ways),
            };
            let old = self.slots[b + i];
            self.slots[b + i] = w;
            (b + i, old)
        };
        self.last_hit = slot;
        if old == W::INVALID {
            return None;
        }
        let d = old.dirty();
        self.stats.evictions += 1;
        self.stats.writebacks += d as u64;
        Some((old.line(), d))
    }

    /// Remove the line; `Some(dirty)` if it was present.
    #[inline]
    pub fn invalidate(&mut self, line: u64) -> Option<bool> {
        let (s, b, p) = self.find_way(line)?;
        Some(self.remove_at(s, b, p))
    }

    /// `lookup` followed by `invalidate` on a hit (a line moving to another level), with
    /// one search: counts the hit or miss; `Some(dirty)` on a hit. The same outcome:
    /// removing the line where it is leaves the others as a move to the front would.
    #[inline]
    pub fn take(&mut self, line: u64) -> Option<bool> {
        if line != self.probed_absent {
            if let Some((s, b, p)) = self.find_way(line) {
                self.stats.hits += 1;
                // The slot of the last hit no longer holds it.
                self.last_hit = self.slots.len() - 1;
                return Some(self.remove_at(s, b, p));
            }
        }
        self.stats.misses += 1;
        None
    }

    /// Remove the line in way `p` of set `s`, whose first way is `b`; whether it was dirty.
    #[inline]
    fn remove_at(&mut self, s: usize, b: usize, p: usize) -> bool {
        let i = b + p;
        let d = self.slots[i].dirty();
        if self.ordered() {
            // Close the gap so the free ways stay at the end of the set (only the valid
            // ways move: the rest are free).
            let end = b + self.lens[s] as usize;
            shift_left(&mut self.slots[i..end]);
            self.slots[end - 1] = W::INVALID;
            self.lens[s] -= 1;
        } else {
            self.slots[i] = W::INVALID;
        }
        d
    }

    /// Mark the line clean, keeping it; `Some(was_dirty)` if present.
    #[inline]
    pub fn clean(&mut self, line: u64) -> Option<bool> {
        self.find(line).map(|i| {
            let d = self.slots[i].dirty();
            self.slots[i] = self.slots[i].cleaned();
            d
        })
    }

    pub fn is_dirty(&self, line: u64) -> bool {
        self.find(line).is_some_and(|i| self.slots[i].dirty())
    }

    pub fn contains(&self, line: u64) -> bool {
        self.find(line).is_some()
    }

    /// Mark every dirty line clean, calling `f` with each (the end-of-run write-back), set
    /// by set, newest first within a set.
    pub fn drain_dirty(&mut self, mut f: impl FnMut(u64)) {
        for w in self
            .slots
            .iter_mut()
            .filter(|w| **w != W::INVALID && w.dirty())
        {
            *w = w.cleaned();
            f(w.line());
        }
    }

    pub fn capacity_lines(&self) -> u64 {
        self.sets * self.ways as u64
    }
}

impl Cache<u32> {
    /// The same cache with 64-bit ways: every line, dirty bit, position, count and random
    /// state as they were, so it answers and evicts exactly as this one would have.
    pub fn widen(self) -> Cache<u64> {
        let slots = self
            .slots
            .iter()
            .map(|&w| {
                if w == u32::INVALID {
                    u64::INVALID
                } else {
                    u64::of(w.line(), w.dirty())
                }
            })
            .collect();
        Cache {
            sets: self.sets,
            mask: self.mask,
            ways: self.ways,
            slots,
            policy: self.policy,
            rng: self.rng,
            last_hit: self.last_hit,
            probed_absent: self.probed_absent,
            lens: self.lens,
            stats: self.stats,
        }
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

    proptest::proptest! {
        /// `victim` names the line the next insert evicts (LRU and FIFO), None when that
        /// insert evicts nothing, on random streams of lookups, inserts and removals; random
        /// replacement, whose victim is drawn at the insert, names none.
        #[test]
        fn victim_is_the_line_the_next_insert_evicts(
            policy in 0usize..3,
            ops in proptest::collection::vec((0u8..3, 0u64..24), 1..300),
        ) {
            let policy = [Replacement::Lru, Replacement::Fifo, Replacement::Random][policy];
            let mut c = cache(3, policy);
            for (op, line) in ops {
                match op {
                    0 => {
                        c.lookup(line, line % 2 == 0);
                    }
                    1 => {
                        c.take(line);
                    }
                    _ => {
                        if !c.contains(line) {
                            let named = c.victim(line);
                            let evicted = c.insert(line, false).map(|(v, _)| v);
                            if policy == Replacement::Random {
                                proptest::prop_assert_eq!(named, None);
                            } else {
                                proptest::prop_assert_eq!(named, evicted);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn fifo_ignores_hits() {
        let mut c = cache(2, Replacement::Fifo);
        c.insert(0, false);
        c.insert(4, false);
        c.lookup(0, false);
        assert_eq!(c.insert(8, false), Some((0, false)));
    }

    /// The textbook model: each way has a stamp (last use for LRU, insertion for FIFO); a
    /// fill takes the first free way, else evicts the smallest stamp.
    struct Stamped {
        sets: u64,
        ways: usize,
        lru: bool,
        clock: u64,
        w: Vec<Option<(u64, u64, bool)>>, // (line, stamp, dirty)
    }

    impl Stamped {
        fn set(&self, line: u64) -> std::ops::Range<usize> {
            let b = (line % self.sets) as usize * self.ways;
            b..b + self.ways
        }
        fn lookup(&mut self, line: u64, write: bool) -> bool {
            self.clock += 1;
            let (r, clock, lru) = (self.set(line), self.clock, self.lru);
            match self.w[r].iter_mut().flatten().find(|e| e.0 == line) {
                Some(e) => {
                    if lru {
                        e.1 = clock;
                    }
                    e.2 |= write;
                    true
                }
                None => false,
            }
        }
        fn insert(&mut self, line: u64, dirty: bool) -> Option<(u64, bool)> {
            self.clock += 1;
            let r = self.set(line);
            let i = match self.w[r.clone()].iter().position(|e| e.is_none()) {
                Some(i) => i,
                None => (0..self.ways)
                    .min_by_key(|&i| self.w[r.start + i].unwrap().1)
                    .unwrap(),
            };
            let old = self.w[r.start + i].replace((line, self.clock, dirty));
            old.map(|e| (e.0, e.2))
        }
        fn invalidate(&mut self, line: u64) -> Option<bool> {
            let r = self.set(line);
            let e = self.w[r]
                .iter_mut()
                .find(|e| e.is_some_and(|e| e.0 == line))?;
            e.take().map(|e| e.2)
        }
    }

    proptest::proptest! {
        /// Ordered sets evict exactly the line a stamp-based LRU/FIFO evicts, and agree on
        /// every hit, dirty bit and invalidation.
        #[test]
        fn ordered_sets_match_stamped_replacement(
            lru in proptest::bool::ANY,
            ops in proptest::collection::vec((0u8..4, 0u64..24, proptest::bool::ANY), 1..400),
        ) {
            let policy = if lru { Replacement::Lru } else { Replacement::Fifo };
            let mut c = SetAssocCache::new(64 * 3 * 2, 3, policy, crate::rng::stream(1, "c"));
            let mut m = Stamped { sets: 2, ways: 3, lru, clock: 0, w: vec![None; 6] };
            let mut counted = [0u64; 2]; // misses, hits: each access counted once
            for (op, line, flag) in ops {
                match op {
                    0 | 1 => {
                        // Op 1 probes first, as the L1 fast path does, then looks up.
                        let hit = (op == 1 && c.probe_hit(line, flag)) || c.lookup(line, flag);
                        proptest::prop_assert_eq!(hit, m.lookup(line, flag));
                        counted[hit as usize] += 1;
                        if !hit {
                            proptest::prop_assert_eq!(c.insert(line, flag), m.insert(line, flag));
                        }
                    }
                    2 => proptest::prop_assert_eq!(c.invalidate(line), m.invalidate(line)),
                    _ => {
                        let was = c.clean(line);
                        let r = m.set(line);
                        let e = m.w[r].iter_mut().flatten().find(|e| e.0 == line);
                        proptest::prop_assert_eq!(was, e.map(|e| std::mem::replace(&mut e.2, false)));
                    }
                }
            }
            proptest::prop_assert_eq!([c.stats.misses, c.stats.hits], counted);
        }
    }

    impl<W: Way> Cache<W> {
        /// The per-set valid counts match the ways (a valid prefix, then free ways).
        fn check_lens(&self) {
            for (s, &n) in self.lens.iter().enumerate() {
                let set = &self.slots[s * self.ways..(s + 1) * self.ways];
                let valid = set.iter().take_while(|&&w| w != W::INVALID).count();
                assert_eq!(valid, n as usize, "set {s}");
                assert!(set[valid..].iter().all(|&w| w == W::INVALID), "set {s}");
            }
        }

        /// Every line held, the straightforward way: all ways of all sets, whatever `lens`
        /// says.
        fn lines_by_scan(&self) -> Vec<(u64, bool)> {
            let mut out: Vec<_> = self
                .slots
                .iter()
                .filter(|&&w| w != W::INVALID)
                .map(|&w| (w.line(), w.dirty()))
                .collect();
            out.sort_unstable();
            out
        }
    }

    /// Apply to `c` what `valid_prefix_and_take_match_full_scan` is about to apply to `a`
    /// (a clone of `a` takes it too) and check both answer alike and hold the same lines.
    fn same_op<W: Way>(
        c: &mut Cache<W>,
        a: &SetAssocCache,
        op: u8,
        line: u64,
        flag: bool,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let mut a = a.clone();
        match op {
            0 | 1 => {
                let hit = c.lookup(line, flag);
                proptest::prop_assert_eq!(hit, a.lookup(line, flag));
                if !hit {
                    proptest::prop_assert_eq!(c.insert(line, flag), a.insert(line, flag));
                }
            }
            _ if flag => proptest::prop_assert_eq!(c.take(line), a.take(line)),
            _ => proptest::prop_assert_eq!(c.invalidate(line), a.invalidate(line)),
        }
        c.check_lens();
        proptest::prop_assert_eq!(c.lines_by_scan(), a.lines_by_scan());
        proptest::prop_assert_eq!(c.victim(line), a.victim(line));
        let (x, y) = (c.stats, a.stats);
        proptest::prop_assert_eq!(
            [x.hits, x.misses, x.evictions, x.writebacks],
            [y.hits, y.misses, y.evictions, y.writebacks]
        );
        Ok(())
    }

    proptest::proptest! {
        /// Searching only the valid ways (`lens`) finds exactly the lines a scan of every way
        /// finds, the counts match the sets after every operation, and a second cache fed the
        /// same operations but moving lines out by `lookup` + `invalidate` instead of `take`
        /// agrees on every line, dirty bit, victim and count.
        #[test]
        fn valid_prefix_and_take_match_full_scan(
            policy in 0usize..3,
            ops in proptest::collection::vec((0u8..3, 0u64..48, proptest::bool::ANY), 1..400),
            widen_at in 0usize..400,
        ) {
            let policy = [Replacement::Lru, Replacement::Fifo, Replacement::Random][policy];
            let (sets, ways) = (8u64, 4usize);
            let mk = || SetAssocCache::new(64 * ways as u64 * sets, ways, policy, crate::rng::stream(1, "c"));
            let (mut a, mut b) = (mk(), mk());
            // The same cache with 32-bit ways, widened to 64-bit ones after `widen_at`
            // operations: it answers as `a` does throughout.
            let mut narrow = Some(Cache::<u32>::new(64 * ways as u64 * sets, ways, policy, crate::rng::stream(1, "c")));
            let mut widened: Option<SetAssocCache> = None;
            for (i, (op, line, flag)) in ops.into_iter().enumerate() {
                if i == widen_at {
                    widened = narrow.take().map(Cache::widen);
                }
                match (&mut narrow, &mut widened) {
                    (Some(n), _) => same_op(n, &a, op, line, flag)?,
                    (None, Some(w)) => same_op(w, &a, op, line, flag)?,
                    (None, None) => unreachable!("one of them is kept"),
                }
                match op {
                    0 | 1 => {
                        let hit = a.lookup(line, flag);
                        proptest::prop_assert_eq!(hit, b.lookup(line, flag));
                        if !hit {
                            proptest::prop_assert_eq!(a.insert(line, flag), b.insert(line, flag));
                        }
                    }
                    _ if flag => {
                        let hit = b.lookup(line, false);
                        let moved = if hit { b.invalidate(line) } else { None };
                        proptest::prop_assert_eq!(a.take(line), moved);
                    }
                    _ => proptest::prop_assert_eq!(a.invalidate(line), b.invalidate(line)),
                }
                a.check_lens();
                b.check_lens();
                let held = a.lines_by_scan();
                proptest::prop_assert_eq!(&held, &b.lines_by_scan());
                for l in 0..48 {
                    proptest::prop_assert_eq!(a.contains(l), held.iter().any(|e| e.0 == l), "line {}", l);
                    proptest::prop_assert_eq!(a.is_dirty(l), held.contains(&(l, true)), "line {}", l);
                    proptest::prop_assert_eq!(b.contains(l), a.contains(l), "line {}", l);
                }
                proptest::prop_assert_eq!([a.stats.hits, a.stats.misses, a.stats.evictions, a.stats.writebacks],
                    [b.stats.hits, b.stats.misses, b.stats.evictions, b.stats.writebacks]);
            }
        }
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
