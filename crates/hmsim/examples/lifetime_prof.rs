//! `hmsim lifetime` replay of a trace file for profiling (`callgrind`, `perf`):
//! `cargo run --release --example lifetime_prof -- TRACE [FORMAT] [DIMMS]`. Prints the
//! records, the time and the run's output as JSON (to compare builds byte for byte).

use std::path::Path;

use hmsim::device::Catalog;
use hmsim::pmem::lifetime_trace;
use hmsim::trace::{open_trace, Format};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: lifetime_prof TRACE [FORMAT] [DIMMS]");
    let fmt = args
        .get(2)
        .map(|f| f.parse::<Format>().expect("a trace format"));
    let dimms: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let catalog = Catalog::builtin();
    let start = std::time::Instant::now();
    let mut r = open_trace(Path::new(path), fmt).expect("trace");
    let out = lifetime_trace(
        r.as_mut(),
        path,
        "optane-pmem",
        &format!(r#"{{"pmem": {{"dimms": {dimms}}}}}"#),
        &catalog,
    )
    .expect("replay");
    let s = start.elapsed().as_secs_f64();
    eprintln!("replayed in {s:.3} s");
    println!("{}", serde_json::to_string(&out).expect("json"));
}
