//! Cost-model replay of the benchmark stream for profiling (`perf`, `callgrind`):
//! `cargo run --release -p hmsim-prof --bin alloc_replay_prof -- [ALLOCATOR] [ALLOCS_PER_THREAD]
//! [flat|serial]`. Prints requests, wall time and a digest of the run's results (to compare
//! builds); `flat` replays without the cache model (every distinct line at the flat cost),
//! `serial` times the events on the issuing thread instead of a second one.

use hmsim::alloc::benchmarks::{named, replay_stream};
use hmsim::alloc::driver;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map(String::as_str).unwrap_or("buddy");
    let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let mode = args.get(3).map(String::as_str).unwrap_or("");
    let flat = mode == "flat";
    let w = replay_stream(n);
    let mut a = named(name);
    let model = driver::CostModel {
        pipelined: mode != "serial" && driver::pipelined_by_default(),
        ..Default::default()
    };
    let start = std::time::Instant::now();
    let r = if flat {
        driver::run_flat(a.as_mut(), &w, &model)
    } else {
        driver::run(a.as_mut(), &w, &model, &[], 0)
    };
    let s = start.elapsed().as_secs_f64();
    println!(
        "{name}: {} requests in {s:.3} s = {:.3} M/s; mean {:.4} cycles, sources {:?}, ops {:?}",
        r.requests,
        r.requests as f64 / s / 1e6,
        r.all.mean,
        r.sources,
        r.ops
    );
}
