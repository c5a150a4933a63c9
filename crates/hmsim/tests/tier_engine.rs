//! Tier engine: closed forms, Little's law, fixed point, conservation, determinism, and the
//! spec's contention calibration (05-tiering.md §3) as regression ranges.

use hmsim::tier::colloid::ColloidParams;
use hmsim::tier::hemem::HeMemParams;
use hmsim::tier::params::{self, reference_tiers, CORES_PER_INTENSITY};
use hmsim::tier::sim::{app_throughput, steady_point};
use hmsim::tier::{
    make_policy, simulate, solve_fixed_point, Antagonists, Gups, GupsSpec, PageTable, SimParams,
    SimResult, Source,
};

fn antagonists(cores: u32) -> Antagonists {
    Antagonists::reference(cores)
}

/// GUPS with its hot set at the start of the buffer, placed first-touch: hot set in the
/// default tier.
fn gups_hot_in_default() -> (Gups, Vec<f64>) {
    let spec = GupsSpec {
        hot_offset_bytes: Some(0),
        ..Default::default()
    };
    let g = Gups::new(&spec, 2 << 20);
    let caps: Vec<u64> = reference_tiers().iter().map(|t| t.capacity_bytes).collect();
    let pt = hmsim::tier::PageTable::first_touch(g.pages, 2 << 20, &caps).unwrap();
    let shares = g.tier_shares(&pt);
    (g, shares)
}

/// Antagonists alone: share of the default tier's (read) bandwidth they use.
fn antagonist_share(intensity: u32) -> f64 {
    let tiers = reference_tiers();
    let src = [Source::Pinned {
        tier: 0,
        reads: (intensity * CORES_PER_INTENSITY) as f64 * params::ANTAGONIST_READS_PER_CORE,
        read_fraction: params::ANTAGONIST_READ_FRACTION,
    }];
    let fp = solve_fixed_point(&tiers, &src, &[]);
    assert!(fp.converged);
    fp.tiers[0].bandwidth_gb_s / tiers[0].read_bandwidth_gb_s
}

#[test]
fn tier_calibration_report() {
    let tiers = reference_tiers();
    let (g, shares) = gups_hot_in_default();
    println!(
        "default-tier access share with hot set in default: {:.3}",
        shares[0]
    );
    for i in 0..=3u32 {
        let a = antagonist_share(i);
        let fp = steady_point(
            &tiers,
            &g,
            &shares,
            &antagonists(i * CORES_PER_INTENSITY),
            i * CORES_PER_INTENSITY,
        );
        let (_, gb) = app_throughput(&fp, &g);
        println!(
            "intensity {i}: antagonists alone {:.1} % | with GUPS: L_D {:.1} ns ({:.2}x), L_A {:.1} ns, GUPS {:.1} GB/s, D bw {:.1}",
            a * 100.0,
            fp.tiers[0].latency_ns,
            fp.tiers[0].latency_ns / tiers[0].unloaded_latency_ns,
            fp.tiers[1].latency_ns,
            gb,
            fp.tiers[0].bandwidth_gb_s
        );
    }
}

fn sim(policy: &str, intensity: u32, seed: u64, duration_s: f64) -> SimResult {
    sim_from(policy, intensity, seed, duration_s, None)
}

fn sim_from(
    policy: &str,
    intensity: u32,
    seed: u64,
    duration_s: f64,
    hot_offset_bytes: Option<u64>,
) -> SimResult {
    let p = SimParams {
        tiers: reference_tiers(),
        page_bytes: 2 << 20,
        quantum_s: 0.01,
        duration_s,
        sample_period: 5003,
        migrate_limit_gb_s: 10.0,
        ewma_alpha: 0.5,
        seed,
    };
    let mut pol = make_policy(policy, &HeMemParams::default(), &ColloidParams::default()).unwrap();
    let spec = GupsSpec {
        hot_offset_bytes,
        ..Default::default()
    };
    let g = Gups::new(&spec, 2 << 20);
    simulate(
        &p,
        g,
        &antagonists(intensity * CORES_PER_INTENSITY),
        pol.as_mut(),
    )
    .unwrap()
}

#[test]
fn tier_unloaded_latency_at_zero_load() {
    for t in reference_tiers() {
        let (x, l) = t.solve(64.0, 0.0, 1.0);
        assert!(x > 0.0);
        assert!((l / t.unloaded_latency_ns - 1.0).abs() < 1e-3, "{l}");
        let fp = solve_fixed_point(
            std::slice::from_ref(&t),
            &[Source::Pinned {
                tier: 0,
                reads: 0.01,
                read_fraction: 1.0,
            }],
            &[],
        );
        assert!((fp.tiers[0].latency_ns / t.unloaded_latency_ns - 1.0).abs() < 1e-3);
    }
}

