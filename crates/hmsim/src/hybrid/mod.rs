//! A DRAM-cached flash memory device on the DIMM interface with host-cooperative internal
//! page faults (docs/hybrid.md; Han & Shin's UMD/EPF, KIISE).
//!
//! - [`umd`]: the device — DRAM cache ([`cache`]), L2P, the modified page walk, internal
//!   faults with victim write-back and GC on the critical path, the service-time estimate;
//!   the flash below is [`crate::flash`].
//! - [`host`]: one in-order core, threads, a round-robin scheduler, I-/D-TLBs ([`tlb`]),
//!   page walks, exceptions, non-preemptible sections.
//! - [`policy`]: the EPF policies behind [`EpfPolicy`], by name.
//! - [`workload`]: trace replay and thread hand-offs; [`pigz`]: the pigz-like `pigz -d`
//!   with its helper threads, page cache and resident OS.
//! - [`run`]: the `hybrid` scenario.

mod cache;
mod host;
mod pigz;
mod policy;
mod scenario;
mod tlb;
mod umd;
mod workload;

#[cfg(test)]
mod tests;

pub use host::{Host, HostConfig, HostStats};
pub use pigz::PigzLike;
pub use policy::{EpfPolicy, EpfPolicySpec, FaultView, EPF_POLICIES};
pub use scenario::{
    FlashSpec, Hybrid, HybridConfig, HybridDeviceConfig, HybridRow, HybridWorkloadSpec,
    Precondition, ServiceRow,
};
pub use umd::{Fault, Umd, Walk};
pub use workload::HybridWorkload;
