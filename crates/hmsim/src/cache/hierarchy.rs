//! Multi-core cache hierarchy: private L1 and L2 per core, one shared LLC. Exclusive between
//! levels (a line lives in one level; victims move down, hits move up), write-back and
//! write-allocate. Dirty LLC victims and flushed or non-temporal lines go to a [`MemorySink`].
//! Flushes look in the issuing core's private caches and the LLC: persistent code flushes
//! the lines its own thread wrote (there is no coherence between private caches). Users
//! that move lines between cores use [`super::CoherentHierarchy`].

use serde::{Deserialize, Serialize};

use super::set_assoc::{Cache, CacheStats, Replacement, Way, NARROW_LINES};
use crate::config::Validator;
use crate::rng;

/// Why a line is written to memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteCause {
    Eviction,
    Flush,
    NonTemporal,
}

/// Where memory traffic goes (the PMem or DRAM model).
pub trait MemorySink {
    fn mem_read(&mut self, line: u64, core: usize);
    fn mem_write(&mut self, line: u64, core: usize, cause: WriteCause);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlushKind {
    Clflush,
    Clflushopt,
    Clwb,
}

/// Where a load or store found its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitLevel {
    L1,
    L2,
    Llc,
    Memory,
}

crate::params! {
    #[params(required, check)]
    /// One cache level.
    #[derive(Debug, Clone, PartialEq)]
    pub struct LevelConfig {
        pub size_bytes: u64 => any, "", "Capacity; at least 64 x `ways`.";
        pub ways: usize => range(1, 64), "", "Associativity.";
    }
}

crate::params! {
    /// Sizes, associativity, replacement and the CPU-model switches. Defaults: Xeon Platinum
    /// 8260 (Cascade Lake), the FAST'20 machine: 32 KiB 8-way L1D, 1 MiB 16-way L2,
    /// 35.75 MiB 11-way shared LLC.
    #[derive(Debug, Clone, PartialEq)]
    pub struct CacheConfig {
        pub l1: LevelConfig = LevelConfig { size_bytes: 32 << 10, ways: 8 } => nested, "",
            "Private L1 data cache of each core.";
        pub l2: LevelConfig = LevelConfig { size_bytes: 1 << 20, ways: 16 } => nested, "",
            "Private L2 of each core.";
        pub llc: LevelConfig = LevelConfig { size_bytes: 37_486_592, ways: 11 } => nested, "",
            "Shared last-level cache.";
        pub replacement: Replacement = Replacement::Lru => any, "",
            "Replacement policy of every level.";
        pub clwb_invalidates: bool = true => any, "",
            "`clwb` writes back *and invalidates* (Cascade Lake behaves so); false keeps the line.";
    }
}

impl CacheConfig {
    /// One socket of a Xeon Platinum 8362 (Ice Lake-SP, 32 cores), the tiering study's
    /// machine: 48 KiB 12-way L1D and 1.25 MiB 20-way L2 per core, a 48 MiB 12-way shared
    /// LLC (1.5 MiB per core), LRU.
    pub fn ice_lake_8362() -> CacheConfig {
        CacheConfig {
            l1: LevelConfig {
                size_bytes: 48 << 10,
                ways: 12,
            },
            l2: LevelConfig {
                size_bytes: 1280 << 10,
                ways: 20,
            },
            llc: LevelConfig {
                size_bytes: 48 << 20,
                ways: 12,
            },
            replacement: Replacement::Lru,
            clwb_invalidates: true,
        }
    }
}

impl LevelConfig {
    fn check(&self, v: &mut Validator) {
        if self.size_bytes < 64 * self.ways as u64 {
            v.fail(
                "size_bytes",
                format!(
                    "{} is too small; allowed at least 64 x ways = {} bytes",
                    self.size_bytes,
                    64 * self.ways
                ),
            );
        }
    }
}

/// Hashes a line number for a map keyed by lines (a multiplicative hash: keys are line numbers,
/// not attacker-chosen, and SipHash would cost more than the lookup it guards).
#[derive(Default, Clone, Copy)]
pub(super) struct LineHasher(u64);

