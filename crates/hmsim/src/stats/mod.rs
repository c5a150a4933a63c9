//! Statistics shared by every module: running moments (mean, σ), one distribution type
//! with quantiles ([`IntHistogram`]; [`LatencyHistogram`] is its view of latencies in ns,
//! summarised in µs), one summary of a distribution ([`Summary`]) and percentiles of a
//! sorted sample, and the occupancy estimate of how many bins uniform draws came from.

mod distribution;
mod latency;
mod moments;
mod occupancy;
mod percentile;

pub use distribution::{quantiles, IntHistogram, Summary, TabledIntHistogram};
pub use latency::LatencyHistogram;
pub use moments::Moments;
pub use occupancy::{bins_from_repeats, poisson_tail};
pub use percentile::nearest_rank;
