//! FAST&FAIR (Hwang et al., FAST'18): a B+-tree whose 512 B nodes are kept sorted by shifting
//! entries in place with 8 B stores ordered so that every intermediate state is readable
//! (FAST), and split by linking a half-copied sibling first and truncating after (FAIR,
//! B-link style). Persistence follows the original `btree.h`: while shifting, the line just
//! completed is flushed whenever the shift reaches a line boundary, then the line holding the
//! new entry; a split flushes the whole new sibling, the header, the cut point, and the
//! header again; a new root is flushed whole and then the root pointer.
//!
//! Delete follows the original's rebalancing `remove` (single-threaded `btree.h`; compiled
//! but disabled in the concurrent one): a FAST shift left removes the entry, and a non-root
//! node left below `(cardinality - 1) / 2` entries is merged with its left sibling (its
//! right one if it is the leftmost child) when both fit one node, else their entries are
//! redistributed; the separator leaves the parent first, and a parent that falls below is
//! repaired the same way, up to a root collapse. A merge appends to the left node past its
//! end marker and publishes with the first pointer; a redistribution builds a new right node
//! and links it FAIR-style. Freed nodes (and integer keys' records) go back to the allocator
//! once unlinked durably. Recovery cuts a node where its right neighbour's range begins (see
//! `recover`).
//!
//! Node layout (offsets in bytes): 0 leftmost child (internal) / 0 (leaf), 8 sibling,
//! 16 header word (level u32 | switch counter u8 | deleted u8 | last index i16), 24 pad,
//! 32 + 16 i: entry i = (key word, pointer word). A null pointer ends the entries. Leaf
//! pointers point to value records (`ordered::new_record`), so they are unique and non-null
//! as the algorithm needs; string keys are stored as the record pointer too.

use std::cmp::Ordering;

use super::ordered::{
    cmp_stored, free_zeroed, new_record_fenced, record_bytes, record_key, scan_out, Instr,
    KeyBytes, PmMem, LINE,
};
use crate::pmindex::{
    IndexOptions, IndexSpec, KeyType, PmIndex, PmRegion, PmResult, OPT_COALESCE, OPT_NO_BLOAT,
    OPT_XPLINE,
};

pub(crate) static SPEC: IndexSpec = IndexSpec {
    name: "fast-fair",
    about: "FAST&FAIR: B+-tree with failure-atomic shifts, readers tolerate transients",
    family: "ordered",
    create,
    recover,
    optimizations: &[OPT_XPLINE, OPT_NO_BLOAT, OPT_COALESCE],
    key_types: &[KeyType::Int, KeyType::Str],
};

/// The original's node layout (56 B header: every fourth entry straddles two lines); what
/// RECIPE measured. Not crash-safe under one-line evictions (see [`HDR_RECIPE`]).
pub(crate) static SPEC_RECIPE: IndexSpec = IndexSpec {
    name: "fast-fair-recipe",
    about: "FAST&FAIR with the original's 56 B node header (entries straddle lines; can tear)",
    family: "ordered",
    create: create_recipe,
    recover: recover_recipe,
    optimizations: &[OPT_XPLINE, OPT_NO_BLOAT, OPT_COALESCE],
    key_types: &[KeyType::Int, KeyType::Str],
};

fn config(pm: &PmRegion, o: &IndexOptions, header_bytes: u64) -> FastFairConfig {
    FastFairConfig {
        node_bytes: if o.opts.xpline_nodes { 256 } else { 512 },
        no_bloat: o.opts.no_bloat,
        coalesce: pm.config().coalesce_flushes,
        header_bytes,
    }
}

fn create(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    make(pm, o, HDR)
}

fn create_recipe(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    make(pm, o, HDR_RECIPE)
}

fn make(pm: &mut PmRegion, o: &IndexOptions, header_bytes: u64) -> PmResult<Box<dyn PmIndex>> {
    let cfg = config(pm, o, header_bytes);
    let t = FastFair::new(&mut Instr::new(pm), o.key_type, cfg);
    Instr::new(pm).set_root(o.root_slot, t.meta());
    Ok(Box::new(t))
}

fn recover(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    reopen(pm, o, HDR)
}

fn recover_recipe(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    reopen(pm, o, HDR_RECIPE)
}

fn reopen(pm: &mut PmRegion, o: &IndexOptions, header_bytes: u64) -> PmResult<Box<dyn PmIndex>> {
    let cfg = config(pm, o, header_bytes);
    let mut t = FastFair::open(Instr::new(pm).root(o.root_slot), o.key_type, cfg);
    t.recover(pm);
    Ok(Box::new(t))
}

/// Header bytes before entry 0 in `fast-fair`: entries stay within a line (correct
/// persistence).
pub(crate) const HDR: u64 = 32;
/// The original's header: 49 B of fields (two pointers, level, switch counter, lock pointer,
/// highest key, deleted flag, last index, 5 B dummy) padded to 56 B, so its entry `i` sits at
/// `56 + 16 i`, every fourth entry straddles two lines and is flushed as two (most of its
/// extra flushes per insert, docs/pm-index.md). A straddled entry can be torn by the eviction
/// of one of its lines (key of the new entry, pointer of the old). `fast-fair-recipe`.
pub(crate) const HDR_RECIPE: u64 = 56;
const ENTRY: u64 = 16;

/// The original's `clflush(data, len)`: a fence, every line of the range, a fence.
#[inline]
fn clflush<M: PmMem>(pm: &mut M, off: u64, len: u64) {
    pm.flush_fenced(off, len, true, true);
}

/// Tonic's switches as they apply to FAST&FAIR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FastFairConfig {
    /// Node size: 512 B as published; 256 B = one XPLine (Tonic's XPLine-sized nodes),
    /// allocated XPLine-aligned.
    pub node_bytes: u64,
    /// Flush only the lines of a new node that hold data (the original flushes all 512 B).
    pub no_bloat: bool,
    /// Skip the split's second header flush (the last-index hint, recomputed from the
    /// entries by every reader) — it rewrites a line flushed two steps before.
    pub coalesce: bool,
    /// Bytes before entry 0: [`HDR`] (entries line-contained) or [`HDR_RECIPE`] (the
    /// original's layout).
    pub header_bytes: u64,
}

impl Default for FastFairConfig {
    fn default() -> Self {
        FastFairConfig {
            node_bytes: 512,
            no_bloat: false,
            coalesce: false,
            header_bytes: HDR,
        }
    }
}

#[derive(Clone)]
pub(crate) struct FastFair {
    kind: KeyType,
    cfg: FastFairConfig,
    /// Persistent superblock: root pointer at +0.
    meta: u64,
    card: usize,
}

impl FastFair {
    /// Key word of entry `i` of node `n`.
    #[inline]
    fn rk(&self, n: u64, i: usize) -> u64 {
        n + self.cfg.header_bytes + ENTRY * i as u64
    }
    /// Pointer word of entry `i` of node `n`.
    #[inline]
    fn rp(&self, n: u64, i: usize) -> u64 {
        self.rk(n, i) + 8
    }