impl std::hash::Hasher for LineHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, x: u64) {
        let h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

/// The levels, with ways of one width (`W`).
#[derive(Clone)]
struct Levels<W: Way> {
    l1: Vec<Cache<W>>,
    l2: Vec<Cache<W>>,
    llc: Cache<W>,
}

/// The levels with 32-bit ways while every line seen is below [`NARROW_LINES`] (byte
/// addresses below 128 GiB: an index's region, a DIMM's range), 64-bit ones after: the
/// same caches in half the host bytes, whose sets then miss the host's own caches less
/// (the PMem path's model runs at host-memory speed). A line at or above the limit
/// widens them once, keeping every line, order and count.
#[derive(Clone)]
enum Width {
    Narrow(Levels<u32>),
    Wide(Levels<u64>),
}

/// `$body` with `$l` bound to the levels, whatever their width.
macro_rules! with_levels {
    ($width:expr, $l:ident => $body:expr) => {
        match $width {
            Width::Narrow($l) => $body,
            Width::Wide($l) => $body,
        }
    };
}

#[derive(Clone)]
pub struct Hierarchy {
    levels: Width,
    clwb_invalidates: bool,
    /// Lines written back by flush instructions (dirty at the flush).
    pub flushed_lines: u64,
    /// Flushes of lines that were clean or absent (no memory write).
    pub clean_flushes: u64,
}

/// Each core's L1 and L2 and the shared LLC of `cfg`'s sizes under `replacement`, each with
/// its own random stream (`cache.l1.<core>`, `cache.l2.<core>`, `cache.llc`).
#[allow(clippy::type_complexity)]
pub(super) fn levels<W: Way>(
    cfg: &CacheConfig,
    replacement: Replacement,
    cores: usize,
    seed: u64,
) -> (Vec<Cache<W>>, Vec<Cache<W>>, Cache<W>) {
    let mk = |lc: &LevelConfig, name: String| {
        Cache::new(
            lc.size_bytes,
            lc.ways,
            replacement,
            rng::stream(seed, &name),
        )
    };
    (
        (0..cores)
            .map(|c| mk(&cfg.l1, format!("cache.l1.{c}")))
            .collect(),
        (0..cores)
            .map(|c| mk(&cfg.l2, format!("cache.l2.{c}")))
            .collect(),
        mk(&cfg.llc, "cache.llc".into()),
    )
}

impl<W: Way> Levels<W> {
    fn new(cfg: &CacheConfig, cores: usize, seed: u64) -> Levels<W> {
        let (l1, l2, llc) = levels(cfg, cfg.replacement, cores, seed);
        Levels { l1, l2, llc }
    }

    fn writeback_all(&mut self, sink: &mut impl MemorySink) {
        for core in 0..self.l1.len() {
            for c in [&mut self.l1[core], &mut self.l2[core]] {
                c.drain_dirty(|line| sink.mem_write(line, core, WriteCause::Eviction));
            }
        }
        self.llc
            .drain_dirty(|line| sink.mem_write(line, 0, WriteCause::Eviction));
    }

    fn level_stats(&self) -> [CacheStats; 3] {
        let sum = |caches: &[Cache<W>]| {
            caches
                .iter()
                .fold(CacheStats::default(), |a, c| CacheStats {
                    hits: a.hits + c.stats.hits,
                    misses: a.misses + c.stats.misses,
                    writebacks: a.writebacks + c.stats.writebacks,
                    evictions: a.evictions + c.stats.evictions,
                })
        };
        [sum(&self.l1), sum(&self.l2), self.llc.stats]
    }

    /// Put `line` into L1 of `core`, cascading victims down and dirty LLC victims to memory.
    #[inline]
    fn fill_l1(&mut self, core: usize, line: u64, dirty: bool, sink: &mut impl MemorySink) {
        if let Some((v1, d1)) = self.l1[core].insert(line, dirty) {
            if let Some((v2, d2)) = self.l2[core].insert(v1, d1) {
                Self::to_memory(core, self.llc.insert(v2, d2), sink);
            }
        }
    }

    #[inline]
    fn to_memory(core: usize, victim: Option<(u64, bool)>, sink: &mut impl MemorySink) {
        if let Some((v, true)) = victim {
            sink.mem_write(v, core, WriteCause::Eviction);
        }
    }

