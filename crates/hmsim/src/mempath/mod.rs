//! The memory-path engine (docs/tiering.md, *Model*): memory tiers as media behind a path of
//! resources (links, controllers), each with a loaded-latency curve, and the fixed point
//! between closed-loop sources' throughput, per-tier demand and loaded latency. Tiering and
//! NUMA PMem both run on it.

mod cores;
mod crossing;
mod curve;
mod engine;
mod flow;
mod path;

pub use cores::{ANTAGONIST_READS_PER_CORE, GUPS_MLP};
pub use curve::LatencyCurve;
pub use engine::{
    solve_fixed_point, solve_fixed_point_from, FixedPoint, Source, TierCounters, TierPoint,
    TierSpec, MIX_PENALTY, QUEUE_COEFF,
};
pub use flow::CopyFlow;
pub use path::PathResource;

/// Bytes per cache line, the unit of memory traffic.
pub const LINE_BYTES: f64 = crate::cache::LINE_BYTES as f64;
