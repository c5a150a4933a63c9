//! What the ordered indexes (FAST&FAIR, P-ART, P-Masstree) need from persistent memory, and
//! what they share: keys as byte strings, out-of-line value records, the index trait.
//!
//! The indexes address the region by byte offset (0 = null) and persist through [`PmMem`],
//! so the same code runs on the framework's instrumented `PmRegion` and on [`SimPm`], a
//! self-contained image with crash snapshots that the unit tests use.

use std::cmp::Ordering;

use rand::Rng;

pub use super::adapter::{Adapted, Instr, Peek};

/// Bytes in a cache line (the unit of flushes).
pub const LINE: u64 = crate::cache::LINE_BYTES;

/// Persistent memory as an index sees it: 8 B loads/stores, allocation, and the
/// persistence primitives. `persist` = flush every line covering the range, then fence.
pub trait PmMem {
    fn load(&self, off: u64) -> u64;
    fn store(&mut self, off: u64, v: u64);
    /// Non-temporal 8 B store (bypasses the caches; durable at the next fence).
    fn ntstore(&mut self, off: u64, v: u64);
    /// Write back the line holding `off`.
    fn flush(&mut self, off: u64);
    fn fence(&mut self);
    /// Zeroed, `align`-aligned block of `size` bytes.
    fn alloc(&mut self, size: u64, align: u64) -> u64;
    /// Return a block of `size` bytes from `alloc`. Contract: the block is unreachable from
    /// the durable structure (the unlinking store is fenced) before it is freed; a crash
    /// between may leak it, never free a reachable block.
    fn free(&mut self, off: u64, size: u64);
    /// Hint that `[off, off+len)` is read soon. Not an access: not counted, not seen by the
    /// model (native speed only).
    #[inline]
    fn prefetch(&self, _off: u64, _len: u64) {}
    fn persist(&mut self, off: u64, len: u64) {
        let mut line = off & !(LINE - 1);
        while line < off + len.max(1) {
            self.flush(line);
            line += LINE;
        }
        self.fence();
    }
    fn load_bytes(&self, off: u64, out: &mut [u8]) {
        for (i, chunk) in out.chunks_mut(8).enumerate() {
            let w = self.load(off + 8 * i as u64).to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }
    fn store_bytes(&mut self, off: u64, bytes: &[u8]) {
        for (i, chunk) in bytes.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.store(off + 8 * i as u64, u64::from_le_bytes(w));
        }
    }
}

/// 8 B integer keys (compared as unsigned integers) or 24 B string keys (compared as bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Int,
    Str,
}

impl KeyKind {
    #[allow(clippy::len_without_is_empty)]
    pub fn len(self) -> usize {
        match self {
            KeyKind::Int => 8,
            KeyKind::Str => 24,
        }
    }
}

/// An integer key as the byte string the indexes take (big-endian: byte order = numeric order).
pub fn int_key(k: u64) -> [u8; 8] {
    k.to_be_bytes()
}

/// Value records: `[value u64][key bytes]`, written and persisted before the index publishes
/// a pointer to them (like RECIPE's leaf `Key` objects). An index frees one only when nothing
/// can name it any more once its unlink is fenced (P-ART's leaves, FAST&FAIR's integer-key
/// records); string-key records kept as separators or compared through stale copies stay.
pub fn record_bytes(kind: KeyKind) -> u64 {
    8 + kind.len() as u64
}

/// Write and persist a value record; returns its offset.
pub fn new_record<M: PmMem>(pm: &mut M, kind: KeyKind, key: &[u8], value: u64) -> u64 {
    let size = record_bytes(kind);
    let r = pm.alloc(size, 16);
    pm.store(r, value);
    pm.store_bytes(r + 8, key);
    pm.persist(r, size);
    r
}

pub fn record_key<M: PmMem>(pm: &M, kind: KeyKind, rec: u64) -> Vec<u8> {
    let mut k = vec![0u8; kind.len()];
    pm.load_bytes(rec + 8, &mut k);
    k
}

