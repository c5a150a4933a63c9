//! The machine the cost model runs on: cores with private L1 and L2 caches, one shared
//! LLC and DRAM, through the project's one cache model ([`crate::cache`]). Every distinct
//! cache line an allocator path touches is one access on the requesting core; its cycles
//! depend on where the line is: the core's own L1 or L2, the LLC, another core's private
//! cache (a cross-core transfer: that core wrote it last), or DRAM (with the adjacent-line
//! prefetcher bringing the other line of the 128-byte pair into L2).
//!
//! Defaults describe an 8-core Nehalem/Westmere-class Xeon, the study's machine generation
//! (see `docs/allocators.md` for each figure's source).

use rand::Rng;
use serde::Serialize;

use crate::cache::{CacheConfig, CoherentHierarchy, LevelConfig, Replacement, Source, LINE_BYTES};
use crate::config::Validator;
use crate::rng::SimRng;

crate::params! {
    #[params(check)]
    /// Cores, cache sizes, latencies and what the application does between requests.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct AllocMachine {
        pub cores: u32 = 8 => range(1, super::MAX_CPUS as u32), "cores",
            "Cores; threads beyond this share cores (time-sliced), per-CPU lists belong to cores.";
        pub l1_bytes: u64 = 32 << 10 => any, "",
            "Per-core L1 data cache: 64 × ways × a power of two sets.";
        pub l1_ways: usize = 8 => range(1, 64), "", "L1 associativity.";
        pub l2_bytes: u64 = 256 << 10 => any, "",
            "Per-core L2: 64 × ways × a power of two sets.";
        pub l2_ways: usize = 8 => range(1, 64), "", "L2 associativity.";
        pub llc_bytes: u64 = 8 << 20 => any, "",
            "One LLC shared by every core: 64 × ways × a power of two sets.";
        pub llc_ways: usize = 16 => range(1, 64), "", "LLC associativity.";
        pub l1_cycles: u64 = 4 => range(0, 100_000), "",
            "Load-to-use latency of a line found in the core's L1.";
        pub l2_cycles: u64 = 10 => range(0, 100_000), "",
            "Load-to-use latency of a line found in the core's L2.";
        pub llc_cycles: u64 = 40 => range(0, 100_000), "",
            "Load-to-use latency of a line found in the shared LLC.";
        pub cross_core_cycles: u64 = 75 => range(0, 100_000), "",
            "A line held (last written) in another core's private cache.";
        pub dram_cycles: u64 = 144 => range(0, 100_000), "", "A line from DRAM.";
        pub adjacent_line_prefetch: bool = true => any, "",
            "A DRAM miss also brings the other line of its 128-byte pair into the core's L2.";
        pub zero_pages: bool = true => any, "",
            "The application zeroes every page it is handed (64 stores per 4 KiB page, through the caches) before its next request.";
        pub app_lines_per_request: u32 = 0 => range(0, 1 << 20), "lines",
            "Further application lines touched between two requests of a core (random lines of `app_footprint_bytes`): cache pollution by the application's own work.";
        pub app_footprint_bytes: u64 = 64 << 20 => range(4096, 1 << 40), "",
            "The application's memory the lines of `app_lines_per_request` are drawn from.";
    }
}

impl AllocMachine {
    fn check(&self, v: &mut Validator) {
        for (k, b, w) in [
            ("l1", self.l1_bytes, self.l1_ways),
            ("l2", self.l2_bytes, self.l2_ways),
            ("llc", self.llc_bytes, self.llc_ways),
        ] {
            if b < 64 * w as u64 || !(b / 64 / w as u64).is_power_of_two() {
                v.fail(
                    &format!("{k}_bytes"),
                    format!("{b}: allowed 64 × ways × a power of two sets"),
                );
            }
        }
    }
}

/// Where the allocator's accesses went, per level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LineSources {
    pub l1: u64,
    pub l2: u64,
    pub llc: u64,
    pub cross_core: u64,
    pub dram: u64,
}

/// A machine in use: its caches and the application's pollution stream.
pub(crate) struct MachineState {
    pub m: AllocMachine,
    hier: CoherentHierarchy,
    rng: SimRng,
    /// Cycles and accesses by [`Source`].
    cycles: [u64; Source::COUNT],
    counts: [u64; Source::COUNT],
    /// The application's lines of one request (a buffer kept between requests).
    app_lines: Vec<u64>,
}

/// Base address of page contents (4 KiB per frame) in the modelled physical space.
pub(crate) const PAGE_DATA_BASE: u64 = 1 << 44;
/// Base address of the application's own data.
pub(crate) const APP_BASE: u64 = 1 << 45;

impl MachineState {
    pub(crate) fn new(m: AllocMachine, seed: u64) -> MachineState {
        let lvl = |size_bytes, ways| LevelConfig { size_bytes, ways };
        let cfg = CacheConfig {
            l1: lvl(m.l1_bytes, m.l1_ways),
            l2: lvl(m.l2_bytes, m.l2_ways),
            llc: lvl(m.llc_bytes, m.llc_ways),
            replacement: Replacement::Lru,
            clwb_invalidates: true,
        };
        MachineState {
            m,
            hier: CoherentHierarchy::new(&cfg, m.cores as usize),
            rng: crate::rng::stream(seed, "alloc.machine.app"),
            cycles: [
                m.l1_cycles,
                m.l2_cycles,
                m.llc_cycles,
                m.cross_core_cycles,
                m.dram_cycles,
            ],
            counts: [0; Source::COUNT],
            app_lines: Vec::new(),
        }
    }

    /// Where the accesses so far found their lines.
    pub(crate) fn sources(&self) -> LineSources {
        let c = |s: Source| self.counts[s as usize];
        LineSources {
            l1: c(Source::L1),
            l2: c(Source::L2),
            llc: c(Source::Llc),
            cross_core: c(Source::OtherCore),
            dram: c(Source::Memory),
        }
    }

    /// Cycles of the accesses by `core` to `lines` (line numbers) in order, in one pass
    /// through the caches (a load or a store: a store that misses reads its line for
    /// ownership first, so it waits as a load does).
    #[inline]
    pub(crate) fn access_lines(&mut self, core: usize, lines: &[u64]) -> u64 {
        self.hier.access_lines(
            core,
            lines,
            self.m.adjacent_line_prefetch,
            &mut self.counts,
            &self.cycles,
        )
    }

    /// What the application does on `core` after a request: zero the block it was handed
    /// (if any) and touch its own lines. Not charged to the request.
    pub(crate) fn pollute(&mut self, core: usize, handed_out: Option<(u64, u8)>) {
        if self.m.zero_pages {
            if let Some((pfn, order)) = handed_out {
                // 64 stores per page: anonymous fills of the caches (the page's contents are
                // never allocator metadata; see `docs/allocators.md` for the approximation).
                let first_line = (PAGE_DATA_BASE + pfn * 4096) / LINE_BYTES;
                self.hier.pollute_lines(core, first_line, 64 << order);
            }
        }
        if self.m.app_lines_per_request == 0 {
            return;
        }
        let lines = self.m.app_footprint_bytes / LINE_BYTES;
        // A core's own data: each core has its own footprint, many times the caches, so a
        // line is taken as one the caches do not hold (an anonymous fill).
        let base = (APP_BASE + (core as u64) * self.m.app_footprint_bytes) / LINE_BYTES;
        self.app_lines.clear();
        self.app_lines.extend(
            (0..self.m.app_lines_per_request).map(|_| base + self.rng.random_range(0..lines)),
        );
        self.hier.pollute_each(core, &self.app_lines);
    }
}
