//! Workload shapes for the synthetic generator: the study's six workloads as named presets
//! of [`Synthetic`], and [`fit`], which measures those parameters on a kmem trace (the
//! presets are `fit` of the traces recorded here; see `docs/allocators.md`).

use super::cohort::{measure, BURST_GAP_NS};
use super::workload::{AllocOp, AllocWorkload, Synthetic};
use super::MAX_ORDER;
use crate::config::{Validate, Validator};

/// Registered shape names.
pub const SHAPES: [&str; 6] = [
    "kernel-compile",
    "lmbench",
    "stream",
    "unixbench",
    "dbench",
    "tbench",
];

/// The preset of `shape` (one of [`SHAPES`]). Numbers are [`fit`] of the kmem traces in
/// `crates/hmsim/tests/data/traces` (rounded), with 4 threads and 50 000 allocations each.
pub fn preset(shape: &str) -> Option<Synthetic> {
    let s = |order_mix: &[f64],
             burst,
             bgap,
             igap,
             short,
             slife,
             llife,
             (cohort, cgap, clife, cbursts),
             (handoff, hgap)| {
        Synthetic {
            threads: 4,
            allocs_per_thread: 50_000,
            order_mix: order_mix.to_vec(),
            burst_allocs_mean: burst,
            burst_gap_ns: bgap,
            idle_gap_ns: igap,
            short_lived_fraction: short,
            short_life_ns: slife,
            long_life_ns: llife,
            cohorts: true,
            cohort_fraction: cohort,
            cohort_free_gap_ns: cgap,
            cohort_short_life_ns: clife,
            cohort_bursts_mean: cbursts,
            handoff_fraction: handoff,
            handoff_gap_ns: hgap,
        }
    };
    Some(match shape {
        // gcc.kmem.hmt (one `gcc -O2 -c`).
        "kernel-compile" => Synthetic::default(),
        // lmbench.kmem.hmt (fork and mmap loops): short-lived process pages.
        "lmbench" => s(
            &[0.997, 0.0006, 0.0011, 0.0012, 0.0002],
            26.7,
            10_000.0,
            1_800_000.0,
            0.66,
            16_200_000.0,
            711_000_000.0,
            (0.65, 9_150.0, 1_140_000.0, 2.18),
            (0.0188, 131_700.0),
        ),
        // stream.kmem.hmt: the arrays faulted in one page at a time in long bursts, all
        // freed together at exit.
        "stream" => s(
            &[1.0],
            328.0,
            2_170.0,
            6_370_000.0,
            0.995,
            134_000_000.0,
            128_000_000.0,
            (0.645, 334.0, 7_360_000.0, 4.33),
            (0.0008, 1_261_000.0),
        ),
        // unixbench.kmem.hmt: many short processes (pipelines) and a file copy.
        "unixbench" => s(
            &[0.9904, 0.0002, 0.0, 0.0, 0.0094],
            33.0,
            9_700.0,
            2_060_000.0,
            0.69,
            3_390_000.0,
            484_000_000.0,
            (0.61, 2_590.0, 1_250_000.0, 2.73),
            (0.023, 84_600.0),
        ),
        // dbench.kmem.hmt: file-server load on a local file system: mixed orders (page
        // cache, journal and slab pages up to order 8).
        "dbench" => s(
            &[
                0.459, 0.180, 0.144, 0.0929, 0.122, 0.0001, 0.0009, 0.0, 0.0004,
            ],
            6.2,
            11_300.0,
            1_420_000.0,
            0.967,
            24_300_000.0,
            2_130_000_000.0,
            (0.753, 1_570.0, 10_250_000.0, 1.90),
            (0.0276, 874_000.0),
        ),
        // tbench.kmem.hmt: the same load over loopback TCP: socket buffers, 97 % order 3,
        // freed within ~70 µs; two thirds are page-frag pages released right after their
        // replacement is allocated (refill, then drop the old page).
        "tbench" => s(
            &[0.0288, 0.0, 0.0002, 0.971],
            9.1,
            26_800.0,
            2_430_000.0,
            0.989,
            70_700.0,
            2_620_000_000.0,
            (0.891, 28_000.0, 34_600.0, 2.02),
            (0.669, 17_900.0),
        ),
        _ => return None,
    })
}

