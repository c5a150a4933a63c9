//! P-Masstree: a trie of B+-trees (one layer per 8 B key slice) with 15-wide nodes whose
//! entries stay where they were written and whose order lives in a 64-bit permutation word,
//! as RECIPE's `P-Masstree/masstree.cpp` persists it:
//! - insert into a node with room: write key then value into a free slot, flush that entry
//!   (one line), then store the new permutation and flush it (the header line) — the
//!   permutation store is the atomic commit;
//! - split: fill the new right node (upper half), flush it whole, link it (`next`) and flush,
//!   then cut the left node's permutation and flush; insert the separator into the parent (a
//!   new root is flushed whole before the root pointer is); then commit the new key (a key
//!   that goes right was written into the right node before its flush: only its permutation
//!   is flushed again);
//! - string keys: the full key and value live in a value record flushed first; two keys
//!   sharing a slice move into a new layer, flushed whole before the parent entry's value
//!   is switched to it (8 B flush);
//! - update: the value word (integer keys: in the node; strings: in the record) + 8 B flush;
//! - delete: permutation without the slot, flushed. A leaf losing its last entry that is not
//!   its layer's root is unlinked (`leaf_delete`): separator out of the parent's permutation
//!   (flushed), its permutation emptied (flushed: the commit), the left sibling's `next` past
//!   it (flushed), then freed. Leftmost children and internal nodes are only emptied, never
//!   unlinked (RECIPE's `inter_delete` unlinks them); half-full nodes are not merged.
//!
//! Layout (304 B): +0 level u32, +16 next, +24 leftmost child, +32 highest (low key of the
//! node, B-link), +40 permutation, +64 + 16 i entries (key slice, value). Permutation: size in
//! the low nibble, slot of position i in nibble i + 1; positions >= size hold the free slots.
//! Integer keys keep values inline; string-key entries hold a tagged (bit 0) record pointer
//! or an untagged pointer to the next layer's root.
//!
//! Recovery (RECIPE's `check_for_recovery`, done eagerly): a node whose `next` was linked
//! but whose permutation was not yet cut still lists keys >= `next.highest`: they are dropped
//! from its permutation; an interrupted root split (a root with a `next`) gets its new root.

use super::ordered::{free_zeroed, new_record, record_key, scan_out, Instr, KeyBytes, PmMem, LINE};
use crate::pmindex::{IndexOptions, IndexSpec, KeyType, PmIndex, PmRegion, PmResult, OPT_NO_BLOAT};

pub(crate) static SPEC: IndexSpec = IndexSpec {
    name: "p-masstree",
    about: "RECIPE's P-Masstree: trie of B+-trees over 8 B key slices",
    family: "ordered",
    create,
    recover,
    optimizations: &[OPT_NO_BLOAT],
    key_types: &[KeyType::Int, KeyType::Str],
};

fn create(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let t = Masstree::new(&mut Instr::new(pm), o.key_type, o.opts.no_bloat);
    Instr::new(pm).set_root(o.root_slot, t.meta);
    Ok(Box::new(t))
}

fn recover(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let mut t = Masstree {
        kind: o.key_type,
        no_bloat: o.opts.no_bloat,
        meta: Instr::new(pm).root(o.root_slot),
    };
    t.recover(pm);
    Ok(Box::new(t))
}

const WIDTH: usize = 15;
const NODE: u64 = 64 + 16 * WIDTH as u64;
const NEXT: u64 = 16;
const LEFTMOST: u64 = 24;
const HIGHEST: u64 = 32;
const PERM: u64 = 40;

/// A node's entries in key order, (key slice, value, slot), held in place: every step of
/// every operation reads a node's entries, with no heap allocation for it.
struct Entries {
    buf: [(u64, u64, usize); WIDTH],
    len: usize,
}

impl std::ops::Deref for Entries {
    type Target = [(u64, u64, usize)];
    fn deref(&self) -> &Self::Target {
        &self.buf[..self.len]
    }
}

impl IntoIterator for Entries {
    type Item = (u64, u64, usize);
    type IntoIter = std::iter::Take<std::array::IntoIter<(u64, u64, usize), WIDTH>>;
    fn into_iter(self) -> Self::IntoIter {
        self.buf.into_iter().take(self.len)
    }
}

fn ek(n: u64, slot: usize) -> u64 {
    n + 64 + 16 * slot as u64
}
fn ev(n: u64, slot: usize) -> u64 {
    ek(n, slot) + 8
}

/// The permutation word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Perm(u64);

