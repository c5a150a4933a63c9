//! Statistics shared by every module: running moments (mean, σ), distributions with
//! quantiles, percentiles of a sorted sample and the latency histogram.

mod distribution;
mod latency;
mod moments;
mod percentile;

pub use distribution::{quantiles, IntHistogram, Summary, TabledIntHistogram};
pub use latency::{LatencyHistogram, LatencySummary};
pub use moments::Moments;
pub use percentile::nearest_rank;
