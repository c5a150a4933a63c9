//! DRAM + PMem (or CXL) as system memory on a NUMA machine (docs/numa-pmem.md; aliusM, KCC 2021).
//!
//! - [`topology`]: sockets, controllers (SNC nodes), DRAM and far-memory modules, SLIT
//!   distances and per-path latency/bandwidth, in TOML; presets `aliusm-2s` and `cxl-box`.
//! - [`pool`], [`policy`] and [`policies`]: the NUMA nodes the OS allocates from, the
//!   placement-policy trait and the policies (Linux default, KMEM_DAX ×3, interleave, Memory Mode, aliusM), run-length
//!   placement with swap and out-of-memory.
//! - [`mmcache`]: the Memory Mode direct-mapped DRAM cache (closed form and simulated).
//! - [`capacity`]: the kernel's own memory (`struct page`, reserves, page tables).
//! - [`cost`]: vmalloc-style allocation time; [`app`]: application runtime through the
//!   tier engine's loaded-latency model.

mod app;
mod capacity;
mod cost;
mod mmcache;
mod placer;
mod policies;
mod policy;
mod pool;
mod scenario;
pub(crate) mod topology;

#[cfg(test)]
mod tests;

pub use placer::{Placement, Placer, Task};
pub use policies::{parse_policy, policy_names, PLACEMENT_POLICIES};
pub use policy::{PlacementPolicy, Stage};
pub use pool::Pool;
pub use scenario::{allocate, AllocationSpec, NodeRow, Numa, NumaConfig, NumaOutcome, NumaRow};
pub use topology::{NumaMachine, Topology, PRESETS};
