//! Errors. Bad input is a [`ConfigError`] that names the file, line, key path and what is
//! allowed; the CLI prints it as one line and exits with status 2.

use std::fmt;

/// A problem with user input: a scenario, a device file, an override or a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// File the input came from (`<override>` for `--set`, `<string>` for inline text).
    pub file: String,
    /// 1-based line of the offending key, when known.
    pub line: Option<usize>,
    /// Dotted key path (`job.queue_depth`); empty for whole-file problems.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl ConfigError {
    pub fn new(file: &str, key: &str, message: impl Into<String>) -> Self {
        ConfigError {
            file: file.to_string(),
            line: None,
            key: key.to_string(),
            message: message.into(),
        }
    }

    pub fn at_line(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.key.is_empty() {
            write!(f, ": key '{}'", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Any error of the core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

pub type Result<T> = std::result::Result<T, Error>;