    pub(crate) fn new<M: PmMem>(pm: &mut M, kind: KeyType, cfg: FastFairConfig) -> FastFair {
        assert!(cfg.node_bytes == 512 || cfg.node_bytes == 256);
        let meta = pm.alloc(LINE, LINE);
        let t = FastFair {
            kind,
            cfg,
            meta,
            card: ((cfg.node_bytes - cfg.header_bytes) / ENTRY) as usize,
        };
        let root = t.new_node(pm, 0);
        clflush(pm, root, cfg.node_bytes);
        pm.store(meta, root);
        clflush(pm, meta, 8);
        t
    }

    /// Reattach to a tree whose superblock is at `meta` (same key kind and configuration).
    pub(crate) fn open(meta: u64, kind: KeyType, cfg: FastFairConfig) -> FastFair {
        FastFair {
            kind,
            cfg,
            meta,
            card: ((cfg.node_bytes - cfg.header_bytes) / ENTRY) as usize,
        }
    }

    /// The persistent superblock (what a restart needs to find the tree).
    pub(crate) fn meta(&self) -> u64 {
        self.meta
    }

    fn new_node<M: PmMem>(&self, pm: &mut M, level: u32) -> u64 {
        let align = if self.cfg.node_bytes == 256 {
            256
        } else {
            LINE
        };
        let n = if self.cfg.no_bloat {
            pm.alloc_clean(self.cfg.node_bytes, align)
        } else {
            pm.alloc(self.cfg.node_bytes, align)
        };
        set_hdr(pm, n, level, 0, -1);
        n
    }

    fn root<M: PmMem>(&self, pm: &M) -> u64 {
        pm.load(self.meta)
    }

    /// Entries up to the first null pointer.
    fn count<M: PmMem>(&self, pm: &M, n: u64) -> usize {
        let mut c = 0;
        while c < self.card && pm.load(self.rp(n, c)) != 0 {
            c += 1;
        }
        c
    }

    /// Whether a node has an entry: its first pointer is set (= `count > 0`). The original
    /// reads only the sibling's first record before moving right; counting the sibling's
    /// entries loaded all of its lines.
    #[inline]
    fn nonempty<M: PmMem>(&self, pm: &M, n: u64) -> bool {
        pm.load(self.rp(n, 0)) != 0
    }

    fn cmp<M: PmMem>(&self, pm: &M, stored: u64, key: &[u8]) -> Ordering {
        cmp_stored(pm, self.kind, stored, key)
    }

    /// String keys live in records anywhere in the region, and a node's search compares
    /// them one after the other: ask the host for the records of `n`'s entries before the
    /// first compare (host-only: the words are peeked, nothing is modelled).
    #[inline]
    fn hint_keys<M: PmMem>(&self, pm: &M, n: u64) {
        if self.kind != KeyType::Str {
            return;
        }
        for i in 0..self.card {
            if pm.peek(self.rp(n, i)) == 0 {
                break;
            }
            pm.prefetch(pm.peek(self.rk(n, i)) + 8, self.kind.bytes());
        }
    }

    /// Child to follow in an internal node, or the sibling when the key has moved right
    /// (FAST's reader: an entry whose pointer equals its left neighbour's is a transient
    /// duplicate and is skipped).
    fn child<M: PmMem>(&self, pm: &M, n: u64, key: &[u8]) -> u64 {
        let sib = pm.load(n + 8);
        if sib != 0 && self.nonempty(pm, sib) && self.cmp(pm, pm.load(self.rk(sib, 0)), key).is_le()
        {
            return sib;
        }
        self.hint_keys(pm, n);
        let mut prev = pm.load(n);
        let mut i = 0;
        while i < self.card {
            let p = pm.load(self.rp(n, i));
            if p == 0 {
                break;
            }
            if p != prev && self.cmp(pm, pm.load(self.rk(n, i)), key).is_gt() {
                return prev;
            }
            prev = p;
            i += 1;
        }
        prev
    }

    fn find_leaf<M: PmMem>(&self, pm: &M, key: &[u8]) -> u64 {
        let mut n = self.root(pm);
        while pm.load(n) != 0 {
            n = self.child(pm, n, key);
        }
        n
    }

    /// Leaf (after moving right) and index of `key`'s live entry.
    fn locate<M: PmMem>(&self, pm: &M, key: &[u8]) -> (u64, Option<usize>) {
        let mut n = self.find_leaf(pm, key);
        loop {
            self.hint_keys(pm, n);
            let mut prev = 0;
            let mut i = 0;
            while i < self.card {
                let p = pm.load(self.rp(n, i));
                if p == 0 {
                    break;
                }
                if p != prev {
                    match self.cmp(pm, pm.load(self.rk(n, i)), key) {
                        Ordering::Equal => return (n, Some(i)),
                        Ordering::Greater => return (n, None),
                        Ordering::Less => {}
                    }
                }
                prev = p;
                i += 1;
            }
            let sib = pm.load(n + 8);
            if sib != 0
                && self.nonempty(pm, sib)
                && self.cmp(pm, pm.load(self.rk(sib, 0)), key).is_le()
            {
                n = sib;
            } else {
                return (n, None);
            }
        }
    }

    /// FAST insert of (key word, pointer) into a node with `num` entries and room for one.
    fn insert_key<M: PmMem>(&self, pm: &mut M, n: u64, kw: u64, ptr: u64, num: usize, flush: bool) {
        let (level, sc, _) = hdr(pm, n);
        let sc = if sc % 2 == 0 { sc } else { sc.wrapping_add(1) };
        if num == 0 {
            pm.store(self.rk(n, 0), kw);
            pm.store(self.rp(n, 0), ptr);
            pm.store(self.rp(n, 1), 0);
            if flush {
                // The original flushes the node's first 64 B: through the end marker with
                // line-contained entries; with its own 56 B header the end marker (+80) is
                // on the next line and left unflushed, as there.
                let len = if self.cfg.header_bytes == HDR_RECIPE {
                    LINE
                } else {
                    self.rp(n, 1) + 8 - n
                };
                clflush(pm, n, len);
            }
        } else {
            // New end marker, flushed (the 8 B pointer) when it starts a line.
            pm.store(self.rp(n, num + 1), 0);
            if flush && self.rp(n, num + 1).is_multiple_of(LINE) {
                clflush(pm, self.rp(n, num + 1), 8);
            }
            let key_of = |pm: &M, i: usize| pm.load(self.rk(n, i));
            let mut placed = false;
            let mut i = num as isize - 1;
            while i >= 0 {
                let iu = i as usize;
                let k = key_of(pm, iu);
                if self.cmp_words(pm, kw, k).is_lt() {
                    pm.store(self.rp(n, iu + 1), pm.load(self.rp(n, iu)));
                    pm.store(self.rk(n, iu + 1), k);
                    // The original flushes 64 B from the moved entry when it starts a line or
                    // straddles two (then both lines).
                    let rem = self.rk(n, iu + 1) % LINE;
                    if flush && (rem == 0 || rem + ENTRY > LINE) {
                        clflush(pm, self.rk(n, iu + 1), LINE);
                    }
                } else {
                    pm.store(self.rp(n, iu + 1), pm.load(self.rp(n, iu)));
                    pm.store(self.rk(n, iu + 1), kw);
                    pm.store(self.rp(n, iu + 1), ptr);
                    if flush {
                        clflush(pm, self.rk(n, iu + 1), ENTRY);
                    }
                    placed = true;
                    break;
                }
                i -= 1;
            }
            if !placed {
                pm.store(self.rp(n, 0), pm.load(n));
                pm.store(self.rk(n, 0), kw);
                pm.store(self.rp(n, 0), ptr);
                if flush {
                    clflush(pm, self.rk(n, 0), ENTRY);
                }
            }
        }
        set_hdr(pm, n, level, sc, num as i16);
    }

