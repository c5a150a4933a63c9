//! The deterministic cost model: allocators report what their code path does to a [`Ctx`]
//! (each cache line touched, list and bitmap work, lock acquisitions), which turns it into
//! modelled cycles and advances the requesting core's clock.
//!
//! Cache lines are costed through the machine's caches ([`super::machine`]): a line the
//! request already touched is not charged again (distinct lines per request), every other
//! line costs what the cache model says about where it is. Without a machine (unit tests,
//! set-up work) each distinct line costs a flat `line_cycles`. Locks are "free at" times:
//! a request that finds a lock held waits until its holder released it (a discrete-event
//! model of lock hold/wait); the lock's line then comes from the releasing core's cache.

use serde::Serialize;

use super::layout;
use super::machine::{AllocMachine, LineSources};
use super::seen::SeenLines;
pub use super::timing::CostTable;
use super::timing::{handed_out, Batch, Event, Record, Timing, NO_BLOCK};

/// Counts of primitive operations (and structural events) over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct OpCounts {
    pub calls: u64,
    pub list_ops: u64,
    pub bitmap_words: u64,
    /// Distinct cache lines touched (per request, summed).
    pub lines: u64,
    pub locks: u64,
    pub contended_locks: u64,
    pub wait_cycles: u64,
    /// Buddy: block halvings on allocate; iBuddy: not used.
    pub splits: u64,
    /// Buddy: merges with a free buddy on free; iBuddy: aligned runs gathered on a
    /// multi-page allocation.
    pub merges: u64,
    /// Per-CPU list refills (bulky) from the backing allocator.
    pub refills: u64,
    /// Per-CPU list drains back to the backing allocator.
    pub drains: u64,
    /// Buddy with migratetypes: blocks taken from another type's lists.
    pub steals: u64,
}

/// A structural event an allocator counts ([`OpCounts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Split,
    Merge,
    Refill,
    Drain,
    Steal,
}

/// What an allocator path reports as it runs: the recording [`Ctx`] (the cost model) or
/// [`NoCost`], whose methods are empty and compile away. Allocators are generic over it
/// (`PageAllocator<R>`), so an allocator run without a cost model pays nothing for it.
pub trait Recorder {
    /// One access to the line holding `addr` (see [`Ctx::touch`]).
    fn touch(&mut self, addr: u64, write: bool);
    /// The `struct page` of `pfn` (see [`Ctx::touch_page`]).
    fn touch_page(&mut self, pfn: u64, write: bool);
    /// The `struct page`s of a block (see [`Ctx::touch_pages`]).
    fn touch_pages(&mut self, pfn: u64, order: u8, write: bool);
    fn call(&mut self);
    fn list_ops(&mut self, n: u64);
    fn bitmap_words(&mut self, n: u64);
    /// Acquire lock `id` for `cpu` (see [`Ctx::lock`]).
    fn lock(&mut self, id: usize, cpu: u16, addr: u64);
    fn unlock(&mut self, id: usize);
    /// A locked read-modify-write that is not a lock (`clear_bit`): its cycles; its line is
    /// a `touch` of its own.
    fn atomic(&mut self);
    /// Count a structural event.
    fn count(&mut self, op: Op);
    /// Allocations handed out so far at `pfn` (what least-allocated reuse reads).
    fn wear_of(&self, pfn: u64) -> u32;
    /// Migratetype of the request in progress (Linux numbering; 1 = movable).
    fn migratetype(&self) -> u8;
}

/// The recorder of a run without a cost model: records nothing, costs nothing. It keeps
/// no wear counts (least-allocated reuse sees every frame at 0, i.e. FIFO) and every
/// request is movable.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCost;

impl Recorder for NoCost {
    #[inline(always)]
    fn touch(&mut self, _addr: u64, _write: bool) {}
    #[inline(always)]
    fn touch_page(&mut self, _pfn: u64, _write: bool) {}
    #[inline(always)]
    fn touch_pages(&mut self, _pfn: u64, _order: u8, _write: bool) {}
    #[inline(always)]
    fn call(&mut self) {}
    #[inline(always)]
    fn list_ops(&mut self, _n: u64) {}
    #[inline(always)]
    fn bitmap_words(&mut self, _n: u64) {}
    #[inline(always)]
    fn lock(&mut self, _id: usize, _cpu: u16, _addr: u64) {}
    #[inline(always)]
    fn unlock(&mut self, _id: usize) {}
    #[inline(always)]
    fn atomic(&mut self) {}
    #[inline(always)]
    fn count(&mut self, _op: Op) {}
    #[inline(always)]
    fn wear_of(&self, _pfn: u64) -> u32 {
        0
    }
    #[inline(always)]
    fn migratetype(&self) -> u8 {
        1
    }
}

