//! Closed-form and conservation checks of the PMem write path.

use hmsim::cache::CacheConfig;
use hmsim::pmem::{
    run_workload, DimmSpec, Persist, PmemConfig, PmemPattern, PmemRunResult, PmemWorkload,
};
use proptest::prelude::*;

fn wl(
    pattern: PmemPattern,
    footprint: u64,
    access: u64,
    persist: Persist,
    ops: u64,
    threads: u32,
) -> PmemWorkload {
    PmemWorkload {
        pattern,
        threads,
        footprint_bytes: footprint,
        access_bytes: access,
        persist,
        fence: true,
        operations: ops,
        region_stride_bytes: None,
    }
}

fn run(cfg: &PmemConfig, cache: &CacheConfig, w: &PmemWorkload) -> PmemRunResult {
    run_workload(
        cfg,
        cache,
        w,
        DimmSpec {
            capacity_bytes: 256 << 30,
            line_endurance_writes: u32::MAX,
        },
        1,
    )
    .0
}

fn no_wl() -> PmemConfig {
    let mut c = PmemConfig::default();
    c.ait.wear_leveling = false;
    c
}

#[test]
fn one_full_xpline_written_and_flushed_is_one_media_write() {
    let r = run(
        &no_wl(),
        &CacheConfig::default(),
        &wl(PmemPattern::SeqWrite, 256, 64, Persist::Clflush, 4, 1),
    );
    assert_eq!(r.counters.wpq_inserts, 4);
    assert_eq!(r.counters.write_requests, 4);
    assert_eq!(
        r.counters.media_writes_64b, 4,
        "one 256 B media write = 4 units of 64 B"
    );
}

#[test]
fn rewrites_of_one_resident_line_are_absorbed() {
    let r = run(
        &no_wl(),
        &CacheConfig::default(),
        &wl(PmemPattern::SeqWrite, 64, 64, Persist::Clflush, 10_000, 1),
    );
    assert_eq!(r.counters.write_requests, 10_000);
    assert_eq!(r.counters.media_writes_64b, 0);
    assert_eq!(r.counters.xpbuffer_merges, 9_999);
}

#[test]
fn random_small_writes_over_a_large_region_approach_4x() {
    let mut cfg = no_wl();
    cfg.dimms = 1;
    for (access, expect) in [(64, 4.0), (128, 2.0), (256, 1.0)] {
        let r = run(
            &cfg,
            &CacheConfig::default(),
            &wl(
                PmemPattern::RandWrite,
                1 << 32,
                access,
                Persist::Ntstore,
                50_000,
                1,
            ),
        );
        let wa = r.counters.media_writes_64b as f64 / r.counters.write_requests as f64;
        assert!((wa - expect).abs() / expect < 0.02, "{access} B: WA {wa}");
    }
}

#[test]
fn clwb_that_keeps_lines_avoids_rereads_and_clflush_rereads() {
    let w = wl(PmemPattern::SeqWrite, 4096, 64, Persist::Clwb, 1000, 1);
    let invalidating = run(&no_wl(), &CacheConfig::default(), &w);
    let keeping = run(
        &no_wl(),
        &CacheConfig {
            clwb_invalidates: false,
            ..Default::default()
        },
        &w,
    );
    assert_eq!(
        invalidating.counters.read_requests, 1000,
        "every store after an invalidating flush misses"
    );
    assert_eq!(
        keeping.counters.read_requests, 64,
        "only the first touch of each line"
    );
    assert_eq!(
        invalidating.counters.write_requests,
        keeping.counters.write_requests
    );
}

