//! Property tests of every allocator, closed-form cost cases, determinism, trace replay,
//! fairness and configuration errors.

use proptest::prelude::*;

use super::buddy::Buddy;
use super::cost::{CostTable, Ctx};
use super::ibuddy::IBuddy;
use super::lists::FreeListPolicy;
use super::machine::AllocMachine;
use super::spec::{build, AllocatorSpec, ALLOCATOR_KINDS};
use super::{allocate, release, PageAllocator, MAX_ORDER};
use crate::device::Catalog;

fn specs() -> Vec<AllocatorSpec> {
    let mut v = Vec::new();
    for p in [
        FreeListPolicy::Lifo,
        FreeListPolicy::Fifo,
        FreeListPolicy::LeastAllocated,
    ] {
        let mut b = AllocatorSpec::named("buddy");
        b.policy = p;
        v.push(b.clone());
        b.migratetypes = true;
        v.push(b);
        let mut l = AllocatorSpec::named("lazy-buddy");
        l.migratetypes = true;
        l.policy = p;
        v.push(l);
        for batch in [1, 31, 63] {
            let mut l = AllocatorSpec::named("lazy-buddy");
            l.batch = batch;
            l.policy = p;
            v.push(l);
        }
        for spaces in [1, 4] {
            let mut i = AllocatorSpec::named("ibuddy");
            i.spaces = spaces;
            i.policy = p;
            v.push(i);
        }
        for batch in [1, 31] {
            let mut l = AllocatorSpec::named("lazy-ibuddy");
            l.batch = batch;
            l.policy = p;
            v.push(l);
        }
    }
    v
}

/// A checked run: every handed-out block is aligned, in range and disjoint from every
/// live block; the free-frame count is conserved; at the end everything is freed, the
/// per-CPU lists drained, and the array must again yield `frames >> 10` max-order blocks
/// and then every single frame once.
fn check(a: &mut dyn PageAllocator, frames: u64, ops: &[(bool, u8, u16, usize)], label: &str) {
    let mut ctx = Ctx::new(frames as usize, CostTable::default());
    let mut owned = vec![false; frames as usize];
    let mut live: Vec<(u64, u8)> = Vec::new();
    let mut used = 0u64;
    for &(is_alloc, order, cpu, idx) in ops {
        if is_alloc || live.is_empty() {
            // Mixed migratetypes (only buddies with migratetypes read it).
            ctx.migratetype = (cpu % 3) as u8;
            if let Some(p) = allocate(a, order, cpu, &mut ctx) {
                let n = 1u64 << order;
                assert_eq!(p % n, 0, "{label}: misaligned block {p} of order {order}");
                assert!(p + n <= frames, "{label}: block {p} out of range");
                for f in p..p + n {
                    assert!(!owned[f as usize], "{label}: frame {f} handed out twice");
                    owned[f as usize] = true;
                }
                used += n;
                live.push((p, order));
            } else {
                // Failing is only allowed when no free aligned block of that order
                // exists anywhere (per-CPU lists hold only single frames).
                assert!(
                    order > 0 || used == frames,
                    "{label}: order-0 allocation failed with {} frames free",
                    frames - used
                );
            }
        } else {
            let (p, order) = live.swap_remove(idx % live.len());
            for f in p..p + (1 << order) {
                owned[f as usize] = false;
            }
            used -= 1 << order;
            release(a, p, order, cpu, &mut ctx);
        }
        assert_eq!(
            a.free_frames(),
            frames - used,
            "{label}: free frames not conserved"
        );
    }
    for (p, order) in live.drain(..) {
        release(a, p, order, 0, &mut ctx);
    }
    a.drain_all(&mut ctx);
    assert_eq!(a.free_frames(), frames, "{label}");
    assert_eq!(a.free_blocks(MAX_ORDER), frames >> MAX_ORDER, "{label}");
    let mut big = Vec::new();
    for _ in 0..frames >> MAX_ORDER {
        big.push(
            allocate(a, MAX_ORDER, 0, &mut ctx)
                .unwrap_or_else(|| panic!("{label}: max-order block missing after free-all")),
        );
    }
    assert!(allocate(a, MAX_ORDER, 0, &mut ctx).is_none() || !frames.is_multiple_of(1024));
    for p in big {
        release(a, p, MAX_ORDER, 0, &mut ctx);
    }
    a.drain_all(&mut ctx);
    let mut seen = vec![false; frames as usize];
    for i in 0..frames {
        let p = allocate(a, 0, (i % 3) as u16, &mut ctx)
            .unwrap_or_else(|| panic!("{label}: frame lost: only {i} of {frames} allocatable"));
        assert!(!seen[p as usize], "{label}: frame {p} twice");
        seen[p as usize] = true;
    }
    assert!(
        allocate(a, 0, 0, &mut ctx).is_none(),
        "{label}: more frames than exist"
    );
}

