//! P-BwTree: a B-link tree of logical nodes reached through a mapping table; a node is a
//! chain of delta records over a base node, as RECIPE's converted OpenBwTree persists it:
//! - insert / update / delete: a delta record (kind, key, value, next) is written and
//!   flushed, then the node's mapping-table slot is switched to it (the CAS) and flushed;
//! - when a chain reaches 8 deltas it is consolidated: a new base node with the merged
//!   entries is flushed whole and the mapping slot switched and flushed;
//! - a consolidation past 64 entries splits: the right half becomes a new base under a new
//!   id (flushed, its mapping slot flushed), the left half's base (with the sibling id and
//!   the high key) is flushed and published, then the separator goes into the parent as an
//!   insert delta (same protocol); a root split publishes a new root base and the root id.
//!
//! Layout: superblock `+0` mapping directory, `+8` next id, `+16` root id; directory: 1024
//! chunk pointers; chunk: 4096 8 B slots. Base (48 B + 16 B per entry): kind, count, sibling
//! id, high key, leftmost child id, level, entries (key word, value / child id). Delta (32 B):
//! kind, key word, value, next. String keys are stored as pointers to persisted key records.
//!
//! Recovery: a delta or base written but not published is unreachable; a split whose right
//! half is linked but whose separator is missing is covered by B-link moves; an interrupted
//! root split (a root with a sibling) gets its new root.

use std::cmp::Ordering;

use super::ordered::{
    cmp_stored, new_record, record_key, Adapted, Instr, KeyKind, OrderedIndex, PmMem, LINE,
};
use crate::pmindex::{IndexOptions, IndexSpec, KeyType, PmIndex, PmRegion, PmResult};

pub static SPEC: IndexSpec = IndexSpec {
    name: "p-bwtree",
    family: "ordered",
    create,
    recover,
    optimizations: &[],
    key_types: &[KeyType::Int, KeyType::Str],
};

fn create(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let t = BwTree::new(&mut Instr::new(pm), o.key_type.into());
    pm.set_root(o.root_slot, t.meta);
    Ok(Box::new(Adapted {
        inner: t,
        key_type: o.key_type,
    }))
}

fn recover(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let mut t = BwTree {
        kind: o.key_type.into(),
        meta: pm.root(o.root_slot),
    };
    OrderedIndex::<Instr>::recover(&mut t, &mut Instr::new(pm));
    Ok(Box::new(Adapted {
        inner: t,
        key_type: o.key_type,
    }))
}

const LEAF: u64 = 1;
const INNER: u64 = 2;
const D_INSERT: u64 = 3;
const D_DELETE: u64 = 4;
const CHAIN_MAX: usize = 8;
const NODE_MAX: usize = 64;
const CHUNK_SLOTS: u64 = 4096;
const DIR_SLOTS: u64 = 1024;

pub struct BwTree {
    kind: KeyKind,
    meta: u64,
}

/// A logical node as its chain shows it.
struct View {
    base: u64,
    level: u64,
    sibling: u64,
    high: u64,
    leftmost: u64,
    chain: usize,
    /// Sorted (key word, value).
    entries: Vec<(u64, u64)>,
}

