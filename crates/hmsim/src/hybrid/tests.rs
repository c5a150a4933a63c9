use std::sync::Arc;

use super::cache::UmdDramCache;
use super::host::{Host, HostConfig};
use super::pigz::{deflated_ratio, measured_ratio, PigzLike, CHECKER, INFLATER, READER, WRITER};
use super::policy::{EpfPolicy, EpfPolicySpec, FaultView};
use super::scenario::simulate;
use super::umd::{Umd, Walk};
use super::workload::{Ev, HybridWorkload, ThreadSpec, Touch, MIB, PAGE_BYTES};
use super::HybridConfig;
use crate::flash::{build_gc, preset, Ftl, Geometry};

/// A small two-channel flash of `logical` pages, 16 pages a block.
fn small_geometry(logical: u32) -> Geometry {
    Geometry {
        logical_pages: logical,
        pages_per_block: 16,
        over_provisioning: 0.1,
        channels: 2,
        dies_per_channel: 2,
        page_bytes: 4096,
        channel_gb_s: None,
        gc_free_blocks: 2,
    }
}

fn small_ftl(logical: u32) -> Ftl {
    Ftl::new(
        small_geometry(logical),
        preset("study").unwrap(),
        build_gc("greedy", 1).unwrap(),
    )
}

#[test]
fn hybrid_lru_evicts_least_recently_used_and_tracks_dirty() {
    let mut c = UmdDramCache::new(3);
    for lpn in [10, 11, 12] {
        let f = c.take_free().unwrap();
        c.install(f, lpn, false);
    }
    assert!(c.take_free().is_none());
    assert_eq!(c.order(), vec![12, 11, 10]);
    c.touch(0, true); // frame 0 holds 10
    assert_eq!(c.order(), vec![10, 12, 11]);
    let v = c.lru().unwrap();
    assert_eq!(c.lpn(v), 11);
    assert!(!c.is_dirty(v));
    assert!(c.is_dirty(0));
    c.install(v, 13, false);
    assert_eq!(c.order(), vec![13, 10, 12]);
}

#[test]
fn hybrid_estimate_equals_service_time_on_an_idle_device() {
    let mut ftl = small_ftl(512);
    ftl.precondition(0.6, 0.5, &mut crate::rng::stream(3, "t"));
    // Fill DRAM with dirty fresh pages that have no flash copy.
    let unmapped: Vec<u32> = (0..512u32)
        .filter(|&l| ftl.lookup(l) == crate::flash::NONE)
        .take(4)
        .collect();
    let mut umd = Umd::new(ftl, 4, 50, 50);
    for (i, &lpn) in unmapped.iter().enumerate() {
        let f = umd.fault(lpn, i as u64, true);
        assert!(!f.flash_work);
    }
    let mut t = 10_000_000u64;
    let mut checked = 0;
    for lpn in 0..200u32 {
        if umd.walk(lpn) != Walk::Flash {
            continue;
        }
        let f = umd.fault(lpn, t, false);
        assert!(f.flash_work);
        // Nothing else runs on the device between faults far apart in time.
        assert_eq!(f.done_ns - t, f.estimate_ns, "fault of {lpn}");
        umd.access(f.frame, true);
        t = f.done_ns + 100_000_000;
        checked += 1;
    }
    assert!(checked > 50);
    assert!(umd.ftl.stats.gc_runs > 0, "GC ran on the critical path");
    // Back-to-back faults share dies: the second can only take longer than its estimate.
    let mut a = None;
    for lpn in 200..512u32 {
        if umd.walk(lpn) == Walk::Flash {
            let f = umd.fault(lpn, t, false);
            if let Some(prev) = a {
                assert!(f.done_ns - t >= f.estimate_ns, "{prev:?}");
            }
            a = Some(f);
        }
    }
}

fn tiny_scenario(policy: &str, extra: &str) -> HybridConfig {
    let text = format!(
        "[device]\ncapacity_mib = 16\ndram_mib = 0.5\n\
         [host]\nnonpreemptible_fraction = 0.1\n[workload]\nthreads = 3\n\
         [workload.pigz]\ninput_mib = 0.5\n{extra}[[policies]]\nname = \"{policy}\"\n"
    );
    crate::config::parse_toml(&text, "t.toml").unwrap()
}

type Fingerprint = (u64, u64, u64, u64, u64, Vec<(u64, u64)>);

/// The tiny scenarios' seed.
const SEED: u64 = 7;

fn fingerprint(sc: &HybridConfig, p: &EpfPolicySpec) -> Fingerprint {
    fingerprint_at(sc, p, SEED)
}

fn fingerprint_at(sc: &HybridConfig, p: &EpfPolicySpec, seed: u64) -> Fingerprint {
    let w = sc.load_workload("t.toml", seed).unwrap();
    let r = simulate(sc, &w, p, seed).unwrap();
    let s = r.stats;
    (
        s.runtime_ns,
        s.internal_faults,
        s.epf_raised,
        s.stall_ns,
        r.gc_runs,
        s.service,
    )
}

