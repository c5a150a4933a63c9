use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn storage(c: &mut Criterion) {
    let mut g = c.benchmark_group("storage");
    let n = 200_000u64;
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    g.bench_function("4k_random_read_qd16", |b| {
        b.iter(|| hmsim::bench::storage_4k_random_qd16(n))
    });
    g.finish();
}

criterion_group!(benches, storage);
criterion_main!(benches);