impl BwTree {
    pub fn new<M: PmMem>(pm: &mut M, kind: KeyKind) -> BwTree {
        let meta = pm.alloc(LINE, LINE);
        let dir = pm.alloc(8 * DIR_SLOTS, LINE);
        pm.persist(dir, 8 * DIR_SLOTS);
        pm.store(meta, dir);
        pm.store(meta + 8, 1);
        pm.persist(meta, 16);
        let t = BwTree { kind, meta };
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
        let b = pm.alloc(size, LINE);
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

    fn view<M: PmMem>(&self, pm: &M, id: u64) -> View {
        let mut p = pm.load(self.slot(pm, id));
        let mut deltas = Vec::new();
        while matches!(pm.load(p), D_INSERT | D_DELETE) {
            deltas.push(p);
            p = pm.load(p + 24);
        }
        let count = pm.load(p + 8) as usize;
        let mut entries: Vec<(u64, u64)> = (0..count as u64)
            .map(|i| (pm.load(p + 48 + 16 * i), pm.load(p + 56 + 16 * i)))
            .collect();
        for &d in deltas.iter().rev() {
            let k = pm.load(d + 8);
            let pos = entries.binary_search_by(|e| self.cmp_words(pm, e.0, k));
            match (pm.load(d), pos) {
                (D_INSERT, Ok(i)) => entries[i].1 = pm.load(d + 16),
                (D_INSERT, Err(i)) => entries.insert(i, (k, pm.load(d + 16))),
                (_, Ok(i)) => {
                    entries.remove(i);
                }
                _ => {}
            }
        }
        View {
            base: p,
            level: pm.load(p + 40),
            sibling: pm.load(p + 16),
            high: pm.load(p + 24),
            leftmost: pm.load(p + 32),
            chain: deltas.len(),
            entries,
        }
    }

    fn root<M: PmMem>(&self, pm: &M) -> u64 {
        pm.load(self.meta + 16)
    }

    /// Node id at `level` whose range holds `key`, with its view.
    fn descend<M: PmMem>(&self, pm: &M, key: &[u8], level: u64) -> (u64, View) {
        let mut id = self.root(pm);
        loop {
            let v = self.view(pm, id);
            if v.sibling != 0 && cmp_stored(pm, self.kind, v.high, key).is_le() {
                id = v.sibling;
                continue;
            }
            if v.level == level {
                return (id, v);
            }
            let pos = v
                .entries
                .partition_point(|e| cmp_stored(pm, self.kind, e.0, key).is_le());
            id = if pos == 0 {
                v.leftmost
            } else {
                v.entries[pos - 1].1
            };
        }
    }

    fn find<M: PmMem>(&self, pm: &M, key: &[u8]) -> (u64, View, Result<usize, usize>) {
        let (id, v) = self.descend(pm, key, 0);
        let r = v
            .entries
            .binary_search_by(|e| cmp_stored(pm, self.kind, e.0, key));
        (id, v, r)
    }

    /// Prepend a delta to node `id`'s chain: flush the delta, switch and flush the slot;
    /// consolidate a long chain.
    fn add_delta<M: PmMem>(&self, pm: &mut M, id: u64, kind: u64, k: u64, v: u64) {
        let head = pm.load(self.slot(pm, id));
        let d = pm.alloc(32, LINE);
        for (i, w) in [kind, k, v, head].iter().enumerate() {
            pm.store(d + 8 * i as u64, *w);
        }
        pm.persist(d, 32);
        self.publish(pm, id, d);
        if self.view(pm, id).chain >= CHAIN_MAX {
            self.consolidate(pm, id);
        }
    }

    fn consolidate<M: PmMem>(&self, pm: &mut M, id: u64) {
        let v = self.view(pm, id);
        let kind = pm.load(v.base);
        if v.entries.len() <= NODE_MAX {
            let b = self.write_base(pm, kind, v.level, v.sibling, v.high, v.leftmost, &v.entries);
            self.publish(pm, id, b);
            return;
        }
        let mid = v.entries.len() / 2;
        let split_key = v.entries[mid].0;
        let (right_entries, right_leftmost) = if kind == LEAF {
            (&v.entries[mid..], 0)
        } else {
            (&v.entries[mid + 1..], v.entries[mid].1)
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
        let lb = self.write_base(
            pm,
            kind,
            v.level,
            rid,
            split_key,
            v.leftmost,
            &v.entries[..mid],
        );
        self.publish(pm, id, lb);
        self.insert_parent(pm, id, split_key, rid, v.level + 1);
    }

    fn insert_parent<M: PmMem>(&self, pm: &mut M, left: u64, k: u64, right: u64, level: u64) {
        let root = self.root(pm);
        if self.view(pm, root).level < level {
            let nid = self.new_id(pm);
            let b = self.write_base(pm, INNER, level, 0, 0, left, &[(k, right)]);
            self.publish(pm, nid, b);
            pm.store(self.meta + 16, nid);
            pm.persist(self.meta + 16, 8);
            return;
        }
        let key = self.key_bytes(pm, k);
        let (pid, _) = self.descend(pm, &key, level);
        self.add_delta(pm, pid, D_INSERT, k, right);
    }

    /// Some node whose delta chain reached the consolidation limit.
    fn long_chain<M: PmMem>(&self, pm: &M) -> Option<u64> {
        let mut first = self.root(pm);
        loop {
            let mut id = first;
            while id != 0 {
                let v = self.view(pm, id);
                if v.chain >= CHAIN_MAX {
                    return Some(id);
                }
                id = v.sibling;
            }
            let v = self.view(pm, first);
            if v.level == 0 {
                return None;
            }
            first = v.leftmost;
        }
    }

    fn key_bytes<M: PmMem>(&self, pm: &M, kw: u64) -> Vec<u8> {
        match self.kind {
            KeyKind::Int => kw.to_be_bytes().to_vec(),
            KeyKind::Str => record_key(pm, self.kind, kw),
        }
    }
}

impl<M: PmMem> OrderedIndex<M> for BwTree {
    fn kind(&self) -> KeyKind {
        self.kind
    }

    fn insert(&mut self, pm: &mut M, key: &[u8], value: u64) -> bool {
        let (id, _, r) = self.find(pm, key);
        if r.is_ok() {
            return false;
        }
        let kw = match self.kind {
            KeyKind::Int => u64::from_be_bytes(key.try_into().unwrap()),
            KeyKind::Str => new_record(pm, self.kind, key, 0),
        };
        self.add_delta(pm, id, D_INSERT, kw, value);
        true
    }

    fn lookup(&self, pm: &M, key: &[u8]) -> Option<u64> {
        let (_, v, r) = self.find(pm, key);
        r.ok().map(|i| v.entries[i].1)
    }

    fn update(&mut self, pm: &mut M, key: &[u8], value: u64) -> bool {
        let (id, v, r) = self.find(pm, key);
        let Ok(i) = r else {
            return false;
        };
        self.add_delta(pm, id, D_INSERT, v.entries[i].0, value);
        true
    }

    fn remove(&mut self, pm: &mut M, key: &[u8]) -> bool {
        let (id, v, r) = self.find(pm, key);
        let Ok(i) = r else {
            return false;
        };
        self.add_delta(pm, id, D_DELETE, v.entries[i].0, 0);
        true
    }

    fn scan(&self, pm: &M, start: &[u8], n: usize) -> Vec<(Vec<u8>, u64)> {
        let mut out = Vec::new();
        let (mut id, _) = self.descend(pm, start, 0);
        loop {
            let v = self.view(pm, id);
            for (k, val) in v.entries {
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
    fn recover(&mut self, pm: &mut M) {
        loop {
            let root = self.root(pm);
            let v = self.view(pm, root);
            if v.sibling == 0 {
                break;
            }
            self.insert_parent(pm, root, v.high, v.sibling, v.level + 1);
        }
        while let Some(id) = self.long_chain(pm) {
            self.consolidate(pm, id);
        }
    }

    fn check(&self, pm: &M) -> Result<(), String> {
        let mut first = self.root(pm);
        loop {
            let level = self.view(pm, first).level;
            let mut id = first;
            let mut prev: Option<u64> = None;
            while id != 0 {
                let v = self.view(pm, id);
                if v.level != level {
                    return Err(format!("node {id}: level {} in chain of {level}", v.level));
                }
                if v.chain >= CHAIN_MAX {
                    return Err(format!(
                        "node {id}: delta chain of {} not consolidated",
                        v.chain
                    ));
                }
                for &(k, c) in &v.entries {
                    if prev.is_some_and(|p| self.cmp_words(pm, p, k).is_ge()) {
                        return Err(format!("node {id}: keys out of order"));
                    }
                    prev = Some(k);
                    if v.sibling != 0 && self.cmp_words(pm, k, v.high).is_ge() {
                        return Err(format!("node {id}: key at or above its high key"));
                    }
                    if level > 0 && self.view(pm, c).level != level - 1 {
                        return Err(format!("node {id}: child {c} at wrong level"));
                    }
                }
                id = v.sibling;
            }
            if level == 0 {
                return Ok(());
            }
            first = self.view(pm, first).leftmost;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ordered::testing::*;
    use super::super::ordered::{int_key, SimPm};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn framework_standard_checks() {
        crate::pmindex::testing::standard_checks(&SPEC).unwrap();
    }

    #[test]
    fn model_int_and_str() {
        for kind in [KeyKind::Int, KeyKind::Str] {
            let mut pm = SimPm::new(64 << 20);
            let mut t = BwTree::new(&mut pm, kind);
            run_model(&mut t, &mut pm, &random_ops(kind, 13, 6000, 3000));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn prop_model(seed in 0u64..1_000_000, n in 1usize..600, space in 1u64..400) {
            let mut pm = SimPm::new(16 << 20);
            let mut t = BwTree::new(&mut pm, KeyKind::Int);
            run_model(&mut t, &mut pm, &random_ops(KeyKind::Int, seed, n, space));
        }
    }

    /// A delta insert = delta line + mapping slot; the 8th delta adds a consolidation
    /// (base of 48 + 16 * 8 = 176 B = 3 lines, + slot).
    #[test]
    fn flush_counts_closed_form() {
        let mut pm = SimPm::new(4 << 20);
        let mut t = BwTree::new(&mut pm, KeyKind::Int);
        for k in 1..=7u64 {
            let b = pm.counts.flushes;
            t.insert(&mut pm, &int_key(k), k);
            assert_eq!(pm.counts.flushes - b, 2);
        }
        let b = pm.counts.flushes;
        t.insert(&mut pm, &int_key(8), 8);
        assert_eq!(pm.counts.flushes - b, 2 + 3 + 1);
    }

    #[test]
    fn crash_every_fence() {
        for kind in [KeyKind::Int, KeyKind::Str] {
            let n = crash_test(|pm| BwTree::new(pm, kind), kind, 260, 14, 1, false);
            assert!(n > 200, "{n} crash points");
        }
    }
}
