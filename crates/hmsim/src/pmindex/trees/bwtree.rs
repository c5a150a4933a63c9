//! P-BwTree: a B-link tree of logical nodes reached through a mapping table; a node is a
//! chain of delta records over a base node, as RECIPE's converted OpenBwTree persists it:
//! - insert / update / delete: a delta record (kind, key, value, next) is written and
//!   flushed, then the node's mapping-table slot is switched to it (the CAS) and flushed;
//!   as OpenBwTree allocates deltas inline (each base node carries a chunk for 8 deltas
//!   right below it, handed out downward from the base), delta `j` of a chain occupies the
//!   56 B (the size of RECIPE's leaf insert delta: metadata, child pointer, key-value pair,
//!   index pair) ending `56 j` bytes below the base, and its flush covers those 56 B: 6 of
//!   the 8 positions straddle two lines (1.75 lines per delta);
//! - when a chain reaches 8 deltas it is consolidated: a new base node with the merged
//!   entries is flushed whole and the mapping slot switched and flushed;
//! - a consolidation past 128 entries (OpenBwTree's node size upper threshold) splits: the right half becomes a new base under a new
//!   id (flushed, its mapping slot flushed), the left half's base (with the sibling id and
//!   the high key) is flushed and published, then the separator goes into the parent as an
//!   insert delta (same protocol); a root split publishes a new root base and the root id.
//!
//! Layout: superblock `+0` mapping directory, `+8` next id, `+16` root id; directory: 1024
//! chunk pointers; chunk: 4096 8 B slots. Base (48 B + 16 B per entry): kind, count, sibling
//! id, high key, leftmost child id, level, entries (key word, value / child id), preceded in
//! its allocation by the 8 x 56 B delta chunk. Delta (32 B used of its 56 B): kind, key word,
//! value, next. String keys are stored as pointers to persisted key records, persisted as
//! RECIPE's YCSB driver persists a string key before the insert (fence, flush, fence).
//!
//! Recovery: a delta or base written but not published is unreachable; a split whose right
//! half is linked but whose separator is missing is covered by B-link moves; an interrupted
//! root split (a root with a sibling) gets its new root.

use std::cmp::Ordering;

use super::ordered::{
    cmp_stored, new_record_fenced, record_key, scan_out, Instr, KeyBytes, PmMem, LINE,
};
use crate::pmindex::{IndexOptions, IndexSpec, KeyType, PmIndex, PmRegion, PmResult};

pub(crate) static SPEC: IndexSpec = IndexSpec {
    name: "p-bwtree",
    about: "RECIPE's P-BwTree: delta chains on a mapping table, consolidation",
    family: "ordered",
    create,
    recover,
    optimizations: &[],
    key_types: &[KeyType::Int, KeyType::Str],
};

fn create(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let t = BwTree::new(&mut Instr::new(pm), o.key_type);
    Instr::new(pm).set_root(o.root_slot, t.meta);
    Ok(Box::new(t))
}

fn recover(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let mut t = BwTree {
        kind: o.key_type,
        meta: Instr::new(pm).root(o.root_slot),
        scratch: Vec::new(),
    };
    t.recover(pm);
    Ok(Box::new(t))
}

const LEAF: u64 = 1;
const INNER: u64 = 2;
const D_INSERT: u64 = 3;
const D_DELETE: u64 = 4;
/// OpenBwTree's split delta (`LeafSplitNode` / `InnerSplitNode`): key = the split key, value
/// = the new right sibling's id. Keys at or above it have moved right.
const D_SPLIT: u64 = 5;
const CHAIN_MAX: usize = 8;
/// OpenBwTree's `LEAF_NODE_SIZE_UPPER_THRESHOLD` (and the inner one): 128 entries.
const NODE_MAX: usize = 128;
/// `sizeof(LeafInsertNode)` in RECIPE's P-BwTree with 8 B keys and values.
const DELTA_BYTES: u64 = 56;
/// The inline delta chunk below each base node: `CHAIN_MAX` deltas.
const DELTA_AREA: u64 = CHAIN_MAX as u64 * DELTA_BYTES;
const CHUNK_SLOTS: u64 = 4096;
const DIR_SLOTS: u64 = 1024;

