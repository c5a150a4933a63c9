//! LRU sets for latency-only users (no dirty state, no victims reported), aged by
//! anonymous fills: the level type of [`super::CoherentHierarchy`].
//!
//! A set's tags and fill stamps sit side by side in one host cache line (8 ways) or two
//! (16), and a set is always `P` entries (the associativity rounded up to 8, 16, 32 or 64):
//! the searches and the LRU moves are fixed-size array operations the compiler turns into
//! a few vector instructions, with no per-set count to keep. Entries at positions at or
//! beyond the associativity are never resident (the rule below), so the padding costs no
//! bookkeeping.
//!
//! Residency under LRU with anonymous fills ([`AnonLru::pollute_lines`]: lines the user
//! writes and never reads again, counted per set, not stored): sets keep their lines newest
//! first, each with its set's fill count at its last touch; a line at position `p` whose
//! set saw `a` fills since then has `p + a` newer lines or fills above it, so it is cached
//! iff `p + a < ways`. The cached lines are a prefix of the set (position and age both grow
//! towards its end); behind them lie free entries and lines that aged out, which stay there
//! until shifted out. Only a removal moves entries towards the front, and it moves just the
//! cached lines behind the removed one, so no line that aged out comes back.
//! `SetAssocCache` inserting fresh lines is the reference (the proptest in `coherent.rs`).

use super::lanes;

/// Lines of a 4 KiB page: the run [`AnonLru::pollute_lines`] adds without a loop bound.
const PAGE_LINES: usize = 64;

/// A free entry: tags are `line >> set_bits`, below this.
const INVALID: u32 = u32::MAX;

/// One set: tags newest first, each with its fill stamp.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Set<const P: usize> {
    tags: [u32; P],
    stamps: [u32; P],
}

impl<const P: usize> Set<P> {
    const EMPTY: Set<P> = Set {
        tags: [INVALID; P],
        stamps: [0; P],
    };

    /// A hit at position `p` becomes the newest (`stamp`): the entries before it move
    /// one place back. (As a fixed-size lane move, like a removal's, it cost more than the
    /// loop's mispredicted exits: most hits are near the front.)
    #[inline(always)]
    fn hit_to_front(&mut self, p: usize, stamp: u32) {
        let tag = self.tags[p];
        for i in (1..=p).rev() {
            self.tags[i] = self.tags[i - 1];
            self.stamps[i] = self.stamps[i - 1];
        }
        self.tags[0] = tag;
        self.stamps[0] = stamp;
    }

    /// `(tag, stamp)` enters at the front: every entry moves one place back and the last
    /// drops out (a fixed-size move).
    #[inline(always)]
    fn push_front(&mut self, tag: u32, stamp: u32) {
        self.tags.copy_within(0..P - 1, 1);
        self.stamps.copy_within(0..P - 1, 1);
        self.tags[0] = tag;
        self.stamps[0] = stamp;
    }
}

/// A set's index, made only by [`AnonLru::set_of`] (`line & set_mask`, below the set count,
/// and `sets` and `anon` never change length), so the sets and their fill counts are read
/// without a bounds check: these reads are most of a lookup's host instructions.
#[derive(Clone, Copy)]
struct SetIx(usize);

/// A line's place in a level, from a lookup that missed: see [`AnonLru::lookup_slot`].
#[derive(Clone, Copy)]
pub(super) struct Slot {
    s: SetIx,
    tag: u32,
    now: u32,
}

/// The sets of one cache level of `ways`-way LRU, `P` entries per set (`ways <= P`, `P` a
/// multiple of 16, or 8).
pub(super) struct AnonLru<const P: usize> {
    ways: u32,
    /// The room at each position, for [`lanes::aged_out`].
    room: lanes::Room<P>,
    set_bits: u32,
    set_mask: u64,
    sets: Vec<Set<P>>,
    /// Anonymous fills per set; a set's count is `anon_base + anon[set]` (wrapping, as the
    /// stamps compare; a set would need 2^32 fills without an insert to alias).
    anon: Vec<u32>,
    /// Fills spread over every set: one increment instead of one per set.
    anon_base: u32,
}

impl<const P: usize> AnonLru<P> {
    /// A level of `size_bytes` in 64-byte lines and `ways <= P` ways; the set count must be
    /// a power of two (callers validate both).
    pub(super) fn new(size_bytes: u64, ways: usize) -> Self {
        let sets = (size_bytes / (64 * ways as u64)).max(1);
        assert!(sets.is_power_of_two() && (1..=P).contains(&ways));
        AnonLru {
            ways: ways as u32,
            room: lanes::Room::new(ways as u32),
            set_bits: sets.trailing_zeros(),
            set_mask: sets - 1,
            sets: vec![Set::EMPTY; sets as usize],
            anon: vec![0; sets as usize],
            anon_base: 0,
        }
    }

