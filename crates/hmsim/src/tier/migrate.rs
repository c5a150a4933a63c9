//! The migration queue: requests a policy made wait here until the copy engine's threads
//! have time for them (a batch larger than one quantum's copy time spreads over several
//! quanta). docs/tiering.md, *Migration copies*.

use std::collections::VecDeque;

use super::copy::CopyEngine;
use super::pages::PageTable;
use super::policy::{Migration, SPLIT_PAGE};

/// (bytes, from tier, to tier) of a copy.
type CopyKey = (u64, usize, usize);

/// Migrations decided but not yet copied, and the bytes they will copy.
#[derive(Debug, Default)]
pub(super) struct MigrationQueue {
    queue: VecDeque<Migration>,
    /// Copy bytes of the queued requests (what the policy's next budget is reduced by).
    queued_bytes: u64,
    /// Thread time (ns) a page copy started in an earlier quantum still takes from this one.
    debt_ns: f64,
}

/// What the copy threads can do this quantum.
pub(super) struct CopyBudget<'a> {
    pub engine: &'a CopyEngine,
    /// Loaded latency of each tier this quantum, ns.
    pub latency_ns: &'a [f64],
    /// Thread time available: threads × quantum, ns.
    pub thread_ns: f64,
    /// An explicit cap on the bytes copied per quantum (`sim.migrate_limit_gb_s`), if any.
    pub byte_cap: Option<u64>,
}

/// What draining the queue did this quantum.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Drained {
    /// Bytes copied this quantum.
    pub bytes: u64,
    pub migrations: u64,
    pub failed: u64,
    /// Streaming thread time per direction (from, to, ns): the copy traffic it puts on the
    /// tiers.
    pub streaming_ns: Vec<(usize, usize, f64)>,
    /// CPU time the completed migrations cost, ns (the engine's [`CopyEngine::page_cpu_ns`]
    /// at the latencies the copies ran at).
    pub cpu_ns: f64,
}

/// Bytes a queued request will copy: its page's size, nothing for a split.
fn request_bytes(pt: &PageTable, m: &Migration) -> u64 {
    if m.to == SPLIT_PAGE {
        0
    } else {
        pt.page_size(m.page)
    }
}

impl MigrationQueue {
    /// Copy budget left for new requests out of `budget` bytes per quantum.
    pub(super) fn budget_left(&self, budget: u64) -> u64 {
        budget.saturating_sub(self.queued_bytes)
    }

    /// Queues a policy's migrations behind those still waiting.
    pub(super) fn push(&mut self, pt: &PageTable, migs: Vec<Migration>) {
        self.queued_bytes += migs.iter().map(|m| request_bytes(pt, m)).sum::<u64>();
        self.queue.extend(migs);
    }

    /// Copies queued migrations in order while the copy threads have time this quantum
    /// (a request that does not fit waits for the next quantum; one that alone takes longer
    /// than a quantum is started when the threads are idle and its excess time is taken from
    /// the next quanta); splits cost no copy. `moved` gets the bytes per tier (read on one,
    /// written on the other) and `on_move` sees each completed move as (page, from, to).
    pub(super) fn drain(
        &mut self,
        pt: &mut PageTable,
        budget: &CopyBudget,
        moved: &mut [u64],
        mut on_move: impl FnMut(&PageTable, u64, usize, usize),
    ) -> Drained {
        let mut d = Drained::default();
        let available = budget.thread_ns - self.debt_ns;
        let mut used = 0.0;
        // The copy time of the last (size, from, to): the same for every page of a run of
        // one direction this quantum (same latencies), so computed once per run.
        let mut last: Option<(CopyKey, (f64, f64))> = None;
        while let Some(&m) = self.queue.front() {
            // Pages come in the policy's order, scattered over the table: fetch ahead.
            if let Some(a) = self.queue.get(8) {
                pt.prefetch(a.page);
            }
            let size = request_bytes(pt, &m);
            let from = pt.try_tier(m.page).unwrap_or(0);
            let (cost, stream) = if m.to == SPLIT_PAGE || m.to == from {
                (0.0, 0.0)
            } else {
                let l = budget.latency_ns;
                let to = m.to.min(l.len() - 1);
                let key = (size, from, to);
                match last {
                    Some((k, t)) if k == key => t,
                    _ => {
                        let t = budget.engine.page_time_ns(size, l[from], l[to]);
                        last = Some((key, t));
                        t
                    }
                }
            };
            let over_time = available <= 0.0 || (used > 0.0 && used + cost + stream > available);
            let over_cap = budget.byte_cap.is_some_and(|c| d.bytes + size > c);
            if size > 0 && (over_time || over_cap) {
                break;
            }
            self.queue.pop_front();
            self.queued_bytes -= size;
            if m.to == SPLIT_PAGE {
                // A split changes only the page table (no copy).
                if pt.split(m.page).is_err() {
                    d.failed += 1;
                }
                continue;
            }
            match pt.migrate(m.page, m.to) {
                Ok(()) => {
                    used += cost + stream;
                    d.cpu_ns += budget.engine.page_cpu_ns(size, cost, stream);
                    d.bytes += size;
                    moved[from] += size;
                    moved[m.to] += size;
                    d.migrations += 1;
                    match d
                        .streaming_ns
                        .iter_mut()
                        .find(|s| s.0 == from && s.1 == m.to)
                    {
                        Some(s) => s.2 += stream,
                        None => d.streaming_ns.push((from, m.to, stream)),
                    }
                    on_move(pt, m.page, from, m.to);
                }
                Err(_) => d.failed += 1,
            }
        }
        self.debt_ns = (self.debt_ns + used - budget.thread_ns).max(0.0);
        d
    }
}
