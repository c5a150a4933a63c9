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

use serde::Serialize;

use super::cost::{CostTable, Ctx, OpCounts};
use super::machine::{AllocMachine, LineSources};
use super::wear::{fairness, Fairness};
use super::workload::{AllocOp, AllocWorkload};
use super::{allocate, release, PageAllocator, MAX_ORDER};
use crate::stats::{quantiles, IntHistogram, Summary};

/// Summary of a latency distribution in modelled cycles.
pub type CycleStats = Summary;

/// Quantiles reported for response-time distributions.
pub const QUANTILES: [f64; 13] = [
    0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999, 1.0,
];

/// A distribution of request costs in cycles (up to 2^40).
fn cycles() -> IntHistogram {
    IntHistogram::new(1 << 40)
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
    pub all: CycleStats,
    pub alloc: CycleStats,
    pub free: CycleStats,
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
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            cost: CostTable::default(),
            machine: AllocMachine::default(),
            cpu_ghz: 2.4,
            seed: 1,
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
    let ctx = Ctx::with_machine(a.frames() as usize, model.cost, model.machine, model.seed);
    run_in(a, w, ctx, model, probe_orders, probe_requests)
}

/// `run` with every distinct line at the flat `line_cycles` instead of through the
/// machine's caches (cores and clocks as in `run`): the allocators' own paths without the
/// cache model, a reference for what the cache model costs in simulation time.
pub fn run_flat(a: &mut dyn PageAllocator, w: &AllocWorkload, model: &CostModel) -> RunResult {
    let ctx = Ctx::new(a.frames() as usize, model.cost);
    run_in(a, w, ctx, model, &[], 0)
}

fn run_in(
    a: &mut dyn PageAllocator,
    w: &AllocWorkload,
    mut ctx: Ctx,
    model: &CostModel,
    probe_orders: &[u8],
    probe_requests: u32,
) -> RunResult {
    let cpu_ghz = model.cpu_ghz;
    let cores = model.machine.cores.max(1) as usize;
    let mut clocks = vec![0u64; cores];
    let mut blocks: Vec<Option<(u64, u8)>> = vec![None; w.blocks as usize];
    let (mut all_acc, mut alloc_acc, mut free_acc) = (cycles(), cycles(), cycles());
    let mut r = RunResult {
        requests: 0,
        allocs: 0,
        frees: 0,
        failures: 0,
        frees_of_failed: 0,
        all: CycleStats::default(),
        alloc: CycleStats::default(),
        free: CycleStats::default(),
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
    for q in &w.reqs {
        let c = q.cpu as usize % cores;
        let arrival = (q.ts_ns as f64 * cpu_ghz) as u64;
        let start = clocks[c].max(arrival);
        ctx.now = start;
        ctx.begin(c);
        let mut handed_out = None;
        match q.op {
            AllocOp::Alloc { order } => {
                ctx.migratetype = w.alloc_mt.get(q.id as usize).copied().unwrap_or(1);
                r.requests += 1;
                r.order_attempts[order as usize] += 1;
                match allocate(a, order, c as u16, &mut ctx) {
                    Some(p) => {
                        r.allocs += 1;
                        r.order_successes[order as usize] += 1;
                        blocks[q.id as usize] = Some((p, order));
                        handed_out = Some((p, order));
                    }
                    None => r.failures += 1,
                }
                alloc_acc.record(ctx.now - start);
                all_acc.record(ctx.now - start);
            }
            AllocOp::Free => match blocks[q.id as usize].take() {
                Some((p, order)) => {
                    r.requests += 1;
                    r.frees += 1;
                    release(a, p, order, c as u16, &mut ctx);
                    free_acc.record(ctx.now - start);
                    all_acc.record(ctx.now - start);
                }
                None => r.frees_of_failed += 1,
            },
        }
        clocks[c] = ctx.now;
        ctx.after_request(handed_out);
    }
    r.all = all_acc.summary();
    r.quantiles = quantiles(all_acc.histogram(), &QUANTILES);
    r.alloc = alloc_acc.summary();
    r.free = free_acc.summary();
    r.ops = ctx.ops;
    r.sources = ctx.sources();
    r.fairness = fairness(&ctx.wear);
    r.wear = ctx.wear.clone();
    r.free_frames_end = a.free_frames();
    let t_end = clocks.iter().copied().max().unwrap_or(0);
    for &k in probe_orders {
        let free_blocks = a.free_blocks(k);
        let mut got = Vec::new();
        let mut acc = cycles();
        ctx.migratetype = 1;
        for _ in 0..probe_requests {
            ctx.now = t_end;
            ctx.begin(0);
            if let Some(p) = allocate(a, k, 0, &mut ctx) {
                got.push(p);
            }
            acc.record(ctx.now - t_end);
        }
        for &p in &got {
            ctx.now = t_end;
            ctx.begin(0);
            release(a, p, k, 0, &mut ctx);
        }
        r.probes.push(ProbeResult {
            order: k,
            free_blocks,
            attempts: probe_requests,
            successes: got.len() as u32,
            mean_cycles: acc.summary().mean,
        });
    }
    r
}
