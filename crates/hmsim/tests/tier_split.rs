//! MEMTIS's skew-driven huge-page split (Lee et al., ACM SOSP 2023; docs/tiering.md): a huge page
//! whose accesses sit on a few 4 KiB sub-pages is split, its hot sub-pages end in the default
//! tier and its cold remainder leaves it; uniform huge pages never split; runs repeat exactly.

use hmsim::tier::memtis::MemtisParams;
use hmsim::tier::params::reference_tiers;
use hmsim::tier::{
    make_policy_with, simulate, Antagonists, Gups, GupsSpec, PolicyParams, SimParams, SimResult,
};

const HUGE: u64 = 2 << 20;
const KIB: u64 = 1024;

fn params(default_bytes: u64, alt_bytes: u64, duration_s: f64, seed: u64) -> SimParams {
    let mut tiers = reference_tiers();
    tiers[0].capacity_bytes = default_bytes;
    tiers[1].capacity_bytes = alt_bytes;
    SimParams {
        tiers,
        page_bytes: HUGE,
        quantum_s: 0.01,
        duration_s,
        sample_period: 5003,
        migrate_limit_gb_s: None,
        ewma_alpha: 0.5,
        seed,
    }
}

/// MEMTIS with its thresholds on a small scale: adaptation every 200 samples and cooling
/// every 4,000 (the artifact's 100,000 / 2,000,000 suit a 100 GB working set; here they keep
/// the few huge pages below MEMTIS's "too hot to split" bin 13, as a huge page's share of the
/// samples is in a large working set).
fn memtis(split: bool) -> PolicyParams {
    PolicyParams {
        memtis: MemtisParams {
            adapt_every_samples: 200,
            cool_every_samples: 4_000,
            split,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// MEMTIS on GUPS whose hot set is placed in 4 KiB units (as it is whenever MEMTIS may
/// split), so runs with and without splitting see the same accesses.
fn run(p: &SimParams, spec: &GupsSpec, pp: &PolicyParams) -> SimResult {
    let mut pol = make_policy_with("memtis", pp).unwrap();
    let gups = Gups::with_units(spec, HUGE, 4096);
    simulate(p, gups, &Antagonists::reference(0), pol.as_mut()).unwrap()
}

/// The skewed case: 16 MiB of GUPS (8 huge pages) whose 64 KiB hot set straddles the
/// boundary of pages 0 and 1 (8 hot sub-pages in each, 90 % of the accesses); the default
/// tier holds one huge page, and MEMTIS keeps 3 % of it free, so no huge page can be hot
/// there: only base pages can use it. Hand-worked expectation: eHR (≈ 0.95 × 0.9 of the
/// samples, those to the 16 hot sub-pages) far exceeds rHR (≈ the default tier's share of
/// the uniform 10 %), so MEMTIS splits; pages 0 and 1 are the most skewed (Σc²/u² of 8 hot
/// sub-pages with ~90 % of the samples), so they split first; their hot base pages are then
/// hot (bin 15) and promoted, the cold remainder of page 0 demoted.
fn skewed() -> (SimParams, GupsSpec) {
    let p = params(HUGE, 64 * HUGE, 6.0, 3);
    let spec = GupsSpec {
        working_set_bytes: 8 * HUGE,
        hot_set_bytes: 64 * KIB,
        hot_offset_bytes: Some(HUGE - 32 * KIB),
        cores: 1,
        ..Default::default()
    };
    (p, spec)
}

#[test]
fn tier_split_a_skewed_huge_page_splits_and_its_hot_sub_pages_reach_the_default_tier() {
    let (p, spec) = skewed();
    let r = run(&p, &spec, &memtis(true));
    let pt = &r.pages;
    assert!(pt.splittable());
    assert!(
        pt.is_split(0) && pt.is_split(1),
        "the two skewed pages split"
    );
    assert!(pt.split_count() >= 2);
    // The 16 hot sub-pages: 504..512 of page 0 and 0..8 of page 1.
    let hot: Vec<u64> = (504..512)
        .map(|i| pt.base_id(0, i))
        .chain((0..8).map(|i| pt.base_id(1, i)))
        .collect();
    for &b in &hot {
        assert_eq!(pt.tier(b), 0, "hot base page {b} in the default tier");
    }
    assert_eq!(r.timeline.last().unwrap().hot_share_default, 1.0);
    // Page 0 started in the default tier; its cold remainder is out of it.
    let cold_left = (0..504).filter(|&i| pt.tier(pt.base_id(0, i)) == 0).count();
    assert!(
        cold_left < 504,
        "{cold_left} cold base pages of page 0 stayed"
    );
    // Bytes per tier are conserved and within capacity.
    let bytes = pt.bytes_by_tier();
    assert_eq!(bytes.iter().sum::<u64>(), 8 * HUGE);
    assert!(bytes[0] <= HUGE);
    for t in 0..2 {
        assert_eq!(pt.count_by_tier()[t], pt.used_units(t));
    }
    // Throughput beats the same run without splitting (hot data now in the fast tier).
    let r0 = run(&p, &spec, &memtis(false));
    assert_eq!(r0.pages.split_count(), 0);
    let l = r0.timeline.last().unwrap();
    assert!(
        l.hot_share_default < 0.01,
        "without splitting no huge page is hot enough"
    );
    let tail = |r: &SimResult| {
        let t = &r.timeline[r.timeline.len() - 100..];
        t.iter().map(|q| q.throughput_gb_s).sum::<f64>() / t.len() as f64
    };
    assert!(tail(&r) > tail(&r0), "{} vs {}", tail(&r), tail(&r0));
}

#[test]
fn tier_split_runs_repeat_exactly() {
    let (p, spec) = skewed();
    let a = run(&p, &spec, &memtis(true));
    let b = run(&p, &spec, &memtis(true));
    assert_eq!(a.timeline, b.timeline);
    assert_eq!(a.pages, b.pages);
    assert_eq!(a.migrations, b.migrations);
}

/// GUPS with a 2 MiB-aligned hot set: every sub-page of a hot page is equally hot, the hot
/// set fits, so the real hit ratio meets the estimated one and nothing splits, although
/// split decisions are taken (many cooling periods, the decision's sample count passed).
#[test]
fn tier_split_uniform_huge_pages_never_split() {
    let p = params(64 * HUGE, 256 * HUGE, 20.0, 5);
    let spec = GupsSpec {
        working_set_bytes: 128 * HUGE,
        hot_set_bytes: 32 * HUGE,
        cores: 2,
        ..Default::default()
    };
    let r = run(&p, &spec, &memtis(true));
    assert!(
        r.work.samples_processed > 200_000,
        "{}",
        r.work.samples_processed
    );
    assert_eq!(r.pages.split_count(), 0);
    assert!(r.timeline.last().unwrap().hot_share_default > 0.99);
}

/// Trace-driven mode splits too: the skewed case as a native trace (accesses carry their
/// 4 KiB index inside the huge page, so samples name sub-pages), replayed by the same policy.
#[test]
fn tier_split_trace_driven_replay_splits_the_skewed_pages() {
    use hmsim::tier::replay::{simulate_stream, StreamDemand};
    use hmsim::tier::stream::TraceStream;
    use hmsim::trace::{Kind, NativeHeader, NativeWriter, TraceRecord};
    use std::io::Write;

    let dir = std::env::temp_dir().join(format!("hmsim-tier-split-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("skewed-huge.hmt");
    {
        let f = std::fs::File::create(&path).unwrap();
        let mut w =
            NativeWriter::new(std::io::BufWriter::new(f), &NativeHeader::default()).unwrap();
        // First touch in address order: trace page numbers equal huge page indexes.
        for p in 0..8u64 {
            w.write(&TraceRecord::new(Kind::Load, p * HUGE, 8)).unwrap();
        }
        let hot_start = HUGE - 32 * KIB;
        let mut x = 99u64;
        for i in 0..200_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let addr = if (x >> 33) % 10 < 9 {
                hot_start + (x >> 20) % (64 * KIB)
            } else {
                (x >> 20) % (8 * HUGE)
            } & !63;
            let kind = if i % 2 == 0 { Kind::Load } else { Kind::Store };
            w.write(&TraceRecord::new(kind, addr, 8)).unwrap();
        }
        w.finish().unwrap().flush().unwrap();
    }
    let (p, _) = skewed();
    let demand = StreamDemand {
        cores: 1,
        mlp: 4.0,
        object_size_bytes: 64,
        read_fraction: 0.5,
        weight: 100.0,
    };
    let run = |split: bool| {
        let mut s = TraceStream::open(&path, HUGE, "t.toml", "workload.trace").unwrap();
        let mut pol = make_policy_with("memtis", &memtis(split)).unwrap();
        simulate_stream(
            &p,
            &demand,
            &mut s,
            &Antagonists::reference(0),
            pol.as_mut(),
        )
        .unwrap()
        .unwrap()
    };
    let (r, c) = run(true);
    let (r0, _) = run(false);
    std::fs::remove_dir_all(&dir).ok();
    let pt = &r.pages;
    assert_eq!(c.per_tier.iter().sum::<u64>(), c.accesses);
    assert!(
        pt.is_split(0) && pt.is_split(1),
        "{} splits",
        pt.split_count()
    );
    let hot_in_default = (504..512)
        .map(|i| pt.base_id(0, i))
        .chain((0..8).map(|i| pt.base_id(1, i)))
        .filter(|&b| pt.tier(b) == 0)
        .count();
    assert!(
        hot_in_default >= 14,
        "{hot_in_default} of 16 hot base pages"
    );
    assert_eq!(pt.bytes_by_tier().iter().sum::<u64>(), 8 * HUGE);
    assert!(pt.bytes_by_tier()[0] <= HUGE);
    // Without splitting, the default tier gets less of the traffic.
    assert_eq!(r0.pages.split_count(), 0);
    let alt = |r: &SimResult| r.timeline.last().unwrap().alt_traffic_share;
    assert!(alt(&r) < alt(&r0), "{} vs {}", alt(&r), alt(&r0));
}