#[derive(Clone)]
pub(crate) struct BwTree {
    kind: KeyType,
    meta: u64,
    /// Reused by consolidation for the merged entries (volatile).
    scratch: Vec<(u64, u64)>,
}

/// A search key as the descent compares it: an integer key is its word, a string key its
/// bytes (one load of the record per stored key compared).
trait SearchKey: Copy + Ord {
    fn stored<M: PmMem>(pm: &M, w: u64) -> Self;
    /// Ask the host for what `stored` of word `w` will read (a hint; nothing is modelled).
    fn hint<M: PmMem>(_pm: &M, _w: u64) {}
}

impl SearchKey for u64 {
    fn stored<M: PmMem>(_: &M, w: u64) -> u64 {
        w
    }
}

impl SearchKey for [u8; 24] {
    fn stored<M: PmMem>(pm: &M, w: u64) -> [u8; 24] {
        let mut b = [0u8; 24];
        pm.load_bytes(w + 8, &mut b);
        b
    }
    fn hint<M: PmMem>(pm: &M, w: u64) {
        pm.prefetch(w + 8, 24);
    }
}

/// Where a search ends: the node at the wanted level, its chain length (for the
/// consolidation check after the next delta) and, at the leaves, the entry matching the key
/// (its stored key word and the address of its value word: in a delta or the base).
struct Found {
    id: u64,
    /// The node's base (its inline delta chunk lies below it).
    base: u64,
    chain: usize,
    hit: Option<(u64, u64)>,
}

/// A logical node as its chain shows it (consolidation, scans, checks; searches read the
/// chain and the base in place instead).
struct View {
    base: u64,
    level: u64,
    sibling: u64,
    high: u64,
    leftmost: u64,
    chain: usize,
}

impl BwTree {
    pub(crate) fn new<M: PmMem>(pm: &mut M, kind: KeyType) -> BwTree {
        let meta = pm.alloc(LINE, LINE);
        let dir = pm.alloc(8 * DIR_SLOTS, LINE);
        pm.persist(dir, 8 * DIR_SLOTS);
        pm.store(meta, dir);
        pm.store(meta + 8, 1);
        pm.persist(meta, 16);
        let t = BwTree {
            kind,
            meta,
            scratch: Vec::new(),
        };
        let id = t.new_id(pm);
        let base = t.write_base(pm, LEAF, 0, 0, 0, 0, &[]);
        t.publish(pm, id, base);
        pm.store(meta + 16, id);
        pm.persist(meta + 16, 8);
        t
    }

    /// A fresh node id (the counter is persisted before the id is used).
    fn new_id<M: PmMem>(&self, pm: &mut M) -> u64 {
        let id = pm.load(self.meta + 8);
        pm.store(self.meta + 8, id + 1);
        pm.persist(self.meta + 8, 8);
        let dir = pm.load(self.meta);
        let c = id / CHUNK_SLOTS;
        assert!(c < DIR_SLOTS, "P-BwTree mapping table full");
        if pm.load(dir + 8 * c) == 0 {
            let chunk = pm.alloc(8 * CHUNK_SLOTS, LINE);
            pm.persist(chunk, 8 * CHUNK_SLOTS);
            pm.store(dir + 8 * c, chunk);
            pm.persist(dir + 8 * c, 8);
        }
        id
    }

    fn slot<M: PmMem>(&self, pm: &M, id: u64) -> u64 {
        let dir = pm.load(self.meta);
        pm.load(dir + 8 * (id / CHUNK_SLOTS)) + 8 * (id % CHUNK_SLOTS)
    }

    /// Switch the mapping slot (the CAS) and flush it.
    fn publish<M: PmMem>(&self, pm: &mut M, id: u64, head: u64) {
        let s = self.slot(pm, id);
        pm.store(s, head);
        pm.persist(s, 8);
    }

