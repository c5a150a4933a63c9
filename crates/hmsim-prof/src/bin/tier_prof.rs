//! Profiling driver (callgrind, perf):
//! `cargo run --release -p hmsim-prof --bin tier_prof -- POLICY PAGE_BYTES SECONDS [scaled | SCENARIO.toml]`.
//! Runs one statistical-mode tiering point at 1x contention — the bench's GUPS setup; with
//! `scaled` the quick tiering study's 1/8-size setup (GUPS on 2 cores over 9 GiB, 3 GiB hot,
//! tiers of 4 and 12 GB); or a scenario file with its policy, duration, page size and
//! contention replaced — and prints a hash of its rows and tables, so a speed change can be
//! checked to leave every number as it was.
use std::hash::{Hash, Hasher};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let policy = a.get(1).map(String::as_str).unwrap_or("hemem");
    let page_bytes: u64 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(2 << 20);
    let seconds: f64 = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let scaled = a.get(4).is_some_and(|s| s == "scaled");
    let (text, file) = match a.get(4).filter(|_| !scaled) {
        Some(path) => (
            std::fs::read_to_string(path).expect("scenario file"),
            path.clone(),
        ),
        None => (
            "module = \"tiering\"\nseed = 1\n[antagonist]\nintensities = [1]\n[sim]\n\
             timeline = false\n"
                .to_string(),
            "<tier_prof>".to_string(),
        ),
    };
    let mut overrides = vec![
        ("policy.names".to_string(), format!("[\"{policy}\"]")),
        ("sim.duration_s".to_string(), format!("{seconds}")),
        ("sim.measure_last_s".to_string(), "1.0".to_string()),
        ("sim.page_bytes".to_string(), format!("{page_bytes}")),
        ("antagonist.intensities".to_string(), "[1]".to_string()),
    ];
    if scaled {
        for (k, v) in [
            ("workload.cores", "2".to_string()),
            (
                "workload.working_set_bytes",
                format!("{}", (72u64 << 30) / 8),
            ),
            ("workload.hot_set_bytes", format!("{}", (24u64 << 30) / 8)),
            ("tiers.0.capacity_bytes", "4000000000".to_string()),
            ("tiers.1.capacity_bytes", "12000000000".to_string()),
        ] {
            overrides.push((k.to_string(), v));
        }
    }
    let start = std::time::Instant::now();
    let out = hmsim::registry::run_scenario(&text, &file, &overrides, &[]).expect("run");
    let wall_s = start.elapsed().as_secs_f64();
    let json = serde_json::to_string(&(&out.rows, &out.tables)).expect("json");
    let mut h = std::collections::hash_map::DefaultHasher::new();
    json.hash(&mut h);
    println!(
        "{policy} {} KiB pages, {seconds} simulated s: {wall_s:.3} s wall, result hash {:016x}",
        page_bytes / 1024,
        h.finish()
    );
}
