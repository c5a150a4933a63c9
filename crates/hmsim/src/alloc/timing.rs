//! The timing side of the cost model. An allocator's code path does not depend on time:
//! which lines it touches, which locks it takes and what it hands out follow from the
//! request stream alone. So the paths run first and record what they did as a [`Batch`] of
//! [`Event`]s (the functional side, [`super::cost::Ctx`]), and a [`Timing`] turns the events
//! into modelled cycles: each line through the machine's caches, the instructions around
//! them, lock waits against the other cores' release times. The driver times the events of
//! many requests at once (on another host thread, as they are made, when there is one): the
//! same answers as timing each access as it happens, with the cache model's work in one
//! tight loop.

use super::machine::{AllocMachine, LineSources, MachineState};

crate::params! {
    /// Cycles of the instructions around the memory accesses. Defaults for a Nehalem/
    /// Westmere-class core (sources in `docs/allocators.md`); override in `[cost]`.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct CostTable {
        pub call_cycles: u64 = 20 => range(0, 1_000_000), "",
            "Entering the allocator (call, argument and GFP checks).";
        pub irq_cycles: u64 = 20 => range(0, 1_000_000), "",
            "`local_irq_save` + `local_irq_restore` (`pushf; cli` … `popf`), once per request.";
        pub list_op_cycles: u64 = 3 => range(0, 1_000_000), "",
            "One free-list link or unlink (pointer work on lines already loaded).";
        pub bitmap_word_cycles: u64 = 2 => range(0, 1_000_000), "",
            "ALU work on one loaded 64-bit bitmap word.";
        pub lock_cycles: u64 = 20 => range(0, 1_000_000), "",
            "A locked read-modify-write: an uncontended spin-lock acquisition, or a locked bit operation such as `clear_bit` (the line is costed as a line access on top).";
        pub line_cycles: u64 = 40 => range(0, 1_000_000), "",
            "A distinct line when no machine is modelled (flat LLC hit).";
    }
}

/// What a request's code path did, in order. Instruction cycles are summed between the
/// points where time matters (lock acquisitions and releases, the end of a request) and
/// carried by the event that follows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The next `n` lines of the batch's line list: lines the request touched for the first
    /// time, in order.
    Lines(u32),
    /// Cycles of instructions (more than an event's `cycles` holds).
    Cycles(u64),
    /// After `cycles`, acquire lock `id` for `cpu`: wait until its last holder released it.
    Lock { cycles: u32, id: u32, cpu: u16 },
    /// After `cycles`, release lock `id`.
    Unlock { cycles: u32, id: u32 },
    /// A request starts on `core`, arriving at `arrival` cycles (the driver starts it at
    /// `max(core clock, arrival)`; outside the driver only the core matters).
    Begin { core: u16, arrival: u64 },
    /// After `cycles`, the request ends: what to record, and the block handed out
    /// (`NO_BLOCK` if none), which the application then zeroes.
    End {
        cycles: u32,
        record: Record,
        order: u8,
        pfn: u64,
    },
    /// A probe request after the workload: core 0, starting when the last core finished.
    Probe,
    /// The workload's requests are all issued (the probes follow).
    WorkloadDone,
}

// Two events per 32-byte host line.
const _: () = assert!(std::mem::size_of::<Event>() == 16);

/// Where a request's cycles go (see [`super::driver`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    Alloc,
    Free,
    /// No request was issued (the free of a block whose allocation failed); the core's
    /// clock still reaches the arrival time.
    Nothing,
    /// The allocation of probe `k` (its index in the probe list).
    ProbeAlloc(u8),
    /// The release of a probe's block (not recorded).
    ProbeFree,
}

/// `End`'s `pfn` when no block was handed out.
pub(crate) const NO_BLOCK: u64 = u64::MAX;

/// Recorded events and the lines their `Lines` events take, in order.
#[derive(Default)]
pub struct Batch {
    pub events: Vec<Event>,
    pub lines: Vec<u64>,
}

impl Batch {
    pub fn clear(&mut self) {
        self.events.clear();
        self.lines.clear();
    }
}

/// Lock release times and owners, a clock and the machine's caches: everything time-
/// dependent.
pub(crate) struct Timing {
    cost: CostTable,
    machine: Option<Box<MachineState>>,
    /// Modelled cycle clock of the request in progress.
    pub now: u64,
    core: usize,
    lock_free_at: Vec<u64>,
    lock_owner: Vec<u16>,
    /// Lock acquisitions that waited, and the cycles they waited.
    pub contended_locks: u64,
    pub wait_cycles: u64,
}