    #[allow(clippy::too_many_arguments)]
    fn write_base<M: PmMem>(
        &self,
        pm: &mut M,
        kind: u64,
        level: u64,
        sibling: u64,
        high: u64,
        leftmost: u64,
        entries: &[(u64, u64)],
    ) -> u64 {
        let size = 48 + 16 * entries.len() as u64;
        let b = pm.alloc(DELTA_AREA + size, LINE) + DELTA_AREA;
        for (i, w) in [kind, entries.len() as u64, sibling, high, leftmost, level]
            .iter()
            .enumerate()
        {
            pm.store(b + 8 * i as u64, *w);
        }
        for (i, (k, v)) in entries.iter().enumerate() {
            pm.store(b + 48 + 16 * i as u64, *k);
            pm.store(b + 56 + 16 * i as u64, *v);
        }
        pm.persist(b, size);
        b
    }

    fn cmp_words<M: PmMem>(&self, pm: &M, a: u64, b: u64) -> Ordering {
        super::ordered::cmp_words(pm, self.kind, a, b)
    }

    /// The node's entries merged from its base and chain into `entries` (cleared first).
    fn view<M: PmMem>(&self, pm: &M, id: u64, entries: &mut Vec<(u64, u64)>) -> View {
        let (p, chain, split) = self.merge_chain(pm, pm.load(self.slot(pm, id)), entries);
        let (high, sibling) = split.unwrap_or((pm.load(p + 24), pm.load(p + 16)));
        View {
            base: p,
            level: pm.load(p + 40),
            sibling,
            high,
            leftmost: pm.load(p + 32),
            chain,
        }
    }

    /// The base's entries with the chain from `p` (newest first) applied oldest first
    /// (recursion as deep as the chain, so no buffer for it); returns the base, the chain
    /// length and a split delta's (split key, right sibling id).
    fn merge_chain<M: PmMem>(
        &self,
        pm: &M,
        p: u64,
        entries: &mut Vec<(u64, u64)>,
    ) -> (u64, usize, Option<(u64, u64)>) {
        let kind = pm.load(p);
        if !matches!(kind, D_INSERT | D_DELETE | D_SPLIT) {
            let count = pm.load(p + 8);
            entries.clear();
            entries
                .extend((0..count).map(|i| (pm.load(p + 48 + 16 * i), pm.load(p + 56 + 16 * i))));
            return (p, 0, None);
        }
        let (base, chain, split) = self.merge_chain(pm, pm.load(p + 24), entries);
        let k = pm.load(p + 8);
        if kind == D_SPLIT {
            let cut = entries.partition_point(|e| self.cmp_words(pm, e.0, k).is_lt());
            entries.truncate(cut);
            return (base, chain + 1, Some((k, pm.load(p + 16))));
        }
        let pos = entries.binary_search_by(|e| self.cmp_words(pm, e.0, k));
        match (kind, pos) {
            (D_INSERT, Ok(i)) => entries[i].1 = pm.load(p + 16),
            (D_INSERT, Err(i)) => entries.insert(i, (k, pm.load(p + 16))),
            (_, Ok(i)) => {
                entries.remove(i);
            }
            _ => {}
        }
        (base, chain + 1, split)
    }

    fn root<M: PmMem>(&self, pm: &M) -> u64 {
        pm.load(self.meta + 16)
    }

    /// The level of node `id` (read from its base).
    fn level<M: PmMem>(&self, pm: &M, id: u64) -> u64 {
        let mut p = pm.load(self.slot(pm, id));
        while matches!(pm.load(p), D_INSERT | D_DELETE | D_SPLIT) {
            p = pm.load(p + 24);
        }
        pm.load(p + 40)
    }

    /// The node at `level` whose range holds `key`; at the leaves, the entry of `key`.
    fn descend<M: PmMem>(&self, pm: &M, key: &[u8], level: u64) -> Found {
        match self.kind {
            KeyType::Int => self.descend_by(pm, u64::from_be_bytes(key.try_into().unwrap()), level),
            KeyType::Str => self.descend_by(pm, <[u8; 24]>::try_from(key).unwrap(), level),
        }
    }

    /// `descend` for the key of a stored key word.
    fn descend_word<M: PmMem>(&self, pm: &M, w: u64, level: u64) -> Found {
        match self.kind {
            KeyType::Int => self.descend_by(pm, w, level),
            KeyType::Str => self.descend_by(pm, <[u8; 24]>::stored(pm, w), level),
        }
    }

