//! The ordered indexes (FAST&FAIR, P-ART, P-Masstree, P-BwTree, P-HOT), implemented on the
//! `pmindex` API on branch `pmindex-trees`. Each registers its `IndexSpec` in `INDEXES`.

use super::index::IndexSpec;

mod adapter;
pub mod art;
pub mod fastfair;
pub mod masstree;
pub mod ordered;

/// Ordered indexes, by name.
pub static INDEXES: &[&IndexSpec] = &[&fastfair::SPEC, &art::SPEC, &masstree::SPEC];