/// Order of two stored key words (string keys: compare the records' bytes, no allocation).
pub fn cmp_words<M: PmMem>(pm: &M, kind: KeyKind, a: u64, b: u64) -> Ordering {
    match kind {
        KeyKind::Int => a.cmp(&b),
        KeyKind::Str => {
            let mut kb = [0u8; 24];
            pm.load_bytes(b + 8, &mut kb);
            cmp_stored(pm, kind, a, &kb)
        }
    }
}

/// Compare a stored key word with a search key: for integer keys the word is the key, for
/// string keys it points to a value record holding the key bytes.
pub fn cmp_stored<M: PmMem>(pm: &M, kind: KeyKind, stored: u64, key: &[u8]) -> Ordering {
    match kind {
        KeyKind::Int => stored.cmp(&u64::from_be_bytes(key.try_into().unwrap())),
        KeyKind::Str => {
            let mut b = [0u8; 24];
            pm.load_bytes(stored + 8, &mut b);
            b[..].cmp(key)
        }
    }
}

/// Free a block whose later reuse must read as durably zero (nodes that `no_bloat` publishes
/// without flushing their all-zero lines): its nonzero lines are zeroed and flushed first.
/// Same contract as [`PmMem::free`]: the block is already unreachable, durably.
pub fn free_zeroed<M: PmMem>(pm: &mut M, off: u64, size: u64) {
    let mut dirty = false;
    for line in (off..off + size).step_by(LINE as usize) {
        let end = (line + LINE).min(off + size);
        if (line..end).step_by(8).any(|w| pm.load(w) != 0) {
            (line..end).step_by(8).for_each(|w| pm.store(w, 0));
            pm.flush(line);
            dirty = true;
        }
    }
    if dirty {
        pm.fence();
    }
    pm.free(off, size);
}

/// The operations every ordered index offers; keys are `kind().len()` bytes.
pub trait OrderedIndex<M: PmMem> {
    fn kind(&self) -> KeyKind;
    /// Insert; false (and nothing changed) if the key is present.
    fn insert(&mut self, pm: &mut M, key: &[u8], value: u64) -> bool;
    fn lookup(&self, pm: &M, key: &[u8]) -> Option<u64>;
    /// Overwrite the value of a present key; false if absent.
    fn update(&mut self, pm: &mut M, key: &[u8], value: u64) -> bool;
    /// Remove; false if absent.
    fn remove(&mut self, pm: &mut M, key: &[u8]) -> bool;
    /// Up to `n` pairs with key >= `start`, in key order.
    fn scan(&self, pm: &M, start: &[u8], n: usize) -> Vec<(Vec<u8>, u64)>;
    /// Bring the structure back to a consistent state after a crash (the PM image is what
    /// reached the persistence domain).
    fn recover(&mut self, pm: &mut M);
    /// Structural invariants; Err says which one failed where.
    fn check(&self, pm: &M) -> Result<(), String>;
}

/// Counts of the persistence primitives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PersistCounts {
    pub flushes: u64,
    pub fences: u64,
    pub ntstores: u64,
}

/// A self-contained PM image for tests: the volatile view (what loads see) and the durable
/// view (what survives a crash: flushed lines and non-temporal stores, ADR semantics), with
/// snapshots at fences for crash injection.
pub struct SimPm {
    mem: Vec<u64>,
    durable: Vec<u64>,
    dirty: Vec<bool>,
    next: u64,
    pub counts: PersistCounts,
    /// Take a crash image at this fence number (1-based).
    pub crash_at_fence: Option<u64>,
    /// The image taken, with the number of operations completed before it.
    pub crash_image: Option<(Vec<u64>, u64)>,
    /// Operations completed so far (the test driver bumps it).
    pub ops_done: u64,
    /// Adversarial crashes: each dirty unflushed line reaches PM with this probability.
    pub adversarial: Option<(f64, crate::rng::SimRng)>,
    /// Volatile free lists by block size (lost on a restart: freed blocks then leak, as
    /// blocks between a region allocator's link persist and head persist do).
    free: std::collections::HashMap<u64, Vec<u64>>,
    /// Bytes handed out and not freed (tests bound memory over insert/delete cycles).
    pub live_bytes: u64,
}