    /// Order of two stored key words.
    fn cmp_words<M: PmMem>(&self, pm: &M, a: u64, b: u64) -> Ordering {
        super::ordered::cmp_words(pm, self.kind, a, b)
    }

    /// Insert into node `n` at its level (moving right if the key belongs to the sibling),
    /// splitting when full.
    fn store<M: PmMem>(&self, pm: &mut M, mut n: u64, kw: u64, ptr: u64) {
        loop {
            let sib = pm.load(n + 8);
            if sib != 0
                && self.nonempty(pm, sib)
                && self.cmp_words(pm, kw, pm.load(self.rk(sib, 0))).is_gt()
            {
                n = sib;
            } else {
                break;
            }
        }
        let num = self.count(pm, n);
        if num < self.card - 1 {
            self.insert_key(pm, n, kw, ptr, num, true);
            return;
        }
        // FAIR split (split work, up to the parent's insert).
        pm.set_resizing(true);
        let (level, sc, _) = hdr(pm, n);
        let sibling = self.new_node(pm, level);
        let m = num / 2;
        let split_key = pm.load(self.rk(n, m));
        let mut cnt = 0;
        let leaf = pm.load(n) == 0;
        let first = if leaf { m } else { m + 1 };
        for i in first..num {
            let (k, p) = (pm.load(self.rk(n, i)), pm.load(self.rp(n, i)));
            self.insert_key(pm, sibling, k, p, cnt, false);
            cnt += 1;
        }
        if !leaf {
            pm.store(sibling, pm.load(self.rp(n, m)));
        }
        pm.store(sibling + 8, pm.load(n + 8));
        let used = if self.cfg.no_bloat {
            self.cfg.header_bytes + ENTRY * (cnt as u64 + 1)
        } else {
            self.cfg.node_bytes
        };
        clflush(pm, sibling, used);
        pm.fence();
        pm.store(n + 8, sibling);
        clflush(pm, n, self.cfg.header_bytes);
        let sc = if sc % 2 == 0 {
            sc.wrapping_add(2)
        } else {
            sc.wrapping_add(1)
        };
        pm.store(self.rp(n, m), 0);
        clflush(pm, self.rk(n, m), ENTRY);
        set_hdr(pm, n, level, sc, m as i16 - 1);
        if !self.cfg.coalesce {
            clflush(pm, n + 16, 8);
        }
        if self.cmp_words(pm, kw, split_key).is_lt() {
            self.insert_key(pm, n, kw, ptr, m, true);
        } else {
            self.insert_key(pm, sibling, kw, ptr, cnt, true);
        }
        // Parent.
        if self.root(pm) == n {
            let root = self.new_node(pm, level + 1);
            pm.store(root, n);
            pm.store(self.rk(root, 0), split_key);
            pm.store(self.rp(root, 0), sibling);
            pm.store(self.rp(root, 1), 0);
            set_hdr(pm, root, level + 1, 0, 0);
            let used = if self.cfg.no_bloat {
                LINE
            } else {
                self.cfg.node_bytes
            };
            clflush(pm, root, used);
            pm.store(self.meta, root);
            clflush(pm, self.meta, 8);
        } else {
            self.insert_internal(pm, split_key, sibling, level + 1);
        }
        pm.set_resizing(false);
    }

    fn insert_internal<M: PmMem>(&self, pm: &mut M, kw: u64, right: u64, level: u32) {
        let mut p = self.root(pm);
        if hdr(pm, p).0 < level {
            // Root split not yet published (only after a crash): the B-link chain covers it.
            return;
        }
        let key = self.key_bytes(pm, kw);
        while hdr(pm, p).0 > level {
            p = self.child(pm, p, &key);
        }
        self.store(pm, p, kw, right);
    }

    fn key_bytes<M: PmMem>(&self, pm: &M, kw: u64) -> KeyBytes {
        match self.kind {
            KeyType::Int => KeyBytes::of_int(kw),
            KeyType::Str => record_key(pm, self.kind, kw),
        }
    }

    /// Remove entry `i` of leaf `n` by shifting left, flushing each line as the shift leaves
    /// it (and the last one), so readers see at most one duplicate.
    fn remove_at<M: PmMem>(&self, pm: &mut M, n: u64, i: usize) {
        let (level, sc, li) = hdr(pm, n);
        let sc = if sc % 2 == 0 { sc.wrapping_add(1) } else { sc };
        set_hdr(pm, n, level, sc, li);
        let num = self.count(pm, n);
        let left = if i == 0 {
            pm.load(n)
        } else {
            pm.load(self.rp(n, i - 1))
        };
        pm.store(self.rp(n, i), left);
        let mut last_flushed = u64::MAX;
        for j in i..num {
            pm.store(self.rk(n, j), pm.load(self.rk(n, j + 1)));
            pm.store(
                self.rp(n, j),
                if j + 1 < self.card {
                    pm.load(self.rp(n, j + 1))
                } else {
                    0
                },
            );
            let end_of_line = (self.rk(n, j) + ENTRY).is_multiple_of(LINE);
            if end_of_line || j + 1 == num {
                let line = self.rk(n, j) & !(LINE - 1);
                if line != last_flushed {
                    clflush(pm, line, LINE);
                    last_flushed = line;
                }
            }
        }
        set_hdr(pm, n, level, sc, num as i16 - 2);
    }

    /// Fewest entries a non-root node keeps after a delete: the original's
    /// `(cardinality - 1) * 0.5` (14 of 29 in 512 B nodes, 6 of 13 in 256 B ones).
    fn min_entries(&self) -> usize {
        (self.card - 1) / 2
    }

    /// The node at `level` whose key range holds `key` (None if the tree is lower).
    fn node_at<M: PmMem>(&self, pm: &M, key: &[u8], level: u32) -> Option<u64> {
        let mut n = self.root(pm);
        if hdr(pm, n).0 < level {
            return None;
        }
        while hdr(pm, n).0 > level {
            n = self.child(pm, n, key);
        }
        loop {
            let sib = pm.load(n + 8);
            if sib != 0
                && self.nonempty(pm, sib)
                && self.cmp(pm, pm.load(self.rk(sib, 0)), key).is_le()
            {
                n = sib;
            } else {
                return Some(n);
            }
        }
    }

    /// The sibling pair under `parent` to rebalance for `n`: `n` and its left neighbour, or,
    /// when `n` is the leftmost child, `n` and its right neighbour (as the original does);
    /// with the index of the right one's separator. None when `n` has no separator in
    /// `parent` and no right neighbour there (an orphan of a crash: left as it is).
    fn pair<M: PmMem>(&self, pm: &M, parent: u64, n: u64) -> Option<(u64, u64, usize)> {
        let c = self.count(pm, parent);
        let lm = pm.load(parent);
        if lm == n {
            let r = pm.load(n + 8);
            return (c > 0 && r != 0 && pm.load(self.rp(parent, 0)) == r).then_some((n, r, 0));
        }
        let j = (0..c).find(|&j| pm.load(self.rp(parent, j)) == n)?;
        let left = if j == 0 {
            lm
        } else {
            pm.load(self.rp(parent, j - 1))
        };
        (pm.load(left + 8) == n).then_some((left, n, j))
    }