    #[inline]
    fn access(
        &mut self,
        core: usize,
        line: u64,
        write: bool,
        sink: &mut impl MemorySink,
    ) -> HitLevel {
        if self.l1[core].lookup(line, write) {
            return HitLevel::L1;
        }
        // An L1 miss looks in L2 and then the LLC: fetch both sets from host memory at once.
        self.l2[core].prefetch(line);
        self.llc.prefetch(line);
        self.prefetch_victim_sets(core, line);
        // A line found below L1 moves up (exclusive levels): `take` finds and removes it in
        // one search, counting the hit or miss as `lookup` does, and leaves its set as a move
        // to the front followed by a removal would.
        if let Some(d) = self.l2[core].take(line) {
            self.fill_l1(core, line, d || write, sink);
            return HitLevel::L2;
        }
        if let Some(d) = self.llc.take(line) {
            self.fill_l1(core, line, d || write, sink);
            return HitLevel::Llc;
        }
        sink.mem_read(line, core);
        self.fill_l1(core, line, write, sink);
        HitLevel::Memory
    }

    fn prefetch_sets(&self, core: usize, line: u64) {
        if let Some(l2) = self.l2.get(core) {
            l2.prefetch(line);
        }
        self.llc.prefetch(line);
    }

    /// Fetch into the host's caches the sets the fill of `line` into `core`'s L1 will
    /// insert into below L1: L1's victim goes to its L2 set, and that set's victim to its LLC
    /// set, a set at random in the LLC's megabytes of tags. Fetched with the sets of the
    /// line's own lookups, their host-memory latencies overlap instead of following one
    /// another (P-ART's scans at 1 M keys spent a third of their time in those inserts).
    /// A hint: the lookups before the fill may change which lines these are.
    #[inline]
    fn prefetch_victim_sets(&self, core: usize, line: u64) {
        if let Some(v1) = self.l1[core].victim(line) {
            self.l2[core].prefetch(v1);
            if let Some(v2) = self.l2[core].victim(v1) {
                self.llc.prefetch(v2);
            }
        }
    }

    /// The flush of `line` by `core` (`keep`: a `clwb` that keeps the line): whether its
    /// data was dirty somewhere it looked.
    #[inline]
    fn flush(&mut self, core: usize, line: u64, keep: bool) -> bool {
        // With one core the levels are strictly exclusive (a line is in one place at most),
        // so the search stops where the line is found. Private caches of several cores are
        // not coherent: a line may then sit in another core's L1 and in the LLC at once.
        let single = self.l1.len() == 1;
        self.l2[core].prefetch(line);
        self.llc.prefetch(line);
        let mut dirty = false;
        for c in [&mut self.l1[core], &mut self.l2[core], &mut self.llc] {
            let was = if keep {
                c.clean(line)
            } else {
                c.invalidate(line)
            };
            dirty |= was.unwrap_or(false);
            if single && was.is_some() {
                break;
            }
        }
        dirty
    }

    fn ntstore(&mut self, core: usize, line: u64) {
        self.l1[core].invalidate(line);
        self.l2[core].invalidate(line);
        self.llc.invalidate(line);
    }

    fn is_dirty(&self, core: usize, line: u64) -> bool {
        self.l1[core].is_dirty(line) || self.l2[core].is_dirty(line) || self.llc.is_dirty(line)
    }
}

impl Levels<u32> {
    fn widen(self) -> Levels<u64> {
        Levels {
            l1: self.l1.into_iter().map(Cache::widen).collect(),
            l2: self.l2.into_iter().map(Cache::widen).collect(),
            llc: self.llc.widen(),
        }
    }
}

impl Hierarchy {
    pub fn new(cfg: &CacheConfig, cores: usize, seed: u64) -> Hierarchy {
        Hierarchy {
            levels: Width::Narrow(Levels::new(cfg, cores, seed)),
            clwb_invalidates: cfg.clwb_invalidates,
            flushed_lines: 0,
            clean_flushes: 0,
        }
    }

    /// The levels, for an operation on `line`: widened first if their ways cannot hold it.
    #[inline(always)]
    fn levels_for(&mut self, line: u64) -> &mut Width {
        if line >= NARROW_LINES {
            self.widen();
        }
        &mut self.levels
    }

