//! What the ordered indexes (FAST&FAIR, P-ART, P-Masstree, P-BwTree, P-HOT) share: keys as
//! byte strings, out-of-line value records, the conversion of the framework's keys. They persist through
//! [`PmMem`] (`pmindex/mem.rs`) on the one simulated region, `PmRegion`.

use std::cmp::Ordering;

pub(crate) use crate::pmindex::mem::{Instr, Peek, PmMem};
pub(crate) use crate::pmindex::LINE;
use crate::pmindex::{Key, KeyType};

#[cfg(test)]
/// An integer key as the byte string the indexes take (big-endian: byte order = numeric order).
pub(crate) fn int_key(k: u64) -> [u8; 8] {
    k.to_be_bytes()
}

/// Value records: `[value u64][key bytes]`, written and persisted before the index publishes
/// a pointer to them (like RECIPE's leaf `Key` objects). An index frees one only when nothing
/// can name it any more once its unlink is fenced (P-ART's leaves, FAST&FAIR's integer-key
/// records); string-key records kept as separators or compared through stale copies stay.
pub(crate) fn record_bytes(kind: KeyType) -> u64 {
    8 + kind.bytes()
}

/// Write and persist a value record; returns its offset.
pub(crate) fn new_record<M: PmMem>(pm: &mut M, kind: KeyType, key: &[u8], value: u64) -> u64 {
    let size = record_bytes(kind);
    let r = pm.alloc(size, 16);
    pm.store(r, value);
    pm.store_bytes(r + 8, key);
    pm.persist(r, size);
    r
}

/// A value record persisted the way RECIPE's YCSB driver persists a key record before it
/// calls the index (P-HOT's records, P-BwTree's string keys): `clflush` of the record with a
/// fence before and after.
pub(crate) fn new_record_fenced<M: PmMem>(
    pm: &mut M,
    kind: KeyType,
    key: &[u8],
    value: u64,
) -> u64 {
    pm.fence();
    new_record(pm, kind, key, value)
}

pub(crate) fn record_key<M: PmMem>(pm: &M, kind: KeyType, rec: u64) -> KeyBytes {
    let mut k = KeyBytes::zeroed(kind);
    pm.load_bytes(rec + 8, &mut k.b[..k.n as usize]);
    k
}

/// A key's bytes (8 or 24) held in place: a scan makes one per record it returns, and a
/// heap allocation each was most of a native scan's time (RECIPE's scans copy into a
/// caller's array).
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyBytes {
    b: [u8; 24],
    n: u8,
}

impl KeyBytes {
    fn zeroed(kind: KeyType) -> KeyBytes {
        KeyBytes {
            b: [0; 24],
            n: kind.bytes() as u8,
        }
    }

    /// The bytes of an integer key word (big-endian, so they sort as the numbers do).
    pub(crate) fn of_int(word: u64) -> KeyBytes {
        let mut k = KeyBytes::zeroed(KeyType::Int);
        k.b[..8].copy_from_slice(&word.to_be_bytes());
        k
    }
}

impl std::ops::Deref for KeyBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.b[..self.n as usize]
    }
}

impl PartialEq<&[u8]> for KeyBytes {
    fn eq(&self, other: &&[u8]) -> bool {
        **self == **other
    }
}

/// The vector a scan of up to `n` entries fills: room for a YCSB scan's length up front (a
/// whole listing grows past it). Grown push by push, its reallocations were host work that
/// the model never sees, a percent or two of a YCSB E run.
pub(crate) fn scan_out(n: usize) -> Vec<(KeyBytes, u64)> {
    Vec::with_capacity(n.min(1024))
}

/// Order of two stored key words (string keys: compare the records' bytes, no allocation).
pub(crate) fn cmp_words<M: PmMem>(pm: &M, kind: KeyType, a: u64, b: u64) -> Ordering {
    match kind {
        KeyType::Int => a.cmp(&b),
        KeyType::Str => {
            let mut kb = [0u8; 24];
            pm.load_bytes(b + 8, &mut kb);
            cmp_stored(pm, kind, a, &kb)
        }
    }
}

/// Compare a stored key word with a search key: for integer keys the word is the key, for
/// string keys it points to a value record holding the key bytes.
pub(crate) fn cmp_stored<M: PmMem>(pm: &M, kind: KeyType, stored: u64, key: &[u8]) -> Ordering {
    match kind {
        KeyType::Int => stored.cmp(&u64::from_be_bytes(key.try_into().unwrap())),
        KeyType::Str => {
            let mut b = [0u8; 24];
            pm.load_bytes(stored + 8, &mut b);
            b[..].cmp(key)
        }
    }
}