#[test]
fn hybrid_smart_threshold_infinite_is_no_and_zero_weighs_cost() {
    let sc = tiny_scenario("smart_EPF", "");
    let smart = |t: f64| EpfPolicySpec {
        name: "smart_EPF".into(),
        threshold_us: Some(t),
    };
    let all = fingerprint(&sc, &EpfPolicySpec::named("all_EPF"));
    let no = fingerprint(&sc, &EpfPolicySpec::named("no_EPF"));
    assert!(all.1 > 0, "the tiny run must have internal faults");
    assert!(all.2 > 0 && no.2 == 0);
    assert_eq!(fingerprint(&sc, &smart(f64::INFINITY)), no);
    // Threshold 0: smart still stalls when no other thread could use the wait.
    let zero = fingerprint(&sc, &smart(0.0));
    assert!(zero.2 > 0 && zero.2 < all.2, "{} vs {}", zero.2, all.2);
    assert_ne!(all.0, no.0);
}

#[test]
fn hybrid_nonpreemptible_sections_never_block() {
    // Every access non-preemptible: all_EPF cannot raise and behaves as no_EPF.
    let mut sc = tiny_scenario("all_EPF", "");
    sc.host.nonpreemptible_fraction = 1.0;
    let all = fingerprint(&sc, &EpfPolicySpec::named("all_EPF"));
    assert_eq!(all.2, 0);
    assert_eq!(all, fingerprint(&sc, &EpfPolicySpec::named("no_EPF")));
    // Some non-preemptible accesses: fewer EPFs than internal faults.
    sc.host.nonpreemptible_fraction = 0.5;
    let half = fingerprint(&sc, &EpfPolicySpec::named("all_EPF"));
    assert!(half.2 > 0 && half.2 < half.1, "{} of {}", half.2, half.1);
}

#[test]
fn hybrid_runs_are_deterministic_and_seed_dependent() {
    let sc = tiny_scenario("smart_EPF", "");
    let p = EpfPolicySpec::named("smart_EPF");
    assert_eq!(fingerprint(&sc, &p), fingerprint(&sc, &p));
    assert_ne!(fingerprint(&sc, &p).5, fingerprint_at(&sc, &p, 8).5);
}

/// One thread, two pages, DRAM of one frame: every access after the first two faults.
#[test]
fn hybrid_host_closed_form_no_epf() {
    let mut ftl = small_ftl(256);
    ftl.precondition(0.0, 0.0, &mut crate::rng::stream(1, "t"));
    let mut umd = Umd::new(ftl, 1, 50, 50);
    let ev = |page, write| Ev {
        page,
        gap: 0,
        write,
        touch: Touch::Cpu,
    };
    let w = HybridWorkload {
        name: "t".into(),
        threads: vec![ThreadSpec {
            process: 0,
            events: Arc::new(vec![ev(0, true), ev(1, false), ev(0, false)]),
            deps: Vec::new(),
        }],
        process_pages: vec![2],
        resident_pages: 0,
        input_mib: 0.0,
        output_ratio: 0.0,
    };
    let cfg = HostConfig {
        code_pages: 1,
        ..HostConfig::default()
    };
    let p = EpfPolicySpec::named("no_EPF").build().unwrap();
    let s = Host::new(cfg, &mut umd, p.as_ref(), &w, 1).run(&w);
    // Code page, page 0, page 1, page 0 again: each displaces the single frame's page.
    // Faults with flash work: page 0 (evicts the dirty code page: program), page 1
    // (evicts dirty page 0: program), code page again ... every refault reads flash.
    assert_eq!(s.os_faults, 3);
    assert!(s.internal_faults >= 3);
    assert_eq!(s.epf_raised, 0);
    let service: u64 = s.service.iter().map(|x| x.1).sum();
    assert_eq!(
        s.stall_ns, service,
        "no_EPF stalls exactly through every fault"
    );
    assert_eq!(s.umd_accesses, 3);
}

#[test]
fn hybrid_policies_by_name_and_bad_config_errors() {
    let p: Box<dyn EpfPolicy> = EpfPolicySpec::named("smart_EPF").build().unwrap();
    assert_eq!(p.name(), "smart_EPF");
    let f = |estimate_ns, gain_ns, cost_ns| FaultView {
        estimate_ns,
        gain_ns,
        cost_ns,
    };
    assert!(p.raise(&f(50_001, 50_001, 10_000)) && !p.raise(&f(50_000, 50_000, 10_000)));
    // A long wait nobody else can use, or one that gains less than signalling costs.
    assert!(!p.raise(&f(1_000_000, 0, 10_000)) && !p.raise(&f(1_000_000, 9_000, 10_000)));
    let bad = "module = \"hybrid\"\n[device]\ncapacity_mib = 16\ndram_mib = 32\n";
    let e = crate::run_scenario(bad, "b.toml", &[], &[]).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("device.dram_mib", Some(4)));
    let bad = "module = \"hybrid\"\n[[policies]]\nname = \"some_EPF\"\n";
    let e = crate::run_scenario(bad, "b.toml", &[], &[]).unwrap_err();
    assert!(e.message.contains("no_EPF, all_EPF, smart_EPF"), "{e}");
    let bad = "module = \"hybrid\"\n[device]\ncapacity_mib = 1\ndram_mib = 0.5\n[workload.pigz]\ninput_mib = 8\n";
    let e = crate::run_scenario(bad, "b.toml", &[], &[]).unwrap_err();
    assert!(e.message.contains("raise capacity_mib"), "{e}");
    let bad = "module = \"hybrid\"\n[device]\nvictim_release = \"early\"\n";
    let e = crate::run_scenario(bad, "b.toml", &[], &[]).unwrap_err();
    assert!(e.key == "device.victim_release" && e.message.contains("page_register"));
    let bad = "module = \"hybrid\"\n[flash]\ngc = \"lru\"\n";
    let e = crate::run_scenario(bad, "b.toml", &[], &[]).unwrap_err();
    assert_eq!(e.key, "flash.gc");
}

