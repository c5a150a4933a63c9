//! Profiling driver for trace-driven tiering (`perf`, `callgrind`): `cargo run --release
//! -p hmsim-prof --bin tier_trace_prof -- [RECORDS]`. Writes the bench's native trace (4 KiB pages
//! over 1 GiB, 90 % to 256 MiB) and replays it once under HeMem, as `hmsim bench --module
//! tiering` does; prints the accesses per wall second.
fn main() {
    let records: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000_000);
    let r = hmsim::bench::tiering_trace(records);
    println!(
        "{}: {} {} in {:.3} s = {:.2} M/s",
        r.case,
        r.count,
        r.unit,
        r.wall_s,
        r.per_wall_second / 1e6
    );
}
