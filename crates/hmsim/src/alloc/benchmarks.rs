//! Bodies of the allocator benchmarks (`hmsim bench --module allocators` and the criterion
//! bench `alloc`): the single-thread order-0 allocate+free pair on a fragmented array
//! (without a cost model, [`NoCost`], and recording for one, [`Ctx`]), the same pair on a
//! fresh array (LIFO: the buddy splits and coalesces every time), replay of a
//! pre-generated stream through the cost model, and the cost model's line accesses alone,
//! by where each line is found ([`LineStream`]).

use std::hint::black_box;
use std::time::Instant;

use super::buddy::Buddy;
use super::cost::{CostTable, Ctx, NoCost, Recorder};
use super::driver;
use super::ibuddy::IBuddy;
use super::lazy::{Lazy, LazyMode};
use super::machine::{AllocMachine, LineSources, MachineState};
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

/// Where every access of a [`LineStream`] finds its line in the cost model's default machine
/// (`AllocMachine::default()`: 8 cores, 32 KiB 8-way L1, 256 KiB 8-way L2, 8 MiB 16-way LLC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineSource {
    /// Core 0 reads four lines over and over.
    L1,
    /// Core 0 cycles through nine lines of one L1 set (8 ways): LRU misses every time, and
    /// L2 (whose sets the nine lines share at most two to a set) holds them all.
    L2,
    /// Cores 0..4 take turns at the same four lines: each access takes the line from the
    /// core before (the allocators' zone lock and free-list heads move like this).
    CrossCore,
    /// Core 0 reads lines it never read before, every other line (each miss's
    /// adjacent-line prefetch fetches the line between).
    Memory,
}

impl LineSource {
    pub const ALL: [LineSource; 4] = [
        LineSource::L1,
        LineSource::L2,
        LineSource::CrossCore,
        LineSource::Memory,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LineSource::L1 => "L1",
            LineSource::L2 => "L2",
            LineSource::CrossCore => "another core's cache",
            LineSource::Memory => "memory",
        }
    }

    /// The short name benchmark ids and the profiling driver use.
    pub fn key(self) -> &'static str {
        match self {
            LineSource::L1 => "l1",
            LineSource::L2 => "l2",
            LineSource::CrossCore => "cross-core",
            LineSource::Memory => "memory",
        }
    }
}

/// Lines per [`LineStream::run`] step: one `access_lines` call, as a replay's `Lines` event
/// makes (a request's distinct lines come in runs of a few).
pub const LINES_PER_RUN: usize = 4;

/// Runs that touch every line of a stream once (the L2 stream's nine lines take three): the
/// warm-up [`LineStream::new`] makes before the stream finds its lines where it says.
const WARM_RUNS: u64 = 3;

/// Accesses through the cost model's cache hierarchy that all find their line at one
/// [`LineSource`]: what one line access costs the host on each path the replay takes.
pub struct LineStream {
    machine: MachineState,
    source: LineSource,
    /// Runs made so far.
    step: u64,
}

impl LineStream {
    /// A stream after its warm-up ([`WARM_RUNS`]): from here on every access finds its line
    /// at `source`.
    pub fn new(source: LineSource) -> LineStream {
        let mut s = LineStream {
            machine: MachineState::new(AllocMachine::default(), 1),
            source,
            step: 0,
        };
        s.run(WARM_RUNS);
        s
    }

    /// The next run's core and lines.
    #[inline(always)]
    fn next_run(&mut self) -> (usize, [u64; LINES_PER_RUN]) {
        const BASE: u64 = 1 << 20;
        let (i, n) = (self.step, LINES_PER_RUN as u64);
        self.step += 1;
        let line = |k: u64| match self.source {
            LineSource::L1 => BASE + k % n,
            // 64 L1 sets: lines 64 apart share one.
            LineSource::L2 => BASE + (k % 9) * 64,
            LineSource::CrossCore => BASE + (k % n) * 7,
            LineSource::Memory => BASE + 2 * k,
        };
        let core = match self.source {
            LineSource::CrossCore => (i % 4) as usize,
            _ => 0,
        };
        (core, std::array::from_fn(|j| line(i * n + j as u64)))
    }

    /// `runs` more runs of [`LINES_PER_RUN`] accesses; the modelled cycles they took.
    pub fn run(&mut self, runs: u64) -> u64 {
        let mut cycles = 0;
        for _ in 0..runs {
            let (core, lines) = self.next_run();
            cycles += self.machine.access_lines(core, &lines);
        }
        cycles
    }

    /// Where the accesses so far found their lines.
    pub fn sources(&self) -> LineSources {
        self.machine.sources()
    }
}

/// Line accesses per wall second through the cost model's caches, every one found at
/// `source`.
pub fn cache_lines(source: LineSource, lines: u64) -> BenchResult {
    let mut s = LineStream::new(source);
    let runs = (lines / LINES_PER_RUN as u64).max(1);
    let start = Instant::now();
    black_box(s.run(runs));
    let wall_s = start.elapsed().as_secs_f64();
    let count = runs * LINES_PER_RUN as u64;
    BenchResult {
        module: "allocators".into(),
        case: format!(
            "cost model alone: a line access found in {}, 8-core machine (ns/access = 1e9/rate)",
            source.name()
        ),
        unit: "line accesses".into(),
        count,
        wall_s,
        per_wall_second: count as f64 / wall_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each stream's accesses all find their line where it says, after the warm-up (whose
    /// first touches come from memory): the benchmark times the path it names.
    #[test]
    fn every_line_stream_finds_its_lines_where_it_says() {
        for source in LineSource::ALL {
            let mut s = LineStream::new(source);
            let before = s.sources();
            s.run(1000);
            let a = s.sources();
            let got = [
                a.l1 - before.l1,
                a.l2 - before.l2,
                a.llc - before.llc,
                a.cross_core - before.cross_core,
                a.dram - before.dram,
            ];
            let want = match source {
                LineSource::L1 => 0,
                LineSource::L2 => 1,
                LineSource::CrossCore => 3,
                LineSource::Memory => 4,
            };
            let mut expect = [0; 5];
            expect[want] = 1000 * LINES_PER_RUN as u64;
            assert_eq!(got, expect, "{source:?}");
        }
    }
}