fn op() -> impl Strategy<Value = (bool, u8, u16, usize)> {
    (
        any::<bool>(),
        prop_oneof![8 => Just(0u8), 2 => 1u8..=3, 1 => 4u8..=MAX_ORDER],
        0u16..4,
        any::<usize>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_allocator_keeps_frames_exact(ops in proptest::collection::vec(op(), 1..400)) {
        let frames = 4096;
        for spec in specs() {
            let mut a = build(&spec, frames).unwrap();
            check(a.as_mut(), frames, &ops, &spec.label());
        }
    }

    #[test]
    fn buddy_on_odd_sized_arrays(frames in 1u64..5000, ops in proptest::collection::vec(op(), 1..200)) {
        let mut a = Buddy::new(frames, FreeListPolicy::Lifo, 0);
        // Only the orders that fit; the max-order check is skipped for small arrays.
        let ops: Vec<_> = ops.into_iter().map(|(b, o, c, i)| (b, o.min(3), c, i)).collect();
        let mut ctx = Ctx::new(frames as usize, CostTable::default());
        let mut live = Vec::new();
        let mut owned = vec![false; frames as usize];
        for (is_alloc, order, cpu, idx) in ops {
            if is_alloc || live.is_empty() {
                if let Some(p) = a.alloc(order, cpu, &mut ctx) {
                    for f in p..p + (1 << order) {
                        prop_assert!(!owned[f as usize]);
                        owned[f as usize] = true;
                    }
                    live.push((p, order));
                }
            } else {
                let (p, order): (u64, u8) = live.swap_remove(idx % live.len());
                for f in p..p + (1 << order) {
                    owned[f as usize] = false;
                }
                a.free(p, order, cpu, &mut ctx);
            }
        }
        for (p, o) in live.drain(..) {
            a.free(p, o, 0, &mut ctx);
        }
        prop_assert_eq!(a.free_frames(), frames);
        // Fully coalesced: the greedy carve again.
        let mut expected = 0;
        let mut pfn = 0;
        while pfn < frames {
            let mut o = MAX_ORDER;
            while !pfn.is_multiple_of(1 << o) || pfn + (1 << o) > frames {
                o -= 1;
            }
            expected += (o == 0) as u64;
            pfn += 1 << o;
        }
        let order0_blocks = a.free_blocks(0) - 2 * a.free_blocks(1);
        prop_assert_eq!(order0_blocks, expected);
    }
}

/// Distinct zone lines a split (or coalesce) through orders `0..=k` touches: the lock's
/// line and, per order, the free list's head and `nr_free` (layout: the lock word, then
/// 88-byte `free_area`s with `nr_free` at +80).
fn zone_lines(k: u8) -> u64 {
    let mut lines = std::collections::BTreeSet::from([0u64]);
    for o in 0..=k as u64 {
        lines.insert((8 + 88 * o) / 64);
        lines.insert((8 + 88 * o + 80) / 64);
    }
    lines.len() as u64
}

/// Distinct `struct page` lines of a split of an order-k block at a 1024-aligned pfn
/// (k ≥ 3): the head's line and its buddies at +2^o: +1, +2, +4 fall in the first five
/// 56-byte-struct lines, each +2^o for o ≥ 3 (448 × 2^(o−3) bytes) on a line of its own.
fn struct_page_lines(k: u8) -> u64 {
    5 + (k as u64 - 3)
}

#[test]
fn split_and_coalesce_line_counts_in_closed_form() {
    let t = CostTable::default();
    for k in 3..=MAX_ORDER {
        let mut b = Buddy::new(1 << k, FreeListPolicy::Lifo, 0);
        let mut ctx = Ctx::new(1 << k, t);
        ctx.begin(0);
        let p = b.alloc(0, 0, &mut ctx).unwrap();
        let lines = zone_lines(k) + struct_page_lines(k);
        assert_eq!(ctx.ops.lines, lines, "split of order {k}");
        assert_eq!(ctx.ops.splits, k as u64);
        // lock; k + 1 order checks; the pop and k pushes; each line once.
        let expect = t.lock_cycles + (2 * k as u64 + 2) * t.list_op_cycles + lines * t.line_cycles;
        assert_eq!(ctx.now(), expect, "split of order {k}");
        // Freeing it coalesces k times and touches the same lines, plus `free_one_page`'s
        // `zone->pages_scanned` / `zone->flags` line and its locked `clear_bit`.
        let (now, before) = (ctx.now(), ctx.ops.lines);
        ctx.begin(0);
        b.free(p, 0, 0, &mut ctx);
        assert_eq!(ctx.ops.lines - before, lines + 1, "coalesce of order {k}");
        assert_eq!(ctx.ops.merges, k as u64);
        let expect =
            2 * t.lock_cycles + (k as u64 + 1) * t.list_op_cycles + (lines + 1) * t.line_cycles;
        assert_eq!(ctx.now() - now, expect, "coalesce of order {k}");
        assert_eq!(b.free_blocks(k), 1);
    }
}

#[test]
fn ibuddy_single_page_is_constant_time() {
    let t = CostTable::default();
    let mut ib = IBuddy::new(1024, 1, FreeListPolicy::Lifo);
    let mut ctx = Ctx::new(1024, t);
    ctx.begin(0);
    let p = ib.alloc(0, 0, &mut ctx).unwrap();
    // The space's line (free count and lock together), the level's head, the frame's and
    // its list neighbour's struct pages (two lines), the bitmap word: five lines.
    assert_eq!(ctx.ops.lines, 5);
    let first = t.lock_cycles + t.list_op_cycles + t.bitmap_word_cycles + 5 * t.line_cycles;
    assert_eq!(ctx.now(), first);
    ctx.set_now(0);
    ctx.begin(0);
    ib.free(p, 0, 0, &mut ctx);
    // The space's line, the bitmap word, the frame's struct page, level 0's head.
    let lines = ctx.ops.lines - 5;
    assert_eq!(lines, 4);
    let expect = t.lock_cycles + t.list_op_cycles + t.bitmap_word_cycles + lines * t.line_cycles;
    assert_eq!(ctx.now(), expect);
    // The same after many frames were taken: no dependence on memory size.
    let mut ib = IBuddy::new(1 << 16, 1, FreeListPolicy::Lifo);
    let mut ctx = Ctx::new(1 << 16, t);
    for _ in 0..1000 {
        ib.alloc(0, 0, &mut ctx).unwrap();
    }
    ctx.set_now(0);
    ctx.begin(0);
    ib.alloc(0, 0, &mut ctx).unwrap();
    assert_eq!(ctx.now(), first);
}

#[test]
fn a_second_identical_request_is_cheaper_hot_than_cold() {
    for name in ALLOCATOR_KINDS.names() {
        let mut a = build(&AllocatorSpec::named(name), 4096).unwrap();
        let mut ctx = Ctx::with_machine(4096, CostTable::default(), AllocMachine::default(), 1);
        let mut cost = || {
            ctx.begin(0);
            let t0 = ctx.now();
            let p = allocate(a.as_mut(), 0, 0, &mut ctx).unwrap();
            release(a.as_mut(), p, 0, 0, &mut ctx);
            ctx.now() - t0
        };
        let (cold, hot) = (cost(), cost());
        assert!(hot < cold, "{name}: hot {hot} vs cold {cold}");
    }
}

#[test]
fn lines_another_core_wrote_cost_a_cross_core_transfer() {
    let mut b = Buddy::new(4096, FreeListPolicy::Lifo, 0);
    let mut ctx = Ctx::with_machine(4096, CostTable::default(), AllocMachine::default(), 1);
    ctx.begin(0);
    let p = b.alloc(0, 0, &mut ctx).unwrap();
    assert_eq!(ctx.sources().cross_core, 0);
    // Core 1 frees the page core 0 took: the zone lock, the free areas and the struct
    // pages all come from core 0's caches.
    ctx.begin(1);
    b.free(p, 0, 1, &mut ctx);
    let s = ctx.sources();
    assert!(s.cross_core >= 3, "{s:?}");
    assert_eq!(s.l1 + s.l2 + s.llc + s.cross_core + s.dram, ctx.ops.lines);
}

#[test]
fn lazy_buddy_refills_a_batch_under_one_lock() {
    let mut spec = AllocatorSpec::named("lazy-buddy");
    spec.batch = 31;
    let mut a = build(&spec, 4096).unwrap();
    let mut ctx = Ctx::new(4096, CostTable::default());
    for _ in 0..31 {
        a.alloc(0, 0, &mut ctx).unwrap();
    }
    assert_eq!((ctx.ops.locks, ctx.ops.refills), (1, 1));
    a.alloc(0, 0, &mut ctx).unwrap();
    assert_eq!((ctx.ops.locks, ctx.ops.refills), (2, 2));
    assert_eq!(a.free_frames(), 4096 - 32);
}

const SYNTH: &str = r#"
module = "allocators"
seed = 7
frames = 16384
[[allocators]]
name = "buddy"
[[allocators]]
name = "lazy-buddy"
batch = 31
[[allocators]]
name = "ibuddy"
[[allocators]]
name = "lazy-ibuddy"
batch = 1
[workload.synthetic]
threads = 4
allocs_per_thread = 3000
"#;

fn run(text: &str) -> Result<crate::RunOutput, crate::ConfigError> {
    crate::scenario::run::<super::Allocators>(
        text,
        "s.toml",
        &Catalog::load(&[]).unwrap(),
        &crate::scenario::NoProgress,
    )
}

#[test]
fn same_seed_same_output() {
    let a = run(SYNTH).unwrap();
    let b = run(SYNTH).unwrap();
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    assert_eq!(a.rows.len(), 4);
    for r in &a.rows {
        assert_eq!(r["requests"], 24_000);
        assert_eq!(r["failures"], 0);
    }
    let c = run(&SYNTH.replace("seed = 7", "seed = 8")).unwrap();
    assert_ne!(a.rows[0]["mean_cycles"], c.rows[0]["mean_cycles"]);
}

#[test]
fn the_peak_of_live_frames_counts_every_held_block_once() {
    use super::workload::{AllocOp, AllocWorkload, Req};
    let req = |id: u32, op: AllocOp| Req {
        ts_ns: 0,
        cpu: 0,
        id,
        op,
    };
    let (alloc, free) = (|order| AllocOp::Alloc { order }, AllocOp::Free);
    let w = AllocWorkload {
        blocks: 4,
        reqs: vec![
            req(0, alloc(0)), // 1
            req(1, alloc(2)), // 5
            req(0, free),     // 4
            req(2, alloc(3)), // 12
            req(0, free),     // a second free of 0 frees nothing
            req(3, free),     // nor does a free of a block never held
            req(1, free),     // 8
            req(3, alloc(2)), // 12
        ],
        ..Default::default()
    };
    assert_eq!(w.peak_live_frames(), 12);
    // The synthetic stream at the docs' size: every allocation fits in its peak, none fits
    // in less (the test below).
    let s = super::workload::Synthetic {
        threads: 4,
        allocs_per_thread: 3000,
        ..Default::default()
    };
    let w = s.generate(7, "s");
    assert!(w.peak_live_frames() > 0 && w.peak_live_frames() < 16384);
}

#[test]
fn a_run_whose_allocations_fail_says_why_and_that_its_figures_are_not_the_workloads() {
    // SYNTH needs fewer frames than its 16384: no failure, no warning.
    let out = run(SYNTH).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    // An eighth of them: most allocations fail for want of frames.
    let small = run(&SYNTH.replace("frames = 16384", "frames = 2048")).unwrap();
    assert_eq!(
        small.warnings.len(),
        4,
        "one per allocator: {:?}",
        small.warnings
    );
    for (w, r) in small.warnings.iter().zip(&small.rows) {
        let failures = r["failures"].as_u64().unwrap();
        assert!(failures > 0);
        assert!(w.contains(&format!(" {failures} of ")), "{w}");
        assert!(w.contains("raise `frames` to at least"), "{w}");
        assert!(w.contains("not the workload's"), "{w}");
    }
    // Failures with room enough for the peak are the allocator's own (fragmentation).
    let w = super::scenario::failures_warning("buddy", 3, 97, 4096, 1000);
    assert!(
        w.starts_with("buddy: 3 of 100 allocations (3.00 %) failed"),
        "{w}"
    );
    assert!(w.contains("fragmentation") && !w.contains("raise"), "{w}");
}

#[test]
fn replays_the_committed_kmem_traces() {
    for (trace, cpus) in [("gcc.kmem.hmt", 1), ("dbench.kmem.hmt", 2)] {
        let path = format!("{}/tests/data/traces/{trace}", env!("CARGO_MANIFEST_DIR"));
        let text = format!("module = \"allocators\"\n[workload]\ntrace = \"{path}\"\n");
        let out = run(&text).unwrap();
        assert_eq!(out.rows.len(), 4);
        for r in &out.rows {
            assert_eq!(r["workload"], trace);
            assert_eq!(r["threads"], cpus);
            assert!(r["requests"].as_u64().unwrap() > 10_000, "{r:?}");
            assert_eq!(r["failures"], 0, "{r:?}");
            // Frees of pages allocated before the trace started are skipped and counted.
            assert!(r["trace_skipped_frees"].as_u64().unwrap() > 0, "{r:?}");
            assert!(r["mean_cycles"].as_f64().unwrap() > 0.0);
            assert!(r["lifetime_years"].as_f64().unwrap() > 0.0);
        }
    }
}

#[test]
fn fair_policies_spread_allocations() {
    // Churn: a small live set allocated and freed over and over in a large array (each
    // page on its own lifetime).
    let churn = |alloc: &str| {
        format!(
            "module = \"allocators\"\nframes = 8192\nprobe_orders = []\n{alloc}\n\
             [workload.synthetic]\nthreads = 2\nallocs_per_thread = 20000\norder_mix = [1.0]\n\
             short_lived_fraction = 1.0\nshort_life_ns = 20000\nburst_gap_ns = 1000\nidle_gap_ns = 1000\n\
             cohorts = false\n"
        )
    };
    let cov = |alloc: &str| {
        run(&churn(alloc)).unwrap().rows[0]["alloc_count_cov"]
            .as_f64()
            .unwrap()
    };
    let buddy = cov("[[allocators]]\nname = \"buddy\"");
    let mut seen = Vec::new();
    for (fair, must_beat) in [
        ("[[allocators]]\nname = \"buddy\"\npolicy = \"fifo\"", false),
        (
            "[[allocators]]\nname = \"buddy\"\npolicy = \"least-allocated\"",
            false,
        ),
        (
            "[[allocators]]\nname = \"lazy-buddy\"\npolicy = \"fifo\"",
            false,
        ),
        ("[[allocators]]\nname = \"ibuddy\"\nspaces = 2\npolicy = \"fifo\"", true),
        (
            "[[allocators]]\nname = \"ibuddy\"\nspaces = 2\npolicy = \"least-allocated\"",
            true,
        ),
        (
            "[[allocators]]\nname = \"lazy-ibuddy\"\nbatch = 1\nspaces = 2\npolicy = \"least-allocated\"",
            true,
        ),
    ] {
        let c = cov(fair);
        seen.push((fair.replace('\n', " "), c));
        if must_beat {
            assert!(
                c < buddy / 2.0,
                "{fair}: CV {c} vs plain buddy {buddy}; all: {seen:?}"
            );
        }
    }
    eprintln!("plain buddy CV {buddy}; {seen:?}");
}

#[test]
fn impossible_values_are_errors() {
    let base = "module = \"allocators\"\n";
    let e = run(&format!("{base}frames = 0\n")).unwrap_err();
    assert_eq!(e.key, "frames");
    let e = run(&format!("{base}probe_orders = [11]\n")).unwrap_err();
    assert_eq!(e.key, "probe_orders.0");
    let e = run(&format!(
        "{base}[workload.synthetic]\norder_mix = [1,0,0,0,0,0,0,0,0,0,0,1]\n"
    ))
    .unwrap_err();
    assert_eq!(e.key, "workload.synthetic.order_mix");
    let e = run(&format!("{base}[[allocators]]\nname = \"slab\"\n")).unwrap_err();
    assert_eq!(e.key, "allocators.0.name");
    assert!(e.message.contains("lazy-ibuddy"), "{e}");
    let e = run(&format!(
        "{base}frames = 1000\n[[allocators]]\nname = \"ibuddy\"\n"
    ))
    .unwrap_err();
    assert_eq!(e.key, "allocators.0.spaces");
    let e = run(&format!(
        "{base}[[allocators]]\nname = \"buddy\"\nbatchh = 3\n"
    ))
    .unwrap_err();
    assert!(e.message.contains("batchh"), "{e}");
    let e = run(&format!(
        "{base}[[allocators]]\nname = \"lazy-buddy\"\nbatch = 31\nhigh = 10\n"
    ))
    .unwrap_err();
    assert_eq!(e.key, "allocators.0.high");
    let e = run(&format!("{base}[workload]\ntrace = \"/nonexistent.hmt\"\n")).unwrap_err();
    assert_eq!(e.key, "workload.trace");
}

/// The same allocator listed twice would run twice; the same name with other keys
/// is a different configuration.
#[test]
fn a_repeated_allocator_is_refused_with_its_key_and_line() {
    let base = "module = \"allocators\"\n[[allocators]]\nname = \"buddy\"\n";
    let e = run(&format!(
        "{base}[[allocators]]\nname = \"ibuddy\"\n[[allocators]]\nname = \"buddy\"\n"
    ))
    .unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("allocators.2", Some(6)), "{e}");
    assert!(e.message.contains("repeats entry 0"), "{e}");
    let e = run(&format!(
        "{base}[[allocators]]\nname = \"buddy\"\npolicy = \"fifo\"\nbatchh = 1\n"
    ))
    .unwrap_err();
    assert!(
        e.message.contains("batchh"),
        "a different configuration passes the check: {e}"
    );
}

