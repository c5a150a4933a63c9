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
//!   and crash capture: at each fence a crash image (strict = flushed and fenced;
//!   adversarial = plus a random half of the dirty or in-flight lines).
//! - [`PmIndex`] — the one trait every index implements, hash or tree: `insert` (if absent)
//!   / `lookup` / `update` / `delete` / `scan` (ordered only) / `check_invariants` /
//!   `entries`; created and recovered through an [`IndexSpec`] registered once in
//!   `registry.rs`: `hash/` (P-CLHT, CCEH, Level hashing) and `trees/` (FAST&FAIR, P-ART,
//!   P-Masstree, P-BwTree, P-HOT). docs/pm-index.md, "Adding an index".
//! - `PmMem` (`mem.rs`) — the persistent-memory trait the indexes' code is written against,
//!   with the region's two views: `Instr` (instrumented) and `Peek` (read-only).
//! - [`Key`] (`Int(u64)` or `Str([u8; 24])`) and [`KeyType`]; `keyslot.rs` stores a key in an
//!   8 B slot. Int keys 0 and u64::MAX are reserved.
//! - The one crash harness (`crash.rs`): crash images at persist points, recovered and
//!   checked against a model; `testing::standard_checks` is the model-based check every
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
mod line_bits;
mod loaded;
mod measure;
mod mem;
mod ops;
mod region;
pub(crate) mod registry;
mod repeats;
mod rows;
pub(crate) mod scenario;
pub(crate) mod shared;
pub(crate) mod sim;
#[cfg(test)]
mod testing;
mod timings;
pub(crate) mod trees;
pub mod ycsb;

pub use counters::PmStats;
pub use index::{IndexOptions, IndexSpec, PmIndex, TonicOpts};
pub use key::{mix, Key, KeyType};
pub use ops::{Op, Outcome};
pub use region::{POff, PmError, PmEvent, PmObserver, PmRegion, PmResult, RegionConfig};
pub use registry::{find, registry};

pub(crate) use index::{OPT_COALESCE, OPT_NO_BLOAT, OPT_XPLINE};
#[cfg(test)]
pub(crate) use region::CrashCapture;
pub(crate) use region::LINE;
pub(crate) use scenario::PmIndexStudy;
pub use shared::{SharedIndex, DEFAULT_SHARDS};
