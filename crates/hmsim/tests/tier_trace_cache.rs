//! Trace-driven tiering behind CPU caches (docs/tiering.md, *Traces behind caches*): a trace
//! that fits in L1 moves no memory traffic after its first pass and runs at the L1 hit
//! time, hit rates are reported per level, a footprint inside the LLC is warned about (and
//! one beyond it is not), page-level traces are refused unless `cache = "none"`, and the
//! cache keys are checked.

use std::io::Write;
use std::path::{Path, PathBuf};

use hmsim::trace::{Kind, NativeHeader, NativeWriter, TraceRecord};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/traces");

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hmsim-tier-cache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A native trace of `records` (address, store?).
fn write_trace(path: &Path, records: impl Iterator<Item = (u64, bool)>) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = NativeWriter::new(std::io::BufWriter::new(f), &NativeHeader::default()).unwrap();
    for (addr, store) in records {
        let kind = if store { Kind::Store } else { Kind::Load };
        w.write(&TraceRecord::new(kind, addr, 8)).unwrap();
    }
    w.finish().unwrap().flush().unwrap();
}

/// `passes` passes over `lines` consecutive 64 B lines, every fourth access a store.
fn looped(lines: u64, passes: u64) -> impl Iterator<Item = (u64, bool)> {
    (0..passes * lines).map(move |i| (0x10_0000 + (i % lines) * 64, i % 4 == 0))
}

/// `lines` pseudo-random lines of a `span_lines`-line region, every fourth a store.
fn random(lines: u64, span_lines: u64) -> impl Iterator<Item = (u64, bool)> {
    let mut x = 42u64;
    (0..lines).map(move |i| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0x10_0000 + ((x >> 33) % span_lines) * 64, i % 4 == 0)
    })
}

/// A one-policy scenario on `trace`: 1 core, 4 accesses in flight, each replayed access
/// standing for 1000 (so a quantum replays tens of thousands at the L1 rate).
fn scenario(trace: &Path, extra: &str) -> String {
    format!(
        "module = \"tiering\"\nseed = 1\n\
         [[tiers]]\nname = \"default\"\ncapacity_bytes = 1048576\nunloaded_latency_ns = 70.0\n\
         read_bandwidth_gb_s = 160.0\n\
         [[tiers]]\nname = \"alternate\"\ncapacity_bytes = 268435456\nunloaded_latency_ns = 135.0\n\
         read_bandwidth_gb_s = 75.0\n\
         [workload]\ntrace = \"{}\"\ncores = 1\nmlp = 4.0\naccess_weight = 1000\n{extra}\n\
         [policy]\nnames = [\"hemem\"]\n[antagonist]\nintensities = [0]\n\
         [sim]\npage_bytes = 4096\nduration_s = 0.3\nmeasure_last_s = 0.1\n",
        trace.display()
    )
}

fn run(text: &str) -> Result<hmsim::scenario::RunOutput, String> {
    hmsim::registry::run_scenario(text, "/tmp/s.toml", &[], &[]).map_err(|e| e.to_string())
}

