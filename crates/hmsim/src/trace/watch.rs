//! Progress through a trace: how many bytes of its file have been read so far.
//!
//! Records have no known total before the end, but the file's size is known, so progress is
//! counted in bytes of the file as stored (compressed bytes for a compressed trace). A pipe
//! from a running tracer has no size: its total is 0 (unknown) and only the count advances.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::error::{Location, TraceError};
use super::{check_file_type, open_reader, Format, NativeHeader, TraceReader, TraceRecord};
use crate::progress::Progress;

/// Reports progress every this many records read one by one (batches report once each).
const REPORT_EVERY_RECORDS: u32 = 4096;

/// A byte stream that counts what has been read from it.
struct Counting<R> {
    inner: R,
    read_bytes: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read_bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A trace reader that reports the bytes of its input read so far to a [`Progress`].
pub struct Watched<'p> {
    inner: Box<dyn TraceReader>,
    read_bytes: Arc<AtomicU64>,
    reported: u64,
    since_report: u32,
    progress: &'p dyn Progress,
}

impl Watched<'_> {
    fn report(&mut self) {
        self.since_report = 0;
        let now = self.read_bytes.load(Ordering::Relaxed);
        if now > self.reported {
            self.progress.advance(now - self.reported);
            self.reported = now;
        }
    }
}

impl Iterator for Watched<'_> {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.since_report += 1;
        if self.since_report >= REPORT_EVERY_RECORDS {
            self.report();
        }
        self.inner.next()
    }
}

impl TraceReader for Watched<'_> {
    fn format(&self) -> Format {
        self.inner.format()
    }

    fn native_header(&self) -> Option<&NativeHeader> {
        self.inner.native_header()
    }

    fn read_batch(&mut self, out: &mut Vec<TraceRecord>, max: usize) -> Result<usize, TraceError> {
        let n = self.inner.read_batch(out, max)?;
        self.report();
        Ok(n)
    }
}

/// [`open_reader`] of `src`, reporting progress to `progress`: one phase of `total_bytes`
/// (0 when unknown, e.g. a pipe) in bytes of `src`.
pub fn open_reader_watched<'p>(
    src: Box<dyn Read + Send>,
    name: &str,
    format: Option<Format>,
    total_bytes: u64,
    progress: &'p dyn Progress,
) -> Result<Watched<'p>, TraceError> {
    let read_bytes = Arc::new(AtomicU64::new(0));
    let counted = Box::new(Counting {
        inner: src,
        read_bytes: read_bytes.clone(),
    });
    progress.start(total_bytes, "bytes");
    let inner = open_reader(counted, name, format)?;
    Ok(Watched {
        inner,
        read_bytes,
        reported: 0,
        since_report: 0,
        progress,
    })
}

/// [`open_trace`](super::open_trace), reporting progress through the file to `progress`.
pub fn open_trace_watched<'p>(
    path: &Path,
    format: Option<Format>,
    progress: &'p dyn Progress,
) -> Result<Watched<'p>, TraceError> {
    let name = path.display().to_string();
    let file = File::open(path)
        .map_err(|e| TraceError::new(&name, Location::File, format!("cannot open: {e}")))?;
    check_file_type(&file, &name)?;
    // A regular file's size; a FIFO's is 0, which is what "unknown" is.
    let total_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    open_reader_watched(Box::new(file), &name, format, total_bytes, progress)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records every call, to check what a reader reports.
    #[derive(Default)]
    struct Log(Mutex<Vec<(String, u64)>>);

    impl Progress for Log {
        fn start(&self, total: u64, unit: &str) {
            self.0
                .lock()
                .unwrap()
                .push((format!("start {unit}"), total));
        }
        fn advance(&self, n: u64) {
            self.0.lock().unwrap().push(("advance".into(), n));
        }
    }

    #[test]
    fn watched_reader_reports_every_byte_of_the_file_once() {
        let text: String = (0..60_000)
            .map(|i| format!("LD 0x{:x}\n", 0x1000 + 64 * i))
            .collect();
        let path = std::env::temp_dir().join(format!("hmsim-watch-{}.txt", std::process::id()));
        std::fs::write(&path, &text).unwrap();
        let log = Log::default();
        let mut r = open_trace_watched(&path, Some(Format::Ramulator2), &log).unwrap();
        let (mut batch, mut records) = (Vec::new(), 0);
        while r.read_batch(&mut batch, 1000).unwrap() > 0 {
            records += batch.len();
        }
        std::fs::remove_file(&path).ok();
        assert_eq!(records, 60_000);
        let calls = log.0.into_inner().unwrap();
        assert_eq!(calls[0], ("start bytes".to_string(), text.len() as u64));
        let advanced: u64 = calls[1..].iter().map(|(_, n)| n).sum();
        assert_eq!(advanced, text.len() as u64, "each byte reported once");
        assert!(
            calls.len() > 2,
            "progress arrives during the read: {calls:?}"
        );
    }

    #[test]
    fn record_by_record_reading_reports_too() {
        let text: String = (0..10_000)
            .map(|i| format!("ST 0x{:x}\n", 64 * i))
            .collect();
        let log = Log::default();
        let src = Box::new(io::Cursor::new(text.clone().into_bytes()));
        let r = open_reader_watched(src, "<pipe>", Some(Format::Ramulator2), 0, &log).unwrap();
        let records: Vec<_> = r.collect::<Result<_, _>>().unwrap();
        assert_eq!(records.len(), 10_000);
        let calls = log.0.into_inner().unwrap();
        assert_eq!(
            calls[0],
            ("start bytes".to_string(), 0),
            "a pipe: total unknown"
        );
        assert!(calls[1..].iter().map(|(_, n)| n).sum::<u64>() > 0);
    }
}
