//! Tier engine: per-tier loaded latency from closed-loop demand, and the fixed point between
//! sources' throughput, per-tier demand and loaded latency.
//!
//! Units: bandwidth in GB/s is bytes per ns, so bandwidth × latency_ns = bytes in flight.
//! A closed-loop source keeps `reads` lines outstanding on a tier; with read fraction `r` of
//! its line traffic it puts `reads × 64 / r` bytes in flight (its write-backs queue beside
//! its reads). A tier at bandwidth X with W bytes in flight has latency W / X (Little's law);
//! below saturation X follows the loaded-latency curve, at saturation X stays at the
//! saturation bandwidth and latency grows with W.

use super::crossing::neighbours_below;
use super::curve::LatencyCurve;
use super::flow::CopyFlow;
use super::path::PathResource;
use super::LINE_BYTES;
use crate::config::Validator;

/// A 50/50 read/write mix lowers the saturation bandwidth ~28 % (MESS-style curves;
/// docs/tiering.md, model).
pub const MIX_PENALTY: f64 = 0.28;
/// Queueing coefficient of mixed read/write traffic; fitted with the tiering study's reference
/// parameters (docs/tiering.md, *Calibration*).
pub const QUEUE_COEFF: f64 = 0.2;

crate::params! {
    #[params(required, check)]
    /// One memory tier: its media (the keys from `unloaded_latency_ns` on: bandwidth, read/write
    /// mix penalty, mixed queueing, curve) behind a `path` of resources (links, controllers).
    #[derive(Debug, Clone, PartialEq)]
    pub struct TierSpec {
        pub name: String => any, "", "Name of the tier in the results.";
        pub capacity_bytes: u64 => any, "", "Capacity of the tier (1 byte or more).";
        pub unloaded_latency_ns: f64 => range(1.0, 1e6), "", "Access latency without load.";
        pub read_bandwidth_gb_s: f64 => range(0.01, 1e5), "",
            "The media's saturation bandwidth with 100 % reads.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub write_bandwidth_gb_s: Option<f64> = None => range(0.01, 1e5), "",
            "The media's saturation bandwidth with 100 % writes; traffic with read fraction r then takes r/read + (1−r)/write ns per byte before the mix penalty. Default: writes as fast as reads (the media's bandwidth is `read_bandwidth_gb_s` for any mix before the penalty).";
        pub mix_penalty: f64 = MIX_PENALTY => range(0.0, 0.9), "",
            "Fractional loss of the media's saturation bandwidth for a 50/50 read/write mix (MESS-style curves: ~0.28); other mixes scale with 4·r·(1−r); not applied to path resources.";
        pub queue_coeff: f64 = QUEUE_COEFF => range(0.0, 100.0), "",
            "Queueing term under mixed traffic: factor += q · 4r(1−r) · u² / (1 − u); fitted (docs/tiering.md, *Calibration*).";
        pub curve: LatencyCurve = LatencyCurve::default() => any, "",
            "The media's (utilisation, latency factor) points, or a MESS file of them (docs/tiering.md, *Curves from MESS files*); default the normalised MESS curve (Esmaili-Dokht et al., MICRO 2024).";
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub path: Vec<PathResource> = Vec::new() => any, "",
            "Resources between the CPU and the media, each with its own bandwidth and curve (a remote socket's inter-socket link, a CXL link); empty for local memory.";
    }
}

fn mix(read_fraction: f64) -> f64 {
    4.0 * read_fraction * (1.0 - read_fraction)
}

