//! Trace-driven tiering (docs/tiering.md, *Trace-driven mode*): conservation of replayed accesses,
//! a trace whose hot pages fit converges to hot-in-default, determinism, bad trace paths, and the
//! app analogs through the scenario.

use std::io::Write;

use hmsim::tier::apps::AppStream;
use hmsim::tier::params::reference_tiers;
use hmsim::tier::replay::{simulate_stream, StreamDemand};
use hmsim::tier::stream::{AccessStream, TraceStream};
use hmsim::tier::{make_policy_with, Antagonists, PolicyParams, SimParams};
use hmsim::trace::{Kind, NativeHeader, NativeWriter, TraceRecord};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/traces");

fn params(default_pages: u64, duration_s: f64, seed: u64) -> SimParams {
    let mut tiers = reference_tiers();
    tiers[0].capacity_bytes = default_pages * 4096;
    tiers[1].capacity_bytes = 1 << 30;
    SimParams {
        tiers,
        page_bytes: 4096,
        quantum_s: 0.01,
        duration_s,
        sample_period: 5003,
        migrate_limit_gb_s: None,
        ewma_alpha: 0.5,
        seed,
    }
}

fn demand(weight: f64) -> StreamDemand {
    StreamDemand {
        cores: 1,
        mlp: 4.0,
        object_size_bytes: 64,
        read_fraction: 0.7,
        weight,
    }
}

/// A native trace of 256 pages: the first 200 pages are touched once (cold, first-touch
/// fills the default tier with them), then 99.9 % of accesses go to 16 hot pages at the end
/// (cold pages must stay unreferenced between TPP's accessed-bit sweeps to be demoted).
fn skewed_trace(path: &std::path::Path) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = NativeWriter::new(std::io::BufWriter::new(f), &NativeHeader::default()).unwrap();
    for p in 0..256u64 {
        w.write(&TraceRecord::new(Kind::Load, p << 12, 8)).unwrap();
    }
    let mut x = 12345u64;
    for i in 0..200_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let page = if (x >> 33) % 1000 < 999 {
            240 + (x >> 40) % 16
        } else {
            (x >> 40) % 256
        };
        let kind = if i % 4 == 0 { Kind::Store } else { Kind::Load };
        w.write(&TraceRecord::new(kind, page << 12, 8)).unwrap();
    }
    w.finish().unwrap().flush().unwrap();
}

#[test]
fn every_replayed_access_is_counted_once() {
    let path = format!("{DATA}/pigz-d.pages.hmt");
    let mut s = TraceStream::open(path.as_ref(), 4096, "t.toml", "workload.trace").unwrap();
    assert_eq!(s.pages(), 129, "the README's distinct-page count");
    let p = params(32, 0.3, 1);
    let mut pol = make_policy_with("hemem", &PolicyParams::default()).unwrap();
    let (r, c) = simulate_stream(
        &p,
        &demand(50.0),
        &mut s,
        &Antagonists::reference(0),
        pol.as_mut(),
    )
    .unwrap()
    .unwrap();
    assert!(
        c.accesses > s.accesses_per_pass,
        "the trace looped: {}",
        c.accesses
    );
    assert_eq!(c.per_tier.iter().sum::<u64>(), c.accesses);
    // One count per quantum, summing to the whole: the window's passes are read from them.
    assert_eq!(c.per_quantum.len(), r.timeline.len());
    assert_eq!(c.per_quantum.iter().sum::<u64>(), c.accesses);
    // Pages are conserved by migration.
    assert_eq!(r.pages.count_by_tier().iter().sum::<u64>(), 129);
    assert!(r.pages.used_pages(0) <= 32);
}