#[test]
fn the_docs_example_runs() {
    let doc = include_str!("../../../../docs/allocators.md");
    let toml = doc
        .split("```toml\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("docs/allocators.md has a toml example");
    let out = run(toml).unwrap();
    assert_eq!(out.rows.len(), 4);
    assert!(out.tables["wear"].len() > 4);
    let r = &out.rows[2];
    assert_eq!(r["allocator"], "ibuddy(spaces=4)/least-allocated");
    for k in [
        "order0_success_rate",
        "order2_success_rate",
        "probe_order3_success_rate",
        "probe_order9_free_blocks",
        "lifetime_runs",
    ] {
        assert!(r.contains_key(k), "missing {k}: {r:?}");
    }
}

#[test]
fn synthetic_stream_pairs_every_alloc_with_one_later_free() {
    let s = super::workload::Synthetic {
        threads: 3,
        allocs_per_thread: 2000,
        ..Default::default()
    };
    let w = s.generate(5, "s");
    assert_eq!(w.reqs.len(), 2 * 3 * 2000);
    assert!(w.reqs.iter().all(|q| match q.op {
        super::workload::AllocOp::Alloc { order } => order <= 2,
        super::workload::AllocOp::Free => true,
    }));
    check_stream(&w, true);
    assert_eq!(s.generate(5, "s").reqs, w.reqs);
}

#[test]
fn oversized_runs_are_errors() {
    let e = run("module = \"allocators\"\nframes = 100000000\n").unwrap_err();
    assert_eq!(e.key, "frames");
    assert!(e.message.contains("33554432"), "{e}");
    let e = run(
        "module = \"allocators\"\n[workload.synthetic]\nthreads = 64\nallocs_per_thread = 1000000\n",
    )
    .unwrap_err();
    assert_eq!(e.key, "workload.synthetic.allocs_per_thread");
}

#[test]
fn one_zone_lock_contends_where_per_space_locks_do_not() {
    use super::workload::{AllocOp, AllocWorkload, Req};
    // Four CPUs allocate single pages all at once, then free them.
    let mut reqs = Vec::new();
    for i in 0..4000u32 {
        reqs.push(Req {
            ts_ns: 0,
            cpu: (i % 4) as u16,
            id: i,
            op: AllocOp::Alloc { order: 0 },
        });
    }
    for i in 0..4000u32 {
        reqs.push(Req {
            ts_ns: 0,
            cpu: (i % 4) as u16,
            id: i,
            op: AllocOp::Free,
        });
    }
    let w = AllocWorkload {
        name: "burst".into(),
        reqs,
        blocks: 4000,
        cpus: 4,
        ..Default::default()
    };
    let contended = |name: &str| {
        let mut s = AllocatorSpec::named(name);
        s.spaces = 4;
        let mut a = build(&s, 16384).unwrap();
        let r = super::driver::run(a.as_mut(), &w, &Default::default(), &[], 0);
        assert_eq!(r.failures, 0);
        (r.ops.contended_locks, r.ops.wait_cycles, r.alloc.mean)
    };
    let (buddy, buddy_wait, buddy_mean) = contended("buddy");
    let (lazy, _, _) = contended("lazy-buddy");
    let (ib, ib_wait, ib_mean) = contended("ibuddy");
    assert!(buddy > 6000, "{buddy}");
    assert!(lazy < buddy / 10, "{lazy} vs {buddy}");
    assert_eq!((ib, ib_wait), (0, 0));
    assert!(
        buddy_wait > 0 && ib_mean < buddy_mean,
        "{ib_mean} vs {buddy_mean}"
    );
}

#[test]
fn real_rows_beside_model_rows_and_start_gap_lifetimes() {
    let out = run(
        "module = \"allocators\"\nseed = 2\nframes = 16384\nreal = true\n\
         [[allocators]]\nname = \"buddy\"\n[[allocators]]\nname = \"lazy-ibuddy\"\nbatch = 1\n\
         [workload.synthetic]\nshape = \"tbench\"\nthreads = 2\nallocs_per_thread = 2000\n",
    )
    .unwrap();
    let src: Vec<&str> = out
        .rows
        .iter()
        .map(|r| r["source"].as_str().unwrap())
        .collect();
    assert_eq!(src, ["model", "real", "model", "real"]);
    for r in &out.rows {
        assert_eq!(r["workload"], "synthetic-tbench");
        assert_eq!(r["requests"].as_u64(), Some(2 * 2 * 2000));
        let plain = r["lifetime_runs"].as_f64().unwrap();
        let ideal = r["lifetime_ideal_runs"].as_f64().unwrap();
        for k in ["lifetime_start_gap_runs", "lifetime_start_gap_random_runs"] {
            let sg = r[k].as_f64().unwrap();
            // Leveling never hurts beyond its 1/ψ copy writes and never beats perfect
            // evenness.
            assert!(
                sg >= plain / 1.011 && sg <= ideal * 1.000_001,
                "{k}: {sg} vs {plain}..{ideal}"
            );
        }
        if r["source"] == "real" {
            assert_eq!(r["checker_violations"], 0);
            assert_eq!(r["free_frames_end"].as_u64(), Some(16384));
        }
    }
    let e = run("module = \"allocators\"\n[workload.synthetic]\nshape = \"stram\"\n").unwrap_err();
    assert_eq!(e.key, "workload.synthetic.shape");
}

#[test]
fn wear_endurance_from_a_catalog_device() {
    let base = "module = \"allocators\"\nframes = 4096\n[[allocators]]\nname = \"ibuddy\"\n\
                [workload.synthetic]\nthreads = 1\nallocs_per_thread = 500\n[wear]\n";
    let out = run(&format!("{base}device = \"pcm\"\n")).unwrap();
    assert_eq!(out.headline["endurance_writes"].as_f64(), Some(1e7));
    let stt = run(&format!("{base}device = \"stt-mram-cell\"\n")).unwrap();
    let l = |o: &crate::RunOutput| o.rows[0]["lifetime_runs"].as_f64().unwrap();
    assert!((l(&stt) / l(&out) - 1e8).abs() < 1.0);
    let e = run(&format!("{base}device = \"pcmm\"\n")).unwrap_err();
    assert_eq!(e.key, "wear.device");
}

#[test]
fn migratetypes_group_unmovable_pages_in_their_own_pageblock() {
    let mut b = Buddy::with_migratetypes(4 << 10, FreeListPolicy::Lifo, 0);
    let mut ctx = Ctx::new(4 << 10, CostTable::default());
    ctx.migratetype = 0;
    let u1 = b.alloc(0, 0, &mut ctx).unwrap();
    assert_eq!(ctx.ops.steals, 1);
    let u2 = b.alloc(0, 0, &mut ctx).unwrap();
    assert_eq!(
        ctx.ops.steals, 1,
        "the claimed pageblock serves the next one"
    );
    assert_eq!(u1 >> 10, u2 >> 10);
    ctx.migratetype = 1;
    let m = b.alloc(0, 0, &mut ctx).unwrap();
    assert_ne!(
        m >> 10,
        u1 >> 10,
        "movable pages stay out of the unmovable pageblock"
    );
    for p in [u1, u2, m] {
        b.free(p, 0, 0, &mut ctx);
    }
    assert_eq!(b.free_blocks(MAX_ORDER), 4);
    // Without migratetypes the three pages share a pageblock.
    let mut plain = Buddy::new(4 << 10, FreeListPolicy::Lifo, 0);
    let a: Vec<u64> = (0..3)
        .map(|_| plain.alloc(0, 0, &mut ctx).unwrap())
        .collect();
    assert!(a.iter().all(|p| p >> 10 == a[0] >> 10));
}

/// Memory exhausted: a failing request drains every per-CPU list and retries, the next
/// refill pulls a batch back, so the lazy buddy drains about ten times more per
/// allocation than with room to spare (docs/allocators.md, Limits).
#[test]
fn lazy_layers_thrash_when_memory_is_exhausted() {
    let at = |frames: u32| {
        let out = run(&format!(
            "module = \"allocators\"\nframes = {frames}\n[[allocators]]\nname = \"lazy-buddy\"\n\
             [workload.synthetic]\nthreads = 4\nallocs_per_thread = 3000\norder_mix = [1.0]\n\
             short_lived_fraction = 0.5\nlong_life_ns = 1e10\ncohorts = false\n"
        ))
        .unwrap();
        let r = &out.rows[0];
        let per_alloc = |k: &str| r[k].as_f64().unwrap() / r["allocs"].as_f64().unwrap();
        (
            r["failures"].as_u64().unwrap(),
            per_alloc("drains"),
            r["mean_cycles"].as_f64().unwrap(),
        )
    };
    let roomy = at(65536);
    let full = at(2048);
    assert_eq!(roomy.0, 0);
    assert!(full.0 > 0);
    assert!(
        full.1 > 3.0 * roomy.1.max(1e-3),
        "drains/alloc {full:?} vs {roomy:?}"
    );
    // (Mean cycles fall instead: most requests fail, and a failure is quick.)
    assert!(full.2 > 0.0 && roomy.2 > 0.0);
}

#[test]
fn a_dram_miss_brings_the_adjacent_line_into_l2() {
    use super::machine::MachineState;
    let m = AllocMachine::default();
    let mut st = MachineState::new(m, 1);
    assert_eq!(st.access_lines(0, &[(1 << 20) / 64]), m.dram_cycles);
    assert_eq!(st.access_lines(0, &[((1 << 20) + 64) / 64]), m.l2_cycles);
    let mut st = MachineState::new(
        AllocMachine {
            adjacent_line_prefetch: false,
            ..m
        },
        1,
    );
    st.access_lines(0, &[(1 << 20) / 64]);
    assert_eq!(st.access_lines(0, &[((1 << 20) + 64) / 64]), m.dram_cycles);
}

#[test]
fn threads_beyond_the_cores_share_them() {
    // Four threads on one core never contend for a lock: they run one after another.
    let text = |cores: u32| {
        format!(
            "module = \"allocators\"\nseed = 1\nframes = 16384\nprobe_orders = []\n\
             [[allocators]]\nname = \"buddy\"\n[machine]\ncores = {cores}\n\
             [workload.synthetic]\nshape = \"dbench\"\nthreads = 4\nallocs_per_thread = 2000\n"
        )
    };
    let contended = |cores| {
        run(&text(cores)).unwrap().rows[0]["contended_locks"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(contended(1), 0);
    assert!(contended(4) > 0);
}

#[test]
fn the_2_6_32_replay_splits_page_frags_and_folios_only() {
    use super::workload::{from_trace, from_trace_as, split_in_2_6_32, AllocOp, Kernel};
    use crate::trace::gfp;
    let frag = gfp::KERNEL | gfp::COMP | gfp::NOWARN | gfp::NORETRY;
    assert!(split_in_2_6_32(3, frag));
    // As tbench's trace prints them (GFP_NOWAIT implies no warning).
    assert!(split_in_2_6_32(
        3,
        gfp::NOWAIT | gfp::COMP | gfp::NORETRY | gfp::OTHER
    ));
    assert!(!split_in_2_6_32(3, gfp::NOWAIT | gfp::COMP));
    assert!(!split_in_2_6_32(2, frag));
    assert!(split_in_2_6_32(2, gfp::HIGHUSER_MOVABLE | gfp::COMP));
    assert!(!split_in_2_6_32(
        9,
        gfp::TRANSHUGE | gfp::HIGHUSER_MOVABLE | gfp::COMP
    ));
    assert!(!split_in_2_6_32(1, gfp::KERNEL | gfp::COMP));
    assert!(!split_in_2_6_32(0, frag));
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/traces/tbench.kmem.hmt");
    let rec = from_trace(&p, "t", "k").unwrap();
    let old = from_trace_as(&p, "t", "k", Kernel::Linux2632).unwrap();
    let pages = |w: &super::workload::AllocWorkload| -> (u64, u64, u64) {
        let mut order: Vec<u8> = vec![0; w.blocks as usize];
        let (mut a, mut f, mut multi) = (0, 0, 0);
        for q in &w.reqs {
            match q.op {
                AllocOp::Alloc { order: o } => {
                    order[q.id as usize] = o;
                    a += 1 << o;
                    multi += (o > 0) as u64;
                }
                AllocOp::Free => f += 1u64 << order[q.id as usize],
            }
        }
        (a, f, multi)
    };
    let (ra, rf, rmulti) = pages(&rec);
    let (oa, of, omulti) = pages(&old);
    // The same pages are asked for and given back; tbench's order-3 socket pages are gone.
    assert_eq!((ra, rf), (oa, of));
    assert!(omulti * 10 < rmulti, "{omulti} vs {rmulti}");
}

#[test]
fn allocators_are_registered_once_and_an_unknown_name_lists_them() {
    assert!(ALLOCATOR_KINDS.duplicates().is_empty());
    let e = build(&AllocatorSpec::named("slab"), 4096).err().unwrap();
    assert!(
        e.contains("unknown allocator 'slab'; allowed: buddy, lazy-buddy, ibuddy, lazy-ibuddy"),
        "{e}"
    );
}

#[test]
fn zeroed_pages_push_allocator_lines_down_level_by_level() {
    use super::machine::MachineState;
    let m = AllocMachine {
        adjacent_line_prefetch: false,
        ..AllocMachine::default()
    };
    let line = 1u64 << 20;
    // Each zeroed 4 KiB page puts one line into each of the 64 L1 sets (8 ways): seven
    // pages leave the allocator's line in L1, the eighth pushes it to L2.
    for (pages, cycles) in [(7, m.l1_cycles), (8, m.l2_cycles)] {
        let mut st = MachineState::new(m, 1);
        st.access_lines(0, &[(line) / 64]);
        for pfn in 0..pages {
            st.pollute(0, Some((pfn, 0)));
        }
        assert_eq!(st.access_lines(0, &[(line) / 64]), cycles, "{pages} pages");
    }
    // The L2 (512 sets of 8 ways) sees a page's 64 lines in one eighth of its sets: pages
    // whose lines share the allocator line's L2 set push it on to the LLC, others do not.
    let same_l2_set = |k: u64| k * 8 + (line / 64 / 64) % 8;
    let mut st = MachineState::new(m, 1);
    st.access_lines(0, &[(line) / 64]);
    for k in 0..16 {
        st.pollute(0, Some((same_l2_set(k) + 8 * 64, 0)));
    }
    assert_eq!(st.access_lines(0, &[(line) / 64]), m.llc_cycles);
    // Another core's zeroing leaves this core's private caches alone.
    let mut st = MachineState::new(m, 1);
    st.access_lines(0, &[(line) / 64]);
    for pfn in 0..64 {
        st.pollute(1, Some((pfn, 0)));
    }
    assert_eq!(st.access_lines(0, &[(line) / 64]), m.l1_cycles);
}

/// Frees only of live blocks, each at most once, in time order (`all_freed`: and every block
/// freed): the invariant of every generated request stream.
pub(super) fn check_stream(w: &super::workload::AllocWorkload, all_freed: bool) {
    use super::workload::AllocOp;
    let mut state = vec![0u8; w.blocks as usize];
    let mut last = 0;
    for q in &w.reqs {
        assert!(q.ts_ns >= last);
        last = q.ts_ns;
        let st = &mut state[q.id as usize];
        match q.op {
            AllocOp::Alloc { .. } => {
                assert_eq!(*st, 0, "block {} allocated twice", q.id);
                *st = 1;
            }
            AllocOp::Free => {
                assert_eq!(*st, 1, "free of block {} that is not live", q.id);
                *st = 2;
            }
        }
    }
    if all_freed {
        assert!(state.iter().all(|&s| s == 2));
    }
}

/// Each request's cycles when every event is timed as it happens (a context with its own
/// machine), the way the driver worked before it timed events in batches.
fn cycles_timed_as_they_happen(name: &str, w: &super::workload::AllocWorkload) -> Vec<u64> {
    use super::timing::Record;
    use super::workload::AllocOp;
    let model = super::driver::CostModel::default();
    let mut a = build(&AllocatorSpec::named(name), 1 << 14).unwrap();
    let mut ctx = Ctx::with_machine(1 << 14, model.cost, model.machine, model.seed);
    let cores = model.machine.cores as usize;
    let (mut clocks, mut blocks, mut out) =
        (vec![0u64; cores], vec![None; w.blocks as usize], Vec::new());
    for q in &w.reqs {
        let c = q.cpu as usize % cores;
        let start = clocks[c].max((q.ts_ns as f64 * model.cpu_ghz) as u64);
        ctx.begin(c);
        ctx.set_now(start);
        let (record, got) = match q.op {
            AllocOp::Alloc { order } => {
                let got = allocate(a.as_mut(), order, c as u16, &mut ctx).map(|p| (p, order));
                blocks[q.id as usize] = got;
                (Record::Alloc, got)
            }
            AllocOp::Free => match blocks[q.id as usize].take() {
                Some((p, order)) => {
                    release(a.as_mut(), p, order, c as u16, &mut ctx);
                    (Record::Free, None)
                }
                None => (Record::Nothing, None),
            },
        };
        let now = ctx.now();
        if record != Record::Nothing {
            out.push(now - start);
        }
        clocks[c] = now;
        ctx.end(record, got);
    }
    out
}

#[test]
fn batched_and_pipelined_timing_equal_timing_each_event_as_it_happens() {
    use super::driver::{run, CostModel};
    use super::workload::Synthetic;
    let w = Synthetic {
        threads: 4,
        allocs_per_thread: 1500,
        ..Default::default()
    }
    .generate(3, "synthetic-kernel-compile");
    for name in ALLOCATOR_KINDS.names() {
        let each = cycles_timed_as_they_happen(name, &w);
        let mean = each.iter().sum::<u64>() as f64 / each.len() as f64;
        let mut runs = [false, true].map(|pipelined| {
            let mut a = build(&AllocatorSpec::named(name), 1 << 14).unwrap();
            let model = CostModel {
                pipelined,
                ..Default::default()
            };
            run(a.as_mut(), &w, &model, &[0, 3], 20)
        });
        for r in &runs {
            assert_eq!(r.requests, each.len() as u64, "{name}");
            assert!(
                (r.all.mean - mean).abs() < 1e-9 * mean,
                "{name}: {} vs {mean}",
                r.all.mean
            );
        }
        let [serial, pipelined] = &mut runs;
        assert_eq!(
            serde_json::to_value(&*serial).unwrap(),
            serde_json::to_value(&*pipelined).unwrap(),
            "{name}: the schedule changed the answer"
        );
        assert_eq!(serial.wear, pipelined.wear);
    }
}
