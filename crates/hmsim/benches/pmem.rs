use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn pmem(c: &mut Criterion) {
    let mut g = c.benchmark_group("pmem");
    let ops = 400_000u64;
    g.throughput(Throughput::Elements(2 * ops));
    g.sample_size(10);
    g.bench_function("sequential_store_clwb_events", |b| {
        b.iter(|| hmsim::bench::pmem_clwb(ops, false))
    });
    g.finish();
}

criterion_group!(benches, pmem);
criterion_main!(benches);