/// Table 3's loop as the study group's benchmark runs it (store + flush per 64 B line, no
/// fence): `clflush` is ordered with the stores after it, so one thread writes a line per
/// `persist_ns` (64 B / 62 ns); `clflushopt` and `clwb` are not, and the thread runs until the
/// DIMM's media holds it (256 B per 256 B / 2.2 GB/s). A thread alone does not tell one
/// XPLine (256 B region) from four (1 KiB): its re-read of a line flushed four or sixteen lines
/// earlier waits for that XPLine's queued media write either way, so the media sets its pace.
#[test]
fn one_thread_of_the_table3_loop_is_bound_by_the_flush_order_or_the_media_not_its_region() {
    let mut cfg = no_wl();
    cfg.dimms = 1;
    let ops = 4_000;
    let run_loop = |footprint: u64, persist: Persist, cache: &CacheConfig| {
        let mut w = wl(PmemPattern::SeqWrite, footprint, 64, persist, ops, 1);
        w.fence = false;
        run(&cfg, cache, &w)
    };
    let cascade_lake = CacheConfig::default();
    let media_bound_gb_s = cfg.timing.media_write_gb_s;
    for footprint in [256, 1024] {
        let clflush = run_loop(footprint, Persist::Clflush, &cascade_lake);
        let ordered_gb_s = 64.0 / cfg.timing.persist_ns;
        assert!(
            (clflush.bandwidth_gb_s - ordered_gb_s).abs() < 1e-9,
            "{footprint} B clflush: {}",
            clflush.bandwidth_gb_s
        );
        for persist in [Persist::Clflushopt, Persist::Clwb] {
            let r = run_loop(footprint, persist, &cascade_lake);
            assert_eq!(r.counters.media_writes_64b, ops, "whole XPLines: WA 1");
            assert!(
                (r.bandwidth_gb_s - media_bound_gb_s).abs() < 1e-9,
                "{footprint} B {persist:?}: {}",
                r.bandwidth_gb_s
            );
            assert_eq!(
                r.counters.read_requests, ops,
                "every store re-reads its line"
            );
        }
        // A clwb that keeps the line (Ice Lake and later) re-reads nothing after the first
        // pass, and the media still sets the pace.
        let keeping = run_loop(
            footprint,
            Persist::Clwb,
            &CacheConfig {
                clwb_invalidates: false,
                ..Default::default()
            },
        );
        assert_eq!(keeping.counters.read_requests, footprint / 64);
        assert!((keeping.bandwidth_gb_s - media_bound_gb_s).abs() < 1e-9);
    }
}

/// 28 such threads on one DIMM (Table 3's placement) keep its media busy whatever the region:
/// the run lasts as long as the media's writes, so bandwidth x WA is the media's 2.2 GB/s,
/// and a thread's own latency (a re-read of ~0.3 us) cannot move it: a wider region can
/// only be faster if it amplifies less.
#[test]
fn twenty_eight_table3_threads_on_one_dimm_are_bound_by_its_media() {
    let mut cfg = no_wl();
    cfg.dimms = 1;
    for footprint in [256, 1024] {
        for persist in [Persist::Clflush, Persist::Clflushopt, Persist::Clwb] {
            let mut w = wl(PmemPattern::SeqWrite, footprint, 64, persist, 500, 28);
            w.fence = false;
            let r = run(&cfg, &CacheConfig::default(), &w);
            let wa = r.counters.media_writes_64b as f64 / r.counters.write_requests as f64;
            let media = r.bandwidth_gb_s * wa;
            assert!(
                media > 0.97 * cfg.timing.media_write_gb_s
                    && media <= cfg.timing.media_write_gb_s + 1e-9,
                "{footprint} B {persist:?}: {} GB/s x WA {wa}",
                r.bandwidth_gb_s
            );
        }
    }
}

#[test]
fn unflushed_stores_reach_pmem_only_by_eviction() {
    let w = wl(
        PmemPattern::SeqWrite,
        64 << 20,
        64,
        Persist::None,
        2_000_000,
        1,
    );
    let r = run(&no_wl(), &CacheConfig::default(), &w);
    assert_eq!(r.flushed_lines, 0);
    // 1 M lines written twice over 2 M stores; caches hold ~0.6 M lines.
    assert!(
        r.counters.write_requests > 1_000_000 && r.counters.write_requests < 2_000_000,
        "{}",
        r.counters.write_requests
    );
}

#[test]
fn a_256_b_region_overwritten_stalls_once_per_16_384_overwrites() {
    // LENS's wear-levelling probe: 256 B overwrites of one XPLine (here four ntstores and a
    // fence, FAST'20's hot-spot operation). Each overwrite completes the XPLine: one media
    // write. With the defaults (14 336 writes within 65 536 of the DIMM's) a migration comes
    // every 65 536 / 4 = 16 384 overwrites.
    let ops = 4 * 65_536;
    let r = run(
        &PmemConfig::default(),
        &CacheConfig::default(),
        &wl(PmemPattern::SeqWrite, 256, 256, Persist::Ntstore, ops, 1),
    );
    assert_eq!(r.counters.migrations, 16);
    assert_eq!(r.stored_lines / 4 / r.counters.migrations, 16_384);
    // The stalls are between 10^-5 and 10^-4 of the operations, as FAST'20's hot-spot tail
    // shows them (p99.999 about 50 µs, p99.99 below 0.4 µs): in the p99.999, not the p99.9.
    assert!(r.write_p99999_us > 40.0, "{}", r.write_p99999_us);
    assert!(r.write_latency.p999 < 1.0);
}

