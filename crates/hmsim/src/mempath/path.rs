//! The resources between the CPU and a tier's media (docs/tiering.md, *Tiers as paths*): an
//! inter-socket link, a CXL link, a remote memory controller. Each carries a share of the
//! tier's traffic and has its own bandwidth and loaded-latency curve; the tier saturates at
//! the tightest resource on its path.

use serde::{Deserialize, Serialize};

use super::curve::LatencyCurve;

/// One resource on a tier's path. A full-duplex link has one bandwidth per direction: reads
/// (data flowing to the CPU) use `read_gb_s`, write-backs (data flowing to the tier) use
/// `write_gb_s`; a resource that all traffic shares (a controller, a half-duplex bus) gives
/// `total_gb_s`. Any combination may be given; at least one is required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathResource {
    pub name: String,
    /// Bandwidth toward the CPU, carrying the tier's read data (GB/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_gb_s: Option<f64>,
    /// Bandwidth toward the tier, carrying its write-backs (GB/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_gb_s: Option<f64>,
    /// Bandwidth shared by reads and writes (GB/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_gb_s: Option<f64>,
    /// Latency factor vs this resource's utilisation; default the normalised MESS curve.
    #[serde(default)]
    pub curve: LatencyCurve,
}

impl PathResource {
    /// A full-duplex link with `read_gb_s` toward the CPU and `write_gb_s` back.
    pub fn duplex(name: &str, read_gb_s: f64, write_gb_s: f64) -> Self {
        PathResource {
            name: name.into(),
            read_gb_s: Some(read_gb_s),
            write_gb_s: Some(write_gb_s),
            total_gb_s: None,
            curve: LatencyCurve::mess(),
        }
    }

    /// The tier traffic (GB/s, reads + writes, `read_fraction` of it reads) at which this
    /// resource saturates: each direction carries only its share, so a duplex link carries
    /// 50/50 traffic up to twice its per-direction bandwidth. No read/write mix penalty: a
    /// link has no bus turnarounds or bank conflicts (those are the media's).
    pub fn saturation_gb_s(&self, read_fraction: f64) -> f64 {
        let r = read_fraction.clamp(0.0, 1.0);
        let mut s = f64::INFINITY;
        if let Some(b) = self.read_gb_s {
            if r > 0.0 {
                s = s.min(b / r);
            }
        }
        if let Some(b) = self.write_gb_s {
            if r < 1.0 {
                s = s.min(b / (1.0 - r));
            }
        }
        if let Some(b) = self.total_gb_s {
            s = s.min(b);
        }
        s
    }

    /// Why this resource is unusable, if it is: (key, message).
    pub fn problem(&self) -> Option<(&'static str, String)> {
        let given = [
            ("read_gb_s", self.read_gb_s),
            ("write_gb_s", self.write_gb_s),
            ("total_gb_s", self.total_gb_s),
        ];
        if given.iter().all(|(_, b)| b.is_none()) {
            return Some((
                "read_gb_s",
                "a path resource needs read_gb_s, write_gb_s or total_gb_s".into(),
            ));
        }
        for (key, b) in given {
            if let Some(b) = b {
                if !(b.is_finite() && b > 0.0 && b <= 1e5) {
                    return Some((
                        key,
                        format!("{b} is out of range; allowed 0 (exclusive) to 100000 GB/s"),
                    ));
                }
            }
        }
        self.curve.problem().map(|p| ("curve", p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_direction_carries_its_share() {
        let upi = PathResource::duplex("upi", 75.0, 75.0);
        assert_eq!(upi.saturation_gb_s(1.0), 75.0);
        assert_eq!(upi.saturation_gb_s(0.0), 75.0);
        assert_eq!(upi.saturation_gb_s(0.5), 150.0);
        // 2:1 reads: the read direction binds at 75 / (2/3).
        assert!((upi.saturation_gb_s(2.0 / 3.0) - 112.5).abs() < 1e-9);
        let bus = PathResource {
            total_gb_s: Some(50.0),
            ..upi.clone()
        };
        assert_eq!(bus.saturation_gb_s(0.5), 50.0);
        let none = PathResource {
            read_gb_s: None,
            write_gb_s: None,
            ..upi
        };
        assert!(none.problem().is_some());
    }
}
