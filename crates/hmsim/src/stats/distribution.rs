//! A distribution of integer values (modelled cycles, nanoseconds): an HDR histogram for
//! quantiles (3 significant digits) beside exact running moments for mean and σ.

use hdrhistogram::Histogram;
use serde::Serialize;

use super::Moments;

/// Count, mean, σ and quantiles of a distribution: the one summary every module reports,
/// in the unit its values were recorded in, or in a larger one ([`Summary::per`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct Summary {
    pub count: u64,
    pub mean: f64,
    /// Population standard deviation.
    pub std: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub p99999: f64,
    pub max: f64,
}

impl Summary {
    /// From a histogram alone: mean and σ of the recorded values up to `limit` (each value
    /// at its bucket's median, i.e. 3 significant digits), count, quantiles and max over
    /// every value. Leaves rare outliers (a host's page fault or preemption) out of the
    /// moments without hiding them from the tail.
    pub fn of_histogram_up_to(h: &Histogram<u64>, limit: u64) -> Summary {
        let mut m = Moments::default();
        for v in h.iter_recorded() {
            let x = h.median_equivalent(v.value_iterated_to());
            if x <= limit {
                m.add_weighted(x as f64, v.count_at_value());
            }
        }
        if m.count() == 0 {
            return Summary::default();
        }
        Summary {
            count: h.len(),
            ..Summary::of(h, &m)
        }
    }

    fn of(h: &Histogram<u64>, m: &Moments) -> Summary {
        Summary {
            count: m.count(),
            mean: m.mean(),
            std: m.std_dev(),
            p50: h.value_at_quantile(0.5) as f64,
            p99: h.value_at_quantile(0.99) as f64,
            p999: h.value_at_quantile(0.999) as f64,
            p99999: h.value_at_quantile(0.99999) as f64,
            max: h.max() as f64,
        }
    }

    /// The same distribution in a unit `per` recorded units large (ns to µs: `per(1e3)`);
    /// each value is divided, not multiplied by a reciprocal, so it is the value a reader
    /// converting by hand gets.
    pub fn per(&self, per: f64) -> Summary {
        Summary {
            count: self.count,
            mean: self.mean / per,
            std: self.std / per,
            p50: self.p50 / per,
            p99: self.p99 / per,
            p999: self.p999 / per,
            p99999: self.p99999 / per,
            max: self.max / per,
        }
    }
}

/// `(quantile, value)` of a histogram at each of `qs`; empty for an empty histogram.
pub fn quantiles(h: &Histogram<u64>, qs: &[f64]) -> Vec<(f64, u64)> {
    if h.is_empty() {
        return Vec::new();
    }
    qs.iter().map(|&q| (q, h.value_at_quantile(q))).collect()
}

/// Recorded values with their histogram and moments.
#[derive(Clone)]
pub struct IntHistogram {
    hist: Histogram<u64>,
    moments: Moments,
}

impl IntHistogram {
    /// Values from 1 to `max_value` at 3 significant digits; larger ones saturate in the
    /// histogram (the moments keep them exactly).
    pub fn new(max_value: u64) -> IntHistogram {
        IntHistogram {
            hist: Histogram::new_with_bounds(1, max_value, 3).expect("valid bounds"),
            moments: Moments::default(),
        }
    }

    /// Records `v` (a 0 counts as 1 in the histogram, whose lowest value is 1, and as 0 in
    /// the moments).
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.hist.saturating_record(v.max(1));
        self.moments.add(v as f64);
    }

    /// Records `v` in the histogram and `exact` (the unrounded value `v` stands for) in the
    /// moments.
    #[inline]
    pub fn record_exact(&mut self, v: u64, exact: f64) {
        self.hist.saturating_record(v.max(1));
        self.moments.add(exact);
    }

    pub fn histogram(&self) -> &Histogram<u64> {
        &self.hist
    }

    pub fn moments(&self) -> &Moments {
        &self.moments
    }

    pub fn summary(&self) -> Summary {
        if self.moments.count() == 0 {
            return Summary::default();
        }
        Summary::of(&self.hist, &self.moments)
    }
}

