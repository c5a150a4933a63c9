//! [`PmStats`]: the one counter type of the persistence primitives (loads, stores, flushes,
//! fences, non-temporal stores), kept by the region and summed or differenced by its users
//! (the study's per-phase deltas, the sharded index's totals).

use serde::Serialize;

/// Counts of the primitives. `alloc_*` are the persistent allocator's own flushes and fences
/// (reported apart so the index's persist cost is comparable to RECIPE's, which used malloc).
/// `resize_*` are the part of the index's own `flushes` / `fences` / `ntstores` issued while
/// it resizes or splits (a subset of them, not extra).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PmStats {
    pub loads: u64,
    pub stores: u64,
    pub load_bytes: u64,
    pub store_bytes: u64,
    pub ntstores: u64,
    pub flushes: u64,
    /// Flushes dropped by `coalesce_flushes`.
    pub flushes_coalesced: u64,
    pub fences: u64,
    pub alloc_flushes: u64,
    pub alloc_fences: u64,
    pub resize_flushes: u64,
    pub resize_fences: u64,
    pub resize_ntstores: u64,
}

impl PmStats {
    /// Counts since `b` (an earlier reading of the same region).
    pub fn minus(&self, b: &PmStats) -> PmStats {
        self.zip(b, |x, y| x - y)
    }

    /// Field-by-field sum (counts of two regions).
    pub(crate) fn plus(&self, b: &PmStats) -> PmStats {
        self.zip(b, |x, y| x + y)
    }

    /// `f` applied to each pair of counters (an exhaustive pattern, so a new counter cannot
    /// be forgotten).
    fn zip(&self, b: &PmStats, f: impl Fn(u64, u64) -> u64) -> PmStats {
        let PmStats {
            loads,
            stores,
            load_bytes,
            store_bytes,
            ntstores,
            flushes,
            flushes_coalesced,
            fences,
            alloc_flushes,
            alloc_fences,
            resize_flushes,
            resize_fences,
            resize_ntstores,
        } = *b;
        PmStats {
            loads: f(self.loads, loads),
            stores: f(self.stores, stores),
            load_bytes: f(self.load_bytes, load_bytes),
            store_bytes: f(self.store_bytes, store_bytes),
            ntstores: f(self.ntstores, ntstores),
            flushes: f(self.flushes, flushes),
            flushes_coalesced: f(self.flushes_coalesced, flushes_coalesced),
            fences: f(self.fences, fences),
            alloc_flushes: f(self.alloc_flushes, alloc_flushes),
            alloc_fences: f(self.alloc_fences, alloc_fences),
            resize_flushes: f(self.resize_flushes, resize_flushes),
            resize_fences: f(self.resize_fences, resize_fences),
            resize_ntstores: f(self.resize_ntstores, resize_ntstores),
        }
    }
}