    /// The set of `line`.
    #[inline(always)]
    fn set_of(&self, line: u64) -> SetIx {
        SetIx((line & self.set_mask) as usize)
    }

    #[inline(always)]
    fn set(&self, s: SetIx) -> &Set<P> {
        debug_assert!(s.0 < self.sets.len());
        // SAFETY: `s` is below the set count (see `SetIx`).
        unsafe { self.sets.get_unchecked(s.0) }
    }

    #[inline(always)]
    fn set_mut(&mut self, s: SetIx) -> &mut Set<P> {
        debug_assert!(s.0 < self.sets.len());
        // SAFETY: `s` is below the set count (see `SetIx`).
        unsafe { self.sets.get_unchecked_mut(s.0) }
    }

    /// The set and tag of a line to store or find. Tags are 32 bits: lines stored must be
    /// below 2^(32 + set bits), 256 GiB of addresses with a single set (the allocator
    /// model's lines are all below 2^32; anonymous fills store nothing, so any address).
    #[inline(always)]
    fn split(&self, line: u64) -> (SetIx, u32) {
        let tag = line >> self.set_bits;
        debug_assert!(tag < INVALID as u64, "line {line} beyond the tag range");
        (self.set_of(line), tag as u32)
    }

    #[inline(always)]
    fn now(&self, s: SetIx) -> u32 {
        debug_assert!(s.0 < self.anon.len());
        // SAFETY: `anon` has one count per set and `s` is below the set count (see `SetIx`).
        self.anon_base
            .wrapping_add(unsafe { *self.anon.get_unchecked(s.0) })
    }

    /// Whether an entry at position `p` stamped `stamp` is still cached in a set whose fill
    /// count is `now`.
    #[inline(always)]
    fn resident(&self, now: u32, p: usize, stamp: u32) -> bool {
        (p as u64 + now.wrapping_sub(stamp) as u64) < self.ways as u64
    }

    /// Position of `tag` in set `s` if it is cached, with the set's fill count (a copy that
    /// aged out may sit behind a cached one, never before it, so the first match decides).
    /// No branch but the caller's on the answer: a test of the newest entry first, or of
    /// whether any entry matched, went either way about as often as it was taken.
    #[inline(always)]
    fn find(&self, s: SetIx, tag: u32) -> (Option<usize>, u32) {
        let set = self.set(s);
        let now = self.now(s);
        let m = lanes::matches(&set.tags, tag);
        let p = (m.trailing_zeros() as usize).min(P - 1);
        let hit = (m != 0) & self.resident(now, p, set.stamps[p]);
        (hit.then_some(p), now)
    }

    /// Look `line` up; on a hit it becomes the newest of its set.
    #[inline(always)]
    pub(super) fn lookup(&mut self, line: u64) -> bool {
        let (s, tag) = self.split(line);
        match self.find(s, tag) {
            (Some(p), now) => {
                self.set_mut(s).hit_to_front(p, now);
                true
            }
            (None, _) => false,
        }
    }

    /// `lookup`; on a miss, where `insert_at` puts the line (valid until the level next
    /// changes): the set index, tag and fill count are worked out once for both.
    #[inline(always)]
    pub(super) fn lookup_slot(&mut self, line: u64) -> Result<(), Slot> {
        let (s, tag) = self.split(line);
        match self.find(s, tag) {
            (Some(p), now) => {
                self.set_mut(s).hit_to_front(p, now);
                Ok(())
            }
            (None, now) => Err(Slot { s, tag, now }),
        }
    }

    /// `insert` of the line that missed at `slot`, the level unchanged since.
    #[inline(always)]
    pub(super) fn insert_at(&mut self, slot: Slot) {
        debug_assert_eq!(
            slot.now,
            self.now(slot.s),
            "the level changed since the lookup"
        );
        self.set_mut(slot.s).push_front(slot.tag, slot.now);
    }

    /// `lookup`, and on a miss `insert`: whether it hit.
    #[inline(always)]
    pub(super) fn lookup_or_insert(&mut self, line: u64) -> bool {
        let (s, tag) = self.split(line);
        match self.find(s, tag) {
            (Some(p), now) => {
                self.set_mut(s).hit_to_front(p, now);
                true
            }
            (None, now) => {
                self.set_mut(s).push_front(tag, now);
                false
            }
        }
    }

