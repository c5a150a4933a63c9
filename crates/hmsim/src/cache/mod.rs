//! The one cache model: set-associative, write-back caches and a multi-core hierarchy
//! (private L1/L2 per core, shared LLC) with the x86 persistence instructions, and the
//! recency order of small fully associative buffers (XPBuffer, UMD DRAM cache, TLB).

mod anon_lru;
mod coherent;
pub(crate) mod filter;
mod hierarchy;
mod lanes;
mod lru;
mod set_assoc;

pub use coherent::{CoherentHierarchy, Source};
pub use hierarchy::{
    CacheConfig, FlushKind, Hierarchy, HitLevel, LevelConfig, MemorySink, WriteCause,
};
pub use lru::LruOrder;
pub use set_assoc::{Cache, CacheStats, Replacement, SetAssocCache, Way, NARROW_LINES};

/// Bytes in a cache line.
pub const LINE_BYTES: u64 = 64;
