//! Trace errors: where (file, line or byte offset) and what was expected.
//!
//! Boxed so that `Result<TraceRecord, TraceError>` stays one word larger than the record:
//! errors are rare, records are not.

use std::fmt;

use crate::error::ConfigError;

/// Where in a trace a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// 1-based line of a text trace.
    Line(u64),
    /// Byte offset into the (decompressed) stream of a binary trace.
    Byte(u64),
    /// The whole file (cannot open, unknown format, …).
    File,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    file: String,
    location: Location,
    message: String,
}

/// A malformed, truncated or unreadable trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError(Box<Inner>);

impl TraceError {
    pub fn new(file: &str, location: Location, message: impl Into<String>) -> Self {
        TraceError(Box::new(Inner {
            file: file.to_string(),
            location,
            message: message.into(),
        }))
    }

    /// A malformed text line: quotes (a prefix of) the offending text.
    pub fn at_line(file: &str, line: u64, text: &[u8], expected: &str) -> Self {
        let shown = String::from_utf8_lossy(&text[..text.len().min(80)]);
        let more = if text.len() > 80 { "…" } else { "" };
        let message = format!("{expected}; found '{}{more}'", shown.trim_end());
        TraceError::new(file, Location::Line(line), message)
    }

    pub fn file(&self) -> &str {
        &self.0.file
    }

    pub fn location(&self) -> Location {
        self.0.location
    }

    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The 1-based line, for text traces.
    pub fn line(&self) -> Option<u64> {
        match self.0.location {
            Location::Line(l) => Some(l),
            _ => None,
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.location {
            Location::Line(l) => write!(f, "{}:{l}: {}", self.0.file, self.0.message),
            Location::Byte(b) => write!(f, "{}: at byte {b}: {}", self.0.file, self.0.message),
            Location::File => write!(f, "{}: {}", self.0.file, self.0.message),
        }
    }
}

impl std::error::Error for TraceError {}

impl From<TraceError> for ConfigError {
    fn from(e: TraceError) -> Self {
        let inner = *e.0;
        let (line, message) = match inner.location {
            Location::Line(l) => (Some(l as usize), inner.message),
            Location::Byte(b) => (None, format!("at byte {b}: {}", inner.message)),
            Location::File => (None, inner.message),
        };
        ConfigError::input(&inner.file, "", message).at_line(line)
    }
}

impl From<TraceError> for crate::Error {
    fn from(e: TraceError) -> Self {
        crate::Error::Config(e.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_error_becomes_config_error_with_line() {
        let e = TraceError::at_line("t.txt", 7, b"garbage here", "expected 'LD|ST <addr>'");
        let c: ConfigError = e.into();
        assert_eq!(c.file, "t.txt");
        assert_eq!(c.line, Some(7));
        assert!(
            c.message.contains("expected 'LD|ST <addr>'"),
            "{}",
            c.message
        );
        assert!(c.message.contains("garbage here"));
    }

    #[test]
    fn trace_error_byte_offset_goes_into_message() {
        let c: ConfigError = TraceError::new("t.bin", Location::Byte(128), "short record").into();
        assert_eq!(c.line, None);
        assert!(c.message.starts_with("at byte 128"));
    }
}
