//! Flash operations and the dies and channels that serve them.

/// What a flash operation does (a page read or program, or a block erase).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Program,
    Erase,
}

/// One operation on die `die`: `array_ns` in the die, `xfer_ns` on its channel (data out
/// after a read, data in before a program; none for an erase).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlashOp {
    pub kind: OpKind,
    pub die: u32,
    pub array_ns: u64,
    pub xfer_ns: u64,
}

impl FlashOp {
    /// Time the op takes on idle units.
    pub fn ns(&self) -> u64 {
        match self.kind {
            OpKind::Erase => self.array_ns,
            _ => self.array_ns + self.xfer_ns,
        }
    }
}

/// Busy-until times of every die and channel; die `d` is on channel `d % channels`.
#[derive(Debug, Clone)]
pub struct Units {
    die_free_ns: Vec<u64>,
    chan_free_ns: Vec<u64>,
}

impl Units {
    pub fn new(channels: u32, dies: u32) -> Units {
        Units {
            die_free_ns: vec![0; dies as usize],
            chan_free_ns: vec![0; channels as usize],
        }
    }

    /// Runs `op` no earlier than `t_ns`, after the units it needs are free; returns its end.
    pub fn run(&mut self, op: &FlashOp, t_ns: u64) -> u64 {
        let d = op.die as usize;
        let c = d % self.chan_free_ns.len();
        match op.kind {
            OpKind::Read => {
                let a = t_ns.max(self.die_free_ns[d]) + op.array_ns;
                let x = a.max(self.chan_free_ns[c]) + op.xfer_ns;
                self.chan_free_ns[c] = x;
                self.die_free_ns[d] = x;
                x
            }
            OpKind::Program => {
                let x = t_ns.max(self.chan_free_ns[c]).max(self.die_free_ns[d]) + op.xfer_ns;
                self.chan_free_ns[c] = x;
                let a = x + op.array_ns;
                self.die_free_ns[d] = a;
                a
            }
            OpKind::Erase => {
                let a = t_ns.max(self.die_free_ns[d]) + op.array_ns;
                self.die_free_ns[d] = a;
                a
            }
        }
    }

    /// Runs one request's `ops` from `t_ns` and returns when the last ends. Reads need
    /// nothing earlier (the controller issues them at once); a program follows the op
    /// before it (the read of the page it copies, or the previous step); erases follow
    /// every non-erase op before them (a victim is erased after its pages are copied).
    /// Ops on one die or channel queue in list order.
    pub fn schedule(&mut self, ops: &[FlashOp], t_ns: u64) -> u64 {
        let (mut prev, mut barrier, mut last) = (t_ns, t_ns, t_ns);
        for op in ops {
            let start = match op.kind {
                OpKind::Read => t_ns,
                OpKind::Program => prev,
                OpKind::Erase => barrier,
            };
            let end = self.run(op, start);
            if op.kind != OpKind::Erase {
                barrier = barrier.max(end);
            }
            prev = end;
            last = last.max(end);
        }
        last
    }

    /// What [`schedule`](Self::schedule) would take on idle units: the device's estimate.
    pub fn idle_span(&self, ops: &[FlashOp]) -> u64 {
        self.idle().schedule(ops, 0)
    }

    fn idle(&self) -> Units {
        Units::new(
            self.chan_free_ns.len() as u32,
            self.die_free_ns.len() as u32,
        )
    }

    /// As [`schedule`](Self::schedule), but returns when the request's data no longer
    /// needs its source buffer: a program counts as done once its page is in the die's page
    /// register (its array time still occupies the die), every other op when it ends.
    pub fn schedule_released(&mut self, ops: &[FlashOp], t_ns: u64) -> u64 {
        let (mut prev, mut barrier, mut released) = (t_ns, t_ns, t_ns);
        for op in ops {
            let start = match op.kind {
                OpKind::Read => t_ns,
                OpKind::Program => prev,
                OpKind::Erase => barrier,
            };
            let end = self.run(op, start);
            if op.kind != OpKind::Erase {
                barrier = barrier.max(end);
            }
            prev = end;
            let free = match op.kind {
                OpKind::Program => end - op.array_ns,
                _ => end,
            };
            released = released.max(free);
        }
        released
    }

    /// What [`schedule_released`](Self::schedule_released) would take on idle units.
    pub fn idle_released(&self, ops: &[FlashOp]) -> u64 {
        self.idle().schedule_released(ops, 0)
    }
}
