//! `hmsim lifetime` replay speed: 1 M uniform random 64 B writes over 16 GiB of one DIMM,
//! given as a VANS trace (the case that made the replay superlinear when the media queue
//! was swept whole on every write). Reports trace records per second, including the final
//! write-back of the caches.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hmsim::pmem::lifetime_scenario;
use hmsim::registry::run_scenario;

const WRITES: u64 = 1_000_000;

fn vans_random_writes(n: u64) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut text = String::with_capacity(n as usize * 16);
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.push_str(&format!("{:#x} W\n", (x % (16 << 30)) & !63));
    }
    text.into_bytes()
}

fn lifetime(c: &mut Criterion) {
    // The replay reads the trace from a file, as `hmsim lifetime` does.
    let path = std::env::temp_dir().join(format!("hmsim-bench-{}.vans", std::process::id()));
    std::fs::write(&path, vans_random_writes(WRITES)).expect("trace file");
    let text = lifetime_scenario(
        &path.display().to_string(),
        "optane-pmem",
        r#"{"pmem": {"dimms": 1}}"#,
        Some("vans"),
    )
    .expect("scenario");
    let mut g = c.benchmark_group("lifetime");
    g.throughput(Throughput::Elements(WRITES));
    g.sample_size(10);
    g.bench_function("vans_1m_random_writes_one_dimm", |b| {
        b.iter(|| run_scenario(&text, "<lifetime>", &[], &[]).expect("replay"))
    });
    g.finish();
    std::fs::remove_file(&path).ok();
}

criterion_group!(benches, lifetime);
criterion_main!(benches);