#[test]
fn hot_spot_migrations_stall_the_tail() {
    let hot = run(
        &PmemConfig::default(),
        &CacheConfig::default(),
        &wl(PmemPattern::SeqWrite, 4096, 64, Persist::Clwb, 200_000, 1),
    );
    let cold = run(
        &PmemConfig::default(),
        &CacheConfig::default(),
        &wl(
            PmemPattern::SeqWrite,
            1 << 20,
            64,
            Persist::Clwb,
            200_000,
            1,
        ),
    );
    assert!(
        hot.counters.migrations > 0 && hot.write_p99999_us > 40.0,
        "{}",
        hot.write_p99999_us
    );
    assert_eq!(cold.counters.migrations, 0);
    assert!(cold.write_p99999_us < 1.0);
}

#[test]
fn write_bandwidth_is_bounded_by_the_dimms() {
    let mut cfg = PmemConfig::default();
    let mut w = wl(
        PmemPattern::SeqWrite,
        1 << 24,
        256,
        Persist::Ntstore,
        20_000,
        4,
    );
    w.fence = false;
    for dimms in [1u32, 6] {
        cfg.dimms = dimms;
        let r = run(&cfg, &CacheConfig::default(), &w);
        let cap = dimms as f64 * cfg.timing.media_write_gb_s;
        assert!(
            (r.bandwidth_gb_s - cap).abs() / cap < 0.02,
            "{dimms} DIMMs: {}",
            r.bandwidth_gb_s
        );
    }
}

/// More interleaved write streams than the XPBuffer entries left free by a full media queue:
/// partly written XPLines go to media early (RMW), so WA rises and bandwidth falls; the
/// lines of such an XPLine that arrive while its fill read is out are patched into it (no
/// read then). A few threads keep the buffer entries they need for assembling.
#[test]
fn many_write_streams_on_a_backed_up_dimm_amplify_and_slow_down() {
    let mut cfg = no_wl();
    cfg.dimms = 1;
    let stream = |threads: u32| {
        let mut w = wl(
            PmemPattern::SeqWrite,
            1 << 24,
            256,
            Persist::Ntstore,
            4_000,
            threads,
        );
        w.fence = false;
        run(&cfg, &CacheConfig::default(), &w)
    };
    let (few, many) = (stream(4), stream(24));
    let wa =
        |r: &PmemRunResult| r.counters.media_writes_64b as f64 / r.counters.write_requests as f64;
    assert_eq!(wa(&few), 1.0);
    assert_eq!(few.counters.xpbuffer_early_writebacks, 0);
    assert!(wa(&many) > 1.3, "24 streams: WA {}", wa(&many));
    assert!(many.counters.xpbuffer_early_writebacks > 0);
    assert!(
        many.bandwidth_gb_s < 0.75 * few.bandwidth_gb_s,
        "{} vs {}",
        many.bandwidth_gb_s,
        few.bandwidth_gb_s
    );
    // An early write-back of a partial line needs a media read unless patched whole.
    assert!(many.counters.media_reads_64b > 0);
    assert!(many.counters.media_reads_64b <= 4 * many.counters.xpbuffer_early_writebacks);
}

/// FAST'20's XPBuffer probe: first halves of every XPLine in a region, then second halves.
/// Up to the buffer's 64 XPLines the halves combine (WA 1); beyond, each half is an RMW (2).
#[test]
fn xpline_halves_probe_finds_the_buffer_capacity() {
    let mut cfg = no_wl();
    cfg.dimms = 1;
    let wa = |fp: u64| {
        let r = run(
            &cfg,
            &CacheConfig::default(),
            &wl(
                PmemPattern::XplineHalves,
                fp,
                64,
                Persist::Ntstore,
                20_000,
                1,
            ),
        );
        assert_eq!(r.stored_lines, 40_000, "two lines per 128 B half");
        r.counters.media_writes_64b as f64 / r.counters.write_requests as f64
    };
    assert!((wa(16 << 10) - 1.0).abs() < 0.01);
    assert!((wa(64 << 10) - 2.0).abs() < 0.01);
}