impl Perm {
    fn empty() -> Perm {
        let mut x = 0u64;
        for i in 0..WIDTH as u64 {
            x |= i << (4 * i + 4);
        }
        Perm(x)
    }
    fn size(self) -> usize {
        (self.0 & 15) as usize
    }
    fn get(self, i: usize) -> usize {
        ((self.0 >> (4 * i + 4)) & 15) as usize
    }
    fn set(&mut self, i: usize, s: usize) {
        self.0 = (self.0 & !(15u64 << (4 * i + 4))) | (s as u64) << (4 * i + 4);
    }
    fn slots(self) -> Vec<usize> {
        (0..WIDTH).map(|i| self.get(i)).collect()
    }
    fn from_slots(slots: &[usize], size: usize) -> Perm {
        let mut p = Perm(size as u64);
        for (i, &s) in slots.iter().enumerate() {
            p.set(i, s);
        }
        p
    }
    /// The next free slot.
    fn free_slot(self) -> usize {
        self.get(self.size())
    }
    /// Put the free slot at position `i`.
    fn insert_at(self, i: usize) -> Perm {
        let mut s = self.slots();
        let n = self.size();
        let slot = s.remove(n);
        s.insert(i, slot);
        Perm::from_slots(&s, n + 1)
    }
    fn remove_at(self, i: usize) -> Perm {
        let mut s = self.slots();
        let n = self.size();
        let slot = s.remove(i);
        s.insert(n - 1, slot);
        Perm::from_slots(&s, n - 1)
    }
}

#[derive(Clone)]
pub(crate) struct Masstree {
    kind: KeyType,
    no_bloat: bool,
    /// Superblock: root of the first layer at +0.
    meta: u64,
}

/// Where a layer's root pointer lives: the superblock, or a parent-layer entry's value.
type RootSlot = u64;

fn slice(key: &[u8], depth: usize) -> u64 {
    u64::from_be_bytes(key[8 * depth..8 * depth + 8].try_into().unwrap())
}

impl Masstree {
    pub(crate) fn new<M: PmMem>(pm: &mut M, kind: KeyType, no_bloat: bool) -> Masstree {
        let meta = pm.alloc(LINE, LINE);
        let t = Masstree {
            kind,
            no_bloat,
            meta,
        };
        let root = t.new_node(pm, 0);
        pm.persist(root, NODE);
        pm.store(meta, root);
        pm.persist(meta, 8);
        t
    }

    fn layers(&self) -> usize {
        self.kind.bytes() as usize / 8
    }

    fn new_node<M: PmMem>(&self, pm: &mut M, level: u64) -> u64 {
        let n = if self.no_bloat {
            pm.alloc_clean(NODE, LINE)
        } else {
            pm.alloc(NODE, LINE)
        };
        pm.store(n, level);
        pm.store(n + PERM, Perm::empty().0);
        n
    }

    /// Flush a new node: whole (as published) or, with no_bloat, the header and the lines
    /// holding its `used` slots.
    fn persist_new<M: PmMem>(&self, pm: &mut M, n: u64, extra: Option<usize>) {
        if !self.no_bloat {
            pm.persist(n, NODE);
            return;
        }
        let p = perm(pm, n);
        let mut lines: Vec<u64> = vec![n];
        for i in 0..WIDTH {
            if i < p.size() || extra == Some(p.get(i)) {
                lines.push(ek(n, p.get(i)) & !(LINE - 1));
            }
        }
        lines.sort_unstable();
        lines.dedup();
        for l in lines {
            pm.flush(l);
        }
        pm.fence();
    }

    /// Sorted (key, value, slot) of a node.
    fn entries_of<M: PmMem>(&self, pm: &M, n: u64) -> Entries {
        let p = perm(pm, n);
        let mut es = Entries {
            buf: [(0, 0, 0); WIDTH],
            len: p.size().min(WIDTH),
        };
        for i in 0..es.len {
            let s = p.get(i);
            es.buf[i] = (pm.load(ek(n, s)), pm.load(ev(n, s)), s);
        }
        es
    }

    /// Move right while the key belongs to a sibling (B-link).
    fn advance<M: PmMem>(&self, pm: &M, mut n: u64, k: u64) -> u64 {
        loop {
            let next = pm.load(n + NEXT);
            if next != 0 && k >= pm.load(next + HIGHEST) {
                n = next;
            } else {
                return n;
            }
        }
    }

    /// The leaf of layer `root` for slice `k`.
    fn find_leaf<M: PmMem>(&self, pm: &M, root: u64, k: u64) -> u64 {
        self.descend(pm, root, k, 0)
    }

    /// The node at `level` whose range holds slice `k`, from `root` down (B-link moves right
    /// on the way).
    fn descend<M: PmMem>(&self, pm: &M, root: u64, k: u64, level: u64) -> u64 {
        let mut n = root;
        loop {
            n = self.advance(pm, n, k);
            if pm.load(n) == level {
                return n;
            }
            let es = self.entries_of(pm, n);
            let pos = es.partition_point(|e| e.0 <= k);
            n = if pos == 0 {
                pm.load(n + LEFTMOST)
            } else {
                es[pos - 1].1
            };
        }
    }