    /// Reads each node in place, as OpenBwTree searches: one walk down the delta chain (the
    /// newest delta on the key decides; for routing, the highest separator at or below the
    /// key), then a binary search of the base. Inner nodes carry insert deltas only
    /// (separators are never removed).
    fn descend_by<K: SearchKey, M: PmMem>(&self, pm: &M, key: K, level: u64) -> Found {
        let mut id = self.root(pm);
        'node: loop {
            let mut p = pm.load(self.slot(pm, id));
            let mut chain = 0;
            // Newest delta on the key itself; newest delta with the highest key below it.
            let mut exact = None;
            let mut below: Option<(K, u64)> = None;
            loop {
                let kind = pm.load(p);
                if !matches!(kind, D_INSERT | D_DELETE | D_SPLIT) {
                    break;
                }
                chain += 1;
                let k = K::stored(pm, pm.load(p + 8));
                if kind == D_SPLIT {
                    // Keys at or above the split key live in the new right sibling (the
                    // deltas newer than the split are all below it).
                    if k <= key {
                        id = pm.load(p + 16);
                        continue 'node;
                    }
                    p = pm.load(p + 24);
                    continue;
                }
                match k.cmp(&key) {
                    Ordering::Equal if exact.is_none() => exact = Some((kind, p)),
                    // Routing (inner nodes) follows insert deltas only.
                    Ordering::Less if kind == D_INSERT && below.is_none_or(|(b, _)| k > b) => {
                        below = Some((k, p));
                    }
                    _ => {}
                }
                p = pm.load(p + 24);
            }
            let base = p;
            let node_level = pm.load(base + 40);
            let sibling = pm.load(base + 16);
            if sibling != 0 && K::stored(pm, pm.load(base + 24)) <= key {
                id = sibling;
                continue;
            }
            if node_level == level && level > 0 {
                return Found {
                    id,
                    base,
                    chain,
                    hit: None,
                };
            }
            // The last base entry at or below the key: (its key, word, address). The binary
            // search's lines are fetched together rather than one dependent miss per probe.
            let count = pm.load(base + 8);
            pm.prefetch(base + 48, 16 * count);
            let (mut lo, mut hi) = (0, count);
            let mut at = None;
            while lo < hi {
                let mid = (lo + hi) / 2;
                // A string key's record lies anywhere: while this probe's key is read, the
                // host fetches the records of both probes that can come next (their words
                // peeked, host-only).
                for next in [(lo + mid) / 2, (mid + 1 + hi) / 2] {
                    if next < count && next != mid {
                        K::hint(pm, pm.peek(base + 48 + 16 * next));
                    }
                }
                let e = base + 48 + 16 * mid;
                let w = pm.load(e);
                let k = K::stored(pm, w);
                if k <= key {
                    lo = mid + 1;
                    at = Some((k, w, e));
                } else {
                    hi = mid;
                }
            }
            if node_level == 0 {
                let hit = match exact {
                    Some((D_INSERT, d)) => Some((pm.load(d + 8), d + 16)),
                    Some(_) => None,
                    None => at.filter(|a| a.0 == key).map(|(_, w, e)| (w, e + 8)),
                };
                return Found {
                    id,
                    base,
                    chain,
                    hit,
                };
            }
            id = match (exact, below, at) {
                (Some((_, d)), _, _) => pm.load(d + 16),
                // A delta at the base entry's key is newer than it.
                (None, Some((bk, d)), Some((ak, _, _))) if bk >= ak => pm.load(d + 16),
                (None, _, Some((_, _, e))) => pm.load(e + 8),
                (None, Some((_, d)), None) => pm.load(d + 16),
                (None, None, None) => pm.load(base + 32),
            };
        }
    }

    /// Prepend a delta to node `id`'s chain (of `chain` deltas over `base`): write it into
    /// the base's inline chunk, flush its 56 B, switch and flush the slot; consolidate a
    /// chain that reaches the limit. (A chain a crash left at the limit gets its delta from
    /// the allocator; recovery consolidates it.)
    #[allow(clippy::too_many_arguments)]
    fn add_delta<M: PmMem>(&mut self, pm: &mut M, f: &Found, kind: u64, k: u64, v: u64) {
        let (id, chain) = (f.id, f.chain);
        let head = pm.load(self.slot(pm, id));
        let d = if chain < CHAIN_MAX {
            f.base - DELTA_BYTES * (chain as u64 + 1)
        } else {
            pm.alloc(DELTA_BYTES, LINE)
        };
        for (i, w) in [kind, k, v, head].iter().enumerate() {
            pm.store(d + 8 * i as u64, *w);
        }
        pm.persist(d, DELTA_BYTES);
        self.publish(pm, id, d);
        if chain + 1 >= CHAIN_MAX {
            pm.set_resizing(true);
            self.consolidate(pm, id);
            pm.set_resizing(false);
        }
    }

    /// OpenBwTree's consolidation and split (`ConsolidateNode`, then `AdjustNodeSize` on the
    /// new base): the merged entries become a new base, flushed and published; a base of
    /// `NODE_MAX` entries or more is then split: its upper half becomes a new base under a
    /// new id (flushed, its slot flushed), and a split delta (split key, new id) is prepended
    /// to the node's chain (flushed, slot switched and flushed). The lower half is written
    /// only at the node's next consolidation, the split delta counting in its chain. Then
    /// the separator goes into the parent.
    fn consolidate<M: PmMem>(&mut self, pm: &mut M, id: u64) {
        let mut entries = std::mem::take(&mut self.scratch);
        let v = self.view(pm, id, &mut entries);
        let kind = pm.load(v.base);
        let b = self.write_base(pm, kind, v.level, v.sibling, v.high, v.leftmost, &entries);
        self.publish(pm, id, b);
        if entries.len() < NODE_MAX {
            self.scratch = entries;
            return;
        }
        let mid = entries.len() / 2;
        let split_key = entries[mid].0;
        let (right_entries, right_leftmost) = if kind == LEAF {
            (&entries[mid..], 0)
        } else {
            (&entries[mid + 1..], entries[mid].1)
        };
        let rid = self.new_id(pm);
        let rb = self.write_base(
            pm,
            kind,
            v.level,
            v.sibling,
            v.high,
            right_leftmost,
            right_entries,
        );
        self.publish(pm, rid, rb);
        let d = b - DELTA_BYTES;
        for (i, w) in [D_SPLIT, split_key, rid, b].iter().enumerate() {
            pm.store(d + 8 * i as u64, *w);
        }
        pm.persist(d, DELTA_BYTES);
        self.publish(pm, id, d);
        self.scratch = entries;
        self.insert_parent(pm, id, split_key, rid, v.level + 1);
    }

    fn insert_parent<M: PmMem>(&mut self, pm: &mut M, left: u64, k: u64, right: u64, level: u64) {
        let root = self.root(pm);
        if self.level(pm, root) < level {
            let nid = self.new_id(pm);
            let b = self.write_base(pm, INNER, level, 0, 0, left, &[(k, right)]);
            self.publish(pm, nid, b);
            pm.store(self.meta + 16, nid);
            pm.persist(self.meta + 16, 8);
            return;
        }
        let f = self.descend_word(pm, k, level);
        self.add_delta(pm, &f, D_INSERT, k, right);
    }

    /// Some node whose delta chain reached the consolidation limit.
    fn long_chain<M: PmMem>(&self, pm: &M) -> Option<u64> {
        let mut entries = Vec::new();
        let mut first = self.root(pm);
        loop {
            let mut id = first;
            while id != 0 {
                let v = self.view(pm, id, &mut entries);
                if v.chain >= CHAIN_MAX {
                    return Some(id);
                }
                id = v.sibling;
            }
            let v = self.view(pm, first, &mut entries);
            if v.level == 0 {
                return None;
            }
            first = v.leftmost;
        }
    }

    fn key_bytes<M: PmMem>(&self, pm: &M, kw: u64) -> KeyBytes {
        match self.kind {
            KeyType::Int => KeyBytes::of_int(kw),
            KeyType::Str => record_key(pm, self.kind, kw),
        }
    }
}

