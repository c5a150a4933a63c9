//! Persistent-memory indexes (issue 5).

pub mod fastfair;
pub mod ordered;