    /// The levels with 64-bit ways from now on (nothing else changes).
    #[cold]
    #[inline(never)]
    fn widen(&mut self) {
        if let Width::Narrow(_) = self.levels {
            let Width::Narrow(l) = std::mem::replace(
                &mut self.levels,
                Width::Wide(Levels {
                    l1: Vec::new(),
                    l2: Vec::new(),
                    llc: Cache::new(64, 1, Replacement::Lru, rng::stream(0, "")),
                }),
            ) else {
                unreachable!("narrow, checked above")
            };
            self.levels = Width::Wide(l.widen());
        }
    }

    /// Whether the ways are 64-bit (a line at or above [`NARROW_LINES`] was seen).
    pub fn is_wide(&self) -> bool {
        matches!(self.levels, Width::Wide(_))
    }

    /// Write every dirty line back to memory, as evictions would eventually (end of a trace).
    pub fn writeback_all(&mut self, sink: &mut impl MemorySink) {
        with_levels!(&mut self.levels, l => l.writeback_all(sink))
    }

    /// Hit/miss/write-back counters per level, summed over cores: (L1, L2, LLC).
    pub fn level_stats(&self) -> [CacheStats; 3] {
        with_levels!(&self.levels, l => l.level_stats())
    }

    /// A load (or store) of the line holding `addr` that hits `core`'s L1: the hit
    /// `load`/`store` would count, with nothing else to do. False (nothing counted) on a
    /// miss; the caller then does the full access.
    #[inline(always)]
    pub fn hit_l1(&mut self, core: usize, addr: u64, write: bool) -> bool {
        let line = addr >> 6;
        with_levels!(self.levels_for(line), l => l.l1[core].probe_hit(line, write))
    }

    /// `n` loads or stores (`write`: at least one store) of the line holding `addr` by `core`
    /// that hit L1 in the slot of its last hit or fill there: the hits `hit_l1` would count
    /// one by one. False (nothing counted) when that slot holds another line.
    #[inline]
    pub fn repeat_l1_hits(&mut self, core: usize, addr: u64, n: u64, write: bool) -> bool {
        let line = addr >> 6;
        with_levels!(self.levels_for(line), l => l.l1[core].hits_last(line, n, write))
    }

    /// Fetch into the host's caches the sets of `core`'s L2 and of the LLC where the line
    /// holding `addr` would be (a host hint ahead of its load: nothing changes).
    #[inline]
    pub fn prefetch_sets(&self, core: usize, addr: u64) {
        with_levels!(&self.levels, l => l.prefetch_sets(core, addr >> 6))
    }

    /// A load of the 64 B line holding byte address `addr`.
    #[inline]
    pub fn load(&mut self, core: usize, addr: u64, sink: &mut impl MemorySink) -> HitLevel {
        let line = addr >> 6;
        with_levels!(self.levels_for(line), l => l.access(core, line, false, sink))
    }

    /// A store to the line holding `addr` (write-allocate: a miss reads the line first).
    #[inline]
    pub fn store(&mut self, core: usize, addr: u64, sink: &mut impl MemorySink) -> HitLevel {
        let line = addr >> 6;
        with_levels!(self.levels_for(line), l => l.access(core, line, true, sink))
    }

    /// `clflush`, `clflushopt` or `clwb` of the line holding `addr`.
    #[inline]
    pub fn flush(&mut self, core: usize, addr: u64, kind: FlushKind, sink: &mut impl MemorySink) {
        let line = addr >> 6;
        let keep = kind == FlushKind::Clwb && !self.clwb_invalidates;
        let dirty = with_levels!(self.levels_for(line), l => l.flush(core, line, keep));
        self.flushed(core, line, dirty, sink);
    }

    /// Count a flush of `line` that found it `dirty` (written to memory) or not.
    #[inline]
    fn flushed(&mut self, core: usize, line: u64, dirty: bool, sink: &mut impl MemorySink) {
        if dirty {
            self.flushed_lines += 1;
            sink.mem_write(line, core, WriteCause::Flush);
        } else {
            self.clean_flushes += 1;
        }
    }

