use proptest::prelude::*;

use super::capacity::{metadata_pages, min_free_bytes};
use super::mmcache::{
    hit_ratio, hit_ratio_granular, simulate, steady_state, FrameOrder, MemoryModeCache,
    MemoryModePattern, MemoryModeSpec,
};
use super::placer::{Placement, Placer, Task};
use super::policies::{parse_policy, AliusM, KmemDax, KmemDaxPreferred, LinuxDefault};
use super::policy::{PlacementPolicy, Stage};
use super::pool::Pool;
use super::topology::{self, NumaMachine};
use crate::config::Source;
use crate::device::Catalog;

const GIB: u64 = 1 << 30;

fn preset() -> NumaMachine {
    topology::load(
        None,
        Some("aliusm-2s"),
        &Source::parse("", "t.toml").unwrap(),
        &Catalog::builtin(),
    )
    .unwrap()
}

fn all_policies() -> Vec<Box<dyn PlacementPolicy>> {
    super::scenario::DEFAULT_POLICIES
        .iter()
        .map(|p| parse_policy(p, 16).unwrap())
        .collect()
}

fn place(m: &NumaMachine, p: &dyn PlacementPolicy, core: u32, bytes: u64) -> (Pool, Placement) {
    let pool = Pool::for_policy(m, p);
    let mut pl = Placer::new(&pool, 0);
    let (socket, home) = m.home_of_core(core);
    let t = Task {
        id: 0,
        socket,
        home: pool.home(home),
    };
    let r = pl.place(&pool, p, t, bytes / m.spec.page_bytes);
    (pool, r)
}

#[test]
fn preset_capacities_match_the_spec() {
    let m = preset();
    assert_eq!(m.nodes.len(), 16);
    assert_eq!(m.dram_bytes(), 384 * GIB);
    assert_eq!(m.far_bytes(), 12 * 252 * GIB);
    let raw: u64 = m.nodes.iter().map(|n| n.raw_bytes).sum::<u64>() - m.dram_bytes();
    assert_eq!(raw + m.dram_bytes(), 3456 * GIB);
    assert_eq!(
        (
            m.distance(0, 0),
            m.distance(0, 4),
            m.distance(0, 2),
            m.distance(0, 10)
        ),
        (10, 17, 21, 28)
    );
}

#[test]
fn module_capacity_comes_from_the_catalog_unless_given() {
    // The preset names no sizes: 252 GiB usable and 256 GiB raw from `optane-pmem`.
    let m = preset();
    let far: Vec<_> = m
        .nodes
        .iter()
        .filter(|n| n.raw_bytes != n.capacity_bytes)
        .collect();
    assert_eq!(far.len(), 12);
    assert!(far
        .iter()
        .all(|n| n.capacity_bytes == 252 * GIB && n.raw_bytes == 256 * GIB));
    // A size written in the topology wins, and its raw size defaults to it.
    let mut spec: topology::Topology =
        crate::config::parse_toml(topology::PRESETS[0].1, "p").unwrap();
    spec.controllers[0].modules[0].bytes = Some(100 * GIB);
    let m = NumaMachine::build(
        spec,
        &Source::parse("", "p").unwrap(),
        "",
        &Catalog::builtin(),
    )
    .unwrap();
    let n = m
        .nodes
        .iter()
        .find(|n| n.capacity_bytes == 100 * GIB)
        .unwrap();
    assert_eq!(n.raw_bytes, 100 * GIB);
}

#[test]
fn capacity_is_usable_minus_struct_page_reserves_and_metadata() {
    let m = preset();
    // min_free_kbytes = sqrt(16 × managed KiB) is far above its 64 MiB cap on 3.3 TiB.
    let wm = min_free_bytes((384 + 3024) * GIB);
    assert_eq!(wm, 64 << 20);
    // 1 GiB: sqrt(16 × 1,048,576 KiB) = 4,096 KiB.
    assert_eq!(min_free_bytes(1 << 30), 4096 * 1024);
    // Memory Mode: a node is its controller's 3 modules' usable 252 GiB (as in App Direct),
    // less their struct page (64 B per 4 KiB), the kernel's 4 GiB and a quarter of the
    // watermark.
    let mm = Pool::memory_mode(&m);
    let n = &mm.nodes[0];
    assert_eq!(n.budget.managed_bytes, 756 * GIB);
    assert_eq!(n.budget.struct_page_bytes, 756 * GIB / 64);
    assert_eq!(n.budget.reserve_bytes, 4 * GIB + wm / 4);
    assert_eq!(
        n.capacity_pages * 4096,
        756 * GIB - 756 * GIB / 64 - 4 * GIB - wm / 4
    );
    // Flat: the hot-added modules' struct pages live on their controller's DRAM node.
    let flat = Pool::flat(&m);
    assert_eq!(
        flat.nodes[0].budget.struct_page_bytes,
        96 * GIB / 64 + 3 * 252 * GIB / 64
    );
    assert_eq!(flat.nodes[4].budget.struct_page_bytes, 0);
    // Page tables + vmalloc's page array: 8 B + 8 B per page.
    assert_eq!(metadata_pages(1 << 20, 4096), 4096);
    assert_eq!(metadata_pages(1, 4096), 2);
}

