//! What a module's run may ask of its surroundings: where the scenario lives, the device
//! catalog, its random streams, and someone to report progress to.

use std::any::Any;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

use crate::config::Source;
use crate::device::{Catalog, DeviceSpec};
use crate::error::RunError;
use crate::rng::{self, SimRng};

use super::header::Header;
use crate::progress::{NoProgress, Progress};

/// The context of one scenario run.
pub struct Ctx<'a> {
    source: &'a Source<'a>,
    header: &'a Header,
    catalog: &'a Catalog,
    progress: &'a dyn Progress,
    parts: Option<&'a Parts>,
}

/// Parts a caller hands to one run that the scenario's text cannot name (a tiering policy
/// written in Python). The module takes those it knows, by type, through
/// [`Ctx::take_part`]; the skeleton refuses a run that leaves one untaken.
#[derive(Default)]
pub struct Parts {
    parts: RefCell<Vec<(&'static str, Box<dyn Any>)>>,
}

impl Parts {
    pub fn new() -> Self {
        Parts::default()
    }

    /// These parts and `part`, called `what` in an error (`a tiering policy`).
    pub fn with<T: Any>(self, what: &'static str, part: T) -> Self {
        self.parts.borrow_mut().push((what, Box::new(part)));
        self
    }

    /// The first part of type `T`, taken out.
    pub fn take<T: Any>(&self) -> Option<T> {
        let mut parts = self.parts.borrow_mut();
        let i = parts.iter().position(|(_, p)| p.is::<T>())?;
        parts.remove(i).1.downcast::<T>().ok().map(|b| *b)
    }

    /// What is left untaken.
    pub fn left(&self) -> Vec<&'static str> {
        self.parts.borrow().iter().map(|(what, _)| *what).collect()
    }
}

impl<'a> Ctx<'a> {
    /// The context of the scenario read into `source`.
    pub fn new(source: &'a Source<'a>, header: &'a Header, catalog: &'a Catalog) -> Self {
        Ctx {
            source,
            header,
            catalog,
            progress: &NoProgress,
            parts: None,
        }
    }

    /// The same context, offering `parts` to the module.
    pub fn with_parts(mut self, parts: &'a Parts) -> Self {
        self.parts = Some(parts);
        self
    }

    /// The caller's part of type `T`, if it brought one (taken: a second call gets none).
    pub fn take_part<T: Any>(&self) -> Option<T> {
        self.parts.and_then(Parts::take)
    }

    /// The same context, reporting progress to `progress`.
    pub fn with_progress(mut self, progress: &'a dyn Progress) -> Self {
        self.progress = progress;
        self
    }

    /// The scenario file, as errors name it.
    pub fn file(&self) -> &'a str {
        self.source.file()
    }

    /// The scenario as read (after overrides): its text and parsed tree.
    pub fn source(&self) -> &'a Source<'a> {
        self.source
    }

    pub fn header(&self) -> &'a Header {
        self.header
    }

    pub fn seed(&self) -> u64 {
        self.header.seed
    }

    pub fn catalog(&self) -> &'a Catalog {
        self.catalog
    }

    pub fn progress(&self) -> &'a dyn Progress {
        self.progress
    }

    /// `rel` resolved against the scenario's folder (absolute paths are kept).
    pub fn path(&self, rel: &str) -> PathBuf {
        Path::new(self.file())
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
            .join(rel)
    }

    /// The random stream `name` of this run.
    pub fn rng(&self, name: &str) -> SimRng {
        rng::stream(self.header.seed, name)
    }

    /// A configuration error at `key`, pointing at the line that sets it.
    pub fn error(&self, key: &str, message: impl Into<String>) -> RunError {
        RunError::config(self.file(), key, message).at_line(self.source.line_of_key(key))
    }

    /// The catalog device `name`, set at `key`.
    pub fn device(&self, name: &str, key: &str) -> Result<&'a DeviceSpec, RunError> {
        self.catalog
            .require(name, self.file(), key)
            .map_err(|e| e.at_line(self.source.line_of_key(key)))
    }

    /// The warning for figures of the PMem device `name` (set at `key`) that the PMem write
    /// path does not use and a user's device file sets.
    pub fn pmem_device_warning(&self, name: &str, key: &str) -> Option<String> {
        crate::device::unused_figures(
            self.catalog,
            name,
            key,
            "PMem write path",
            crate::device::PMEM_UNUSED,
        )
    }

    /// The memory device `name` (set at `key`) and its rated bytes written.
    pub fn memory_device_with_endurance(
        &self,
        name: &str,
        key: &str,
    ) -> Result<(&'a DeviceSpec, f64), RunError> {
        self.catalog
            .memory_with_rated_writes(name, self.file(), key)
            .map_err(|e| e.at_line(self.source.line_of_key(key)))
    }
}