impl TierSpec {
    /// The media's saturation bandwidth (GB/s) for `read_fraction` reads: the DRAM read/write
    /// mix penalty (bus turnarounds, bank conflicts) applies here, not to links. With a write
    /// bandwidth W beside the read bandwidth R, a byte takes r/R + (1−r)/W ns before the
    /// penalty.
    pub fn media_saturation_gb_s(&self, read_fraction: f64) -> f64 {
        let b = self.read_bandwidth_gb_s * (1.0 - self.mix_penalty * mix(read_fraction));
        match self.write_bandwidth_gb_s {
            None => b,
            // 1 / (r/R + (1−r)/W) = R / (1 + (1−r)(R/W − 1)), written so that W = R gives
            // exactly the read-only figure (R/W − 1 is then 0).
            Some(w) => {
                let r = read_fraction.clamp(0.0, 1.0);
                b / (1.0 + (1.0 - r) * (self.read_bandwidth_gb_s / w - 1.0))
            }
        }
    }

    /// Saturation bandwidth (GB/s) for traffic with `read_fraction` of its lines read: the
    /// tightest of the media and the path's resources.
    pub fn saturation_gb_s(&self, read_fraction: f64) -> f64 {
        self.path
            .iter()
            .map(|p| p.saturation_gb_s(read_fraction))
            .fold(self.media_saturation_gb_s(read_fraction), f64::min)
    }

    /// Index of the resource that saturates first for `read_fraction` (0 = the media, i = the
    /// path's resource i − 1).
    pub fn bottleneck(&self, read_fraction: f64) -> usize {
        let mut best = (0, self.media_saturation_gb_s(read_fraction));
        for (i, p) in self.path.iter().enumerate() {
            let s = p.saturation_gb_s(read_fraction);
            if s < best.1 {
                best = (i + 1, s);
            }
        }
        best.0
    }

    /// Loaded latency (ns) at total bandwidth `x_gb_s` below saturation: the unloaded latency
    /// times the largest latency factor of the media and the path's resources, each on its
    /// own curve at its own utilisation (the bottleneck's curve; queues in series are not
    /// added: each curve is a whole-path measurement with that resource the limit).
    pub fn curve_latency_ns(&self, x_gb_s: f64, read_fraction: f64) -> f64 {
        let b = self.media_saturation_gb_s(read_fraction);
        let u = (x_gb_s / b).clamp(0.0, 1.0);
        let q = if u < 1.0 {
            self.queue_coeff * mix(read_fraction) * u * u / (1.0 - u)
        } else {
            f64::INFINITY
        };
        let mut factor = self.curve.factor(u) + q;
        for p in &self.path {
            let u = (x_gb_s / p.saturation_gb_s(read_fraction)).clamp(0.0, 1.0);
            factor = factor.max(p.curve.factor(u));
        }
        self.unloaded_latency_ns * factor
    }

    /// Closed-loop operating point: `inflight_bytes` held by closed-loop sources plus
    /// `open_gb_s` of open-loop traffic (migrations). Returns (closed-loop GB/s, latency ns).
    pub fn solve(&self, inflight_bytes: f64, open_gb_s: f64, read_fraction: f64) -> (f64, f64) {
        self.solve_near(
            inflight_bytes,
            open_gb_s,
            read_fraction,
            self.unloaded_latency_ns,
        )
    }