#[test]
fn capacity_each_policy_can_place_before_oom() {
    let m = preset();
    let sum = |pool: &Pool, nodes: std::ops::Range<usize>| -> u64 {
        nodes.map(|i| pool.nodes[i].capacity_pages * 4096).sum()
    };
    let flat = Pool::flat(&m);
    let flat_all = sum(&flat, 0..16);
    let expect = [
        ("linux-default", flat_all),
        ("kmem-dax", sum(&flat, 4..10)),
        ("kmem-dax-all", sum(&flat, 4..16)),
        ("kmem-dax-preferred", flat_all),
        ("interleave-all", flat_all),
        ("memory-mode", sum(&Pool::memory_mode(&m), 0..4)),
        ("aliusm", flat_all),
    ];
    for (name, cap) in expect {
        let p = parse_policy(name, 16).unwrap();
        let (_, fits) = place(&m, &p, 0, cap);
        assert!(fits.ok(), "{name} should fit {cap}");
        let (_, over) = place(&m, &p, 0, cap + 4096);
        assert!(!over.ok(), "{name} should run out past {cap}");
        assert_eq!(over.failed_pages, 1, "{name}");
        assert_eq!(over.pages.iter().sum::<u64>() * 4096, cap, "{name}");
    }
    // KMEM_DAX runs out on the socket's six PMem modules while DRAM is free.
    let (_, r) = place(&m, &KmemDax, 0, 2000 * GIB);
    assert_eq!(r.exhausted, vec![4, 5, 6, 7, 8, 9]);
    assert_eq!(r.pages[..4].iter().sum::<u64>(), 0);
}

#[test]
fn memory_mode_cannot_hold_3000_gib_and_says_why() {
    let text = "module = \"numa\"\npolicies = [\"memory-mode\", \"aliusm\"]\n\
                [allocation]\nsize_bytes = 3221225472000\n[swap]\nbytes = 0\n";
    let o = crate::registry::run_scenario(text, "s.toml", &[], &[]).unwrap();
    assert_eq!(o.rows[0]["ok"], false);
    let why = o.rows[0]["oom_reason"].as_str().unwrap();
    assert!(
        why.contains("struct page") && why.contains("page tables"),
        "{why}"
    );
    assert_eq!(o.rows[1]["ok"], true);
    // 3,000 GiB needs 11.7 GiB of page tables and page array.
    let meta = o.rows[1]["metadata_gib"].as_f64().unwrap();
    assert!((meta - 3000.0 / 256.0).abs() < 1e-3, "{meta}");
}

#[test]
fn linux_default_falls_back_by_distance() {
    let m = preset();
    let (_, r) = place(&m, &LinuxDefault, 0, 200 * GIB);
    let g = |n: usize| r.pages[n] * 4096 / GIB;
    // A DRAM node gives 96 - 1.5 (its struct page) - 11.8 (its modules') - 4 GiB.
    assert_eq!((g(0), g(1), g(4), g(2)), (78, 78, 42, 0));
    // PREFERRED: nearest PMem before any DRAM.
    let (_, r) = place(&m, &KmemDaxPreferred, 0, 1600 * GIB);
    let g = |n: usize| r.pages[n] * 4096 / GIB;
    assert_eq!((g(4), g(9), g(0), g(1), g(10)), (251, 251, 78, 9, 0));
}