/// The operations on key bytes (`kind` bytes long), on any view of the region.
impl BwTree {
    fn insert_bytes<M: PmMem>(&mut self, pm: &mut M, key: &[u8], value: u64) -> bool {
        let f = self.descend(pm, key, 0);
        if f.hit.is_some() {
            return false;
        }
        let kw = match self.kind {
            KeyType::Int => u64::from_be_bytes(key.try_into().unwrap()),
            KeyType::Str => new_record_fenced(pm, self.kind, key, 0),
        };
        self.add_delta(pm, &f, D_INSERT, kw, value);
        true
    }

    fn lookup_bytes<M: PmMem>(&self, pm: &M, key: &[u8]) -> Option<u64> {
        self.descend(pm, key, 0).hit.map(|(_, v)| pm.load(v))
    }

    fn update_bytes<M: PmMem>(&mut self, pm: &mut M, key: &[u8], value: u64) -> bool {
        let f = self.descend(pm, key, 0);
        let Some((kw, _)) = f.hit else {
            return false;
        };
        self.add_delta(pm, &f, D_INSERT, kw, value);
        true
    }

    fn delete_bytes<M: PmMem>(&mut self, pm: &mut M, key: &[u8]) -> bool {
        let f = self.descend(pm, key, 0);
        let Some((kw, _)) = f.hit else {
            return false;
        };
        self.add_delta(pm, &f, D_DELETE, kw, 0);
        true
    }

