//! The line loop shared by every text format: one reused line buffer, 1-based line
//! numbers, and a per-format [`LineParser`] that turns a line into at most a record or two.

use std::borrow::Cow;
use std::io::{BufRead, Read};

use super::error::{Location, TraceError};
use super::format::Format;
use super::parse::trim;
use super::record::{Kind, TraceRecord};
use super::TraceReader;

/// What was expected, for an error message. Static in the common case: no allocation.
pub(super) type Expected = Cow<'static, str>;

/// One text format. `parse` gets a line without its newline and with trailing whitespace
/// trimmed; blank lines and `#` comments never reach it (no format uses them for data).
pub(super) trait LineParser: Send {
    const FORMAT: Format;

    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, Expected>;

    /// A second record produced by the last line (e.g. a writeback), returned before the
    /// next line is read.
    fn take_pending(&mut self) -> Option<TraceRecord> {
        None
    }

    /// Called once at end of input: a last record (trailing instructions) or an error
    /// (a missing end marker).
    fn finish(&mut self) -> Result<Option<TraceRecord>, Expected> {
        Ok(None)
    }
}

/// Longest line accepted: a binary file forced through a text parser must not be read
/// whole into one "line".
pub(super) const MAX_LINE: u64 = 64 * 1024;

/// Streams a text trace through a [`LineParser`].
pub(super) struct TextReader<P> {
    src: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    line: u64,
    file: String,
    parser: P,
    done: bool,
}

impl<P: LineParser> TextReader<P> {
    pub(super) fn new(src: Box<dyn BufRead + Send>, file: &str, parser: P) -> Self {
        TextReader {
            src,
            buf: Vec::with_capacity(256),
            line: 0,
            file: file.to_string(),
            parser,
            done: false,
        }
    }

    fn fail(&mut self, e: TraceError) -> Option<Result<TraceRecord, TraceError>> {
        self.done = true;
        Some(Err(e))
    }
}

impl<P: LineParser> Iterator for TextReader<P> {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(r) = self.parser.take_pending() {
            return Some(Ok(sized::<P>(r)));
        }
        if self.done {
            return None;
        }
        loop {
            self.buf.clear();
            let n = match (&mut self.src)
                .take(MAX_LINE)
                .read_until(b'\n', &mut self.buf)
            {
                Ok(n) => n,
                Err(e) => {
                    let msg = format!(
                        "cannot read after this line (truncated or corrupt compressed data?): {e}"
                    );
                    let err = TraceError::new(&self.file, Location::Line(self.line), msg);
                    return self.fail(err);
                }
            };
            if n == 0 {
                self.done = true;
                return match self.parser.finish() {
                    Ok(r) => r.map(Ok),
                    Err(m) => Some(Err(TraceError::new(
                        &self.file,
                        Location::Line(self.line),
                        m,
                    ))),
                };
            }
            self.line += 1;
            if n as u64 == MAX_LINE && self.buf.last() != Some(&b'\n') {
                let msg = format!(
                    "line longer than {MAX_LINE} bytes: not a {} trace?",
                    P::FORMAT
                );
                let err = TraceError::new(&self.file, Location::Line(self.line), msg);
                return self.fail(err);
            }
            let cut = self.buf.last() != Some(&b'\n');
            let line = trim_end(&self.buf);
            let first = line.iter().find(|c| !c.is_ascii_whitespace());
            if matches!(first, None | Some(b'#')) {
                // `#eof` ends a pinatrace; everything else starting with '#' is a comment.
                if P::FORMAT == Format::Pinatrace && trim(line) == b"#eof" {
                    self.done = true;
                    return None;
                }
                continue;
            }
            let parsed = self.parser.parse(line);
            if cut && parsed.is_ok() {
                // A line cut short may still parse (`LD 0x1234abcd` cut to `LD 0x1234`):
                // without its newline a last line cannot be told from a truncated one.
                let e = "the last line has no newline at the end: a trace cut off mid-record? \
                         (if the line is whole, end the file with a newline)";
                return self.fail(TraceError::at_line(&self.file, self.line, line, e));
            }
            match parsed {
                Ok(Some(r)) => return Some(Ok(sized::<P>(r))),
                Ok(None) => continue,
                Err(expected) => {
                    // Looked for only here: a scan per line would slow every read.
                    let err = if let Some(col) = line.iter().position(|&c| c == 0) {
                        let msg = format!(
                            "NUL byte at column {}: a corrupt or binary file, not a {} text trace",
                            col + 1,
                            P::FORMAT
                        );
                        TraceError::new(&self.file, Location::Line(self.line), msg)
                    } else if cut {
                        // The input ended mid-line: most likely a trace cut off while copied.
                        let e = format!(
                            "the last line is cut off (no newline at the end: truncated trace?); {expected}"
                        );
                        TraceError::at_line(&self.file, self.line, line, &e)
                    } else {
                        TraceError::at_line(&self.file, self.line, line, &expected)
                    };
                    return self.fail(err);
                }
            }
        }
    }
}

impl<P: LineParser> TraceReader for TextReader<P> {
    fn format(&self) -> Format {
        P::FORMAT
    }
}

/// Gives a sizeless access the request size its format implies.
#[inline]
fn sized<P: LineParser>(mut r: TraceRecord) -> TraceRecord {
    if r.size == 0 && (r.kind.is_read() || r.kind.is_write() || r.kind == Kind::Flush) {
        if let Some(b) = P::FORMAT.implied_request_bytes() {
            r.size = b;
        }
    }
    r
}

#[inline]
fn trim_end(s: &[u8]) -> &[u8] {
    let mut end = s.len();
    while end > 0 && s[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    &s[..end]
}

/// Runs a parser over sample lines, for sniffing: how many non-comment lines are valid for
/// the format.
pub(super) fn score<P: LineParser + Default>(lines: &[&[u8]]) -> usize {
    let mut p = P::default();
    let mut ok = 0;
    for &raw in lines {
        let line = trim_end(raw);
        match line.iter().find(|c| !c.is_ascii_whitespace()) {
            None | Some(b'#') => continue,
            _ => {}
        }
        if p.parse(line).is_ok() {
            ok += 1;
        }
        p.take_pending();
    }
    ok
}
