//! Trace-driven tiering behind CPU caches: a trace's loads and stores go through the one
//! cache model ([`crate::cache::Hierarchy`]) first, and only its misses (memory reads) and
//! dirty write-backs reach the tiers. The cache hits cost their level's latency, the misses
//! the loaded memory latency of the tier engine (docs/tiering.md, *Traces behind caches*).

use crate::cache::{
    CacheConfig, CacheStats, Hierarchy, HitLevel, LevelConfig, MemorySink, Replacement, WriteCause,
};
use crate::config::Validator;

/// The study machine's caches, level by level (the defaults below).
fn ice_lake() -> CacheConfig {
    CacheConfig::ice_lake_8362()
}

crate::params! {
    #[params(check)]
    /// The caches a trace goes through before memory (the one cache model's levels, LRU),
    /// and their hit latencies. Defaults: one socket of the tiering study's Xeon Platinum
    /// 8362 (Ice Lake-SP, 32 cores); the trace runs on one core's L1 and L2 and the whole
    /// shared LLC.
    #[derive(Debug, Clone, PartialEq)]
    pub struct TraceCacheModel {
        pub l1: LevelConfig = ice_lake().l1 => nested, "",
            "Private L1 data cache (Ice Lake-SP: 48 KiB, 12-way).";
        pub l2: LevelConfig = ice_lake().l2 => nested, "",
            "Private L2 (Ice Lake-SP: 1.25 MiB, 20-way).";
        pub llc: LevelConfig = ice_lake().llc => nested, "",
            "Shared last-level cache (Xeon Platinum 8362: 1.5 MiB per core, 48 MiB, 12-way).";
        pub replacement: Replacement = Replacement::Lru => any, "",
            "Replacement policy of every level.";
        pub l1_hit_ns: f64 = 1.7 => range(0.01, 1000.0), "",
            "Load-to-use latency of an L1 hit (Sunny Cove: 5 cycles at about 3 GHz).";
        pub l2_hit_ns: f64 = 4.7 => range(0.01, 1000.0), "",
            "Latency of an L2 hit (Sunny Cove: 14 cycles at about 3 GHz).";
        pub llc_hit_ns: f64 = 22.0 => range(0.01, 1000.0), "",
            "Latency of an LLC hit over the mesh (an approximation: about 20-25 ns on Ice Lake-SP).";
    }
}

impl TraceCacheModel {
    fn check(&self, v: &mut Validator) {
        if !(self.l1_hit_ns <= self.l2_hit_ns && self.l2_hit_ns <= self.llc_hit_ns) {
            v.fail(
                "l2_hit_ns",
                format!(
                    "hit latencies must not fall with the level: l1_hit_ns {} <= l2_hit_ns {} <= llc_hit_ns {}",
                    self.l1_hit_ns, self.l2_hit_ns, self.llc_hit_ns
                ),
            );
        }
    }
}

/// Memory traffic the caches let through, counted (pages are resolved from the line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryTraffic {
    pub reads: u64,
    pub writebacks: u64,
}

impl MemorySink for MemoryTraffic {
    fn mem_read(&mut self, _line: u64, _core: usize) {
        self.reads += 1;
    }
    fn mem_write(&mut self, _line: u64, _core: usize, _cause: WriteCause) {
        self.writebacks += 1;
    }
}

/// A trace's accesses through one core's L1 and L2 and the shared LLC.
pub struct CacheFilter {
    h: Hierarchy,
    level_ns: [f64; 3],
    llc_bytes: u64,
    /// Memory reads and write-backs so far.
    pub traffic: MemoryTraffic,
}

/// Hit rates of a run: each level's hits over the lookups that reached it, and the memory
/// lines (reads + write-backs) per trace access.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HitRates {
    pub l1: f64,
    pub l2: f64,
    pub llc: f64,
    pub memory_lines_per_access: f64,
}