    /// After a delete left `n` (not the root) below `min_entries`: merge it with a sibling or
    /// redistribute their entries, then repair the parent the same way if it fell below,
    /// up to the root, which is dropped when it is left with no separator. `key` lies in
    /// `n`'s range, so every parent up the way is on its search path.
    fn rebalance<M: PmMem>(&self, pm: &mut M, key: &[u8], mut n: u64) {
        loop {
            let level = hdr(pm, n).0;
            let Some(parent) = self.node_at(pm, key, level + 1) else {
                return;
            };
            let Some((left, right, j)) = self.pair(pm, parent, n) else {
                return;
            };
            if !self.combine(pm, parent, j, left, right, level) {
                return;
            }
            if parent == self.root(pm) {
                self.collapse_root(pm);
                return;
            }
            if self.count(pm, parent) >= self.min_entries() {
                return;
            }
            n = parent;
        }
    }

    /// A root left with no separator (only its leftmost child) hands the root to that child:
    /// the superblock's pointer is persisted, then the old root freed.
    fn collapse_root<M: PmMem>(&self, pm: &mut M) {
        let root = self.root(pm);
        if hdr(pm, root).0 == 0 || self.count(pm, root) > 0 || pm.load(root + 8) != 0 {
            return;
        }
        pm.store(self.meta, pm.load(root));
        clflush(pm, self.meta, 8);
        self.free_node(pm, root);
    }

    /// Merge `right` into `left` (siblings at `level`, `right`'s separator at `j` in
    /// `parent`) when their entries fit one node, else redistribute them; true if merged
    /// (the parent lost an entry). The separator is removed from the parent first (FAST),
    /// after which `right` is reachable only through `left`'s sibling pointer (B-link), so
    /// every later step is a FAIR one: what a crash can interrupt is either invisible (past
    /// an end marker, in an unlinked new node) or a left node holding entries its right
    /// neighbour also holds, which readers never reach and recovery truncates.
    fn combine<M: PmMem>(
        &self,
        pm: &mut M,
        parent: u64,
        j: usize,
        left: u64,
        right: u64,
        level: u32,
    ) -> bool {
        let internal = level > 0;
        // All entries of the pair in order; an internal right node's leftmost child comes
        // down under the separator (the original's `deleted_key_from_parent`).
        let mut s = self.live(pm, left);
        let num_l = s.len();
        if internal {
            s.push((pm.load(self.rk(parent, j)), pm.load(right)));
        }
        s.extend(self.live(pm, right));
        if s.len() < self.card {
            self.stage_append(pm, left, num_l, &s[num_l..]);
            self.remove_at(pm, parent, j);
            self.publish_append(pm, left, num_l, &s[num_l..]);
            pm.store(left + 8, pm.load(right + 8));
            clflush(pm, left + 8, 8);
            self.free_node(pm, right);
            return true;
        }
        // Redistribute: `left` keeps `keep` entries; the rest go to a new right node (the
        // original builds one in this case too: entries cannot leave the front of a node
        // in place), and the entry at the cut becomes the separator (internal: it goes up,
        // its child becomes the new node's leftmost).
        let keep = if internal {
            (s.len() - 1) / 2
        } else {
            s.len() / 2
        };
        let (up, down, rest) = if internal {
            (s[keep].0, s[keep].1, &s[keep + 1..])
        } else {
            (s[keep].0, 0, &s[keep..])
        };
        let fresh = self.build(pm, level, down, rest, pm.load(right + 8));
        if keep > num_l {
            self.stage_append(pm, left, num_l, &s[num_l..keep]);
            self.remove_at(pm, parent, j);
            self.publish_append(pm, left, num_l, &s[num_l..keep]);
            pm.store(left + 8, fresh);
            clflush(pm, left + 8, 8);
        } else {
            self.remove_at(pm, parent, j);
            pm.store(left + 8, fresh);
            clflush(pm, left + 8, 8);
            // Truncate as a split does (what lies past the cut is >= the new separator).
            let (_, sc, _) = hdr(pm, left);
            pm.store(self.rp(left, keep), 0);
            clflush(pm, self.rk(left, keep), ENTRY);
            set_hdr(pm, left, level, sc, keep as i16 - 1);
        }
        self.free_node(pm, right);
        self.insert_internal(pm, up, fresh, level + 1);
        false
    }

    /// A new node at `level` holding `entries`, flushed (whole, or its used lines with
    /// no_bloat) before anything points to it.
    fn build<M: PmMem>(
        &self,
        pm: &mut M,
        level: u32,
        leftmost: u64,
        entries: &[(u64, u64)],
        sibling: u64,
    ) -> u64 {
        let n = self.new_node(pm, level);
        pm.store(n, leftmost);
        pm.store(n + 8, sibling);
        for (i, &(k, p)) in entries.iter().enumerate() {
            pm.store(self.rk(n, i), k);
            pm.store(self.rp(n, i), p);
        }
        set_hdr(pm, n, level, 0, entries.len() as i16 - 1);
        let used = if self.cfg.no_bloat {
            self.cfg.header_bytes + ENTRY * (entries.len() as u64 + 1)
        } else {
            self.cfg.node_bytes
        };
        clflush(pm, n, used);
        n
    }

    /// First half of a FAST append of `entries` after node `n`'s `c` entries: all but the
    /// first are written past the end marker (slot `c`, which stays null, so they are not
    /// visible yet), every pointer slot after them is nulled, and every line from slot `c`
    /// to the node's end is flushed. The flush makes the tail durably null: an insert's end
    /// marker is never flushed (as in the original), so an older copy of moved entries may
    /// still be durable there; once this node's range grows, such a copy would no longer be
    /// cut off by recovery.
    fn stage_append<M: PmMem>(&self, pm: &mut M, n: u64, c: usize, entries: &[(u64, u64)]) {
        for (i, &(k, p)) in entries.iter().enumerate().skip(1) {
            pm.store(self.rk(n, c + i), k);
            pm.store(self.rp(n, c + i), p);
        }
        for j in c + entries.len()..self.card {
            if pm.load(self.rp(n, j)) != 0 {
                pm.store(self.rp(n, j), 0);
            }
        }
        let from = self.rk(n, c);
        clflush(pm, from, n + self.cfg.node_bytes - from);
    }

    /// Second half: the first entry's pointer replaces the end marker, so all appear at once.
    fn publish_append<M: PmMem>(&self, pm: &mut M, n: u64, c: usize, entries: &[(u64, u64)]) {
        let Some(&(k, p)) = entries.first() else {
            return;
        };
        pm.store(self.rk(n, c), k);
        pm.store(self.rp(n, c), p);
        clflush(pm, self.rk(n, c), ENTRY);
        let (level, sc, _) = hdr(pm, n);
        set_hdr(pm, n, level, sc, (c + entries.len()) as i16 - 1);
    }

