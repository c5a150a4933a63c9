//! hmsim core: every model and every hot loop of the heterogeneous-memory simulator.
//!
//! Layers live in one folder each; a trait per replaceable part; parts are picked by name
//! through [`registry`]. Simulated time is in nanoseconds (`u64` or `f64` named `*_ns`),
//! sizes in bytes, bandwidth in GB/s (10^9 B/s), energy in J, power in W, temperature in °C.
//!
//! `pub` marks what other crates may use (each folder's `mod.rs` re-exports its face);
//! what only this crate uses is `pub(crate)` or private, and the lint below keeps it so.

#![warn(unreachable_pub)]

pub mod alloc;
pub mod bench;
pub mod bench_result;
pub mod cache;
pub mod columns;
pub mod config;
pub mod cputime;
pub mod device;
pub mod error;
pub mod flash;
pub mod hash;
pub mod host_gauge;
pub mod hostmem;
pub mod hugevec;
pub mod hybrid;
pub mod mempath;
pub mod named;
pub mod numa;
pub mod param_docs;
pub mod pmem;
pub mod pmindex;
pub mod progress;
pub mod registry;
pub mod rng;
pub mod scenario;
pub mod stats;
pub mod storage;
pub mod tier;
pub mod trace;
pub mod units;

pub use error::{ConfigError, Error, ErrorKind, RunError};
pub use registry::{run_scenario, RunOutput};

/// Version of the core, reported in every `summary.json`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