#[test]
fn tier_bandwidth_never_exceeds_saturation() {
    for t in reference_tiers() {
        for rf in [0.05, 0.3, 0.5, 0.8, 1.0] {
            let sat = t.saturation_gb_s(rf);
            let mut last_l = 0.0;
            for k in 0..60 {
                let bytes = 64.0 * 1.3f64.powi(k);
                for open in [0.0, 0.3 * sat, 2.0 * sat] {
                    let (x, l) = t.solve(bytes, open, rf);
                    assert!(
                        x + open.min(0.9 * sat) <= sat * (1.0 + 1e-9),
                        "{x} {open} {sat}"
                    );
                    // Little's law on the closed-loop part.
                    assert!((x * l - bytes).abs() <= 1e-6 * bytes);
                }
                let (_, l) = t.solve(bytes, 0.0, rf);
                assert!(
                    l >= last_l * (1.0 - 1e-12),
                    "latency grows with load: {} {rf} {k} {l} {last_l}",
                    t.name
                );
                last_l = l;
            }
        }
        // A 50/50 mix lowers saturation by 28 % (spec).
        assert!((t.saturation_gb_s(0.5) / t.saturation_gb_s(1.0) - 0.72).abs() < 1e-12);
    }
}

#[test]
fn tier_fixed_point_converges_and_matches_closed_loop_throughput() {
    let tiers = reference_tiers();
    let (g, shares) = gups_hot_in_default();
    for i in 0..=3 {
        let c = i * CORES_PER_INTENSITY;
        let fp = steady_point(&tiers, &g, &shares, &antagonists(c), c);
        assert!(fp.converged, "intensity {i}: {} iterations", fp.iterations);
        // throughput = cores × MLP / average latency (access-weighted).
        let avg: f64 = shares
            .iter()
            .zip(&fp.tiers)
            .map(|(f, t)| f * t.latency_ns)
            .sum();
        let (acc, _) = app_throughput(&fp, &g);
        let expect = g.spec.cores as f64 * g.spec.mlp / avg;
        assert!((acc / expect - 1.0).abs() < 1e-6, "{acc} vs {expect}");
        for t in &fp.tiers {
            if t.arrivals_per_ns > 0.0 {
                assert!((t.occupancy / t.arrivals_per_ns / t.latency_ns - 1.0).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn tier_littles_law_and_convergence_every_quantum() {
    let r = sim("colloid-hemem", 3, 1, 3.0);
    for q in &r.timeline {
        assert!(q.converged, "t={} not converged", q.time_s);
        for (l, little) in q.latency_ns.iter().zip(&q.little_ns) {
            assert!((l / little - 1.0).abs() < 1e-9, "{l} vs {little}");
        }
        for (b, t) in q.bandwidth_gb_s.iter().zip(reference_tiers()) {
            assert!(*b <= t.read_bandwidth_gb_s);
        }
    }
}

fn check_conservation(pt: &PageTable, pages: u64) {
    let counted = pt.count_by_tier();
    assert_eq!(counted.iter().sum::<u64>(), pages);
    for (t, c) in counted.iter().enumerate() {
        assert_eq!(*c, pt.used_pages(t));
        assert!(*c <= pt.capacity_pages(t));
    }
}

#[test]
fn tier_migration_conserves_pages() {
    use rand::Rng;
    let mut rng = hmsim::rng::stream(9, "test.migrate");
    let mut pt = PageTable::first_touch(1000, 4096, &[400 * 4096, 700 * 4096, 100 * 4096]).unwrap();
    for _ in 0..20_000 {
        let page = rng.random_range(0..1100u64);
        if rng.random::<bool>() {
            let _ = pt.migrate(page, rng.random_range(0..4usize));
        } else {
            let _ = pt.swap(page, rng.random_range(0..1000u64));
        }
        check_conservation(&pt, 1000);
    }
    for (policy, intensity) in [("hemem", 2), ("colloid-hemem", 1)] {
        let r = sim(policy, intensity, 3, 4.0);
        assert!(r.migrations > 0, "{policy} migrated nothing");
        assert!(r.work.samples_processed > 0);
        check_conservation(&r.pages, r.pages.pages());
        // The incrementally tracked hot share matches a recount of the page table.
        let g = Gups::new(&GupsSpec::default(), 2 << 20);
        let hot = g.hot_per_tier(&r.pages)[0] as f64 / g.hot_pages as f64;
        assert_eq!(hot, r.timeline.last().unwrap().hot_share_default);
    }
}

#[test]
fn tier_same_seed_same_timeline() {
    let a = sim("colloid-hemem", 1, 42, 2.0);
    let b = sim("colloid-hemem", 1, 42, 2.0);
    assert_eq!(a.timeline, b.timeline);
    assert_eq!(a.pages, b.pages);
    let c = sim("colloid-hemem", 1, 43, 2.0);
    assert_ne!(a.pages, c.pages);
}

/// Spec §3 calibration data, as regression ranges (see the report test for the values).
#[test]
fn tier_contention_calibration() {
    let tiers = reference_tiers();
    for (i, spec) in [(1, 0.51), (2, 0.61), (3, 0.70)] {
        let a = antagonist_share(i);
        assert!((a - spec).abs() < 0.05, "intensity {i}: {a} vs {spec}");
    }
    assert_eq!(antagonist_share(0), 0.0);
    let (g, shares) = gups_hot_in_default();
    for (i, ratio) in [(1, 2.5), (2, 3.8), (3, 5.0)] {
        let c = i * CORES_PER_INTENSITY;
        let fp = steady_point(&tiers, &g, &shares, &antagonists(c), c);
        let r = fp.tiers[0].latency_ns / tiers[0].unloaded_latency_ns;
        assert!(
            (r / ratio - 1.0).abs() < 0.1,
            "intensity {i}: {r:.2}x vs {ratio}x"
        );
        let la = fp.tiers[1].latency_ns;
        assert!((130.0..160.0).contains(&la), "alternate {la} ns vs ~146");
    }
    let fp = steady_point(&tiers, &g, &shares, &antagonists(0), 0);
    let (_, gb) = app_throughput(&fp, &g);
    assert!((77.0..81.0).contains(&gb), "0x GUPS {gb} GB/s vs 78-80");
}

/// Issue 6: with no contention and a hot set that fits, every migrating policy converges to
/// "hot set in the default tier".
#[test]
fn tier_policies_bring_the_hot_set_to_the_default_tier_without_contention() {
    for policy in ["hemem", "colloid-hemem"] {
        let r = sim(policy, 0, 5, 10.0);
        let first = &r.timeline[0];
        let last = r.timeline.last().unwrap();
        assert!(first.hot_share_default < 0.2);
        assert!(
            last.hot_share_default > 0.9,
            "{policy}: {}",
            last.hot_share_default
        );
        assert!(last.throughput_gb_s > first.throughput_gb_s);
    }
}

/// Policy behaviour, not calibration: under 3x contention with the hot set starting in the
/// default tier, HeMem keeps it there while Colloid moves hot pages out until the tiers'
/// latency gap closes (here it cannot close fully: the antagonists alone keep the
/// default tier above the alternate one), and ends with higher throughput.
#[test]
fn tier_colloid_moves_hot_pages_out_under_contention() {
    let base = sim_from("hemem", 3, 5, 10.0, Some(0));
    let col = sim_from("colloid-hemem", 3, 5, 10.0, Some(0));
    let (b, c) = (base.timeline.last().unwrap(), col.timeline.last().unwrap());
    assert!(b.hot_share_default > 0.95);
    assert!(c.hot_share_default < 0.9, "{}", c.hot_share_default);
    assert!(c.throughput_gb_s > b.throughput_gb_s);
    let gap =
        |q: &hmsim::tier::sim::QuantumRecord| (q.latency_ns[0] - q.latency_ns[1]) / q.latency_ns[0];
    let start = gap(&col.timeline[0]);
    assert!(gap(c) < 0.6 * start, "latency gap {} from {start}", gap(c));
}

/// After the hot set moves (spec fig. 4), HeMem finds it again from samples alone.
#[test]
fn tier_hemem_follows_a_moving_hot_set() {
    let p = SimParams {
        tiers: reference_tiers(),
        page_bytes: 2 << 20,
        quantum_s: 0.01,
        duration_s: 16.0,
        sample_period: 5003,
        migrate_limit_gb_s: 10.0,
        ewma_alpha: 0.5,
        seed: 11,
    };
    let spec = GupsSpec {
        hot_offset_bytes: Some(0),
        hot_move_s: Some(4.0),
        ..Default::default()
    };
    let mut pol = make_policy("hemem", &HeMemParams::default(), &ColloidParams::default()).unwrap();
    let r = simulate(&p, Gups::new(&spec, 2 << 20), &antagonists(0), pol.as_mut()).unwrap();
    let at = |t: f64| &r.timeline[(t / 0.01) as usize];
    assert!(at(3.9).hot_share_default > 0.99);
    assert!(at(4.0).hot_share_default < 0.2);
    assert!(at(4.0).throughput_gb_s < 0.8 * at(3.9).throughput_gb_s);
    let last = r.timeline.last().unwrap();
    assert!(last.hot_share_default > 0.9, "{}", last.hot_share_default);
}