    /// Free a node already unreachable (the unlinking stores fenced). With no_bloat a new
    /// node's unused lines are not flushed, so a reused block must be durably zero.
    fn free_node<M: PmMem>(&self, pm: &mut M, n: u64) {
        if self.cfg.no_bloat {
            free_zeroed(pm, n, self.cfg.node_bytes);
        } else {
            pm.free(n, self.cfg.node_bytes);
        }
    }

    /// Recovery of one node: write `entries` if they differ from what it holds, null every
    /// pointer slot after them, reset the header, and persist the header line and every line
    /// from the first rewritten slot to the node's end (so no stale pointer past the end
    /// marker is durable).
    fn settle<M: PmMem>(&self, pm: &mut M, n: u64, entries: &[(u64, u64)]) {
        let c = self.count(pm, n);
        let same = c == entries.len()
            && entries
                .iter()
                .enumerate()
                .all(|(i, &(k, p))| pm.load(self.rk(n, i)) == k && pm.load(self.rp(n, i)) == p);
        let from = if same { entries.len() } else { 0 };
        for (i, &(k, p)) in entries.iter().enumerate().skip(from) {
            pm.store(self.rk(n, i), k);
            pm.store(self.rp(n, i), p);
        }
        for j in entries.len()..self.card {
            if pm.load(self.rp(n, j)) != 0 {
                pm.store(self.rp(n, j), 0);
            }
        }
        let level = hdr(pm, n).0;
        set_hdr(pm, n, level, 0, entries.len() as i16 - 1);
        let start = if from < self.card {
            self.rk(n, from)
        } else {
            n
        };
        pm.flush(n);
        let mut line = start & !(LINE - 1);
        while line < n + self.cfg.node_bytes {
            if line != n {
                pm.flush(line);
            }
            line += LINE;
        }
        pm.fence();
    }

    /// Live entries of a node (transient duplicates dropped).
    fn live<M: PmMem>(&self, pm: &M, n: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        self.live_into(pm, n, &mut out);
        out
    }

    /// [`live`](Self::live) into `out` (cleared first): a scan reuses one buffer for its
    /// leaves.
    fn live_into<M: PmMem>(&self, pm: &M, n: u64, out: &mut Vec<(u64, u64)>) {
        out.clear();
        let mut prev = pm.load(n);
        for i in 0..self.count(pm, n) {
            let p = pm.load(self.rp(n, i));
            let dup = if i == 0 && prev == 0 {
                false
            } else {
                p == prev
            };
            if !dup {
                out.push((pm.load(self.rk(n, i)), p));
            }
            prev = p;
        }
    }
}

fn hdr<M: PmMem>(pm: &M, n: u64) -> (u32, u8, i16) {
    let w = pm.load(n + 16);
    (w as u32, (w >> 32) as u8, (w >> 48) as i16)
}

fn set_hdr<M: PmMem>(pm: &mut M, n: u64, level: u32, sc: u8, last: i16) {
    let w = level as u64 | (sc as u64) << 32 | (last as u16 as u64) << 48;
    pm.store(n + 16, w);
}

/// The operations on key bytes (`kind` bytes long), on any view of the region.
impl FastFair {
    fn insert_bytes<M: PmMem>(&mut self, pm: &mut M, key: &[u8], value: u64) -> bool {
        let (leaf, found) = self.locate(pm, key);
        if found.is_some() {
            return false;
        }
        // Persisted with the original's clflush (fence, lines, fence), as its string keys are.
        let rec = new_record_fenced(pm, self.kind, key, value);
        let kw = match self.kind {
            KeyType::Int => u64::from_be_bytes(key.try_into().unwrap()),
            KeyType::Str => rec,
        };
        self.store(pm, leaf, kw, rec);
        true
    }

    fn lookup_bytes<M: PmMem>(&self, pm: &M, key: &[u8]) -> Option<u64> {
        match self.locate(pm, key) {
            (n, Some(i)) => Some(pm.load(pm.load(self.rp(n, i)))),
            _ => None,
        }
    }

    fn update_bytes<M: PmMem>(&mut self, pm: &mut M, key: &[u8], value: u64) -> bool {
        match self.locate(pm, key) {
            (n, Some(i)) => {
                let rec = pm.load(self.rp(n, i));
                pm.store(rec, value);
                clflush(pm, rec, 8);
                true
            }
            _ => false,
        }
    }

    /// FAST removal from the leaf; a non-root leaf left below `min_entries` is merged or
    /// redistributed with a sibling (`rebalance`). An integer key's record is freed once the
    /// removal is fenced; a string key's is kept (it may be a separator, and a stale copy
    /// past an end marker compares through it: a reused record would change its key).
    fn delete_bytes<M: PmMem>(&mut self, pm: &mut M, key: &[u8]) -> bool {
        let (leaf, Some(i)) = self.locate(pm, key) else {
            return false;
        };
        let rec = pm.load(self.rp(leaf, i));
        self.remove_at(pm, leaf, i);
        if self.kind == KeyType::Int {
            pm.free(rec, record_bytes(self.kind));
        }
        if leaf != self.root(pm) && self.count(pm, leaf) < self.min_entries() {
            self.rebalance(pm, key, leaf);
        }
        true
    }

    fn scan_bytes<M: PmMem>(&self, pm: &M, start: &[u8], n: usize) -> Vec<(KeyBytes, u64)> {
        let mut out = scan_out(n);
        let mut entries = Vec::with_capacity(self.card);
        let mut leaf = self.find_leaf(pm, start);
        while leaf != 0 && out.len() < n {
            self.live_into(pm, leaf, &mut entries);
            // The records lie anywhere in the region: ask the host for those the scan may
            // read before reading the first (a host hint only, nothing is modelled).
            for &(_, p) in entries.iter().take(n - out.len()) {
                pm.prefetch(p, 8 + self.kind.bytes());
            }
            for &(k, p) in &entries {
                if out.len() == n {
                    break;
                }
                if self.cmp(pm, k, start).is_ge() {
                    out.push((self.key_bytes(pm, k), pm.load(p)));
                }
            }
            leaf = pm.load(leaf + 8);
        }
        out
    }

