//! Cohort lifetimes measured on a request stream: which blocks of one allocation burst are
//! freed together, how fast a cohort's frees follow each other, and how often a free
//! coalesces with its buddy when the stream is replayed through a standard buddy
//! (docs/allocators.md, *Cohort lifetimes*).
//!
//! A *burst* is a CPU's run of allocations with gaps under [`BURST_GAP_NS`] (the grouping
//! [`fit`](super::shapes::fit) uses; kmem traces carry the CPU, not the task). A burst's
//! frees fall into *free groups*: its freed blocks sorted by free time, split where two
//! consecutive frees are [`BURST_GAP_NS`] or more apart. Blocks still live when the stream
//! ends are one more group: they die at exit or munmap after the recording stopped. The
//! burst's *cohort* is its largest group.

use serde::Serialize;

use super::buddy::Buddy;
use super::cost::{CostTable, Ctx};
use super::lists::FreeListPolicy;
use super::workload::{AllocOp, AllocWorkload};
use super::{allocate, release};

/// Gaps between a CPU's allocations at least this long separate bursts.
pub const BURST_GAP_NS: u64 = 100_000;

/// What [`measure`] finds on a stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CohortStats {
    pub allocs: u64,
    pub bursts: u64,
    /// Mean allocations per burst.
    pub burst_allocs_mean: f64,
    /// Mean pages (2^order summed) per burst.
    pub burst_pages_mean: f64,
    /// Blocks freed within the stream / all blocks.
    pub freed_fraction: f64,
    /// Blocks in their burst's cohort (its largest free group, live-at-end counting as a
    /// group) / all blocks.
    pub cohort_fraction: f64,
    /// Of the blocks freed within the stream: those in their burst's largest freed group.
    pub freed_together_fraction: f64,
    /// Mean gap between consecutive frees inside a free group of two or more, ns.
    pub cohort_free_gap_ns: f64,
    /// Mean time from a free group's first to last free (groups of two or more), ns.
    pub cohort_span_ns: f64,
    /// Median lifetime of the blocks freed within the stream, ns.
    pub median_life_ns: f64,
    /// Median time from a burst's first allocation to its largest freed group's first free
    /// (bursts with a freed group), ns.
    pub median_cohort_life_ns: f64,
    /// Mean distinct bursts whose blocks one free run holds (a CPU's frees with gaps under
    /// [`BURST_GAP_NS`], runs of two or more frees).
    pub cohort_bursts_mean: f64,
    /// Blocks freed after their CPU's next allocation and before the one after it (a buffer
    /// released once its replacement is allocated: a socket's page-frag refill) / all blocks.
    pub handoff_fraction: f64,
    /// Mean time from the replacement's allocation to such a free, ns.
    pub handoff_gap_ns: f64,
}

