//! The study's reference tiers, built from the reference parameters of [`super::reference`]
//! (re-exported here).

pub use super::reference::*;
use crate::mempath::LatencyCurve;
use crate::mempath::PathResource;
use crate::mempath::TierSpec;

/// The study's two tiers (Ice Lake 8362, 2 sockets).
pub fn reference_tiers() -> Vec<TierSpec> {
    vec![
        TierSpec {
            name: "default".into(),
            capacity_bytes: DEFAULT_CAPACITY_BYTES,
            unloaded_latency_ns: DEFAULT_UNLOADED_NS,
            read_bandwidth_gb_s: DEFAULT_READ_BANDWIDTH_GB_S,
            write_bandwidth_gb_s: None,
            mix_penalty: MIX_PENALTY,
            queue_coeff: QUEUE_COEFF,
            curve: LatencyCurve::mess(),
            path: Vec::new(),
        },
        TierSpec {
            name: "alternate".into(),
            capacity_bytes: ALTERNATE_CAPACITY_BYTES,
            unloaded_latency_ns: ALTERNATE_UNLOADED_NS,
            read_bandwidth_gb_s: ALTERNATE_READ_BANDWIDTH_GB_S,
            write_bandwidth_gb_s: None,
            mix_penalty: MIX_PENALTY,
            queue_coeff: QUEUE_COEFF,
            curve: LatencyCurve::mess(),
            path: vec![PathResource::duplex(
                "upi",
                UPI_GB_S_PER_DIRECTION,
                UPI_GB_S_PER_DIRECTION,
            )],
        },
    ]
}
