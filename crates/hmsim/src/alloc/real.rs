//! Real multi-threaded measurement: the allocators run on real threads with real locks, and
//! each request's latency is read from the CPU's cycle counter (`rdtsc`).
//!
//! The shared parts are real spin locks, as the kernel's zone and space locks are (a
//! sleeping mutex would add futex calls no kernel allocator makes): the buddy's zone lock
//! is one lock around the buddy; iBuddy's buddy spaces are one lock per space (thread t's home space is
//! `t % spaces`; a request its home space cannot serve tries the next spaces, as in the
//! model). Lazy layers are real per-thread lists outside any lock (Linux's pcp lists are
//! per CPU with interrupts off; a thread stands for a CPU): bulky refill/drain of `batch`
//! pages under one zone-lock acquisition (lazy buddy) or bypass with a capacity of `batch`
//! (lazy iBuddy). The allocators still report primitive operations to a per-thread
//! cost-model context; that bookkeeping (a few additions per operation) is part of what
//! is measured.
//!
//! Threads are pinned to distinct CPUs (Linux; thread t on CPU t) and the study runs at
//! most cores − 1 of them. Requests slower than 100 × the median are preemptions or
//! interrupts, not allocator work: they are counted as `outliers` and left out of mean and
//! σ. These are measurements of these data structures on this machine, not of a kernel.
//!
//! `rdtsc` counts at the TSC's constant rate, not the core clock; on other architectures
//! the latency is read from `Instant` and reported in nanoseconds × 1 (documented). A
//! checker owns one atomic flag per frame: a frame handed out while flagged, or freed while
//! not, is a failure (the flags are set outside the timed window).

use std::cell::UnsafeCell;
use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

use hdrhistogram::Histogram;

use super::buddy::Buddy;
use super::cost::{CostTable, Ctx};
use super::driver::QUANTILES;
use super::ibuddy::IBuddy;
use super::spec::AllocatorSpec;
use super::workload::{AllocOp, AllocWorkload};
use super::PageAllocator;
use crate::stats::{quantiles, Summary};

/// Cycle counter: TSC ticks on x86-64.
#[inline]
pub(crate) fn cycles() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no memory effects; it is available on every x86-64 CPU.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        use std::sync::OnceLock;
        use std::time::Instant;
        static T0: OnceLock<Instant> = OnceLock::new();
        T0.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

#[derive(Clone, Copy)]
enum LazyReal {
    None,
    Bulky { batch: usize, high: usize },
    Bypass { capacity: usize },
}

/// An allocator shared by real threads.
pub(crate) struct Shared {
    spaces: Vec<SpinLock<Box<dyn PageAllocator>>>,
    space_frames: u64,
    lazy: LazyReal,
}

/// A test-and-test-and-set spin lock.
pub(crate) struct SpinLock<T> {
    held: AtomicBool,
    data: UnsafeCell<T>,
}

// SAFETY: the data is only reached through a guard, and one guard exists at a time (the
// `held` flag, taken with Acquire and released with Release).
unsafe impl<T: Send> Sync for SpinLock<T> {}

pub(crate) struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
}

impl<T> SpinLock<T> {
    pub(crate) fn new(data: T) -> SpinLock<T> {
        SpinLock {
            held: AtomicBool::new(false),
            data: UnsafeCell::new(data),
        }
    }

    pub(crate) fn lock(&self) -> SpinGuard<'_, T> {
        loop {
            if !self.held.swap(true, Ordering::Acquire) {
                return SpinGuard { lock: self };
            }
            while self.held.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        }
    }
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (see `Sync`).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard is the only one (see `Sync`).
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.held.store(false, Ordering::Release);
    }
}

fn lock(m: &SpinLock<Box<dyn PageAllocator>>) -> SpinGuard<'_, Box<dyn PageAllocator>> {
    m.lock()
}

/// Pin the calling thread to CPU `cpu` (Linux); elsewhere, or if refused, a no-op.
fn pin(cpu: usize) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes inside it; the call only
        // reads it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu % libc::CPU_SETSIZE as usize, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpu;
}

impl Shared {
    /// `spec` over `frames` frames (validated beforehand: iBuddy needs a multiple of
    /// 64 × spaces).
    pub(crate) fn new(spec: &AllocatorSpec, frames: u64) -> Shared {
        let p = spec.policy;
        let ib = spec.name.ends_with("ibuddy");
        let n = if ib { spec.spaces as u64 } else { 1 };
        let space_frames = frames / n;
        let spaces = (0..n)
            .map(|_| -> SpinLock<Box<dyn PageAllocator>> {
                SpinLock::new(if ib {
                    Box::new(IBuddy::new(space_frames, 1, p))
                } else {
                    Box::new(if spec.migratetypes {
                        Buddy::with_migratetypes(space_frames, p, 0)
                    } else {
                        Buddy::new(space_frames, p, 0)
                    })
                })
            })
            .collect();
        let lazy = match spec.name.as_str() {
            "lazy-buddy" => LazyReal::Bulky {
                batch: spec.batch as usize,
                high: spec.high() as usize,
            },
            "lazy-ibuddy" => LazyReal::Bypass {
                capacity: spec.batch as usize,
            },
            _ => LazyReal::None,
        };
        Shared {
            spaces,
            space_frames,
            lazy,
        }
    }

