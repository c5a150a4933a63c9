//! The crash-consistency harness: run operations on an index with crash tracking on, take a
//! crash image at every persist point (each fence; or a random sample of them), recover
//! each image with the index's `recover`, and check RECIPE's guarantee:
//! - every operation that completed before the crash is visible (the recovered entries equal
//!   the model's, except for the key of the operation in flight);
//! - the in-flight operation is all or nothing (its key has the old or the new value);
//! - the structure's invariants hold, and the recovered index still works (an insert and a
//!   lookup of a fresh key succeed).
//!
//! Strict images hold only what was flushed and fenced; adversarial images add a random half
//! of the lines that were dirty or flushed-but-unfenced at the crash.

use std::collections::BTreeMap;

use serde::Serialize;

use super::index::PmIndex;
use super::index::{IndexOptions, IndexSpec, MakeIndex, TonicOpts};
use super::key::{Key, KeyType};
use super::ops::Op;
use super::region::{CrashCapture, CrashImage, PmRegion, RegionConfig};

#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct CrashReport {
    pub index: String,
    pub key_type: String,
    pub adversarial: bool,
    pub operations: u64,
    /// Persist points passed (fences issued during the operations).
    pub persist_points: u64,
    /// Images recovered and checked.
    pub images_checked: u64,
    pub failures: u64,
    /// The first few failures, described.
    pub first_failures: Vec<String>,
}

/// What the harness crash-tests: how to make an empty index in a fresh region and how to
/// reopen one from a crash image. A registered index is one ([`Subject::of`]); a test can
/// build one for an index with options no [`IndexSpec`] exposes (e.g. small nodes).
pub(crate) struct Subject<'a> {
    pub name: &'a str,
    /// Whether range scans are offered (scans are skipped otherwise).
    pub ordered: bool,
    pub create: &'a MakeIndex<'a>,
    pub recover: &'a MakeIndex<'a>,
}

