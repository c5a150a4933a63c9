//! Profiling driver (callgrind): `cargo run --release -p hmsim-prof --bin pmindex_prof -- INDEX N [model|lookup]`.
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let index = a.get(1).map(String::as_str).unwrap_or("p-clht");
    let n: u64 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let mode = a.get(3).map(String::as_str).unwrap_or("");
    let rows = if mode == "lookup" {
        hmsim::bench::pmindex_native(index, n).to_vec()
    } else {
        vec![hmsim::bench::pmindex_load(index, n, mode == "model")]
    };
    for r in rows {
        println!(
            "{}: {:.2} M/s ({} in {:.3} s)",
            r.case,
            r.per_wall_second / 1e6,
            r.count,
            r.wall_s
        );
    }
}