    /// Leaf and sorted position of slice `k` (Ok = present).
    fn locate<M: PmMem>(&self, pm: &M, root: u64, k: u64) -> (u64, Result<usize, usize>) {
        let l = self.find_leaf(pm, root, k);
        let es = self.entries_of(pm, l);
        (l, es.binary_search_by_key(&k, |e| e.0))
    }

    /// The entry (leaf, slot) holding `key`, for integers or string records.
    fn find<M: PmMem>(&self, pm: &M, key: &[u8]) -> Option<(u64, usize)> {
        self.find_in_layer(pm, key).map(|(_, l, s)| (l, s))
    }

    /// `find`, with where the root pointer of the entry's layer lives.
    fn find_in_layer<M: PmMem>(&self, pm: &M, key: &[u8]) -> Option<(RootSlot, u64, usize)> {
        let (mut root_slot, mut root) = (self.meta, pm.load(self.meta));
        for d in 0..self.layers() {
            let k = slice(key, d);
            let (l, r) = self.locate(pm, root, k);
            let pos = r.ok()?;
            let s = perm(pm, l).get(pos);
            if self.kind == KeyType::Int {
                return Some((root_slot, l, s));
            }
            let v = pm.load(ev(l, s));
            if v & 1 == 1 {
                return (record_key(pm, self.kind, v & !1) == key).then_some((root_slot, l, s));
            }
            root_slot = ev(l, s);
            root = v;
        }
        None
    }

    /// Delete the last entry of leaf `n` (not its layer's root) by unlinking `n`, as RECIPE's
    /// `leaf_delete` does on underflow: the parent's separator out (permutation, flushed), `n`
    /// emptied (flushed: the delete's commit), the left sibling's `next` past `n` (flushed),
    /// then `n` freed, unreachable durably. Every crash point leaves a B-link tree: without
    /// the separator, `n` is reached from its left sibling's `next`. False (nothing changed)
    /// when `n` has no separator to remove: it is its parent's leftmost child (or a crash lost
    /// the separator); then it is only emptied. Emptied internal nodes are kept.
    fn unlink_leaf<M: PmMem>(&self, pm: &mut M, root_slot: RootSlot, n: u64) -> bool {
        let h = pm.load(n + HIGHEST);
        let p = self.descend(pm, pm.load(root_slot), h, 1);
        let es = self.entries_of(pm, p);
        let i = match es.binary_search_by_key(&h, |e| e.0) {
            Ok(i) if es[i].1 == n => i,
            _ => return false,
        };
        let mut left = if i == 0 {
            pm.load(p + LEFTMOST)
        } else {
            es[i - 1].1
        };
        while pm.load(left + NEXT) != n {
            left = pm.load(left + NEXT);
            assert!(left != 0, "leaf {n:#x} not on its level's chain");
        }
        pm.store(p + PERM, perm(pm, p).remove_at(i).0);
        pm.persist(p + PERM, 8);
        pm.store(n + PERM, perm(pm, n).remove_at(0).0);
        pm.persist(n + PERM, 8);
        pm.store(left + NEXT, pm.load(n + NEXT));
        pm.persist(left + NEXT, 8);
        if self.no_bloat {
            free_zeroed(pm, n, NODE);
        } else {
            pm.free(n, NODE);
        }
        true
    }

    /// Commit a new (key, value) into node `n` that has room: entry, flush, permutation, flush.
    fn node_insert<M: PmMem>(&self, pm: &mut M, n: u64, k: u64, v: u64) {
        let p = perm(pm, n);
        let es = self.entries_of(pm, n);
        let pos = es.partition_point(|e| e.0 < k);
        let s = p.free_slot();
        pm.store(ek(n, s), k);
        pm.store(ev(n, s), v);
        pm.persist(ek(n, s), 16);
        pm.store(n + PERM, p.insert_at(pos).0);
        pm.persist(n + PERM, 8);
    }

