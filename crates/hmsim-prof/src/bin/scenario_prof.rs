//! Profiling driver for any scenario (callgrind, perf): `cargo run --release -p hmsim-prof
//! --bin scenario_prof -- SCENARIO.toml [KEY=VALUE ...]` runs it in this process, as `hmsim run
//! SCENARIO.toml --set KEY=VALUE ...` would, and prints the wall time and the first row.
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = a.first() else {
        eprintln!("usage: scenario_prof SCENARIO.toml [KEY=VALUE ...]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let overrides: Vec<(String, String)> = a[1..]
        .iter()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let t = Instant::now();
    match hmsim::registry::run_scenario(&text, path, &overrides, &[]) {
        Ok(out) => {
            println!("{path}: {:.3} s wall", t.elapsed().as_secs_f64());
            if let Some(row) = out.rows.first() {
                println!("{}", serde_json::Value::Object(row.clone()));
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2)
        }
    }
}