/// An [`IntHistogram`] for hot loops: values below a bound are counted in a flat table (an
/// index and an increment, not the histogram's bucket arithmetic) and moved into the
/// histogram by [`TabledIntHistogram::finish`]; the moments take every value as it comes,
/// in order. The result is what recording each value gives: a histogram's counts, total,
/// minimum and maximum do not depend on the order its values arrive in.
pub struct TabledIntHistogram {
    inner: IntHistogram,
    /// Count of each value below `table.len()` not yet in the histogram.
    table: Vec<u64>,
}

impl TabledIntHistogram {
    /// [`IntHistogram::new`]`(max_value)`, values below `tabled` counted in the table.
    pub fn new(max_value: u64, tabled: usize) -> TabledIntHistogram {
        TabledIntHistogram {
            inner: IntHistogram::new(max_value),
            table: vec![0; tabled],
        }
    }

    /// [`IntHistogram::record`].
    #[inline]
    pub fn record(&mut self, v: u64) {
        match self.table.get_mut(v as usize) {
            Some(n) => {
                *n += 1;
                self.inner.moments.add(v as f64);
            }
            None => self.inner.record(v),
        }
    }

    /// The histogram with every value recorded.
    pub fn finish(mut self) -> IntHistogram {
        for (v, &n) in self.table.iter().enumerate() {
            if n > 0 {
                // As `IntHistogram::record`: a 0 counts as 1 in the histogram.
                self.inner.hist.saturating_record_n((v as u64).max(1), n);
            }
        }
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tabled_histogram_equals_recording_each_value() {
        let (mut a, mut b) = (
            IntHistogram::new(1 << 30),
            TabledIntHistogram::new(1 << 30, 64),
        );
        // Zeros, tabled values, values beyond the table and beyond the histogram, mixed.
        for v in [0, 1, 5, 63, 64, 1000, 5, 0, 1 << 31, 7, 63, 200_000] {
            a.record(v);
            b.record(v);
        }
        let b = b.finish();
        assert_eq!(a.summary(), b.summary());
        assert_eq!(a.moments(), b.moments());
        assert_eq!(a.histogram(), b.histogram());
        assert_eq!(a.histogram().min_nz(), b.histogram().min_nz());
    }

    #[test]
    fn summary_of_one_to_a_thousand() {
        let mut d = IntHistogram::new(1 << 20);
        for v in 1..=1000 {
            d.record(v);
        }
        let s = d.summary();
        assert_eq!((s.count, s.mean, s.max), (1000, 500.5, 1000.0));
        // σ of the discrete uniform 1..=n: sqrt((n² − 1)/12).
        assert!((s.std - (999_999f64 / 12.0).sqrt()).abs() < 1e-9);
        assert_eq!((s.p50, s.p99, s.p999), (500.0, 990.0, 999.0));
        // In thousands: each value divided.
        let k = s.per(1e3);
        assert_eq!((k.count, k.mean, k.p50, k.max), (1000, 0.5005, 0.5, 1.0));
        assert_eq!(
            quantiles(d.histogram(), &[0.5, 1.0]),
            vec![(0.5, 500), (1.0, 1000)]
        );
    }

    #[test]
    fn outliers_above_the_limit_stay_out_of_the_moments_only() {
        let mut d = IntHistogram::new(1 << 30);
        for _ in 0..99 {
            d.record(100);
        }
        d.record(1_000_000);
        let s = Summary::of_histogram_up_to(d.histogram(), 10_000);
        assert_eq!((s.count, s.mean, s.std), (100, 100.0, 0.0));
        assert!(s.max >= 1e6 && s.p50 == 100.0);
        assert_eq!(
            Summary::of_histogram_up_to(d.histogram(), 10),
            Summary::default()
        );
    }

    #[test]
    fn empty_distribution() {
        let d = IntHistogram::new(1000);
        assert_eq!(d.summary(), Summary::default());
        assert!(quantiles(d.histogram(), &[0.5]).is_empty());
    }
}