#[test]
fn aliusm_round_robins_over_its_sockets_modules_after_dram() {
    let m = preset();
    let pool = Pool::flat(&m);
    let mut pl = Placer::new(&pool, 0);
    for (core, id, first) in [(0u32, 0u32, 4usize), (28, 1, 10)] {
        let (socket, home) = m.home_of_core(core);
        let t = Task {
            id,
            socket,
            home: pool.home(home),
        };
        // Exhaust all DRAM (remote too: DRAM first, as Linux does).
        let free_dram: u64 = (0..4).map(|n| pl.free[n]).sum();
        let r = pl.place(&pool, &AliusM, t, free_dram);
        assert!(r.pages[4..].iter().all(|&p| p == 0));
        let mut order = Vec::new();
        for _ in 0..13 {
            let r = pl.place(&pool, &AliusM, t, 1);
            order.push(r.pages.iter().position(|&p| p == 1).unwrap());
        }
        let want: Vec<usize> = (0..13).map(|i| first + i % 6).collect();
        assert_eq!(order, want);
    }
}

/// Page-by-page reference of the kernel's walk, to check the run-length placer.
fn reference(
    pool: &Pool,
    policy: &dyn PlacementPolicy,
    free: &mut [u64],
    cursors: &mut std::collections::BTreeMap<(u32, Vec<usize>), usize>,
    flagged: &mut std::collections::BTreeSet<u32>,
    t: Task,
    pages: u64,
) -> Vec<u64> {
    let mut got = vec![0; free.len()];
    let stages = policy.stages(pool, t.socket, t.home, flagged.contains(&t.id));
    for _ in 0..pages {
        'page: for st in &stages {
            match st {
                Stage::Fill(l) => {
                    if let Some(&n) = l.iter().find(|&&n| free[n] > 0) {
                        free[n] -= 1;
                        got[n] += 1;
                        break 'page;
                    }
                }
                Stage::RoundRobin(l) => {
                    let c = cursors.entry((t.id, l.clone())).or_insert(0);
                    for k in 0..l.len() {
                        let i = (*c + k) % l.len();
                        if free[l[i]] > 0 {
                            free[l[i]] -= 1;
                            got[l[i]] += 1;
                            *c = (i + 1) % l.len();
                            break 'page;
                        }
                    }
                }
            }
        }
    }
    if policy.flags_task(pool, &got) {
        flagged.insert(t.id);
    }
    got
}

