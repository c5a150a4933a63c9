//! Loaded-latency curves: latency factor (loaded ÷ unloaded) as a function of utilisation
//! (bandwidth ÷ saturation bandwidth), piecewise linear between points.

use serde::{Deserialize, Serialize};

/// MESS curve from the spec (05-tiering.md §1): Skylake 6×DDR4-2666, 100 % reads, latency in
/// CPU cycles, unloaded 94. Points are (bandwidth GB/s, latency cycles); we normalise
/// bandwidth by the last point (115.5 GB/s, the saturation) and latency by 94.
const MESS_SKYLAKE: [(f64, f64); 11] = [
    (8.0, 94.0),
    (30.0, 103.0),
    (50.0, 108.0),
    (72.0, 117.0),
    (83.0, 122.0),
    (93.0, 128.0),
    (101.0, 136.0),
    (107.0, 145.0),
    (111.0, 155.0),
    (114.0, 174.0),
    (115.5, 220.0),
];
const MESS_UNLOADED: f64 = 94.0;
const MESS_SATURATION_GB_S: f64 = 115.5;

/// (utilisation, latency factor) points, utilisation strictly increasing in [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LatencyCurve {
    pub points: Vec<(f64, f64)>,
}

impl Default for LatencyCurve {
    fn default() -> Self {
        Self::mess()
    }
}

impl LatencyCurve {
    /// The normalised MESS curve, starting at (0, 1).
    pub fn mess() -> Self {
        let mut points = vec![(0.0, 1.0)];
        points.extend(
            MESS_SKYLAKE
                .iter()
                .map(|&(bw, lat)| (bw / MESS_SATURATION_GB_S, lat / MESS_UNLOADED)),
        );
        LatencyCurve { points }
    }

    /// Why a user curve is unusable, if it is.
    pub fn problem(&self) -> Option<String> {
        if self.points.len() < 2 {
            return Some("needs at least 2 (utilisation, factor) points".into());
        }
        if self
            .points
            .iter()
            .any(|(u, f)| !u.is_finite() || !f.is_finite())
        {
            return Some("utilisations and factors must be finite numbers".into());
        }
        for w in self.points.windows(2) {
            if w[1].0 <= w[0].0 {
                return Some("utilisations must increase strictly".into());
            }
            if w[1].1 < w[0].1 {
                return Some("latency factors must not decrease".into());
            }
        }
        let (u0, f0) = self.points[0];
        let (un, _) = self.points[self.points.len() - 1];
        if !(0.0..=1.0).contains(&u0) || !(0.0..=1.0).contains(&un) || un < 0.5 {
            return Some("utilisations must lie in 0..1 and reach at least 0.5".into());
        }
        if !(f0 >= 1.0 && f0.is_finite()) {
            return Some("latency factors must be finite and at least 1".into());
        }
        None
    }

    /// Latency factor at utilisation `u`: 1 below the first point's factor is not extrapolated
    /// (the first factor holds), the last factor holds beyond the last point.
    pub fn factor(&self, u: f64) -> f64 {
        let p = &self.points;
        if u <= p[0].0 {
            return p[0].1;
        }
        for w in p.windows(2) {
            let ((u0, f0), (u1, f1)) = (w[0], w[1]);
            if u <= u1 {
                return f0 + (f1 - f0) * (u - u0) / (u1 - u0);
            }
        }
        p[p.len() - 1].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mess_is_normalised_and_monotone() {
        let c = LatencyCurve::mess();
        assert!(c.problem().is_none());
        assert_eq!(c.factor(0.0), 1.0);
        assert!((c.factor(1.0) - 220.0 / 94.0).abs() < 1e-12);
        let mut last = 0.0;
        for i in 0..=100 {
            let f = c.factor(i as f64 / 100.0);
            assert!(f >= last);
            last = f;
        }
    }

    #[test]
    fn bad_curves_are_named() {
        for points in [
            vec![(0.0, 1.0), (0.0, 2.0)],
            vec![(0.0, 1.0), (0.6, f64::NAN)],
            vec![(0.0, 0.5), (0.6, 2.0)],
            vec![(0.0, 1.0), (0.3, 2.0)],
        ] {
            assert!(LatencyCurve { points }.problem().is_some());
        }
    }
}