impl SimPm {
    pub fn new(bytes: u64) -> SimPm {
        let words = (bytes / 8) as usize;
        SimPm {
            mem: vec![0; words],
            durable: vec![0; words],
            dirty: vec![false; words / 8],
            next: LINE, // offset 0 is null
            counts: PersistCounts::default(),
            crash_at_fence: None,
            crash_image: None,
            ops_done: 0,
            adversarial: None,
            free: Default::default(),
            live_bytes: 0,
        }
    }

    /// A fresh memory whose volatile and durable views are `image` (a restart after a crash).
    pub fn from_image(image: Vec<u64>, next: u64) -> SimPm {
        let lines = image.len() / 8;
        SimPm {
            durable: image.clone(),
            mem: image,
            dirty: vec![false; lines],
            next,
            counts: PersistCounts::default(),
            crash_at_fence: None,
            crash_image: None,
            ops_done: 0,
            adversarial: None,
            free: Default::default(),
            live_bytes: 0,
        }
    }

    /// The allocation frontier (a restarted image allocates past everything ever allocated).
    pub fn frontier(&self) -> u64 {
        self.next
    }

    fn line_of(off: u64) -> usize {
        (off / LINE) as usize
    }

    fn snapshot(&mut self) -> Vec<u64> {
        let mut img = self.durable.clone();
        if let Some((p, rng)) = self.adversarial.as_mut() {
            for (l, d) in self.dirty.iter().enumerate() {
                if *d && rng.random::<f64>() < *p {
                    img[l * 8..l * 8 + 8].copy_from_slice(&self.mem[l * 8..l * 8 + 8]);
                }
            }
        }
        img
    }
}