/// Measure bursts, cohorts and lifetimes of `w` (see the module documentation).
pub fn measure(w: &AllocWorkload) -> CohortStats {
    let n = w.blocks as usize;
    let mut alloc_at = vec![u64::MAX; n];
    let mut free_at = vec![u64::MAX; n];
    let mut pages = vec![0u64; n];
    // When the block's CPU next allocates, and allocates again after that.
    let (mut next_at, mut next2_at) = (vec![u64::MAX; n], vec![u64::MAX; n]);
    let mut prev: Vec<[Option<u32>; 2]> = vec![[None; 2]; w.cpus.max(1) as usize];
    let mut burst_of = vec![u32::MAX; n];
    let mut last: Vec<Option<(u64, u32)>> = vec![None; w.cpus.max(1) as usize];
    let mut bursts: Vec<(u64, Vec<u32>)> = Vec::new();
    // Per CPU: the free run in progress (last free, bursts of its blocks).
    let mut runs: Vec<Option<(u64, Vec<u32>)>> = vec![None; w.cpus.max(1) as usize];
    let (mut run_bursts, mut nruns) = (0u64, 0u64);
    let mut close_run = |r: Option<(u64, Vec<u32>)>| {
        if let Some((_, mut b)) = r.filter(|r| r.1.len() >= 2) {
            b.sort_unstable();
            b.dedup();
            run_bursts += b.len() as u64;
            nruns += 1;
        }
    };
    for q in &w.reqs {
        match q.op {
            AllocOp::Alloc { order } => {
                let i = q.id as usize;
                alloc_at[i] = q.ts_ns;
                pages[i] = 1 << order;
                let c = q.cpu as usize;
                if let Some(p) = prev[c][0] {
                    next_at[p as usize] = q.ts_ns;
                }
                if let Some(p) = prev[c][1] {
                    next2_at[p as usize] = q.ts_ns;
                }
                prev[c] = [Some(q.id), prev[c][0]];
                let b = match last[c] {
                    Some((t, b)) if q.ts_ns - t < BURST_GAP_NS => b,
                    _ => {
                        bursts.push((q.ts_ns, Vec::new()));
                        bursts.len() as u32 - 1
                    }
                };
                last[c] = Some((q.ts_ns, b));
                burst_of[i] = b;
                bursts[b as usize].1.push(q.id);
            }
            AllocOp::Free => {
                if alloc_at[q.id as usize] != u64::MAX {
                    free_at[q.id as usize] = q.ts_ns;
                    let b = burst_of[q.id as usize];
                    match &mut runs[q.cpu as usize] {
                        Some((t, v)) if q.ts_ns - *t < BURST_GAP_NS => {
                            *t = q.ts_ns;
                            v.push(b);
                        }
                        r => close_run(r.replace((q.ts_ns, vec![b]))),
                    }
                }
            }
        }
    }
    for r in runs {
        close_run(Some(r).flatten());
    }
    let (mut handoffs, mut handoff_gap) = (0u64, 0f64);
    for i in 0..n {
        if free_at[i] != u64::MAX && next_at[i] <= free_at[i] && free_at[i] < next2_at[i] {
            handoffs += 1;
            handoff_gap += (free_at[i] - next_at[i]) as f64;
        }
    }
    let mut s = CohortStats {
        handoff_gap_ns: handoff_gap / handoffs.max(1) as f64,
        cohort_bursts_mean: (run_bursts as f64 / nruns.max(1) as f64).max(1.0),
        ..Default::default()
    };
    let (mut freed, mut cohort, mut together) = (0u64, 0u64, 0u64);
    let (mut gap_sum, mut gaps, mut span_sum, mut spans) = (0f64, 0u64, 0f64, 0u64);
    let mut lives = Vec::new();
    let mut cohort_lives = Vec::new();
    let mut total_pages = 0u64;
    for (start, ids) in &bursts {
        s.allocs += ids.len() as u64;
        total_pages += ids.iter().map(|&i| pages[i as usize]).sum::<u64>();
        let mut frees: Vec<u64> = ids
            .iter()
            .map(|&i| free_at[i as usize])
            .filter(|&t| t != u64::MAX)
            .collect();
        frees.sort_unstable();
        for &i in ids {
            if free_at[i as usize] != u64::MAX {
                lives.push(free_at[i as usize] - alloc_at[i as usize]);
            }
        }
        freed += frees.len() as u64;
        let live = (ids.len() - frees.len()) as u64;
        // Largest freed group: (size, first free).
        let mut best = (0u64, 0u64);
        let mut k = 0;
        while k < frees.len() {
            let mut j = k + 1;
            while j < frees.len() && frees[j] - frees[j - 1] < BURST_GAP_NS {
                j += 1;
            }
            let size = (j - k) as u64;
            if size >= 2 {
                gap_sum += (frees[j - 1] - frees[k]) as f64;
                gaps += size - 1;
                span_sum += (frees[j - 1] - frees[k]) as f64;
                spans += 1;
            }
            if size > best.0 {
                best = (size, frees[k]);
            }
            k = j;
        }
        together += best.0;
        cohort += best.0.max(live);
        if best.0 > 0 {
            cohort_lives.push(best.1 - start);
        }
    }
    let median = |v: &mut Vec<u64>| {
        v.sort_unstable();
        crate::stats::nearest_rank(v, 0.5).unwrap_or(0) as f64
    };
    let all = s.allocs.max(1) as f64;
    s.handoff_fraction = handoffs as f64 / all;
    s.bursts = bursts.len() as u64;
    s.burst_allocs_mean = s.allocs as f64 / s.bursts.max(1) as f64;
    s.burst_pages_mean = total_pages as f64 / s.bursts.max(1) as f64;
    s.freed_fraction = freed as f64 / all;
    s.cohort_fraction = cohort as f64 / all;
    s.freed_together_fraction = together as f64 / freed.max(1) as f64;
    s.cohort_free_gap_ns = gap_sum / gaps.max(1) as f64;
    s.cohort_span_ns = span_sum / spans.max(1) as f64;
    s.median_life_ns = median(&mut lives);
    s.median_cohort_life_ns = median(&mut cohort_lives);
    s
}

/// How often frees coalesce when a stream is replayed through a standard buddy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Coalescing {
    pub frees: u64,
    /// Frees that merged with their buddy at least once / frees.
    pub coalescing_free_fraction: f64,
    /// Buddy merges per free.
    pub merges_per_free: f64,
    /// Failed allocations (the stream did not fit in `frames`).
    pub failures: u64,
}

