//! The hash indexes: P-CLHT, CCEH, Level hashing.

pub mod cceh;
pub mod clht;
pub mod level;

use super::index::IndexSpec;

/// Hash indexes, by name.
pub static INDEXES: &[&IndexSpec] = &[&clht::SPEC, &cceh::SPEC, &level::SPEC];