/// `threads` threads (one process each) over a small flash whose every logical page holds
/// data (so each first use reads a stale copy: a 25 µs short fault), DRAM of `frames`.
fn short_fault_run(
    threads: Vec<Vec<Ev>>,
    frames: u32,
    policy: &str,
) -> (super::HostStats, HostConfig) {
    let mut ftl = small_ftl(256);
    ftl.precondition(1.0, 0.0, &mut crate::rng::stream(1, "t"));
    let mut umd = Umd::new(ftl, frames, 50, 50);
    let n = threads.len();
    let pages = threads
        .iter()
        .map(|t| t.iter().map(|e| e.page + 1).max().unwrap_or(1))
        .collect();
    let w = HybridWorkload {
        name: "t".into(),
        threads: threads
            .into_iter()
            .enumerate()
            .map(|(i, ev)| ThreadSpec {
                process: i as u16,
                events: Arc::new(ev),
                deps: Vec::new(),
            })
            .collect(),
        process_pages: pages,
        resident_pages: 0,
        input_mib: 0.0,
        output_ratio: 0.0,
    };
    assert_eq!(w.threads.len(), n);
    let cfg = HostConfig {
        code_pages: 1,
        ..HostConfig::default()
    };
    let p = EpfPolicySpec::named(policy).build().unwrap();
    (Host::new(cfg, &mut umd, p.as_ref(), &w, 1).run(&w), cfg)
}

/// Every nanosecond of the run is accounted for by an event the host counted.
fn assert_time_accounted(s: &super::HostStats, c: &HostConfig, instr_ns: u64) {
    let busy = instr_ns
        + s.umd_accesses * c.dram_access_ns
        + (s.itlb_misses + s.dtlb_misses) * c.page_walk_ns
        + s.os_faults * (c.exception_ns + c.os_fault_ns)
        + s.kernel_allocs * c.os_fault_ns
        + (s.epf_raised + s.epf_reraised + s.timer_interrupts) * c.exception_ns
        + s.context_switches * c.context_switch_ns
        + s.idle_switches * c.idle_switch_ns
        + s.wakeups * c.wakeup_ns
        + s.stall_ns;
    assert_eq!(s.runtime_ns, busy + s.idle_ns, "{s:?}");
}

fn ev(page: u32, gap: u32) -> Ev {
    Ev {
        page,
        gap,
        write: true,
        touch: Touch::Cpu,
    }
}

#[test]
fn hybrid_epf_cost_without_a_ready_thread() {
    // One thread touching 20 new pages: every first use reads the page's stale flash copy.
    let events: Vec<Ev> = (0..20).map(|p| ev(p, 0)).collect();
    let (no, c) = short_fault_run(vec![events.clone()], 64, "no_EPF");
    let (all, _) = short_fault_run(vec![events.clone()], 64, "all_EPF");
    assert_eq!(no.internal_faults, 21, "20 data pages and the code page");
    assert!(no.service.iter().all(|&(e, a)| e == a && a == 25_000 + 50));
    assert_eq!(all.epf_raised, all.internal_faults);
    // Per signalled fault: the EPF's exception, the switch to idle (hidden in the wait),
    // the timer's slack, the wake-up from idle, the timer interrupt, the switch out of
    // idle and the re-walk.
    let per_epf =
        2 * c.exception_ns + c.timer_slack_ns + c.wakeup_ns + c.idle_switch_ns + c.page_walk_ns;
    assert_eq!(all.runtime_ns - no.runtime_ns, all.epf_raised * per_epf);
    assert_eq!(all.idle_switches, 2 * all.epf_raised);
    assert_eq!(all.wakeups, all.epf_raised);
    assert_eq!(all.timer_interrupts, all.epf_raised);
    assert_eq!(all.context_switches, 0);
    assert_time_accounted(&no, &c, 0);
    assert_time_accounted(&all, &c, 0);
    // Nobody could use the wait: smart_EPF (any threshold) stalls like no_EPF.
    let (smart, _) = short_fault_run(vec![events], 64, "smart_EPF");
    assert_eq!(smart.epf_raised, 0);
    assert_eq!(smart.runtime_ns, no.runtime_ns);
}

