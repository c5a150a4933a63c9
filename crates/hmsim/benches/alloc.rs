//! Page-frame allocators: the single-thread order-0 allocate+free pair after a fragmenting
//! warm-up (`order0-pair`) and on a fresh array (`order0-lifo`: alloc then free the same
//! frame, where a classic buddy splits and coalesces every time), each ours without a cost
//! model (`NoCost`) and recording for one (`Ctx`, the `+cost` rows) beside the
//! `buddy_system_allocator` crate's `FrameAllocator` on the same request stream; a mixed
//! stream with a live set; replay through the cost model; and the cost model's line
//! accesses alone, by where each line is found (`cache-line`).

use std::hint::black_box;

use buddy_system_allocator::FrameAllocator;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use hmsim::alloc::benchmarks::{
    named, plain, replay_stream, warm_up, LineSource, LineStream, FRAMES, LINES_PER_RUN,
};
use hmsim::alloc::driver;
use hmsim::alloc::{CostTable, Ctx, NoCost, PageAllocator};

/// The reference: a buddy over frames `0..FRAMES` with orders 0..=10 (ORDER = 11 lists).
fn reference() -> FrameAllocator<11> {
    let mut f = FrameAllocator::<11>::new();
    f.add_frame(0, FRAMES as usize);
    f
}

/// Same warm-up as ours: 4096 single frames, every other one freed.
fn reference_warm(f: &mut FrameAllocator<11>) {
    let got: Vec<usize> = (0..4096).filter_map(|_| f.alloc(1)).collect();
    for p in got.iter().step_by(2) {
        f.dealloc(*p, 1);
    }
}

/// A deterministic mixed stream: (allocate?, order, which live block to free); 90 % order 0,
/// live set kept around 2048 blocks.
fn stream() -> Vec<(bool, u8, usize)> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut live = 0usize;
    (0..100_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let alloc = live < 1024 || (live < 4096 && x.is_multiple_of(2));
            let order = if x.is_multiple_of(10) {
                (x >> 8) % 4
            } else {
                0
            } as u8;
            let r = (alloc, order, (x >> 20) as usize);
            if alloc {
                live += 1;
            } else {
                live -= 1;
            }
            r
        })
        .collect()
}

const NAMES: [&str; 4] = ["buddy", "lazy-buddy", "ibuddy", "lazy-ibuddy"];

/// The order-0 pair group: `warm` runs the fragmenting warm-up first (`order0-pair`),
/// otherwise the array is fresh (`order0-lifo`).
fn order0(c: &mut Criterion, group: &str, warm: bool) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(1));
    for name in NAMES {
        let mut a = plain(name);
        if warm {
            warm_up(&mut a, &mut NoCost);
        }
        g.bench_function(name, |b| {
            b.iter(|| {
                let p =
                    PageAllocator::<NoCost>::alloc(&mut a, 0, 0, &mut NoCost).expect("free frames");
                a.free(black_box(p), 0, 0, &mut NoCost);
            })
        });
    }
    for name in NAMES {
        let mut a = named(name);
        let mut ctx = Ctx::new(FRAMES as usize, CostTable::default());
        if warm {
            warm_up(a.as_mut(), &mut ctx);
        }
        g.bench_function(format!("{name}+cost"), |b| {
            b.iter(|| {
                let p = a.alloc(0, 0, &mut ctx).expect("free frames");
                a.free(black_box(p), 0, 0, &mut ctx);
            })
        });
    }
    let mut f = reference();
    if warm {
        reference_warm(&mut f);
    }
    g.bench_function("buddy_system_allocator::FrameAllocator", |b| {
        b.iter(|| {
            let p = f.alloc(1).expect("free frames");
            f.dealloc(black_box(p), 1);
        })
    });
    g.finish();
}

fn pairs(c: &mut Criterion) {
    order0(c, "alloc/order0-pair", true);
}

fn lifo(c: &mut Criterion) {
    order0(c, "alloc/order0-lifo", false);
}

fn mixed(c: &mut Criterion) {
    let s = stream();
    let mut g = c.benchmark_group("alloc/mixed-stream");
    g.throughput(Throughput::Elements(s.len() as u64));
    g.sample_size(20);
    for name in ["buddy", "lazy-buddy", "ibuddy", "lazy-ibuddy"] {
        // Building the allocator over 2^18 frames is set-up, not measured.
        g.bench_function(name, |b| {
            b.iter_batched(
                || (named(name), Ctx::new(FRAMES as usize, CostTable::default())),
                |(mut a, mut ctx)| {
                    let mut live: Vec<(u64, u8)> = Vec::with_capacity(4096);
                    for &(alloc, order, k) in &s {
                        if alloc {
                            if let Some(p) = a.alloc(order, 0, &mut ctx) {
                                live.push((p, order));
                            }
                        } else if !live.is_empty() {
                            let (p, o) = live.swap_remove(k % live.len());
                            a.free(p, o, 0, &mut ctx);
                        }
                    }
                    live.len()
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.bench_function("buddy_system_allocator::FrameAllocator", |b| {
        b.iter_batched(
            reference,
            |mut f| {
                let mut live: Vec<(usize, usize)> = Vec::with_capacity(4096);
                for &(alloc, order, k) in &s {
                    if alloc {
                        if let Some(p) = f.alloc(1 << order) {
                            live.push((p, 1 << order));
                        }
                    } else if !live.is_empty() {
                        let (p, n) = live.swap_remove(k % live.len());
                        f.dealloc(p, n);
                    }
                }
                live.len()
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn replay(c: &mut Criterion) {
    let w = replay_stream(50_000);
    let model = driver::CostModel::default();
    let mut g = c.benchmark_group("alloc/cost-model-replay");
    g.throughput(Throughput::Elements(w.reqs.len() as u64));
    g.sample_size(10);
    for name in ["buddy", "lazy-buddy", "ibuddy", "lazy-ibuddy"] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || named(name),
                |mut a| driver::run(a.as_mut(), &w, &model, &[], 0).requests,
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

fn cache_lines(c: &mut Criterion) {
    let mut g = c.benchmark_group("alloc/cache-line");
    g.throughput(Throughput::Elements(LINES_PER_RUN as u64));
    for source in LineSource::ALL {
        let mut s = LineStream::new(source);
        g.bench_function(source.key(), |b| b.iter(|| s.run(1)));
    }
    g.finish();
}

criterion_group!(benches, pairs, lifo, mixed, replay, cache_lines);
criterion_main!(benches);