impl<'a> Subject<'a> {
    /// A registered index, created and recovered through its `IndexSpec`.
    pub(crate) fn of(spec: &'a IndexSpec) -> Subject<'a> {
        Subject {
            name: spec.name,
            ordered: spec.ordered(),
            create: &spec.create,
            recover: &spec.recover,
        }
    }
}

/// Crash-test `ops` on a fresh `spec` index.
pub(crate) fn crash_test(
    spec: &IndexSpec,
    kt: KeyType,
    opts: TonicOpts,
    rcfg: &RegionConfig,
    ops: &[Op],
    capture: CrashCapture,
    seed: u64,
) -> CrashReport {
    crash_test_subject(&Subject::of(spec), kt, opts, rcfg, ops, capture, seed)
}

/// Crash-test `ops` on a fresh index made by `subject`.
pub(crate) fn crash_test_subject(
    subject: &Subject,
    kt: KeyType,
    opts: TonicOpts,
    rcfg: &RegionConfig,
    ops: &[Op],
    capture: CrashCapture,
    seed: u64,
) -> CrashReport {
    let mut rcfg = rcfg.clone();
    rcfg.hardware_flush = false; // images are checked in DRAM
    let (mut pm, mut idx, o) = fresh_with(subject.create, kt, opts, rcfg.clone());
    pm.track_crashes(Some(capture), crate::rng::stream(seed, "pmindex.crash"));
    let mut rep = CrashReport {
        index: subject.name.into(),
        key_type: kt.name().into(),
        adversarial: capture.adversarial,
        ..CrashReport::default()
    };
    let mut model: BTreeMap<Key, u64> = BTreeMap::new();
    let fences0 = pm.stats().fences + pm.stats().alloc_fences;
    let check =
        |img: &CrashImage, model: &BTreeMap<Key, u64>, op: Option<&Op>, rep: &mut CrashReport| {
            rep.images_checked += 1;
            if let Err(e) = check_image(subject, &o, &rcfg, img, model, op) {
                rep.failures += 1;
                if rep.first_failures.len() < 5 {
                    rep.first_failures
                        .push(format!("crash before fence {}: {e}", img.fence_index));
                }
            }
        };
    for op in ops {
        if matches!(op, Op::Scan(..)) && !subject.ordered {
            continue;
        }
        if let Err(e) = op.apply(idx.as_mut(), &mut pm) {
            rep.failures += 1;
            rep.first_failures.push(format!("{op:?} failed: {e}"));
            break;
        }
        rep.operations += 1;
        for img in pm.take_crash_images() {
            check(&img, &model, Some(op), &mut rep);
        }
        op.apply_model(&mut model);
    }
    if let Some(bytes) = pm.durable_image() {
        let fence_index = pm.stats().fences + pm.stats().alloc_fences;
        check(&CrashImage { fence_index, bytes }, &model, None, &mut rep);
    }
    rep.persist_points = pm.stats().fences + pm.stats().alloc_fences - fences0;
    rep
}

/// Recover one image and check it against the model before `op` (in flight at the crash).
fn check_image(
    subject: &Subject,
    o: &IndexOptions,
    rcfg: &RegionConfig,
    img: &CrashImage,
    before: &BTreeMap<Key, u64>,
    op: Option<&Op>,
) -> Result<(), String> {
    let mut pm = PmRegion::from_image(&img.bytes, rcfg.clone()).map_err(|e| e.to_string())?;
    let mut idx = (subject.recover)(&mut pm, o).map_err(|e| format!("recovery failed: {e}"))?;
    idx.check_invariants(&pm)
        .map_err(|e| format!("invariant after recovery: {e}"))?;
    let got: BTreeMap<Key, u64> = idx.entries(&pm).into_iter().collect();
    let mut after = before.clone();
    if let Some(op) = op {
        op.apply_model(&mut after);
    }
    let k = op.map(|o| o.key());
    for (key, v) in &got {
        if Some(*key) != k && before.get(key) != Some(v) {
            return Err(format!(
                "{key:?} = {v} after recovery, expected {:?}",
                before.get(key)
            ));
        }
    }
    for (key, v) in before {
        if Some(*key) != k && got.get(key) != Some(v) {
            return Err(format!(
                "completed {key:?} = {v} lost (recovered {:?})",
                got.get(key)
            ));
        }
    }
    if let Some(k) = k {
        let g = got.get(&k);
        if g != before.get(&k) && g != after.get(&k) {
            return Err(format!(
                "in-flight {:?} half done: {k:?} = {g:?}, expected {:?} or {:?}",
                op,
                before.get(&k),
                after.get(&k)
            ));
        }
    }
    // Every recovered entry is found by a lookup, not only by listing the structure.
    for (key, v) in &got {
        if idx.lookup(&mut pm, *key) != Some(*v) {
            return Err(format!("recovered {key:?} = {v} not found by a lookup"));
        }
    }
    // The recovered index keeps working.
    let fresh_key = Key::of(o.key_type, u64::MAX - 7);
    if !idx
        .insert(&mut pm, fresh_key, 1)
        .map_err(|e| e.to_string())?
        || idx.lookup(&mut pm, fresh_key) != Some(1)
    {
        return Err("recovered index does not take a new insert".into());
    }
    Ok(())
}

/// A fresh anonymous region with an empty index from `create` in it.
pub(super) fn fresh_with(
    create: &MakeIndex<'_>,
    kt: KeyType,
    opts: TonicOpts,
    rcfg: RegionConfig,
) -> (PmRegion, Box<dyn PmIndex>, IndexOptions) {
    let mut pm = PmRegion::anonymous(rcfg).expect("anonymous region");
    let mut o = IndexOptions::new(kt);
    o.opts = opts;
    o.capacity_hint = 16;
    let idx = create(&mut pm, &o).expect("create index");
    (pm, idx, o)
}

#[cfg(test)]
mod tests {
    use super::super::mem::{Instr, PmMem};
    use super::super::testing::random_ops;
    use super::*;

