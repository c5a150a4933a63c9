//! Tier engine: closed forms, Little's law, fixed point, conservation, determinism, and the
//! contention measurements of Vuppalapati & Agarwal, ACM SOSP 2024 as regression ranges.

use hmsim::mempath::{solve_fixed_point, PathResource, Source, TierSpec};
use hmsim::tier::colloid::ColloidParams;
use hmsim::tier::hemem::HeMemParams;
use hmsim::tier::params::{self, reference_tiers, CORES_PER_INTENSITY};
use hmsim::tier::sim::{app_throughput, steady_point};
use hmsim::tier::{
    make_policy, simulate, Antagonists, Gups, GupsSpec, PageTable, SimParams, SimResult,
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
        migrate_limit_gb_s: None,
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
        // A 50/50 mix lowers the media's saturation by 28 % (docs/tiering.md, model).
        assert!((t.media_saturation_gb_s(0.5) / t.media_saturation_gb_s(1.0) - 0.72).abs() < 1e-12);
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

/// The Colloid paper's contention measurements, as regression ranges (see the report test for the
/// values).
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

/// With no contention and a hot set that fits, every migrating policy converges to
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
    assert!(c.hot_share_default < 0.3, "{}", c.hot_share_default);
    assert!(c.throughput_gb_s > b.throughput_gb_s);
    let gap =
        |q: &hmsim::tier::sim::QuantumRecord| (q.latency_ns[0] - q.latency_ns[1]) / q.latency_ns[0];
    let start = gap(&col.timeline[0]);
    // With all of the hot set in the alternate tier the antagonists alone keep the default
    // tier at ~283 ns against ~162 ns (gap 0.43 of L_D, from 0.61): Colloid keeps moving
    // hot pages out, toward that placement.
    assert!(
        gap(c) < 0.8 * start,
        "latency gap {} from {start}, hot share {}",
        gap(c),
        c.hot_share_default
    );
}

