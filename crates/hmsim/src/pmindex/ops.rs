//! One index operation, as workloads, tests and the crash harness describe them, and how to
//! apply it to an index or to a model (`BTreeMap`) with the same semantics; seeded random
//! sequences of them (tests and the study's crash runs).

use std::collections::BTreeMap;

use rand::Rng;

use super::index::PmIndex;
use super::key::{Key, KeyType};
use super::region::{PmRegion, PmResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Insert(Key, u64),
    Lookup(Key),
    Update(Key, u64),
    Delete(Key),
    /// Up to `n` entries from the key on.
    Scan(Key, usize),
}

/// What an operation returned (compared between index and model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Done(bool),
    Found(Option<u64>),
    Scanned(Vec<(Key, u64)>),
}

impl Op {
    pub(crate) fn key(&self) -> Key {
        match *self {
            Op::Insert(k, _)
            | Op::Lookup(k)
            | Op::Update(k, _)
            | Op::Delete(k)
            | Op::Scan(k, _) => k,
        }
    }

    /// Apply to an index.
    pub fn apply(&self, idx: &mut dyn PmIndex, pm: &mut PmRegion) -> PmResult<Outcome> {
        Ok(match *self {
            Op::Insert(k, v) => Outcome::Done(idx.insert(pm, k, v)?),
            Op::Lookup(k) => Outcome::Found(idx.lookup(pm, k)),
            Op::Update(k, v) => Outcome::Done(idx.update(pm, k, v)?),
            Op::Delete(k) => Outcome::Done(idx.delete(pm, k)?),
            Op::Scan(k, n) => {
                let mut out = Vec::with_capacity(n);
                idx.scan(pm, k, n, &mut out)?;
                Outcome::Scanned(out)
            }
        })
    }

    /// Apply to the model: the reference semantics of [`PmIndex`].
    pub(crate) fn apply_model(&self, m: &mut BTreeMap<Key, u64>) -> Outcome {
        match *self {
            Op::Insert(k, v) => Outcome::Done(match m.entry(k) {
                std::collections::btree_map::Entry::Occupied(_) => false,
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(v);
                    true
                }
            }),
            Op::Lookup(k) => Outcome::Found(m.get(&k).copied()),
            Op::Update(k, v) => Outcome::Done(match m.get_mut(&k) {
                Some(x) => {
                    *x = v;
                    true
                }
                None => false,
            }),
            Op::Delete(k) => Outcome::Done(m.remove(&k).is_some()),
            Op::Scan(k, n) => {
                Outcome::Scanned(m.range(k..).take(n).map(|(a, b)| (*a, *b)).collect())
            }
        }
    }
}

/// `n` random operations over `key_space` keys of type `kt` (insert-heavy so structures grow
/// and split; deletes and updates so they shrink and change).
pub(crate) fn random_ops(kt: KeyType, n: usize, key_space: u64, seed: u64) -> Vec<Op> {
    // The stream keeps the name it had in `testing.rs`: same seed, same operations.
    let mut r = crate::rng::stream(seed, "pmindex.testing.ops");
    (0..n)
        .map(|_| {
            let k = Key::of(kt, 1 + r.random_range(0..key_space));
            match r.random_range(0..100) {
                0..50 => Op::Insert(k, r.random()),
                50..65 => Op::Lookup(k),
                65..78 => Op::Update(k, r.random()),
                78..93 => Op::Delete(k),
                _ => Op::Scan(k, r.random_range(1..20)),
            }
        })
        .collect()
}