impl Recorder for Ctx {
    #[inline(always)]
    fn touch(&mut self, addr: u64, write: bool) {
        Ctx::touch(self, addr, write)
    }
    #[inline(always)]
    fn touch_page(&mut self, pfn: u64, write: bool) {
        Ctx::touch_page(self, pfn, write)
    }
    #[inline(always)]
    fn touch_pages(&mut self, pfn: u64, order: u8, write: bool) {
        Ctx::touch_pages(self, pfn, order, write)
    }
    #[inline(always)]
    fn call(&mut self) {
        Ctx::call(self)
    }
    #[inline(always)]
    fn list_ops(&mut self, n: u64) {
        Ctx::list_ops(self, n)
    }
    #[inline(always)]
    fn bitmap_words(&mut self, n: u64) {
        Ctx::bitmap_words(self, n)
    }
    #[inline(always)]
    fn lock(&mut self, id: usize, cpu: u16, addr: u64) {
        Ctx::lock(self, id, cpu, addr)
    }
    #[inline(always)]
    fn unlock(&mut self, id: usize) {
        Ctx::unlock(self, id)
    }
    #[inline(always)]
    fn atomic(&mut self) {
        self.pending_cycles += self.cost.lock_cycles;
    }
    #[inline(always)]
    fn count(&mut self, op: Op) {
        let c = match op {
            Op::Split => &mut self.ops.splits,
            Op::Merge => &mut self.ops.merges,
            Op::Refill => &mut self.ops.refills,
            Op::Drain => &mut self.ops.drains,
            Op::Steal => &mut self.ops.steals,
        };
        *c += 1;
    }
    #[inline(always)]
    fn wear_of(&self, pfn: u64) -> u32 {
        self.wear[pfn as usize]
    }
    #[inline(always)]
    fn migratetype(&self) -> u8 {
        self.migratetype
    }
}

/// Events held before they are timed when a [`Ctx`] times its own events.
const SETTLE_EVENTS: usize = 1024;
/// Lines held before they are timed when a [`Ctx`] times its own events (a path without
/// locks or requests, such as a per-CPU list's, makes one `Lines` event that only grows).
const SETTLE_LINES: usize = 16 * 1024;

/// Run context, the functional side of the cost model: allocators report their paths here
/// (lines, instructions, locks), it counts them and records them as a [`Batch`] of
/// [`Event`]s for a [`Timing`] (its own, timed as they come, or the driver's, in batches).
/// It also keeps the per-frame allocation counts (wear) that fair policies read.
pub struct Ctx {
    pub cost: CostTable,
    pub ops: OpCounts,
    /// Allocations handed out per frame.
    pub wear: Vec<u32>,
    /// Migratetype of the request in progress (Linux numbering; 1 = movable).
    pub migratetype: u8,
    /// Lines the request in progress touched (charged once each).
    req_lines: SeenLines,
    /// Whether a request is in progress (outside one every touch is charged).
    in_request: bool,
    batch: Batch,
    /// Lines of `batch` before this index are covered by `Lines` events; those after it
    /// are the run being touched, whose event is written when another event follows (a
    /// touch only appends its line).
    lines_evented: usize,
    /// Instruction cycles since the last event that carried them (only their sum between
    /// lock events and the end of a request matters).
    pending_cycles: u64,
    /// Times the events as they come (`None`: the driver takes them, [`Ctx::take_batch`]).
    timing: Option<Box<Timing>>,
    /// Events held before they are timed: `SETTLE_EVENTS` with a timing, never without.
    settle_at: usize,
    /// Lines held before they are timed: `SETTLE_LINES` with a timing, never without.
    settle_lines: usize,
}

impl Ctx {
    /// A context timing its own events, each distinct line at `line_cycles`.
    pub fn new(frames: usize, cost: CostTable) -> Ctx {
        Ctx::timed(frames, cost, Some(Timing::new(cost, None)))
    }

    /// A context timing its own events, lines through `machine`'s caches.
    pub fn with_machine(frames: usize, cost: CostTable, machine: AllocMachine, seed: u64) -> Ctx {
        Ctx::timed(frames, cost, Some(Timing::new(cost, Some((machine, seed)))))
    }

    /// A context that only records: its events are timed by whoever takes them.
    pub fn recording(frames: usize, cost: CostTable) -> Ctx {
        Ctx::timed(frames, cost, None)
    }

