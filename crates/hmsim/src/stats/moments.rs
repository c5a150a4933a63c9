//! Running mean and standard deviation: count, sum and sum of squares, one pass.
//!
//! The variance is the population one, `E[x²] − mean²` (clamped at 0 against rounding),
//! which is what the studies report as σ. For the value ranges the models produce (cycle
//! counts up to ~10¹², allocation counts) the cancellation error of the one-pass formula
//! is far below the quantities reported.

/// Moments of a stream of (optionally weighted) values.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Moments {
    count: u64,
    sum: f64,
    sum_sq: f64,
}

impl Moments {
    /// Adds one value.
    #[inline]
    pub fn add(&mut self, x: f64) {
        self.add_weighted(x, 1);
    }

    /// Adds `x` as `weight` equal values (a histogram bucket).
    #[inline]
    pub fn add_weighted(&mut self, x: f64, weight: u64) {
        let w = weight as f64;
        self.count += weight;
        self.sum += w * x;
        self.sum_sq += w * x * x;
    }

    /// Moments of every value of `xs`.
    pub fn of(xs: impl IntoIterator<Item = f64>) -> Moments {
        let mut m = Moments::default();
        for x in xs {
            m.add(x);
        }
        m
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// Arithmetic mean; 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    /// Population variance; 0 when empty.
    pub fn variance(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let mean = self.mean();
        (self.sum_sq / self.count as f64 - mean * mean).max(0.0)
    }

    /// Population standard deviation σ; 0 when empty.
    pub fn std_dev(&self) -> f64 {
        self.variance().sqrt()
    }

    /// Coefficient of variation σ/mean; 0 when the mean is 0.
    pub fn cov(&self) -> f64 {
        let mean = self.mean();
        if mean > 0.0 {
            self.std_dev() / mean
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn closed_form_of_a_small_sample() {
        let m = Moments::of([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(m.count(), 8);
        assert_eq!(m.mean(), 5.0);
        assert_eq!(m.std_dev(), 2.0);
        assert_eq!(m.cov(), 0.4);
    }

    #[test]
    fn empty_is_all_zero() {
        let m = Moments::default();
        assert_eq!((m.mean(), m.std_dev(), m.cov()), (0.0, 0.0, 0.0));
    }

    proptest! {
        #[test]
        fn weights_equal_repeats(xs in prop::collection::vec((0u32..1_000_000, 1u64..20), 1..50)) {
            let mut w = Moments::default();
            let mut r = Moments::default();
            for &(x, k) in &xs {
                w.add_weighted(x as f64, k);
                for _ in 0..k {
                    r.add(x as f64);
                }
            }
            prop_assert_eq!(w.count(), r.count());
            // Integer-valued samples below 2^53: both sums are exact.
            prop_assert_eq!(w.mean(), r.mean());
            prop_assert!((w.std_dev() - r.std_dev()).abs() <= 1e-9 * (1.0 + r.std_dev()));
            let lo = xs.iter().map(|x| x.0).min().unwrap() as f64;
            let hi = xs.iter().map(|x| x.0).max().unwrap() as f64;
            prop_assert!(lo <= w.mean() && w.mean() <= hi);
            prop_assert!(w.std_dev() <= (hi - lo) / 2.0 + 1e-6);
        }
    }
}