    fn alloc_backing(&self, order: u8, thread: usize, ctx: &mut Ctx) -> Option<u64> {
        let n = self.spaces.len();
        for i in 0..n {
            let s = (thread + i) % n;
            if let Some(p) = lock(&self.spaces[s]).alloc(order, 0, ctx) {
                return Some(p + s as u64 * self.space_frames);
            }
        }
        None
    }

    fn free_backing(&self, pfn: u64, order: u8, ctx: &mut Ctx) {
        let s = (pfn / self.space_frames) as usize;
        lock(&self.spaces[s]).free(pfn - s as u64 * self.space_frames, order, 0, ctx);
    }

    /// One request from `thread` with its lazy list `cache`.
    pub(crate) fn alloc(
        &self,
        order: u8,
        thread: usize,
        cache: &mut VecDeque<u64>,
        ctx: &mut Ctx,
    ) -> Option<u64> {
        if order == 0 {
            match self.lazy {
                LazyReal::None => {}
                LazyReal::Bypass { .. } => {
                    if let Some(p) = cache.pop_back() {
                        return Some(p);
                    }
                }
                LazyReal::Bulky { batch, .. } => {
                    if cache.is_empty() {
                        // One zone-lock acquisition for the whole batch (single zone).
                        let mut out = Vec::with_capacity(batch);
                        lock(&self.spaces[0]).alloc_bulk(batch, 0, ctx, &mut out);
                        // Handed out in the order taken (2.6.32's `rmqueue_bulk`).
                        cache.extend(out.into_iter().rev());
                    }
                    return cache.pop_back();
                }
            }
        }
        self.alloc_backing(order, thread, ctx)
    }

    pub(crate) fn free(&self, pfn: u64, order: u8, cache: &mut VecDeque<u64>, ctx: &mut Ctx) {
        if order == 0 {
            match self.lazy {
                LazyReal::None => {}
                LazyReal::Bypass { capacity } => {
                    if cache.len() < capacity {
                        cache.push_back(pfn);
                        return;
                    }
                }
                LazyReal::Bulky { batch, high } => {
                    cache.push_back(pfn);
                    if cache.len() >= high {
                        let cold: Vec<u64> = cache.drain(..batch.min(cache.len())).collect();
                        lock(&self.spaces[0]).free_bulk(&cold, 0, ctx);
                    }
                    return;
                }
            }
        }
        self.free_backing(pfn, order, ctx)
    }

    /// Return a thread's lazy list to the backing allocator.
    pub(crate) fn drain(&self, cache: &mut VecDeque<u64>, ctx: &mut Ctx) {
        for p in cache.drain(..) {
            self.free_backing(p, 0, ctx);
        }
    }

    pub(crate) fn free_frames(&self) -> u64 {
        self.spaces.iter().map(|s| lock(s).free_frames()).sum()
    }
}

/// What a real run measured.
#[derive(Debug, Clone)]
pub(crate) struct RealResult {
    /// Allocations and frees together.
    pub all: Summary,
    pub alloc: Summary,
    pub free: Summary,
    /// Distribution of all requests at the driver's quantiles (outliers included).
    pub quantiles: Vec<(f64, u64)>,
    /// Requests slower than 100 × the median of all requests (preemptions, interrupts):
    /// left out of every mean and σ above.
    pub outliers: u64,
    pub failures: u64,
    /// Checker violations: frames handed out twice or freed while not handed out.
    pub violations: u64,
    /// Free frames after every thread finished and drained (must equal the array).
    pub free_frames_end: u64,
    /// Allocations per frame.
    pub wear: Vec<u32>,
}

struct ThreadOut {
    alloc: Histogram<u64>,
    free: Histogram<u64>,
    failures: u64,
    violations: u64,
    allocated: Vec<(u64, u8)>,
}

/// Request costs in cycles (up to 2^40); mean and σ come from the histogram once the
/// outlier limit is known.
fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 1 << 40, 3).expect("valid bounds")
}

fn rec(h: &mut Histogram<u64>, c: u64) {
    h.saturating_record(c.max(1));
}