    /// Insert (k, v) into node `n` of a layer whose root pointer is at `root_slot`, splitting
    /// when full. `in_split`: this insert is itself a split's (a separator into the parent),
    /// so all of it is split work.
    fn insert_at_level<M: PmMem>(
        &self,
        pm: &mut M,
        root_slot: RootSlot,
        n: u64,
        (k, v): (u64, u64),
        in_split: bool,
    ) {
        let n = self.advance(pm, n, k);
        let p = perm(pm, n);
        if p.size() < WIDTH {
            self.node_insert(pm, n, k, v);
            return;
        }
        // RECIPE's leaf / internode split, up to the separator's insertion into the parent
        // (recursively splitting it): split work. The new key's own commit after it is not.
        pm.set_resizing(true);
        let level = pm.load(n);
        let es = self.entries_of(pm, n);
        let leaf = level == 0;
        let mid = WIDTH / 2 + 1;
        let right = self.new_node(pm, level);
        let (first, split_key) = if leaf {
            (mid, es[mid].0)
        } else {
            (mid, es[mid - 1].0)
        };
        for (i, e) in es[first..].iter().enumerate() {
            pm.store(ek(right, i), e.0);
            pm.store(ev(right, i), e.1);
        }
        let mut rp = Perm::empty();
        rp.0 = (rp.0 & !15) | (es.len() - first) as u64;
        if !leaf {
            pm.store(right + LEFTMOST, es[mid - 1].1);
        }
        pm.store(right + HIGHEST, split_key);
        pm.store(right + NEXT, pm.load(n + NEXT));
        let goes_right = k >= split_key;
        // A key that goes right is written into the right node before its flush.
        let rslot = rp.free_slot();
        if goes_right {
            pm.store(ek(right, rslot), k);
            pm.store(ev(right, rslot), v);
        }
        pm.store(right + PERM, rp.0);
        self.persist_new(pm, right, goes_right.then_some(rslot));
        pm.store(n + NEXT, right);
        pm.persist(n + NEXT, 8);
        // Cut the left node: keep its first `keep` positions.
        let keep = if leaf { mid } else { mid - 1 };
        let mut lp = p;
        lp.0 = (lp.0 & !15) | keep as u64;
        pm.store(n + PERM, lp.0);
        pm.persist(n + PERM, 8);
        self.insert_parent(pm, root_slot, n, split_key, right, level + 1);
        pm.set_resizing(in_split);
        if goes_right {
            let pos = self.entries_of(pm, right).partition_point(|e| e.0 < k);
            pm.store(right + PERM, rp.insert_at(pos).0);
            pm.persist(right + PERM, 8);
        } else {
            self.node_insert(pm, n, k, v);
        }
    }

    fn insert_parent<M: PmMem>(
        &self,
        pm: &mut M,
        root_slot: RootSlot,
        left: u64,
        k: u64,
        right: u64,
        level: u64,
    ) {
        let root = pm.load(root_slot);
        if pm.load(root) < level {
            // `left` was the root: a new root, flushed whole, then published.
            let nr = self.new_node(pm, level);
            pm.store(nr + LEFTMOST, root);
            pm.store(ek(nr, 0), k);
            pm.store(ev(nr, 0), right);
            let mut p = Perm::empty();
            p = p.insert_at(0);
            pm.store(nr + PERM, p.0);
            self.persist_new(pm, nr, None);
            pm.store(root_slot, nr);
            pm.persist(root_slot, 8);
            let _ = left;
            return;
        }
        let mut n = root;
        while pm.load(n) > level {
            n = self.advance(pm, n, k);
            let es = self.entries_of(pm, n);
            let pos = es.partition_point(|e| e.0 <= k);
            n = if pos == 0 {
                pm.load(n + LEFTMOST)
            } else {
                es[pos - 1].1
            };
        }
        self.insert_at_level(pm, root_slot, n, (k, right), true);
    }

    /// Two string keys share slices from `depth`: build the chain of new layers down to the
    /// slice where they differ, flush it, then switch the entry at `(leaf, slot)` to it.
    fn new_layer<M: PmMem>(
        &self,
        pm: &mut M,
        leaf: u64,
        slot: usize,
        old: (&[u8], u64),
        new: (&[u8], u64),
        mut depth: usize,
    ) {
        let mut chain = Vec::new();
        while slice(old.0, depth) == slice(new.0, depth) {
            chain.push(self.new_node(pm, 0));
            depth += 1;
        }
        let last = self.new_node(pm, 0);
        let (a, b) = (slice(old.0, depth), slice(new.0, depth));
        let (first, second) = if a < b {
            ((a, old.1), (b, new.1))
        } else {
            ((b, new.1), (a, old.1))
        };
        pm.store(ek(last, 0), first.0);
        pm.store(ev(last, 0), first.1);
        pm.store(ek(last, 1), second.0);
        pm.store(ev(last, 1), second.1);
        pm.store(last + PERM, Perm::empty().insert_at(0).insert_at(1).0);
        for (i, &n) in chain.iter().enumerate() {
            let below = chain.get(i + 1).copied().unwrap_or(last);
            pm.store(ek(n, 0), slice(old.0, depth - chain.len() + i));
            pm.store(ev(n, 0), below);
            pm.store(n + PERM, Perm::empty().insert_at(0).0);
        }
        for &n in chain.iter().chain(std::iter::once(&last)) {
            self.persist_new(pm, n, None);
        }
        let top = chain.first().copied().unwrap_or(last);
        pm.store(ev(leaf, slot), top);
        pm.persist(ev(leaf, slot), 8);
    }

