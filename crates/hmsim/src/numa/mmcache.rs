//! Memory Mode: the controller's DRAM as a direct-mapped cache of its PMem, block size
//! configurable (64 B default), insert on miss, dirty write-back.
//!
//! Two ways to get its hit ratio:
//! - closed form at page granularity, for the study's patterns over hundreds of GB: with
//!   blocks no larger than a page, a page's blocks map to the same cache "page slot" (frame
//!   number mod slots), so conflicts are decided by how many of the footprint's pages share
//!   a slot. A cyclic stream hits only in slots holding one page; uniform random accesses hit
//!   with probability 1/k in a slot holding k pages.
//! - simulation with the one cache model ([`SetAssocCache`] with 1 way, block numbers as
//!   lines) over a scaled address space (cache, footprint and frames divided by one factor),
//!   for traces and to check the closed form.

use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::cache::{Replacement, SetAssocCache, LINE_BYTES};
use crate::config::Validator;
use crate::rng::SimRng;

/// How the kernel hands out physical frames on a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FrameOrder {
    /// Consecutive frames: the free lists right after boot with page shuffling off. No
    /// aliasing until the footprint exceeds the cache.
    Sequential,
    /// Page shuffling on (`page_alloc.shuffle`, Linux 5.2+): the boot free lists are
    /// randomised in blocks of 2^`shuffle_order` pages (MAX_ORDER − 1 = 10: 4 MiB), each
    /// block's pages consecutive. Linux 5.2–5.8 turn it on by themselves when the firmware
    /// reports a direct-mapped memory-side cache (Memory Mode), if built with
    /// CONFIG_SHUFFLE_PAGE_ALLOCATOR; 5.9+ only on the command line.
    Shuffled,
    /// Frames drawn uniformly from the node, page by page: free lists after long churn
    /// (an aged machine). Aliasing at any footprint.
    Random,
}

crate::params! {
    /// Memory Mode: controller DRAM as a direct-mapped cache of the far memory behind it.
    #[derive(Debug, Clone)]
    pub struct MemoryModeSpec {
        pub block_bytes: u64 = 64 => any, "",
            "Cache block size: a power of two from 64 B to one page.";
        pub frame_order: FrameOrder = FrameOrder::Shuffled => any, "",
            "How the kernel hands out frames: `sequential`, `shuffled` or `random`; default `shuffled`, the study's kernel (5.4) on a Memory Mode platform.";
        pub shuffle_order: u32 = 10 => any, "",
            "Pages per shuffled block as a power of two, 0 to 18 (Linux: MAX_ORDER − 1 = 10).";
    }
}

impl MemoryModeSpec {
    pub fn validate_for(&self, v: &mut Validator, page_bytes: u64) {
        v.range(
            "block_bytes",
            self.block_bytes,
            64,
            page_bytes,
            "bytes (64 B to one page)",
        );
        v.range("shuffle_order", self.shuffle_order, 0, 18, "");
        if !self.block_bytes.is_power_of_two() {
            v.fail(
                "block_bytes",
                format!("{} is not a power of two", self.block_bytes),
            );
        }
    }
}

impl MemoryModeSpec {
    /// Pages placed together (consecutive frames) under this frame order; 0: the whole
    /// footprint (sequential frames).
    pub fn granule_pages(&self) -> u64 {
        match self.frame_order {
            FrameOrder::Sequential => 0,
            FrameOrder::Shuffled => 1 << self.shuffle_order,
            FrameOrder::Random => 1,
        }
    }
}

/// The access pattern whose hit ratio is wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MemoryModePattern {
    /// Repeated sequential passes over the footprint.
    Stream,
    /// Uniform random 64 B accesses over the footprint.
    Random,
}

#[cfg(test)]
/// Steady-state (after warm-up) hit ratio per 64 B access of a direct-mapped cache of
/// `cache_pages` page slots, for `pages` footprint pages placed among `node_pages` frames of
/// the node; closed form (expected value for random frames). Random placement in granules
/// of `granule` consecutive pages (a shuffled 4 MiB block) is the page-by-page case counted
/// in granules: a granule's pages map to consecutive slots of one granule-sized slot group.
pub(super) fn hit_ratio_granular(
    pattern: MemoryModePattern,
    order: FrameOrder,
    pages: u64,
    cache_pages: u64,
    node_pages: u64,
    block_bytes: u64,
    granule: u64,
) -> f64 {
    let g = granule.max(1);
    if order == FrameOrder::Sequential || g == 1 {
        return hit_ratio(pattern, order, pages, cache_pages, node_pages, block_bytes);
    }
    hit_ratio(
        pattern,
        FrameOrder::Random,
        pages.div_ceil(g),
        (cache_pages / g).max(1),
        (node_pages / g).max(1),
        block_bytes,
    )
}

