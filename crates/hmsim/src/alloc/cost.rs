//! The deterministic cost model: allocators report primitive operations to a [`Ctx`], which
//! turns them into modelled cycles with a [`CostTable`] and advances the requesting CPU's
//! clock. Locks are modelled as "free at" times, so a request that finds a lock held waits
//! until its holder released it (a discrete-event model of lock hold/wait).

use serde::{Deserialize, Serialize};

use crate::config::{Validate, Validator};

/// Cycles per primitive operation. The defaults describe a Nehalem/Westmere-class x86 core
/// (the study's machine generation): a `struct page` line comes from the LLC (~40 cycles),
/// a lock-prefixed read-modify-write costs ~20–25 cycles, a contended lock moves its cache
/// line between cores (~100+ cycles). They are assumptions of the model, not measurements;
/// override them in the scenario's `[cost]` table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostTable {
    /// Fixed cost of entering the allocator (call, argument checks).
    pub call_cycles: u64,
    /// One free-list link or unlink (pointer updates on lines already loaded).
    pub list_op_cycles: u64,
    /// One 64-bit bitmap word read or written.
    pub bitmap_word_cycles: u64,
    /// One `struct page` cache line touched (list neighbours, buddy checks), from the LLC.
    pub page_line_cycles: u64,
    /// Acquiring and releasing an uncontended lock.
    pub lock_cycles: u64,
    /// Extra cost of acquiring a lock another CPU held (lock line transfer), on top of the
    /// wait itself.
    pub lock_handoff_cycles: u64,
}

impl Default for CostTable {
    fn default() -> Self {
        CostTable {
            call_cycles: 20,
            list_op_cycles: 3,
            bitmap_word_cycles: 2,
            page_line_cycles: 40,
            lock_cycles: 25,
            lock_handoff_cycles: 120,
        }
    }
}

impl Validate for CostTable {
    fn validate(&self, v: &mut Validator) {
        for (k, x) in [
            ("call_cycles", self.call_cycles),
            ("list_op_cycles", self.list_op_cycles),
            ("bitmap_word_cycles", self.bitmap_word_cycles),
            ("page_line_cycles", self.page_line_cycles),
            ("lock_cycles", self.lock_cycles),
            ("lock_handoff_cycles", self.lock_handoff_cycles),
        ] {
            v.range(k, x, 0, 1_000_000, "cycles");
        }
    }
}

/// Counts of primitive operations (and structural events) over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct OpCounts {
    pub calls: u64,
    pub list_ops: u64,
    pub bitmap_words: u64,
    pub page_lines: u64,
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

/// Run context: the clock of the CPU being served, the cost table, the lock table and the
/// per-frame allocation counts (wear) that fair policies read.
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
}

const NO_OWNER: u16 = u16::MAX;

impl Ctx {
    pub fn new(frames: usize, cost: CostTable) -> Ctx {
        Ctx {
            cost,
            now: 0,
            ops: OpCounts::default(),
            lock_free_at: Vec::new(),
            lock_owner: Vec::new(),
            wear: vec![0; frames],
            migratetype: 1,
        }
    }

    #[inline]
    pub fn call(&mut self) {
        self.ops.calls += 1;
        self.now += self.cost.call_cycles;
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

    #[inline]
    pub fn page_lines(&mut self, n: u64) {
        self.ops.page_lines += n;
        self.now += n * self.cost.page_line_cycles;
    }

    /// Acquire lock `id` for `cpu`: wait until its last holder released it; a lock last
    /// released by another CPU that had to be waited for costs the handoff too.
    pub fn lock(&mut self, id: usize, cpu: u16) {
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
            self.now = free_at + self.cost.lock_handoff_cycles;
        }
        self.now += self.cost.lock_cycles;
        self.lock_owner[id] = cpu;
    }

    /// Release lock `id`: it is free from now on.
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
        c.call();
        c.list_ops(2);
        c.page_lines(3);
        c.bitmap_words(5);
        assert_eq!(c.now, 20 + 2 * 3 + 3 * 40 + 5 * 2);
        // Uncontended lock.
        let before = c.now;
        c.lock(0, 0);
        c.unlock(0);
        assert_eq!(c.now - before, 25);
        // CPU 1 arrives while CPU 0 holds lock 1 until t=1000.
        c.now = 900;
        c.lock(1, 0);
        c.now = 1000;
        c.unlock(1);
        c.now = 400;
        c.lock(1, 1);
        assert_eq!(c.now, 1000 + 120 + 25);
        assert_eq!(c.ops.contended_locks, 1);
        assert_eq!(c.ops.wait_cycles, 600);
    }
}