    /// Every hash index, both key types, strict and adversarial, every persist point.
    #[test]
    fn hash_indexes_recover_at_every_persist_point() {
        let rcfg = RegionConfig {
            initial_bytes: 64 << 10,
            ..RegionConfig::default()
        };
        for spec in crate::pmindex::registry::family("hash") {
            for kt in [KeyType::Int, KeyType::Str] {
                for adversarial in [false, true] {
                    let ops = random_ops(kt, 250, 120, 11);
                    let cap = CrashCapture {
                        probability: 1.0,
                        adversarial,
                    };
                    let r = crash_test(spec, kt, TonicOpts::default(), &rcfg, &ops, cap, 3);
                    assert_eq!(r.failures, 0, "{r:#?}");
                    assert_eq!(r.images_checked, r.persist_points + 1, "{r:#?}");
                    assert!(r.persist_points > 100, "{r:#?}");
                }
            }
        }
    }

    /// The harness catches a broken persist order: an index that publishes before it
    /// persists would fail; here, a region that never flushes loses completed inserts.
    #[test]
    fn the_harness_detects_missing_flushes() {
        use super::super::index::PmIndex;
        use super::super::region::{POff, PmResult};
        struct NoFlush {
            root: POff,
        }
        impl PmIndex for NoFlush {
            fn insert(&mut self, pm: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
                let Key::Int(k) = key else { unreachable!() };
                let n = pm.read_u64(self.root);
                pm.write_u64(self.root + 8 + 16 * n, k);
                pm.write_u64(self.root + 16 + 16 * n, value);
                pm.write_u64(self.root, n + 1);
                pm.fence(); // forgot the flushes
                Ok(true)
            }
            fn lookup(&mut self, _: &mut PmRegion, _: Key) -> Option<u64> {
                None
            }
            fn update(&mut self, _: &mut PmRegion, _: Key, _: u64) -> PmResult<bool> {
                Ok(false)
            }
            fn delete(&mut self, _: &mut PmRegion, _: Key) -> PmResult<bool> {
                Ok(false)
            }
            fn check_invariants(&self, _: &PmRegion) -> Result<(), String> {
                Ok(())
            }
            fn entries(&self, pm: &PmRegion) -> Vec<(Key, u64)> {
                let n = pm.peek_u64(self.root);
                (0..n)
                    .map(|i| {
                        (
                            Key::Int(pm.peek_u64(self.root + 8 + 16 * i)),
                            pm.peek_u64(self.root + 16 + 16 * i),
                        )
                    })
                    .collect()
            }
        }
        fn create(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
            let root = pm.alloc(4096, 64)?;
            pm.zero(root, 4096);
            pm.persist(root, 4096);
            Instr::new(pm).set_root(o.root_slot, root);
            Ok(Box::new(NoFlush { root }))
        }
        fn recover(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
            Ok(Box::new(NoFlush {
                root: Instr::new(pm).root(o.root_slot),
            }))
        }
        let spec = IndexSpec {
            name: "broken",
            about: "forgets its flushes",
            family: "hash",
            create,
            recover,
            optimizations: &[],
            key_types: &[KeyType::Int],
        };
        let ops: Vec<Op> = (1..20).map(|k| Op::Insert(Key::Int(k), k)).collect();
        let cap = CrashCapture {
            probability: 1.0,
            adversarial: false,
        };
        let r = crash_test(
            &spec,
            KeyType::Int,
            TonicOpts::default(),
            &RegionConfig::default(),
            &ops,
            cap,
            1,
        );
        assert!(r.failures > 0);
        assert!(
            r.first_failures.iter().any(|f| f.contains("lost")),
            "{:?}",
            r.first_failures
        );
    }
}
