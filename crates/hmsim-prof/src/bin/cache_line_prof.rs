//! The cost model's line accesses alone, every one found at one place, for profiling
//! (`callgrind`: host instructions per access on each path):
//! `cargo run --release -p hmsim-prof --bin cache_line_prof -- l1|l2|cross-core|memory [RUNS]`.
//! Prints ns per access and where the accesses found their lines.

use hmsim::alloc::benchmarks::{LineSource, LineStream, LINES_PER_RUN};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = args.get(1).map(String::as_str).unwrap_or("cross-core");
    let Some(source) = LineSource::ALL.into_iter().find(|s| s.key() == arg) else {
        eprintln!("no line source {arg}: l1, l2, cross-core or memory");
        std::process::exit(2);
    };
    let runs: u64 = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let mut s = LineStream::new(source);
    let start = std::time::Instant::now();
    let cycles = s.run(runs);
    let ns = start.elapsed().as_secs_f64() * 1e9 / (runs * LINES_PER_RUN as u64) as f64;
    println!(
        "{}: {ns:.2} ns per access; {cycles} modelled cycles; sources {:?}",
        source.name(),
        s.sources()
    );
}