    fn scan_bytes<M: PmMem>(&self, pm: &M, start: &[u8], n: usize) -> Vec<(KeyBytes, u64)> {
        let mut out = scan_out(n);
        let mut entries = Vec::new();
        let mut id = self.descend(pm, start, 0).id;
        loop {
            let v = self.view(pm, id, &mut entries);
            for &(k, val) in &entries {
                if out.len() >= n {
                    return out;
                }
                if cmp_stored(pm, self.kind, k, start).is_ge() {
                    out.push((self.key_bytes(pm, k), val));
                }
            }
            if v.sibling == 0 {
                return out;
            }
            id = v.sibling;
        }
    }

    /// Finish an interrupted root split, then consolidate chains a crash left at the limit
    /// (the delta was published, the consolidation had not happened).
    fn recover(&mut self, region: &mut PmRegion) {
        let pm = &mut Instr::new(region);
        let mut entries = Vec::new();
        loop {
            let root = self.root(pm);
            let v = self.view(pm, root, &mut entries);
            if v.sibling == 0 {
                break;
            }
            self.insert_parent(pm, root, v.high, v.sibling, v.level + 1);
        }
        while let Some(id) = self.long_chain(pm) {
            self.consolidate(pm, id);
        }
    }

    fn check<M: PmMem>(&self, pm: &M) -> Result<(), String> {
        let mut entries = Vec::new();
        let mut first = self.root(pm);
        loop {
            let level = self.level(pm, first);
            let mut id = first;
            let mut prev: Option<u64> = None;
            while id != 0 {
                let v = self.view(pm, id, &mut entries);
                if v.level != level {
                    return Err(format!("node {id}: level {} in chain of {level}", v.level));
                }
                if v.chain >= CHAIN_MAX {
                    return Err(format!(
                        "node {id}: delta chain of {} not consolidated",
                        v.chain
                    ));
                }
                for &(k, c) in &entries {
                    if prev.is_some_and(|p| self.cmp_words(pm, p, k).is_ge()) {
                        return Err(format!("node {id}: keys out of order"));
                    }
                    prev = Some(k);
                    if v.sibling != 0 && self.cmp_words(pm, k, v.high).is_ge() {
                        return Err(format!("node {id}: key at or above its high key"));
                    }
                    if level > 0 && self.level(pm, c) != level - 1 {
                        return Err(format!("node {id}: child {c} at wrong level"));
                    }
                }
                id = v.sibling;
            }
            if level == 0 {
                return Ok(());
            }
            first = self.view(pm, first, &mut entries).leftmost;
        }
    }
}