    fn scan_layer<M: PmMem>(
        &self,
        pm: &M,
        root: u64,
        depth: usize,
        start: Option<&[u8]>,
        out: &mut Vec<(KeyBytes, u64)>,
        limit: usize,
    ) {
        let sk = start.map(|s| slice(s, depth));
        let mut l = match sk {
            Some(k) => self.find_leaf(pm, root, k),
            None => {
                let mut n = root;
                while pm.load(n) != 0 {
                    n = pm.load(n + LEFTMOST);
                }
                n
            }
        };
        while l != 0 {
            for (k, v, _) in self.entries_of(pm, l) {
                if out.len() >= limit {
                    return;
                }
                if sk.is_some_and(|s| k < s) {
                    continue;
                }
                let exact = sk == Some(k);
                if self.kind == KeyType::Int {
                    out.push((KeyBytes::of_int(k), v));
                } else if v & 1 == 1 {
                    let key = record_key(pm, self.kind, v & !1);
                    if !exact || start.is_none_or(|s| &key[..] >= s) {
                        out.push((key, pm.load(v & !1)));
                    }
                } else {
                    self.scan_layer(
                        pm,
                        v,
                        depth + 1,
                        if exact { start } else { None },
                        out,
                        limit,
                    );
                }
            }
            l = pm.load(l + NEXT);
        }
    }

    fn recover_layer<M: PmMem>(&self, pm: &mut M, root_slot: RootSlot) {
        let root = pm.load(root_slot);
        // Per level, left to right: cut permutations past the sibling's low key.
        let mut first = root;
        loop {
            let mut n = first;
            while n != 0 {
                let next = pm.load(n + NEXT);
                if next != 0 {
                    let hi = pm.load(next + HIGHEST);
                    let es = self.entries_of(pm, n);
                    let keep = es.partition_point(|e| e.0 < hi);
                    if keep < es.len() {
                        let mut p = perm(pm, n);
                        p.0 = (p.0 & !15) | keep as u64;
                        pm.store(n + PERM, p.0);
                        pm.persist(n + PERM, 8);
                    }
                }
                n = next;
            }
            if pm.load(first) == 0 {
                break;
            }
            first = pm.load(first + LEFTMOST);
        }
        // An interrupted root split: give the root's siblings their parent.
        loop {
            let root = pm.load(root_slot);
            let next = pm.load(root + NEXT);
            if next == 0 {
                break;
            }
            let level = pm.load(root);
            self.insert_parent(
                pm,
                root_slot,
                root,
                pm.load(next + HIGHEST),
                next,
                level + 1,
            );
        }
        if self.kind == KeyType::Str {
            let mut l = pm.load(root_slot);
            while pm.load(l) != 0 {
                l = pm.load(l + LEFTMOST);
            }
            while l != 0 {
                for (_, v, s) in self.entries_of(pm, l) {
                    if v & 1 == 0 {
                        self.recover_layer(pm, ev(l, s));
                    }
                }
                l = pm.load(l + NEXT);
            }
        }
    }

    fn check_layer<M: PmMem>(&self, pm: &M, root: u64, depth: usize) -> Result<(), String> {
        let mut first = root;
        loop {
            let level = pm.load(first);
            let mut n = first;
            let mut prev: Option<u64> = None;
            while n != 0 {
                if pm.load(n) != level {
                    return Err(format!("node {n:#x}: level differs within its chain"));
                }
                let p = perm(pm, n);
                let mut slots = p.slots();
                slots.sort_unstable();
                if slots != (0..WIDTH).collect::<Vec<_>>() {
                    return Err(format!("node {n:#x}: permutation is not a permutation"));
                }
                let es = self.entries_of(pm, n);
                for e in es.iter() {
                    if prev.is_some_and(|x| x >= e.0) {
                        return Err(format!("node {n:#x}: keys out of order at depth {depth}"));
                    }
                    prev = Some(e.0);
                    if level > 0 && pm.load(e.1) != level - 1 {
                        return Err(format!("node {n:#x}: child at wrong level"));
                    }
                    if level == 0 && self.kind == KeyType::Str {
                        if e.1 & 1 == 1 {
                            let k = record_key(pm, self.kind, e.1 & !1);
                            if slice(&k, depth) != e.0 {
                                return Err(format!("leaf {n:#x}: record key differs from slice"));
                            }
                        } else if depth + 1 >= self.layers() {
                            return Err("layer below the last key slice".into());
                        } else {
                            self.check_layer(pm, e.1, depth + 1)?;
                        }
                    }
                }
                let next = pm.load(n + NEXT);
                if next != 0 && es.last().is_some_and(|e| e.0 >= pm.load(next + HIGHEST)) {
                    return Err(format!(
                        "node {n:#x}: keys at or above its sibling's low key"
                    ));
                }
                n = next;
            }
            if level == 0 {
                return Ok(());
            }
            first = pm.load(first + LEFTMOST);
        }
    }
}

fn perm<M: PmMem>(pm: &M, n: u64) -> Perm {
    Perm(pm.load(n + PERM))
}

