//! Latencies in ns, summarised in µs: the one distribution type ([`IntHistogram`]) with the
//! exact running mean of the unrounded latencies.

use serde::Serialize;

use super::IntHistogram;

/// 1 ns to 1 hour at 3 significant digits; longer latencies saturate at 1 hour (the mean
/// keeps them exactly).
const MAX_NS: u64 = 3_600_000_000_000;

pub struct LatencyHistogram(IntHistogram);

#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub p99999_us: f64,
    pub max_us: f64,
}

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

    pub fn summary(&self) -> LatencySummary {
        let h = self.0.histogram();
        let q = |p: f64| h.value_at_quantile(p) as f64 / 1e3;
        LatencySummary {
            count: h.len(),
            // Exact mean from the running sum, not the bucketed one (Little's law checks).
            mean_us: self.0.moments().mean() / 1e3,
            p50_us: q(0.50),
            p99_us: q(0.99),
            p999_us: q(0.999),
            p99999_us: q(0.99999),
            max_us: h.max() as f64 / 1e3,
        }
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
        assert!((s.mean_us - 500.5).abs() < 1e-9);
        assert!((s.p50_us - 500.0).abs() / 500.0 < 0.002, "{s:?}");
        assert!((s.p99_us - 990.0).abs() / 990.0 < 0.002);
    }
}