fn small_machine(dram: u64, pmem: u64) -> NumaMachine {
    let mut spec: topology::Topology =
        crate::config::parse_toml(topology::PRESETS[0].1, "p").unwrap();
    spec.kernel_reserved_bytes = 0;
    for c in &mut spec.controllers {
        c.dram_bytes = dram * 4096;
        for (k, md) in c.modules.iter_mut().enumerate() {
            md.bytes = Some((pmem + k as u64) * 4096);
            md.raw_bytes = None;
        }
    }
    NumaMachine::build(
        spec,
        &Source::parse("", "p").unwrap(),
        "",
        &Catalog::builtin(),
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn run_length_placement_equals_page_by_page(
        dram in 1u64..40, pmem in 1u64..40, pol in 0usize..7,
        reqs in proptest::collection::vec((0u32..3, 0u32..56, 1u64..120), 1..12),
    ) {
        let m = small_machine(dram, pmem);
        let policy = all_policies().swap_remove(pol);
        let pool = Pool::for_policy(&m, &policy);
        let mut fast = Placer::new(&pool, 0);
        let mut free = fast.free.clone();
        let (mut cur, mut flag) = (Default::default(), Default::default());
        for (id, core, n) in reqs {
            let (socket, home) = m.home_of_core(core);
            let t = Task { id, socket, home: pool.home(home) };
            let a = fast.place(&pool, &policy, t, n);
            let b = reference(&pool, &policy, &mut free, &mut cur, &mut flag, t, n);
            prop_assert_eq!(&a.pages, &b);
            prop_assert_eq!(&fast.free, &free);
            // Conservation: every page is placed or reported missing.
            prop_assert_eq!(a.pages.iter().sum::<u64>() + a.failed_pages, n);
        }
    }

    #[test]
    fn bad_distance_matrices_are_rejected(rows in 0usize..20) {
        let mut spec: topology::Topology = crate::config::parse_toml(topology::PRESETS[0].1, "p").unwrap();
        let row = spec.distances[0].clone();
        spec.distances.resize(rows, row);
        let r = NumaMachine::build(spec, &Source::parse("", "p").unwrap(), "", &Catalog::builtin());
        if rows == 16 {
            prop_assert!(r.is_ok());
        } else {
            let e = r.unwrap_err();
            prop_assert_eq!(e.key, "distances");
        }
    }
}

#[test]
fn memory_mode_closed_form_hit_ratios() {
    let s = 1000;
    // Footprint within the cache on fresh (consecutive) frames: every access hits.
    assert_eq!(
        hit_ratio(
            MemoryModePattern::Stream,
            FrameOrder::Sequential,
            1000,
            s,
            8000,
            64
        ),
        1.0
    );
    assert_eq!(
        hit_ratio(
            MemoryModePattern::Random,
            FrameOrder::Sequential,
            800,
            s,
            8000,
            64
        ),
        1.0
    );
    // Twice the cache: every slot holds two pages; a stream never hits.
    assert_eq!(
        hit_ratio(
            MemoryModePattern::Stream,
            FrameOrder::Sequential,
            2000,
            s,
            8000,
            64
        ),
        0.0
    );
    // Random accesses hit with 1/k: s/p.
    assert!(
        (hit_ratio(
            MemoryModePattern::Random,
            FrameOrder::Sequential,
            4000,
            s,
            8000,
            64
        ) - 0.25)
            .abs()
            < 1e-12
    );
    // Random frames alias even when the footprint fits.
    assert!(
        hit_ratio(
            MemoryModePattern::Stream,
            FrameOrder::Random,
            500,
            s,
            8000,
            64
        ) < 0.8
    );
    // Bigger blocks: a stream's misses per access shrink by 64/B.
    assert_eq!(
        hit_ratio(
            MemoryModePattern::Stream,
            FrameOrder::Sequential,
            2000,
            s,
            8000,
            256
        ),
        0.75
    );
}

#[test]
fn memory_mode_simulation_agrees_with_the_closed_form() {
    let mut rng = crate::rng::stream(7, "mm");
    // Footprint fits: ~100 % after warm-up.
    let c = simulate(
        MemoryModePattern::Stream,
        FrameOrder::Sequential,
        256,
        256,
        2048,
        4096,
        64,
        1,
        3,
        0,
        0,
        &mut rng,
    );
    assert_eq!(c.hit_ratio(), 1.0);
    assert_eq!(c.fills, 0);
    // Two streams whose pages alias (footprint = 2 × cache): every access a conflict miss,
    // and dirty victims written back.
    let c = simulate(
        MemoryModePattern::Stream,
        FrameOrder::Sequential,
        512,
        256,
        2048,
        4096,
        64,
        1,
        3,
        0,
        4,
        &mut rng,
    );
    assert_eq!(c.hit_ratio(), 0.0);
    assert!(c.writebacks > 0 && c.fills == c.accesses);
    for (pat, order, p) in [
        (MemoryModePattern::Random, FrameOrder::Sequential, 700),
        (MemoryModePattern::Random, FrameOrder::Random, 200),
        (MemoryModePattern::Stream, FrameOrder::Random, 150),
        (MemoryModePattern::Random, FrameOrder::Random, 600),
    ] {
        let mut sum = 0.0;
        for k in 0..4 {
            let mut rng = crate::rng::stream(k, "mm");
            sum += simulate(
                pat, order, p, 256, 2048, 4096, 64, 1, 2, 200_000, 0, &mut rng,
            )
            .hit_ratio();
        }
        let sim = sum / 4.0;
        let cf = hit_ratio(pat, order, p, 256, 2048, 64);
        assert!(
            (sim - cf).abs() < 0.05,
            "{pat:?} {order:?} {p}: sim {sim} vs closed form {cf}"
        );
    }
}

const BASE: &str = "module = \"numa\"\nseed = 3\npolicies = [\"linux-default\", \"kmem-dax\", \"memory-mode\", \"aliusm\"]\n\
[allocation]\nsize_bytes = 161061273600\n[app]\nkind = \"superpi\"\nthreads = 4\n";

#[test]
fn scenario_is_deterministic_and_policies_rank() {
    let a = crate::registry::run_scenario(BASE, "s.toml", &[], &[]).unwrap();
    let b = crate::registry::run_scenario(BASE, "s.toml", &[], &[]).unwrap();
    assert_eq!(
        serde_json::to_string(&a.rows).unwrap(),
        serde_json::to_string(&b.rows).unwrap()
    );
    let rt = |i: usize| a.rows[i]["runtime_s"].as_f64().unwrap();
    // 150 GiB fits socket 0's DRAM under Linux default and aliusM: same placement, same time;
    // KMEM_DAX puts it all on PMem: slower.
    assert_eq!(rt(0), rt(3));
    assert!(rt(1) > 1.5 * rt(0));
    assert_eq!(a.rows[1]["pmem_share"].as_f64().unwrap(), 1.0);
    assert!(a.rows[2]["cache_hit_ratio"].as_f64().unwrap() > 0.0);
}

#[test]
fn allocation_time_is_pages_times_cost_plus_zeroing() {
    let text = "module = \"numa\"\npolicies = [\"bind:4\", \"bind:0\", \"bind:2\", \"interleave:4,5,6,7,8,9\", \"interleave:4,5\", \"bind:10\"]\n\
                [allocation]\nsize_bytes = 1073741824\n";
    let o = crate::registry::run_scenario(text, "s.toml", &[], &[]).unwrap();
    let pages = 262144.0;
    let t = |i: usize| o.rows[i]["alloc_time_s"].as_f64().unwrap() * 1e9;
    let z = |i: usize| o.rows[i]["alloc_zero_s"].as_f64().unwrap() * 1e9;
    let hop = 65.0;
    // One core keeps 12 lines in flight: 768 B per store latency (57 ns DRAM, 62 ns PMem).
    let bw = |lat: f64| 12.0 * 64.0 / lat;
    // One PMem module: its 2.2 GB/s write bandwidth bounds (768 B / 62 ns = 12.4 GB/s).
    assert!((t(0) - pages * (250.0 + 4096.0 / 2.2)).abs() < 1.0);
    // Local DRAM: latency-bound.
    assert!((t(1) - pages * (250.0 + 4096.0 / bw(57.0))).abs() < 1.0);
    // Remote DRAM: latency-bound at the remote latency, plus the hop per page.
    assert!((t(2) - pages * (250.0 + hop + 4096.0 / bw(57.0 + hop))).abs() < 1.0);
    // Latency-bound zeroing time is proportional to the path latency.
    assert!((z(2) / z(1) - (57.0 + hop) / 57.0).abs() < 1e-9);
    // Six modules interleaved (13.2 GB/s together): the core's 12 lines in flight bound;
    // over 2 modules (4.4 GB/s) the modules do.
    assert!((t(3) - pages * (250.0 + 4096.0 / bw(62.0))).abs() < 1.0);
    assert!((t(4) - pages * (250.0 + 4096.0 / 4.4)).abs() < 1.0);
    // aliusM's per-GiB cost grows as it reaches remote PMem (one remote module: 2.2 GB/s,
    // plus the hop per page).
    assert!(t(5) > t(0));
}

#[test]
fn direct_mapped_conflict_two_pages_on_one_slot_always_miss() {
    // A 16-page cache; pages 3 and 3 + 16 share slot 3. Alternating between them, every
    // access misses, and with writes every victim is dirty.
    let mut c = MemoryModeCache::new(16 * 4096, 64, crate::rng::stream(1, "t"));
    for round in 0..100u64 {
        for page in [3u64, 19] {
            for line in 0..64u64 {
                c.access(page * 4096 + line * 64, true);
            }
        }
        if round == 0 {
            c.reset_counts();
        }
    }
    assert_eq!(c.counts.hits, 0);
    assert_eq!(c.counts.fills, c.counts.accesses);
    assert_eq!(c.counts.writebacks, c.counts.accesses);
    // Two pages on different slots: every access after the first round hits.
    let mut c = MemoryModeCache::new(16 * 4096, 64, crate::rng::stream(1, "t"));
    for round in 0..10u64 {
        for page in [3u64, 20] {
            for line in 0..64u64 {
                c.access(page * 4096 + line * 64, false);
            }
        }
        if round == 0 {
            c.reset_counts();
        }
    }
    assert_eq!(c.counts.hits, c.counts.accesses);
}

#[test]
fn random_placement_hit_ratio_is_balls_into_bins() {
    // F pages thrown uniformly into C slots (node frames ≫ slots): a slot holding k pages
    // serves uniform random accesses with hit ratio 1/k, so the hit ratio is occupied slots
    // ÷ pages = C (1 - (1 - 1/C)^F) / F; a stream hits only pages alone in their slot,
    // (1 - 1/C)^(F - 1).
    let (c, node) = (512u64, 512 * 256);
    for f in [256u64, 512, 1024] {
        let (cf, ff) = (c as f64, f as f64);
        let want_random = cf * (1.0 - (1.0 - 1.0 / cf).powf(ff)) / ff;
        let want_stream = (1.0 - 1.0 / cf).powf(ff - 1.0);
        let (mut r, mut s) = (0.0, 0.0);
        for k in 0..4 {
            let mut rng = crate::rng::stream(k, "bins");
            r += simulate(
                MemoryModePattern::Random,
                FrameOrder::Random,
                f,
                c,
                node,
                256,
                64,
                1,
                2,
                100_000,
                0,
                &mut rng,
            )
            .hit_ratio();
            s += simulate(
                MemoryModePattern::Stream,
                FrameOrder::Random,
                f,
                c,
                node,
                256,
                64,
                1,
                2,
                0,
                0,
                &mut rng,
            )
            .hit_ratio();
        }
        let (r, s) = (r / 4.0, s / 4.0);
        assert!((r - want_random).abs() < 0.03, "{f}: {r} vs {want_random}");
        assert!((s - want_stream).abs() < 0.03, "{f}: {s} vs {want_stream}");
        // The closed form the docs give agrees with balls into bins at this scale.
        let closed = hit_ratio(
            MemoryModePattern::Random,
            FrameOrder::Random,
            f,
            c,
            node,
            64,
        );
        assert!((closed - want_random).abs() < 0.01);
    }
}

#[test]
fn shuffled_blocks_alias_like_random_pages_counted_in_blocks() {
    // 4 MiB shuffle blocks: the closed form in blocks, and the cache model, agree; a
    // footprint a third of the cache already misses (blocks share slots), unlike fresh
    // consecutive frames.
    let mm = MemoryModeSpec {
        frame_order: FrameOrder::Shuffled,
        ..MemoryModeSpec::default()
    };
    let (pages, cache, node) = (8 << 20, 24 << 20, 192 << 20);
    let cf = hit_ratio_granular(
        MemoryModePattern::Stream,
        FrameOrder::Shuffled,
        pages,
        cache,
        node,
        64,
        1024,
    );
    let mut rng = crate::rng::stream(5, "shuffle");
    let sim = steady_state(
        MemoryModePattern::Stream,
        &mm,
        pages,
        cache,
        node,
        2.0 / 3.0,
        &mut rng,
    );
    assert!(
        (sim.hit_ratio() - cf).abs() < 0.03,
        "{} vs {cf}",
        sim.hit_ratio()
    );
    assert!(cf < 0.8 && cf > 0.6, "{cf}");
    // A third of the misses' victims are dirty (every third access writes).
    let d = sim.writebacks as f64 / sim.fills as f64;
    assert!((d - 1.0 / 3.0).abs() < 0.05, "{d}");
    let seq = MemoryModeSpec {
        frame_order: FrameOrder::Sequential,
        ..MemoryModeSpec::default()
    };
    let sim = steady_state(
        MemoryModePattern::Stream,
        &seq,
        pages,
        cache,
        node,
        2.0 / 3.0,
        &mut rng,
    );
    assert_eq!(sim.hit_ratio(), 1.0);
}

#[test]
fn bad_topologies_name_the_key() {
    let mut text = String::from("module = \"numa\"\n[topology]\n");
    let preset = topology::PRESETS[0].1;
    // Re-root the preset under [topology].
    for line in preset.lines() {
        let l = if let Some(rest) = line.strip_prefix("[[") {
            format!("[[topology.{rest}")
        } else if let Some(rest) = line
            .strip_prefix('[')
            .filter(|_| !line.starts_with("[ ") && !line.starts_with("  "))
        {
            format!("[topology.{rest}")
        } else {
            line.to_string()
        };
        text.push_str(&l);
        text.push('\n');
    }
    crate::registry::run_scenario(&text, "s.toml", &[], &[]).unwrap();
    // The second controller loses its DRAM and its modules.
    let mut seen = 0;
    let bad: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("dram_bytes") {
                seen += 1;
            }
            match (seen, l.split(' ').next()) {
                (2, Some("dram_bytes")) => "dram_bytes = 0".to_string(),
                (2, Some("modules")) => "modules = []".to_string(),
                _ => l.to_string(),
            }
        })
        .collect();
    let bad = bad.join("\n");
    let e = crate::registry::run_scenario(&bad, "s.toml", &[], &[]).unwrap_err();
    assert!(e.key.starts_with("topology.controllers.1"), "{e}");
    let bad = text.replace(
        "  [28, 28, 17, 17, 28, 28, 28, 28, 28, 28, 17, 17, 17, 17, 17, 10],\n",
        "",
    );
    let e = crate::registry::run_scenario(&bad, "s.toml", &[], &[]).unwrap_err();
    assert_eq!(e.key, "topology.distances");
    assert!(
        e.message.contains("15 rows") && e.message.contains("expected 16"),
        "{e}"
    );
    assert!(e.line.is_some());
}