    /// [`solve`](Self::solve), the same bits, searching first near the bandwidth at which
    /// the bytes in flight would see `guess_latency_ns` (a fixed point's current latency).
    pub fn solve_near(
        &self,
        inflight_bytes: f64,
        open_gb_s: f64,
        read_fraction: f64,
        guess_latency_ns: f64,
    ) -> (f64, f64) {
        let b = self.saturation_gb_s(read_fraction);
        let open = open_gb_s.clamp(0.0, 0.9 * b);
        let mut curve = CurveAt::new(self, read_fraction);
        if inflight_bytes <= 0.0 {
            return (0.0, curve.latency_ns(open));
        }
        let xmax = (b - open) * (1.0 - 1e-12);
        let monotone = curve.monotone;
        let mut f = |x: f64| x * curve.latency_ns(x + open);
        let at_xmax = f(xmax);
        if at_xmax <= inflight_bytes {
            // Saturated: bandwidth at its ceiling, latency by Little's law.
            return (xmax, inflight_bytes / xmax);
        }
        // The bisection below ends on the neighbouring floats lo < hi with f(lo) < inflight
        // ≤ f(hi). For an f that never decreases that pair is unique, so a faster search
        // for it gives the same bits, as long as the bisection's 64 halvings of [0, xmax]
        // would have reached it (hi not far below xmax).
        if monotone {
            let guess = inflight_bytes / guess_latency_ns;
            if let Some((lo, hi)) = neighbours_below(&mut f, inflight_bytes, xmax, at_xmax, guess) {
                if lo > 0.0 && hi >= xmax / 256.0 {
                    let x = 0.5 * (lo + hi);
                    return (x, inflight_bytes / x);
                }
            }
        }
        let (mut lo, mut hi) = (0.0, xmax);
        // f(lo) < inflight is known once lo has moved (f(0) is not evaluated).
        let mut lo_known = false;
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            // Once lo and hi are neighbouring floats the midpoint is one of them, whose side
            // is known: every remaining step would leave (lo, hi) as they are.
            if mid == hi || (mid == lo && lo_known) {
                break;
            }
            if f(mid) < inflight_bytes {
                lo = mid;
                lo_known = true;
            } else {
                hi = mid;
            }
        }
        let x = 0.5 * (lo + hi);
        (x, inflight_bytes / x)
    }
}

/// [`TierSpec::curve_latency_ns`] at one read fraction: what does not depend on the bandwidth
/// is computed once per [`TierSpec::solve`] instead of once per bisection step, by the same
/// operations (so the same latencies), and each curve remembers its last window.
struct CurveAt<'a> {
    tier: &'a TierSpec,
    read_fraction: f64,
    media_gb_s: f64,
    /// `queue_coeff · mix(read_fraction)`.
    queue: f64,
    /// Saturation of the first path resources (the rest are computed per call).
    path_gb_s: [f64; PATH_MEMO],
    /// Last window of the media's curve and of each path resource's; `usize::MAX` where a
    /// curve's points do not increase strictly (then the full scan runs every time).
    hints: [usize; PATH_MEMO + 1],
    /// Every curve's factors never decrease (a validated curve's): the latency, and the
    /// bytes in flight it gives, never decrease with the bandwidth.
    monotone: bool,
}

const PATH_MEMO: usize = 4;

impl<'a> CurveAt<'a> {
    fn new(tier: &'a TierSpec, read_fraction: f64) -> Self {
        let mut path_gb_s = [0.0; PATH_MEMO];
        let mut hints = [usize::MAX; PATH_MEMO + 1];
        if tier.curve.increasing() {
            hints[0] = 0;
        }
        for (i, p) in tier.path.iter().take(PATH_MEMO).enumerate() {
            path_gb_s[i] = p.saturation_gb_s(read_fraction);
            if p.curve.increasing() {
                hints[i + 1] = 0;
            }
        }
        CurveAt {
            monotone: tier.curve.rising() && tier.path.iter().all(|p| p.curve.rising()),
            tier,
            read_fraction,
            media_gb_s: tier.media_saturation_gb_s(read_fraction),
            queue: tier.queue_coeff * mix(read_fraction),
            path_gb_s,
            hints,
        }
    }

    #[inline(always)]
    fn factor(curve: &LatencyCurve, u: f64, hint: &mut usize) -> f64 {
        if *hint == usize::MAX {
            curve.factor(u)
        } else {
            curve.factor_near(u, hint)
        }
    }

