//! How many bins uniformly random draws came from, from how often the bins repeat: `w`
//! draws that land in `d` distinct bins of `f` equally likely ones leave, on average,
//! d = f · (1 − e^(−w/f)) bins used (the classical occupancy problem), so `f` is the root of
//! that equation. With it, the Poisson tail says how many bins uniform draws put `k` or more
//! in: the check that the draws were uniform at all.

/// The number of equally likely bins `writes` uniform draws that used `distinct` bins came
/// from (the root of distinct = f · (1 − e^(−writes/f))). None without a repeat
/// (`distinct == writes`: any f far above `writes` fits) or for impossible counts.
pub fn bins_from_repeats(distinct: u64, writes: u64) -> Option<f64> {
    if distinct == 0 || distinct >= writes {
        return None;
    }
    let (d, w) = (distinct as f64, writes as f64);
    let used = |f: f64| -f * (-w / f).exp_m1();
    // `used` grows with f from below d (at f = d) towards w: bisect in log space.
    let (mut lo, mut hi) = (d, d);
    while used(hi) < d {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if used(mid) < d {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi / lo < 1.0 + 1e-12 {
            break;
        }
    }
    Some((lo * hi).sqrt())
}

/// P(X ≥ k) for X Poisson with mean `lambda`, summed from k up (no cancellation for the
/// small means of sparse draws).
pub fn poisson_tail(lambda: f64, k: u32) -> f64 {
    if lambda <= 0.0 {
        return if k == 0 { 1.0 } else { 0.0 };
    }
    // The k-th term e^(−λ) λ^k / k!, then the following ones until they vanish.
    let mut term = (-lambda).exp();
    for i in 1..=k {
        term *= lambda / i as f64;
    }
    let mut sum = 0.0;
    let mut i = k;
    while term > sum * 1e-17 && i < k + 10_000 {
        sum += term;
        i += 1;
        term *= lambda / i as f64;
    }
    sum.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bins_are_recovered_from_the_expected_repeats() {
        for &(f, w) in &[(1e6f64, 2e5f64), (6.7e7, 2e6), (1e4, 1e5), (500.0, 400.0)] {
            let d: f64 = -f * (-w / f).exp_m1();
            let got = bins_from_repeats(d.round() as u64, w as u64).unwrap();
            // d is rounded to a whole count: a few bins' worth of error at the smallest.
            assert!((got / f - 1.0).abs() < 5e-3, "{f}: {got}");
        }
        assert_eq!(bins_from_repeats(100, 100), None);
        assert_eq!(bins_from_repeats(0, 100), None);
    }

    #[test]
    fn the_poisson_tail_is_the_closed_form() {
        let l: f64 = 0.03;
        let closed = 1.0 - (-l).exp() * (1.0 + l + l * l / 2.0);
        assert!((poisson_tail(l, 3) / closed - 1.0).abs() < 1e-6);
        assert!((poisson_tail(2.0, 0) - 1.0).abs() < 1e-12);
        assert!((poisson_tail(2.0, 1) - (1.0 - (-2.0f64).exp())).abs() < 1e-12);
        assert!((poisson_tail(1e-4, 3) / (1e-12 / 6.0) - 1.0).abs() < 1e-3);
    }

    #[test]
    fn uniform_draws_repeat_as_the_bins_predict() {
        use rand::Rng;
        let mut rng = crate::rng::stream(1, "occupancy");
        let f = 200_000u64;
        let mut bins = vec![0u32; f as usize];
        let w = 60_000u64;
        for _ in 0..w {
            bins[rng.random_range(0..f) as usize] += 1;
        }
        let d = bins.iter().filter(|&&n| n > 0).count() as u64;
        let est = bins_from_repeats(d, w).unwrap();
        assert!((est / f as f64 - 1.0).abs() < 0.05, "{est}");
        let three = bins.iter().filter(|&&n| n >= 3).count() as f64;
        let expected = est * poisson_tail(w as f64 / est, 3);
        assert!(
            (three - expected).abs() < 4.0 * expected.sqrt() + 3.0,
            "{three} vs {expected}"
        );
    }
}