const NO_OWNER: u16 = u16::MAX;

/// How far [`Timing::next_mark`] has timed a batch: its next event and next line.
#[derive(Default)]
pub(crate) struct Cursor {
    event: usize,
    line: usize,
}

impl Timing {
    /// Lines at the flat `cost.line_cycles`, or through `machine`'s caches.
    pub(crate) fn new(cost: CostTable, machine: Option<(AllocMachine, u64)>) -> Timing {
        Timing {
            cost,
            machine: machine.map(|(m, seed)| Box::new(MachineState::new(m, seed))),
            now: 0,
            core: 0,
            lock_free_at: Vec::new(),
            lock_owner: Vec::new(),
            contended_locks: 0,
            wait_cycles: 0,
        }
    }

    /// Time `b`'s events in order. `mark` sees the request markers (`Begin` after the
    /// core is switched, so it can set the start time; `End` after its cycles; `Probe`,
    /// `WorkloadDone`), which carry no time of their own.
    pub(crate) fn run(&mut self, b: &Batch, mut mark: impl FnMut(&mut Timing, Event)) {
        let mut at = Cursor::default();
        while let Some(e) = self.next_mark(b, &mut at) {
            mark(self, e);
        }
    }

    /// Time `b`'s events from `at` up to the next request marker (see [`Timing::run`]) and
    /// return it; `None` at the end of the batch. The caller handles the marker in its own
    /// loop (a closure called per marker cost more host instructions than the handling).
    #[inline(always)]
    pub(crate) fn next_mark(&mut self, b: &Batch, at: &mut Cursor) -> Option<Event> {
        while let Some(&e) = b.events.get(at.event) {
            at.event += 1;
            match e {
                Event::Lines(n) => {
                    let end = at.line + n as usize;
                    self.lines(&b.lines[at.line..end]);
                    at.line = end;
                }
                Event::Cycles(c) => self.now += c,
                Event::Lock { cycles, id, cpu } => {
                    self.now += cycles as u64;
                    self.lock(id as usize, cpu);
                }
                Event::Unlock { cycles, id } => {
                    self.now += cycles as u64;
                    self.lock_free_at[id as usize] = self.now;
                }
                Event::Begin { core, .. } => {
                    self.core = core as usize;
                    return Some(e);
                }
                Event::End { cycles, .. } => {
                    self.now += cycles as u64;
                    return Some(e);
                }
                Event::Probe | Event::WorkloadDone => return Some(e),
            }
        }
        None
    }

    /// The accesses of the current core to `lines`.
    #[inline]
    fn lines(&mut self, lines: &[u64]) {
        match self.machine.as_mut() {
            Some(m) => self.now += m.access_lines(self.core, lines),
            None => self.now += lines.len() as u64 * self.cost.line_cycles,
        }
    }

    /// Wait until lock `id`'s last holder released it (unless that was `cpu` itself).
    #[inline]
    fn lock(&mut self, id: usize, cpu: u16) {
        if id >= self.lock_free_at.len() || id >= self.lock_owner.len() {
            self.grow_locks(id);
        }
        let free_at = self.lock_free_at[id];
        if free_at > self.now && self.lock_owner[id] != cpu {
            self.contended_locks += 1;
            self.wait_cycles += free_at - self.now;
            self.now = free_at;
        }
        self.lock_owner[id] = cpu;
    }

    /// Room for lock `id` (locks are numbered densely from 0).
    #[cold]
    fn grow_locks(&mut self, id: usize) {
        self.lock_free_at.resize(id + 1, 0);
        self.lock_owner.resize(id + 1, NO_OWNER);
    }

    /// The application's work on the current core after a request (see
    /// [`MachineState::pollute`]); not charged to the request.
    pub(crate) fn after_request(&mut self, handed_out: Option<(u64, u8)>) {
        if let Some(m) = self.machine.as_mut() {
            m.pollute(self.core, handed_out);
        }
    }

    /// Where the lines came from (all zero without a machine).
    pub(crate) fn sources(&self) -> LineSources {
        self.machine
            .as_ref()
            .map(|m| m.sources())
            .unwrap_or_default()
    }
}

/// The block an `End` event hands out.
pub(crate) fn handed_out(pfn: u64, order: u8) -> Option<(u64, u8)> {
    (pfn != NO_BLOCK).then_some((pfn, order))
}