    /// A store to the line holding `addr` followed at once by a flush of it (persistent
    /// code's store + `clwb`): exactly `store` then `flush`. When the store read the line
    /// from memory, it missed `core`'s L2 and the LLC, and the fill left the line in L1
    /// alone (the victims it pushed down are other lines), so the flush has only L1 to
    /// search. (A store served by the LLC is not enough: without coherence two cores'
    /// victims can leave two copies of a line there, and the flush drops the second.)
    #[inline]
    pub fn store_flush(
        &mut self,
        core: usize,
        addr: u64,
        kind: FlushKind,
        sink: &mut impl MemorySink,
    ) -> HitLevel {
        let lvl = self.store(core, addr, sink);
        if lvl != HitLevel::Memory {
            self.flush(core, addr, kind, sink);
            return lvl;
        }
        let line = addr >> 6;
        let keep = kind == FlushKind::Clwb && !self.clwb_invalidates;
        // The store above widened the levels if `line` needs it.
        let was = with_levels!(&mut self.levels, l => if keep {
            l.l1[core].clean(line)
        } else {
            l.l1[core].invalidate(line)
        });
        self.flushed(core, line, was.unwrap_or(false), sink);
        lvl
    }

    /// A full-line non-temporal store: bypasses the caches (dropping any cached copy).
    #[inline]
    pub fn ntstore(&mut self, core: usize, addr: u64, sink: &mut impl MemorySink) {
        let line = addr >> 6;
        with_levels!(self.levels_for(line), l => l.ntstore(core, line));
        sink.mem_write(line, core, WriteCause::NonTemporal);
    }

    /// Whether the line's latest data is in the persistence domain: with eADR the caches are
    /// in it; with ADR only memory (and the WPQ) is, so a dirty cached copy is not durable.
    pub fn durable(&self, core: usize, addr: u64, eadr: bool) -> bool {
        let line = addr >> 6;
        // Narrow ways hold no line at or above the limit (and could mistake it for a free way).
        let cached_dirty = match &self.levels {
            Width::Narrow(_) if line >= NARROW_LINES => false,
            w => with_levels!(w, l => l.is_dirty(core, line)),
        };
        eadr || !cached_dirty
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Count {
        reads: u64,
        writes: Vec<(u64, WriteCause)>,
    }
    impl MemorySink for Count {
        fn mem_read(&mut self, _line: u64, _core: usize) {
            self.reads += 1;
        }
        fn mem_write(&mut self, line: u64, _core: usize, cause: WriteCause) {
            self.writes.push((line, cause));
        }
    }

    fn small(clwb_invalidates: bool) -> Hierarchy {
        let cfg = CacheConfig {
            l1: LevelConfig {
                size_bytes: 512,
                ways: 2,
            },
            l2: LevelConfig {
                size_bytes: 1024,
                ways: 2,
            },
            llc: LevelConfig {
                size_bytes: 2048,
                ways: 2,
            },
            replacement: Replacement::Lru,
            clwb_invalidates,
        };
        Hierarchy::new(&cfg, 2, 1)
    }

    #[test]
    fn store_then_flush_writes_once_and_a_clean_flush_writes_nothing() {
        let mut h = small(true);
        let mut m = Count::default();
        assert_eq!(h.store(0, 0x1000, &mut m), HitLevel::Memory);
        assert!(!h.durable(0, 0x1000, false));
        assert!(
            h.durable(0, 0x1000, true),
            "eADR: stored data is durable without a flush"
        );
        h.flush(0, 0x1000, FlushKind::Clflush, &mut m);
        assert!(h.durable(0, 0x1000, false));
        h.flush(0, 0x1000, FlushKind::Clflush, &mut m);
        assert_eq!(m.writes, vec![(0x40, WriteCause::Flush)]);
        assert_eq!((h.flushed_lines, h.clean_flushes), (1, 1));
    }

    #[test]
    fn clwb_that_keeps_the_line_avoids_the_reread() {
        for (invalidates, rereads) in [(true, 2), (false, 1)] {
            let mut h = small(invalidates);
            let mut m = Count::default();
            for _ in 0..2 {
                h.store(0, 0x2000, &mut m);
                h.flush(0, 0x2000, FlushKind::Clwb, &mut m);
            }
            assert_eq!(m.reads, rereads, "clwb_invalidates = {invalidates}");
            assert_eq!(m.writes.len(), 2);
        }
    }

    #[test]
    fn capacity_evictions_write_dirty_lines_back_exactly_once() {
        let mut h = small(true);
        let mut m = Count::default();
        // 64 distinct lines through 56 lines of total capacity (8 + 16 + 32).
        for i in 0..64u64 {
            h.store(0, i * 64, &mut m);
        }
        assert_eq!(m.reads, 64);
        let evicted: Vec<u64> = m.writes.iter().map(|w| w.0).collect();
        let mut uniq = evicted.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), evicted.len(), "a line written back twice");
        assert!(evicted.len() >= 64 - 56);
    }