/// LATTester's `cacheprobe` (FAST'20's XPBuffer probe) over one XPLine: per pass a 64 B
/// store + `clflush` to lines 0 and 1, then to lines 2 and 3. Each store re-reads the line
/// the previous pass flushed (a read request the resident XPLine serves) and the completed
/// XPLine is one 256 B media write: after k whole passes the counters read exactly 4k
/// requests and 4k media units (WA 1). Read after one more half pass, the first half still
/// sits in the XPBuffer: WA 4k / (4k + 2), below one by the buffered residue only. The
/// residue is at most the buffer's 64 XPLines; FAST'20's run writes 2^24 requests per point,
/// so it moves WA by less than 2e-5 and cannot give the published 0.80.
#[test]
fn cacheprobe_on_one_xpline_is_one_media_write_per_pass_and_below_one_only_mid_pass() {
    let mut cfg = no_wl();
    cfg.dimms = 1;
    let k = 50u64;
    let probe = |ops: u64| {
        let mut w = wl(PmemPattern::XplineHalves, 256, 64, Persist::Clflush, ops, 1);
        w.fence = false;
        run(&cfg, &CacheConfig::default(), &w).counters
    };
    let whole = probe(2 * k);
    assert_eq!(whole.write_requests, 4 * k);
    assert_eq!(whole.read_requests, 4 * k, "one re-read per store");
    assert_eq!(
        whole.media_reads_64b, 4,
        "only the first re-read misses the XPBuffer"
    );
    assert_eq!(whole.media_writes_64b, 4 * k, "one 256 B write per pass");
    let mid = probe(2 * k + 1);
    assert_eq!(mid.write_requests, 4 * k + 2);
    assert_eq!(
        mid.media_writes_64b,
        4 * k,
        "the first half is still buffered"
    );
    let wa = mid.media_writes_64b as f64 / mid.write_requests as f64;
    assert!((wa - (4 * k) as f64 / (4 * k + 2) as f64).abs() < 1e-12);
    // A region of the buffer's size: whole passes give exactly 1, a half pass more leaves
    // all 64 first halves (128 requests) buffered, the most the residue can be.
    let lines = 64u64;
    let probe64 = |ops: u64| {
        let mut w = wl(
            PmemPattern::XplineHalves,
            lines * 256,
            64,
            Persist::Clflush,
            ops,
            1,
        );
        w.fence = false;
        run(&cfg, &CacheConfig::default(), &w).counters
    };
    let whole64 = probe64(2 * lines * 3);
    assert_eq!(whole64.media_writes_64b, whole64.write_requests);
    let half64 = probe64(2 * lines * 3 + lines);
    assert_eq!(half64.write_requests, whole64.write_requests + 2 * lines);
    assert_eq!(half64.media_writes_64b, whole64.media_writes_64b);
}

#[test]
fn same_seed_same_counters() {
    let w = wl(
        PmemPattern::RandWrite,
        1 << 24,
        64,
        Persist::Clwb,
        20_000,
        4,
    );
    let a = run(&PmemConfig::default(), &CacheConfig::default(), &w);
    let b = run(&PmemConfig::default(), &CacheConfig::default(), &w);
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.bandwidth_gb_s, b.bandwidth_gb_s);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Requests in = requests out at every stage: every line written to memory is one WPQ
    /// insert and one write request; flushes and non-temporal stores never exceed stores.
    #[test]
    fn conservation_through_the_path(fp_pow in 6u32..22, acc_pow in 6u32..10, ops in 1u64..3000, threads in 1u32..5,
                                     persist in prop::sample::select(vec![Persist::Clflush, Persist::Clflushopt, Persist::Clwb, Persist::Ntstore, Persist::None]),
                                     random in any::<bool>()) {
        let access = 1u64 << acc_pow;
        let fp = (1u64 << fp_pow).max(access);
        let w = wl(if random { PmemPattern::RandWrite } else { PmemPattern::SeqWrite }, fp, access, persist, ops, threads);
        let r = run(&PmemConfig::default(), &CacheConfig::default(), &w);
        let c = r.counters;
        prop_assert_eq!(c.wpq_inserts, c.write_requests);
        prop_assert_eq!(r.stored_lines, ops * threads as u64 * access / 64);
        prop_assert!(c.write_requests <= r.stored_lines);
        if persist == Persist::Ntstore { prop_assert_eq!(c.write_requests, r.stored_lines); }
        // Media writes come in whole XPLines.
        prop_assert_eq!(c.media_writes_64b % 4, 0);
        prop_assert!(c.media_writes_64b <= 4 * c.write_requests + 4 * 32 * c.migrations);
    }
}

