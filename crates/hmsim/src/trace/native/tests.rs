//! Native format round trips, truncation and corruption.

use std::io;

use super::super::error::Location;
use super::super::record::*;
use super::super::{TraceError, TraceReader};
use super::*;
use proptest::prelude::*;

fn write(records: &[TraceRecord]) -> Vec<u8> {
    let header = NativeHeader {
        source: "test".into(),
        ..Default::default()
    };
    let mut w = NativeWriter::new(Vec::new(), &header).unwrap();
    for r in records {
        w.write(r).unwrap();
    }
    w.finish().unwrap()
}

fn read(bytes: Vec<u8>) -> Result<Vec<TraceRecord>, TraceError> {
    NativeReader::new(Box::new(io::Cursor::new(bytes)), "t.hmt")?.collect()
}

fn sample() -> Vec<TraceRecord> {
    let mut v = Vec::new();
    for i in 0..300_000u64 {
        let mut r = TraceRecord::new(
            if i % 3 == 0 { Kind::Store } else { Kind::Load },
            0x7fff_0000 + (i * 64) % 8192,
            8,
        );
        r.inst_gap = i % 5;
        if i % 1000 == 0 {
            r.timestamp_ns = i * 10;
            r.cpu = (i % 4) as u16;
        }
        v.push(r);
    }
    v
}

#[test]
fn trace_native_roundtrip_multi_block() {
    let recs = sample();
    let bytes = write(&recs);
    assert!(
        bytes.len() < recs.len(),
        "{} bytes for {} records",
        bytes.len(),
        recs.len()
    );
    let r = NativeReader::new(Box::new(io::Cursor::new(bytes.clone())), "t.hmt").unwrap();
    assert_eq!(r.header().source, "test");
    assert_eq!(read(bytes.clone()).unwrap(), recs);
    // Batches give the same records.
    let mut r = NativeReader::new(Box::new(io::Cursor::new(bytes)), "t.hmt").unwrap();
    let (mut all, mut batch) = (Vec::new(), Vec::new());
    while r.read_batch(&mut batch, 4096).unwrap() > 0 {
        all.extend_from_slice(&batch);
    }
    assert_eq!(all, recs);
}

#[test]
fn trace_native_truncation_is_reported() {
    let bytes = write(&sample());
    for cut in [10, FIXED_HEADER + 4 + 3, bytes.len() / 2, bytes.len() - 1] {
        let e = read(bytes[..cut].to_vec()).unwrap_err();
        assert!(e.message().contains("truncated"), "cut {cut}: {e}");
        assert!(matches!(e.location(), Location::Byte(_)));
    }
}

#[test]
fn trace_native_rejects_foreign_header() {
    let e = read(b"I  0400,3\n".repeat(3)).unwrap_err();
    assert!(e.message().contains("magic"), "{e}");
}

/// A header's page size must be a power of two from 512 B to 1 GiB 0 is refused
/// at its byte.
#[test]
fn trace_native_refuses_an_impossible_page_size() {
    for page in [0u32, 3000, 256, 1 << 31] {
        let mut bytes = write(&sample()[..10]);
        bytes[12..16].copy_from_slice(&page.to_le_bytes());
        let e = read(bytes).unwrap_err();
        assert_eq!(e.location(), Location::Byte(12), "{e}");
        assert!(
            e.message().contains(&format!("page size {page} bytes")),
            "{e}"
        );
    }
    let mut bytes = write(&sample()[..10]);
    bytes[12..16].copy_from_slice(&(2u32 << 20).to_le_bytes());
    assert_eq!(read(bytes).unwrap().len(), 10);
}

fn arb_record() -> impl Strategy<Value = TraceRecord> {
    (
        (
            0u8..7,
            any::<u64>(),
            any::<u32>(),
            prop_oneof![Just(0u64), any::<u64>()],
        ),
        (
            proptest::option::of(0..u64::MAX),
            proptest::option::of(0..u64::MAX),
        ),
        (
            proptest::option::of(0..u16::MAX),
            proptest::option::of(0..u16::MAX),
        ),
        (any::<u8>(), proptest::option::of(0..u8::MAX), any::<u32>()),
    )
        .prop_map(|((k, a, s, g), (t, c), (cpu, dev), (order, mt, gfp))| {
            let mut r = TraceRecord::new(Kind::from_u8(k).unwrap(), a, s);
            r.inst_gap = g;
            r.timestamp_ns = t.unwrap_or(NO_TIME);
            r.cycle = c.unwrap_or(NO_CYCLE);
            r.cpu = cpu.unwrap_or(NO_ID);
            r.device = dev.unwrap_or(NO_ID);
            r.order = order;
            r.migratetype = mt.unwrap_or(NO_MIGRATETYPE);
            r.gfp = gfp;
            r
        })
}

proptest! {
    #[test]
    fn trace_native_roundtrips_any_records(recs in proptest::collection::vec(arb_record(), 0..200)) {
        prop_assert_eq!(read(write(&recs)).unwrap(), recs);
    }

    #[test]
    fn trace_native_never_panics_on_corruption(flip in 0usize..4096, byte in any::<u8>()) {
        let mut bytes = write(&sample()[..2000]);
        let i = flip % bytes.len();
        bytes[i] = byte;
        let _ = read(bytes);
    }
}
