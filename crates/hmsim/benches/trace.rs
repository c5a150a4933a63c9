//! Trace reading speed: records/s for the native format and lackey text, and `trace info`
//! over native. Two synthetic traces: `mixed` is half strided, half random accesses in
//! 256 MB (a hard case: varint lengths are unpredictable); `local` is 90% strided, closer to
//! a real program's stack-and-array traffic.

use std::io::Cursor;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hmsim::trace::{open_reader, Format, Kind, NativeHeader, NativeWriter, TraceRecord};

const N: usize = 2_000_000;

fn synthetic(random_percent: u64) -> Vec<TraceRecord> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut addr = 0x7f00_0000_0000u64;
    (0..N)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            addr = if (x >> 40) % 100 >= random_percent {
                addr.wrapping_add(64)
            } else {
                0x7f00_0000_0000 + (x >> 8) % (256 << 20)
            };
            let kind = if x % 10 < 7 { Kind::Load } else { Kind::Store };
            let mut r = TraceRecord::new(kind, addr, 8);
            r.inst_gap = (i as u64 ^ x) % 4;
            r
        })
        .collect()
}

fn native_bytes(recs: &[TraceRecord]) -> &'static [u8] {
    let mut w = NativeWriter::new(Vec::new(), &NativeHeader::default()).unwrap();
    for r in recs {
        w.write(r).unwrap();
    }
    Box::leak(w.finish().unwrap().into_boxed_slice())
}

fn lackey_bytes(recs: &[TraceRecord]) -> &'static [u8] {
    let mut s = String::with_capacity(recs.len() * 24);
    for r in recs {
        for _ in 0..r.inst_gap {
            s.push_str("I  04010aa0,3\n");
        }
        let op = if r.kind == Kind::Load { 'L' } else { 'S' };
        s.push_str(&format!(" {op} {:x},{}\n", r.address, r.size));
    }
    Box::leak(s.into_bytes().into_boxed_slice())
}

fn count(bytes: &'static [u8], format: Format) -> usize {
    let mut r = open_reader(Box::new(Cursor::new(bytes)), "bench", Some(format)).unwrap();
    let mut batch = Vec::new();
    let mut n = 0;
    while r.read_batch(&mut batch, 1024).unwrap() > 0 {
        n += batch.len();
    }
    n
}

fn trace(c: &mut Criterion) {
    let recs = synthetic(50);
    let native = native_bytes(&recs);
    let lackey = lackey_bytes(&recs);
    eprintln!(
        "trace bench: {N} records; native {:.2} bytes/record; lackey {:.1} MB",
        native.len() as f64 / N as f64,
        lackey.len() as f64 / 1e6
    );

    let mut g = c.benchmark_group("trace_read_mixed");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("native_records", |b| {
        b.iter(|| assert_eq!(count(native, Format::Native), N))
    });
    g.bench_function("native_iterator_records", |b| {
        b.iter(|| {
            let r = open_reader(Box::new(Cursor::new(native)), "bench", None).unwrap();
            assert_eq!(r.count(), N)
        })
    });
    g.bench_function("lackey_records", |b| {
        b.iter(|| assert_eq!(count(lackey, Format::Lackey), N))
    });
    g.bench_function("native_info_records", |b| {
        b.iter(|| {
            let mut r = open_reader(Box::new(Cursor::new(native)), "bench", None).unwrap();
            hmsim::trace::summarise(r.as_mut(), "bench", 10)
                .unwrap()
                .records
        })
    });
    g.finish();

    let local = native_bytes(&synthetic(10));
    eprintln!(
        "trace bench: local native {:.2} bytes/record",
        local.len() as f64 / N as f64
    );
    g = c.benchmark_group("trace_read_local");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("native_records", |b| {
        b.iter(|| assert_eq!(count(local, Format::Native), N))
    });
    g.bench_function("native_info_records", |b| {
        b.iter(|| {
            let mut r = open_reader(Box::new(Cursor::new(local)), "bench", None).unwrap();
            hmsim::trace::summarise(r.as_mut(), "bench", 10)
                .unwrap()
                .records
        })
    });
    g.finish();

    g = c.benchmark_group("trace_read_bytes");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(lackey.len() as u64));
    g.bench_function("lackey_bytes", |b| b.iter(|| count(lackey, Format::Lackey)));
    g.finish();
}

criterion_group!(benches, trace);
criterion_main!(benches);