    /// Ask the host to fetch the set of `line` (a lookup that follows overlaps its
    /// host-memory latency with other work).
    #[inline(always)]
    pub(super) fn prefetch(&self, line: u64) {
        crate::hostmem::prefetch(self.set(self.set_of(line)));
    }

    /// Whether `line` is cached (its recency unchanged).
    #[inline(always)]
    pub(super) fn contains(&self, line: u64) -> bool {
        let (s, tag) = self.split(line);
        self.find(s, tag).0.is_some()
    }

    /// Insert `line`, which is not cached, as the newest of its set (the oldest line drops
    /// out if the set is full).
    #[inline(always)]
    pub(super) fn insert(&mut self, line: u64) {
        let (s, tag) = self.split(line);
        let now = self.now(s);
        self.set_mut(s).push_front(tag, now);
    }

    /// Remove `line`; whether it was cached. The cached lines behind it move one place
    /// up, and the entry after them becomes free; the lines that had aged out stay where
    /// they are (moved up, they could come back).
    #[inline]
    pub(super) fn invalidate(&mut self, line: u64) -> bool {
        let (s, tag) = self.split(line);
        let (Some(p), now) = self.find(s, tag) else {
            return false;
        };
        // The first aged-out entry behind `p` (or the set's end) bounds the move; the entry
        // before it is freed (its stamp stays: a free entry's stamp is never read for a hit).
        let behind = lanes::aged_out(&self.set(s).stamps, now, &self.room) & (u64::MAX << p << 1);
        let end = (behind | 1u64 << (P - 1) << 1).trailing_zeros() as usize;
        let set = self.set_mut(s);
        let last = end - 1;
        lanes::close_gap(&mut set.tags, &mut set.stamps, p, last);
        set.tags[last] = INVALID;
        true
    }

    /// One line filled into the level, never cached before and never used again: its set
    /// ages by one fill (`pollute_lines` of one line, without the run's bookkeeping).
    #[inline(always)]
    pub(super) fn pollute_line(&mut self, line: u64) {
        let s = self.set_of(line);
        debug_assert!(s.0 < self.anon.len());
        // SAFETY: `anon` has one count per set and `s` is below the set count (see `SetIx`).
        let a = unsafe { self.anon.get_unchecked_mut(s.0) };
        *a = a.wrapping_add(1);
    }