    fn timed(frames: usize, cost: CostTable, timing: Option<Timing>) -> Ctx {
        Ctx {
            cost,
            ops: OpCounts::default(),
            wear: vec![0; frames],
            migratetype: 1,
            // The `struct page` lines, most of what paths touch, indexed directly.
            req_lines: SeenLines::with_dense(layout::memmap_lines(frames as u64)),
            in_request: false,
            batch: Batch::default(),
            lines_evented: 0,
            pending_cycles: 0,
            settle_at: if timing.is_some() {
                SETTLE_EVENTS
            } else {
                usize::MAX
            },
            settle_lines: if timing.is_some() {
                SETTLE_LINES
            } else {
                usize::MAX
            },
            timing: timing.map(Box::new),
        }
    }

    #[inline(always)]
    fn push(&mut self, e: Event) {
        self.close_lines();
        self.batch.events.push(e);
        if self.batch.events.len() >= self.settle_at {
            self.settle();
        }
    }

    /// The `Lines` event of the lines touched since the last event, if any.
    #[inline(always)]
    fn close_lines(&mut self) {
        let n = self.batch.lines.len() - self.lines_evented;
        if n > 0 {
            self.batch.events.push(Event::Lines(n as u32));
            self.lines_evented = self.batch.lines.len();
        }
    }

    /// The pending instruction cycles for an event to carry (an event of their own first
    /// if they exceed what it holds).
    #[inline]
    fn take_cycles(&mut self) -> u32 {
        let c = std::mem::take(&mut self.pending_cycles);
        match u32::try_from(c) {
            Ok(c) => c,
            Err(_) => {
                self.push(Event::Cycles(c));
                0
            }
        }
    }

    /// Time every recorded event (when this context times its own).
    #[cold]
    fn settle(&mut self) {
        if self.timing.is_some() {
            self.close_lines();
        }
        if let Some(t) = self.timing.as_mut() {
            if self.pending_cycles > 0 {
                self.batch
                    .events
                    .push(Event::Cycles(std::mem::take(&mut self.pending_cycles)));
            }
            t.run(&self.batch, |t, e| {
                if let Event::End { pfn, order, .. } = e {
                    t.after_request(handed_out(pfn, order));
                }
            });
            self.batch.clear();
            self.lines_evented = 0;
        }
    }

    /// The timing of a context that times its own events, all of them applied.
    fn timing(&mut self) -> &mut Timing {
        self.settle();
        self.timing
            .as_mut()
            .expect("a recording context has no clock: its events are timed by the driver")
    }

    /// The modelled cycle clock after everything so far.
    pub fn now(&mut self) -> u64 {
        self.timing().now
    }

    /// Set the clock (after everything so far).
    pub fn set_now(&mut self, now: u64) {
        self.timing().now = now;
    }

    /// Where the lines came from (all zero without a machine).
    pub fn sources(&mut self) -> LineSources {
        self.timing().sources()
    }

    /// Lock acquisitions that waited and their cycles.
    pub fn lock_waits(&mut self) -> (u64, u64) {
        let t = self.timing();
        (t.contended_locks, t.wait_cycles)
    }

    /// What was recorded since the last take (a recording context's driver takes it between
    /// requests, where no cycles are pending), leaving `empty` (cleared) in its place.
    pub fn take_batch(&mut self, mut empty: Batch) -> Batch {
        debug_assert_eq!(self.pending_cycles, 0, "taken inside a request");
        self.close_lines();
        self.lines_evented = 0;
        empty.clear();
        std::mem::replace(&mut self.batch, empty)
    }

    /// Start a request on `core`: lines touched from now on are charged once each.
    pub fn begin(&mut self, core: usize) {
        self.begin_at(core, 0);
    }

    /// `begin` for a request arriving at `arrival` cycles (see [`Event::Begin`]).
    #[inline]
    pub fn begin_at(&mut self, core: usize, arrival: u64) {
        if self.pending_cycles > 0 {
            // Work outside a request (set-up): timed, charged to no request.
            let c = std::mem::take(&mut self.pending_cycles);
            self.push(Event::Cycles(c));
        }
        self.push(Event::Begin {
            core: core as u16,
            arrival,
        });
        self.req_lines.clear();
        self.in_request = true;
    }

    /// Mark the end of the workload's requests (see [`Event::WorkloadDone`]).
    pub fn workload_done(&mut self) {
        self.push(Event::WorkloadDone);
    }

    /// Start a probe request (see [`Event::Probe`]).
    pub fn begin_probe(&mut self) {
        self.begin(0);
        self.push(Event::Probe);
    }

    /// End the request: `record` says where its cycles go; `handed_out` is the block it
    /// handed out (the application zeroes it before the core's next request).
    #[inline]
    pub fn end(&mut self, record: Record, handed_out: Option<(u64, u8)>) {
        let cycles = self.take_cycles();
        let (pfn, order) = handed_out.unwrap_or((NO_BLOCK, 0));
        self.push(Event::End {
            cycles,
            record,
            order,
            pfn,
        });
        self.in_request = false;
    }

