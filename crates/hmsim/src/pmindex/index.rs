//! The index interface every persistent index implements, its options (key type, Tonic's
//! optimization switches), and the registry that picks an index by name.

use serde::{Deserialize, Serialize};

use super::key::{Key, KeyType};
use super::region::{PmRegion, PmResult};

/// Tonic's four ways to cut media writes, as switches. An index applies the ones that mean
/// something for its layout and lists them in [`IndexSpec::optimizations`]; the region-level
/// `coalesce_flushes` lives in [`super::RegionConfig`] (it applies to every index).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TonicOpts {
    /// Flush only the bytes that changed, not the whole node/bucket ("unintended bloat").
    #[serde(default)]
    pub no_bloat: bool,
    /// Keep volatile fields (locks, version counters) off persisted lines.
    #[serde(default)]
    pub evict_volatile: bool,
    /// Size and align nodes to the 256 B XPLine.
    #[serde(default)]
    pub xpline_nodes: bool,
}

/// Names of the switches, as `optimizations` lists use them.
pub(crate) const OPT_NO_BLOAT: &str = "no_bloat";
pub(crate) const OPT_COALESCE: &str = "coalesce_flushes";
pub(crate) const OPT_EVICT_VOLATILE: &str = "evict_volatile";
pub(crate) const OPT_XPLINE: &str = "xpline_nodes";

/// What an index is created with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexOptions {
    pub key_type: KeyType,
    /// Expected number of keys (sizes initial tables; indexes still grow past it).
    pub capacity_hint: u64,
    pub opts: TonicOpts,
    /// Root slot of the region the index publishes itself in (0..8).
    pub root_slot: u64,
}

impl IndexOptions {
    pub fn new(key_type: KeyType) -> IndexOptions {
        IndexOptions {
            key_type,
            capacity_hint: 1024,
            opts: TonicOpts::default(),
            root_slot: 0,
        }
    }
}

/// A persistent index over a [`PmRegion`]: the one trait every index implements, hash or
/// tree (docs/pm-index.md, "Adding an index"). The index struct holds only volatile (DRAM)
/// state; everything needed after a crash is in the region, reached from its root slot. Its
/// code is written against `PmMem`: operations run on `Instr::new(pm)`, `check_invariants`
/// and `entries` on `Peek(pm)`.
///
/// Semantics (checked by the model-based tests against a `BTreeMap`):
/// - `insert` adds `key → value` if `key` is absent and returns true; if present it changes
///   nothing and returns false.
/// - `update` replaces the value of a present key (true) or does nothing (false).
/// - `delete` removes a present key (true) or does nothing (false).
/// - every operation is durable when it returns (it has flushed and fenced what it wrote),
///   and failure-atomic: a crash at any fence inside it leaves the old or the new state.
/// - values are 8 B; value 0 is allowed.
pub trait PmIndex: Send {
    fn insert(&mut self, pm: &mut PmRegion, key: Key, value: u64) -> PmResult<bool>;
    fn lookup(&mut self, pm: &mut PmRegion, key: Key) -> Option<u64>;
    fn update(&mut self, pm: &mut PmRegion, key: Key, value: u64) -> PmResult<bool>;
    fn delete(&mut self, pm: &mut PmRegion, key: Key) -> PmResult<bool>;
    /// Up to `count` entries with key ≥ `start`, in key order, appended to `out`.
    fn scan(
        &mut self,
        _pm: &mut PmRegion,
        _start: Key,
        _count: usize,
        _out: &mut Vec<(Key, u64)>,
    ) -> PmResult<()> {
        Err(super::region::PmError::Unsupported(
            "range scan on an unordered index",
        ))
    }
    /// Structural invariants (uninstrumented: use `peek_*`), e.g. keys in the right bucket,
    /// sorted nodes, no cycles, locks released after recovery.
    fn check_invariants(&self, pm: &PmRegion) -> Result<(), String>;
    /// Every entry (uninstrumented), any order: the crash harness compares it with the model.
    fn entries(&self, pm: &PmRegion) -> Vec<(Key, u64)>;
    /// An independent copy of the index's volatile state, to go with a copy of its region
    /// ([`PmRegion::fork`]); None if the index cannot be copied.
    fn fork(&self) -> Option<Box<dyn PmIndex>> {
        None
    }
}

type CreateFn = fn(&mut PmRegion, &IndexOptions) -> PmResult<Box<dyn PmIndex>>;

/// Makes an index in a region: creates an empty one, or recovers one from the region's
/// contents (an [`IndexSpec`]'s `create` / `recover`, or a test's closure).
pub(crate) type MakeIndex<'a> =
    dyn Fn(&mut PmRegion, &IndexOptions) -> PmResult<Box<dyn PmIndex>> + 'a;

/// One registered index.
pub struct IndexSpec {
    /// Name used in scenarios and results (`p-clht`, `cceh`, ...).
    pub name: &'static str,
    /// One line on what the index is.
    pub about: &'static str,
    /// `hash` or `ordered` (ordered indexes support `scan`).
    pub family: &'static str,
    /// Format a new, empty index in the region and publish it in `opts.root_slot`.
    pub create: CreateFn,
    /// Rebuild the volatile state from a region after a crash (or a clean reopen): fix up
    /// what the design's recovery fixes (e.g. release locks), never lose a completed insert.
    pub recover: CreateFn,
    /// Tonic switches this index implements (names as in `OPT_*`).
    pub optimizations: &'static [&'static str],
    /// Key types supported.
    pub key_types: &'static [KeyType],
}

impl IndexSpec {
    pub(crate) fn ordered(&self) -> bool {
        self.family == "ordered"
    }
}