#[cfg(test)]
/// [`hit_ratio_granular`] for pages placed one by one (`Shuffled` counts as `Random`).
pub(super) fn hit_ratio(
    pattern: MemoryModePattern,
    order: FrameOrder,
    pages: u64,
    cache_pages: u64,
    node_pages: u64,
    block_bytes: u64,
) -> f64 {
    if pages == 0 {
        return 1.0;
    }
    if cache_pages == 0 {
        return 0.0;
    }
    let (p, s) = (pages as f64, cache_pages as f64);
    let page_hit = match (pattern, order) {
        (MemoryModePattern::Stream, FrameOrder::Sequential) => {
            // Consecutive frames: slots get ⌊p/s⌋ or ⌈p/s⌉ pages; only single-page slots hit.
            if pages <= cache_pages {
                1.0
            } else if pages < 2 * cache_pages {
                (2 * cache_pages - pages) as f64 / p
            } else {
                0.0
            }
        }
        (MemoryModePattern::Random, FrameOrder::Sequential) => (s / p).min(1.0),
        (MemoryModePattern::Stream, FrameOrder::Random | FrameOrder::Shuffled) => {
            // A page hits when none of the other frames of its slot holds a footprint page.
            let m = (node_pages as f64 / s).max(1.0);
            let q = ((p - 1.0) / (node_pages as f64 - 1.0).max(1.0)).min(1.0);
            (1.0 - q).powf(m - 1.0)
        }
        (MemoryModePattern::Random, FrameOrder::Random | FrameOrder::Shuffled) => {
            // Hit ratio = occupied slots / pages.
            let m = (node_pages as f64 / s).max(1.0);
            let empty = (1.0 - (p / node_pages as f64).min(1.0)).powf(m);
            (s * (1.0 - empty) / p).min(1.0)
        }
    };
    match pattern {
        // A stream uses every 64 B of a block it brought in: misses per access scale 64/B.
        MemoryModePattern::Stream => 1.0 - (1.0 - page_hit) * 64.0 / block_bytes as f64,
        MemoryModePattern::Random => page_hit,
    }
}

/// Counters of a simulated run (after warm-up).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct SimCounts {
    pub accesses: u64,
    pub hits: u64,
    /// Blocks read from PMem (fills) and written back to it (dirty victims).
    pub fills: u64,
    pub writebacks: u64,
}

impl SimCounts {
    pub(super) fn hit_ratio(&self) -> f64 {
        if self.accesses == 0 {
            1.0
        } else {
            self.hits as f64 / self.accesses as f64
        }
    }
}

/// A direct-mapped DRAM cache over PMem addresses: the project's set-associative cache with
/// one way, indexed by block number.
pub(super) struct MemoryModeCache {
    cache: SetAssocCache,
    block_shift: u32,
    pub counts: SimCounts,
}

impl MemoryModeCache {
    pub(super) fn new(cache_bytes: u64, block_bytes: u64, rng: SimRng) -> MemoryModeCache {
        let blocks = (cache_bytes / block_bytes).max(1);
        MemoryModeCache {
            // SetAssocCache sizes sets in lines: pass one line per block.
            cache: SetAssocCache::new(blocks * LINE_BYTES, 1, Replacement::Lru, rng),
            block_shift: block_bytes.trailing_zeros(),
            counts: SimCounts::default(),
        }
    }

    /// One access to physical address `addr`; insert on miss, write-back of a dirty victim.
    pub(super) fn access(&mut self, addr: u64, write: bool) -> bool {
        let b = addr >> self.block_shift;
        self.counts.accesses += 1;
        if self.cache.lookup(b, write) {
            self.counts.hits += 1;
            return true;
        }
        self.counts.fills += 1;
        if let Some((_, dirty)) = self.cache.insert(b, write) {
            self.counts.writebacks += dirty as u64;
        }
        false
    }