    /// One access to the line holding `addr`. `write` says whether the path stores to it;
    /// the cost is the same (a store that misses reads its line for ownership first, and
    /// the cache model keeps no dirty state: no memory write is charged to a request).
    #[inline(always)]
    pub fn touch(&mut self, addr: u64, write: bool) {
        let _ = write;
        let line = addr >> 6;
        if self.in_request && !self.req_lines.insert(line) {
            return;
        }
        self.ops.lines += 1;
        self.batch.lines.push(line);
        if self.batch.lines.len() >= self.settle_lines {
            self.settle();
        }
    }

    /// The `struct page` of `pfn` (one or two lines: 56-byte structs straddle lines).
    #[inline(always)]
    pub fn touch_page(&mut self, pfn: u64, write: bool) {
        let a = layout::struct_page(pfn);
        self.touch(a, write);
        let end = a + layout::STRUCT_PAGE_BYTES - 1;
        if end >> 6 != a >> 6 {
            self.touch(end, write);
        }
    }

    /// The `struct page`s of a block of 2^order frames (adjacent ones share lines).
    #[inline]
    pub fn touch_pages(&mut self, pfn: u64, order: u8, write: bool) {
        let first = layout::struct_page(pfn) >> 6;
        let last = (layout::struct_page(pfn + (1 << order)) - 1) >> 6;
        for l in first..last + 1 {
            self.touch(l << 6, write);
        }
    }

    #[inline]
    pub fn call(&mut self) {
        self.ops.calls += 1;
        self.pending_cycles += self.cost.call_cycles + self.cost.irq_cycles;
    }

    #[inline]
    pub fn list_ops(&mut self, n: u64) {
        self.ops.list_ops += n;
        self.pending_cycles += n * self.cost.list_op_cycles;
    }

    #[inline]
    pub fn bitmap_words(&mut self, n: u64) {
        self.ops.bitmap_words += n;
        self.pending_cycles += n * self.cost.bitmap_word_cycles;
    }

    /// Acquire lock `id` (its word at `addr`) for `cpu`: wait until its last holder
    /// released it, then take its line (from wherever the last holder left it).
    #[inline(always)]
    pub fn lock(&mut self, id: usize, cpu: u16, addr: u64) {
        self.ops.locks += 1;
        let cycles = self.take_cycles();
        self.push(Event::Lock {
            cycles,
            id: id as u32,
            cpu,
        });
        self.touch(addr, true);
        self.pending_cycles += self.cost.lock_cycles;
    }

    /// Release lock `id`: it is free from now on (a plain store on x86; its line is held).
    #[inline(always)]
    pub fn unlock(&mut self, id: usize) {
        let cycles = self.take_cycles();
        self.push(Event::Unlock {
            cycles,
            id: id as u32,
        });
    }

    /// Record that `2^order` frames from `pfn` were handed out.
    pub fn record_alloc(&mut self, pfn: u64, order: u8) {
        let s = pfn as usize;
        for c in &mut self.wear[s..s + (1usize << order)] {
            *c = c.saturating_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_form_costs() {
        let t = CostTable::default();
        let mut c = Ctx::new(4, t);
        c.begin(0);
        c.call();
        c.list_ops(2);
        c.bitmap_words(5);
        // Three distinct lines, one of them twice: charged three times.
        c.touch(0, true);
        c.touch(8, false);
        c.touch(64, true);
        c.touch(128, false);
        assert_eq!(c.now(), 20 + 20 + 2 * 3 + 5 * 2 + 3 * 40);
        assert_eq!(c.ops.lines, 3);
        // Uncontended lock: the RMW and its line.
        c.begin(0);
        let before = c.now();
        c.lock(0, 0, 4096);
        c.unlock(0);
        assert_eq!(c.now() - before, 20 + 40);
        // CPU 1 arrives at 400 while CPU 0 holds lock 1 until t=1000.
        c.begin(0);
        c.set_now(900);
        c.lock(1, 0, 8192);
        c.set_now(1000);
        c.unlock(1);
        c.begin(1);
        c.set_now(400);
        c.lock(1, 1, 8192);
        assert_eq!(c.now(), 1000 + 40 + 20);
        assert_eq!(c.lock_waits(), (1, 600));
    }

    #[test]
    fn struct_pages_share_lines() {
        let mut c = Ctx::new(64, CostTable::default());
        c.begin(0);
        // 8 struct pages of 56 bytes from a line boundary: 448 bytes = 7 lines.
        c.touch_pages(8, 3, false);
        assert_eq!(c.ops.lines, 7);
        c.begin(0);
        c.touch_page(1, false); // bytes 56..112: two lines
        assert_eq!(c.ops.lines, 9);
    }
}