    #[test]
    fn writeback_all_writes_each_dirty_line_once() {
        let mut h = small(true);
        let mut m = Count::default();
        for i in 0..20u64 {
            h.store(i as usize % 2, i * 64, &mut m);
        }
        let before = m.writes.len();
        h.writeback_all(&mut m);
        assert_eq!(m.writes.len(), 20, "{before} by eviction, the rest drained");
        h.writeback_all(&mut m);
        assert_eq!(m.writes.len(), 20);
    }

    #[test]
    fn ntstore_bypasses_the_caches() {
        let mut h = small(true);
        let mut m = Count::default();
        h.ntstore(1, 0x3000, &mut m);
        assert_eq!(m.reads, 0);
        assert_eq!(m.writes, vec![(0x3000 >> 6, WriteCause::NonTemporal)]);
        assert!(!with_levels!(&h.levels, l => l.l1[1].contains(0x3000 >> 6)));
    }

    /// Every memory request in order: (read?, line, core, cause).
    #[derive(Default, PartialEq, Debug)]
    struct Log(Vec<(bool, u64, usize, Option<WriteCause>)>);
    impl MemorySink for Log {
        fn mem_read(&mut self, line: u64, core: usize) {
            self.0.push((true, line, core, None));
        }
        fn mem_write(&mut self, line: u64, core: usize, cause: WriteCause) {
            self.0.push((false, line, core, Some(cause)));
        }
    }

    /// Two hierarchies that took the same operations agree on the memory requests so
    /// far, the flush counts and every level's counts.
    fn same_state(
        a: &Hierarchy,
        b: &Hierarchy,
        la: &Log,
        lb: &Log,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        proptest::prop_assert_eq!(la, lb);
        proptest::prop_assert_eq!(
            (a.flushed_lines, a.clean_flushes),
            (b.flushed_lines, b.clean_flushes)
        );
        for (x, y) in a.level_stats().iter().zip(&b.level_stats()) {
            proptest::prop_assert_eq!(
                (x.hits, x.misses, x.writebacks, x.evictions),
                (y.hits, y.misses, y.writebacks, y.evictions)
            );
        }
        Ok(())
    }

    proptest::proptest! {
        /// `store_flush` is `store` then `flush`: the same level, the same memory requests in
        /// the same order, the same counts, whatever the caches held (other cores' copies,
        /// lines in L2 or the LLC) and whichever flush kind.
        #[test]
        fn store_flush_is_a_store_then_a_flush(
            keep in proptest::bool::ANY,
            ops in proptest::collection::vec((0u8..11, 0usize..2, 0u64..32), 1..400),
        ) {
            let mut a = small(!keep);
            let mut b = small(!keep);
            let (mut la, mut lb) = (Log::default(), Log::default());
            for (op, core, line) in ops {
                let addr = line * 64;
                match op {
                    0..=3 | 10 => {
                        let kind = [FlushKind::Clflush, FlushKind::Clflushopt, FlushKind::Clwb]
                            [op as usize % 3];
                        let got = a.store_flush(core, addr, kind, &mut la);
                        let want = b.store(core, addr, &mut lb);
                        b.flush(core, addr, kind, &mut lb);
                        proptest::prop_assert_eq!(got, want);
                    }
                    4..=6 => {
                        a.store(core, addr, &mut la);
                        b.store(core, addr, &mut lb);
                    }
                    _ => {
                        a.load(core, addr, &mut la);
                        b.load(core, addr, &mut lb);
                    }
                }
                same_state(&a, &b, &la, &lb)?;
            }
            a.writeback_all(&mut la);
            b.writeback_all(&mut lb);
            proptest::prop_assert_eq!(la, lb);
        }
    }