/// Random reads within the AIT buffer's reach (16 MiB per DIMM) find their translation; over
/// a much larger region each media read pays the translation miss.
#[test]
fn ait_buffer_misses_add_latency_to_random_reads_beyond_its_reach() {
    let mut cfg = no_wl();
    cfg.dimms = 1;
    // A small LLC, so that the region within the AIT buffer's reach does not fit in it.
    let mut caches = CacheConfig::default();
    caches.llc.size_bytes = 1 << 20;
    let read = |fp: u64| {
        let mut w = wl(PmemPattern::RandRead, fp, 256, Persist::Clwb, 20_000, 1);
        w.fence = false;
        run(&cfg, &caches, &w)
    };
    let (near, far) = (read(8 << 20), read(8 << 30));
    assert!(
        near.counters.ait_buffer_misses <= 2048,
        "at most one cold miss per block: {:?}",
        near.counters
    );
    assert!(far.counters.ait_buffer_misses > 19_000);
    let gap = far.read_latency.mean * 1e3 - near.read_latency.mean * 1e3;
    assert!(
        gap > 0.8 * cfg.timing.ait_miss_ns && gap < 1.2 * cfg.timing.ait_miss_ns,
        "{gap} ns"
    );
}

/// Table 3's layout (28 threads, each at offset 0 of its own 1056 MiB namespace: one DIMM)
/// with queued-write patching and random XPBuffer replacement: the same seed gives the same
/// counters and bandwidth; the regions all land on one DIMM.
#[test]
fn many_streams_on_one_dimm_are_deterministic() {
    let mut cfg = PmemConfig::default();
    cfg.xpbuffer.replacement = "random".into();
    let mut w = wl(PmemPattern::SeqWrite, 256, 64, Persist::Clflushopt, 300, 28);
    w.region_stride_bytes = Some((11 * 96) << 20);
    let a = run(&cfg, &CacheConfig::default(), &w);
    let b = run(&cfg, &CacheConfig::default(), &w);
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.bandwidth_gb_s, b.bandwidth_gb_s);
    assert_eq!(a.wpq_inserts_per_imc.iter().filter(|&&n| n > 0).count(), 1);
}

/// Random 64 B stores over 1 GiB of one DIMM, then the final write-back of the caches: the
/// bookkeeping of queued media writes per store stays flat as the trace grows (it grew with
/// the queue when each write swept the whole queue), and the drain, paced by WPQ credits
/// like any other write-back, leaves no more queued writes than one sweep's worth.
#[test]
fn replay_work_per_write_does_not_grow_with_the_trace() {
    use hmsim::pmem::Machine;
    let per_write = |n: u64| {
        let cfg = PmemConfig {
            dimms: 1,
            ..PmemConfig::default()
        };
        let dimm = DimmSpec {
            capacity_bytes: 16 << 30,
            line_endurance_writes: u32::MAX,
        };
        let mut m = Machine::new(&cfg, &CacheConfig::default(), 1, dimm, 7);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            m.write_op(0, (x % (1 << 30)) & !63, 64, Persist::None, false);
        }
        m.drain();
        let media = m.sys.counters().media_writes_64b / 4;
        assert!(media > n / 2, "{media} media writes for {n} stores");
        assert!(
            m.sys.queued_writes() <= 64,
            "{} queued writes after the drain",
            m.sys.queued_writes()
        );
        assert_eq!(m.sys.queue_cap_drops(), 0, "one core: the floor keeps up");
        m.sys.queue_work() as f64 / n as f64
    };
    let (small, large) = (per_write(100_000), per_write(400_000));
    assert!(
        large <= small * 1.25 + 0.05,
        "queue work per write grew: {small:.3} at 100 k, {large:.3} at 400 k"
    );
    assert!(large < 4.0, "{large:.3} records visited per write");
}