/// The operations on key bytes (`kind` bytes long), on any view of the region.
impl Masstree {
    fn insert_bytes<M: PmMem>(&mut self, pm: &mut M, key: &[u8], value: u64) -> bool {
        if self.kind == KeyType::Int {
            let k = slice(key, 0);
            let root = pm.load(self.meta);
            let (l, r) = self.locate(pm, root, k);
            if r.is_ok() {
                return false;
            }
            self.insert_at_level(pm, self.meta, l, (k, value), false);
            return true;
        }
        if self.find(pm, key).is_some() {
            return false;
        }
        let rec = new_record(pm, self.kind, key, value) | 1;
        let mut root_slot = self.meta;
        for d in 0..self.layers() {
            let k = slice(key, d);
            let root = pm.load(root_slot);
            let (l, r) = self.locate(pm, root, k);
            match r {
                Err(_) => {
                    self.insert_at_level(pm, root_slot, l, (k, rec), false);
                    return true;
                }
                Ok(pos) => {
                    let s = perm(pm, l).get(pos);
                    let v = pm.load(ev(l, s));
                    if v & 1 == 1 {
                        let other = record_key(pm, self.kind, v & !1);
                        self.new_layer(pm, l, s, (&other, v), (key, rec), d + 1);
                        return true;
                    }
                    root_slot = ev(l, s);
                }
            }
        }
        unreachable!("distinct fixed-length keys differ in some slice")
    }

    fn lookup_bytes<M: PmMem>(&self, pm: &M, key: &[u8]) -> Option<u64> {
        let (l, s) = self.find(pm, key)?;
        let v = pm.load(ev(l, s));
        Some(if self.kind == KeyType::Int {
            v
        } else {
            pm.load(v & !1)
        })
    }

    fn update_bytes<M: PmMem>(&mut self, pm: &mut M, key: &[u8], value: u64) -> bool {
        let Some((l, s)) = self.find(pm, key) else {
            return false;
        };
        let at = if self.kind == KeyType::Int {
            ev(l, s)
        } else {
            pm.load(ev(l, s)) & !1
        };
        pm.store(at, value);
        pm.persist(at, 8);
        true
    }

    /// Permutation without the entry, flushed; a leaf losing its last entry is unlinked
    /// (`unlink_leaf`) unless it is its layer's root. Half-full nodes are not merged.
    fn delete_bytes<M: PmMem>(&mut self, pm: &mut M, key: &[u8]) -> bool {
        let Some((root_slot, l, s)) = self.find_in_layer(pm, key) else {
            return false;
        };
        let p = perm(pm, l);
        if p.size() == 1 && l != pm.load(root_slot) && self.unlink_leaf(pm, root_slot, l) {
            return true;
        }
        let pos = (0..p.size())
            .find(|&i| p.get(i) == s)
            .expect("slot in permutation");
        pm.store(l + PERM, p.remove_at(pos).0);
        pm.persist(l + PERM, 8);
        true
    }

    fn scan_bytes<M: PmMem>(&self, pm: &M, start: &[u8], n: usize) -> Vec<(KeyBytes, u64)> {
        let mut out = scan_out(n);
        self.scan_layer(pm, pm.load(self.meta), 0, Some(start), &mut out, n);
        out
    }

    fn recover(&mut self, region: &mut PmRegion) {
        let pm = &mut Instr::new(region);
        self.recover_layer(pm, self.meta);
    }

    fn check<M: PmMem>(&self, pm: &M) -> Result<(), String> {
        self.check_layer(pm, pm.load(self.meta), 0)
    }
}

super::ordered::tree_index!(Masstree);

#[cfg(test)]
mod tests {
    use super::super::ordered::int_key;
    use super::super::ordered::testing::*;
    use super::*;
    use proptest::prelude::*;

    fn tree<M: PmMem>(pm: &mut M, kind: KeyType) -> Masstree {
        Masstree::new(pm, kind, false)
    }

    #[test]
    fn model_int_and_str() {
        model_both_kinds(tree, 7, 6000);
        let mut pm = test_pm();
        let mut t = Masstree::new(&mut pm, KeyType::Str, true);
        run_model(&mut t, &mut pm, &random_ops(KeyType::Str, 8, 3000, 1000));
    }

    #[test]
    fn prop_model() {
        model_property(tree, 24, 400, |_, _| {});
    }

    #[test]
    fn flush_counts_closed_form() {
        let mut pm = test_pm();
        let mut t = tree(&mut pm, KeyType::Int);
        // Without a split: the entry's line, then the permutation's line.
        for k in 1..=15u64 {
            let b = pm.stats().flushes;
            t.insert_bytes(&mut pm, &int_key(k), k);
            assert_eq!(pm.stats().flushes - b, 2);
        }
        // The 16th splits the root leaf: right node (304 B = 5 lines), next, left
        // permutation, new root (5 lines), root pointer, then the right permutation = 14.
        let s = pm.stats();
        t.insert_bytes(&mut pm, &int_key(16), 16);
        let d = pm.stats().minus(&s);
        assert_eq!(d.flushes, 14);
        // All but the new key's permutation commit is split work: own + split = total.
        assert_eq!((d.flushes - d.resize_flushes, d.resize_flushes), (1, 13));
    }

