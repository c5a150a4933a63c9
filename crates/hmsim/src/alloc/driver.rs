//! Runs a workload through an allocator and measures it with the cost model.
//!
//! Requests are served in the workload's time order. Workload thread `t` runs on core
//! `t % cores` of the [`AllocMachine`]: threads beyond the core count are time-sliced (they
//! share the core's clock, caches and per-CPU lists). Each core has its own modelled cycle
//! clock: a request starts at `max(its core's clock, ts_ns × cpu_ghz)`, costs what its
//! code path costs (lines through the core's caches, instructions), and waits for locks
//! that another core holds (lock "free at" times). After each request the application
//! touches the caches (zeroing the pages it got, its own lines). This is a discrete-event
//! approximation: requests are served in arrival order, so a core that is behind in
//! modelled time can see a lock as held by a request that arrived earlier but would, on
//! real hardware, have started later.

use std::sync::mpsc;

use serde::Serialize;

use super::cost::{CostTable, Ctx, OpCounts};
use super::machine::{AllocMachine, LineSources};
use super::timing::{handed_out, Batch, Cursor, Event, Record, Timing};
use super::wear::{fairness, Fairness};
use super::workload::{AllocOp, AllocWorkload};
use super::{allocate, release, PageAllocator, MAX_ORDER};
use crate::stats::{quantiles, IntHistogram, Summary, TabledIntHistogram};

/// Quantiles reported for response-time distributions.
pub const QUANTILES: [f64; 13] = [
    0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999, 1.0,
];

/// A distribution of request costs in cycles (up to 2^40).
fn cycles() -> IntHistogram {
    IntHistogram::new(1 << 40)
}

/// Request costs below this many cycles are counted in a table before they reach the
/// histogram (most requests cost a few hundred cycles; two histogram records per request
/// were a tenth of a replay's host instructions).
const TABLED_CYCLES: usize = 4096;

/// [`cycles`] for the workload's requests.
fn request_cycles() -> TabledIntHistogram {
    TabledIntHistogram::new(1 << 40, TABLED_CYCLES)
}

/// Order-k requests issued after the run, to see what fragmentation left.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeResult {
    pub order: u8,
    /// Free aligned 2^order blocks in the backing allocator before probing.
    pub free_blocks: u64,
    pub attempts: u32,
    pub successes: u32,
    pub mean_cycles: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub requests: u64,
    pub allocs: u64,
    pub frees: u64,
    pub failures: u64,
    /// Frees of blocks whose allocation failed: not issued.
    pub frees_of_failed: u64,
    /// Memory requests: allocations and frees together (the study's quantity).
    pub all: Summary,
    pub alloc: Summary,
    pub free: Summary,
    /// Response-time distribution of all requests at [`QUANTILES`].
    pub quantiles: Vec<(f64, u64)>,
    pub order_attempts: [u64; MAX_ORDER as usize + 1],
    pub order_successes: [u64; MAX_ORDER as usize + 1],
    pub ops: OpCounts,
    /// Where the allocator's line accesses were served from.
    pub sources: LineSources,
    pub fairness: Fairness,
    pub probes: Vec<ProbeResult>,
    /// Free frames at the end of the workload (before probing).
    pub free_frames_end: u64,
    /// Allocations per frame (wear).
    #[serde(skip)]
    pub wear: Vec<u32>,
}

/// How a run is costed.
#[derive(Debug, Clone, Copy)]
pub struct CostModel {
    pub cost: CostTable,
    pub machine: AllocMachine,
    /// Converts request timestamps (ns) to cycles.
    pub cpu_ghz: f64,
    /// Seeds the machine's random streams (application lines, cache replacement).
    pub seed: u64,
    /// Time the events on a second host thread as they are made ([`pipelined_by_default`]);
    /// the results are the same.
    pub pipelined: bool,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            cost: CostTable::default(),
            machine: AllocMachine::default(),
            cpu_ghz: 2.4,
            seed: 1,
            pipelined: pipelined_by_default(),
        }
    }
}

