//! Loaded-latency curves: latency factor (loaded ÷ unloaded) as a function of utilisation
//! (bandwidth ÷ saturation bandwidth), piecewise linear between points.

use serde::{Deserialize, Serialize};

/// MESS curve (Esmaili-Dokht et al., IEEE/ACM MICRO 2024): Skylake 6×DDR4-2666, 100 % reads,
/// latency in CPU cycles, unloaded 94. Points are (bandwidth GB/s, latency cycles); we normalise
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

/// (utilisation, latency factor) points, utilisation strictly increasing in [0, 1]. In a
/// scenario, `curve` is either the list of points or the path of a MESS `bwlat_<read%>.txt`
/// file (relative to the working directory), normalised by [`LatencyCurve::from_mess_bwlat`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "CurveInput", into = "Vec<(f64, f64)>")]
pub struct LatencyCurve {
    pub points: Vec<(f64, f64)>,
}

/// What a scenario may give as a curve.
#[derive(Deserialize)]
#[serde(untagged)]
enum CurveInput {
    Points(Vec<(f64, f64)>),
    MessFile(String),
}

impl From<LatencyCurve> for Vec<(f64, f64)> {
    fn from(c: LatencyCurve) -> Self {
        c.points
    }
}

impl TryFrom<CurveInput> for LatencyCurve {
    type Error = String;
    fn try_from(c: CurveInput) -> Result<Self, String> {
        match c {
            CurveInput::Points(points) => Ok(LatencyCurve { points }),
            CurveInput::MessFile(path) => {
                let text = crate::config::read_config_text(std::path::Path::new(&path))
                    .map_err(|e| format!("cannot read MESS curve file '{path}': {e}"))?;
                LatencyCurve::from_mess_bwlat(&text)
                    .map_err(|(line, msg)| format!("{path}, line {line}: {msg}"))
            }
        }
    }
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

    /// A curve from a MESS `bwlat_<read%>.txt` file: one measurement per line, bandwidth
    /// (MB/s) and latency (cycles, or any unit) separated by white space, no header. MESS
    /// curves bend back at saturation (bandwidth falls while latency keeps rising); we keep
    /// the points in order of latency up to the highest bandwidth, normalise bandwidth by
    /// that maximum and latency by the lowest (unloaded) latency, and start at (0, 1).
    /// Errors name the (1-based) line.
    pub fn from_mess_bwlat(text: &str) -> Result<Self, (usize, String)> {
        let mut pts = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let nums: Vec<f64> = line
                .split_whitespace()
                .map(|w| w.parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| (i + 1, format!("expected two numbers, found '{line}'")))?;
            match nums[..] {
                [bw, lat] if bw >= 0.0 && lat > 0.0 && bw.is_finite() && lat.is_finite() => {
                    pts.push((bw, lat))
                }
                _ => {
                    return Err((
                        i + 1,
                        format!("expected bandwidth (MB/s) >= 0 and latency > 0, found '{line}'"),
                    ))
                }
            }
        }
        if pts.len() < 2 {
            return Err((text.lines().count(), "needs at least 2 measurements".into()));
        }
        pts.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)));
        let unloaded = pts[0].1;
        let max_bw = pts.iter().map(|p| p.0).fold(0.0, f64::max);
        let mut points = vec![(0.0, 1.0)];
        for &(bw, lat) in &pts {
            let u = bw / max_bw;
            if u > points.last().expect("starts non-empty").0 {
                points.push((u, lat / unloaded));
            }
            if bw >= max_bw {
                break;
            }
        }
        let c = LatencyCurve { points };
        match c.problem() {
            Some(p) => Err((0, p)),
            None => Ok(c),
        }
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

    /// [`factor`](Self::factor), trying the window `hint` first and leaving in it the window
    /// used: a bisection's utilisations close in on one window, so the scan is skipped. Only
    /// for points with strictly increasing utilisations ([`increasing`](Self::increasing)):
    /// then the window with u0 < u ≤ u1 is the first the scan would take, and the value is
    /// the same.
    #[inline]
    pub fn factor_near(&self, u: f64, hint: &mut usize) -> f64 {
        let p = &self.points;
        let i = *hint;
        if i + 1 < p.len() && p[i].0 < u && u <= p[i + 1].0 {
            let ((u0, f0), (u1, f1)) = (p[i], p[i + 1]);
            return f0 + (f1 - f0) * (u - u0) / (u1 - u0);
        }
        if u <= p[0].0 {
            return p[0].1;
        }
        for (i, w) in p.windows(2).enumerate() {
            let ((u0, f0), (u1, f1)) = (w[0], w[1]);
            if u <= u1 {
                *hint = i;
                return f0 + (f1 - f0) * (u - u0) / (u1 - u0);
            }
        }
        p[p.len() - 1].1
    }

    /// Whether the utilisations increase strictly (what [`factor_near`](Self::factor_near)
    /// needs; a validated curve's do).
    pub fn increasing(&self) -> bool {
        self.points.windows(2).all(|w| w[0].0 < w[1].0)
    }

    /// Whether the factors never decrease (a validated curve's do): the loaded latency then
    /// never falls as the bandwidth grows.
    pub fn rising(&self) -> bool {
        self.points.windows(2).all(|w| w[0].1 <= w[1].1)
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
    fn mess_bwlat_files_are_normalised_and_cut_at_the_bend() {
        let text = "1000\t100\n50000 120\n# comment\n100000 200\n90000 300\n";
        let c = LatencyCurve::from_mess_bwlat(text).unwrap();
        assert_eq!(
            c.points,
            vec![(0.0, 1.0), (0.01, 1.0), (0.5, 1.2), (1.0, 2.0)]
        );
        let e = LatencyCurve::from_mess_bwlat("1000 100\n2000 x\n").unwrap_err();
        assert_eq!(e.0, 2);
        let e = LatencyCurve::from_mess_bwlat("1000 100\n").unwrap_err();
        assert!(e.1.contains("at least 2"));
        let from_toml: LatencyCurve = serde_json::from_str("[[0.0, 1.0], [1.0, 2.0]]").unwrap();
        assert_eq!(from_toml.points.len(), 2);
        assert_eq!(
            serde_json::to_string(&from_toml).unwrap(),
            "[[0.0,1.0],[1.0,2.0]]"
        );
        let missing = serde_json::from_str::<LatencyCurve>("\"/no/such/bwlat_50.txt\"");
        assert!(missing.unwrap_err().to_string().contains("bwlat_50.txt"));
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
