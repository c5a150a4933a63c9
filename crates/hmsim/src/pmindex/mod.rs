//! Persistent index structures and their lifetime cost (spec 03-pm-index.md, study
//! `pm-index`).
//!
//! # API (stable; changes are additive and announced in /work/notes/pmindex-api-changes.md)
//!
//! - [`PmRegion`] — a byte range (anonymous memory that grows by doubling, or an mmap'd
//!   file) addressed by [`POff`] offsets, never raw pointers, so images can be copied for
//!   crash tests. Offset 0 is the 4 KiB header (null offset).
//!   - loads/stores: `read_u64/write_u64`, `read_u8/write_u8`, `read_bytes/write_bytes`,
//!     `zero`, `cas_u64`; uninstrumented `peek_u64/peek_bytes` for invariant checks only.
//!   - persistence: `flush(off)` (one line, instruction from `RegionConfig::flush`:
//!     clwb/clflushopt/clflush), `flush_range(off, len)`, `fence()` (sfence; every fence is
//!     a persist point), `persist(off, len)` = flush_range + fence, `ntstore_u64`.
//!     With `RegionConfig::hardware_flush` the real x86-64 instructions run (detected at
//!     creation; a clear [`PmError::Setup`] if missing).
//!   - instrumentation: [`PmStats`] counters (`stats()`), and every primitive as a
//!     [`PmEvent`] to an optional [`PmObserver`] (`set_observer`), tagged with the simulated
//!     thread (`set_thread`). [`sim::ModelObserver`] feeds them to the cache + PMem model.
//!   - allocator (crash-consistent, see `alloc.rs`): `alloc(size, align)`, `free(off, size)`
//!     (unlink durably before freeing), and 8 root slots `root(i)` / `set_root(i, off)`.
//!   - crash tracking: `track_crashes(capture, rng)`; at each fence the region can capture a
//!     [`CrashImage`] (strict = flushed and fenced; adversarial = plus a random subset of dirty
//!     or in-flight lines); `take_crash_images()`, `PmRegion::from_image(bytes, cfg)`.
//! - [`Key`] (`Int(u64)` or `Str([u8; 24])`) and [`KeyType`]; [`keyslot`] stores a key in an
//!   8 B slot (strings as a persisted out-of-line record). Int keys 0 and u64::MAX are
//!   reserved.
//! - [`PmIndex`]: `insert` (if absent) / `lookup` / `update` / `delete` / `scan` (ordered
//!   only) / `check_invariants` / `entries`; created and recovered through an [`IndexSpec`]
//!   (`create`, `recover`, `family`, `optimizations`, `key_types`) registered by name in
//!   `hash::INDEXES` (this branch) or `trees::INDEXES` (ordered indexes); [`registry()`],
//!   [`find`]. Options: [`IndexOptions`] (key type, capacity hint, [`TonicOpts`], root slot).
//! - [`Op`] / [`ops::Outcome`]: one operation applied to an index or to a `BTreeMap` model;
//!   [`testing::standard_checks`] is the model-based check every index runs in its tests.
//!
//! Threads: the API is `&mut` and single-threaded; YCSB's threads in the model are simulated
//! threads (`set_thread`) whose operations interleave on the cache model's cores. For real
//! OS threads, [`SharedIndex`] (`shared.rs`) partitions the keys over independently locked
//! shards, each its own region + index, usable through `&self` (docs/pm-index.md).
//!
//! Ownership: `hash/` (P-CLHT, CCEH, Level hashing) and the framework are on branch
//! `pmindex`; `trees/` (ordered indexes; register in `trees::INDEXES`) on `pmindex-trees`.
//!
//! Each index: one file; layout, flush order and recovery in its module docs and in
//! docs/pm-index.md.

mod alloc;
mod counters;
pub mod crash;
pub mod hash;
pub mod hwflush;
mod index;
mod key;
pub mod keyslot;
pub mod mem;
pub mod ops;
mod region;
pub mod registry;
mod rows;
pub mod scenario;
pub mod shared;
pub mod sim;
pub mod testing;
pub mod trees;
pub mod ycsb;

pub use alloc::{HEADER_BYTES, ROOT_SLOTS};
pub use index::{
    IndexOptions, IndexSpec, MakeIndex, PmIndex, TonicOpts, OPT_COALESCE, OPT_EVICT_VOLATILE,
    OPT_NO_BLOAT, OPT_XPLINE,
};
pub use key::{mix, Key, KeyType};
pub use mem::{Instr, Peek, PmMem};
pub use ops::Op;
pub use region::{
    CrashCapture, CrashImage, EventLog, POff, PmError, PmEvent, PmObserver, PmRegion, PmResult,
    PmStats, RegionConfig, LINE,
};
pub use registry::{find, registry, INDEXES};
pub use rows::{CostRow, CrashRow, PmIndexRow, RealThreadsRow};
pub use scenario::{PmIndexConfig, PmIndexStudy};
pub use shared::{SharedIndex, DEFAULT_SHARDS};