/// Run `w` through `a`; then issue `probe_requests` order-k allocations for each k in
/// `probe_orders` (all freed afterwards).
pub fn run(
    a: &mut dyn PageAllocator,
    w: &AllocWorkload,
    model: &CostModel,
    probe_orders: &[u8],
    probe_requests: u32,
) -> RunResult {
    let timing = Timing::new(model.cost, Some((model.machine, model.seed)));
    run_in(a, w, timing, model, probe_orders, probe_requests)
}

/// `run` with every distinct line at the flat `line_cycles` instead of through the
/// machine's caches (cores and clocks as in `run`): the allocators' own paths without the
/// cache model, a reference for what the cache model costs in simulation time.
pub fn run_flat(a: &mut dyn PageAllocator, w: &AllocWorkload, model: &CostModel) -> RunResult {
    run_in(a, w, Timing::new(model.cost, None), model, &[], 0)
}

/// Requests whose events are timed together when a second host thread times them: few
/// hand-overs between the threads.
const BATCH_REQUESTS_PIPELINED: usize = 8192;
/// The same on one host thread: a batch small enough to be timed while its events and
/// lines are still in the host's L1 and L2 caches (8,192 requests' events, ≈ 1.4 MB, left
/// them for the host's LLC, beside the cache model's own sets: the replay was 7–11 % slower).
const BATCH_REQUESTS_SERIAL: usize = 512;
/// Batches in flight between the two threads of a pipelined run.
const QUEUE_BATCHES: usize = 3;

/// What the timing side knew when the workload ended (before the probes).
#[derive(Default)]
struct AtWorkloadEnd {
    sources: LineSources,
    contended_locks: u64,
    wait_cycles: u64,
}

/// The timing of a run's events: request start times from the cores' clocks, the cycle
/// distributions, the application's work between a core's requests.
struct Replay {
    timing: Timing,
    clocks: Vec<u64>,
    /// Core and start of the request in progress.
    core: usize,
    start: u64,
    all: TabledIntHistogram,
    alloc: TabledIntHistogram,
    free: TabledIntHistogram,
    probes: Vec<IntHistogram>,
    at_workload_end: AtWorkloadEnd,
}

impl Replay {
    fn new(timing: Timing, cores: usize, probes: usize) -> Replay {
        Replay {
            timing,
            clocks: vec![0; cores],
            core: 0,
            start: 0,
            all: request_cycles(),
            alloc: request_cycles(),
            free: request_cycles(),
            probes: (0..probes).map(|_| cycles()).collect(),
            at_workload_end: AtWorkloadEnd::default(),
        }
    }

    fn consume(&mut self, batch: &Batch) {
        let Replay {
            timing,
            clocks,
            core,
            start,
            all,
            alloc,
            free,
            probes,
            at_workload_end,
        } = self;
        let mut at = Cursor::default();
        let t = timing;
        while let Some(e) = t.next_mark(batch, &mut at) {
            match e {
                Event::Begin { core: c, arrival } => {
                    *core = c as usize;
                    *start = clocks[*core].max(arrival);
                    t.now = *start;
                }
                Event::Probe => {
                    // Probes start when the last core finished (they move no clock).
                    *start = clocks.iter().copied().max().unwrap_or(0);
                    t.now = *start;
                }
                Event::End {
                    record, pfn, order, ..
                } => {
                    let took = t.now - *start;
                    match record {
                        Record::Alloc => {
                            alloc.record(took);
                            all.record(took);
                        }
                        Record::Free => {
                            free.record(took);
                            all.record(took);
                        }
                        Record::Nothing => {}
                        Record::ProbeAlloc(k) => {
                            probes[k as usize].record(took);
                            continue;
                        }
                        Record::ProbeFree => continue,
                    }
                    clocks[*core] = t.now;
                    t.after_request(handed_out(pfn, order));
                }
                Event::WorkloadDone => {
                    *at_workload_end = AtWorkloadEnd {
                        sources: t.sources(),
                        contended_locks: t.contended_locks,
                        wait_cycles: t.wait_cycles,
                    }
                }
                _ => {}
            }
        }
    }
}

/// Whether runs time their events on a second host thread, as they are made: when the
/// host has a second CPU. The results are the same either way.
pub fn pipelined_by_default() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