#[test]
fn a_trace_sets_the_application_mix() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/traces/true.lackey.xz"
    );
    let (mix, f) = super::app::trace_mix(std::path::Path::new(path), "t.toml").unwrap();
    // /bin/true's 85 KB fit in the caches: few of its accesses reach memory.
    assert!(f.accesses > 10_000 && f.memory_lines > 0, "{f:?}");
    assert!((f.memory_lines as f64) < 0.05 * f.accesses as f64, "{f:?}");
    assert!(
        // Its dirty lines stay in the caches (nothing evicts them): memory sees reads only.
        mix.read_fraction > 0.3 && mix.read_fraction <= 1.0,
        "{mix:?}"
    );
    assert!(
        mix.random_fraction > 0.0 && mix.random_fraction < 1.0,
        "{mix:?}"
    );
    let text = format!(
        "module = \"numa\"\npolicies = [\"aliusm\", \"kmem-dax\"]\n[allocation]\nsize_bytes = 1073741824\n\
         [app]\nkind = \"trace\"\ntrace = \"{path}\"\n"
    );
    let o = crate::registry::run_scenario(&text, "s.toml", &[], &[]).unwrap();
    let rt = |i: usize| o.rows[i]["runtime_s"].as_f64().unwrap();
    assert!(rt(0) > 0.0 && rt(1) > rt(0));
    // The caches absorb the trace, and the run says so.
    assert!(
        o.warnings
            .iter()
            .any(|w| w.contains("app.trace") && w.contains("fits in the")),
        "{:?}",
        o.warnings
    );
    let bad = text.replace("true.lackey.xz", "missing.xz");
    assert!(crate::registry::run_scenario(&bad, "s.toml", &[], &[]).is_err());
}

