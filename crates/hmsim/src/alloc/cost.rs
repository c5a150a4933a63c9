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
use super::machine::{AllocMachine, LineSources, MachineState};
use super::seen::SeenLines;

crate::params! {
    /// Cycles of the instructions around the memory accesses. Defaults for a Nehalem/
    /// Westmere-class core (sources in `docs/allocators.md`); override in `[cost]`.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct CostTable {
        pub call_cycles: u64 = 20 => range(0, 1_000_000), "cycles",
            "Entering the allocator (call, argument and GFP checks).";
        pub irq_cycles: u64 = 20 => range(0, 1_000_000), "cycles",
            "`local_irq_save` + `local_irq_restore` (`pushf; cli` … `popf`), once per request.";
        pub list_op_cycles: u64 = 3 => range(0, 1_000_000), "cycles",
            "One free-list link or unlink (pointer work on lines already loaded).";
        pub bitmap_word_cycles: u64 = 2 => range(0, 1_000_000), "cycles",
            "ALU work on one loaded 64-bit bitmap word.";
        pub lock_cycles: u64 = 20 => range(0, 1_000_000), "cycles",
            "The locked read-modify-write of an uncontended spin-lock acquisition (the lock's line is costed as a line access on top).";
        pub line_cycles: u64 = 40 => range(0, 1_000_000), "cycles",
            "A distinct line when no machine is modelled (flat LLC hit).";
    }
}

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

/// Run context: the clock of the core being served, the cost table, the machine's caches,
/// the lock table and the per-frame allocation counts (wear) that fair policies read.
pub struct Ctx {
    pub cost: CostTable,
    /// Modelled cycle clock of the request in progress.
    pub now: u64,
    pub ops: OpCounts,
    lock_free_at: Vec<u64>,
    lock_owner: Vec<u16>,
    /// Allocations handed out per frame.
    pub wear: Vec<u32>,
    /// Migratetype of the request in progress (Linux numbering; 1 = movable).
    pub migratetype: u8,
    machine: Option<Box<MachineState>>,
    core: usize,
    /// Lines the request in progress touched (charged once each).
    req_lines: SeenLines,
    /// Whether a request is in progress (outside one every touch is charged).
    in_request: bool,
}

const NO_OWNER: u16 = u16::MAX;

impl Ctx {
    /// A context without a machine: each distinct line costs `line_cycles`.
    pub fn new(frames: usize, cost: CostTable) -> Ctx {
        Ctx {
            cost,
            now: 0,
            ops: OpCounts::default(),
            lock_free_at: Vec::new(),
            lock_owner: Vec::new(),
            wear: vec![0; frames],
            migratetype: 1,
            machine: None,
            core: 0,
            req_lines: SeenLines::default(),
            in_request: false,
        }
    }

    /// A context whose line accesses go through `machine`'s caches.
    pub fn with_machine(frames: usize, cost: CostTable, machine: AllocMachine, seed: u64) -> Ctx {
        let mut c = Ctx::new(frames, cost);
        c.machine = Some(Box::new(MachineState::new(machine, seed)));
        c
    }

    /// Start a request on `core`: lines touched from now on are charged once each.
    pub fn begin(&mut self, core: usize) {
        self.core = core;
        self.req_lines.clear();
        self.in_request = true;
    }

    /// The application's work on the request's core after it (see
    /// [`MachineState::pollute`]); not charged to the request.
    pub fn after_request(&mut self, handed_out: Option<(u64, u8)>) {
        if let Some(m) = self.machine.as_mut() {
            m.pollute(self.core, handed_out);
        }
    }

    /// Where the lines came from (all zero without a machine).
    pub fn sources(&self) -> LineSources {
        self.machine.as_ref().map(|m| m.sources).unwrap_or_default()
    }

    /// One access to the line holding `addr`.
    #[inline]
    pub fn touch(&mut self, addr: u64, write: bool) {
        let line = addr >> 6;
        if self.in_request && !self.req_lines.insert(line) {
            return;
        }
        self.ops.lines += 1;
        self.now += match self.machine.as_mut() {
            Some(m) => m.access(self.core, addr, write),
            None => self.cost.line_cycles,
        };
    }

    /// The `struct page` of `pfn` (one or two lines: 56-byte structs straddle lines).
    #[inline]
    pub fn touch_page(&mut self, pfn: u64, write: bool) {
        let a = layout::struct_page(pfn);
        self.touch(a, write);
        let end = a + layout::STRUCT_PAGE_BYTES - 1;
        if end >> 6 != a >> 6 {
            self.touch(end, write);
        }
    }

    /// The `struct page`s of a block of 2^order frames (adjacent ones share lines).
    pub fn touch_pages(&mut self, pfn: u64, order: u8, write: bool) {
        let first = layout::struct_page(pfn) >> 6;
        let last = (layout::struct_page(pfn + (1 << order)) - 1) >> 6;
        for l in first..=last {
            self.touch(l << 6, write);
        }
    }

    #[inline]
    pub fn call(&mut self) {
        self.ops.calls += 1;
        self.now += self.cost.call_cycles + self.cost.irq_cycles;
    }

    #[inline]
    pub fn list_ops(&mut self, n: u64) {
        self.ops.list_ops += n;
        self.now += n * self.cost.list_op_cycles;
    }

    #[inline]
    pub fn bitmap_words(&mut self, n: u64) {
        self.ops.bitmap_words += n;
        self.now += n * self.cost.bitmap_word_cycles;
    }

    /// Acquire lock `id` (its word at `addr`) for `cpu`: wait until its last holder
    /// released it, then take its line (from wherever the last holder left it).
    pub fn lock(&mut self, id: usize, cpu: u16, addr: u64) {
        if id >= self.lock_free_at.len() {
            self.lock_free_at.resize(id + 1, 0);
            self.lock_owner.resize(id + 1, NO_OWNER);
        }
        self.ops.locks += 1;
        let free_at = self.lock_free_at[id];
        if free_at > self.now && self.lock_owner[id] != cpu {
            let wait = free_at - self.now;
            self.ops.contended_locks += 1;
            self.ops.wait_cycles += wait;
            self.now = free_at;
        }
        self.touch(addr, true);
        self.now += self.cost.lock_cycles;
        self.lock_owner[id] = cpu;
    }

    /// Release lock `id`: it is free from now on (a plain store on x86; its line is held).
    pub fn unlock(&mut self, id: usize) {
        self.lock_free_at[id] = self.now;
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
        assert_eq!(c.now, 20 + 20 + 2 * 3 + 5 * 2 + 3 * 40);
        assert_eq!(c.ops.lines, 3);
        // Uncontended lock: the RMW and its line.
        c.begin(0);
        let before = c.now;
        c.lock(0, 0, 4096);
        c.unlock(0);
        assert_eq!(c.now - before, 20 + 40);
        // CPU 1 arrives at 400 while CPU 0 holds lock 1 until t=1000.
        c.begin(0);
        c.now = 900;
        c.lock(1, 0, 8192);
        c.now = 1000;
        c.unlock(1);
        c.begin(1);
        c.now = 400;
        c.lock(1, 1, 8192);
        assert_eq!(c.now, 1000 + 40 + 20);
        assert_eq!(c.ops.contended_locks, 1);
        assert_eq!(c.ops.wait_cycles, 600);
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
