//! Statistics shared by every module.

mod latency;

pub use latency::{LatencyHistogram, LatencySummary};
