//! The timing side of the cost model. An allocator's code path does not depend on time:
//! which lines it touches, which locks it takes and what it hands out follow from the
//! request stream alone. So the paths run first and record what they did as [`Event`]s
//! (the functional side, [`super::cost::Ctx`]), and a [`Timing`] turns the events into
//! modelled cycles: each line through the machine's caches, the instructions around them,
//! lock waits against the other cores' release times. The driver replays the events of many
//! requests at once (or on another host thread, as they are made): the same answers as
//! timing each access as it happens, with the cache model's work in one tight loop.

use super::cost::CostTable;
use super::machine::{AllocMachine, LineSources, MachineState};

/// What a request's code path did, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A line the request touched for the first time (a line number: address / 64).
    Line(u64),
    /// Cycles of instructions.
    Cycles(u64),
    /// Acquire lock `id` for `cpu`: wait until its last holder released it.
    Lock { id: u32, cpu: u16 },
    /// Release lock `id`.
    Unlock(u32),
    /// A request starts on `core`, arriving at `arrival` cycles (the driver starts it at
    /// `max(core clock, arrival)`; outside the driver only the core matters).
    Begin { core: u16, arrival: u64 },
    /// The request ends: what to record, and the block handed out (`NO_BLOCK` if none),
    /// which the application then zeroes.
    End { record: Record, pfn: u64, order: u8 },
    /// A probe request after the workload: core 0, starting when the last core finished.
    Probe,
    /// The workload's requests are all issued (the probes follow).
    WorkloadDone,
}

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
pub const NO_BLOCK: u64 = u64::MAX;

/// Lock release times and owners, a clock and the machine's caches: everything time-
/// dependent.
pub struct Timing {
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

impl Timing {
    /// Lines at the flat `cost.line_cycles`, or through `machine`'s caches.
    pub fn new(cost: CostTable, machine: Option<(AllocMachine, u64)>) -> Timing {
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

    /// Advance the clock by one event (`End` and `Probe` are the driver's: no time here).
    #[inline]
    pub fn apply(&mut self, e: Event) {
        match e {
            Event::Line(line) => {
                self.now += match self.machine.as_mut() {
                    Some(m) => m.access(self.core, line << 6),
                    None => self.cost.line_cycles,
                }
            }
            Event::Cycles(c) => self.now += c,
            Event::Lock { id, cpu } => self.lock(id as usize, cpu),
            Event::Unlock(id) => self.lock_free_at[id as usize] = self.now,
            Event::Begin { core, .. } => self.core = core as usize,
            Event::End { .. } | Event::Probe | Event::WorkloadDone => {}
        }
    }

    /// Wait until lock `id`'s last holder released it (unless that was `cpu` itself).
    fn lock(&mut self, id: usize, cpu: u16) {
        if id >= self.lock_free_at.len() {
            self.lock_free_at.resize(id + 1, 0);
            self.lock_owner.resize(id + 1, NO_OWNER);
        }
        let free_at = self.lock_free_at[id];
        if free_at > self.now && self.lock_owner[id] != cpu {
            self.contended_locks += 1;
            self.wait_cycles += free_at - self.now;
            self.now = free_at;
        }
        self.lock_owner[id] = cpu;
    }

    /// The application's work on the current core after a request (see
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
}
