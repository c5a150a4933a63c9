//! `hmsim lifetime` replay speed: 1 M uniform random 64 B writes over 16 GiB of one DIMM,
//! given as a VANS trace (the case that made the replay superlinear when the media queue
//! was swept whole on every write). Reports trace records per second, including the final
//! write-back of the caches.

use std::io::Cursor;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hmsim::device::Catalog;
use hmsim::pmem::lifetime_trace;
use hmsim::trace::{open_reader, Format};

const WRITES: u64 = 1_000_000;

fn vans_random_writes(n: u64) -> &'static [u8] {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut text = String::with_capacity(n as usize * 16);
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.push_str(&format!("{:#x} W\n", (x % (16 << 30)) & !63));
    }
    Box::leak(text.into_bytes().into_boxed_slice())
}

fn lifetime(c: &mut Criterion) {
    let bytes = vans_random_writes(WRITES);
    let catalog = Catalog::builtin();
    let mut g = c.benchmark_group("lifetime");
    g.throughput(Throughput::Elements(WRITES));
    g.sample_size(10);
    g.bench_function("vans_1m_random_writes_one_dimm", |b| {
        b.iter(|| {
            let mut r = open_reader(Box::new(Cursor::new(bytes)), "bench", Some(Format::Vans))
                .expect("trace");
            lifetime_trace(
                &mut r,
                "bench",
                "optane-pmem",
                r#"{"pmem": {"dimms": 1}}"#,
                &catalog,
            )
            .expect("replay")
        })
    });
    g.finish();
}

criterion_group!(benches, lifetime);
criterion_main!(benches);
