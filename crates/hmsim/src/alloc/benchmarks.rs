//! Bodies of the allocator benchmarks (`hmsim bench --module allocators` and the criterion
//! bench `alloc`): the single-thread order-0 allocate+free pair on a fragmented array
//! (without a cost model, [`NoCost`], and recording for one, [`Ctx`]), the same pair on a
//! fresh array (LIFO: the buddy splits and coalesces every time), and replay of a
//! pre-generated stream through the cost model.

use std::hint::black_box;
use std::time::Instant;

use super::buddy::Buddy;
use super::cost::{CostTable, Ctx, NoCost, Recorder};
use super::driver;
use super::ibuddy::IBuddy;
use super::lazy::{Lazy, LazyMode};
use super::spec::{build, AllocatorSpec};
use super::workload::AllocWorkload;
use super::{PageAllocator, MAX_CPUS};
use crate::bench_result::BenchResult;

/// Frames of the benchmark array (1 GiB of 4 KiB pages).
pub const FRAMES: u64 = 1 << 18;

/// The warm-up every pair benchmark starts from: allocate 4096 single frames, free every
/// other one (2048 isolated holes, so the buddy has split blocks and free singles).
pub fn warm_up<R: Recorder>(a: &mut dyn PageAllocator<R>, ctx: &mut R) -> Vec<u64> {
    let got: Vec<u64> = (0..4096).filter_map(|_| a.alloc(0, 0, ctx)).collect();
    for p in got.iter().step_by(2) {
        a.free(*p, 0, 0, ctx);
    }
    got
}

/// An allocator of the study by label (`buddy`, `lazy-buddy`, `ibuddy`, `lazy-ibuddy`;
/// batch 31 for lazy buddy, 1 for lazy iBuddy).
pub fn named(name: &str) -> Box<dyn PageAllocator> {
    let mut s = AllocatorSpec::named(name);
    if name == "lazy-ibuddy" {
        s.batch = 1;
    }
    // The study's four names are registered (a test checks each builds).
    build(&s, FRAMES).unwrap_or_else(|e| panic!("{e}"))
}

/// One of the study's four allocators as a concrete type (no virtual calls), for runs
/// without a cost model; the same configurations as [`named`].
pub enum Plain {
    Buddy(Buddy),
    LazyBuddy(Lazy<Buddy>),
    IBuddy(IBuddy),
    LazyIBuddy(Lazy<IBuddy>),
}

/// [`named`]'s allocator as a [`Plain`] (with `AllocatorSpec::named`'s defaults).
pub fn plain(name: &str) -> Plain {
    let mut s = AllocatorSpec::named(name);
    let b = || Buddy::new(FRAMES, s.policy, 0);
    let ib = |s: &AllocatorSpec| IBuddy::new(FRAMES, s.spaces as usize, s.policy);
    match name {
        "buddy" => Plain::Buddy(b()),
        "lazy-buddy" => {
            let mode = LazyMode::Bulky {
                batch: s.batch,
                high: s.high(),
            };
            Plain::LazyBuddy(Lazy::new(b(), mode, MAX_CPUS, s.policy))
        }
        "ibuddy" => Plain::IBuddy(ib(&s)),
        "lazy-ibuddy" => {
            s.batch = 1;
            let mode = LazyMode::Bypass { capacity: s.batch };
            Plain::LazyIBuddy(Lazy::new(ib(&s), mode, MAX_CPUS, s.policy))
        }
        _ => panic!("no plain allocator {name}"),
    }
}

impl<R: Recorder> PageAllocator<R> for Plain {
    fn frames(&self) -> u64 {
        FRAMES
    }

    #[inline]
    fn alloc(&mut self, order: u8, cpu: u16, ctx: &mut R) -> Option<u64> {
        match self {
            Plain::Buddy(a) => a.alloc(order, cpu, ctx),
            Plain::LazyBuddy(a) => a.alloc(order, cpu, ctx),
            Plain::IBuddy(a) => a.alloc(order, cpu, ctx),
            Plain::LazyIBuddy(a) => a.alloc(order, cpu, ctx),
        }
    }

    #[inline]
    fn free(&mut self, pfn: u64, order: u8, cpu: u16, ctx: &mut R) {
        match self {
            Plain::Buddy(a) => a.free(pfn, order, cpu, ctx),
            Plain::LazyBuddy(a) => a.free(pfn, order, cpu, ctx),
            Plain::IBuddy(a) => a.free(pfn, order, cpu, ctx),
            Plain::LazyIBuddy(a) => a.free(pfn, order, cpu, ctx),
        }
    }

    fn free_frames(&self) -> u64 {
        match self {
            Plain::Buddy(a) => a.free_frames(),
            Plain::LazyBuddy(a) => a.free_frames(),
            Plain::IBuddy(a) => a.free_frames(),
            Plain::LazyIBuddy(a) => a.free_frames(),
        }
    }

    fn free_blocks(&self, order: u8) -> u64 {
        match self {
            Plain::Buddy(a) => a.free_blocks(order),
            Plain::LazyBuddy(a) => a.free_blocks(order),
            Plain::IBuddy(a) => a.free_blocks(order),
            Plain::LazyIBuddy(a) => a.free_blocks(order),
        }
    }
}

