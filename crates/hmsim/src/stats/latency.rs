//! Latencies in ns, summarised in µs: the one distribution type ([`IntHistogram`]) with the
//! exact running mean of the unrounded latencies.

use super::{IntHistogram, Summary};
use crate::units::NS_PER_US;

/// 1 ns to 1 hour at 3 significant digits; longer latencies saturate at 1 hour (the mean
/// keeps them exactly).
const MAX_NS: u64 = 3_600_000_000_000;

#[derive(Clone)]
pub struct LatencyHistogram(IntHistogram);

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram(IntHistogram::new(MAX_NS))
    }
}

impl LatencyHistogram {
    #[inline]
    pub fn record_ns(&mut self, ns: f64) {
        self.0.record_exact(ns.max(1.0) as u64, ns);
    }

    /// The latencies in µs; the mean is the exact running mean of the unrounded latencies
    /// (Little's law checks), not the bucketed one.
    pub fn summary(&self) -> Summary {
        self.0.summary().per(NS_PER_US)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = LatencyHistogram::default();
        for i in 1..=1000 {
            h.record_ns(i as f64 * 1000.0);
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert!((s.mean - 500.5).abs() < 1e-9);
        assert!((s.p50 - 500.0).abs() / 500.0 < 0.002, "{s:?}");
        assert!((s.p99 - 990.0).abs() / 990.0 < 0.002);
    }
}