    #[test]
    fn internode_splits_count_as_split_flushes() {
        let mut pm = test_pm();
        let mut t = tree(&mut pm, KeyType::Int);
        let (mut own, mut split, mut total) = (0, 0, 0);
        let (mut splits, mut largest) = (0, 0);
        // Ascending keys: a leaf split every 8 keys, and the root internode splits too.
        for k in 1..=400u64 {
            let s = pm.stats();
            t.insert_bytes(&mut pm, &int_key(k), k);
            let d = pm.stats().minus(&s);
            if d.resize_flushes == 0 {
                // No split: the entry's line, then the permutation's line.
                assert_eq!(d.flushes, 2, "key {k}");
            } else {
                splits += 1;
                // The split's flushes are at least the right node (5 lines), its link and
                // the left node's cut; the key's own commit is one or two flushes.
                assert!(d.resize_flushes >= 7, "key {k}: {d:?}");
                assert!(
                    (1..=2).contains(&(d.flushes - d.resize_flushes)),
                    "key {k}: {d:?}"
                );
                largest = largest.max(d.resize_flushes);
            }
            own += d.flushes - d.resize_flushes;
            split += d.resize_flushes;
            total += d.flushes;
        }
        assert_eq!(own + split, total);
        assert!(splits >= 40, "{splits} splits");
        // The root internode split too: more than a root leaf split's 13 (right node 5,
        // link, cut, new root 5, root pointer), all of it split work.
        assert!(largest > 13, "largest split {largest}");
    }

    /// Every node of every layer (level chains walked from each layer's root).
    fn count_nodes(t: &Masstree, pm: &TestPm, root: u64) -> usize {
        let mut count = 0;
        let mut first = root;
        loop {
            let mut n = first;
            while n != 0 {
                count += 1;
                if pm.load(n) == 0 && t.kind == KeyType::Str {
                    for (_, v, _) in t.entries_of(pm, n) {
                        if v & 1 == 0 {
                            count += count_nodes(t, pm, v);
                        }
                    }
                }
                n = pm.load(n + NEXT);
            }
            if pm.load(first) == 0 {
                return count;
            }
            first = pm.load(first + LEFTMOST);
        }
    }

    /// Deleting every key unlinks and frees every leaf that is not a leftmost child; refills
    /// reuse the freed nodes, so memory stays bounded over fill/empty cycles.
    #[test]
    fn deletes_unlink_and_free_leaves() {
        use rand::seq::SliceRandom;
        for no_bloat in [false, true] {
            for kind in [KeyType::Int, KeyType::Str] {
                let mut pm = test_pm();
                let mut t = Masstree::new(&mut pm, kind, no_bloat);
                let mut keys: Vec<u64> = (0..20_000).collect();
                keys.shuffle(&mut crate::rng::stream(3, "masstree.delete"));
                let mut full = (0, 0, 0);
                let mut emptied = Vec::new();
                for round in 0..3 {
                    for &k in &keys {
                        assert!(t.insert_bytes(&mut pm, &key_of(kind, k), k));
                    }
                    t.check(&pm).unwrap();
                    let now = (
                        count_nodes(&t, &pm, pm.load(t.meta)),
                        pm.live_bytes(),
                        pm.used_bytes(),
                    );
                    if round == 0 {
                        full = now;
                    }
                    keys.shuffle(&mut crate::rng::stream(4 + round, "masstree.delete"));
                    for &k in &keys {
                        assert!(t.delete_bytes(&mut pm, &key_of(kind, k)));
                    }
                    t.check(&pm).unwrap();
                    assert!(t
                        .scan_bytes(&pm, &vec![0u8; kind.bytes() as usize], usize::MAX)
                        .is_empty());
                    let nodes = count_nodes(&t, &pm, pm.load(t.meta));
                    // Left: internal nodes and their leftmost leaves (and string-key layers'
                    // roots), about 2 in 12 of a full tree's nodes.
                    assert!(nodes * 4 < full.0, "{nodes} of {} nodes", full.0);
                    emptied.push(pm.live_bytes());
                }
                // Refills reuse the freed nodes (string-key records are not freed by delete
                // and add their bytes each round, a 64 B size class each in the region);
                // the kept internal nodes grow the emptied tree by a few nodes a round
                // (within 1% of the fill over three cycles).
                let records = match kind {
                    KeyType::Int => 0,
                    KeyType::Str => 20_000 * super::super::ordered::record_bytes(kind),
                };
                let record_space = records / super::super::ordered::record_bytes(kind) * 64;
                assert!(
                    pm.used_bytes() <= full.2 + full.2 / 100 + 2 * record_space,
                    "frontier {} after three cycles, {} after the first fill",
                    pm.used_bytes(),
                    full.2
                );
                for (i, &e) in emptied.iter().enumerate() {
                    let kept = e - i as u64 * records;
                    assert!(kept < full.1 / 4 + records, "{emptied:?} of {}", full.1);
                }
            }
        }
    }