    /// Equals `tier.curve_latency_ns(x_gb_s, read_fraction)`.
    #[inline]
    fn latency_ns(&mut self, x_gb_s: f64) -> f64 {
        let u = (x_gb_s / self.media_gb_s).clamp(0.0, 1.0);
        let q = if u < 1.0 {
            self.queue * u * u / (1.0 - u)
        } else {
            f64::INFINITY
        };
        let mut factor = Self::factor(&self.tier.curve, u, &mut self.hints[0]) + q;
        let mut no_hint = usize::MAX;
        for (i, p) in self.tier.path.iter().enumerate() {
            let (sat, hint) = if i < PATH_MEMO {
                (self.path_gb_s[i], &mut self.hints[i + 1])
            } else {
                (p.saturation_gb_s(self.read_fraction), &mut no_hint)
            };
            let u = (x_gb_s / sat).clamp(0.0, 1.0);
            factor = factor.max(Self::factor(&p.curve, u, hint));
        }
        self.tier.unloaded_latency_ns * factor
    }
}

/// A closed-loop traffic source: reads in flight per tier and the read fraction of its lines.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Fixed reads in flight on one tier (e.g. `cores` streaming antagonists).
    Pinned {
        tier: usize,
        reads: f64,
        read_fraction: f64,
    },
    /// `reads` in flight spread over tiers by access fractions `share` (summing to 1): by
    /// Little's law the reads on tier t are ∝ share_t · latency_t. With `think_ns` > 0 each
    /// of the `reads` spends that long outside memory between two memory reads (the cache
    /// hits of a cache-filtered trace): a closed loop with think time, so only the share
    /// R / (think + R) of them is in memory at mean memory latency R.
    Spread {
        share: Vec<f64>,
        reads: f64,
        read_fraction: f64,
        think_ns: f64,
    },
    /// Page copies (docs/tiering.md, *Migration copies*): per direction, lines in flight
    /// that are read on the source tier and written on the destination tier, each line
    /// spending the source's latency then the destination's.
    Copy { flows: Vec<CopyFlow> },
}

impl Source {
    /// Equal bit for bit (a fixed point solved for one is the other's, to the bit; `==`
    /// would take 0.0 for −0.0).
    pub fn same_bits(&self, other: &Source) -> bool {
        let bits = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        match (self, other) {
            (
                Source::Pinned {
                    tier,
                    reads,
                    read_fraction,
                },
                Source::Pinned {
                    tier: t2,
                    reads: r2,
                    read_fraction: f2,
                },
            ) => tier == t2 && bits(&[*reads, *read_fraction], &[*r2, *f2]),
            (
                Source::Spread {
                    share,
                    reads,
                    read_fraction,
                    think_ns,
                },
                Source::Spread {
                    share: s2,
                    reads: r2,
                    read_fraction: f2,
                    think_ns: k2,
                },
            ) => bits(share, s2) && bits(&[*reads, *read_fraction, *think_ns], &[*r2, *f2, *k2]),
            (Source::Copy { flows }, Source::Copy { flows: f2 }) => {
                flows.len() == f2.len()
                    && flows.iter().zip(f2).all(|(a, b)| {
                        a.from == b.from && a.to == b.to && a.lines.to_bits() == b.lines.to_bits()
                    })
            }
            _ => false,
        }
    }
}

