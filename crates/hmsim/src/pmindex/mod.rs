//! Persistent index structures and their lifetime cost (docs/pm-index.md; Tonic, Woo et al.,
//! IEEE Access 2021, over RECIPE, Lee et al., ACM SOSP 2019; study `pm-index`).
//!
//! - [`PmRegion`] (`region.rs`) — the one simulated persistent region: a byte range
//!   (anonymous memory that grows by doubling, or an mmap'd file) addressed by [`POff`]
//!   offsets, never raw pointers, so images can be copied for crash tests. Offset 0 is the
//!   4 KiB header (null offset). Instrumented loads, stores, flushes (`RegionConfig::flush`:
//!   clwb/clflushopt/clflush), fences (every fence a persist point) and non-temporal stores;
//!   the real x86-64 instructions with `RegionConfig::hardware_flush`. Every primitive counts
//!   in [`PmStats`] (`counters.rs`, the one counter type) and goes as a [`PmEvent`] to an
//!   optional [`PmObserver`] ([`sim::ModelObserver`] feeds the cache + PMem model), tagged
//!   with the simulated thread. A crash-consistent allocator (`alloc.rs`) with 8 root slots,
//!   and crash capture: at each fence a [`CrashImage`] (strict = flushed and fenced;
//!   adversarial = plus a random half of the dirty or in-flight lines).
//! - [`PmMem`] (`mem.rs`) — the one persistent-memory trait the indexes are written against,
//!   with the region's two views: [`Instr`] (instrumented) and [`Peek`] (read-only).
//! - [`Key`] (`Int(u64)` or `Str([u8; 24])`) and [`KeyType`]; [`keyslot`] stores a key in an
//!   8 B slot. Int keys 0 and u64::MAX are reserved.
//! - [`PmIndex`]: `insert` (if absent) / `lookup` / `update` / `delete` / `scan` (ordered
//!   only) / `check_invariants` / `entries`; created and recovered through an [`IndexSpec`]
//!   registered once in [`INDEXES`] (`registry.rs`): `hash/` (P-CLHT, CCEH, Level hashing)
//!   and `trees/` (FAST&FAIR, P-ART, P-Masstree, P-BwTree, P-HOT).
//! - The one crash harness (`crash.rs`): crash images at persist points, recovered and
//!   checked against a model; [`testing::standard_checks`] is the model-based check every
//!   index runs in its tests.
//! - The `pm-index` scenario (`scenario.rs`, rows in `rows.rs`).
//!
//! Threads: the API is `&mut` and single-threaded; YCSB's threads in the model are simulated
//! threads (`set_thread`) whose operations interleave on the cache model's cores. For real
//! OS threads, [`SharedIndex`] (`shared.rs`) partitions the keys over independently locked
//! shards, each its own region + index, usable through `&self`.

mod alloc;
mod config;
mod counters;
mod crash;
pub mod hash;
mod hwflush;
mod index;
mod key;
mod keyslot;
mod measure;
mod mem;
mod ops;
mod region;
pub mod registry;
mod rows;
pub mod scenario;
pub mod shared;
pub mod sim;
pub mod testing;
pub mod trees;
pub mod ycsb;

pub use alloc::ROOT_SLOTS;
pub use index::{
    IndexOptions, IndexSpec, MakeIndex, PmIndex, TonicOpts, OPT_COALESCE, OPT_EVICT_VOLATILE,
    OPT_NO_BLOAT, OPT_XPLINE,
};
pub use key::{mix, Key, KeyType};
pub use mem::{Instr, Peek, PmMem};
pub use ops::Op;
pub use region::{
    CrashCapture, CrashImage, EventLog, POff, PmError, PmEvent, PmObserver, PmRegion, PmResult,
    PmStats, RegionConfig, HEADER_BYTES, LINE,
};
pub use registry::{find, registry, INDEXES};
pub use rows::{CostRow, CrashRow, PmIndexRow, RealThreadsRow};
pub use scenario::{PmIndexConfig, PmIndexStudy};
pub use shared::{SharedIndex, DEFAULT_SHARDS};
