//! Copy traffic through the engine: a page copy is a streaming source that reads one tier
//! and writes another, so its lines split between the two by their loaded latencies.

use super::LINE_BYTES;

/// One direction of copy traffic in a quantum: `lines` in flight on average (threads ×
/// lines per thread × the share of the quantum they spent streaming in this direction).
#[derive(Debug, Clone, PartialEq)]
pub struct CopyFlow {
    pub from: usize,
    pub to: usize,
    pub lines: f64,
}

impl CopyFlow {
    /// Lines in flight (reads on `from`, writes on `to`) at latencies `lat`: by Little's law
    /// each line spends L_from reading and L_to writing.
    pub fn split(&self, lat: &[f64]) -> (f64, f64) {
        let (ls, ld) = (lat[self.from], lat[self.to]);
        let cycle = ls + ld;
        (self.lines * ls / cycle, self.lines * ld / cycle)
    }

    /// Bytes copied per ns at latencies `lat`.
    pub fn bytes_per_ns(&self, lat: &[f64]) -> f64 {
        self.lines * LINE_BYTES / (lat[self.from] + lat[self.to])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_splits_lines_by_latency() {
        let f = CopyFlow {
            from: 1,
            to: 0,
            lines: 31.0,
        };
        let (r, w) = f.split(&[70.0, 140.0]);
        assert!((r + w - 31.0).abs() < 1e-12);
        assert!((r - 2.0 * w).abs() < 1e-12);
        assert!((f.bytes_per_ns(&[70.0, 140.0]) - 31.0 * 64.0 / 210.0).abs() < 1e-12);
    }
}