/// The cost of one signalled short fault, written out by hand: one thread touches one new
/// page whose recycled logical page still has a flash copy, so its first use (and the code
/// page's) is a 25.05 µs short fault; nobody else can run.
#[test]
fn hybrid_signalled_short_fault_cost_by_hand() {
    let (no, c) = short_fault_run(vec![vec![ev(0, 0)]], 64, "no_EPF");
    let (all, _) = short_fault_run(vec![vec![ev(0, 0)]], 64, "all_EPF");
    // The defaults this hand computation uses.
    assert_eq!(
        (
            c.page_walk_ns,
            c.exception_ns,
            c.os_fault_ns,
            c.dram_access_ns
        ),
        (200, 1_344, 2_000, 50)
    );
    assert_eq!(
        (c.timer_slack_ns, c.wakeup_ns, c.idle_switch_ns),
        (50_000, 3_000, 3_800)
    );
    // A short fault: flash read 25 µs + DRAM write 50 ns, estimated exactly.
    let service = 25_000 + 50;
    assert!(no
        .service
        .iter()
        .all(|&(e, a)| e == service && a == service));
    // Shared by both policies per page (the code page, then the data page): the walk
    // (200) and the OS page fault of the first use (exception 1 344 + handler 2 000).
    let first_use = 200 + 1_344 + 2_000;
    // no_EPF: the core stalls through the fault.
    let stalled = first_use + service;
    assert_eq!(
        no.runtime_ns,
        2 * stalled + 50,
        "two faults, then the data access"
    );
    // all_EPF: the EPF's exception (1 344); the OS sleeps on a timer set to the estimate
    // with 50 000 ns of slack, which fires at its end as no other timer is due (the switch
    // to idle, 3 800, happens inside the sleep); the core leaves C1 (3 000), takes the
    // timer interrupt (1 344), switches out of idle to the woken thread (3 800), which
    // walks again (200).
    let signalled = first_use + 1_344 + (service + 50_000) + 3_000 + 1_344 + 3_800 + 200;
    assert_eq!(all.runtime_ns, 2 * signalled + 50);
    // So a signalled short fault costs 59 688 ns more than stalling through it: more than
    // twice the 25 050 ns it waits for.
    assert_eq!(signalled - stalled, 59_688);
    assert_eq!(all.idle_ns, 2 * (service + 50_000 - 3_800));
    assert_time_accounted(&all, &c, 0);
}

#[test]
fn hybrid_timers_within_the_slack_expire_in_one_interrupt() {
    // Two processes each touching new pages: thread 1 blocks a few µs after thread 0, so
    // thread 0's timer interrupt (at its hard expiry) also expires thread 1's, whose soft
    // expiry has passed by then.
    let a: Vec<Ev> = (0..10).map(|p| ev(p, 0)).collect();
    let (all, c) = short_fault_run(vec![a.clone(), a], 64, "all_EPF");
    assert_time_accounted(&all, &c, 0);
    assert!(all.timer_interrupts < all.epf_raised, "{all:?}");
}

#[test]
fn hybrid_epf_cost_with_a_ready_thread() {
    // Thread 0 touches 20 new pages; thread 1 computes (1 ms between accesses to one page)
    // longer than thread 0 needs: 20 faults, each waiting for thread 1's 4 ms slice.
    let faulting: Vec<Ev> = (0..20).map(|p| ev(p, 0)).collect();
    let computing: Vec<Ev> = (0..100).map(|_| ev(0, 2_000_000)).collect();
    let (all, c) = short_fault_run(vec![faulting.clone(), computing.clone()], 64, "all_EPF");
    let instr_ns = 100 * 1_000_000;
    assert_time_accounted(&all, &c, instr_ns);
    assert!(all.epf_raised >= 20);
    // Thread 1 is ready at thread 0's faults: they cost a switch away, not an idle switch
    // and a wake-up. Only thread 1's own two first faults (code and data page) can find
    // nobody ready.
    assert!(all.idle_switches <= 4, "{all:?}");
    assert!(all.wakeups <= 2, "{all:?}");
    assert!(all.context_switches >= all.epf_raised - 2, "{all:?}");
    // The core works through thread 0's faults instead of stalling.
    let (no, _) = short_fault_run(vec![faulting, computing], 64, "no_EPF");
    assert_time_accounted(&no, &c, instr_ns);
    assert!(no.stall_ns >= 20 * 25_000);
    assert_eq!(all.stall_ns, 0);
}

#[test]
fn hybrid_short_fault_reads_a_recycled_pages_stale_copy() {
    let mut ftl = small_ftl(256);
    ftl.precondition(0.5, 0.0, &mut crate::rng::stream(1, "t"));
    let mapped = (0..256)
        .find(|&l| ftl.lookup(l) != crate::flash::NONE)
        .unwrap();
    let unmapped = (0..256)
        .find(|&l| ftl.lookup(l) == crate::flash::NONE)
        .unwrap();
    let mut umd = Umd::new(ftl, 4, 50, 50);
    // The OS reuses a page the device still holds: read from flash, then the DRAM write.
    let f = umd.fault(mapped, 0, true);
    assert!(f.flash_work);
    assert_eq!((f.estimate_ns, f.done_ns), (25_050, 25_050));
    assert_eq!(umd.stale_reads, 1);
    // A page with no flash copy needs no flash work.
    let f = umd.fault(unmapped, 1_000_000, true);
    assert!(!f.flash_work && f.estimate_ns == 0);
}

