use std::sync::Arc;

use super::cache::DramCache;
use super::host::{Host, HostConfig};
use super::policy::{EpfPolicy, PolicySpec};
use super::scenario::simulate;
use super::umd::{Umd, Walk};
use super::workload::{Ev, ThreadSpec, Workload};
use super::HybridScenario;
use crate::flash::{build_gc, preset, Ftl, Geometry};

fn small_ftl(logical: u32) -> Ftl {
    let g = Geometry {
        logical_pages: logical,
        pages_per_block: 16,
        over_provisioning: 0.1,
        channels: 2,
        dies_per_channel: 2,
        page_bytes: 4096,
        channel_gbps: None,
        gc_free_blocks: 2,
    };
    Ftl::new(g, preset("study").unwrap(), build_gc("greedy", 1).unwrap())
}

#[test]
fn hybrid_lru_evicts_least_recently_used_and_tracks_dirty() {
    let mut c = DramCache::new(3);
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
    let mut umd = Umd::new(ftl, 4, 50, 50);
    // Fill DRAM with dirty fresh pages (logical 400.. were never written by the 60 %).
    for (i, lpn) in (400..404).enumerate() {
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

fn tiny_scenario(policy: &str, extra: &str) -> HybridScenario {
    let text = format!(
        "module = \"hybrid\"\nseed = 7\n[device]\ncapacity_mb = 16\ndram_mb = 0.5\n\
         [host]\nnonpreemptible_fraction = 0.1\n[workload]\nthreads = 3\n\
         [workload.pigz]\ninput_mb = 0.5\n{extra}[[policies]]\nname = \"{policy}\"\n"
    );
    crate::config::parse_toml(&text, "t.toml").unwrap()
}

fn fingerprint(sc: &HybridScenario, p: &PolicySpec) -> (u64, u64, u64, u64, u64, Vec<(u64, u64)>) {
    let w = sc.load_workload("t.toml").unwrap();
    let r = simulate(sc, &w, p);
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
fn hybrid_smart_threshold_zero_is_all_and_infinite_is_no() {
    let sc = tiny_scenario("smart_EPF", "");
    let smart = |t: f64| PolicySpec {
        name: "smart_EPF".into(),
        threshold_us: Some(t),
    };
    let all = fingerprint(&sc, &PolicySpec::named("all_EPF"));
    let no = fingerprint(&sc, &PolicySpec::named("no_EPF"));
    assert!(all.1 > 0, "the tiny run must have internal faults");
    assert!(all.2 > 0 && no.2 == 0);
    assert_eq!(fingerprint(&sc, &smart(0.0)), all);
    assert_eq!(fingerprint(&sc, &smart(f64::INFINITY)), no);
    assert_ne!(all.0, no.0);
}

#[test]
fn hybrid_nonpreemptible_sections_never_block() {
    // Every access non-preemptible: all_EPF cannot raise and behaves as no_EPF.
    let mut sc = tiny_scenario("all_EPF", "");
    sc.host.nonpreemptible_fraction = 1.0;
    let all = fingerprint(&sc, &PolicySpec::named("all_EPF"));
    assert_eq!(all.2, 0);
    assert_eq!(all, fingerprint(&sc, &PolicySpec::named("no_EPF")));
    // Some non-preemptible accesses: fewer EPFs than internal faults.
    sc.host.nonpreemptible_fraction = 0.5;
    let half = fingerprint(&sc, &PolicySpec::named("all_EPF"));
    assert!(half.2 > 0 && half.2 < half.1, "{} of {}", half.2, half.1);
}

#[test]
fn hybrid_runs_are_deterministic_and_seed_dependent() {
    let sc = tiny_scenario("smart_EPF", "");
    let p = PolicySpec::named("smart_EPF");
    assert_eq!(fingerprint(&sc, &p), fingerprint(&sc, &p));
    let mut other = sc.clone();
    other.seed = 8;
    assert_ne!(fingerprint(&sc, &p).5, fingerprint(&other, &p).5);
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
    };
    let w = Workload {
        name: "t".into(),
        threads: vec![ThreadSpec {
            process: 0,
            events: Arc::new(vec![ev(0, true), ev(1, false), ev(0, false)]),
        }],
        process_pages: vec![2],
        input_mb: 0.0,
    };
    let cfg = HostConfig {
        code_pages: 1,
        ..HostConfig::default()
    };
    let p = PolicySpec::named("no_EPF").build();
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
    let p: Box<dyn EpfPolicy> = PolicySpec::named("smart_EPF").build();
    assert_eq!(p.name(), "smart_EPF");
    assert!(p.raise(50_001) && !p.raise(50_000));
    let bad = "module = \"hybrid\"\n[device]\ncapacity_mb = 16\ndram_mb = 32\n";
    let e = crate::run_scenario(bad, "b.toml", &[], &[]).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("device.dram_mb", Some(4)));
    let bad = "module = \"hybrid\"\n[[policies]]\nname = \"some_EPF\"\n";
    let e = crate::run_scenario(bad, "b.toml", &[], &[]).unwrap_err();
    assert!(e.message.contains("no_EPF, all_EPF, smart_EPF"), "{e}");
    let bad = "module = \"hybrid\"\n[device]\ncapacity_mb = 1\ndram_mb = 0.5\n[workload.pigz]\ninput_mb = 8\n";
    let e = crate::run_scenario(bad, "b.toml", &[], &[]).unwrap_err();
    assert!(e.message.contains("raise capacity_mb"), "{e}");
    let bad = "module = \"hybrid\"\n[flash]\ngc = \"lru\"\n";
    let e = crate::run_scenario(bad, "b.toml", &[], &[]).unwrap_err();
    assert_eq!(e.key, "flash.gc");
}