super::ordered::tree_index!(BwTree);

#[cfg(test)]
mod tests {
    use super::super::ordered::int_key;
    use super::super::ordered::testing::*;
    use super::*;

    #[test]
    fn model_int_and_str() {
        model_both_kinds(BwTree::new, 13, 6000);
    }

    #[test]
    fn prop_model() {
        model_property(BwTree::new, 16, 400, |_, _| {});
    }

    /// A delta insert = the delta's 56 B in the base's inline chunk + the mapping slot; the
    /// first base is line-aligned, so delta `j` starts `8 (j + 1)` bytes into a line: deltas
    /// 1-6 straddle two lines, 0 and 7 fit one. The 8th delta adds a consolidation (base of
    /// 48 + 16 * 8 = 176 B = 3 lines, + slot), counted as split work.
    #[test]
    fn flush_counts_closed_form() {
        let mut pm = test_pm();
        let mut t = BwTree::new(&mut pm, KeyType::Int);
        let d = |pm: &TestPm, b: &crate::pmindex::PmStats| {
            let x = pm.stats().minus(b);
            (x.flushes, x.fences, x.resize_flushes)
        };
        for k in 1..=7u64 {
            let b = pm.stats();
            t.insert_bytes(&mut pm, &int_key(k), k);
            let lines = if k == 1 { 1 } else { 2 };
            assert_eq!(d(&pm, &b), (lines + 1, 2, 0), "key {k}");
        }
        let b = pm.stats();
        t.insert_bytes(&mut pm, &int_key(8), 8);
        assert_eq!(d(&pm, &b), (1 + 1 + 3 + 1, 4, 4));
        // Consolidations at 8, 16, ..., 120 entries keep one node; the one at 128 (OpenBwTree
        // splits at 128 or more) writes the 128-entry base (48 + 16 * 128 = 2096 B, 33 lines)
        // + slot, then splits: the new id (1), the right base (64 entries, 1072 B, 17 lines)
        // + slot, the split delta (56 B right below the new base: 1 line) + slot, and a new
        // root: id, base (64 B, 1 line), slot, root id. Before it, the 8th delta (1 line) +
        // slot. One fence per persist.
        for k in 9..128u64 {
            t.insert_bytes(&mut pm, &int_key(k), k);
        }
        let b = pm.stats();
        t.insert_bytes(&mut pm, &int_key(128), 128);
        assert_eq!(
            d(&pm, &b),
            (2 + 34 + 1 + 18 + 2 + 4, 13, 34 + 1 + 18 + 2 + 4)
        );
        // The left half is the split delta over the 128-entry base: chain 1, 64 entries,
        // its high key the right half's first key; the lower half is written at the node's
        // next consolidation, 7 inserts later (its 8th delta).
        let root = t.root(&pm);
        let left = t.view(&pm, root, &mut Vec::new()).leftmost;
        let mut e = Vec::new();
        let v = t.view(&pm, left, &mut e);
        assert_eq!((v.chain, e.len(), v.high), (1, 64, 65));
        for k in 1..=6u64 {
            assert!(t.update_bytes(&mut pm, &int_key(k), k + 1));
        }
        let b = pm.stats();
        assert!(t.update_bytes(&mut pm, &int_key(7), 8));
        // The consolidation: the 64-entry lower half (1072 B, 17 lines) + slot.
        assert_eq!(d(&pm, &b).2, 18);
        let v = t.view(&pm, left, &mut e);
        assert_eq!((v.chain, e.len(), v.high), (0, 64, 65));
        assert_eq!(t.lookup_bytes(&pm, &int_key(7)), Some(8));
        assert_eq!(t.lookup_bytes(&pm, &int_key(100)), Some(100));
        t.check(&pm).unwrap();
    }

    #[test]
    fn crash_every_fence() {
        for kind in [KeyType::Int, KeyType::Str] {
            let n = crash_test(
                |pm| BwTree::new(pm, kind),
                BwTree::recover,
                kind,
                260,
                14,
                1,
                false,
            );
            assert!(n > 200, "{n} crash points");
        }
    }
}