#[test]
fn hybrid_dma_fill_needs_no_flash_read() {
    let mut ftl = small_ftl(256);
    ftl.precondition(1.0, 0.0, &mut crate::rng::stream(1, "t"));
    let mut umd = Umd::new(ftl, 1, 50, 50);
    // Every page has a flash copy; a DMA writing page 3 whole does not read it: the DRAM
    // write of the data into the free frame, 50 ns.
    let f = umd.fill_whole(3, 0);
    assert!(!f.flash_work);
    assert_eq!((f.estimate_ns, f.done_ns), (50, 50));
    assert_eq!((umd.dma_fills, umd.stale_reads), (1, 0));
    assert!(umd.cache.is_dirty(f.frame), "its data is not in flash yet");
    // The next DMA evicts the dirty page: its program (DRAM read 50 + 200 µs) comes first.
    let t = 1_000_000;
    let g = umd.fill_whole(4, t);
    assert!(g.flash_work && g.evicted == Some(3));
    assert_eq!(g.done_ns - t, g.estimate_ns);
    assert!(g.estimate_ns >= 50 + 200_000 + 50, "{g:?}");
    assert_eq!(
        umd.walk(4),
        Walk::Dram {
            frame: 0,
            ready_ns: g.done_ns
        }
    );
}

fn pigz(input_mib: f64, os_mib: f64) -> HybridWorkload {
    PigzLike {
        input_mib,
        os_resident_mib: os_mib,
        ..PigzLike::default()
    }
    .generate(3)
}

#[test]
fn hybrid_pigz_threads_page_cache_and_handoffs() {
    let r = measured_ratio(3);
    assert!((2.0..8.0).contains(&r), "text deflates {r}:1");
    // Kept per seed: the same ratio as deflating again, and another seed's is its own.
    assert_eq!(measured_ratio(3), deflated_ratio(3));
    assert_eq!(measured_ratio(4), deflated_ratio(4));
    assert_ne!(measured_ratio(4), r);
    let w = pigz(0.5, 1.0);
    assert_eq!(w.threads.len(), 4);
    assert_eq!(w.output_ratio, r);
    let pages = |mb: f64| (mb * MIB as f64 / PAGE_BYTES as f64).ceil() as u32;
    let (inp, os) = (pages(0.5), pages(1.0));
    let out = (inp as f64 * r).ceil() as u32;
    assert_eq!(w.resident_pages, os);
    // The page cache holds the input file and the output file beside the small buffers.
    assert!(w.process_pages[0] >= os + inp + out && w.process_pages[0] < os + inp + out + 64);
    // Every hand-off waits for a point the other thread really reaches.
    for (i, t) in w.threads.iter().enumerate() {
        assert!(t.deps.windows(2).all(|d| d[0].at <= d[1].at));
        for d in &t.deps {
            assert_ne!(d.thread as usize, i);
            assert!(d.reached as usize <= w.threads[d.thread as usize].events.len());
        }
    }
    assert!(!w.threads[INFLATER as usize].deps.is_empty());
    for t in [READER, WRITER, CHECKER] {
        assert!(!w.threads[t as usize].deps.is_empty());
    }
    // The inflater writes every output page once more than the writer copies it out; the
    // writer writes each output-file page once.
    let writer = &w.threads[WRITER as usize].events;
    let file_writes = writer
        .iter()
        .filter(|e| e.write && e.page >= w.resident_pages)
        .count() as u32;
    assert_eq!(file_writes, out);
}

#[test]
fn hybrid_pigz_run_finishes_every_thread_deterministically() {
    let w = pigz(0.25, 0.5);
    let mut sc = tiny_scenario("all_EPF", "");
    sc.host.nonpreemptible_fraction = 0.0;
    let runs: Vec<_> = ["no_EPF", "all_EPF", "smart_EPF"]
        .iter()
        .map(|p| simulate(&sc, &w, &EpfPolicySpec::named(p), SEED).unwrap())
        .collect();
    // The input file's pages: filled whole by the disk's DMA, allocated by readahead.
    let dma = w
        .threads
        .iter()
        .flat_map(|t| t.events.iter())
        .filter(|e| e.touch == Touch::Dma)
        .count() as u64;
    assert_eq!(dma, (0.25 * MIB as f64 / PAGE_BYTES as f64).ceil() as u64);
    for r in &runs {
        let s = &r.stats;
        assert_eq!(r.dma_fills, dma);
        // Every thread ran to its end: each event is a CPU access or a DMA fill.
        assert_eq!(s.umd_accesses + r.dma_fills, w.events());
        assert!(s.handoff_waits > 0);
        assert!(s.internal_faults > 0);
        // Page-cache pages (input by readahead, output by write()) are allocated inside
        // system calls, without a page fault.
        assert!(s.kernel_allocs >= dma, "{s:?}");
    }
    let again = simulate(&sc, &w, &EpfPolicySpec::named("smart_EPF"), SEED)
        .unwrap()
        .stats;
    assert_eq!(again.runtime_ns, runs[2].stats.runtime_ns);
    assert_eq!(again.service, runs[2].stats.service);
    assert_eq!(w.threads[0].events, pigz(0.25, 0.5).threads[0].events);
}

