//! Helpers shared by the trace tests.

use std::io::Cursor;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{open_reader, Format, TraceError, TraceReader, TraceRecord};

pub(super) fn reader(bytes: &[u8], format: Option<Format>) -> Box<dyn TraceReader> {
    open_reader(Box::new(Cursor::new(bytes.to_vec())), "<test>", format).unwrap()
}

/// Every record; panics on an error.
pub(super) fn read_all(bytes: &[u8], format: Option<Format>) -> Vec<TraceRecord> {
    reader(bytes, format).collect::<Result<_, _>>().unwrap()
}

/// The first error; panics if the trace reads cleanly.
pub(super) fn read_err(bytes: &[u8], format: Option<Format>) -> TraceError {
    match open_reader(Box::new(Cursor::new(bytes.to_vec())), "<test>", format) {
        Err(e) => e,
        Ok(r) => r.filter_map(Result::err).next().expect("expected an error"),
    }
}

/// A fresh file in the temp dir holding `bytes`; unique per process and call.
pub(super) fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let p = std::env::temp_dir().join(format!("hmsim-trace-{}-{n}-{name}", std::process::id()));
    std::fs::write(&p, bytes).unwrap();
    p
}