fn run_in(
    a: &mut dyn PageAllocator,
    w: &AllocWorkload,
    timing: Timing,
    model: &CostModel,
    probe_orders: &[u8],
    probe_requests: u32,
) -> RunResult {
    let cores = model.machine.cores.max(1) as usize;
    let replay = Replay::new(timing, cores, probe_orders.len());
    let mut issue_all = |batch_requests, deliver: &mut dyn FnMut(Batch) -> Batch| {
        issue(
            a,
            w,
            model,
            probe_orders,
            probe_requests,
            batch_requests,
            deliver,
        )
    };
    let (mut r, replay) = if model.pipelined {
        std::thread::scope(|scope| {
            let (batches, to_time) = mpsc::sync_channel::<Batch>(QUEUE_BATCHES);
            let (spares, spare) = mpsc::channel::<Batch>();
            let timer = scope.spawn(move || {
                crate::cputime::in_helper(|| {
                    let mut replay = replay;
                    for batch in to_time {
                        replay.consume(&batch);
                        // The issuing side may have finished: a lost spare is only memory.
                        let _ = spares.send(batch);
                    }
                    replay
                })
            });
            let out = issue_all(BATCH_REQUESTS_PIPELINED, &mut |batch| {
                batches
                    .send(batch)
                    .expect("the timing thread takes every batch");
                spare.try_recv().unwrap_or_default()
            });
            drop(batches);
            let (replay, cpu_s) = timer.join().expect("the timing thread finishes");
            crate::cputime::add_helper_cpu_s(cpu_s);
            (out, replay)
        })
    } else {
        let mut replay = replay;
        let out = issue_all(BATCH_REQUESTS_SERIAL, &mut |batch| {
            replay.consume(&batch);
            batch
        });
        (out, replay)
    };
    let end = &replay.at_workload_end;
    r.ops.contended_locks = end.contended_locks;
    r.ops.wait_cycles = end.wait_cycles;
    r.sources = end.sources;
    for (p, h) in r.probes.iter_mut().zip(&replay.probes) {
        p.mean_cycles = h.summary().mean;
    }
    let all = replay.all.finish();
    r.all = all.summary();
    r.quantiles = quantiles(all.histogram(), &QUANTILES);
    r.alloc = replay.alloc.finish().summary();
    r.free = replay.free.finish().summary();
    r
}

/// How many requests ahead a free's block is fetched into the host's caches.
const PREFETCH_AHEAD: usize = 16;

/// A block handed out, `pfn << 8 | order`, or [`HeldBlock::NONE`].
#[derive(Clone, Copy)]
struct HeldBlock(u64);

impl HeldBlock {
    const NONE: HeldBlock = HeldBlock(u64::MAX);

    fn new(pfn: u64, order: u8) -> HeldBlock {
        debug_assert!(pfn < 1 << 55, "frame numbers fit 56 bits");
        HeldBlock(pfn << 8 | u64::from(order))
    }

    fn get(self) -> Option<(u64, u8)> {
        (self.0 != Self::NONE.0).then_some((self.0 >> 8, self.0 as u8))
    }
}