    /// A leaf unlinked by its last delete costs three flushes (parent permutation, its own
    /// permutation, left sibling's `next`); any other delete one.
    #[test]
    fn delete_flush_counts() {
        let mut pm = test_pm();
        let mut t = tree(&mut pm, KeyType::Int);
        for k in 1..=16u64 {
            t.insert_bytes(&mut pm, &int_key(k), k);
        }
        // Split at 16: left leaf keeps 1..=8, right 9..=16.
        for k in 9..=15u64 {
            let b = pm.stats().flushes;
            assert!(t.delete_bytes(&mut pm, &int_key(k)));
            assert_eq!(pm.stats().flushes - b, 1);
        }
        let live = pm.live_bytes();
        let b = pm.stats().flushes;
        assert!(t.delete_bytes(&mut pm, &int_key(16)));
        assert_eq!(pm.stats().flushes - b, 3);
        assert_eq!(live - pm.live_bytes(), NODE);
        assert_eq!(count_nodes(&t, &pm, pm.load(t.meta)), 2);
        // The leftmost leaf is kept: emptying it is one flush per key.
        for k in 1..=8u64 {
            let b = pm.stats().flushes;
            assert!(t.delete_bytes(&mut pm, &int_key(k)));
            assert_eq!(pm.stats().flushes - b, 1);
        }
        t.check(&pm).unwrap();
        for k in 1..=40u64 {
            assert!(t.insert_bytes(&mut pm, &int_key(k), k));
        }
        t.check(&pm).unwrap();
    }

    /// Delete-heavy: fill, then mostly deletes, so leaves empty and unlink at many crash
    /// points.
    fn delete_heavy_ops(kind: KeyType, n: u64) -> Vec<Op> {
        use rand::seq::SliceRandom;
        let mut keys: Vec<u64> = (0..n).collect();
        keys.shuffle(&mut crate::rng::stream(5, "masstree.crash"));
        let mut ops: Vec<Op> = keys
            .iter()
            .map(|&k| Op::Insert(key_of(kind, k), k))
            .collect();
        keys.shuffle(&mut crate::rng::stream(6, "masstree.crash"));
        for (i, &k) in keys.iter().enumerate() {
            ops.push(Op::Remove(key_of(kind, k)));
            if i % 7 == 0 {
                ops.push(Op::Insert(key_of(kind, k + n), k));
            }
        }
        ops
    }

    #[test]
    fn crash_delete_heavy() {
        for kind in [KeyType::Int, KeyType::Str] {
            for no_bloat in [false, true] {
                let ops = delete_heavy_ops(kind, 120);
                let make = |pm: &mut Instr<&mut PmRegion>| Masstree::new(pm, kind, no_bloat);
                let n = crash_test_ops(make, Masstree::recover, kind, &ops, 21, 1, false);
                assert!(n > 300, "{n} crash points");
                let n = crash_test_ops(make, Masstree::recover, kind, &ops, 22, 2, true);
                assert!(n > 150, "{n} crash points");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Delete-heavy model runs: half the operations remove.
        #[test]
        fn prop_model_deletes(seed in 0u64..1_000_000, n in 1usize..300, space in 1u64..600) {
            use rand::Rng;
            for kind in [KeyType::Int, KeyType::Str] {
                let mut pm = test_pm();
                let mut t = tree(&mut pm, kind);
                let mut r = crate::rng::stream(seed, "masstree.prop");
                let mut ops: Vec<Op> = (0..space)
                    .map(|k| Op::Insert(key_of(kind, k), k))
                    .collect();
                ops.extend(random_ops(kind, seed, n, space).into_iter().map(|o| match o {
                    Op::Insert(k, _) if r.random_bool(0.8) => Op::Remove(k),
                    o => o,
                }));
                run_model(&mut t, &mut pm, &ops);
            }
        }
    }

    #[test]
    fn crash_every_fence() {
        for kind in [KeyType::Int, KeyType::Str] {
            let n = crash_test(
                |pm| tree(pm, kind),
                Masstree::recover,
                kind,
                260,
                11,
                1,
                false,
            );
            assert!(n > 200, "{n} crash points");
        }
    }

    #[test]
    fn crash_adversarial() {
        let n = crash_test(
            |pm| tree(pm, KeyType::Str),
            Masstree::recover,
            KeyType::Str,
            300,
            12,
            3,
            true,
        );
        assert!(n > 100);
    }
}