/// The order-0 allocate + free pair on CPU 0, `pairs` times.
#[inline]
pub fn pairs<R: Recorder, A: PageAllocator<R> + ?Sized>(a: &mut A, ctx: &mut R, pairs: u64) {
    for _ in 0..pairs {
        let p = a.alloc(0, 0, ctx).expect("free frames");
        a.free(black_box(p), 0, 0, ctx);
    }
}

/// ns per order-0 allocate + free pair without a cost model, `pairs` of them, on CPU 0
/// after [`warm_up`].
pub fn order0_pair(name: &str, pairs_n: u64) -> BenchResult {
    order0(name, pairs_n, false)
}

/// [`order0_pair`] on the untouched array: the LIFO pattern that makes the buddy split a
/// 2^10 block and coalesce it again on every pair.
pub fn order0_lifo(name: &str, pairs_n: u64) -> BenchResult {
    order0(name, pairs_n, true)
}

/// [`order0_pair`] recording every line, instruction and lock for a cost model (a context
/// timing its own events at flat line costs), through the registry's boxed allocator.
pub fn order0_pair_recorded(name: &str, pairs_n: u64) -> BenchResult {
    let mut a = named(name);
    let mut ctx = Ctx::new(FRAMES as usize, CostTable::default());
    warm_up(a.as_mut(), &mut ctx);
    let start = Instant::now();
    pairs(a.as_mut(), &mut ctx, pairs_n);
    let wall_s = start.elapsed().as_secs_f64();
    BenchResult {
        module: "allocators".into(),
        case: format!(
            "{name}: order-0 allocate+free pair, one thread, recording for the cost model (ns/pair = 1e9/rate)"
        ),
        unit: "pairs".into(),
        count: pairs_n,
        wall_s,
        per_wall_second: pairs_n as f64 / wall_s,
    }
}

fn order0(name: &str, pairs_n: u64, fresh: bool) -> BenchResult {
    let mut a = plain(name);
    if !fresh {
        warm_up(&mut a, &mut NoCost);
    }
    let start = Instant::now();
    pairs(&mut a, &mut NoCost, pairs_n);
    let wall_s = start.elapsed().as_secs_f64();
    let what = if fresh {
        "fresh array"
    } else {
        "after warm-up"
    };
    BenchResult {
        module: "allocators".into(),
        case: format!(
            "{name}: order-0 allocate+free pair, one thread, no cost model, {what} (ns/pair = 1e9/rate)"
        ),
        unit: "pairs".into(),
        count: pairs_n,
        wall_s,
        per_wall_second: pairs_n as f64 / wall_s,
    }
}

/// Requests per wall second replayed through the cost model (generation excluded), its
/// events timed on a second host thread when the host has one (the default).
pub fn replay(name: &str, w: &AllocWorkload) -> BenchResult {
    let model = driver::CostModel::default();
    let threads = if model.pipelined {
        "2 host threads"
    } else {
        "1 host thread"
    };
    replay_timed(name, w, &format!("cost-model replay, {threads}"), |a, w| {
        driver::run(a, w, &model, &[], 0)
    })
}

/// `replay` on one host thread (the events timed in batches as they are made).
pub fn replay_one_thread(name: &str, w: &AllocWorkload) -> BenchResult {
    let model = driver::CostModel {
        pipelined: false,
        ..Default::default()
    };
    replay_timed(name, w, "cost-model replay, 1 host thread", |a, w| {
        driver::run(a, w, &model, &[], 0)
    })
}

/// `replay` with flat line costs ([`driver::run_flat`]) on one host thread: the
/// allocators' paths and the request loop without the cache model.
pub fn replay_flat(name: &str, w: &AllocWorkload) -> BenchResult {
    let model = driver::CostModel {
        pipelined: false,
        ..Default::default()
    };
    replay_timed(
        name,
        w,
        "replay without the cache model (flat line cost), 1 host thread",
        |a, w| driver::run_flat(a, w, &model),
    )
}

fn replay_timed(
    name: &str,
    w: &AllocWorkload,
    what: &str,
    run: impl Fn(&mut dyn PageAllocator, &AllocWorkload) -> driver::RunResult,
) -> BenchResult {
    let mut a = named(name);
    let start = Instant::now();
    let r = run(a.as_mut(), w);
    let wall_s = start.elapsed().as_secs_f64();
    BenchResult {
        module: "allocators".into(),
        case: format!("{name}: {what}, synthetic kernel-compile, 4 CPUs"),
        unit: "requests".into(),
        count: r.requests,
        wall_s,
        per_wall_second: r.requests as f64 / wall_s,
    }
}

/// The replay benchmark's stream: kernel-compile shape, 4 threads.
pub fn replay_stream(allocs_per_thread: u32) -> AllocWorkload {
    super::workload::Synthetic {
        threads: 4,
        allocs_per_thread,
        ..Default::default()
    }
    .generate(1, "synthetic-kernel-compile")
}