/// After the hot set moves (the convergence experiment, docs/tiering.md fig. 4), HeMem finds it
/// again from samples alone.
#[test]
fn tier_hemem_follows_a_moving_hot_set() {
    let p = SimParams {
        tiers: reference_tiers(),
        page_bytes: 2 << 20,
        quantum_s: 0.01,
        duration_s: 16.0,
        sample_period: 5003,
        migrate_limit_gb_s: None,
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

fn remote_tier(media_gb_s: f64, link_read: f64, link_write: f64) -> TierSpec {
    let mut t = reference_tiers().remove(1);
    t.read_bandwidth_gb_s = media_gb_s;
    t.path = vec![PathResource::duplex("link", link_read, link_write)];
    t
}

/// A tier saturates at its tightest resource: the media with its mix penalty, each link
/// direction with its share of the traffic.
#[test]
fn tier_saturation_is_the_tightest_resource() {
    // Reference remote socket: DRAM 160 GB/s reads (115.2 at 50/50), UPI 75 GB/s each way.
    let t = reference_tiers().remove(1);
    assert!(
        (t.saturation_gb_s(1.0) - 75.0).abs() < 1e-9,
        "pure reads: UPI toward the CPU"
    );
    assert!(
        (t.saturation_gb_s(0.0) - 75.0).abs() < 1e-9,
        "pure writes: UPI toward the tier"
    );
    assert!(
        (t.saturation_gb_s(0.5) - 160.0 * 0.72).abs() < 1e-9,
        "50/50: the DRAM"
    );
    assert_eq!(t.bottleneck(1.0), 1);
    assert_eq!(t.bottleneck(0.5), 0);
    // Slow media behind a fast link: the media binds for every mix.
    let m = remote_tier(40.0, 100.0, 100.0);
    for r in [0.0, 0.3, 0.5, 1.0] {
        let media = 40.0 * (1.0 - 0.28 * 4.0 * r * (1.0 - r));
        assert!((m.saturation_gb_s(r) - media).abs() < 1e-9);
    }
    // An asymmetric link (a CXL x8 port slow toward the device): writes bind.
    let w = remote_tier(500.0, 60.0, 20.0);
    assert!((w.saturation_gb_s(0.5) - 40.0).abs() < 1e-9);
    assert!((w.saturation_gb_s(1.0) - 60.0).abs() < 1e-9);
    assert!((w.saturation_gb_s(0.0) - 20.0).abs() < 1e-9);
    // The solver runs at that saturation for every mix (approached asymptotically where the
    // media's mixed-queueing term diverges), with Little's law.
    for (tier, r) in [(&t, 1.0), (&t, 0.0), (&t, 0.5), (&w, 0.5), (&m, 0.3)] {
        let sat = tier.saturation_gb_s(r);
        let (x, l) = tier.solve(1e7, 0.0, r);
        assert!(x <= sat && x / sat > 0.999, "{x} vs {sat}");
        assert!((x * l - 1e7).abs() < 1e-3);
    }
}

/// The path's links use their own curve: with the link far from saturation the remote tier's
/// latency is the media's curve, not a link-limited one.
#[test]
fn tier_latency_follows_the_bottleneck_curve() {
    let t = reference_tiers().remove(1);
    let mut media_only = t.clone();
    media_only.path.clear();
    // 50 GB/s of 50/50 traffic: the UPI runs each direction at 25/75 = 33 %, the DRAM at 43 %.
    let l = t.curve_latency_ns(50.0, 0.5);
    assert!((l - media_only.curve_latency_ns(50.0, 0.5)).abs() < 1e-9);
    // Pure reads at 70 GB/s: the UPI (93 %) is the bottleneck and its curve sets the latency.
    let l = t.curve_latency_ns(70.0, 1.0);
    let upi = t.path[0].curve.factor(70.0 / 75.0) * t.unloaded_latency_ns;
    assert!((l - upi).abs() < 1e-9);
    assert!(l > media_only.curve_latency_ns(70.0, 1.0));
}

/// More contention never raises the default tier's throughput; a slower alternate tier never
/// raises the best static placement.
#[test]
fn tier_monotone_in_contention_and_alternate_latency() {
    let spec = GupsSpec::default();
    let g = Gups::new(&spec, 2 << 20);
    let best = |alt_ns: f64, cores: u32| -> f64 {
        let mut tiers = reference_tiers();
        tiers[1].unloaded_latency_ns = alt_ns;
        let default_pages = tiers[0].capacity_bytes / (2 << 20);
        (0..=10)
            .map(|k| {
                let o = hmsim::tier::oracle::OracleStatic::new(&g, default_pages, k as f64 / 10.0);
                use hmsim::tier::TieringPolicy;
                let caps: Vec<u64> = tiers.iter().map(|t| t.capacity_bytes).collect();
                let pt = PageTable::place(g.pages, 2 << 20, &caps, |p| o.initial_tier(p)).unwrap();
                let shares = g.tier_shares(&pt);
                let fp = steady_point(&tiers, &g, &shares, &antagonists(cores), cores);
                // Default-tier application throughput falls with contention at any placement.
                app_throughput(&fp, &g).1
            })
            .fold(0.0, f64::max)
    };
    let (g2, shares) = gups_hot_in_default();
    let tiers = reference_tiers();
    let mut last_default = f64::INFINITY;
    for c in 0..=20 {
        let fp = steady_point(&tiers, &g2, &shares, &antagonists(c), c);
        let reads_d = fp.reads[0][0] / fp.tiers[0].latency_ns;
        assert!(
            reads_d <= last_default * (1.0 + 1e-9),
            "{c} cores: {reads_d}"
        );
        last_default = reads_d;
    }
    for cores in [0, 10] {
        let mut last = f64::INFINITY;
        for alt in [135.0, 148.0, 168.0, 192.0, 250.0] {
            let b = best(alt, cores);
            assert!(
                b <= last * (1.0 + 1e-9),
                "{alt} ns at {cores} cores: {b} > {last}"
            );
            last = b;
        }
    }
}

/// Lines in flight grow with object size up to the streaming in-flight limit, and PEBS
/// samples count lines, so a large object is sampled once per line.
#[test]
fn tier_lines_in_flight_grow_with_object_size_up_to_the_cap() {
    let tiers = reference_tiers();
    let mut last = 0.0;
    let mut capped = false;
    for size in [64u64, 128, 256, 1024, 4096] {
        let spec = GupsSpec {
            object_size_bytes: size,
            hot_offset_bytes: Some(0),
            ..Default::default()
        };
        let g = Gups::new(&spec, 2 << 20);
        let caps: Vec<u64> = tiers.iter().map(|t| t.capacity_bytes).collect();
        let pt = PageTable::first_touch(g.pages, 2 << 20, &caps).unwrap();
        let fp = steady_point(&tiers, &g, &g.tier_shares(&pt), &antagonists(0), 0);
        let inflight: f64 = fp.reads[0].iter().sum();
        let per_core = inflight / spec.cores as f64;
        let want = (spec.mlp * g.lines_per_access()).min(params::ANTAGONIST_READS_PER_CORE);
        assert!(
            (per_core / want - 1.0).abs() < 1e-9,
            "{size} B: {per_core} vs {want}"
        );
        assert!(per_core >= last);
        capped |= (per_core - params::ANTAGONIST_READS_PER_CORE).abs() < 1e-9;
        last = per_core;
    }
    assert!(capped, "4 KiB objects reach the cap");
    // Samples per simulated second scale with lines, not objects: at equal line rate a
    // 4 KiB-object run is sampled about as often as a 64 B one.
    let samples = |size: u64| {
        let p = SimParams {
            tiers: reference_tiers(),
            page_bytes: 2 << 20,
            quantum_s: 0.01,
            duration_s: 0.5,
            sample_period: 5003,
            migrate_limit_gb_s: None,
            ewma_alpha: 0.5,
            seed: 4,
        };
        let spec = GupsSpec {
            object_size_bytes: size,
            ..Default::default()
        };
        let mut pol =
            make_policy("hemem", &HeMemParams::default(), &ColloidParams::default()).unwrap();
        let r = simulate(&p, Gups::new(&spec, 2 << 20), &antagonists(0), pol.as_mut()).unwrap();
        let lines: f64 = r.timeline.iter().map(|q| q.throughput_gb_s).sum::<f64>() / 128.0;
        r.work.samples_processed as f64 / lines
    };
    let (a, b) = (samples(64), samples(4096));
    assert!((a / b - 1.0).abs() < 0.05, "samples per line {a} vs {b}");
}
