//! Persistent-memory indexes (issue 5).

pub mod art;
pub mod fastfair;
pub mod ordered;
