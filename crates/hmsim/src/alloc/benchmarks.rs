//! Bodies of the allocator benchmarks (`hmsim bench --module allocators` and the criterion
//! bench `alloc`): the single-thread order-0 allocate+free pair on a fragmented array, and
//! replay of a pre-generated stream through the cost model.

use std::hint::black_box;
use std::time::Instant;

use super::cost::{CostTable, Ctx};
use super::driver;
use super::spec::{build, AllocatorSpec};
use super::workload::AllocWorkload;
use super::PageAllocator;
use crate::bench::BenchResult;

/// Frames of the benchmark array (1 GiB of 4 KiB pages).
pub const FRAMES: u64 = 1 << 18;

/// The warm-up every pair benchmark starts from: allocate 4096 single frames, free every
/// other one (2048 isolated holes, so the buddy has split blocks and free singles).
pub fn warm_up(a: &mut dyn PageAllocator, ctx: &mut Ctx) -> Vec<u64> {
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

/// ns per order-0 allocate + free pair, `pairs` of them, on CPU 0 after [`warm_up`].
pub fn order0_pair(name: &str, pairs: u64) -> BenchResult {
    let mut a = named(name);
    let mut ctx = Ctx::new(FRAMES as usize, CostTable::default());
    warm_up(a.as_mut(), &mut ctx);
    let start = Instant::now();
    for _ in 0..pairs {
        let p = a.alloc(0, 0, &mut ctx).expect("free frames");
        a.free(black_box(p), 0, 0, &mut ctx);
    }
    let wall_s = start.elapsed().as_secs_f64();
    BenchResult {
        module: "allocators".into(),
        case: format!("{name}: order-0 allocate+free pair, one thread (ns/pair = 1e9/rate)"),
        unit: "pairs".into(),
        count: pairs,
        wall_s,
        per_wall_second: pairs as f64 / wall_s,
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
