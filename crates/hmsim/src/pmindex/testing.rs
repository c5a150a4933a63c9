//! Shared checks for every index: the model-based check (an op sequence against a
//! `BTreeMap`) and recovery of a clean image, with random op sequences from a seed
//! (`ops.rs`). Used by the unit and property tests of each index.

use std::collections::BTreeMap;

use super::crash::fresh_with;
use super::index::{IndexOptions, IndexSpec, PmIndex, TonicOpts};
use super::key::{Key, KeyType};
pub(crate) use super::ops::random_ops;
use super::ops::{Op, Outcome};
use super::region::{PmRegion, RegionConfig};

/// A fresh anonymous region (small, growing) with an empty `spec` index in it.
pub(crate) fn fresh(
    spec: &IndexSpec,
    kt: KeyType,
    opts: TonicOpts,
    rcfg: RegionConfig,
) -> (PmRegion, Box<dyn PmIndex>, IndexOptions) {
    fresh_with(&spec.create, kt, opts, rcfg)
}

fn small_region() -> RegionConfig {
    RegionConfig {
        initial_bytes: 64 << 10,
        ..RegionConfig::default()
    }
}

/// Run `ops` on a new `spec` index and on a `BTreeMap`; every outcome, the final contents and
/// the invariants must agree; then reopen the index from a copy of the region through
/// `recover` and compare again.
pub(crate) fn model_check(
    spec: &IndexSpec,
    kt: KeyType,
    opts: TonicOpts,
    ops: &[Op],
) -> Result<(), String> {
    let (mut pm, mut idx, o) = fresh(spec, kt, opts, small_region());
    let mut model = BTreeMap::new();
    for (i, op) in ops.iter().enumerate() {
        if matches!(op, Op::Scan(..)) && !spec.ordered() {
            continue;
        }
        let got = op
            .apply(idx.as_mut(), &mut pm)
            .map_err(|e| format!("op {i} {op:?}: {e}"))?;
        let want = op.apply_model(&mut model);
        if got != want {
            return Err(format!(
                "{}: op {i} {op:?}: index {got:?}, model {want:?}",
                spec.name
            ));
        }
    }
    compare(spec, idx.as_ref(), &pm, &model, "after the ops")?;
    let mut img = vec![0u8; pm.used_bytes() as usize];
    pm.peek_bytes(0, &mut img);
    let mut pm2 = PmRegion::from_image(&img, small_region()).map_err(|e| e.to_string())?;
    let idx2 = (spec.recover)(&mut pm2, &o).map_err(|e| format!("recover: {e}"))?;
    compare(spec, idx2.as_ref(), &pm2, &model, "after reopening")
}

/// The index's entries and invariants against the model.
pub(crate) fn compare(
    spec: &IndexSpec,
    idx: &dyn PmIndex,
    pm: &PmRegion,
    model: &BTreeMap<Key, u64>,
    when: &str,
) -> Result<(), String> {
    idx.check_invariants(pm)
        .map_err(|e| format!("{} {when}: invariant: {e}", spec.name))?;
    let mut got = idx.entries(pm);
    got.sort();
    let want: Vec<(Key, u64)> = model.iter().map(|(k, v)| (*k, *v)).collect();
    if got != want {
        return Err(format!(
            "{} {when}: {} entries, model has {} (first difference: {:?})",
            spec.name,
            got.len(),
            want.len(),
            got.iter().zip(&want).find(|(a, b)| a != b)
        ));
    }
    Ok(())
}

/// The check every index must pass (call it from each index's tests): both key types,
/// with and without its Tonic switches, several seeds.
pub(crate) fn standard_checks(spec: &IndexSpec) -> Result<(), String> {
    let all = TonicOpts {
        no_bloat: true,
        evict_volatile: true,
        xpline_nodes: true,
    };
    for &kt in spec.key_types {
        for opts in [TonicOpts::default(), all] {
            for seed in 0..3 {
                let ops = random_ops(kt, 600, 300, seed);
                model_check(spec, kt, opts, &ops)?;
            }
        }
    }
    let _ = Outcome::Done(true);
    Ok(())
}