#[test]
fn a_trace_whose_hot_pages_fit_converges_to_hot_in_default() {
    let dir = std::env::temp_dir().join(format!("hmsim-tier-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("skewed.hmt");
    skewed_trace(&path);
    for policy in ["hemem", "memtis", "tpp"] {
        let mut s = TraceStream::open(&path, 4096, "t.toml", "workload.trace").unwrap();
        assert!(
            s.hot_pages() >= 8 && s.hot_pages() <= 16,
            "{}",
            s.hot_pages()
        );
        let p = params(64, 10.0, 2);
        let mut pol = make_policy_with(policy, &PolicyParams::default()).unwrap();
        let (r, _) = simulate_stream(
            &p,
            &demand(1000.0),
            &mut s,
            &Antagonists::reference(0),
            pol.as_mut(),
        )
        .unwrap()
        .unwrap();
        // First-touch put pages 0..63 in the default tier, the hot pages (240..) out.
        assert!(r.migrations >= 1, "{policy}: {} migrations", r.migrations);
        let last = r.timeline.last().unwrap().hot_share_default;
        assert!(
            last > 0.95,
            "{policy}: hot pages end in the default tier: {last}"
        );
        let alt = r.timeline.last().unwrap().alt_traffic_share;
        assert!(
            alt < 0.2,
            "{policy}: most traffic on the default tier: {alt}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn replay_is_deterministic() {
    let run = || {
        let mut s = AppStream::new("silo", 1e-3, 4096, hmsim::rng::stream(5, "a"), "t").unwrap();
        let mut tiers = reference_tiers();
        tiers[0].capacity_bytes = 20_000_000;
        let p = SimParams {
            tiers,
            ..params(0, 0.5, 5)
        };
        let mut pol = make_policy_with("colloid-hemem", &PolicyParams::default()).unwrap();
        let (r, c) = simulate_stream(
            &p,
            &demand(20.0),
            &mut s,
            &Antagonists::reference(15),
            pol.as_mut(),
        )
        .unwrap()
        .unwrap();
        (r.timeline, r.migrations, c)
    };
    assert_eq!(run(), run());
}

fn scenario(extra: &str) -> String {
    format!(
        "module = \"tiering\"\nseed = 1\n[workload]\n{extra}\n[policy]\nnames = [\"hemem\"]\n\
         [antagonist]\nintensities = [0]\n[sim]\npage_bytes = 4096\nduration_s = 0.2\n\
         measure_last_s = 0.1\n"
    )
}

#[test]
fn a_missing_trace_names_the_key_and_the_file() {
    let e = hmsim::registry::run_scenario(
        &scenario("trace = \"no/such/trace.hmt\""),
        "/tmp/s.toml",
        &[],
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("workload.trace") && e.contains("no/such/trace.hmt"),
        "{e}"
    );
    let e = hmsim::registry::run_scenario(&scenario("app = \"redis\""), "/tmp/s.toml", &[], &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("workload.app") && e.contains("cachelib"), "{e}");
}

#[test]
fn the_replay_example_runs_every_system() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/tiering-replay-sqlite3.toml"
    );
    let text = std::fs::read_to_string(file).unwrap();
    let text = text
        .replace("duration_s = 10.0", "duration_s = 0.3")
        .replace("measure_last_s = 5.0", "measure_last_s = 0.1");
    assert!(text.contains("duration_s = 0.3") && text.contains("measure_last_s = 0.1"));
    let out = hmsim::registry::run_scenario(&text, file, &[], &[]).unwrap();
    assert_eq!(out.rows.len(), 7 * 2);
    for row in &out.rows {
        assert!(row["replayed_accesses"].as_u64().unwrap() > 0);
        assert!(row["throughput_gb_s"].as_f64().unwrap() > 0.0);
    }
}

/// The row's passes over a looping trace in the measured window, and the run's warnings,
/// for `policy` on pigz's page trace (26 k accesses a pass) with the window `window_s`.
fn window_passes(policy: &str, duration_s: f64, window_s: f64) -> (f64, f64, Vec<String>) {
    let text = format!(
        "module = \"tiering\"\nseed = 1\n[[tiers]]\nname = \"default\"\n\
         capacity_bytes = 131072\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 160.0\n\
         [[tiers]]\nname = \"alternate\"\ncapacity_bytes = 16777216\n\
         unloaded_latency_ns = 135.0\nread_bandwidth_gb_s = 75.0\n[workload]\n\
         trace = \"{DATA}/pigz-d.pages.hmt\"\ncores = 1\naccess_weight = 50\n\
         cache = \"none\"\n[policy]\nnames = [\"{policy}\"]\n[antagonist]\n\
         intensities = [0]\n[sim]\npage_bytes = 4096\nduration_s = {duration_s}\n\
         measure_last_s = {window_s}\n"
    );
    let out = hmsim::registry::run_scenario(&text, "/tmp/s.toml", &[], &[]).unwrap();
    let row = &out.rows[0];
    let passes = row["window_trace_passes"].as_f64().unwrap();
    // The same passes from the window's mean access rate (application accesses, each
    // replayed one standing for 50).
    let path = format!("{DATA}/pigz-d.pages.hmt");
    let per_pass = TraceStream::open(path.as_ref(), 4096, "t.toml", "workload.trace")
        .unwrap()
        .accesses_per_pass as f64;
    let from_rate = row["throughput_mops"].as_f64().unwrap() * 1e6 * window_s / 50.0 / per_pass;
    (passes, from_rate, out.warnings)
}

/// A window that replays under two passes of a looping trace says so, with the window
/// length that would hold two; one that holds more does not; and the passes agree with
/// the accesses replayed (docs/tiering.md, *Is the window steady?*).
#[test]
fn a_window_short_of_two_passes_of_the_trace_says_so() {
    let note = "the measured window replayed";
    let passes_note = |w: &[String]| w.iter().any(|w| w.contains(note));
    let (short, from_rate, warnings) = window_passes("static-default", 1.0, 0.02);
    assert!(
        (short / from_rate - 1.0).abs() < 0.01,
        "{short} against {from_rate}"
    );
    assert!(short > 0.0 && short < 2.0, "{short}");
    assert!(passes_note(&warnings), "{warnings:?}");
    let w = warnings.iter().find(|w| w.contains(note)).unwrap();
    assert!(w.contains("sim.measure_last_s ≥ "), "{w}");
    let (long, from_rate, warnings) = window_passes("static-default", 1.0, 0.8);
    assert!(
        (long / from_rate - 1.0).abs() < 0.01,
        "{long} against {from_rate}"
    );
    assert!(long >= 2.0 && !passes_note(&warnings), "{warnings:?}");
}