/// Per-tier result of one quantum's fixed point.
#[derive(Debug, Clone, PartialEq)]
pub struct TierPoint {
    pub latency_ns: f64,
    /// Total bandwidth (closed + open loop), GB/s.
    pub bandwidth_gb_s: f64,
    /// Reads in flight (what TOR_OCCUPANCY integrates).
    pub occupancy: f64,
    /// Read arrivals per ns (what TOR_INSERTS counts).
    pub arrivals_per_ns: f64,
    pub read_fraction: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FixedPoint {
    pub tiers: Vec<TierPoint>,
    /// Reads in flight per source per tier.
    pub reads: Vec<Vec<f64>>,
    pub iterations: usize,
    pub converged: bool,
}

/// Reads each source holds on each tier at latencies `lat`, and the lines it holds as writes
/// only (copies' writes on their destination tier; other sources' write-backs are counted
/// through their read fraction).
/// The buffers of the previous call are refilled (the fixed point calls this every iteration).
fn distribute(
    sources: &[Source],
    n_tiers: usize,
    lat: &[f64],
    reads: &mut Vec<Vec<f64>>,
    writes: &mut Vec<Vec<f64>>,
) {
    reads.resize_with(sources.len(), Vec::new);
    writes.resize_with(sources.len(), Vec::new);
    for ((s, v), wv) in sources.iter().zip(reads.iter_mut()).zip(writes.iter_mut()) {
        v.clear();
        v.resize(n_tiers, 0.0);
        wv.clear();
        match s {
            Source::Pinned { tier, reads, .. } => v[*tier] = *reads,
            Source::Spread {
                share,
                reads,
                think_ns,
                ..
            } => {
                let mut w: f64 = share.iter().zip(lat).map(|(f, l)| f * l).sum();
                if w > 0.0 {
                    // Without think time the divisor is the mean latency itself, as before.
                    if *think_ns > 0.0 {
                        w += think_ns;
                    }
                    for t in 0..n_tiers {
                        v[t] = reads * share[t] * lat[t] / w;
                    }
                }
            }
            Source::Copy { flows } => {
                wv.resize(n_tiers, 0.0);
                for f in flows {
                    let (r, w) = f.split(lat);
                    v[f.from] += r;
                    wv[f.to] += w;
                }
            }
        }
    }
}

fn read_fraction_of(s: &Source) -> f64 {
    match s {
        Source::Pinned { read_fraction, .. } | Source::Spread { read_fraction, .. } => {
            *read_fraction
        }
        Source::Copy { .. } => 1.0,
    }
}

/// Solve the fixed point of latency ↔ demand for all tiers by damped iteration on latencies.
/// `open_gb_s[t]` is open-loop traffic (migration copies, 50/50 read/write) on tier t.
pub fn solve_fixed_point(tiers: &[TierSpec], sources: &[Source], open_gb_s: &[f64]) -> FixedPoint {
    let start: Vec<f64> = tiers.iter().map(|t| t.unloaded_latency_ns).collect();
    solve_fixed_point_from(tiers, sources, open_gb_s, &start)
}

/// As [`solve_fixed_point`], starting the iteration from latencies `start_ns` (e.g. the
/// previous quantum's), which the result does not depend on beyond the tolerance.
pub fn solve_fixed_point_from(
    tiers: &[TierSpec],
    sources: &[Source],
    open_gb_s: &[f64],
    start_ns: &[f64],
) -> FixedPoint {
    let n = tiers.len();
    let mut lat: Vec<f64> = start_ns.to_vec();
    let mut iterations = 0;
    let mut converged = false;
    let mut points = Vec::new();
    let mut reads = Vec::new();
    let mut writes = Vec::new();
    let damping = 0.5;
    for it in 1..=500 {
        iterations = it;
        distribute(sources, n, &lat, &mut reads, &mut writes);
        points.clear();
        let mut max_change: f64 = 0.0;
        for t in 0..n {
            let mut bytes = 0.0;
            let mut read_bytes = 0.0;
            let mut occ = 0.0;
            for ((s, r), w) in sources.iter().zip(&reads).zip(&writes) {
                let rf = read_fraction_of(s);
                if r[t] > 0.0 {
                    bytes += r[t] * LINE_BYTES / rf;
                    read_bytes += r[t] * LINE_BYTES;
                    occ += r[t];
                }
                if let Some(&wl) = w.get(t) {
                    bytes += wl * LINE_BYTES;
                }
            }
            let open = open_gb_s.get(t).copied().unwrap_or(0.0);
            let rf = if bytes + open > 0.0 {
                (read_bytes + 0.5 * open) / (bytes + open)
            } else {
                1.0
            };
            let (x, l) = tiers[t].solve_near(bytes, open, rf, lat[t]);
            max_change = max_change.max((l - lat[t]).abs() / lat[t]);
            lat[t] = if it == 1 {
                l
            } else {
                damping * lat[t] + (1.0 - damping) * l
            };
            points.push(TierPoint {
                latency_ns: l,
                bandwidth_gb_s: x + open.min(0.9 * tiers[t].saturation_gb_s(rf)),
                occupancy: occ,
                arrivals_per_ns: if l > 0.0 { occ / l } else { 0.0 },
                read_fraction: rf,
            });
        }
        if it > 1 && max_change < 1e-10 {
            converged = true;
            break;
        }
    }
    FixedPoint {
        tiers: points,
        reads,
        iterations,
        converged,
    }
}

/// EWMA-smoothed per-tier counters, read by policies as Colloid reads CHA TOR counters.
#[derive(Debug, Clone, PartialEq)]
pub struct TierCounters {
    pub alpha: f64,
    pub occupancy: Vec<f64>,
    pub arrivals_per_ns: Vec<f64>,
    started: bool,
}

impl TierCounters {
    pub fn new(n_tiers: usize, alpha: f64) -> Self {
        TierCounters {
            alpha,
            occupancy: vec![0.0; n_tiers],
            arrivals_per_ns: vec![0.0; n_tiers],
            started: false,
        }
    }

