//! A multi-core hierarchy for latency-only users that move lines between cores: private L1
//! and L2 per core, one shared LLC, *non-inclusive* (a miss fills every level it passes; a
//! line leaving a level is dropped there, its data written to the level below if dirty),
//! LRU in every level, coherent for lines that migrate between cores, and anonymous fills
//! ([`CoherentHierarchy::pollute_lines`]) for lines the user writes but never asks about.
//!
//! This is the organization of Nehalem/Westmere, the allocator cost model's machine: L2 is
//! neither inclusive nor exclusive of L1, and the L3 is filled by every miss (it is
//! inclusive there; the back-invalidation that inclusion implies when the L3 evicts a line
//! a core still holds is not modelled). Because every level sees each fill, anonymous
//! fills are exact per level: a zeroing store miss fills L1, L2 and the LLC as a real one
//! does, and lines they push out of a level are simply gone from it. The persistence
//! models use [`super::Hierarchy`] (exclusive, with flushes and a memory sink).
//!
//! The levels are [`super::anon_lru`]'s compact LRU sets (no dirty state: nothing here
//! depends on it) and each line's last holder is a dense per-line table, so an access
//! touches few host cache lines. The proptest below checks every answer against the same
//! hierarchy built from [`super::SetAssocCache`] with the fills inserted as real lines.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::anon_lru::AnonLru;
use super::hierarchy::{CacheConfig, LineHasher};
use super::LevelConfig;

/// Where an access found its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Source {
    L1 = 0,
    L2 = 1,
    /// The shared LLC, no core holding the line privately.
    Llc = 2,
    /// Another core's private cache (through the LLC, which snooped it).
    OtherCore = 3,
    Memory = 4,
}

impl Source {
    pub const COUNT: usize = 5;
}

/// A line's last holder: the core (low 8 bits) and which of its private levels the line
/// entered since it took the line. A level whose bit is clear does not hold the line (lines
/// enter private levels only here), so it is not searched; a set bit means "may hold it"
/// (the line may since have been evicted).
#[derive(Clone, Copy)]
struct Holder(u16);

impl Holder {
    const IN_L1: u16 = 1 << 8;
    const IN_L2: u16 = 1 << 9;
    /// No core holds the line.
    const NONE: Holder = Holder(0xff);

    #[inline(always)]
    fn core(self) -> usize {
        (self.0 & 0xff) as usize
    }

    #[inline(always)]
    fn took(core: usize, levels: u16) -> Holder {
        Holder(core as u16 | levels)
    }
}

/// Lines per page of [`HolderTable`].
const PAGE_LINES: u64 = 4096;
/// Pages remembered by [`HolderTable`]'s direct-mapped memo.
const MEMO: usize = 16;

/// Every line's [`Holder`], in pages of consecutive lines made on first use: the lines a
/// user touches come in dense runs (an array of `struct page`s, a zone's lines), so few
/// pages exist, and a direct-mapped memo of recent pages finds most without the map. The
/// memo keeps each page's address, not its index: one dependent load less on every
/// private miss.
struct HolderTable {
    memo: [(u64, *mut Holder); MEMO],
    page_of: HashMap<u64, u32, BuildHasherDefault<LineHasher>>,
    /// The pages, each a leaked box freed on drop (raw, so the memo's pointers into them
    /// stay valid when this vector grows).
    pages: Vec<*mut [Holder; PAGE_LINES as usize]>,
}

// SAFETY: the memo's pointers point into `pages`, which this table alone owns (made in
// `page`, freed in `drop`); nothing else holds them.
unsafe impl Send for HolderTable {}

