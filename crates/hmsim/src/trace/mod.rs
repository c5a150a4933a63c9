//! Traces: one streaming reader for every common memory/block/page-event trace format.
//!
//! [`open_trace`] sniffs the compression (gzip, xz, zstd, bzip2 by magic bytes) and the
//! format (unless stated), and returns a [`TraceReader`]: an iterator of [`TraceRecord`]s
//! that never holds more than a line or a block of the trace in memory. A malformed record
//! ends the stream with a [`TraceError`] naming the file, line (or byte offset) and what was
//! expected; it converts into the crate's [`ConfigError`](crate::ConfigError).
//!
//! The hmsim native format ([`native`]) is the fastest to read and the target of
//! [`convert`]; [`trace_info`] summarises any trace.

mod block;
mod champsim;
mod convert;
mod decompress;
mod error;
mod format;
mod formats;
mod info;
mod kmem;
mod lackey;
mod memctrl;
mod native;
mod pagelevel;
mod pages;
mod parse;
mod pin;
mod reader;
mod record;
mod sniff;
mod text;
mod varint;
mod watch;
mod writers;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_util;

use std::fs::File;
use std::io::{BufReader, Cursor, Read};
use std::path::Path;

pub use champsim::{encode_instr as encode_champsim_instr, RECORD_BYTES as CHAMPSIM_RECORD_BYTES};
pub use convert::{
    convert, convert_reader, convert_reader_with, convert_watched, convert_with, write_text,
    Cancel, ConvertOptions, ConvertReport, DEFAULT_OUTPUT_PER_INPUT_BYTE, MIN_DEFAULT_OUTPUT_BYTES,
};
pub use decompress::{Compression, Encoder};
pub use error::{Location, TraceError};
pub use format::{Format, TraceKind};
pub use formats::FORMATS;
pub use info::{summarise, trace_info, PageCount, TraceInfo, DEFAULT_TOP_PAGES};
pub use kmem::gfp;
pub use native::{NativeHeader, NativeReader, NativeWriter};
pub use pagelevel::{is_page_level, PageLevel};
pub use reader::TraceReader;
pub use record::{
    Kind, TraceRecord, KMEM_PAGE_BYTES, NO_CYCLE, NO_ID, NO_MIGRATETYPE, NO_TIME, SECTOR_BYTES,
};
pub use sniff::sniff;
pub use watch::{open_reader_watched, open_trace_watched, Watched};
pub use writers::TEXT_TARGETS;

/// Read buffer for text and binary streams.
const BUF_BYTES: usize = 256 * 1024;

/// Opens a trace file; `format` overrides sniffing.
pub fn open_trace(path: &Path, format: Option<Format>) -> Result<Box<dyn TraceReader>, TraceError> {
    let name = path.display().to_string();
    let file = File::open(path)
        .map_err(|e| TraceError::new(&name, Location::File, format!("cannot open: {e}")))?;
    check_file_type(&file, &name)?;
    open_reader(Box::new(file), &name, format)
}

/// Refuses what is not a trace file: a directory, or a device such as `/dev/zero` whose
/// endless bytes would be read forever. Pipes are allowed (a tracer writing into a FIFO).
pub(crate) fn check_file_type(file: &File, name: &str) -> Result<(), TraceError> {
    let err = |m: &str| TraceError::new(name, Location::File, m);
    let kind = file
        .metadata()
        .map_err(|e| err(&format!("cannot stat: {e}")))?
        .file_type();
    if kind.is_dir() {
        return Err(err("is a directory; expected a trace file"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() || kind.is_block_device() || kind.is_socket() {
            return Err(err(
                "is a device or socket, not a regular file or pipe; expected a trace file",
            ));
        }
    }
    Ok(())
}

/// Opens a trace from any byte stream (a pipe from a running tracer, a socket); `name`
/// is used in error messages.
pub fn open_reader(
    src: Box<dyn Read + Send>,
    name: &str,
    format: Option<Format>,
) -> Result<Box<dyn TraceReader>, TraceError> {
    open_reader_with_compression(src, name, format).map(|(r, _)| r)
}

/// Like [`open_reader`], also saying which outer compression was found.
pub fn open_reader_with_compression(
    src: Box<dyn Read + Send>,
    name: &str,
    format: Option<Format>,
) -> Result<(Box<dyn TraceReader>, Compression), TraceError> {
    let file_err = |m: String| TraceError::new(name, Location::File, m);
    let (magic, src, _) = peek(src, 6).map_err(|e| file_err(format!("cannot read: {e}")))?;
    let compression = Compression::sniff(&magic);
    let decoded = compression.decoder(src).map_err(|e| {
        file_err(format!(
            "cannot start {} decompression: {e}",
            compression.name()
        ))
    })?;
    let (head, stream, complete) = peek(decoded, sniff::SNIFF_BYTES).map_err(|e| {
        file_err(format!(
            "cannot read {} data (truncated or corrupt?): {e}",
            compression.name()
        ))
    })?;
    let format = match format {
        Some(f) => f,
        None => sniff::sniff(&head, complete).map_err(file_err)?,
    };
    let open = formats::FORMATS
        .get(format.name())
        .ok_or_else(|| file_err(format!("no reader is registered for the {format} format")))?;
    let reader = open(BufReader::with_capacity(BUF_BYTES, stream), name)?;
    Ok((reader, compression))
}

/// Reads up to `n` bytes and returns them, the stream with them put back, and whether the
/// stream ended within them.
fn peek(
    mut src: Box<dyn Read + Send>,
    n: usize,
) -> std::io::Result<(Vec<u8>, Box<dyn Read + Send>, bool)> {
    let mut head = Vec::with_capacity(n);
    (&mut src).take(n as u64).read_to_end(&mut head)?;
    let complete = head.len() < n;
    let back: Box<dyn Read + Send> = Box::new(Cursor::new(head.clone()).chain(src));
    Ok((head, back, complete))
}