#[test]
fn cxl_box_expanders_are_cpu_less_nodes_and_never_cached() {
    let m = topology::load(
        None,
        Some("cxl-box"),
        &Source::parse("", "t.toml").unwrap(),
        &Catalog::builtin(),
    )
    .unwrap();
    assert_eq!(m.nodes.len(), 4);
    assert_eq!((m.dram_bytes(), m.far_bytes()), (256 * GIB, 512 * GIB));
    // Memory Mode has nothing to cache here: the DRAM nodes stay DRAM, the expanders stay nodes.
    let pool = Pool::memory_mode(&m);
    assert!(pool.nodes.iter().all(|n| n.cache_bytes == 0));
    assert_eq!(pool.nodes.len(), 4);
    // Linux default: both DRAM nodes (minus the kernel's 2 GiB and their 2 GiB struct page
    // each; node 0, nearest of the two, also holds the expanders' 8 GiB), then the expanders.
    let (_, r) = place(&m, &LinuxDefault, 0, 300 * GIB);
    let g = |n: usize| r.pages[n] * 4096 / GIB;
    assert_eq!((g(0), g(1), g(2), g(3)), (115, 123, 60, 0));
    // aliusM interleaves the expanders once DRAM is full.
    let (_, r) = place(&m, &AliusM, 0, 352 * GIB);
    assert_eq!((r.pages[2] * 4096 / GIB, r.pages[3] * 4096 / GIB), (56, 56));
}

