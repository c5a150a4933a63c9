//! Progress of long work, reported to whoever started it (a terminal bar, or nothing).

/// Receives progress: `start` once per phase, then `advance` as work completes.
pub trait Progress: Sync {
    /// A phase of `total` units (`"records"`, `"simulated s"`, …) begins.
    fn start(&self, total: u64, unit: &str);
    /// `n` more units are done.
    fn advance(&self, n: u64);
}

/// Progress nobody watches.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _total: u64, _unit: &str) {}
    fn advance(&self, _n: u64) {}
}
