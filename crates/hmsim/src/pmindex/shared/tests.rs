//! `SharedIndex` under real threads: every index, disjoint and raced keys, invariants per
//! shard, recovery of every shard, and scans merged across shards against a `BTreeMap`.

use std::collections::BTreeMap;
use std::sync::Barrier;

use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::Rng;

use super::*;
use crate::pmindex::key::KeyType;
use crate::pmindex::registry;

const THREADS: usize = 4;
/// Keys each thread owns alone, and operations it runs on them.
const OWN_KEYS: u64 = 300;
const OWN_OPS: usize = 1500;
/// Keys every thread tries to insert.
const RACED_KEYS: u64 = 300;

fn small() -> RegionConfig {
    RegionConfig {
        initial_bytes: 64 << 10,
        ..RegionConfig::default()
    }
}

fn shared(name: &str, kt: KeyType, shards: usize) -> SharedIndex {
    let spec = crate::pmindex::find(name).expect("registered");
    let mut o = IndexOptions::new(kt);
    o.capacity_hint = 64;
    SharedIndex::create(spec, &o, &small(), shards).expect("create")
}

/// Thread `t`'s own key number `i`, and raced key number `i` (disjoint ranges).
fn own_key(kt: KeyType, t: usize, i: u64) -> Key {
    Key::of(kt, 1 + t as u64 * 100_000 + i)
}
fn raced_key(kt: KeyType, i: u64) -> Key {
    Key::of(kt, 900_000 + i)
}
/// The value thread `t` inserts for raced key `i`: says who wrote it and for which key.
fn raced_value(t: usize, i: u64) -> u64 {
    ((t as u64 + 1) << 32) | i
}

/// What one thread saw: its own keys' final map, and the raced keys it won.
struct ThreadLog {
    own: BTreeMap<Key, u64>,
    won: Vec<u64>,
}

/// One thread: random insert/update/delete/lookup on its own keys (each outcome checked
/// against its private model: nobody else touches them), interleaved with inserts of every
/// raced key in a thread-specific order and lookups of raced keys.
fn worker(idx: &SharedIndex, kt: KeyType, t: usize, start: &Barrier) -> Result<ThreadLog, String> {
    let mut r = crate::rng::stream(t as u64, "pmindex.shared.test");
    let mut raced: Vec<u64> = (0..RACED_KEYS).collect();
    raced.shuffle(&mut r);
    let mut raced = raced.into_iter();
    let mut own = BTreeMap::new();
    let mut won = Vec::new();
    start.wait();
    for n in 0..OWN_OPS {
        let k = own_key(kt, t, r.random_range(0..OWN_KEYS));
        let op = match r.random_range(0..100) {
            0..45 => Op::Insert(k, r.random()),
            45..65 => Op::Lookup(k),
            65..80 => Op::Update(k, r.random()),
            _ => Op::Delete(k),
        };
        let got = idx.apply(&op).map_err(|e| format!("{op:?}: {e}"))?;
        let want = op.apply_model(&mut own);
        if got != want {
            return Err(format!(
                "thread {t} op {n} {op:?}: got {got:?}, want {want:?}"
            ));
        }
        if n % 3 == 0 {
            if let Some(i) = raced.next() {
                if idx
                    .insert(raced_key(kt, i), raced_value(t, i))
                    .map_err(|e| e.to_string())?
                {
                    won.push(i);
                }
            }
            let i = r.random_range(0..RACED_KEYS);
            if let Some(v) = idx.lookup(raced_key(kt, i)).unwrap() {
                if v & 0xffff_ffff != i || !(1..=THREADS as u64).contains(&(v >> 32)) {
                    return Err(format!("thread {t}: raced key {i} holds {v:#x}"));
                }
            }
        }
    }
    for i in raced {
        if idx
            .insert(raced_key(kt, i), raced_value(t, i))
            .map_err(|e| e.to_string())?
        {
            won.push(i);
        }
    }
    Ok(ThreadLog { own, won })
}

fn four_threads(name: &str, kt: KeyType, shards: usize) -> Result<(), String> {
    let idx = shared(name, kt, shards);
    let start = Barrier::new(THREADS);
    let logs: Vec<ThreadLog> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..THREADS)
            .map(|t| {
                let (idx, start) = (&idx, &start);
                s.spawn(move || worker(idx, kt, t, start))
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect::<Result<_, _>>()
    })?;
    let mut want: BTreeMap<Key, u64> = BTreeMap::new();
    for l in &logs {
        want.extend(l.own.iter().map(|(k, v)| (*k, *v)));
    }
    // Each raced key was won by exactly one thread, and holds that thread's value.
    let mut winner = vec![None; RACED_KEYS as usize];
    for (t, l) in logs.iter().enumerate() {
        for &i in &l.won {
            if let Some(o) = winner[i as usize].replace(t) {
                return Err(format!(
                    "{name}: raced key {i} inserted by threads {o} and {t}"
                ));
            }
        }
    }
    for (i, w) in winner.iter().enumerate() {
        let t = w.ok_or_else(|| format!("{name}: raced key {i} inserted by nobody"))?;
        let (k, v) = (raced_key(kt, i as u64), raced_value(t, i as u64));
        if idx.lookup(k).unwrap() != Some(v) {
            return Err(format!(
                "{name}: raced key {i}: {:?}, want {v:#x}",
                idx.lookup(k)
            ));
        }
        want.insert(k, v);
    }
    idx.check_invariants()?;
    let check = |idx: &SharedIndex, when: &str| -> Result<(), String> {
        let mut got = idx.entries();
        got.sort();
        let w: Vec<_> = want.iter().map(|(k, v)| (*k, *v)).collect();
        if got != w {
            return Err(format!(
                "{name} {when}: {} entries, want {}",
                got.len(),
                w.len()
            ));
        }
        if idx.spec().ordered() {
            let mut all = Vec::new();
            idx.scan(Key::of(kt, 1), w.len() + 5, &mut all)
                .map_err(|e| e.to_string())?;
            if all != w {
                return Err(format!(
                    "{name} {when}: full scan differs from the contents"
                ));
            }
            for (n, (k, _)) in w.iter().enumerate().step_by(37) {
                let mut part = Vec::new();
                idx.scan(*k, 25, &mut part).map_err(|e| e.to_string())?;
                if part[..] != w[n..(n + 25).min(w.len())] {
                    return Err(format!("{name} {when}: scan from {k:?} differs"));
                }
            }
        }
        Ok(())
    };
    check(&idx, "after the threads")?;
    // Durability is per shard and the index's own: every shard reopens through `recover`.
    let mut o = IndexOptions::new(kt);
    o.capacity_hint = 64;
    let back = SharedIndex::recover(idx.spec(), &o, &small(), &idx.images())
        .map_err(|e| format!("{name} recover: {e}"))?;
    back.check_invariants()?;
    check(&back, "after reopening")
}