#[test]
fn memory_mode_runs_are_deterministic_per_seed() {
    let text = |seed: u64| {
        format!(
            "module = \"numa\"\nseed = {seed}\npolicies = [\"memory-mode\"]\n\
             [allocation]\nsize_bytes = 34359738368\n[app]\nkind = \"superpi\"\n"
        )
    };
    let run = |seed: u64| crate::registry::run_scenario(&text(seed), "s.toml", &[], &[]).unwrap();
    let (a, b, c) = (run(1), run(1), run(2));
    assert_eq!(
        serde_json::to_string(&a.rows).unwrap(),
        serde_json::to_string(&b.rows).unwrap()
    );
    // Another seed places the shuffled blocks elsewhere: a different sample of the same
    // expected hit ratio.
    let h = |o: &crate::registry::RunOutput| o.rows[0]["cache_hit_ratio"].as_f64().unwrap();
    assert_ne!(h(&a), h(&c));
    assert!((h(&a) - h(&c)).abs() < 0.03);
}

/// A medium's device with a [link] is refused (the numa model has no place for it), naming
/// the medium's key and where the link is set; a user's file setting figures the model does
/// not use is named in the run's warnings.
#[test]
fn a_medium_with_a_link_is_refused_and_unused_figures_warned() {
    let dir = std::env::temp_dir().join(format!("hmsim-numa-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dev = "name = \"cxl-dram\"\nkind = \"memory\"\ndescription = \"d\"\ntechnology = \"dram\"\ncapacity_bytes = 274877906944\n[read]\nlatency_ns = 250.0\nbandwidth_gb_s = 38.4\n[write]\nlatency_ns = 250.0\nbandwidth_gb_s = 38.4\n[link]\nname = \"cxl-x8\"\nread_gb_s = 30.0\n";
    std::fs::write(dir.join("mine.toml"), dev).unwrap();
    let hot = "name = \"hot\"\nbase = \"cxl-dram\"\n[endurance]\nwrite_cycles = 1e9\n";
    std::fs::write(dir.join("hot.toml"), hot).unwrap();
    let c = Catalog::load(std::slice::from_ref(&dir)).unwrap();
    let e = topology::load(
        None,
        Some("cxl-box"),
        &Source::parse("", "t.toml").unwrap(),
        &c,
    )
    .unwrap_err();
    assert_eq!(e.key, "media.cxl.device", "{e}");
    assert!(e.message.contains("[link] (set at "), "{e}");
    assert!(e.message.contains("mine.toml:12"), "{e}");
    let text = "module = \"numa\"\ntopology_preset = \"cxl-box\"\npolicies = [\"linux-default\"]\n[allocation]\nsize_bytes = 1073741824\n";
    let out = crate::registry::run_scenario(text, "s.toml", &[], &[]).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    std::fs::remove_file(dir.join("mine.toml")).unwrap();
    let text = "module = \"numa\"\npolicies = [\"linux-default\"]\n[allocation]\nsize_bytes = 1073741824\n[topology]\nname = \"t\"\nsockets = [{ cores = 4 }]\ncontrollers = [{ socket = 0, dram_bytes = 8589934592, modules = [{ medium = \"far\", bytes = 8589934592 }] }]\ndistances = [[10, 20], [20, 10]]\n[topology.media.dram]\ndevice = \"ddr4-dram\"\n[topology.media.far]\ndevice = \"hot\"\n";
    let out =
        crate::registry::run_scenario(text, "s.toml", &[], std::slice::from_ref(&dir)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(
        out.warnings[0].starts_with("topology.media.far.device: device 'hot'"),
        "{:?}",
        out.warnings
    );
    assert!(
        out.warnings[0].contains("endurance ("),
        "{:?}",
        out.warnings
    );
}

#[test]
fn a_trace_beyond_the_llc_reaches_memory_with_its_write_backs() {
    use crate::trace::{Kind, NativeHeader, NativeWriter, TraceRecord};
    use std::io::Write;
    // 2 M random lines over 256 MiB (beyond the 37.5 MB LLC), every fourth a store.
    let path = std::env::temp_dir().join(format!("hmsim-numa-mix-{}.hmt", std::process::id()));
    let f = std::fs::File::create(&path).unwrap();
    let mut w = NativeWriter::new(std::io::BufWriter::new(f), &NativeHeader::default()).unwrap();
    let mut x = 7u64;
    for i in 0..2_000_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let kind = if i % 4 == 0 { Kind::Store } else { Kind::Load };
        w.write(&TraceRecord::new(kind, ((x >> 33) % (4 << 20)) * 64, 8))
            .unwrap();
    }
    w.finish().unwrap().flush().unwrap();
    let (mix, f) = super::app::trace_mix(&path, "t.toml").unwrap();
    std::fs::remove_file(&path).ok();
    assert!(f.footprint_bytes > f.llc_bytes, "{f:?}");
    // Most accesses miss, stores' lines come back as write-backs, and almost every memory
    // access is random.
    assert!(f.memory_lines as f64 > 0.8 * f.accesses as f64, "{f:?}");
    assert!(
        mix.read_fraction > 0.6 && mix.read_fraction < 0.95,
        "{mix:?}"
    );
    assert!(mix.random_fraction > 0.95, "{mix:?}");
}