    pub fn update(&mut self, fp: &FixedPoint) {
        for (t, p) in fp.tiers.iter().enumerate() {
            if self.started {
                let a = self.alpha;
                self.occupancy[t] = a * p.occupancy + (1.0 - a) * self.occupancy[t];
                self.arrivals_per_ns[t] =
                    a * p.arrivals_per_ns + (1.0 - a) * self.arrivals_per_ns[t];
            } else {
                self.occupancy[t] = p.occupancy;
                self.arrivals_per_ns[t] = p.arrivals_per_ns;
            }
        }
        self.started = true;
    }

    /// Smoothed latency O/R of tier `t`; `None` while the tier sees no reads.
    pub fn latency_ns(&self, t: usize) -> Option<f64> {
        (self.arrivals_per_ns[t] > 0.0).then(|| self.occupancy[t] / self.arrivals_per_ns[t])
    }
}

impl TierSpec {
    fn check(&self, v: &mut Validator) {
        if self.capacity_bytes == 0 {
            v.fail(
                "capacity_bytes",
                "0 is not allowed; a tier needs capacity (1 byte or more)",
            );
        }
        if let Some(p) = self.curve.problem() {
            v.fail("curve", p);
        }
        for (i, r) in self.path.iter().enumerate() {
            if let Some((key, msg)) = r.problem() {
                v.fail(&format!("path.{i}.{key}"), msg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(occ: f64, lat: f64) -> FixedPoint {
        FixedPoint {
            tiers: vec![TierPoint {
                latency_ns: lat,
                bandwidth_gb_s: 0.0,
                occupancy: occ,
                arrivals_per_ns: occ / lat,
                read_fraction: 1.0,
            }],
            reads: vec![],
            iterations: 1,
            converged: true,
        }
    }

    #[test]
    fn counters_smooth_occupancy_and_arrivals() {
        let mut c = TierCounters::new(1, 0.5);
        assert_eq!(c.latency_ns(0), None);
        c.update(&point(100.0, 100.0)); // R = 1/ns
        assert!((c.latency_ns(0).unwrap() - 100.0).abs() < 1e-12);
        c.update(&point(300.0, 100.0)); // R = 3/ns
                                        // O = 200, R = 2 after one EWMA step: latency stays 100 —
                                        // O/R of smoothed sums.
        assert!((c.occupancy[0] - 200.0).abs() < 1e-12);
        assert!((c.latency_ns(0).unwrap() - 100.0).abs() < 1e-12);
        c.update(&point(100.0, 300.0)); // R = 1/3
        let (o, r) = (150.0, (2.0 + 1.0 / 3.0) / 2.0);
        assert!((c.latency_ns(0).unwrap() - o / r).abs() < 1e-9);
    }

    /// A write bandwidth below the read bandwidth lowers the media's saturation for mixed
    /// traffic by the time per byte of each direction; none, or one equal to the read
    /// bandwidth, gives exactly today's figure.
    #[test]
    fn write_bandwidth_combines_with_reads_per_byte() {
        let mut t = crate::tier::params::reference_tiers().remove(1);
        t.path.clear();
        let before: Vec<f64> = [0.0, 0.3, 0.5, 1.0]
            .iter()
            .map(|&r| t.media_saturation_gb_s(r))
            .collect();
        t.write_bandwidth_gb_s = Some(t.read_bandwidth_gb_s);
        for (i, r) in [0.0, 0.3, 0.5, 1.0].into_iter().enumerate() {
            assert_eq!(t.media_saturation_gb_s(r).to_bits(), before[i].to_bits());
        }
        let read = t.read_bandwidth_gb_s;
        t.write_bandwidth_gb_s = Some(read / 4.0);
        // All reads: unchanged; all writes: the write bandwidth.
        assert_eq!(t.media_saturation_gb_s(1.0), read);
        assert!((t.media_saturation_gb_s(0.0) - read / 4.0).abs() < 1e-9);
        // 50/50: 1 / (0.5/R + 0.5/(R/4)) = R/2.5, then the mix penalty.
        let want = read / 2.5 * (1.0 - t.mix_penalty);
        assert!((t.media_saturation_gb_s(0.5) - want).abs() < 1e-9 * want);
        assert!(t.saturation_gb_s(0.5) < before[2]);
        // Under the same 50/50 load the slower writes raise the loaded latency.
        let x = 0.5 * want;
        let mut same = t.clone();
        same.write_bandwidth_gb_s = None;
        assert!(t.curve_latency_ns(x, 0.5) > same.curve_latency_ns(x, 0.5));
    }

    /// The media is the bottleneck against a link when slow writes make it so.
    #[test]
    fn slow_writes_move_the_bottleneck_to_the_media() {
        let mut t = crate::tier::params::reference_tiers().remove(1);
        t.path = vec![PathResource::duplex("cxl-x8", 30.0, 30.0)];
        t.read_bandwidth_gb_s = 38.4;
        assert_eq!(t.bottleneck(1.0), 1, "reads: the link (30 < 38.4)");
        t.write_bandwidth_gb_s = Some(10.0);
        assert_eq!(t.bottleneck(0.0), 0, "writes: the media (10 < 30)");
    }

    /// `solve` as it was before the per-solve precomputation, the early stop and the search
    /// near a guess (`crossing.rs`): the
    /// bisection's 64 steps on `curve_latency_ns`.
    fn solve_reference(t: &TierSpec, inflight: f64, open_gb_s: f64, rf: f64) -> (f64, f64) {
        let b = t.saturation_gb_s(rf);
        let open = open_gb_s.clamp(0.0, 0.9 * b);
        if inflight <= 0.0 {
            return (0.0, t.curve_latency_ns(open, rf));
        }
        let xmax = (b - open) * (1.0 - 1e-12);
        let mut f = |x: f64| x * t.curve_latency_ns(x + open, rf);
        if f(xmax) <= inflight {
            return (xmax, inflight / xmax);
        }
        let (lo, hi) = super::super::crossing::bisect(&mut f, inflight, xmax);
        let x = 0.5 * (lo + hi);
        (x, inflight / x)
    }

    #[test]
    fn solve_gives_the_bits_of_the_full_bisection() {
        let mut tiers = crate::tier::params::reference_tiers();
        // A path of several resources (one past the memo) and a curve whose points repeat a
        // utilisation (no window hints for it).
        let mut long = tiers[1].clone();
        for i in 0..5 {
            long.path
                .push(PathResource::duplex("link", 60.0 + 10.0 * i as f64, 50.0));
        }
        long.path[5].curve = LatencyCurve {
            points: vec![(0.0, 1.0), (0.5, 1.2), (0.5, 1.4), (1.0, 3.0)],
        };
        tiers.push(long);
        for t in &tiers {
            for rf in [1.0, 0.75, 0.5, 0.3] {
                for open in [0.0, 5.0, 40.0] {
                    for k in 0..200 {
                        // In-flight bytes from nothing to far past saturation.
                        let inflight = 1.07f64.powi(k) * 10.0 - 10.0;
                        let (x, l) = t.solve(inflight, open, rf);
                        let (x0, l0) = solve_reference(t, inflight, open, rf);
                        assert_eq!(
                            (x.to_bits(), l.to_bits()),
                            (x0.to_bits(), l0.to_bits()),
                            "{} rf {rf} open {open} inflight {inflight}",
                            t.name
                        );
                    }
                }
            }
        }
    }

    use proptest::prelude::{prop_oneof, Just};

    proptest::proptest! {
        /// On any validated curve (random rising points, a path resource with its own), at
        /// any load and read mix, `solve` gives the bits of the 64-step bisection.
        #[test]
        fn solve_on_random_curves_gives_the_bits_of_the_bisection(
            steps in proptest::collection::vec((0.01f64..0.3, 0.0f64..3.0), 1..8),
            link in proptest::option::of((5.0f64..200.0, 1.0f64..4.0)),
            unloaded in 50.0f64..400.0,
            bw in 1.0f64..300.0,
            rf in 0.0f64..=1.0,
            open_share in 0.0f64..1.2,
            load in 0.0f64..3.0,
            guess in prop_oneof![Just(1.0), 0.01f64..100.0, Just(f64::NAN), Just(0.0)],
        ) {
            let mut points = vec![(0.0, 1.0)];
            for (du, df) in steps {
                let (u, f) = *points.last().unwrap();
                points.push(((u + du).min(1.0), f + df));
                if u + du >= 1.0 {
                    break;
                }
            }
            points.dedup_by(|b, a| b.0 <= a.0);
            if points.len() < 2 || points.last().unwrap().0 < 0.5 {
                points.push((1.0, points.last().unwrap().1 + 1.0));
            }
            let mut t = crate::tier::params::reference_tiers().remove(1);
            t.curve = LatencyCurve { points };
            t.unloaded_latency_ns = unloaded;
            t.read_bandwidth_gb_s = bw;
            if let Some((link_bw, top)) = link {
                let mut r = PathResource::duplex("link", link_bw, link_bw);
                r.curve = LatencyCurve { points: vec![(0.0, 1.0), (0.7, 1.0 + top / 3.0), (1.0, 1.0 + top)] };
                t.path = vec![r];
            }
            proptest::prop_assume!(t.curve.problem().is_none());
            let sat = t.saturation_gb_s(rf);
            let open = open_share * sat;
            // Bytes in flight from a trickle to past saturation.
            let inflight = load * sat * unloaded * 2.0;
            let (x0, l0) = solve_reference(&t, inflight, open, rf);
            let (x, l) = t.solve(inflight, open, rf);
            proptest::prop_assert_eq!((x.to_bits(), l.to_bits()), (x0.to_bits(), l0.to_bits()));
            // From any starting guess of the latency (a fixed point's iterate), the same bits.
            let (x, l) = t.solve_near(inflight, open, rf, unloaded * guess);
            proptest::prop_assert_eq!((x.to_bits(), l.to_bits()), (x0.to_bits(), l0.to_bits()));
        }
    }

    #[test]
    fn saturated_tier_follows_littles_law() {
        let t = crate::tier::params::reference_tiers().remove(0);
        let sat = t.saturation_gb_s(1.0);
        // Far more bytes in flight than the curve can hold: bandwidth pinned at saturation.
        let w = 100.0 * sat * t.unloaded_latency_ns;
        let (x, l) = t.solve(w, 0.0, 1.0);
        assert!((x / sat - 1.0).abs() < 1e-9);
        assert!((l - w / sat).abs() < 1e-6 * l);
    }
}