crate::params! {
    #[params(check)]
    /// `[workload.synthetic]`: a shape and any parameters to override in it.
    #[derive(Debug, Clone, PartialEq)]
    pub struct SyntheticSpec {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub shape: Option<String> = None => any, "",
            "One of `kernel-compile` (default), `lmbench`, `stream`, `unixbench`, `dbench`, `tbench`: the preset the other keys override.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub threads: Option<u32> = None => any, "",
            "Threads (CPUs) issuing requests. Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub allocs_per_thread: Option<u32> = None => any, "",
            "Allocation requests per thread (each is later freed). Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub order_mix: Option<Vec<f64>> = None => any, "",
            "Probability weights of orders 0, 1, 2, … (normalised; at most 11 entries). Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub burst_allocs_mean: Option<f64> = None => any, "allocations",
            "Mean allocations per burst (geometric). Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub burst_gap_ns: Option<f64> = None => any, "",
            "Mean gap between allocations inside a burst (exponential). Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub idle_gap_ns: Option<f64> = None => any, "",
            "Mean gap between bursts (exponential). Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub short_lived_fraction: Option<f64> = None => any, "",
            "Fraction of blocks with the short lifetime. Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub short_life_ns: Option<f64> = None => any, "",
            "Mean short lifetime (exponential). Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub long_life_ns: Option<f64> = None => any, "",
            "Mean long lifetime (exponential). Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub cohorts: Option<bool> = None => any, "",
            "Bursts die as cohorts; `false`: every block has an independent lifetime. Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub cohort_fraction: Option<f64> = None => any, "",
            "Probability that a block joins its burst's cohort. Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub cohort_free_gap_ns: Option<f64> = None => any, "",
            "Mean gap between consecutive frees of a cohort (exponential). Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub cohort_short_life_ns: Option<f64> = None => any, "",
            "Mean short lifetime of a cohort, from its first allocation to its first free (exponential). Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub cohort_bursts_mean: Option<f64> = None => any, "bursts",
            "Mean consecutive bursts of a thread that share one cohort (geometric). Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub handoff_fraction: Option<f64> = None => any, "",
            "Fraction of blocks freed once their thread's next allocation is made (a replaced buffer); they join no cohort. Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub handoff_gap_ns: Option<f64> = None => any, "",
            "Mean time from the replacement's allocation to the free (exponential). Default: the shape's preset (docs/allocators.md); checked after the preset is applied.";
    }
}

impl SyntheticSpec {
    pub fn shape_name(&self) -> &str {
        self.shape.as_deref().unwrap_or("kernel-compile")
    }

    /// The shape's preset with the given overrides (kernel-compile for an unknown shape,
    /// which validation reports).
    pub fn resolve(&self) -> Synthetic {
        let mut s = preset(self.shape_name()).unwrap_or_default();
        macro_rules! take {
            ($($f:ident),*) => { $( if let Some(x) = &self.$f { s.$f = x.clone(); } )* };
        }
        take!(
            threads,
            allocs_per_thread,
            order_mix,
            burst_allocs_mean,
            burst_gap_ns,
            idle_gap_ns,
            short_lived_fraction,
            short_life_ns,
            long_life_ns,
            cohorts,
            cohort_fraction,
            cohort_free_gap_ns,
            cohort_short_life_ns,
            cohort_bursts_mean,
            handoff_fraction,
            handoff_gap_ns
        );
        s
    }
}

impl SyntheticSpec {
    fn check(&self, v: &mut Validator) {
        v.one_of("shape", self.shape_name(), &SHAPES);
        self.resolve().validate(v);
    }
}

