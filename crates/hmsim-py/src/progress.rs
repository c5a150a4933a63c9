//! The core's progress, forwarded to a Python receiver (`hmsim.progress.CoreProgress`).
//!
//! The core reports often (every batch of records); Python is called only when 1 % of the
//! phase is done or 0.2 s have passed, so the GIL is taken a few hundred times per run at
//! most, whatever the run's length.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use hmsim::scenario::Progress;
use pyo3::prelude::*;

/// Longest quiet interval between two calls into Python.
const MAX_QUIET: Duration = Duration::from_millis(200);

struct Pending {
    /// Units done since the last call into Python.
    units: u64,
    /// Units worth a call regardless of time: 1 % of the phase.
    step: u64,
    last_call: Instant,
}

/// A [`Progress`] that calls `receiver.start(total, unit)` and `receiver.advance(n)`.
pub struct PyProgress {
    receiver: Py<PyAny>,
    pending: Mutex<Pending>,
}

impl PyProgress {
    pub fn new(receiver: Py<PyAny>) -> Self {
        PyProgress {
            receiver,
            pending: Mutex::new(Pending {
                units: 0,
                step: u64::MAX,
                last_call: Instant::now(),
            }),
        }
    }
}

impl Progress for PyProgress {
    fn start(&self, total: u64, unit: &str) {
        {
            let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            p.units = 0;
            p.step = if total == 0 {
                u64::MAX
            } else {
                total.div_ceil(100)
            };
            p.last_call = Instant::now();
        }
        // A failing receiver (a closed terminal) must not fail the simulation: drop its error.
        Python::attach(|py| {
            let _ = self.receiver.call_method1(py, "start", (total, unit));
        });
    }

    fn advance(&self, n: u64) {
        let due = {
            let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            p.units += n;
            if p.units >= p.step || p.last_call.elapsed() >= MAX_QUIET {
                p.last_call = Instant::now();
                std::mem::take(&mut p.units)
            } else {
                0
            }
        };
        if due > 0 {
            Python::attach(|py| {
                let _ = self.receiver.call_method1(py, "advance", (due,));
            });
        }
    }
}