impl Drop for HolderTable {
    fn drop(&mut self) {
        for &p in &self.pages {
            // SAFETY: each was made by `Box::into_raw` in `page` and is freed once, here.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

impl Default for HolderTable {
    fn default() -> Self {
        HolderTable {
            memo: [(u64::MAX, std::ptr::null_mut()); MEMO],
            page_of: HashMap::default(),
            pages: Vec::new(),
        }
    }
}

impl HolderTable {
    #[inline(always)]
    fn get(&mut self, line: u64) -> &mut Holder {
        let page = line / PAGE_LINES;
        let m = page as usize % MEMO;
        let p = if self.memo[m].0 == page {
            self.memo[m].1
        } else {
            self.page(page)
        };
        // SAFETY: `p` is the first entry of a page made by `page` (the memo holds only
        // those; its initial page number, u64::MAX, is above every line's page), alive
        // until the table drops; `&mut self` makes this the only reference into it.
        unsafe { &mut *p.add((line % PAGE_LINES) as usize) }
    }

    /// The first entry of `page` (made if new), remembered in the memo.
    #[inline(never)]
    fn page(&mut self, page: u64) -> *mut Holder {
        let n = self.pages.len() as u32;
        let p = *self.page_of.entry(page).or_insert(n);
        if p == n {
            let page = Box::new([Holder::NONE; PAGE_LINES as usize]);
            self.pages.push(Box::into_raw(page));
        }
        let first = self.pages[p as usize] as *mut Holder;
        self.memo[page as usize % MEMO] = (page, first);
        first
    }
}

/// A core's index, checked against the number of cores by [`Levels::core`]; the per-core
/// levels, whose count never changes, are then reached without further bounds checks.
#[derive(Clone, Copy)]
struct Core(usize);

/// The levels, with sets of `P1`, `P2` and `P3` entries (each at least the level's ways).
struct Levels<const P1: usize, const P2: usize, const P3: usize> {
    l1: Vec<AnonLru<P1>>,
    l2: Vec<AnonLru<P2>>,
    llc: AnonLru<P3>,
}

impl<const P1: usize, const P2: usize, const P3: usize> Levels<P1, P2, P3> {
    fn new(cfg: &CacheConfig, cores: usize) -> Self {
        let l = |c: &LevelConfig| (c.size_bytes, c.ways);
        let ((b1, w1), (b2, w2), (b3, w3)) = (l(&cfg.l1), l(&cfg.l2), l(&cfg.llc));
        Levels {
            l1: (0..cores).map(|_| AnonLru::new(b1, w1)).collect(),
            l2: (0..cores).map(|_| AnonLru::new(b2, w2)).collect(),
            llc: AnonLru::new(b3, w3),
        }
    }

    /// `core` checked against the core count, once for many accesses.
    #[inline(always)]
    fn core(&self, core: usize) -> Core {
        assert!(core < self.l1.len() && core < self.l2.len());
        Core(core)
    }

    #[inline(always)]
    fn l1(&mut self, c: Core) -> &mut AnonLru<P1> {
        // SAFETY: `c` was checked against `l1`'s length, which never changes (see `Core`).
        unsafe { self.l1.get_unchecked_mut(c.0) }
    }

    #[inline(always)]
    fn l2(&mut self, c: Core) -> &mut AnonLru<P2> {
        // SAFETY: `c` was checked against `l2`'s length, which never changes (see `Core`).
        unsafe { self.l2.get_unchecked_mut(c.0) }
    }

    #[inline(always)]
    fn access(&mut self, holder: &mut HolderTable, c: Core, line: u64) -> Source {
        let core = c.0;
        // On a miss the line enters this L1 below, which nothing in between changes (the
        // lines another core gives up leave that core's levels, never this one's).
        let Err(l1_slot) = self.l1(c).lookup_slot(line) else {
            return Source::L1;
        };
        // The LLC set is likely needed: fetch it while the holder and L2 are looked at.
        self.llc.prefetch(line);
        let h = holder.get(line);
        let was = *h;
        *h = Holder::took(core, Holder::IN_L1 | Holder::IN_L2);
        if was.core() == core && was.0 & Holder::IN_L2 != 0 && self.l2(c).lookup(line) {
            self.l1(c).insert_at(l1_slot);
            return Source::L2;
        }
        let o = was.core();
        let other = (o != core && o < self.l1.len()).then(|| self.core(o));
        if let Some(o) = other {
            // The other core's sets are read below, after this core's fills and the LLC's
            // (independent structures, so the order changes nothing): their host-memory
            // latency overlaps that work.
            self.l1(o).prefetch(line);
            self.l2(o).prefetch(line);
        }
        let in_llc = self.llc.lookup_or_insert(line);
        self.l2(c).insert(line);
        self.l1(c).insert_at(l1_slot);
        let mut remote = false;
        if let Some(o) = other {
            // Both private levels may hold it (non-inclusive): it leaves both.
            remote |= was.0 & Holder::IN_L1 != 0 && self.l1(o).invalidate(line);
            remote |= was.0 & Holder::IN_L2 != 0 && self.l2(o).invalidate(line);
        }
        match (remote, in_llc) {
            (true, _) => Source::OtherCore,
            (false, true) => Source::Llc,
            (false, false) => Source::Memory,
        }
    }

    /// `access` of each of `lines` in order by `core`, each line that came from memory
    /// followed by the adjacent-line prefetch of its pair when `adjacent_prefetch`;
    /// `counts[s]` counts the answers; returns the sum of `cycles[s]` over the answers.
    #[inline(always)]
    fn access_lines(
        &mut self,
        holder: &mut HolderTable,
        core: usize,
        lines: &[u64],
        adjacent_prefetch: bool,
        counts: &mut [u64; Source::COUNT],
        cycles: &[u64; Source::COUNT],
    ) -> u64 {
        let c = self.core(core);
        let mut total = 0;
        for &line in lines {
            let s = self.access(holder, c, line);
            if s == Source::Memory && adjacent_prefetch {
                self.prefetch_to_l2(holder, c, line ^ 1);
            }
            counts[s as usize] += 1;
            total += cycles[s as usize];
        }
        total
    }

    #[inline(always)]
    fn prefetch_to_l2(&mut self, holder: &mut HolderTable, c: Core, line: u64) -> bool {
        if self.llc.contains(line) {
            return false;
        }
        let h = holder.get(line);
        let was = *h;
        let o = was.core();
        if o < self.l1.len() {
            let o = self.core(o);
            if (was.0 & Holder::IN_L1 != 0 && self.l1(o).contains(line))
                || (was.0 & Holder::IN_L2 != 0 && self.l2(o).contains(line))
            {
                return false;
            }
        }
        *h = Holder::took(c.0, Holder::IN_L2);
        self.llc.insert(line);
        self.l2(c).insert(line);
        true
    }

    fn pollute_lines(&mut self, core: usize, first_line: u64, lines: u64) {
        self.l1[core].pollute_lines(first_line, lines);
        self.l2[core].pollute_lines(first_line, lines);
        self.llc.pollute_lines(first_line, lines);
    }

    fn pollute_each(&mut self, core: usize, lines: &[u64]) {
        let c = self.core(core);
        for &line in lines {
            self.l1(c).pollute_line(line);
            self.l2(c).pollute_line(line);
            self.llc.pollute_line(line);
        }
    }

    /// Whether `core`'s L1 and L2, and the LLC, hold `line`.
    #[cfg(test)]
    fn holds(&self, core: usize, line: u64) -> [bool; 3] {
        [
            self.l1[core].contains(line),
            self.l2[core].contains(line),
            self.llc.contains(line),
        ]
    }
}

/// The set sizes the hierarchy is compiled for: each level's ways rounded up to 8 or 16,
/// for the common shapes, and 64 entries for any other (the same answers, more work).
enum Shape {
    /// Nehalem/Westmere and most x86 cores since: 8-way L1 and L2, 16-way LLC.
    S8x8x16(Levels<8, 8, 16>),
    S8x16x16(Levels<8, 16, 16>),
    S8x8x8(Levels<8, 8, 8>),
    Any(Levels<64, 64, 64>),
}

/// `$body` with `$l` bound to the levels, whatever their shape.
macro_rules! with_levels {
    ($shape:expr, $l:ident => $body:expr) => {
        match $shape {
            Shape::S8x8x16($l) => $body,
            Shape::S8x16x16($l) => $body,
            Shape::S8x8x8($l) => $body,
            Shape::Any($l) => $body,
        }
    };
}

pub struct CoherentHierarchy {
    levels: Shape,
    /// The core whose private caches last took each line: a line sits in at most one core's
    /// private caches (a line another core uses moves, as MESI does for a line written on
    /// one core and used on another), so looking only there finds it where a search of every
    /// core would.
    holder: HolderTable,
}

impl CoherentHierarchy {
    /// LRU levels of `cfg`'s sizes for `cores` cores (up to 254); every level's set count
    /// must be a power of two and its associativity at most 64 (`cfg`'s replacement and
    /// `clwb` switches do not apply).
    pub fn new(cfg: &CacheConfig, cores: usize) -> CoherentHierarchy {
        assert!(cores < 0xff, "{cores} cores: at most 254");
        let fit = |c: &LevelConfig| match c.ways {
            0..=8 => 8,
            9..=16 => 16,
            _ => 64,
        };
        let levels = match (fit(&cfg.l1), fit(&cfg.l2), fit(&cfg.llc)) {
            (8, 8, 16) => Shape::S8x8x16(Levels::new(cfg, cores)),
            (8, 16, 16) => Shape::S8x16x16(Levels::new(cfg, cores)),
            (8, 8, 8) => Shape::S8x8x8(Levels::new(cfg, cores)),
            _ => Shape::Any(Levels::new(cfg, cores)),
        };
        CoherentHierarchy {
            levels,
            holder: HolderTable::default(),
        }
    }

    /// A load or store by `core` of the line holding `addr`: where it was found. An L1 miss
    /// that hits L2 fills L1; a miss in both private levels looks up the LLC (filling it on a
    /// miss) and the line's last holder, whose copies move to this core.
    #[inline(always)]
    pub fn access(&mut self, core: usize, addr: u64) -> Source {
        with_levels!(&mut self.levels, l => {
            let c = l.core(core);
            l.access(&mut self.holder, c, addr >> 6)
        })
    }

    /// `access` of each of `lines` (line numbers, not addresses) in order by `core`, and
    /// after each line that came from memory the adjacent-line prefetch of the other line
    /// of its 128-byte pair when `adjacent_prefetch`: `counts[s]` grows by the lines found
    /// at `s`, and the result is the sum of `cycles[s]` over them (summed as the lines go:
    /// a per-source sum after each call cost more than the adds). The same answers as one `access` (and `prefetch_to_l2`) per line, with the
    /// levels' shape looked at once per run instead of once per line.
    pub fn access_lines(
        &mut self,
        core: usize,
        lines: &[u64],
        adjacent_prefetch: bool,
        counts: &mut [u64; Source::COUNT],
        cycles: &[u64; Source::COUNT],
    ) -> u64 {
        with_levels!(&mut self.levels, l => l.access_lines(&mut self.holder, core, lines, adjacent_prefetch, counts, cycles))
    }

    /// A hardware prefetch of the line holding `addr` into `core`'s L2 and the LLC (the
    /// adjacent-line prefetcher): read from memory unless some cache holds it already.
    /// True if fetched.
    #[inline]
    pub fn prefetch_to_l2(&mut self, core: usize, addr: u64) -> bool {
        with_levels!(&mut self.levels, l => {
            let c = l.core(core);
            l.prefetch_to_l2(&mut self.holder, c, addr >> 6)
        })
    }

    /// `lines` lines from `first_line` written by `core` that no one reads again and that
    /// were not cached (zeroing a newly allocated page, data streaming past): `core`'s L1
    /// and L2 and the LLC each count them as anonymous fills of their sets: exact for this
    /// hierarchy, where a store miss fills every level.
    pub fn pollute_lines(&mut self, core: usize, first_line: u64, lines: u64) {
        with_levels!(&mut self.levels, l => l.pollute_lines(core, first_line, lines))
    }

    /// `pollute_lines` of one line for each of `lines` (line numbers, in any order: fills
    /// only count per set, so their order does not matter), with the levels' shape looked at
    /// once: scattered lines such as an application's random accesses.
    pub fn pollute_each(&mut self, core: usize, lines: &[u64]) {
        with_levels!(&mut self.levels, l => l.pollute_each(core, lines))
    }

    /// Whether `core`'s L1 and L2, and the LLC, hold `line`.
    #[cfg(test)]
    fn holds(&self, core: usize, line: u64) -> [bool; 3] {
        with_levels!(&self.levels, l => l.holds(core, line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::hierarchy::levels;
    use crate::cache::{Replacement, SetAssocCache};

    /// The same hierarchy built from the shared set-associative cache, written for clarity:
    /// a map of holders, and anonymous fills inserted as real lines that are never used
    /// again. The fast hierarchy must answer every access as this one does.
    struct Reference {
        l1: Vec<SetAssocCache>,
        l2: Vec<SetAssocCache>,
        llc: SetAssocCache,
        holder: HashMap<u64, (usize, bool, bool)>,
        /// Fresh lines handed out so far.
        fresh: u64,
    }

    /// Lines far above every tracked line that map to the same sets in every level.
    const FRESH: u64 = 1 << 30;

    impl Reference {
        fn new(cfg: &CacheConfig, cores: usize) -> Reference {
            let (l1, l2, llc) = levels(cfg, Replacement::Lru, cores, 1);
            Reference {
                l1,
                l2,
                llc,
                holder: HashMap::new(),
                fresh: 0,
            }
        }

        fn access(&mut self, core: usize, addr: u64) -> Source {
            let line = addr >> 6;
            if self.l1[core].lookup(line, false) {
                return Source::L1;
            }
            let was = self.holder.insert(line, (core, true, true));
            if let Some((c, _, true)) = was {
                if c == core && self.l2[core].lookup(line, false) {
                    self.l1[core].insert(line, false);
                    return Source::L2;
                }
            }
            let mut remote = false;
            if let Some((o, in1, in2)) = was {
                if o != core {
                    remote |= in1 && self.l1[o].invalidate(line).is_some();
                    remote |= in2 && self.l2[o].invalidate(line).is_some();
                }
            }
            let in_llc = self.llc.lookup(line, false);
            if !in_llc {
                self.llc.insert(line, false);
            }
            self.l2[core].insert(line, false);
            self.l1[core].insert(line, false);
            match (remote, in_llc) {
                (true, _) => Source::OtherCore,
                (false, true) => Source::Llc,
                (false, false) => Source::Memory,
            }
        }

        fn prefetch_to_l2(&mut self, core: usize, addr: u64) -> bool {
            let line = addr >> 6;
            if self.llc.contains(line) {
                return false;
            }
            if let Some(&(o, in1, in2)) = self.holder.get(&line) {
                if (in1 && self.l1[o].contains(line)) || (in2 && self.l2[o].contains(line)) {
                    return false;
                }
            }
            self.holder.insert(line, (core, false, true));
            self.llc.insert(line, false);
            self.l2[core].insert(line, false);
            true
        }

        /// Anonymous fills as never-seen lines of the same sets, each a store miss filling
        /// the core's L1, its L2 and the LLC.
        fn pollute_lines(&mut self, core: usize, first_line: u64, lines: u64) {
            for k in 0..lines {
                self.fresh += 1;
                let l = FRESH * self.fresh + first_line + k;
                for c in [&mut self.l1[core], &mut self.l2[core], &mut self.llc] {
                    c.insert(l, true);
                }
            }
        }

        fn private_holders(&self, line: u64) -> usize {
            (0..self.l1.len())
                .filter(|&c| self.l1[c].contains(line) || self.l2[c].contains(line))
                .count()
        }
    }

    /// L1 2 sets × 2 ways, L2 4 × 2, LLC 8 × 2 (line l maps to set l % sets); or wider
    /// levels whose sets are padded (3-, 11- and 20-way).
    fn cfg(wide: bool) -> CacheConfig {
        let lvl = |sets: u64, ways: usize| LevelConfig {
            size_bytes: 64 * sets * ways as u64,
            ways,
        };
        if wide {
            CacheConfig {
                l1: lvl(2, 3),
                l2: lvl(4, 11),
                llc: lvl(8, 20),
                ..CacheConfig::default()
            }
        } else {
            CacheConfig {
                l1: lvl(2, 2),
                l2: lvl(4, 2),
                llc: lvl(8, 2),
                ..CacheConfig::default()
            }
        }
    }

    fn small(cores: usize) -> CoherentHierarchy {
        CoherentHierarchy::new(&cfg(false), cores)
    }

    fn at(line: u64) -> u64 {
        line * 64
    }

    #[test]
    fn the_holder_table_keeps_every_line_across_more_pages_than_its_memo() {
        // 40 pages (the memo has 16 entries), visited in an order that keeps replacing
        // memo entries and growing the page vector while earlier pages are in the memo.
        let mut t = HolderTable::default();
        let lines: Vec<u64> = (0..40u64)
            .flat_map(|pg| [pg * 7 % 40, pg])
            .map(|pg| pg * PAGE_LINES * 3 + pg % PAGE_LINES)
            .collect();
        for (k, &l) in lines.iter().enumerate() {
            *t.get(l) = Holder::took(k % 200, Holder::IN_L1);
        }
        for (k, &l) in lines.iter().enumerate() {
            // The last write to each line wins.
            let last = lines.iter().rposition(|&m| m == l).unwrap();
            assert_eq!(t.get(l).core(), last % 200, "line {l} (write {k})");
        }
        assert_eq!(t.get(5 * PAGE_LINES * 3 + 1).core(), Holder::NONE.core());
    }

    #[test]
    fn a_miss_fills_every_level_and_an_l1_victim_stays_in_l2() {
        let mut h = small(1);
        assert_eq!(h.access(0, at(0)), Source::Memory);
        assert_eq!(h.access(0, at(0)), Source::L1);
        // Lines 2 and 4 share L1 set 0 with line 0: two more push it out of L1 only
        // (L2 sets 0, 2, 0: line 0 and 4 share one, with room).
        h.access(0, at(2));
        h.access(0, at(4));
        assert_eq!(h.holds(0, 0), [false, true, true]);
        assert_eq!(h.access(0, at(0)), Source::L2);
        assert_eq!(h.access(0, at(0)), Source::L1);
    }

    #[test]
    fn a_line_another_core_holds_moves_as_a_cross_core_transfer() {
        let mut h = small(2);
        h.access(0, at(5));
        assert_eq!(h.access(1, at(5)), Source::OtherCore);
        assert!(!h.holds(0, 5)[0] && !h.holds(0, 5)[1]);
        assert_eq!(h.access(1, at(5)), Source::L1);
        // Back to core 0: another transfer.
        assert_eq!(h.access(0, at(5)), Source::OtherCore);
        // A line core 1 no longer holds privately comes from the LLC.
        h.access(1, at(7));
        for l in [9, 11, 13, 15, 17] {
            h.access(1, at(l)); // evict line 7 from core 1's L1 and L2
        }
        assert!(!h.holds(1, 7)[0] && !h.holds(1, 7)[1]);
        let got = h.access(0, at(7));
        assert_ne!(got, Source::OtherCore, "no private copy left");
    }

    #[test]
    fn the_adjacent_line_prefetch_fills_l2_and_the_llc_once() {
        let mut h = small(2);
        assert_eq!(h.access(0, at(6)), Source::Memory);
        assert!(h.prefetch_to_l2(0, at(7)));
        assert!(!h.prefetch_to_l2(1, at(7)), "cached already");
        assert_eq!(h.access(0, at(7)), Source::L2);
        assert_eq!(h.access(1, at(7)), Source::OtherCore);
    }

    proptest::proptest! {
        /// Every access, prefetch and anonymous fill (runs and scattered lines) answers as
        /// the reference hierarchy (plain LRU caches, fills inserted as fresh lines) answers,
        /// for small and padded sets; and a line is never in two cores' private caches.
        #[test]
        fn equals_the_set_associative_reference_with_fresh_lines(
            wide in proptest::bool::ANY,
            ops in proptest::collection::vec((0u8..7, 0usize..3, 0u64..80, 1u64..20), 1..300),
        ) {
            let c = cfg(wide);
            let (mut a, mut b) = (CoherentHierarchy::new(&c, 3), Reference::new(&c, 3));
            for (op, core, line, n) in ops {
                match op {
                    0 => {
                        a.pollute_lines(core, line, n);
                        b.pollute_lines(core, line, n);
                    }
                    6 => {
                        // Scattered single-line fills, against one run of one line each.
                        let lines: Vec<u64> = (0..n).map(|k| (line * 7 + k * 13) % 80).collect();
                        a.pollute_each(core, &lines);
                        for &l in &lines {
                            b.pollute_lines(core, l, 1);
                        }
                    }
                    1 => {
                        proptest::prop_assert_eq!(
                            a.prefetch_to_l2(core, at(line)),
                            b.prefetch_to_l2(core, at(line))
                        );
                    }
                    _ => {
                        proptest::prop_assert_eq!(a.access(core, at(line)), b.access(core, at(line)));
                    }
                }
                for l in 0..80 {
                    proptest::prop_assert!(b.private_holders(l) <= 1, "line {} in two cores", l);
                    for k in 0..3 {
                        let want = [b.l1[k].contains(l), b.l2[k].contains(l), b.llc.contains(l)];
                        proptest::prop_assert_eq!(a.holds(k, l), want, "core {} line {}", k, l);
                    }
                }
            }
        }
    }
}
