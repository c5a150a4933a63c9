//! `hmsim lifetime` replay of a trace file for profiling (`callgrind`, `perf`):
//! `cargo run --release -p hmsim-prof --bin lifetime_prof -- TRACE [FORMAT] [DIMMS]`. Prints the
//! records, the time and the run's output as JSON (to compare builds byte for byte).

use hmsim::pmem::lifetime_scenario;
use hmsim::registry::run_scenario;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: lifetime_prof TRACE [FORMAT] [DIMMS]");
    let fmt = args.get(2).map(String::as_str);
    let dimms: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let start = std::time::Instant::now();
    let options = format!(r#"{{"pmem": {{"dimms": {dimms}}}}}"#);
    let text = lifetime_scenario(path, "optane-pmem", &options, fmt).expect("options");
    let out = run_scenario(&text, "<lifetime>", &[], &[]).expect("replay");
    let s = start.elapsed().as_secs_f64();
    eprintln!("replayed in {s:.3} s");
    println!("{}", serde_json::to_string(&out).expect("json"));
}