    pub(super) fn reset_counts(&mut self) {
        self.counts = SimCounts::default();
    }
}

/// Simulate `pattern` over a footprint of `pages` pages placed among `node_pages` frames,
/// with a cache of `cache_pages` page slots, all divided by `scale` (≥ 1). Streams run
/// `passes` passes (the first is warm-up); random runs `accesses` accesses after as many of
/// warm-up. `write_every` > 0 makes every n-th access a write.
#[allow(clippy::too_many_arguments)]
pub(super) fn simulate(
    pattern: MemoryModePattern,
    order: FrameOrder,
    pages: u64,
    cache_pages: u64,
    node_pages: u64,
    page_bytes: u64,
    block_bytes: u64,
    scale: u64,
    passes: u32,
    accesses: u64,
    write_every: u64,
    rng: &mut SimRng,
) -> SimCounts {
    let scale = scale.max(1);
    let (p, s, f) = (
        (pages / scale).max(1),
        (cache_pages / scale).max(1),
        (node_pages / scale).max(1),
    );
    let frames: Vec<u64> = match order {
        FrameOrder::Sequential => (0..p).collect(),
        FrameOrder::Random | FrameOrder::Shuffled => {
            let mut all: Vec<u64> = (0..f.max(p)).collect();
            all.shuffle(rng);
            all.truncate(p as usize);
            all
        }
    };
    let mut c = MemoryModeCache::new(s * page_bytes, block_bytes, rng.clone());
    let lines_per_page = page_bytes / LINE_BYTES;
    let mut n = 0u64;
    let write = |n: &mut u64| {
        *n += 1;
        write_every > 0 && (*n).is_multiple_of(write_every)
    };
    match pattern {
        MemoryModePattern::Stream => {
            for pass in 0..passes.max(2) {
                if pass == 1 {
                    c.reset_counts();
                }
                for &fr in &frames {
                    for l in 0..lines_per_page {
                        let w = write(&mut n);
                        c.access(fr * page_bytes + l * LINE_BYTES, w);
                    }
                }
            }
        }
        MemoryModePattern::Random => {
            let total = p * lines_per_page;
            for i in 0..2 * accesses {
                if i == accesses {
                    c.reset_counts();
                }
                let line = rng.random_range(0..total);
                let w = write(&mut n);
                c.access(
                    frames[(line / lines_per_page) as usize] * page_bytes
                        + (line % lines_per_page) * LINE_BYTES,
                    w,
                );
            }
        }
    }
    c.counts
}

/// Largest number of cache slot groups simulated: the placement is scaled down to it (all
/// of cache, footprint and node frames divided by one factor keeps the aliasing ratios).
const SIM_SLOTS: u64 = 4096;
/// Random accesses measured (after as many of warm-up).
const SIM_RANDOM_ACCESSES: u64 = 200_000;

/// Steady-state counts of `pattern` over `pages` footprint pages of a Memory Mode node
/// (`node_pages` frames behind `cache_pages` page slots), placed as `mm.frame_order` says,
/// through the one cache model ([`simulate`]). Placement granules (a shuffled block, or a
/// page) are simulated as units of a few lines each, scaled to at most [`SIM_SLOTS`] slot
/// groups; every ⌈1/(1 − read_fraction)⌉-th access is a write (dirty victims).
pub(super) fn steady_state(
    pattern: MemoryModePattern,
    mm: &MemoryModeSpec,
    pages: u64,
    cache_pages: u64,
    node_pages: u64,
    read_fraction: f64,
    rng: &mut SimRng,
) -> SimCounts {
    let g = mm.granule_pages().max(1);
    let order = match mm.frame_order {
        FrameOrder::Sequential => FrameOrder::Sequential,
        _ => FrameOrder::Random,
    };
    let (p, s, f) = (
        pages.div_ceil(g),
        (cache_pages / g).max(1),
        (node_pages / g).max(1),
    );
    let scale = s.div_ceil(SIM_SLOTS).max(1);
    let unit_bytes = mm.block_bytes.max(256);
    let write_every = if read_fraction >= 1.0 {
        0
    } else {
        (1.0 / (1.0 - read_fraction)).round() as u64
    };
    simulate(
        pattern,
        order,
        p,
        s,
        f,
        unit_bytes,
        mm.block_bytes,
        scale,
        2,
        SIM_RANDOM_ACCESSES,
        write_every,
        rng,
    )
}