    proptest::proptest! {
        /// The levels start with 32-bit ways and widen at the first line at or above
        /// `NARROW_LINES` (here, lines on both sides of it, the limit itself among them):
        /// every answer, memory request, count and durability check is the one a hierarchy
        /// with 64-bit ways from the start gives.
        #[test]
        fn narrow_ways_widen_without_changing_an_answer(
            keep in proptest::bool::ANY,
            ops in proptest::collection::vec((0u8..12, 0usize..2, 0u64..32, 0u8..8), 1..400),
        ) {
            let mut a = small(!keep);
            let mut b = small(!keep);
            if let Width::Narrow(l) = b.levels.clone() {
                b.levels = Width::Wide(l.widen());
            }
            let (mut la, mut lb) = (Log::default(), Log::default());
            for (op, core, x, high) in ops {
                // One op in eight on a line past the limit (the first of them widens `a`).
                let line = if high == 0 { NARROW_LINES + x } else { x };
                let addr = line * 64;
                match op {
                    0..=2 => {
                        let kind = [FlushKind::Clflush, FlushKind::Clflushopt, FlushKind::Clwb]
                            [op as usize];
                        proptest::prop_assert_eq!(
                            a.store_flush(core, addr, kind, &mut la),
                            b.store_flush(core, addr, kind, &mut lb)
                        );
                    }
                    3 => {
                        a.flush(core, addr, FlushKind::Clwb, &mut la);
                        b.flush(core, addr, FlushKind::Clwb, &mut lb);
                    }
                    4 => {
                        a.ntstore(core, addr, &mut la);
                        b.ntstore(core, addr, &mut lb);
                    }
                    5 => proptest::prop_assert_eq!(
                        a.hit_l1(core, addr, keep),
                        b.hit_l1(core, addr, keep)
                    ),
                    6 => proptest::prop_assert_eq!(
                        a.repeat_l1_hits(core, addr, 3, keep),
                        b.repeat_l1_hits(core, addr, 3, keep)
                    ),
                    7..=8 => proptest::prop_assert_eq!(
                        a.store(core, addr, &mut la),
                        b.store(core, addr, &mut lb)
                    ),
                    _ => proptest::prop_assert_eq!(
                        a.load(core, addr, &mut la),
                        b.load(core, addr, &mut lb)
                    ),
                }
                proptest::prop_assert_eq!(a.durable(core, addr, false), b.durable(core, addr, false));
                same_state(&a, &b, &la, &lb)?;
            }
            a.writeback_all(&mut la);
            b.writeback_all(&mut lb);
            proptest::prop_assert_eq!(la, lb);
        }
    }

    /// The limit line itself reads as absent while the ways are narrow, though a free
    /// narrow way's tag bits equal it: a fresh L1's slot of the last hit is a free way, and
    /// random replacement searches free ways too.
    #[test]
    fn the_limit_line_is_never_mistaken_for_a_free_way() {
        let at = NARROW_LINES * 64;
        let mut h = small(true);
        assert!(!h.repeat_l1_hits(0, at, 2, true));
        assert!(!small(true).hit_l1(0, at, false));
        assert_eq!(h.level_stats()[0].hits, 0);
        let mut r = small(true);
        if let Width::Narrow(l) = &mut r.levels {
            let cfg = CacheConfig {
                replacement: Replacement::Random,
                ..CacheConfig::default()
            };
            *l = Levels::new(&cfg, 1, 1);
        }
        assert!(r.durable(0, at, false), "nothing cached, so nothing dirty");
    }

    /// A line below the limit keeps the ways narrow; the first at it widens them for good.
    #[test]
    fn the_first_line_past_the_limit_widens_the_ways() {
        let mut h = small(true);
        let mut m = Count::default();
        h.store(0, (NARROW_LINES - 1) * 64, &mut m);
        assert!(!h.is_wide());
        assert!(
            h.durable(0, NARROW_LINES * 64, false),
            "absent: nothing dirty"
        );
        assert!(!h.is_wide(), "a durability check looks, it does not widen");
        h.load(0, NARROW_LINES * 64, &mut m);
        assert!(h.is_wide());
        assert!(
            !h.durable(0, (NARROW_LINES - 1) * 64, false),
            "still dirty after widening"
        );
    }
}