/// Replay `w` through a LIFO [`Buddy`] of `frames` frames (no machine: only the structure
/// matters) up to time `until_ns` and count merges per free. A recorded trace ends with
/// blocks still live; a synthetic stream frees everything, so it is compared with a trace
/// up to the trace's duration.
pub fn coalescing(w: &AllocWorkload, frames: u64, until_ns: u64) -> Coalescing {
    let mut a = Buddy::new(frames, FreeListPolicy::Lifo, 0);
    let mut ctx = Ctx::new(frames as usize, CostTable::default());
    let mut blocks: Vec<Option<(u64, u8)>> = vec![None; w.blocks as usize];
    let mut c = Coalescing::default();
    let mut coalescing = 0u64;
    for q in w.reqs.iter().take_while(|q| q.ts_ns <= until_ns) {
        match q.op {
            AllocOp::Alloc { order } => match allocate(&mut a, order, 0, &mut ctx) {
                Some(p) => blocks[q.id as usize] = Some((p, order)),
                None => c.failures += 1,
            },
            AllocOp::Free => {
                if let Some((p, order)) = blocks[q.id as usize].take() {
                    let before = ctx.ops.merges;
                    release(&mut a, p, order, 0, &mut ctx);
                    c.frees += 1;
                    coalescing += u64::from(ctx.ops.merges > before);
                }
            }
        }
    }
    let f = c.frees.max(1) as f64;
    c.coalescing_free_fraction = coalescing as f64 / f;
    c.merges_per_free = ctx.ops.merges as f64 / f;
    debug_assert!(a.free_frames() <= frames);
    c
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::alloc::shapes::{preset, SHAPES};
    use crate::alloc::workload::Synthetic;
    use crate::alloc::MAX_ORDER;

    /// One burst, every block in the cohort, lifetimes far longer than the burst.
    fn one_cohort(allocs: u32) -> Synthetic {
        Synthetic {
            threads: 1,
            allocs_per_thread: allocs,
            order_mix: vec![0.6, 0.2, 0.15, 0.05],
            burst_allocs_mean: 1e9,
            short_lived_fraction: 0.0,
            long_life_ns: 1e12,
            cohort_fraction: 1.0,
            ..Default::default()
        }
    }

    /// A burst allocated from an empty buddy and freed as a cohort returns the buddy to its
    /// initial free-area state: every free block of every order again.
    #[test]
    fn cohort_frees_coalesce_fully() {
        let w = one_cohort(300).generate(7, "cohort");
        let frames = 4096;
        let first_free = w.reqs.iter().position(|q| q.op == AllocOp::Free).unwrap();
        assert_eq!(first_free, 300, "the cohort dies after its burst");
        let mut a = Buddy::new(frames, FreeListPolicy::Lifo, 0);
        let initial: Vec<u64> = (0..=MAX_ORDER).map(|k| a.free_blocks(k)).collect();
        let mut ctx = Ctx::new(frames as usize, CostTable::default());
        let mut blocks = vec![None; w.blocks as usize];
        for q in &w.reqs {
            match q.op {
                AllocOp::Alloc { order } => {
                    blocks[q.id as usize] =
                        Some((allocate(&mut a, order, 0, &mut ctx).unwrap(), order))
                }
                AllocOp::Free => {
                    let (p, o) = blocks[q.id as usize].take().unwrap();
                    release(&mut a, p, o, 0, &mut ctx);
                }
            }
        }
        let end: Vec<u64> = (0..=MAX_ORDER).map(|k| a.free_blocks(k)).collect();
        assert_eq!(end, initial);
        assert_eq!(a.free_frames(), frames);
        assert!(ctx.ops.merges >= ctx.ops.splits, "{:?}", ctx.ops);
    }

    /// Cohorts make frees coalesce more often than independent lifetimes on every shape
    /// while the workload runs.
    #[test]
    fn cohorts_coalesce_more_than_independent_lifetimes() {
        for shape in SHAPES {
            let mut s = Synthetic {
                threads: 2,
                allocs_per_thread: 4000,
                ..preset(shape).unwrap()
            };
            // While the workload runs (up to its last allocation), as a trace sees it;
            // afterwards everything left is freed either way.
            let run = |s: &Synthetic| {
                let w = s.generate(1, shape);
                let end = w
                    .reqs
                    .iter()
                    .rev()
                    .find(|q| q.op != AllocOp::Free)
                    .unwrap()
                    .ts_ns;
                coalescing(&w, 1 << 16, end)
            };
            let with = run(&s);
            s.cohorts = false;
            let without = run(&s);
            assert_eq!((with.failures, without.failures), (0, 0));
            assert!(with.frees > 0 && without.frees > 0, "{shape}");
            assert!(
                with.coalescing_free_fraction > without.coalescing_free_fraction,
                "{shape}: {with:?} vs {without:?}"
            );
        }
    }

    /// Hand-offs with no gap: every block but each thread's last is freed at its
    /// successor's allocation, after it, and `measure` counts them back.
    #[test]
    fn handoffs_free_after_the_next_allocation() {
        let s = Synthetic {
            threads: 2,
            allocs_per_thread: 500,
            handoff_fraction: 1.0,
            handoff_gap_ns: 0.0,
            ..Default::default()
        };
        let w = s.generate(5, "h");
        crate::alloc::tests::check_stream(&w, true);
        let mut at = vec![0u64; w.blocks as usize];
        for (k, q) in w.reqs.iter().enumerate() {
            match q.op {
                AllocOp::Alloc { .. } => at[q.id as usize] = q.ts_ns,
                AllocOp::Free if q.id % 500 != 499 => {
                    assert_eq!(q.ts_ns, at[q.id as usize + 1], "block {}", q.id);
                    let succ = w.reqs[..k]
                        .iter()
                        .any(|r| r.id == q.id + 1 && r.op != AllocOp::Free);
                    assert!(succ, "block {} freed before its successor", q.id);
                }
                AllocOp::Free => {}
            }
        }
        let m = measure(&w);
        assert_eq!(m.handoff_fraction, 998.0 / 1000.0);
        assert_eq!(m.handoff_gap_ns, 0.0);
    }

    /// A replaced-then-dropped buffer pins its successor's buddy: the tbench shape's frees
    /// coalesce less often with its measured hand-offs than without them.
    #[test]
    fn handoffs_lower_coalescing() {
        let s = Synthetic {
            threads: 2,
            allocs_per_thread: 4000,
            ..preset("tbench").unwrap()
        };
        let end = 2_000_000_000;
        let with = coalescing(&s.generate(1, "t"), 1 << 16, end);
        let without = coalescing(
            &Synthetic {
                handoff_fraction: 0.0,
                ..s
            }
            .generate(1, "t"),
            1 << 16,
            end,
        );
        assert!(
            with.coalescing_free_fraction < 0.8 * without.coalescing_free_fraction,
            "{with:?} vs {without:?}"
        );
    }

    /// Every block is allocated once and freed once, after its allocation; the replay
    /// conserves frames; the same seed gives the same stream.
    #[test]
    fn cohort_streams_conserve_and_are_deterministic() {
        for shape in SHAPES {
            let s = Synthetic {
                threads: 3,
                allocs_per_thread: 1500,
                ..preset(shape).unwrap()
            };
            let w = s.generate(11, shape);
            assert_eq!(w.reqs.len(), 2 * 3 * 1500);
            crate::alloc::tests::check_stream(&w, true);
            let c = coalescing(&w, 1 << 16, u64::MAX);
            assert_eq!((c.frees, c.failures), (4500, 0));
            assert_eq!(s.generate(11, shape).reqs, w.reqs);
            assert_ne!(s.generate(12, shape).reqs, w.reqs);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn generator_frees_only_live_blocks_once(
            threads in 1u32..4,
            allocs in 1u32..400,
            burst in 1.0f64..50.0,
            short in 0.0f64..1.0,
            short_life in 0.0f64..1e6,
            long_life in 0.0f64..1e8,
            cohorts: bool,
            cohort_fraction in 0.0f64..1.0,
            gap in 0.0f64..1e5,
            cohort_life in 0.0f64..1e6,
            cohort_bursts in 1.0f64..8.0,
            handoff in 0.0f64..1.0,
            seed in 0u64..1000,
        ) {
            let s = Synthetic {
                threads,
                allocs_per_thread: allocs,
                burst_allocs_mean: burst,
                short_lived_fraction: short,
                short_life_ns: short_life,
                long_life_ns: long_life,
                cohorts,
                cohort_fraction,
                cohort_free_gap_ns: gap,
                cohort_short_life_ns: cohort_life,
                cohort_bursts_mean: cohort_bursts,
                handoff_fraction: handoff,
                handoff_gap_ns: gap,
                ..Default::default()
            };
            let w = s.generate(seed, "p");
            prop_assert_eq!(w.reqs.len() as u32, 2 * threads * allocs);
            crate::alloc::tests::check_stream(&w, true);
        }
    }
}
