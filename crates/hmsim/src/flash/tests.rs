use proptest::prelude::*;

use super::*;

fn geo(logical: u32, ppb: u32, op: f64, gc_free: u32) -> Geometry {
    geo_dies(logical, ppb, op, gc_free, 1)
}

fn geo_dies(logical: u32, ppb: u32, op: f64, gc_free: u32, dies: u32) -> Geometry {
    Geometry {
        logical_pages: logical,
        pages_per_block: ppb,
        over_provisioning: op,
        channels: 2.min(dies),
        dies_per_channel: dies / 2.min(dies),
        page_bytes: 4096,
        channel_gb_s: None,
        gc_free_blocks: gc_free,
    }
}

fn ftl(g: Geometry, gc: &str) -> Ftl {
    Ftl::new(g, preset("study").unwrap(), build_gc(gc, 1).unwrap())
}

#[test]
fn flash_waf_hand_computed() {
    // 4 blocks of 2 pages, 4 logical pages. Writes 0 1 2 3 fill B0, B1; 0 2 fill B2; the
    // 7th write (0) opens B3 with no block left free: greedy cleans B0 (1 valid: lpn 1,
    // ties broken by the lower block) = 1 copy; the 8th (2) opens B0 and cleans B2, which
    // by then holds nothing valid. WAF = (8 + 1) / 8.
    let mut f = ftl(geo(4, 2, 0.0, 1), "greedy");
    assert_eq!(f.geometry().blocks(), 4);
    let mut ops = Vec::new();
    for lpn in [0, 1, 2, 3, 0, 2, 0, 2] {
        f.write(lpn, &mut ops);
    }
    assert_eq!(f.stats.host_writes, 8);
    assert_eq!(f.stats.gc_writes, 1);
    assert_eq!(f.stats.erases, 2);
    assert_eq!(f.stats.waf(), Some(9.0 / 8.0));
    let reads = ops.iter().filter(|o| o.kind == OpKind::Read).count();
    let progs = ops.iter().filter(|o| o.kind == OpKind::Program).count();
    assert_eq!((reads, progs), (1, 9));
    f.check().unwrap();
}

#[test]
fn flash_sequential_overwrites_never_copy() {
    let mut f = ftl(geo(256, 16, 0.1, 2), "greedy");
    let mut ops = Vec::new();
    for _ in 0..5 {
        for lpn in 0..256 {
            f.write(lpn, &mut ops);
        }
    }
    assert_eq!(f.stats.gc_writes, 0);
    assert_eq!(f.stats.waf(), Some(1.0));
    assert!(f.stats.erases > 0);
}

#[test]
fn flash_preconditioning_leaves_gc_running() {
    let mut f = ftl(geo(4096, 64, 0.07, 2), "greedy");
    f.precondition(0.6, 0.5, &mut crate::rng::stream(1, "t"));
    assert_eq!(f.stats, FtlStats::default());
    assert!(f.free_blocks() <= 3);
    f.check().unwrap();
}

#[test]
fn flash_units_idle_time_is_the_sum_and_busy_units_delay() {
    let mut u = Units::new(2, 4);
    let op = |kind, die| FlashOp {
        kind,
        die,
        array_ns: 100,
        xfer_ns: 10,
    };
    let ops = [
        op(OpKind::Program, 0),
        op(OpKind::Read, 1),
        op(OpKind::Erase, 0),
    ];
    // The read (die 1) overlaps the program (die 0); the erase waits for both, then die 0.
    assert_eq!(u.idle_span(&ops), 110 + 100);
    assert_eq!(u.clone().schedule(&ops, 1000), 1000 + u.idle_span(&ops));
    u.run(&op(OpKind::Program, 0), 1000);
    assert!(u.schedule(&ops, 1000) > 1000 + u.idle_span(&ops));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn flash_invariants_under_random_writes(
        writes in proptest::collection::vec((0u32..200, any::<bool>()), 1..3000),
        gc in 0usize..3,
        ppb in 2u32..17,
        op in 0.0f64..0.3,
        dies in prop_oneof![Just(1u32), Just(2), Just(4)],
    ) {
        let mut f = ftl(geo_dies(200, ppb, op, 2, dies), GC_POLICIES.names()[gc]);
        let mut live = std::collections::BTreeSet::new();
        let mut ops = Vec::new();
        for &(lpn, trim) in &writes {
            if trim {
                f.trim(lpn);
                live.remove(&lpn);
            } else {
                f.write(lpn, &mut ops);
                live.insert(lpn);
            }
        }
        prop_assert!(f.check().is_ok(), "{:?}", f.check());
        // GC never loses data: exactly the live pages are mapped, each to one valid page.
        for lpn in 0..200u32 {
            prop_assert_eq!(f.lookup(lpn) != NONE, live.contains(&lpn));
        }
        if let Some(w) = f.stats.waf() {
            prop_assert!(w >= 1.0);
        }
        let programs = ops.iter().filter(|o| o.kind == OpKind::Program).count() as u64;
        prop_assert_eq!(programs, f.stats.host_writes + f.stats.gc_writes);
        let erases = ops.iter().filter(|o| o.kind == OpKind::Erase).count() as u64;
        prop_assert_eq!(erases, f.stats.erases);
        let sb_erases: u64 = f.erase_counts().iter().map(|&e| e as u64).sum();
        prop_assert_eq!(sb_erases * dies as u64, f.stats.erases);
    }
}