#[test]
fn hybrid_victim_released_at_the_page_register() {
    // One frame holding a dirty page; the next fault evicts it. Released at the page
    // register, the fault waits for the DRAM read of the victim and the flash read of the
    // new page (on another die: at once), not for the 200 µs program.
    let run = |register: bool| {
        let mut ftl = small_ftl(256);
        ftl.precondition(1.0, 0.0, &mut crate::rng::stream(1, "t"));
        let mut umd = Umd::new(ftl, 1, 50, 50);
        umd.release_at_register = register;
        let f = umd.fault(0, 0, true);
        umd.access(f.frame, true);
        // Page 1's flash copy; the victim's program goes to the write block's next page.
        let read_die = umd.ftl.lookup(1) % 4;
        let t = 10_000_000;
        let f = umd.fault(1, t, false);
        let program_die = umd.ftl.lookup(0) % 4;
        assert_ne!(read_die, program_die, "the closed form needs two dies");
        (f, t)
    };
    let (programmed, t) = run(false);
    let (register, _) = run(true);
    assert_eq!(programmed.estimate_ns, programmed.done_ns - t);
    assert!(programmed.estimate_ns >= 50 + 200_000, "{programmed:?}");
    assert_eq!(register.estimate_ns, 50 + 25_000 + 50, "{register:?}");
    assert_eq!(register.done_ns - t, register.estimate_ns);
}

#[test]
fn older_mb_spellings_of_mib_sizes_are_refused_naming_the_new_key() {
    for (old, new, line) in [
        ("capacity_mb = 64", "capacity_mib", 3),
        ("dram_mb = 1.5", "dram_mib", 3),
        ("input_mb = 2", "input_mib", 6),
        ("os_resident_mb = 3", "os_resident_mib", 6),
        ("window_kb = 64", "window_kib", 6),
        ("buffer_kb = 64", "buffer_kib", 6),
    ] {
        let (dev, pigz) = if line == 3 { (old, "") } else { ("", old) };
        let text =
            format!("module = \"hybrid\"\n[device]\n{dev}\n[workload]\n[workload.pigz]\n{pigz}\n");
        let e = crate::run_scenario(&text, "old.toml", &[], &[]).unwrap_err();
        let key = old.split(' ').next().unwrap();
        assert!(e.key.ends_with(key), "{e}");
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.message.contains(&format!("write '{new}'")), "{e}");
    }
}