    /// FAST&FAIR needs no log. Per level, top down, left to right: drop the transient
    /// duplicate an interrupted shift leaves; cut a node at the first entry its right
    /// neighbour covers — a key >= the neighbour's low fence (its separator in the level
    /// above, recovered first, else its first key), or, internal, the neighbour's leftmost
    /// child: an interrupted split, redistribution or merge; then null the pointer slots
    /// past the entries and persist them with the header. A root left without separators
    /// (crash inside a root collapse) hands the root to its child (the old one leaks).
    fn recover(&mut self, region: &mut PmRegion) {
        let pm = &mut Instr::new(region);
        let mut first = self.root(pm);
        // Low fence of each node of the current level, from the level above.
        let mut low: std::collections::HashMap<u64, u64> = Default::default();
        loop {
            let level = hdr(pm, first).0;
            let mut next_low = std::collections::HashMap::new();
            let mut n = first;
            while n != 0 {
                let mut e = self.live(pm, n);
                let sib = pm.load(n + 8);
                if sib != 0 {
                    let fence = low
                        .get(&sib)
                        .copied()
                        .or_else(|| self.nonempty(pm, sib).then(|| pm.load(self.rk(sib, 0))));
                    let sib_lm = if level > 0 { pm.load(sib) } else { 0 };
                    let cut = e.iter().position(|&(k, p)| {
                        fence.is_some_and(|f| self.cmp_words(pm, k, f).is_ge())
                            || (level > 0 && p == sib_lm)
                    });
                    if let Some(c) = cut {
                        e.truncate(c);
                    }
                }
                self.settle(pm, n, &e);
                if level > 0 {
                    if let Some(&f) = low.get(&n) {
                        next_low.insert(pm.load(n), f);
                    }
                    next_low.extend(e.iter().map(|&(k, p)| (p, k)));
                }
                n = sib;
            }
            low = next_low;
            let down = pm.load(first);
            if down == 0 {
                break;
            }
            first = down;
        }
        let root = self.root(pm);
        if hdr(pm, root).0 > 0 && self.count(pm, root) == 0 && pm.load(root + 8) == 0 {
            pm.store(self.meta, pm.load(root));
            clflush(pm, self.meta, 8);
        }
    }

    fn check<M: PmMem>(&self, pm: &M) -> Result<(), String> {
        let root = self.root(pm);
        let mut first = root;
        let mut level = hdr(pm, root).0;
        // Children named by the level above (each once), to be found in this level's chain.
        let mut named: Option<std::collections::HashSet<u64>> = None;
        loop {
            let mut n = first;
            let mut prev_key: Option<u64> = None;
            let mut children = std::collections::HashSet::new();
            while n != 0 {
                let (l, _, _) = hdr(pm, n);
                if l != level {
                    return Err(format!(
                        "node {n:#x} at level {l} in chain of level {level}"
                    ));
                }
                if let Some(named) = named.as_mut() {
                    // Unnamed nodes are orphans of a crash, reachable by sibling pointers.
                    named.remove(&n);
                }
                let c = self.count(pm, n);
                if c >= self.card {
                    return Err(format!("node {n:#x} has {c} entries, no end marker"));
                }
                let live = self.live(pm, n);
                if live.len() != c {
                    return Err(format!("node {n:#x} has a duplicate entry"));
                }
                for &(k, p) in &live {
                    if let Some(pk) = prev_key {
                        if !self.cmp_words(pm, pk, k).is_lt() {
                            return Err(format!("keys out of order in level {level} at {n:#x}"));
                        }
                    }
                    prev_key = Some(k);
                    if level == 0 {
                        let rk_ = record_key(pm, self.kind, p);
                        if self.cmp(pm, k, &rk_) != Ordering::Equal {
                            return Err(format!("leaf {n:#x}: entry key differs from its record"));
                        }
                    } else if hdr(pm, p).0 != level - 1 {
                        return Err(format!("node {n:#x}: child {p:#x} at wrong level"));
                    }
                }
                if level > 0 {
                    if hdr(pm, pm.load(n)).0 != level - 1 {
                        return Err(format!("node {n:#x}: leftmost child at wrong level"));
                    }
                    for p in std::iter::once(pm.load(n)).chain(live.iter().map(|e| e.1)) {
                        if !children.insert(p) {
                            return Err(format!("level {level}: child {p:#x} named twice"));
                        }
                    }
                }
                n = pm.load(n + 8);
            }
            if let Some(missing) = named.and_then(|m| m.into_iter().next()) {
                return Err(format!(
                    "level {level}: child {missing:#x} of the level above is not in the chain"
                ));
            }
            if level == 0 {
                if pm.load(first) != 0 {
                    return Err("leaf with a leftmost child".into());
                }
                return Ok(());
            }
            named = Some(children);
            first = pm.load(first);
            level -= 1;
        }
    }
}

super::ordered::tree_index!(FastFair);

#[cfg(test)]
mod tests {
    use super::super::ordered::int_key;
    use super::super::ordered::testing::*;
    use super::*;
    use proptest::prelude::*;

    fn tree<M: PmMem>(pm: &mut M, kind: KeyType) -> FastFair {
        FastFair::new(pm, kind, FastFairConfig::default())
    }

    #[test]
    fn model_int_and_str() {
        model_both_kinds(tree, 1, 6000);
    }

    #[test]
    fn xpline_nodes_no_bloat_coalesce() {
        let cfg = FastFairConfig {
            node_bytes: 256,
            no_bloat: true,
            coalesce: true,
            header_bytes: HDR,
        };
        let mut pm = test_pm();
        let mut t = FastFair::new(&mut pm, KeyType::Int, cfg);
        run_model(&mut t, &mut pm, &random_ops(KeyType::Int, 2, 4000, 2000));
    }

    #[test]
    fn prop_model() {
        model_property(tree, 24, 400, |_, _| {});
    }

    /// Hand-computed flush and fence counts for inserts without a split and for a split.
    /// Every flush call is the original's `clflush` (a fence before and after).
    #[test]
    fn flush_counts_closed_form() {
        let mut pm = test_pm();
        let mut t = tree(&mut pm, KeyType::Int);
        let d = |pm: &TestPm, b: &crate::pmindex::PmStats| {
            let x = pm.stats().minus(b);
            (x.flushes, x.fences, x.resize_flushes)
        };
        // Empty leaf: record (1) + line 0 (1).
        let b = pm.stats();
        assert!(t.insert_bytes(&mut pm, &int_key(100), 1));
        assert_eq!(d(&pm, &b), (2, 4, 0));
        // Appending at the end: record + the new entry's line.
        for k in 1..6u64 {
            let b = pm.stats();
            t.insert_bytes(&mut pm, &int_key(100 + k), 1);
            assert_eq!(d(&pm, &b), (2, 4, 0), "append {k}");
        }
        // Now entries 0..6 at offsets 32..128; lines start at entries 2 and 6 (none yet at 6).
        // Inserting the smallest key shifts entries 5..0 right: entries land at 6 (a line
        // start: flush), 2 (flush), and the new entry at 0 (flush) + record = 4.
        let b = pm.stats();
        t.insert_bytes(&mut pm, &int_key(1), 1);
        assert_eq!(d(&pm, &b), (4, 8, 0));
        assert_eq!(pm.stats().ntstores, 0);

        // A split: a root leaf of 29 entries (the original splits at cardinality - 1) takes
        // a 30th, the largest key. Record (1); then split work: the sibling with entries
        // 14..28 copied unflushed, then flushed whole (8 lines), a fence, the header line,
        // the cut entry 14 (1 line), the header again (last index); the new key into the
        // sibling at its entry 15 (1 line); a new root flushed whole (8) and the root
        // pointer (1).
        let mut pm = test_pm();
        let mut t = tree(&mut pm, KeyType::Int);
        for k in 0..29u64 {
            t.insert_bytes(&mut pm, &int_key(k), 1);
        }
        let b = pm.stats();
        t.insert_bytes(&mut pm, &int_key(29), 1);
        assert_eq!(d(&pm, &b), (1 + 8 + 1 + 1 + 1 + 1 + 8 + 1, 2 * 8 + 1, 21));
    }

