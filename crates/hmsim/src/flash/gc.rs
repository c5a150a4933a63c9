//! Garbage-collection victim selection, one trait with implementations registered by name.

use rand::Rng;

use crate::named::{Entry, Registry};
use crate::rng::SimRng;

/// Picks the block to clean among `candidates` (full, not the write block). `valid[b]` is
/// the valid pages of block `b`, `stamp[b]` the write sequence number of its last program
/// and `now` the current one; `ppb` pages per block.
pub trait GcPolicy: Send {
    fn name(&self) -> &'static str;
    fn select(
        &mut self,
        candidates: &[u32],
        valid: &[u32],
        stamp: &[u64],
        now: u64,
        ppb: u32,
    ) -> u32;
}

/// The block with the fewest valid pages (least copying now).
pub(super) struct Greedy;

impl GcPolicy for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }
    fn select(&mut self, c: &[u32], valid: &[u32], _: &[u64], _: u64, _: u32) -> u32 {
        *c.iter()
            .min_by_key(|&&b| (valid[b as usize], b))
            .expect("candidates")
    }
}

/// Rosenblum & Ousterhout's cost-benefit (LFS, SOSP'91): maximise age·(1−u)/(2u), so cold
/// blocks are cleaned at higher utilisation than hot ones.
pub(super) struct CostBenefit;

impl GcPolicy for CostBenefit {
    fn name(&self) -> &'static str {
        "cost_benefit"
    }
    fn select(&mut self, c: &[u32], valid: &[u32], stamp: &[u64], now: u64, ppb: u32) -> u32 {
        let score = |b: u32| {
            let u = valid[b as usize] as f64 / ppb as f64;
            let age = (now - stamp[b as usize]) as f64 + 1.0;
            if u == 0.0 {
                f64::INFINITY
            } else {
                age * (1.0 - u) / (2.0 * u)
            }
        };
        let mut best = c[0];
        let mut best_s = score(best);
        for &b in &c[1..] {
            let s = score(b);
            if s > best_s {
                best = b;
                best_s = s;
            }
        }
        best
    }
}

/// Randomized greedy (d-choices): the fewest-valid of `d` uniformly sampled candidates;
/// spreads erases and costs O(d) instead of a full scan.
pub(super) struct RandomGreedy {
    pub d: usize,
    pub rng: SimRng,
}

impl GcPolicy for RandomGreedy {
    fn name(&self) -> &'static str {
        "random_greedy"
    }
    fn select(&mut self, c: &[u32], valid: &[u32], _: &[u64], _: u64, _: u32) -> u32 {
        (0..self.d)
            .map(|_| c[self.rng.random_range(0..c.len())])
            .min_by_key(|&b| (valid[b as usize], b))
            .expect("d >= 1")
    }
}

/// Makes a GC policy; `seed` feeds randomized ones.
pub(super) type MakeGc = fn(seed: u64) -> Result<Box<dyn GcPolicy>, String>;

/// Every GC policy, by the name `flash.gc` takes.
pub static GC_POLICIES: Registry<MakeGc> = Registry::new(
    "GC policy",
    &[
        Entry {
            name: "greedy",
            about: "the block with the fewest valid pages",
            make: |_| Ok(Box::new(Greedy)),
        },
        Entry {
            name: "cost_benefit",
            about: "LFS cost-benefit: age × (1 − u) / 2u",
            make: |_| Ok(Box::new(CostBenefit)),
        },
        Entry {
            name: "random_greedy",
            about: "the fewest-valid of 8 randomly sampled blocks",
            make: |seed| {
                Ok(Box::new(RandomGreedy {
                    d: 8,
                    rng: crate::rng::stream(seed, "flash-gc"),
                }))
            },
        },
    ],
);

/// The GC policy `name` (one of [`GC_POLICIES`]); `seed` feeds randomized ones.
pub fn build_gc(name: &str, seed: u64) -> Option<Box<dyn GcPolicy>> {
    GC_POLICIES.get(name).and_then(|make| make(seed).ok())
}