/// The generator parameters measured on a recorded (or any) workload: order mix; per CPU,
/// gaps under [`BURST_GAP_NS`] are in-burst gaps and longer ones idle gaps; blocks freed
/// within the trace are the short-lived ones (exponential mean = median / ln 2); the rest
/// live to the end, so their mean lifetime is the trace's duration; the cohort fraction, the
/// gap between a cohort's frees and the hand-offs (blocks freed right after their CPU's next
/// allocation) are [`measure`]d.
pub fn fit(w: &AllocWorkload) -> Synthetic {
    let mut orders = [0u64; MAX_ORDER as usize + 1];
    let mut alloc_at = vec![u64::MAX; w.blocks as usize];
    let mut last = vec![None::<u64>; w.cpus.max(1) as usize];
    let (mut bgap, mut nb, mut igap, mut ni) = (0f64, 0u64, 0f64, 0u64);
    let mut lifetimes = Vec::new();
    let mut allocs = 0u64;
    for q in &w.reqs {
        match q.op {
            AllocOp::Alloc { order } => {
                allocs += 1;
                orders[order as usize] += 1;
                alloc_at[q.id as usize] = q.ts_ns;
                if let Some(t) = last[q.cpu as usize] {
                    let g = q.ts_ns - t;
                    if g >= BURST_GAP_NS {
                        igap += g as f64;
                        ni += 1;
                    } else {
                        bgap += g as f64;
                        nb += 1;
                    }
                }
                last[q.cpu as usize] = Some(q.ts_ns);
            }
            AllocOp::Free => {
                let t = alloc_at[q.id as usize];
                if t != u64::MAX {
                    lifetimes.push(q.ts_ns - t);
                }
            }
        }
    }
    let top = orders.iter().rposition(|&n| n > 0).unwrap_or(0);
    let total = allocs.max(1) as f64;
    lifetimes.sort_unstable();
    let median = crate::stats::nearest_rank(&lifetimes, 0.5).unwrap_or(0) as f64;

    let cpus = w.cpus.max(1) as u64;
    let cohorts = measure(w);
    Synthetic {
        threads: cpus as u32,
        allocs_per_thread: (allocs / cpus).max(1) as u32,
        order_mix: orders[..=top].iter().map(|&n| n as f64 / total).collect(),
        // Bursts per CPU = idle gaps + 1.
        burst_allocs_mean: (total / (ni + cpus) as f64).max(1.0),
        burst_gap_ns: if nb > 0 { bgap / nb as f64 } else { 0.0 },
        idle_gap_ns: if ni > 0 { igap / ni as f64 } else { 0.0 },
        short_lived_fraction: lifetimes.len() as f64 / total,
        short_life_ns: median / std::f64::consts::LN_2,
        long_life_ns: w.duration_ns as f64,
        cohorts: true,
        cohort_fraction: cohorts.cohort_fraction,
        cohort_free_gap_ns: cohorts.cohort_free_gap_ns,
        cohort_short_life_ns: cohorts.median_cohort_life_ns / std::f64::consts::LN_2,
        cohort_bursts_mean: cohorts.cohort_bursts_mean,
        handoff_fraction: cohorts.handoff_fraction,
        handoff_gap_ns: cohorts.handoff_gap_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::workload::from_trace;
    use std::path::Path;

    fn trace(name: &str) -> AllocWorkload {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/traces")
            .join(name);
        from_trace(&p, "t", "k").expect("committed trace")
    }

    fn close(a: f64, b: f64, what: &str) {
        let tol = 0.03 * a.abs().max(b.abs()) + 1e-3;
        assert!((a - b).abs() <= tol, "{what}: preset {a} vs fit {b}");
    }

    /// The presets are the fits of the committed traces (regression: re-recording a trace
    /// or changing `fit` shows up here).
    #[test]
    fn presets_are_fits_of_the_committed_traces() {
        for (shape, file) in [
            ("kernel-compile", "gcc"),
            ("lmbench", "lmbench"),
            ("stream", "stream"),
            ("unixbench", "unixbench"),
            ("dbench", "dbench"),
            ("tbench", "tbench"),
        ] {
            let f = fit(&trace(&format!("{file}.kmem.hmt")));
            let p = preset(shape).unwrap();
            for k in 0..p.order_mix.len().max(f.order_mix.len()) {
                let g = |v: &[f64]| v.get(k).copied().unwrap_or(0.0);
                close(
                    g(&p.order_mix),
                    g(&f.order_mix),
                    &format!("{shape} order {k}"),
                );
            }
            close(p.burst_allocs_mean, f.burst_allocs_mean, shape);
            close(p.burst_gap_ns, f.burst_gap_ns, shape);
            close(p.idle_gap_ns, f.idle_gap_ns, shape);
            close(p.short_lived_fraction, f.short_lived_fraction, shape);
            close(p.short_life_ns, f.short_life_ns, shape);
            close(p.long_life_ns, f.long_life_ns, shape);
            close(p.cohort_fraction, f.cohort_fraction, shape);
            close(p.cohort_free_gap_ns, f.cohort_free_gap_ns, shape);
            close(p.cohort_short_life_ns, f.cohort_short_life_ns, shape);
            close(p.cohort_bursts_mean, f.cohort_bursts_mean, shape);
            close(p.handoff_fraction, f.handoff_fraction, shape);
            close(p.handoff_gap_ns, f.handoff_gap_ns, shape);
        }
    }

    /// A synthetic stream fitted again gives back (about) its own parameters.
    #[test]
    fn fit_recovers_the_generator_parameters() {
        for shape in SHAPES {
            let p = Synthetic {
                threads: 2,
                allocs_per_thread: 20_000,
                ..preset(shape).unwrap()
            };
            let f = fit(&p.generate(3, shape));
            assert_eq!((f.threads, f.allocs_per_thread), (2, 20_000));
            for (k, (&a, &b)) in p.order_mix.iter().zip(&f.order_mix).enumerate() {
                let total: f64 = p.order_mix.iter().sum();
                assert!(
                    (a / total - b).abs() < 0.02,
                    "{shape} order {k}: {a} vs {b}"
                );
            }
            let r = f.burst_allocs_mean / p.burst_allocs_mean;
            assert!((0.7..1.4).contains(&r), "{shape} burst {r}");
            let r = f.idle_gap_ns / p.idle_gap_ns;
            assert!((0.7..1.4).contains(&r), "{shape} idle gap {r}");
        }
    }

    #[test]
    fn unknown_shape_is_an_error() {
        let spec = SyntheticSpec {
            shape: Some("lmbnch".into()),
            ..Default::default()
        };
        let source = crate::config::Source::parse("", "f.toml").unwrap();
        let e = Validator::check(&source, &spec).unwrap_err();
        assert_eq!(e.key, "shape");
        assert!(e.message.contains("lmbench"), "{e}");
    }
}