/// The functional side of a run: every request of `w` and the probes through `a`, their
/// events handed to `deliver` every `batch_requests` requests (it returns an empty buffer
/// for the next batch). Returns the result's functional part (no cycles yet).
fn issue(
    a: &mut dyn PageAllocator,
    w: &AllocWorkload,
    model: &CostModel,
    probe_orders: &[u8],
    probe_requests: u32,
    batch_requests: usize,
    deliver: &mut dyn FnMut(Batch) -> Batch,
) -> RunResult {
    let mut ctx = Ctx::recording(a.frames() as usize, model.cost);
    let cores = model.machine.cores.max(1) as usize;
    let mut spare = Batch::default();
    let mut hand_over = |ctx: &mut Ctx| {
        let batch = ctx.take_batch(std::mem::take(&mut spare));
        spare = deliver(batch);
    };
    // Each allocation's block by request id, packed into 8 bytes (an `Option<(u64, u8)>`
    // takes 24): the table is as large as the workload's allocations, far beyond the
    // host's caches, and read back at random by the frees.
    let mut blocks = vec![HeldBlock::NONE; w.blocks as usize];
    let mut r = RunResult {
        requests: 0,
        allocs: 0,
        frees: 0,
        failures: 0,
        frees_of_failed: 0,
        all: Summary::default(),
        alloc: Summary::default(),
        free: Summary::default(),
        quantiles: Vec::new(),
        order_attempts: [0; MAX_ORDER as usize + 1],
        order_successes: [0; MAX_ORDER as usize + 1],
        ops: OpCounts::default(),
        sources: LineSources::default(),
        fairness: fairness(&[]),
        probes: Vec::new(),
        free_frames_end: 0,
        wear: Vec::new(),
    };
    for (i, q) in w.reqs.iter().enumerate() {
        // A free looks its block up by request id, a random place in a table far larger
        // than the host's caches: ask for it a few requests ahead (a hint; changes nothing).
        if let Some(ahead) = w.reqs.get(i + PREFETCH_AHEAD) {
            if let AllocOp::Free = ahead.op {
                crate::hostmem::prefetch(blocks.as_ptr().wrapping_add(ahead.id as usize));
            }
        }
        let c = q.cpu as usize % cores;
        ctx.begin_at(c, (q.ts_ns as f64 * model.cpu_ghz) as u64);
        match q.op {
            AllocOp::Alloc { order } => {
                ctx.migratetype = w.alloc_mt.get(q.id as usize).copied().unwrap_or(1);
                r.requests += 1;
                r.order_attempts[order as usize] += 1;
                let got = allocate(a, order, c as u16, &mut ctx);
                match got {
                    Some(p) => {
                        r.allocs += 1;
                        r.order_successes[order as usize] += 1;
                        blocks[q.id as usize] = HeldBlock::new(p, order);
                    }
                    None => r.failures += 1,
                }
                ctx.end(Record::Alloc, got.map(|p| (p, order)));
            }
            AllocOp::Free => {
                match std::mem::replace(&mut blocks[q.id as usize], HeldBlock::NONE).get() {
                    Some((p, order)) => {
                        r.requests += 1;
                        r.frees += 1;
                        release(a, p, order, c as u16, &mut ctx);
                        ctx.end(Record::Free, None);
                    }
                    None => {
                        r.frees_of_failed += 1;
                        ctx.end(Record::Nothing, None);
                    }
                }
            }
        }
        if (i + 1).is_multiple_of(batch_requests) {
            hand_over(&mut ctx);
        }
    }
    // What the workload did, before the probes add to it.
    ctx.workload_done();
    r.ops = ctx.ops;
    r.fairness = fairness(&ctx.wear);
    r.wear = ctx.wear.clone();
    r.free_frames_end = a.free_frames();
    for (i, &k) in probe_orders.iter().enumerate() {
        let free_blocks = a.free_blocks(k);
        let mut got = Vec::new();
        ctx.migratetype = 1;
        for _ in 0..probe_requests {
            ctx.begin_probe();
            if let Some(p) = allocate(a, k, 0, &mut ctx) {
                got.push(p);
            }
            ctx.end(Record::ProbeAlloc(i as u8), None);
        }
        for &p in &got {
            ctx.begin_probe();
            release(a, p, k, 0, &mut ctx);
            ctx.end(Record::ProbeFree, None);
        }
        r.probes.push(ProbeResult {
            order: k,
            free_blocks,
            attempts: probe_requests,
            successes: got.len() as u32,
            mean_cycles: 0.0,
        });
    }
    hand_over(&mut ctx);
    r
}

#[cfg(test)]
mod tests {
    use super::HeldBlock;

    proptest::proptest! {
        /// A packed block gives back its frame and order, and is never taken for no block.
        #[test]
        fn held_blocks_unpack_to_what_was_packed(pfn in 0u64..1 << 55, order in 0u8..=255) {
            proptest::prop_assert_eq!(HeldBlock::new(pfn, order).get(), Some((pfn, order)));
        }
    }

    #[test]
    fn no_block_unpacks_to_none() {
        assert_eq!(HeldBlock::NONE.get(), None);
    }
}