    /// Hand-computed persist counts for a merge: leaves 10..140 | 150..300 under a root;
    /// deleting 10 leaves 13 < 14 entries, the pair fits one node (29), so the right leaf is
    /// merged in and the root, left without a separator, collapses.
    #[test]
    fn merge_flush_counts_closed_form() {
        let mut pm = test_pm();
        let mut t = tree(&mut pm, KeyType::Int);
        for i in 1..=30 {
            t.insert_bytes(&mut pm, &int_key(10 * i), i);
        }
        let left = pm.load(t.root(&pm));
        assert_eq!(
            (t.count(&pm, left), t.count(&pm, pm.load(left + 8))),
            (14, 16)
        );
        let b = pm.stats();
        assert!(t.delete_bytes(&mut pm, &int_key(10)));
        // Shift left of 14 entries: lines 0..3 as the shift leaves them (4); staging the 16
        // appended entries from slot 13 to the node's end: lines 3..7 under one fence (5);
        // the separator out of the root (1); the first appended entry (1); the sibling
        // pointer (1); the superblock's root pointer (1).
        assert_eq!(pm.stats().flushes - b.flushes, 4 + 5 + 1 + 1 + 1 + 1);
        // Each flush call fences before and after.
        assert_eq!(pm.stats().fences - b.fences, 2 * (4 + 1 + 1 + 1 + 1 + 1));
        assert_eq!(t.root(&pm), left);
        assert_eq!((t.count(&pm, left), pm.load(left + 8)), (29, 0));
        t.check(&pm).unwrap();
    }

    fn recipe_tree<M: PmMem>(pm: &mut M, kind: KeyType) -> FastFair {
        let cfg = FastFairConfig {
            header_bytes: HDR_RECIPE,
            ..FastFairConfig::default()
        };
        FastFair::new(pm, kind, cfg)
    }

    #[test]
    fn recipe_layout_model_and_standard_checks() {
        crate::pmindex::testing::standard_checks(&SPEC_RECIPE).unwrap();
        for kind in [KeyType::Int, KeyType::Str] {
            let mut pm = test_pm();
            let mut t = recipe_tree(&mut pm, kind);
            assert_eq!(t.card, 28, "the original's cardinality (512 - 56) / 16");
            run_model(&mut t, &mut pm, &random_ops(kind, 4, 3000, 1500));
        }
    }

    /// The original's layout by hand: entry i at 56 + 16 i, so entries 0, 4, 8, ... straddle
    /// two lines and no entry starts one; end markers start a line at entries 4, 8, ....
    #[test]
    fn recipe_layout_flush_counts_closed_form() {
        let mut pm = test_pm();
        let mut t = recipe_tree(&mut pm, KeyType::Int);
        let d = |pm: &TestPm, b: &crate::pmindex::PmStats| {
            let x = pm.stats().minus(b);
            (x.flushes, x.fences)
        };
        // Record (1 flush, 2 fences) + per insert: the empty node's first 64 B; entries 1
        // and 2 (one line each); entry 3 and its end marker at +128 (a line start); entry
        // 4 at 120..136, two lines under one call.
        for (k, want) in [(2, 4), (2, 4), (2, 4), (3, 6), (3, 4)]
            .into_iter()
            .enumerate()
        {
            let b = pm.stats();
            assert!(t.insert_bytes(&mut pm, &int_key(100 + k as u64), 1));
            assert_eq!(d(&pm, &b), want, "append {k}");
        }
        // The smallest key shifts entries 4..0 right: only the move into entry 4 (offset
        // 120, straddling) flushes, 64 B = two lines; then the new entry 0 (56..72, two
        // lines). Record + 2 calls.
        let b = pm.stats();
        t.insert_bytes(&mut pm, &int_key(1), 1);
        assert_eq!(d(&pm, &b), (1 + 2 + 2, 2 + 2 + 2));
        t.check(&pm).unwrap();
    }

    #[test]
    fn crash_every_fence() {
        for kind in [KeyType::Int, KeyType::Str] {
            let n = crash_test(
                |pm| tree(pm, kind),
                FastFair::recover,
                kind,
                260,
                5,
                1,
                false,
            );
            assert!(n > 300, "{n} crash points");
        }
    }

    #[test]
    fn crash_adversarial() {
        let n = crash_test(
            |pm| tree(pm, KeyType::Int),
            FastFair::recover,
            KeyType::Int,
            300,
            9,
            3,
            true,
        );
        assert!(n > 100);
    }

    /// XPLine nodes (13 entries, merge below 6) with every switch: deep trees from few keys.
    const SMALL: FastFairConfig = FastFairConfig {
        node_bytes: 256,
        no_bloat: true,
        coalesce: true,
        header_bytes: HDR,
    };

    /// Every node, level by level from the root: (level, node, entries).
    fn nodes(t: &FastFair, pm: &TestPm) -> Vec<(u32, u64, usize)> {
        let mut out = Vec::new();
        let mut first = t.root(pm);
        loop {
            let mut n = first;
            while n != 0 {
                out.push((hdr(pm, n).0, n, t.count(pm, n)));
                n = pm.load(n + 8);
            }
            if pm.load(first) == 0 {
                return out;
            }
            first = pm.load(first);
        }
    }

    /// What the original's rebalancing maintains: no node but the root below `min_entries`.
    fn assert_min_fill(t: &FastFair, pm: &TestPm) {
        let root = t.root(pm);
        for (level, n, c) in nodes(t, pm) {
            assert!(
                n == root || c >= t.min_entries(),
                "level {level} node {n:#x}: {c} entries < {}",
                t.min_entries()
            );
        }
    }

    /// `n` keys inserted in random order, then `m` random ops of which 60 % are removes.
    fn delete_heavy(kind: KeyType, seed: u64, n: u64, m: usize) -> Vec<Op> {
        use rand::seq::SliceRandom;
        use rand::Rng;
        let mut r = crate::rng::stream(seed, "fastfair.delete-heavy");
        let mut keys: Vec<u64> = (0..n).collect();
        keys.shuffle(&mut r);
        let mut ops: Vec<Op> = keys
            .iter()
            .map(|&k| Op::Insert(key_of(kind, k), k))
            .collect();
        for _ in 0..m {
            let k = key_of(kind, r.random_range(0..n));
            ops.push(match r.random_range(0..10) {
                0..=5 => Op::Remove(k),
                6 => Op::Insert(k, r.random()),
                7 => Op::Update(k, r.random()),
                8 => Op::Lookup(k),
                _ => Op::Scan(k, r.random_range(1..40)),
            });
        }
        ops
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Deletes that merge and redistribute leaves and inner nodes, against a BTreeMap;
        /// afterwards every non-root node is at least half full.
        #[test]
        fn prop_delete_heavy(seed in 0u64..1_000_000, n in 1u64..1500, m in 0usize..3000,
                             small in any::<bool>(), str_keys in any::<bool>()) {
            let kind = if str_keys { KeyType::Str } else { KeyType::Int };
            let cfg = if small { SMALL } else { FastFairConfig::default() };
            let mut pm = test_pm();
            let mut t = FastFair::new(&mut pm, kind, cfg);
            run_model(&mut t, &mut pm, &delete_heavy(kind, seed, n, m));
            assert_min_fill(&t, &pm);
        }
    }