#[test]
fn every_index_under_four_threads_matches_the_model() {
    for spec in registry() {
        for &kt in spec.key_types {
            // 2 shards: threads meet on shard locks; 8: they mostly do not.
            for shards in [2, 8] {
                four_threads(spec.name, kt, shards).unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
}

#[test]
fn shard_counts_are_checked_and_keys_spread_evenly() {
    let spec = crate::pmindex::find("p-clht").unwrap();
    let o = IndexOptions::new(KeyType::Int);
    for bad in [0, 3, MAX_SHARDS * 2] {
        let e = SharedIndex::create(spec, &o, &small(), bad)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("power of two"), "{e}");
    }
    // 64 000 keys over 64 shards: each gets 1000 ± 5σ (σ ≈ 31).
    let idx = SharedIndex::create(spec, &o, &small(), 64).unwrap();
    let mut per = [0u32; 64];
    for n in 1..=64_000 {
        per[idx.shard_of(&Key::Int(n))] += 1;
    }
    assert!(per.iter().all(|&c| (845..1155).contains(&c)), "{per:?}");
}

#[test]
fn scans_and_unordered_indexes() {
    let idx = shared("cceh", KeyType::Int, 4);
    let e = idx.scan(Key::Int(1), 5, &mut Vec::new()).unwrap_err();
    assert!(matches!(e, PmError::Unsupported(_)));
    // Stats sum over shards: one insert's flushes appear in the total.
    let before = idx.stats();
    assert!(idx.insert(Key::Int(7), 1).unwrap());
    assert!(idx.stats().flushes > before.flushes);
}

#[test]
fn run_threads_loads_every_key_once() {
    let idx = shared("p-art", KeyType::Int, 8);
    let ops: Vec<Op> = (0..2000)
        .map(|i| Op::Insert(crate::pmindex::ycsb::key_of(KeyType::Int, i), i))
        .collect();
    let r = run_threads(&idx, &ops, 3).unwrap();
    assert_eq!((r.ops, r.failed_inserts), (2000, 0));
    // One thread never waits for a lock.
    assert_eq!(run_threads(&idx, &ops[..10], 1).unwrap().lock_waits, 0);
    assert_eq!(idx.entries().len(), 2000);
    // A second load of the same keys fails every insert, and says so.
    let r = run_threads(&idx, &ops, 2).unwrap();
    assert_eq!(r.failed_inserts, 2000);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// A scan merged across shards equals the `BTreeMap` range, for every ordered index.
    #[test]
    fn scan_across_shards_equals_the_btreemap(
        which in 0usize..5,
        bits in 0u32..5,
        keys in prop::collection::vec((1u64..4000, any::<u64>()), 0..250),
        starts in prop::collection::vec((1u64..4100, 0usize..80), 1..6),
    ) {
        let ordered: Vec<_> = registry().into_iter().filter(|s| s.ordered()).collect();
        let spec = ordered[which % ordered.len()];
        let idx = shared(spec.name, KeyType::Int, 1 << bits);
        let mut model = BTreeMap::new();
        for (k, v) in keys {
            let fresh = !model.contains_key(&Key::Int(k));
            model.entry(Key::Int(k)).or_insert(v);
            prop_assert_eq!(idx.insert(Key::Int(k), v).unwrap(), fresh);
        }
        for (s, n) in starts {
            let mut got = Vec::new();
            idx.scan(Key::Int(s), n, &mut got).unwrap();
            let want: Vec<_> = model.range(Key::Int(s)..).take(n).map(|(k, v)| (*k, *v)).collect();
            prop_assert_eq!(got, want, "{} with {} shards", spec.name, 1 << bits);
        }
    }

    /// The merge alone: sorted disjoint runs merge to the sorted union's prefix.
    #[test]
    fn merge_runs_is_the_sorted_prefix(
        keys in prop::collection::btree_set(1u64..10_000, 0..200),
        runs in 1usize..6,
        count in 0usize..250,
    ) {
        let mut rs = vec![Vec::new(); runs];
        for &k in &keys {
            rs[(mix(k) % runs as u64) as usize].push((Key::Int(k), k));
        }
        let mut out = Vec::new();
        merge_runs(&rs, count, &mut out);
        let want: Vec<_> = keys.iter().take(count).map(|&k| (Key::Int(k), k)).collect();
        prop_assert_eq!(out, want);
    }
}