fn f(row: &serde_json::Map<String, serde_json::Value>, key: &str) -> f64 {
    row[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing: {row:?}"))
}

fn llc_warnings(out: &hmsim::scenario::RunOutput) -> Vec<&String> {
    out.warnings
        .iter()
        .filter(|w| w.contains("fit in the"))
        .collect()
}

#[test]
fn a_trace_inside_l1_moves_no_memory_traffic_and_runs_at_the_l1_hit_time() {
    let path = tmp("l1.hmt");
    // 256 lines (16 KiB, inside the 48 KiB L1) looped 400 times.
    write_trace(&path, looped(256, 400));
    let out = run(&scenario(&path, "")).unwrap();
    let row = &out.rows[0];
    assert!(
        f(row, "throughput_gb_s") < 1e-9,
        "after the first pass nothing reaches memory: {row:?}"
    );
    // 4 accesses in flight, each an L1 hit of 1.7 ns: 4 / 1.7 accesses per ns.
    let mops = f(row, "throughput_mops");
    assert!(
        (mops / (4.0 / 1.7 * 1e3) - 1.0).abs() < 1e-9,
        "{mops} Mops/s"
    );
    assert!(f(row, "l1_hit_rate") > 0.999, "{row:?}");
    assert!(f(row, "memory_lines_per_access") < 1e-3);
    assert_eq!(row["trace_footprint_bytes"].as_u64(), Some(256 * 64));
    let w = llc_warnings(&out);
    assert_eq!(w.len(), 1, "{:?}", out.warnings);
    assert!(
        w[0].contains("256 distinct 64 B lines (16384 bytes)")
            && w[0].contains("50331648-byte LLC"),
        "{}",
        w[0]
    );

    // The same trace counted record by record: every access is memory traffic.
    let none = run(&scenario(&path, "cache = \"none\"")).unwrap();
    let row = &none.rows[0];
    assert!(f(row, "throughput_gb_s") > 1.0, "{row:?}");
    assert!(row.get("l1_hit_rate").is_none());
    assert!(llc_warnings(&none).is_empty());
    assert!(
        none.warnings.iter().any(|w| w.contains("cache = \"none\"")),
        "{:?}",
        none.warnings
    );
}

#[test]
fn a_footprint_beyond_the_llc_reaches_memory_and_is_not_warned_about() {
    let path = tmp("big.hmt");
    // 200 000 accesses to random lines of 4 MiB, through 4 + 8 + 64 KiB of caches.
    write_trace(&path, random(200_000, 65_536));
    let small = "[workload.cache_model]\n\
                 l1 = { size_bytes = 4096, ways = 4 }\n\
                 l2 = { size_bytes = 8192, ways = 4 }\n\
                 llc = { size_bytes = 65536, ways = 8 }\n";
    let out = run(&scenario(&path, small)).unwrap();
    let row = &out.rows[0];
    assert!(llc_warnings(&out).is_empty(), "{:?}", out.warnings);
    let mem = f(row, "memory_lines_per_access");
    // About 98 % of the lines miss 76 KiB of 4 MiB; a quarter of them were stored to.
    assert!(mem > 0.9 && mem < 1.4, "{mem}");
    for k in ["l1_hit_rate", "l2_hit_rate", "llc_hit_rate"] {
        assert!(f(row, k) < 0.1, "{k}: {row:?}");
    }
    assert!(f(row, "throughput_gb_s") > 0.5, "{row:?}");

    // The default (48 MiB LLC) holds all of it: the warning names the sizes and how much
    // of the trace the run replayed (here less than one pass: all of it cold misses).
    let out = run(&scenario(&path, "")).unwrap();
    let w = llc_warnings(&out);
    assert_eq!(w.len(), 1, "{:?}", out.warnings);
    let lines = out.rows[0]["trace_footprint_bytes"].as_u64().unwrap() / 64;
    assert!(lines > 60_000 && lines <= 65_536, "{lines}");
    assert!(
        w[0].contains(&format!("{lines} distinct 64 B lines")) && w[0].contains("replayed 0.0"),
        "{}",
        w[0]
    );
}

#[test]
fn a_page_level_trace_is_refused_unless_cache_is_none() {
    let path = PathBuf::from(format!("{DATA}/sqlite3.pages.hmt"));
    let e = run(&scenario(&path, "")).unwrap_err();
    assert!(
        e.contains("workload.trace") && e.contains("page-level") && e.contains("cache = \"none\""),
        "{e}"
    );
    let out = run(&scenario(&path, "cache = \"none\"")).unwrap();
    assert!(f(&out.rows[0], "throughput_gb_s") > 0.0);
}

#[test]
fn the_cache_keys_are_checked() {
    let path = tmp("keys.hmt");
    write_trace(&path, looped(16, 10));
    let e = run(&scenario(&path, "cache = \"l3\"")).unwrap_err();
    assert!(
        e.contains("workload.cache") && e.contains("filter, none"),
        "{e}"
    );
    let e = run(&scenario(
        &path,
        "cache = \"none\"\n[workload.cache_model]\nl1_hit_ns = 2.0",
    ))
    .unwrap_err();
    assert!(e.contains("workload.cache_model"), "{e}");
    let e = run(&scenario(
        &path,
        "[workload.cache_model]\nl1_hit_ns = 30.0\nllc_hit_ns = 20.0",
    ))
    .unwrap_err();
    assert!(e.contains("hit latencies"), "{e}");
    // A generated app stream is memory-level traffic: no cache to configure.
    let text = "module = \"tiering\"\n[workload]\napp = \"cachelib\"\ncache = \"filter\"\n";
    let e = run(text).unwrap_err();
    assert!(
        e.contains("workload.cache") && e.contains("trace only"),
        "{e}"
    );
}