/// Run `w` on `w.cpus` real threads, each issuing its CPU's requests back to back (the
/// timestamps are ignored: a stress run). A free on another CPU than its allocation is
/// skipped (the synthetic generator never makes one).
pub(crate) fn run(spec: &AllocatorSpec, frames: u64, w: &AllocWorkload) -> RealResult {
    let shared = Shared::new(spec, frames);
    let owned: Vec<AtomicBool> = (0..frames).map(|_| AtomicBool::new(false)).collect();
    let threads = w.cpus.max(1) as usize;
    let outs: Vec<ThreadOut> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (shared, owned) = (&shared, &owned);
                sc.spawn(move || {
                    crate::cputime::in_helper(|| thread_body(shared, owned, w, t, frames))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                let (out, cpu_s) = h.join().expect("allocator thread panicked");
                crate::cputime::add_helper_cpu_s(cpu_s);
                out
            })
            .collect()
    });
    let (mut a, mut f) = (hist(), hist());
    let (mut failures, mut violations) = (0, 0);
    let mut wear = vec![0u32; frames as usize];
    for o in outs {
        a.add(&o.alloc).expect("same bounds");
        f.add(&o.free).expect("same bounds");
        failures += o.failures;
        violations += o.violations;
        for (p, order) in o.allocated {
            for c in &mut wear[p as usize..(p + (1 << order)) as usize] {
                *c = c.saturating_add(1);
            }
        }
    }
    let mut all = a.clone();
    all.add(&f).expect("same bounds");
    let limit = all.value_at_quantile(0.5).saturating_mul(100);
    RealResult {
        all: Summary::of_histogram_up_to(&all, limit),
        quantiles: quantiles(&all, &QUANTILES),
        outliers: all.count_between(limit.saturating_add(1), u64::MAX),
        alloc: Summary::of_histogram_up_to(&a, limit),
        free: Summary::of_histogram_up_to(&f, limit),
        failures,
        violations,
        free_frames_end: shared.free_frames(),
        wear,
    }
}

fn thread_body(
    shared: &Shared,
    owned: &[AtomicBool],
    w: &AllocWorkload,
    t: usize,
    frames: u64,
) -> ThreadOut {
    pin(t);
    // Sized so least-allocated lists can read counts (all zero here: the real run keeps no
    // shared wear; fair policies are measured in the model).
    let mut ctx = Ctx::new(frames as usize, CostTable::default());
    let mut cache = VecDeque::new();
    let mut blocks: crate::hash::FastMap<u32, (u64, u8)> = Default::default();
    let mut out = ThreadOut {
        alloc: hist(),
        free: hist(),
        failures: 0,
        violations: 0,
        allocated: Vec::new(),
    };
    let claim = |p: u64, order: u8, set: bool| -> u64 {
        let mut bad = 0;
        for f in p..(p + (1 << order)).min(frames) {
            bad += (owned[f as usize].swap(set, Ordering::AcqRel) == set) as u64;
        }
        bad
    };
    for q in w.reqs.iter().filter(|q| q.cpu as usize == t) {
        match q.op {
            AllocOp::Alloc { order } => {
                let c0 = cycles();
                let r = shared.alloc(order, t, &mut cache, &mut ctx);
                let c1 = cycles();
                rec(&mut out.alloc, c1.saturating_sub(c0));
                match r {
                    Some(p) => {
                        out.violations += claim(p, order, true);
                        out.allocated.push((p, order));
                        blocks.insert(q.id, (p, order));
                    }
                    None => out.failures += 1,
                }
            }
            AllocOp::Free => {
                if let Some((p, order)) = blocks.remove(&q.id) {
                    out.violations += claim(p, order, false);
                    let c0 = cycles();
                    shared.free(p, order, &mut cache, &mut ctx);
                    let c1 = cycles();
                    rec(&mut out.free, c1.saturating_sub(c0));
                }
            }
        }
    }
    // Blocks still held (a trace's never-freed ones) go back too, so the count is exact.
    for (_, (p, order)) in blocks.drain() {
        out.violations += claim(p, order, false);
        shared.free(p, order, &mut cache, &mut ctx);
    }
    shared.drain(&mut cache, &mut ctx);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::shapes::preset;
    use crate::alloc::workload::Synthetic;

    fn six() -> Vec<AllocatorSpec> {
        let mut v = vec![
            AllocatorSpec::named("buddy"),
            AllocatorSpec::named("lazy-buddy"),
            AllocatorSpec::named("ibuddy"),
            AllocatorSpec::named("lazy-ibuddy"),
        ];
        let mut b1 = AllocatorSpec::named("lazy-buddy");
        b1.batch = 1;
        let mut i1 = AllocatorSpec::named("lazy-ibuddy");
        i1.batch = 1;
        v.extend([b1, i1]);
        v
    }

    /// Four real threads on mixed orders (dbench's shape) over an array small enough to run
    /// out: no frame is ever handed out twice or freed unowned, and every frame comes back.
    #[test]
    fn real_threads_never_share_a_frame() {
        let frames = 1 << 12;
        let w = Synthetic {
            threads: 4,
            allocs_per_thread: 3000,
            // Long lives: the array fills up and allocations fail.
            short_lived_fraction: 0.3,
            long_life_ns: 5e9,
            ..preset("dbench").unwrap()
        }
        .generate(9, "dbench");
        for spec in six() {
            let r = run(&spec, frames, &w);
            let label = spec.label();
            assert_eq!(r.violations, 0, "{label}");
            assert_eq!(r.free_frames_end, frames, "{label}");
            assert_eq!(r.alloc.count, 4 * 3000, "{label}");
            assert!(r.failures > 0, "{label}: the run should exhaust memory");
            assert!(r.alloc.mean > 0.0 && r.alloc.p99 >= r.alloc.p50, "{label}");
        }
    }

    #[test]
    fn cycle_counter_advances() {
        let a = cycles();
        let mut x = 0u64;
        for i in 0..10_000u64 {
            x = x.wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        assert!(cycles() > a);
    }
}
