//! Errors. A run fails with a [`RunError`] that names the file, line, key path and what is
//! allowed; its [`ErrorKind`] says whose fault it is, so Python raises a class per kind and
//! the CLI prints bad input as one line with exit status 2.

use std::fmt;

/// Whose fault an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorKind {
    /// A scenario, device file, override or option is wrong: fix the configuration.
    #[default]
    Config,
    /// A data file (a trace, a recorded table) cannot be read as what it claims to be.
    InputData,
    /// The configuration was valid, but the simulation could not complete (a model limit).
    Runtime,
}

impl ErrorKind {
    /// The name the Python side maps to an exception class.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Config => "config",
            ErrorKind::InputData => "input_data",
            ErrorKind::Runtime => "runtime",
        }
    }
}

/// Why a run failed: a problem with user input (a scenario, a device file, an override, a
/// trace) or a model limit reached while running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    /// Whose fault it is.
    pub kind: ErrorKind,
    /// File the input came from (`<override>` for `--set`, `<string>` for inline text).
    pub file: String,
    /// 1-based line of the offending key, when known.
    pub line: Option<usize>,
    /// Dotted key path (`job.queue_depth`); empty for whole-file problems.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// The name most of the core uses for a [`RunError`] of kind [`ErrorKind::Config`].
pub type ConfigError = RunError;

impl RunError {
    /// A configuration error at `key` of `file`.
    pub fn new(file: &str, key: &str, message: impl Into<String>) -> Self {
        RunError {
            kind: ErrorKind::Config,
            file: file.to_string(),
            line: None,
            key: key.to_string(),
            message: message.into(),
        }
    }

    /// A configuration error at `key` of `file` (the same as [`RunError::new`]).
    pub fn config(file: &str, key: &str, message: impl Into<String>) -> Self {
        RunError::new(file, key, message)
    }

    /// A data file that cannot be read as what it claims to be.
    pub fn input(file: &str, key: &str, message: impl Into<String>) -> Self {
        RunError {
            kind: ErrorKind::InputData,
            ..RunError::new(file, key, message)
        }
    }

    /// A valid run that hit a model limit while running `file`.
    pub fn runtime(file: &str, message: impl Into<String>) -> Self {
        RunError {
            kind: ErrorKind::Runtime,
            ..RunError::new(file, "", message)
        }
    }

    pub fn at_line(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }

    /// The same error with another kind.
    pub fn with_kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }
}

impl fmt::Display for RunError {
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

impl std::error::Error for RunError {}

/// Any error of the core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

pub type Result<T> = std::result::Result<T, Error>;