/// Free a block whose later reuse must read as durably zero (nodes that `no_bloat` publishes
/// without flushing their all-zero lines): its nonzero lines are zeroed and flushed first.
/// Same contract as [`PmMem::free`]: the block is already unreachable, durably.
pub(crate) fn free_zeroed<M: PmMem>(pm: &mut M, off: u64, size: u64) {
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

/// The smallest key of a kind (all zero bytes): where a scan over every entry starts.
pub(crate) fn min_key(kind: KeyType) -> Vec<u8> {
    vec![0u8; kind.bytes() as usize]
}

/// A tree's scan result (key bytes, value) as the framework's keys.
pub(crate) fn keyed(
    kind: KeyType,
    pairs: Vec<(KeyBytes, u64)>,
) -> impl Iterator<Item = (Key, u64)> {
    pairs
        .into_iter()
        .map(move |(k, v)| (Key::from_bytes(kind, &k), v))
}

/// `impl PmIndex` for a tree: the framework's keys as bytes, every operation run on the
/// instrumented view of the region (what the model sees), checks and listings on the
/// read-only one. The tree has a `kind: KeyType` field and the byte-key methods
/// `insert_bytes`, `lookup_bytes`, `update_bytes`, `delete_bytes`, `scan_bytes` and `check`,
/// generic over the view (`PmMem`).
macro_rules! tree_index {
    ($tree:ty) => {
        impl $crate::pmindex::PmIndex for $tree {
            fn fork(&self) -> Option<Box<dyn $crate::pmindex::PmIndex>> {
                Some(Box::new(self.clone()))
            }
            fn insert(
                &mut self,
                pm: &mut $crate::pmindex::PmRegion,
                key: $crate::pmindex::Key,
                value: u64,
            ) -> $crate::pmindex::PmResult<bool> {
                let (b, n) = key.bytes();
                Ok(self.insert_bytes(
                    &mut $crate::pmindex::trees::ordered::Instr::new(pm),
                    &b[..n],
                    value,
                ))
            }
            fn lookup(
                &mut self,
                pm: &mut $crate::pmindex::PmRegion,
                key: $crate::pmindex::Key,
            ) -> Option<u64> {
                let (b, n) = key.bytes();
                self.lookup_bytes(&$crate::pmindex::trees::ordered::Instr::new(pm), &b[..n])
            }
            fn update(
                &mut self,
                pm: &mut $crate::pmindex::PmRegion,
                key: $crate::pmindex::Key,
                value: u64,
            ) -> $crate::pmindex::PmResult<bool> {
                let (b, n) = key.bytes();
                Ok(self.update_bytes(
                    &mut $crate::pmindex::trees::ordered::Instr::new(pm),
                    &b[..n],
                    value,
                ))
            }
            fn delete(
                &mut self,
                pm: &mut $crate::pmindex::PmRegion,
                key: $crate::pmindex::Key,
            ) -> $crate::pmindex::PmResult<bool> {
                let (b, n) = key.bytes();
                Ok(self.delete_bytes(
                    &mut $crate::pmindex::trees::ordered::Instr::new(pm),
                    &b[..n],
                ))
            }
            fn scan(
                &mut self,
                pm: &mut $crate::pmindex::PmRegion,
                start: $crate::pmindex::Key,
                count: usize,
                out: &mut Vec<($crate::pmindex::Key, u64)>,
            ) -> $crate::pmindex::PmResult<()> {
                let (b, n) = start.bytes();
                let got = self.scan_bytes(
                    &$crate::pmindex::trees::ordered::Instr::new(pm),
                    &b[..n],
                    count,
                );
                out.extend($crate::pmindex::trees::ordered::keyed(self.kind, got));
                Ok(())
            }
            fn check_invariants(&self, pm: &$crate::pmindex::PmRegion) -> Result<(), String> {
                self.check(&$crate::pmindex::trees::ordered::Peek(pm))
            }
            fn entries(&self, pm: &$crate::pmindex::PmRegion) -> Vec<($crate::pmindex::Key, u64)> {
                let start = $crate::pmindex::trees::ordered::min_key(self.kind);
                let all = self.scan_bytes(
                    &$crate::pmindex::trees::ordered::Peek(pm),
                    &start,
                    usize::MAX,
                );
                $crate::pmindex::trees::ordered::keyed(self.kind, all).collect()
            }
        }
    };
}
pub(crate) use tree_index;

#[cfg(test)]
pub(crate) mod testing {
    //! Shared test drivers: model-based runs against a `BTreeMap`, and the framework's crash
    //! harness (`pmindex/crash.rs`) on a tree built with any options.
    use super::*;
    use crate::pmindex::crash::{crash_test_subject, Subject};
    use crate::pmindex::{
        self as fw, CrashCapture, IndexOptions, Key, KeyType, PmIndex, PmRegion, PmResult,
        RegionConfig, TonicOpts,
    };
    use crate::rng;
    use rand::Rng;
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    /// An owned, instrumented region: a tree's own tests drive it directly (key bytes) or
    /// through `PmIndex` (`region_mut`).
    pub(crate) type TestPm = Instr<PmRegion>;

    /// An empty anonymous region (64 KiB, doubling on demand).
    pub(crate) fn test_pm() -> TestPm {
        Instr::owned(PmRegion::anonymous(small_region()).expect("anonymous region"))
    }

    fn small_region() -> RegionConfig {
        RegionConfig {
            initial_bytes: 64 << 10,
            ..RegionConfig::default()
        }
    }

    #[derive(Debug, Clone)]
    pub(crate) enum Op {
        Insert(Vec<u8>, u64),
        Update(Vec<u8>, u64),
        Remove(Vec<u8>),
        Lookup(Vec<u8>),
        Scan(Vec<u8>, usize),
    }

    pub(crate) fn key_of(kind: KeyType, k: u64) -> Vec<u8> {
        match kind {
            KeyType::Int => int_key(k).to_vec(),
            KeyType::Str => {
                // 24 B keys sharing long prefixes, as string keys do.
                let mut s = *b"user0000000000000000000\0";
                let d = format!("{:016}", k % 10_000_000_000_000_000);
                s[6..22].copy_from_slice(d.as_bytes());
                s.to_vec()
            }
        }
    }

    pub(crate) fn random_ops(kind: KeyType, seed: u64, n: usize, key_space: u64) -> Vec<Op> {
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

    /// The framework's form of a test operation (8 B keys are integers, 24 B strings).
    fn framework_op(op: &Op) -> fw::Op {
        let key = |k: &[u8]| {
            let kt = if k.len() == 8 {
                KeyType::Int
            } else {
                KeyType::Str
            };
            Key::from_bytes(kt, k)
        };
        match op {
            Op::Insert(k, v) => fw::Op::Insert(key(k), *v),
            Op::Update(k, v) => fw::Op::Update(key(k), *v),
            Op::Remove(k) => fw::Op::Delete(key(k)),
            Op::Lookup(k) => fw::Op::Lookup(key(k)),
            Op::Scan(k, n) => fw::Op::Scan(key(k), *n),
        }
    }

    /// Apply `ops` to the index (through `PmIndex`) and a model, asserting equal answers;
    /// checks the invariants and the full contents at the end.
    pub(crate) fn run_model<I: PmIndex>(idx: &mut I, pm: &mut TestPm, ops: &[Op]) {
        let pm = pm.region_mut();
        let mut model: BTreeMap<Key, u64> = BTreeMap::new();
        for (i, op) in ops.iter().enumerate() {
            let op = framework_op(op);
            let got = op.apply(idx, pm).expect("operation");
            assert_eq!(got, op.apply_model(&mut model), "{op:?} #{i}");
        }
        if let Err(e) = idx.check_invariants(pm) {
            panic!("invariant: {e}");
        }
        let mut all = idx.entries(pm);
        all.sort();
        let want: Vec<(Key, u64)> = model.into_iter().collect();
        assert_eq!(all, want, "final contents");
    }

    /// The model run every tree passes: `ops` random operations on keys below 3000, on a
    /// fresh tree of each key kind; returns the trees and their regions for further checks.
    pub(crate) fn model_both_kinds<I: PmIndex>(
        tree: impl Fn(&mut TestPm, KeyType) -> I,
        seed: u64,
        ops: usize,
    ) -> Vec<(I, TestPm)> {
        [KeyType::Int, KeyType::Str]
            .into_iter()
            .map(|kind| {
                let mut pm = test_pm();
                let mut t = tree(&mut pm, kind);
                run_model(&mut t, &mut pm, &random_ops(kind, seed, ops, 3000));
                (t, pm)
            })
            .collect()
    }

    /// The property every tree has: any run of up to 600 random operations on int keys
    /// below a random bound (under `max_key_space`) matches the model, and `check` holds
    /// after it. `cases` runs, shrunk to the smallest failing one.
    pub(crate) fn model_property<I: PmIndex>(
        tree: impl Fn(&mut TestPm, KeyType) -> I,
        cases: u32,
        max_key_space: u64,
        check: impl Fn(&I, &TestPm),
    ) {
        use proptest::test_runner::{Config, TestRunner};
        let mut runner = TestRunner::new(Config::with_cases(cases));
        let inputs = (0u64..1_000_000, 1usize..600, 1u64..max_key_space);
        let result = runner.run(&inputs, |(seed, n, space)| {
            let mut pm = test_pm();
            let mut t = tree(&mut pm, KeyType::Int);
            run_model(&mut t, &mut pm, &random_ops(KeyType::Int, seed, n, space));
            check(&t, &pm);
            Ok(())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }

    /// Crash-test a random insert/update/remove run of `n_ops` (see [`crash_test_ops`]).
    pub(crate) fn crash_test<I: PmIndex + Clone + 'static>(
        make: impl Fn(&mut Instr<&mut PmRegion>) -> I,
        recover: fn(&mut I, &mut PmRegion),
        kind: KeyType,
        n_ops: usize,
        seed: u64,
        stride: u64,
        adversarial: bool,
    ) -> u64 {
        let ops: Vec<Op> = random_ops(kind, seed, n_ops, n_ops as u64)
            .into_iter()
            .filter(|o| matches!(o, Op::Insert(..) | Op::Update(..) | Op::Remove(..)))
            .collect();
        crash_test_ops(make, recover, kind, &ops, seed, stride, adversarial)
    }

    /// The framework's crash harness on a tree from `make` (any options): a crash image at
    /// every persist point (`stride` 1) or a seeded sample of one in `stride`, strict or
    /// adversarial; each is recovered through the tree's own `recover` and checked (every
    /// completed operation visible, the in-flight one all or nothing, invariants, lookups,
    /// a further insert). Panics with the report on a failure; returns the images checked.
    pub(crate) fn crash_test_ops<I: PmIndex + Clone + 'static>(
        make: impl Fn(&mut Instr<&mut PmRegion>) -> I,
        recover: fn(&mut I, &mut PmRegion),
        kind: KeyType,
        ops: &[Op],
        seed: u64,
        stride: u64,
        adversarial: bool,
    ) -> u64 {
        let kt = kind;
        // The tree as created: its volatile part (configuration, metadata offset) is what
        // recovery starts from, as an index's `recover` rebuilds it from the root slot.
        let proto: RefCell<Option<I>> = RefCell::new(None);
        let create = |pm: &mut PmRegion, _: &IndexOptions| -> PmResult<Box<dyn PmIndex>> {
            let t = make(&mut Instr::new(pm));
            *proto.borrow_mut() = Some(t.clone());
            Ok(Box::new(t))
        };
        let reopen = |pm: &mut PmRegion, _: &IndexOptions| -> PmResult<Box<dyn PmIndex>> {
            let mut t = proto.borrow().clone().expect("created before any crash");
            recover(&mut t, pm);
            Ok(Box::new(t))
        };
        let subject = Subject {
            name: "tree under test",
            ordered: true,
            create: &create,
            recover: &reopen,
        };
        let ops: Vec<fw::Op> = ops.iter().map(framework_op).collect();
        let capture = CrashCapture {
            probability: 1.0 / stride.max(1) as f64,
            adversarial,
        };
        let r = crash_test_subject(
            &subject,
            kt,
            TonicOpts::default(),
            &small_region(),
            &ops,
            capture,
            seed,
        );
        assert_eq!(r.failures, 0, "{r:#?}");
        r.images_checked
    }
}

#[cfg(test)]
mod key_bytes_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A key held in place is the key's bytes: an integer's big-endian word (ordered as
        /// the numbers are) and the framework's key back from it.
        #[test]
        fn key_bytes_are_the_keys_bytes(a: u64, b: u64) {
            let (ka, kb) = (KeyBytes::of_int(a), KeyBytes::of_int(b));
            prop_assert_eq!(&ka[..], &int_key(a)[..]);
            prop_assert_eq!(ka[..].cmp(&kb[..]), a.cmp(&b));
            let word: &[u8] = &int_key(a);
            prop_assert!(ka == word);
            prop_assert_eq!(Key::from_bytes(KeyType::Int, &ka), Key::Int(a));
        }
    }
}