impl CacheFilter {
    pub fn new(m: &TraceCacheModel, seed: u64) -> CacheFilter {
        let cfg = CacheConfig {
            l1: m.l1.clone(),
            l2: m.l2.clone(),
            llc: m.llc.clone(),
            replacement: m.replacement,
            // No flushes in a replayed trace: the switch is never read.
            ..ice_lake()
        };
        CacheFilter {
            h: Hierarchy::new(&cfg, 1, seed),
            level_ns: [m.l1_hit_ns, m.l2_hit_ns, m.llc_hit_ns],
            llc_bytes: m.llc.size_bytes,
            traffic: MemoryTraffic::default(),
        }
    }

    pub fn llc_bytes(&self) -> u64 {
        self.llc_bytes
    }

    /// One load or store of dense line `line`: `Some(hit latency ns)` on a cache hit, `None`
    /// when it went to memory (a read, counted in `traffic`, as are the dirty victims).
    #[inline]
    pub fn access(&mut self, line: u64, store: bool) -> Option<f64> {
        let addr = line << 6;
        let lvl = if store {
            self.h.store(0, addr, &mut self.traffic)
        } else {
            self.h.load(0, addr, &mut self.traffic)
        };
        match lvl {
            HitLevel::L1 => Some(self.level_ns[0]),
            HitLevel::L2 => Some(self.level_ns[1]),
            HitLevel::Llc => Some(self.level_ns[2]),
            HitLevel::Memory => None,
        }
    }

    /// Hit/miss counters per level (L1, L2, LLC).
    pub fn level_stats(&self) -> [CacheStats; 3] {
        self.h.level_stats()
    }

    /// Hit rates over everything replayed so far (`accesses` trace accesses).
    pub fn hit_rates(&self, accesses: u64) -> HitRates {
        let rate = |s: &CacheStats| {
            let n = s.hits + s.misses;
            if n > 0 {
                s.hits as f64 / n as f64
            } else {
                0.0
            }
        };
        let [l1, l2, llc] = self.level_stats();
        HitRates {
            l1: rate(&l1),
            l2: rate(&l2),
            llc: rate(&llc),
            memory_lines_per_access: if accesses > 0 {
                (self.traffic.reads + self.traffic.writebacks) as f64 / accesses as f64
            } else {
                0.0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_inside_l1_reaches_memory_only_on_its_first_pass() {
        let mut f = CacheFilter::new(&TraceCacheModel::default(), 1);
        // 256 lines (16 KiB) read and written 10 times: the first pass misses.
        let mut hit_ns = 0.0;
        for pass in 0..10 {
            for line in 0..256u64 {
                let r = f.access(line, line % 2 == 0);
                if pass > 0 {
                    hit_ns += r.expect("a second pass hits L1");
                }
            }
        }
        assert_eq!(
            f.traffic,
            MemoryTraffic {
                reads: 256,
                writebacks: 0
            }
        );
        assert!((hit_ns - 9.0 * 256.0 * 1.7).abs() < 1e-6);
        let r = f.hit_rates(2560);
        assert!((r.l1 - 0.9).abs() < 1e-12, "{r:?}");
        assert!((r.memory_lines_per_access - 0.1).abs() < 1e-12);
    }

    #[test]
    fn a_stream_larger_than_every_level_misses_and_writes_back() {
        let lvl = |size_bytes, ways| LevelConfig { size_bytes, ways };
        let m = TraceCacheModel {
            l1: lvl(4096, 4),
            l2: lvl(8192, 4),
            llc: lvl(16384, 4),
            ..Default::default()
        };
        let mut f = CacheFilter::new(&m, 1);
        // 1024 lines stored twice in order: 64 KiB through 28 KiB of caches, all misses.
        for _ in 0..2 {
            for line in 0..1024u64 {
                assert_eq!(f.access(line, true), None);
            }
        }
        assert_eq!(f.traffic.reads, 2048);
        // Every line but those still cached was written back.
        assert_eq!(f.traffic.writebacks, 2048 - (4096 + 8192 + 16384) / 64);
    }
}