impl PmMem for SimPm {
    #[inline]
    fn load(&self, off: u64) -> u64 {
        debug_assert!(off.is_multiple_of(8) && off != 0);
        self.mem[(off / 8) as usize]
    }
    #[inline]
    fn store(&mut self, off: u64, v: u64) {
        debug_assert!(off.is_multiple_of(8) && off != 0);
        self.mem[(off / 8) as usize] = v;
        self.dirty[Self::line_of(off)] = true;
    }
    fn ntstore(&mut self, off: u64, v: u64) {
        self.counts.ntstores += 1;
        self.mem[(off / 8) as usize] = v;
        self.durable[(off / 8) as usize] = v;
    }
    fn flush(&mut self, off: u64) {
        self.counts.flushes += 1;
        let l = Self::line_of(off);
        self.durable[l * 8..l * 8 + 8].copy_from_slice(&self.mem[l * 8..l * 8 + 8]);
        self.dirty[l] = false;
    }
    fn fence(&mut self) {
        self.counts.fences += 1;
        if self.crash_at_fence == Some(self.counts.fences) {
            let img = self.snapshot();
            self.crash_image = Some((img, self.ops_done));
        }
    }
    fn alloc(&mut self, size: u64, align: u64) -> u64 {
        self.live_bytes += size;
        if let Some(list) = self.free.get_mut(&size) {
            if let Some(i) = list.iter().rposition(|b| b.is_multiple_of(align)) {
                // Zeroed by plain stores, as `Instr` zeroes a reused region block: the durable
                // copy keeps the old bytes until the index flushes them.
                let off = list.swap_remove(i);
                for w in (off..off + size).step_by(8) {
                    self.store(w, 0);
                }
                return off;
            }
        }
        let off = self.next.div_ceil(align) * align;
        self.next = off + size;
        assert!(self.next <= 8 * self.mem.len() as u64, "SimPm out of space");
        off
    }
    fn free(&mut self, off: u64, size: u64) {
        self.live_bytes -= size;
        self.free.entry(size).or_default().push(off);
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Shared test drivers: model-based runs against a `BTreeMap` and crash injection.
    use super::*;
    use crate::rng;
    use std::collections::BTreeMap;

    #[derive(Debug, Clone)]
    pub enum Op {
        Insert(Vec<u8>, u64),
        Update(Vec<u8>, u64),
        Remove(Vec<u8>),
        Lookup(Vec<u8>),
        Scan(Vec<u8>, usize),
    }

    /// Small images: every crash point copies one.
    const CRASH_PM_BYTES: u64 = 2 << 20;

    pub fn key_of(kind: KeyKind, k: u64) -> Vec<u8> {
        match kind {
            KeyKind::Int => int_key(k).to_vec(),
            KeyKind::Str => {
                // 24 B keys sharing long prefixes, as string keys do.
                let mut s = *b"user0000000000000000000\0";
                let d = format!("{:016}", k % 10_000_000_000_000_000);
                s[6..22].copy_from_slice(d.as_bytes());
                s.to_vec()
            }
        }
    }

    pub fn random_ops(kind: KeyKind, seed: u64, n: usize, key_space: u64) -> Vec<Op> {
        let mut r = rng::stream(seed, "ordered-ops");
        (0..n)
            .map(|_| {
                let k = key_of(kind, r.random_range(0..key_space));
                match r.random_range(0..10) {
                    0..=4 => Op::Insert(k, r.random()),
                    5 => Op::Update(k, r.random()),
                    6 => Op::Remove(k),
                    7..=8 => Op::Lookup(k),
                    _ => Op::Scan(k, r.random_range(1..40)),
                }
            })
            .collect()
    }

    /// Apply `ops` to the index and a model, asserting equal answers; checks invariants at
    /// the end (and every `check_every` ops).
    pub fn run_model<I: OrderedIndex<SimPm>>(idx: &mut I, pm: &mut SimPm, ops: &[Op]) {
        let mut model: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        for (i, op) in ops.iter().enumerate() {
            match op {
                Op::Insert(k, v) => {
                    let fresh = !model.contains_key(k);
                    if fresh {
                        model.insert(k.clone(), *v);
                    }
                    assert_eq!(idx.insert(pm, k, *v), fresh, "insert #{i}");
                }
                Op::Update(k, v) => {
                    let present = model.contains_key(k);
                    if present {
                        model.insert(k.clone(), *v);
                    }
                    assert_eq!(idx.update(pm, k, *v), present, "update #{i}");
                }
                Op::Remove(k) => {
                    assert_eq!(idx.remove(pm, k), model.remove(k).is_some(), "remove #{i}");
                }
                Op::Lookup(k) => {
                    assert_eq!(idx.lookup(pm, k), model.get(k).copied(), "lookup #{i}")
                }
                Op::Scan(k, n) => {
                    let want: Vec<(Vec<u8>, u64)> = model
                        .range(k.clone()..)
                        .take(*n)
                        .map(|(k, v)| (k.clone(), *v))
                        .collect();
                    assert_eq!(idx.scan(pm, k, *n), want, "scan #{i}");
                }
            }
            pm.ops_done += 1;
        }
        if let Err(e) = idx.check(pm) {
            panic!("invariant: {e}");
        }
        let all = idx.scan(pm, &vec![0u8; idx.kind().len()], usize::MAX);
        let want: Vec<(Vec<u8>, u64)> = model.into_iter().collect();
        assert_eq!(all, want, "final contents");
    }

    /// Crash at every `stride`-th fence of an insert/update/remove run: recover from the image
    /// and check that every completed operation is visible, the in-flight one is all or
    /// nothing, and the invariants hold.
    pub fn crash_test<I, F>(
        make: F,
        kind: KeyKind,
        n_ops: usize,
        seed: u64,
        stride: u64,
        adversarial: bool,
    ) -> u64
    where
        I: OrderedIndex<SimPm>,
        F: Fn(&mut SimPm) -> I,
    {
        let ops: Vec<Op> = random_ops(kind, seed, n_ops, n_ops as u64)
            .into_iter()
            .filter(|o| matches!(o, Op::Insert(..) | Op::Update(..) | Op::Remove(..)))
            .collect();
        crash_test_ops(make, kind, &ops, seed, stride, adversarial)
    }

    /// `crash_test` on a given sequence of inserts, updates and removes (e.g. delete-heavy
    /// runs that make nodes shrink or merge).
    pub fn crash_test_ops<I, F>(
        make: F,
        kind: KeyKind,
        ops: &[Op],
        seed: u64,
        stride: u64,
        adversarial: bool,
    ) -> u64
    where
        I: OrderedIndex<SimPm>,
        F: Fn(&mut SimPm) -> I,
    {
        // Models after each op.
        let mut models = vec![BTreeMap::new()];
        for op in ops {
            let mut m: BTreeMap<Vec<u8>, u64> = models.last().unwrap().clone();
            match op {
                Op::Insert(k, v) => {
                    m.entry(k.clone()).or_insert(*v);
                }
                Op::Update(k, v) => {
                    if let Some(x) = m.get_mut(k) {
                        *x = *v;
                    }
                }
                Op::Remove(k) => {
                    m.remove(k);
                }
                _ => {}
            }
            models.push(m);
        }
        let fences_total = {
            let mut pm = SimPm::new(CRASH_PM_BYTES);
            let mut idx = make(&mut pm);
            let base = pm.counts.fences;
            apply(&mut idx, &mut pm, ops);
            pm.counts.fences - base
        };
        let mut crashes = 0;
        let mut f = 1;
        while f <= fences_total {
            let mut pm = SimPm::new(CRASH_PM_BYTES);
            let mut idx = make(&mut pm);
            pm.crash_at_fence = Some(pm.counts.fences + f);
            if adversarial {
                pm.adversarial = Some((0.5, rng::stream(seed ^ f, "adversarial")));
            }
            apply(&mut idx, &mut pm, ops);
            let (img, done) = pm.crash_image.take().expect("crash image");
            let mut rpm = SimPm::from_image(img, pm.frontier());
            idx.recover(&mut rpm);
            if let Err(e) = idx.check(&rpm) {
                panic!("fence {f} (after {done} ops): invariant: {e}");
            }
            let got: BTreeMap<Vec<u8>, u64> = idx
                .scan(&rpm, &vec![0u8; kind.len()], usize::MAX)
                .into_iter()
                .collect();
            let before = &models[done as usize];
            let after = &models[(done as usize + 1).min(models.len() - 1)];
            assert!(
                got == *before || got == *after,
                "fence {f}: after {done} ops the recovered contents ({} keys) are neither the \
                 state before ({} keys) nor after ({} keys) the in-flight op {:?}",
                got.len(),
                before.len(),
                after.len(),
                ops.get(done as usize)
            );
            for (k, v) in &got {
                assert_eq!(
                    idx.lookup(&rpm, k),
                    Some(*v),
                    "fence {f}: lookup after recovery"
                );
            }
            // The recovered index keeps working.
            let k = key_of(kind, u64::MAX / 3);
            assert!(idx.insert(&mut rpm, &k, 7));
            assert_eq!(idx.lookup(&rpm, &k), Some(7));
            crashes += 1;
            f += stride;
        }
        crashes
    }

    fn apply<I: OrderedIndex<SimPm>>(idx: &mut I, pm: &mut SimPm, ops: &[Op]) {
        for op in ops {
            match op {
                Op::Insert(k, v) => {
                    idx.insert(pm, k, *v);
                }
                Op::Update(k, v) => {
                    idx.update(pm, k, *v);
                }
                Op::Remove(k) => {
                    idx.remove(pm, k);
                }
                _ => {}
            }
            pm.ops_done += 1;
        }
    }
}
