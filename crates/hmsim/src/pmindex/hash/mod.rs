//! The hash indexes: P-CLHT, CCEH, Level hashing.

pub mod clht;

use super::index::IndexSpec;

/// Hash indexes, by name.
pub static INDEXES: &[&IndexSpec] = &[&clht::SPEC];
