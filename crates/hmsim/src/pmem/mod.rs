//! The persistent-memory write path (Intel Optane DCPMM, App Direct): CPU caches → iMC write
//! pending queue (ADR domain) → DDR-T requests → XPBuffer (256 B XPLines, write combining,
//! read-modify-write) → AIT (4 KiB blocks, wear leveling) → 3D-XPoint media with a wear map.
//! PmemCounters are named as Intel PCM and ipmctl name them. See docs/pmem.md.

mod ait;
mod config;
mod driver;
pub(crate) mod lifetime;
mod replay;
mod rows;
mod scenario;
mod system;
mod wear_table;
mod xpbuffer;

pub use ait::Ait;
pub use config::{AitConfig, PmemConfig, PmemTiming, XpBufferConfig};
pub use driver::{
    run_workload, DimmSpec, Machine, Persist, PmemPattern, PmemRunResult, PmemWorkload,
};
pub use replay::{lifetime_scenario, TraceReplay};
pub use rows::{HotRangeRow, LifetimeRow, PmemRow};
pub use scenario::{Pmem, PmemScenarioConfig};
pub use system::{PmemCounters, PmemSystem};
pub use xpbuffer::XpBuffer;

/// Bytes per XPLine, the media access unit.
pub const XPLINE_BYTES: u64 = 256;