#[test]
fn a_device_beyond_host_memory_is_refused_before_allocating() {
    let text = "module = \"hybrid\"\n[device]\ncapacity_mib = 16777216\n";
    let cfg = crate::scenario::parse_config::<super::scenario::Hybrid>(text);
    let need = super::scenario::host_memory_estimate(&cfg);
    assert!(need >= 48 << 30, "{need}");
    // 51 GB: refused wherever less is available (the check runs before anything is built).
    if crate::config::available_memory_bytes().is_some_and(|a| a < need)
        && !crate::config::large_allowed()
    {
        let e = crate::run_scenario(text, "b.toml", &[], &[]).unwrap_err();
        assert_eq!(e.key, "device.capacity_mib", "{e}");
        assert!(e.message.contains("HMSIM_ALLOW_LARGE"), "{e}");
    }
    for ex in ["hybrid-pigz-epf.toml", "hybrid-replay-pigz-trace.toml"] {
        let path = format!("{}/../../examples/{ex}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        let cfg = crate::scenario::parse_config::<super::scenario::Hybrid>(&text);
        assert!(
            super::scenario::host_memory_estimate(&cfg) < 64 << 20,
            "{ex}"
        );
    }
}

/// One process on an empty flash: page 0 is resident (its only copy in flash, so touching
/// it is an internal fault), every other first use is a fresh page (no flash work). The
/// flash read takes `read_ns`.
fn resident_fault_run(
    threads: Vec<ThreadSpec>,
    pages: u32,
    read_ns: u64,
    cfg: HostConfig,
    policy: &str,
) -> super::HostStats {
    let g = small_geometry(256);
    let nand = crate::flash::NandTiming {
        read_ns,
        ..preset("study").unwrap()
    };
    let ftl = Ftl::new(g, nand, build_gc("greedy", 1).unwrap());
    let mut umd = Umd::new(ftl, 64, 50, 50);
    let w = HybridWorkload {
        name: "t".into(),
        threads,
        process_pages: vec![pages],
        resident_pages: 1,
        input_mib: 0.0,
        output_ratio: 0.0,
    };
    let p = EpfPolicySpec::named(policy).build().unwrap();
    Host::new(cfg, &mut umd, p.as_ref(), &w, 1).run(&w)
}

/// Two threads of `resident_fault_run`: thread 0 touches page 0 (by `touch`); thread 1
/// computes `gap` instructions and then touches page 1.
fn long_fault_run(
    read_ns: u64,
    gap: u32,
    touch: Touch,
    atomic_kernel_copies: bool,
    policy: &str,
) -> (super::HostStats, HostConfig) {
    let threads = vec![
        ThreadSpec {
            process: 0,
            events: Arc::new(vec![Ev {
                page: 0,
                gap: 0,
                write: true,
                touch,
            }]),
            deps: Vec::new(),
        },
        ThreadSpec {
            process: 0,
            events: Arc::new(vec![ev(1, gap)]),
            deps: Vec::new(),
        },
    ];
    let cfg = HostConfig {
        code_pages: 1,
        atomic_kernel_copies,
        ..HostConfig::default()
    };
    (resident_fault_run(threads, 2, read_ns, cfg, policy), cfg)
}

/// A long internal fault with another thread ready, written out by hand: the EPF hides the
/// fault behind the other thread's work, up to that work's length.
#[test]
fn hybrid_epf_overlaps_a_long_fault_with_a_ready_thread_by_hand() {
    // A fault as long as one that waits for an erase: the flash read takes 2 ms here.
    let long = 2_000_000 + 50;
    let (walk, exc, os, dram, cs) = (200, 1_344, 2_000, 50, 3_800);
    let (slack, wake, idle_cs) = (50_000, 3_000, 3_800);
    // Thread 0: the code page's first use (walk, page fault, fresh page: no flash work),
    // then the walk of resident page 0, which is only in flash: the fault starts here.
    let t_fault = walk + exc + os + walk;
    // Thread 1's own work after its compute: the code page hits the I-TLB thread 0
    // filled; page 1 is a first use (walk, page fault) of a fresh page, then the access.
    let own = walk + exc + os + dram;

    // Thread 1 computes 5 M instructions (2.5 ms at 2 GHz): longer than the sleep.
    let compute = 2_500_000;
    let (no, c) = long_fault_run(2_000_000, 5_000_000, Touch::Cpu, true, "no_EPF");
    let (all, _) = long_fault_run(2_000_000, 5_000_000, Touch::Cpu, true, "all_EPF");
    assert_eq!(
        (
            c.page_walk_ns,
            c.exception_ns,
            c.os_fault_ns,
            c.timer_slack_ns
        ),
        (walk, exc, os, slack)
    );
    assert_eq!(no.service, vec![(long, long)]);
    // no_EPF: thread 0 stalls through the fault, then thread 1 runs.
    assert_eq!(no.runtime_ns, t_fault + long + dram + cs + compute + own);
    // all_EPF: the EPF (exception), a switch to thread 1, which computes past the timer
    // (estimate + slack); when it is done the timer interrupt (already due) makes thread 0
    // ready, a switch back, the re-walk and the access.
    assert!(t_fault + exc + cs + compute > t_fault + exc + long + slack);
    assert_eq!(
        all.runtime_ns,
        t_fault + exc + cs + compute + own + exc + cs + walk + dram
    );
    assert_eq!((all.epf_raised, all.epf_with_ready, all.idle_ns), (1, 1, 0));
    // The whole fault is hidden but for the EPF, the interrupt, one switch and the re-walk.
    assert_eq!(no.runtime_ns - all.runtime_ns, long - (2 * exc + cs + walk));
    assert_time_accounted(&all, &c, compute);

    // Thread 1 computes 0.5 ms only: the EPF hides that much, and thread 0 then waits on
    // an idle core for the rest of the fault and the slack, and pays the wake-up path.
    let compute = 500_000;
    let (no, _) = long_fault_run(2_000_000, 1_000_000, Touch::Cpu, true, "no_EPF");
    let (all, _) = long_fault_run(2_000_000, 1_000_000, Touch::Cpu, true, "all_EPF");
    assert_eq!(no.runtime_ns, t_fault + long + dram + cs + compute + own);
    let woken = t_fault + exc + long + slack;
    assert_eq!(
        all.runtime_ns,
        woken + wake + exc + idle_cs + walk + dram,
        "the switch to idle happens inside the sleep"
    );
    assert_eq!(
        no.runtime_ns as i64 - all.runtime_ns as i64,
        (compute + cs + own) as i64 - (2 * exc + slack + wake + idle_cs + walk) as i64
    );
    assert_time_accounted(&all, &c, compute);
}

/// The kernel's copy into a page-cache page runs with page faults disabled: an internal
/// fault there cannot block, so every policy stalls through it.
#[test]
fn hybrid_faults_in_atomic_kernel_copies_never_block() {
    let (no, _) = long_fault_run(2_000_000, 5_000_000, Touch::Syscall, true, "no_EPF");
    let (all, c) = long_fault_run(2_000_000, 5_000_000, Touch::Syscall, true, "all_EPF");
    assert_eq!(
        (all.atomic_faults, all.epf_raised, no.atomic_faults),
        (1, 0, 1)
    );
    assert_eq!(all.runtime_ns, no.runtime_ns);
    assert_eq!(all.stall_ns, 2_000_050);
    assert_time_accounted(&all, &c, 2_500_000);
    // With the option off the same fault is signalled and hidden behind thread 1, as the
    // thread's own access is.
    let (off, _) = long_fault_run(2_000_000, 5_000_000, Touch::Syscall, false, "all_EPF");
    let (cpu, _) = long_fault_run(2_000_000, 5_000_000, Touch::Cpu, true, "all_EPF");
    assert_eq!((off.atomic_faults, off.epf_raised), (0, 1));
    assert_eq!(off.runtime_ns, cpu.runtime_ns);
    assert!(off.runtime_ns < all.runtime_ns - 1_900_000);
}

/// CFS's wake-up preemption: a thread woken by a hand-off preempts the thread that woke it
/// when that one has run more than the 1 ms wake-up granularity longer, so its long fault
/// starts at once and is hidden behind the other's work; round-robin runs it only when
/// the other's slice ends or it stops.
#[test]
fn hybrid_wakeup_preemption_starts_a_woken_threads_fault_early() {
    // Thread 1 computes 6 × 0.5 ms (3 ms, inside one 4 ms slice); thread 0 waits until
    // thread 1 has done 3 of them (1.5 ms, more than the granularity) and then touches
    // resident page 0: a 2 ms internal fault.
    let threads = || {
        vec![
            ThreadSpec {
                process: 0,
                events: Arc::new(vec![ev(0, 0)]),
                deps: vec![super::workload::Dep {
                    at: 0,
                    thread: 1,
                    reached: 3,
                }],
            },
            ThreadSpec {
                process: 0,
                events: Arc::new((0..6).map(|_| ev(1, 1_000_000)).collect()),
                deps: Vec::new(),
            },
        ]
    };
    let run = |cfs: bool, policy: &str| {
        let cfg = HostConfig {
            code_pages: 1,
            wakeup_preemption: cfs,
            ..HostConfig::default()
        };
        (
            resident_fault_run(threads(), 2, 2_000_000, cfg, policy),
            cfg,
        )
    };
    let (rr, c) = run(false, "all_EPF");
    let (cfs, _) = run(true, "all_EPF");
    let compute = 3_000_000;
    assert_time_accounted(&rr, &c, compute);
    assert_time_accounted(&cfs, &c, compute);
    // Round-robin: thread 0's fault comes after thread 1 is done, with nobody ready.
    assert_eq!((rr.epf_raised, rr.epf_with_ready), (1, 0));
    // CFS: thread 0 preempts thread 1 at 1.5 ms, faults with thread 1 ready, and the fault
    // (2 ms + slack) overlaps thread 1's remaining 1.5 ms.
    assert_eq!((cfs.epf_raised, cfs.epf_with_ready), (1, 1));
    assert!(cfs.runtime_ns + 1_400_000 < rr.runtime_ns, "{cfs:?} {rr:?}");
    // Off, the option changes nothing: the default is round-robin.
    let (rr_no, _) = run(false, "no_EPF");
    assert_eq!(rr_no.runtime_ns, {
        let cfg = HostConfig {
            code_pages: 1,
            ..HostConfig::default()
        };
        resident_fault_run(threads(), 2, 2_000_000, cfg, "no_EPF").runtime_ns
    });
}

#[test]
fn hybrid_a_runtime_resting_on_a_few_critical_path_gcs_is_flagged() {
    use super::scenario::gc_share_warning;
    let sc = tiny_scenario("no_EPF", "");
    let p = EpfPolicySpec::named("no_EPF");
    let w = sc.load_workload("t.toml", SEED).unwrap();
    let s = simulate(&sc, &w, &p, SEED).unwrap().stats;
    assert!(
        s.gc_runs_in_faults > 0,
        "the tiny run must run GC inside faults"
    );
    // Each GC run erases a block at the least, on the faulting thread's critical path.
    let erase_ns = crate::flash::preset("study").unwrap().erase_ns;
    assert!(
        s.gc_fault_ns >= s.gc_runs_in_faults * erase_ns,
        "{} ns for {} GC runs",
        s.gc_fault_ns,
        s.gc_runs_in_faults
    );
    let each = s.gc_fault_ns as f64 / s.gc_runs_in_faults as f64;
    // The same GCs in a runtime 10× their length: quiet; in 1/0.06 of it: named, with its share.
    let mut long = s.clone();
    long.runtime_ns = (each * 10.0 / 0.05) as u64;
    assert_eq!(gc_share_warning(&p, &long), None);
    let mut short = s.clone();
    short.runtime_ns = (each / 0.06) as u64;
    let w = gc_share_warning(&p, &short).expect("6 % of the runtime per GC");
    assert!(w.contains("6 % of the"), "{w}");
    assert!(
        w.contains(&format!("each of its {} GC run(s)", s.gc_runs_in_faults)),
        "{w}"
    );
    // No GC on the critical path: nothing to say.
    let mut none = s;
    none.gc_runs_in_faults = 0;
    assert_eq!(gc_share_warning(&p, &none), None);
}

#[test]
fn trace_passes_replay_the_trace_again_on_the_same_pages() {
    let dir = format!("{}/tests/data/traces", env!("CARGO_MANIFEST_DIR"));
    let file = format!("{dir}/s.toml");
    let text = |passes: u32| {
        format!(
            "module = \"hybrid\"\n[workload]\nthreads = 2\ntrace = \"pigz-d.pages.hmt\"\n\
             input_mib = 0.5\ntrace_passes = {passes}\n"
        )
    };
    let load = |passes: u32| {
        crate::scenario::parse_config::<super::scenario::Hybrid>(&text(passes))
            .load_workload(&file, 1)
    };
    let (one, three) = (load(1).unwrap(), load(3).unwrap());
    assert_eq!(three.events(), 3 * one.events());
    assert_eq!(three.process_pages, one.process_pages, "the same pages");
    let (a, b) = (&one.threads[0].events, &three.threads[0].events);
    assert_eq!(&b[..a.len()], &a[..]);
    assert_eq!(&b[2 * a.len()..], &a[..], "each pass as the first");
    assert_eq!(three.name, "pigz-d.pages.hmt, 3 passes");
    assert_eq!(three.input_mib, 1.5, "input_mib is one pass's");
    // Beyond what a replay holds: refused before the events are repeated.
    let e = load(1000).unwrap_err();
    assert_eq!(e.key, "workload.trace_passes", "{e}");
    assert!(e.message.contains("fewer passes"), "{e}");
    // Only for a trace.
    let e = crate::run_scenario(
        "module = \"hybrid\"\n[workload]\ntrace_passes = 2\n",
        "p.toml",
        &[],
        &[],
    )
    .unwrap_err();
    assert_eq!(e.key, "workload.trace_passes", "{e}");
}