    /// Deleting most keys shrinks the tree (merges, lower height) with every node but the root
    /// at least half full; deleting all leaves one empty leaf and frees every node and (integer
    /// keys) record; a second fill takes exactly the first fill's memory, all of it reused
    /// (integer keys; string keys' records are not freed).
    #[test]
    fn deletes_merge_nodes_and_free_memory() {
        use rand::seq::SliceRandom;
        for cfg in [FastFairConfig::default(), SMALL] {
            for kind in [KeyType::Int, KeyType::Str] {
                let mut pm = test_pm();
                let mut t = FastFair::new(&mut pm, kind, cfg);
                let empty_live = pm.live_bytes();
                let mut keys: Vec<u64> = (0..20_000).collect();
                keys.shuffle(&mut crate::rng::stream(1, "fastfair.merge"));
                for &k in &keys {
                    assert!(t.insert_bytes(&mut pm, &key_of(kind, k), k));
                }
                let full = nodes(&t, &pm);
                let (full_live, full_frontier) = (pm.live_bytes(), pm.used_bytes());
                // Keep one key in 20.
                for &k in keys.iter().filter(|&&k| k % 20 != 0) {
                    assert!(t.delete_bytes(&mut pm, &key_of(kind, k)));
                }
                t.check(&pm).unwrap();
                assert_min_fill(&t, &pm);
                let sparse = nodes(&t, &pm);
                let leaves = sparse.iter().filter(|e| e.0 == 0).count();
                // 1000 keys in leaves of at least min_entries each.
                assert!(
                    leaves <= 1000 / t.min_entries(),
                    "{leaves} leaves for 1000 keys ({} before)",
                    full.iter().filter(|e| e.0 == 0).count()
                );
                assert!(
                    sparse.len() * 10 < full.len(),
                    "{} of {} nodes",
                    sparse.len(),
                    full.len()
                );
                for k in (0..20_000).filter(|k| k % 20 == 0) {
                    assert_eq!(t.lookup_bytes(&pm, &key_of(kind, k)), Some(k));
                    assert!(t.delete_bytes(&mut pm, &key_of(kind, k)));
                }
                t.check(&pm).unwrap();
                let root = t.root(&pm);
                assert_eq!(nodes(&t, &pm), vec![(0, root, 0)], "{cfg:?} {kind:?}");
                // Only the superblock and one empty leaf stay (string keys: and the records).
                let records = match kind {
                    KeyType::Int => 0,
                    KeyType::Str => 20_000 * record_bytes(kind),
                };
                assert_eq!(pm.live_bytes(), empty_live + records, "{cfg:?} {kind:?}");
                // (A redistribution builds its new node before freeing the old one, so the
                // first takes fresh space, plus alignment.)
                let emptied_frontier = pm.used_bytes();
                assert!(
                    emptied_frontier <= full_frontier + 2 * cfg.node_bytes,
                    "{cfg:?} {kind:?}: {emptied_frontier} > {full_frontier}"
                );
                for &k in &keys {
                    assert!(t.insert_bytes(&mut pm, &key_of(kind, k), k));
                }
                t.check(&pm).unwrap();
                assert_eq!(pm.live_bytes(), full_live + records, "{cfg:?} {kind:?}");
                if kind == KeyType::Int {
                    assert_eq!(
                        pm.used_bytes(),
                        emptied_frontier,
                        "{cfg:?}: all blocks reused"
                    );
                }
            }
        }
    }

    /// Crash at every fence of a delete-heavy run (merges, redistributions, root collapses),
    /// strict and adversarial, both key types, both node sizes.
    #[test]
    fn crash_during_merging_deletes() {
        for (cfg, kind, adversarial, stride) in [
            (FastFairConfig::default(), KeyType::Int, false, 1),
            (FastFairConfig::default(), KeyType::Str, true, 2),
            (SMALL, KeyType::Int, false, 1),
            (SMALL, KeyType::Int, true, 1),
            (SMALL, KeyType::Str, false, 2),
        ] {
            let ops: Vec<Op> = delete_heavy(kind, 7, 240, 600)
                .into_iter()
                .filter(|o| !matches!(o, Op::Lookup(..) | Op::Scan(..)))
                .collect();
            let n = crash_test_ops(
                |pm| FastFair::new(pm, kind, cfg),
                FastFair::recover,
                kind,
                &ops,
                11,
                stride,
                adversarial,
            );
            assert!(n > 300, "{n} crash points");
        }
    }

    /// A split leaves copies of the moved entries past the left node's end marker, and an
    /// insert's end marker is not flushed (as in the original), so a later crash can expose
    /// them. Recovery cuts them at the right node's low fence (its separator), not at its
    /// first key: here the right node's first keys were deleted, and the copy of one of
    /// them (190) must not come back.
    #[test]
    fn stale_split_copy_stays_dead_after_crash() {
        let k = |v: u64| int_key(v).to_vec();
        // 30 keys: the 30th splits the leaf into 10..140 | 150..300; slots 15.. of the left
        // keep copies of 160..290.
        let mut ops: Vec<Op> = (1..=30).map(|i| Op::Insert(k(10 * i), i)).collect();
        // Room in the right node, so deleting its first keys does not rebalance.
        ops.extend((31..=40).map(|i| Op::Insert(k(10 * i), i)));
        // Four inserts on the left: 18 entries, end marker in slot 18, a line start: not
        // flushed, so the durable slot 18 is the copy of 190.
        ops.extend((1..=4).map(|i| Op::Insert(k(i), i)));
        ops.extend((15..=19).map(|i| Op::Remove(k(10 * i))));
        ops.push(Op::Update(k(1), 7));
        let n = crash_test_ops(
            |pm| tree(pm, KeyType::Int),
            FastFair::recover,
            KeyType::Int,
            &ops,
            1,
            1,
            false,
        );
        assert!(n > 50);
    }

    /// The framework's harness (persistent allocator, region crash images) on a fill-then-
    /// empty run, with and without the switches.
    #[test]
    fn framework_crash_harness_delete_all() {
        use crate::pmindex::crash::crash_test;
        use crate::pmindex::{CrashCapture, Key, KeyType, Op, RegionConfig, TonicOpts};
        let rcfg = RegionConfig {
            initial_bytes: 64 << 10,
            ..RegionConfig::default()
        };
        let all = TonicOpts {
            no_bloat: true,
            evict_volatile: true,
            xpline_nodes: true,
        };
        for (kt, opts) in [(KeyType::Int, TonicOpts::default()), (KeyType::Str, all)] {
            let keys: Vec<Key> = (0..150u64)
                .map(|i| Key::of(kt, 1 + i * 7919 % 150))
                .collect();
            let mut ops: Vec<Op> = keys.iter().map(|&k| Op::Insert(k, 5)).collect();
            ops.extend(keys.iter().rev().map(|&k| Op::Delete(k)));
            for adversarial in [false, true] {
                let cap = CrashCapture {
                    probability: 1.0,
                    adversarial,
                };
                let r = crash_test(&SPEC, kt, opts, &rcfg, &ops, cap, 3);
                assert_eq!(r.failures, 0, "{r:#?}");
                assert!(r.persist_points > 300, "{r:#?}");
            }
        }
    }
}
