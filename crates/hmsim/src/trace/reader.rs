//! The trait every trace reader implements, in its own file so that a reader imports it
//! without importing the functions that open traces (which import every reader).

use super::error::TraceError;
use super::format::Format;
use super::native::NativeHeader;
use super::record::TraceRecord;

/// A stream of trace records. Iteration stops after the first error.
pub trait TraceReader: Iterator<Item = Result<TraceRecord, TraceError>> + Send {
    /// The format being read.
    fn format(&self) -> Format;

    /// The header of a native trace; `None` for other formats.
    fn native_header(&self) -> Option<&NativeHeader> {
        None
    }

    /// Replaces `out` with up to `max` records; 0 at the end. Readers with a faster bulk
    /// path (native) override it; hot loops should prefer it over `next`. On an error the
    /// records of this batch are dropped: a stream ends at its first error anyway.
    fn read_batch(&mut self, out: &mut Vec<TraceRecord>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        while out.len() < max {
            match self.next() {
                Some(Ok(r)) => out.push(r),
                Some(Err(e)) => return Err(e),
                None => break,
            }
        }
        Ok(out.len())
    }
}

/// A boxed reader is a reader, so adapters such as [`PageLevel`] wrap what `open_trace`
/// returns.
impl TraceReader for Box<dyn TraceReader> {
    fn format(&self) -> Format {
        (**self).format()
    }

    fn native_header(&self) -> Option<&NativeHeader> {
        (**self).native_header()
    }

    fn read_batch(&mut self, out: &mut Vec<TraceRecord>, max: usize) -> Result<usize, TraceError> {
        (**self).read_batch(out, max)
    }
}