    /// `n` lines from `first_line` filled into the level, each never cached before and never
    /// used again: they age the lines of their sets as inserting them one by one would,
    /// without storing them. O(min(n, sets)).
    pub(super) fn pollute_lines(&mut self, first_line: u64, n: u64) {
        let sets = self.anon.len();
        // Whole passes over the sets: one increment of the common base.
        self.anon_base = self.anon_base.wrapping_add((n >> self.set_bits) as u32);
        // The rest: a run of consecutive sets, wrapping at most once.
        let first = self.set_of(first_line).0;
        let rest = (n & self.set_mask) as usize;
        if rest == PAGE_LINES && first + PAGE_LINES <= sets {
            // A 4 KiB page's lines in a level of more sets (a zeroed page): a run of fixed
            // length, added without the general loops' remainder handling.
            let run: &mut [u32; PAGE_LINES] = (&mut self.anon[first..first + PAGE_LINES])
                .try_into()
                .expect("a run of PAGE_LINES sets");
            for a in run {
                *a = a.wrapping_add(1);
            }
            return;
        }
        let head = rest.min(sets - first);
        for a in &mut self.anon[first..first + head] {
            *a = a.wrapping_add(1);
        }
        for a in &mut self.anon[..rest - head] {
            *a = a.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_order_and_fills() {
        // One set of 4 ways.
        let mut c = AnonLru::<8>::new(64 * 4, 4);
        for l in 1..=4 {
            c.insert(l);
        }
        assert!(c.lookup(1)); // order now 1 4 3 2
        c.insert(5); // 2 drops out
        assert!(!c.contains(2) && c.contains(1) && c.contains(3));
        // Two fills: 4 and 3 age out (positions 2, 3 plus two fills reach 4).
        c.pollute_lines(0, 2);
        assert!(c.contains(5) && c.contains(1) && !c.contains(4) && !c.contains(3));
        // Removing 1 must not bring 4 or 3 back.
        assert!(c.invalidate(1));
        assert!(!c.contains(4) && !c.contains(3) && c.contains(5));
    }

    proptest::proptest! {
        /// Every set's fill count after runs of fills (whole passes over the sets, runs
        /// that wrap around, short runs) equals one count per filled line.
        #[test]
        fn fill_counts_equal_per_line_counts(
            runs in proptest::collection::vec((0u64..1 << 20, 0u64..700), 1..40),
        ) {
            let mut c = AnonLru::<8>::new(64 * 256 * 2, 2);
            let mut want = vec![0u32; 256];
            for (first, n) in runs {
                c.pollute_lines(first, n);
                for l in first..first + n {
                    want[(l % 256) as usize] += 1;
                }
                for (s, w) in want.iter().enumerate() {
                    proptest::prop_assert_eq!(c.now(SetIx(s)), *w, "set {}", s);
                }
            }
        }
    }

    /// Plain LRU sets for the proptest below: each set's lines newest first, at most `ways`,
    /// anonymous fills stored as fresh lines (`None`) that are never looked up.
    struct PlainLru {
        ways: usize,
        sets: Vec<Vec<Option<u64>>>,
    }

    impl PlainLru {
        fn set(&mut self, line: u64) -> &mut Vec<Option<u64>> {
            let n = self.sets.len() as u64;
            &mut self.sets[(line % n) as usize]
        }

        fn touch(&mut self, line: u64, insert: bool) -> bool {
            let ways = self.ways;
            let set = self.set(line);
            let hit = match set.iter().position(|&e| e == Some(line)) {
                Some(p) => {
                    set.remove(p);
                    true
                }
                None => false,
            };
            if hit || insert {
                set.insert(0, Some(line));
                set.truncate(ways);
            }
            hit
        }

        fn invalidate(&mut self, line: u64) -> bool {
            let set = self.set(line);
            let p = set.iter().position(|&e| e == Some(line));
            p.map(|p| set.remove(p)).is_some()
        }

        fn fill(&mut self, first_line: u64, n: u64) {
            let ways = self.ways;
            for l in first_line..first_line + n {
                let set = self.set(l);
                set.insert(0, None);
                set.truncate(ways);
            }
        }

        fn contains(&self, line: u64) -> bool {
            let n = self.sets.len() as u64;
            self.sets[(line % n) as usize].contains(&Some(line))
        }
    }

    proptest::proptest! {
        /// Every answer and every line's residency equal plain LRU sets' (lines moved to the
        /// front, inserted with the oldest dropping out, removed leaving room, fills as fresh
        /// lines) on random streams of lookups, inserts, removals and fills, for sets of
        /// 2, 3, 8 and 11 ways in sets of 8 or 16 entries.
        #[test]
        fn equals_plain_lru_sets(
            shape in 0usize..4,
            ops in proptest::collection::vec((0u8..6, 0u64..48, 1u64..12), 1..400),
        ) {
            let ways = [2, 3, 8, 11][shape];
            let sets = 4u64;
            let mut plain = PlainLru { ways, sets: vec![Vec::new(); sets as usize] };
            let mut a8 = (ways <= 8).then(|| AnonLru::<8>::new(64 * sets * ways as u64, ways));
            let mut a16 = AnonLru::<16>::new(64 * sets * ways as u64, ways);
            for (op, line, n) in ops {
                let want = match op {
                    0 => {
                        plain.fill(line, n);
                        a16.pollute_lines(line, n);
                        if let Some(a) = a8.as_mut() {
                            a.pollute_lines(line, n);
                        }
                        None
                    }
                    1 => Some((
                        plain.invalidate(line),
                        a16.invalidate(line),
                        a8.as_mut().map(|a| a.invalidate(line)),
                    )),
                    2 => Some((
                        plain.touch(line, false),
                        a16.lookup(line),
                        a8.as_mut().map(|a| a.lookup(line)),
                    )),
                    _ => Some((
                        plain.touch(line, true),
                        a16.lookup_or_insert(line),
                        a8.as_mut().map(|a| a.lookup_or_insert(line)),
                    )),
                };
                if let Some((p, b, c)) = want {
                    proptest::prop_assert_eq!(p, b, "op {} line {}", op, line);
                    proptest::prop_assert!(c.is_none_or(|c| c == p), "op {} line {}", op, line);
                }
                for l in 0..48 {
                    let p = plain.contains(l);
                    proptest::prop_assert_eq!(a16.contains(l), p, "line {}", l);
                    if let Some(a) = &a8 {
                        proptest::prop_assert_eq!(a.contains(l), p, "line {}", l);
                    }
                }
            }
        }
    }

    #[test]
    fn padded_entries_are_never_resident() {
        // 3 ways in sets of 8 entries.
        let mut c = AnonLru::<8>::new(64 * 3, 3);
        for l in 1..=5 {
            c.insert(l);
        }
        assert!((3..=5).all(|l| c.contains(l)) && !c.contains(1) && !c.contains(2));
        assert!(c.invalidate(4));
        assert!(
            !c.contains(2),
            "a line pushed out stays out after a removal"
        );
    }
}
