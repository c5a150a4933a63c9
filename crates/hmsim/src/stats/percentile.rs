//! Percentiles of a sorted sample.

/// The `q` quantile (0..=1) of an ascending `sorted` sample by the nearest-rank rule on
/// the index `(n − 1)·q` rounded half away from zero (so `q = 1` is the maximum);
/// `None` when the sample is empty.
pub fn nearest_rank(sorted: &[u64], q: f64) -> Option<u64> {
    let last = sorted.len().checked_sub(1)?;
    sorted.get((last as f64 * q).round() as usize).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_of_a_small_sample() {
        let s = [10, 20, 30, 40, 50];
        assert_eq!(nearest_rank(&s, 0.0), Some(10));
        assert_eq!(nearest_rank(&s, 0.5), Some(30));
        assert_eq!(nearest_rank(&s, 0.99), Some(50));
        assert_eq!(nearest_rank(&s, 1.0), Some(50));
        assert_eq!(nearest_rank(&[], 0.5), None);
    }

    /// The median is the upper middle element, `sorted[n / 2]`, for every length (the
    /// rank `(n − 1)/2` rounds half up).
    #[test]
    fn the_median_is_the_element_at_half_the_length() {
        for n in 1..200u64 {
            let s: Vec<u64> = (0..n).map(|i| i * 3).collect();
            assert_eq!(nearest_rank(&s, 0.5), Some(s[n as usize / 2]), "{n}");
        }
    }
}
