//! P-CLHT (RECIPE's persistent CLHT, lock-based resizable variant): an array of 64 B
//! buckets, each `lock | key[3] | val[3] | next`, chained through overflow buckets.
//!
//! Persistence (RECIPE conversion): an insert writes the value, flushes it, fences; then
//! stores the key with a non-temporal store and fences — the key publishes the entry, so a
//! crash before it leaves an invisible slot. A full chain gets a new overflow bucket that is
//! written and flushed whole before the `next` pointer is published with a non-temporal
//! store (RECIPE's `movnt64`). Resize builds and flushes the whole new table, then publishes
//! it in the root with a non-temporal store. Update = store value,
//! flush, fence (8 B atomic); delete = clear the key, flush, fence.
//! Recovery: reopen the table from the root and release every bucket lock.
//!
//! Tonic switches: `evict_volatile` keeps the bucket locks in DRAM instead of on the
//! persisted bucket line (whose lock/unlock stores otherwise re-dirty and re-read the line
//! after it was persisted).

use super::super::index::{IndexOptions, IndexSpec, PmIndex, OPT_COALESCE, OPT_EVICT_VOLATILE};
use super::super::key::{Key, KeyType};
use super::super::keyslot;
use super::super::mem::{Instr, Peek, PmMem};
use super::super::region::{POff, PmError, PmRegion, PmResult};

const BUCKET: u64 = 64;
const SLOTS: u64 = 3;
const OFF_LOCK: u64 = 0;
const OFF_KEY: u64 = 8;
const OFF_VAL: u64 = 32;
const OFF_NEXT: u64 = 56;
/// Table header: number of buckets, offset of the bucket array, key type.
const TABLE_BYTES: u64 = 64;
/// CLHT's resize policy as RECIPE's clht_lb_res compiles it: a table resizes once it has
/// created as many overflow buckets as it has buckets (`num_expands_threshold =
/// CLHT_PERC_EXPANSIONS * num_buckets` with the integer constant 1, so 100 %, not 1 %); the
/// insert path then calls `ht_status` with `resize_increase` set, which grows the table
/// whatever its fill, by `pow2roundup(full % / CLHT_OCCUP_AFTER_RES)` (40), at least 2.
/// Overflow buckets created while rehashing count towards the new table's threshold, and a
/// new table already past it resizes again.
const EXPANSIONS_PER_BUCKET: u64 = 1;
const OCCUP_AFTER_RES_PCT: f64 = 40.0;

pub(crate) static SPEC: IndexSpec = IndexSpec {
    name: "p-clht",
    about: "RECIPE's P-CLHT: cache-line buckets, chained, lock-based resize",
    family: "hash",
    create,
    recover,
    optimizations: &[OPT_EVICT_VOLATILE, OPT_COALESCE],
    key_types: &[KeyType::Int, KeyType::Str],
};

#[derive(Clone)]
pub(crate) struct PClht {
    o: IndexOptions,
    table: POff,
    n: u64,
    buckets: POff,
    expansions: u64,
    /// Entries (volatile; recounted on recovery).
    size: u64,
    /// Bucket locks when `evict_volatile` keeps them off PM.
    dram_locks: Vec<u8>,
}

fn create(region: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let pm = &mut Instr::new(region);
    let n = (o.capacity_hint / SLOTS).max(4).next_power_of_two();
    let (table, buckets) = new_table(pm, n, o.key_type)?;
    pm.flush_range(buckets, n * BUCKET);
    pm.fence();
    pm.set_root(o.root_slot, table);
    Ok(Box::new(PClht::open(o, table, n, buckets)))
}

fn recover(region: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let pm = &mut Instr::new(region);
    let table = pm.root(o.root_slot);
    if table == 0 {
        return Err(PmError::Corrupt("P-CLHT: no table in the root slot".into()));
    }
    let n = pm.load(table);
    let buckets = pm.load(table + 8);
    if n == 0 || !n.is_power_of_two() || buckets + n * BUCKET > pm.region_bytes() {
        return Err(PmError::Corrupt(format!("P-CLHT: bad table ({n} buckets)")));
    }
    // Locks held at the crash are released: a lock is volatile state on a persisted line.
    let mut release = Vec::new();
    for b in 0..n {
        let mut bucket = buckets + b * BUCKET;
        while bucket != 0 {
            if pm.peek(bucket + OFF_LOCK) != 0 {
                release.push(bucket);
            }
            bucket = pm.peek(bucket + OFF_NEXT);
        }
    }
    for bucket in release {
        pm.store(bucket + OFF_LOCK, 0);
        pm.flush(bucket);
    }
    pm.fence();
    let mut c = PClht::open(o, table, n, buckets);
    c.size = c.entries(region).len() as u64;
    Ok(Box::new(c))
}

/// Allocate and zero a table of `n` buckets; flushes its header only (the caller flushes
/// the buckets once they are filled, then fences).
fn new_table<M: PmMem>(pm: &mut M, n: u64, t: KeyType) -> PmResult<(POff, POff)> {
    let buckets = pm.try_alloc(n * BUCKET, 64)?;
    pm.zero(buckets, n * BUCKET);
    let table = pm.try_alloc(TABLE_BYTES, 64)?;
    pm.store(table, n);
    pm.store(table + 8, buckets);
    pm.store(table + 16, t as u64);
    pm.flush(table);
    Ok((table, buckets))
}

impl PClht {
    fn open(o: &IndexOptions, table: POff, n: u64, buckets: POff) -> PClht {
        PClht {
            o: *o,
            table,
            n,
            buckets,
            expansions: 0,
            size: 0,
            dram_locks: if o.opts.evict_volatile {
                vec![0; n as usize]
            } else {
                Vec::new()
            },
        }
    }

    fn bin(&self, key: Key) -> u64 {
        key.hash64() & (self.n - 1)
    }

    fn lock<M: PmMem>(&mut self, pm: &mut M, bin: u64) {
        if self.o.opts.evict_volatile {
            self.dram_locks[bin as usize] = 1;
        } else {
            // CLHT takes the lock with a compare-and-swap (`CAS_U8` in `lock_acq_chk_resize`):
            // a locked read-modify-write waits for its line, so the lock word is read first.
            // A plain store would let the store buffer hide that miss.
            let lock = self.buckets + bin * BUCKET + OFF_LOCK;
            let _ = pm.load(lock);
            pm.store_bytes(lock, &[1]);
        }
    }

    fn unlock<M: PmMem>(&mut self, pm: &mut M, bin: u64) {
        if self.o.opts.evict_volatile {
            self.dram_locks[bin as usize] = 0;
        } else {
            pm.store_bytes(self.buckets + bin * BUCKET + OFF_LOCK, &[0]);
        }
    }

    /// (bucket, slot) holding `key`, searching the chain of its bin.
    fn find<M: PmMem>(&self, pm: &mut M, key: Key) -> Option<(POff, u64)> {
        let mut bucket = self.buckets + self.bin(key) * BUCKET;
        loop {
            for j in 0..SLOTS {
                let k = pm.load(bucket + OFF_KEY + 8 * j);
                if k != 0 && keyslot::matches(pm, k, key) {
                    return Some((bucket, j));
                }
            }
            bucket = pm.load(bucket + OFF_NEXT);
            if bucket == 0 {
                return None;
            }
        }
    }

    fn past_threshold(&self) -> bool {
        self.expansions >= (EXPANSIONS_PER_BUCKET * self.n).max(1)
    }

    /// `ht_status(h, 1, 0)`: grow by the power of two of the fill over 40 % (at least 2),
    /// again while the new table starts past its own threshold.
    fn grow<M: PmMem>(&mut self, pm: &mut M) -> PmResult<()> {
        loop {
            let full_pct = 100.0 * self.size as f64 / (SLOTS * self.n) as f64;
            let by = ((full_pct / OCCUP_AFTER_RES_PCT) as u64).next_power_of_two();
            self.resize(pm, by.max(2))?;
            if !self.past_threshold() {
                return Ok(());
            }
        }
    }

    fn resize<M: PmMem>(&mut self, pm: &mut M, factor: u64) -> PmResult<()> {
        let n2 = self.n * factor;
        let mut expansions = 0;
        let size = self.size;
        let entries = self.raw_entries(pm);
        let (table, buckets) = new_table(pm, n2, self.o.key_type)?;
        let mut fill = vec![0u64; n2 as usize];
        for (slot, val, hash) in entries {
            let bin = hash & (n2 - 1);
            let mut bucket = buckets + bin * BUCKET;
            let mut used = fill[bin as usize];
            // Walk to the chain's last bucket (slots fill in order while rehashing).
            while used >= SLOTS {
                let next = pm.load(bucket + OFF_NEXT);
                if next == 0 {
                    let nb = pm.try_alloc(BUCKET, 64)?;
                    pm.zero(nb, BUCKET);
                    pm.store(bucket + OFF_NEXT, nb);
                    bucket = nb;
                    expansions += 1;
                } else {
                    bucket = next;
                }
                used -= SLOTS;
            }
            pm.store(bucket + OFF_KEY + 8 * used, slot);
            pm.store(bucket + OFF_VAL + 8 * used, val);
            fill[bin as usize] += 1;
        }
        // Fence, flush the whole table with its overflow buckets (the header was flushed
        // when created), fence, then publish it (ht_resize_pes).
        pm.fence();
        pm.flush_range(buckets, n2 * BUCKET);
        for b in 0..n2 {
            let mut next = pm.peek(buckets + b * BUCKET + OFF_NEXT);
            while next != 0 {
                pm.flush(next);
                next = pm.peek(next + OFF_NEXT);
            }
        }
        pm.fence();
        pm.set_root_nt(self.o.root_slot, table);
        // The old table is unreachable once the root is durable.
        let (old_table, old_buckets, old_n) = (self.table, self.buckets, self.n);
        for b in 0..old_n {
            let mut next = pm.peek(old_buckets + b * BUCKET + OFF_NEXT);
            while next != 0 {
                let after = pm.peek(next + OFF_NEXT);
                pm.free(next, BUCKET);
                next = after;
            }
        }
        pm.free(old_buckets, old_n * BUCKET);
        pm.free(old_table, TABLE_BYTES);
        *self = PClht::open(&self.o, table, n2, buckets);
        self.size = size;
        self.expansions = expansions;
        Ok(())
    }

    /// (slot word, value, hash) of every entry, read through the instrumented path.
    fn raw_entries<M: PmMem>(&self, pm: &mut M) -> Vec<(u64, u64, u64)> {
        let mut out = Vec::new();
        for b in 0..self.n {
            let mut bucket = self.buckets + b * BUCKET;
            while bucket != 0 {
                for j in 0..SLOTS {
                    let k = pm.load(bucket + OFF_KEY + 8 * j);
                    if k != 0 {
                        let v = pm.load(bucket + OFF_VAL + 8 * j);
                        let key = keyslot::load(pm, self.o.key_type, k);
                        out.push((k, v, key.hash64()));
                    }
                }
                bucket = pm.load(bucket + OFF_NEXT);
            }
        }
        out
    }
}

impl PmIndex for PClht {
    fn fork(&self) -> Option<Box<dyn PmIndex>> {
        Some(Box::new(self.clone()))
    }
    fn insert(&mut self, region: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let pm = &mut Instr::new(region);
        debug_assert!(keyslot::valid(key));
        let bin = self.bin(key);
        self.lock(pm, bin);
        let head = self.buckets + bin * BUCKET;
        let mut bucket = head;
        let mut empty: Option<(POff, u64)> = None;
        loop {
            for j in 0..SLOTS {
                let k = pm.load(bucket + OFF_KEY + 8 * j);
                if k == 0 {
                    empty = empty.or(Some((bucket, j)));
                } else if keyslot::matches(pm, k, key) {
                    self.unlock(pm, bin);
                    return Ok(false);
                }
            }
            let next = pm.load(bucket + OFF_NEXT);
            if next == 0 {
                break;
            }
            bucket = next;
        }
        let slot = keyslot::make(pm, key)?;
        if let Some((b, j)) = empty {
            pm.store(b + OFF_VAL + 8 * j, value);
            pm.flush(b + OFF_VAL + 8 * j);
            pm.fence();
            pm.ntstore(b + OFF_KEY + 8 * j, slot);
            pm.fence();
        } else {
            // Chain full: a new overflow bucket, durable before it is linked.
            let nb = pm.try_alloc(BUCKET, 64)?;
            pm.zero(nb, BUCKET);
            pm.store(nb + OFF_KEY, slot);
            pm.store(nb + OFF_VAL, value);
            pm.flush(nb);
            pm.fence();
            pm.ntstore(bucket + OFF_NEXT, nb);
            pm.fence();
            self.expansions += 1;
        }
        self.unlock(pm, bin);
        self.size += 1;
        if empty.is_none() && self.past_threshold() {
            pm.set_resizing(true);
            let r = self.grow(pm);
            pm.set_resizing(false);
            r?;
        }
        Ok(true)
    }

    fn lookup(&mut self, region: &mut PmRegion, key: Key) -> Option<u64> {
        let pm = &mut Instr::new(region);
        let (b, j) = self.find(pm, key)?;
        Some(pm.load(b + OFF_VAL + 8 * j))
    }

    fn update(&mut self, region: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let pm = &mut Instr::new(region);
        let bin = self.bin(key);
        self.lock(pm, bin);
        let found = self.find(pm, key);
        if let Some((b, j)) = found {
            pm.store(b + OFF_VAL + 8 * j, value);
            pm.flush(b + OFF_VAL + 8 * j);
            pm.fence();
        }
        self.unlock(pm, bin);
        Ok(found.is_some())
    }

    fn delete(&mut self, region: &mut PmRegion, key: Key) -> PmResult<bool> {
        let pm = &mut Instr::new(region);
        let bin = self.bin(key);
        self.lock(pm, bin);
        let found = self.find(pm, key);
        if let Some((b, j)) = found {
            let slot = pm.load(b + OFF_KEY + 8 * j);
            pm.store(b + OFF_KEY + 8 * j, 0);
            pm.flush(b + OFF_KEY + 8 * j);
            pm.fence();
            keyslot::release(pm, self.o.key_type, slot);
            self.size -= 1;
        }
        self.unlock(pm, bin);
        Ok(found.is_some())
    }

    fn check_invariants(&self, region: &PmRegion) -> Result<(), String> {
        let pm = &Peek(region);
        if pm.peek(self.table) != self.n || pm.peek(self.table + 8) != self.buckets {
            return Err("table header does not match".into());
        }
        let mut seen = std::collections::HashSet::new();
        let limit = pm.region_bytes() / BUCKET;
        for b in 0..self.n {
            let mut bucket = self.buckets + b * BUCKET;
            let mut hops = 0;
            while bucket != 0 {
                if !bucket.is_multiple_of(64) || bucket + BUCKET > pm.region_bytes() {
                    return Err(format!("bin {b}: bucket offset {bucket} invalid"));
                }
                hops += 1;
                if hops > limit {
                    return Err(format!("bin {b}: cycle in the chain"));
                }
                if self.dram_locks.is_empty() && pm.peek(bucket + OFF_LOCK) != 0 {
                    return Err(format!("bin {b}: lock held"));
                }
                for j in 0..SLOTS {
                    let k = pm.peek(bucket + OFF_KEY + 8 * j);
                    if k == 0 {
                        continue;
                    }
                    let key = keyslot::peek(pm, self.o.key_type, k);
                    if key.hash64() & (self.n - 1) != b {
                        return Err(format!("{key:?} in bin {b}, hashes elsewhere"));
                    }
                    if !seen.insert(key) {
                        return Err(format!("{key:?} stored twice"));
                    }
                }
                bucket = pm.peek(bucket + OFF_NEXT);
            }
        }
        region.check_allocator()
    }

    fn entries(&self, region: &PmRegion) -> Vec<(Key, u64)> {
        let pm = &Peek(region);
        let mut out = Vec::new();
        for b in 0..self.n {
            let mut bucket = self.buckets + b * BUCKET;
            while bucket != 0 {
                for j in 0..SLOTS {
                    let k = pm.peek(bucket + OFF_KEY + 8 * j);
                    if k != 0 {
                        out.push((
                            keyslot::peek(pm, self.o.key_type, k),
                            pm.peek(bucket + OFF_VAL + 8 * j),
                        ));
                    }
                }
                bucket = pm.peek(bucket + OFF_NEXT);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::testing::{fresh, standard_checks};
    use super::super::super::{Key, KeyType, RegionConfig, TonicOpts};
    use super::*;

    #[test]
    fn matches_the_model_for_both_key_types_and_switches() {
        standard_checks(&SPEC).unwrap();
    }

    #[test]
    fn non_resizing_insert_costs_one_flush_one_ntstore_two_fences() {
        let (mut pm, mut idx, _) = fresh(
            &SPEC,
            KeyType::Int,
            TonicOpts::default(),
            RegionConfig::default(),
        );
        let before = pm.stats();
        assert!(idx.insert(&mut pm, Key::Int(42), 7).unwrap());
        let d = pm.stats().minus(&before);
        assert_eq!((d.flushes, d.ntstores, d.fences), (1, 1, 2));
        assert_eq!(d.alloc_flushes, 0);
        // A string key adds its persisted key record: one more flush and fence.
        let (mut pm, mut idx, _) = fresh(
            &SPEC,
            KeyType::Str,
            TonicOpts::default(),
            RegionConfig::default(),
        );
        let before = pm.stats();
        idx.insert(&mut pm, Key::string_of(42), 7).unwrap();
        let d = pm.stats().minus(&before);
        assert_eq!((d.flushes, d.ntstores, d.fences), (2, 1, 3));
        // Inserting a present key persists nothing.
        let before = pm.stats();
        assert!(!idx.insert(&mut pm, Key::string_of(42), 8).unwrap());
        let d = pm.stats().minus(&before);
        assert_eq!((d.flushes, d.fences), (0, 0));
        assert_eq!(idx.lookup(&mut pm, Key::string_of(42)), Some(7));
    }

    #[test]
    fn per_source_counts_without_and_with_a_resize() {
        // capacity_hint 16: 8 buckets (16 / 3 rounded up to a power of two), threshold 8
        // overflow buckets. Keys are inserted until one insert resizes.
        let (mut pm, mut idx, _) = fresh(
            &SPEC,
            KeyType::Int,
            TonicOpts::default(),
            RegionConfig::default(),
        );
        let (mut plain, mut resizes) = (0, 0);
        for k in 1..2000u64 {
            let before = pm.stats();
            assert!(idx.insert(&mut pm, Key::Int(k), k).unwrap());
            let d = pm.stats().minus(&before);
            if d.resize_flushes == 0 {
                assert_eq!((d.resize_fences, d.resize_ntstores), (0, 0));
                // The value (or a new overflow bucket) flushed, then the key (or the bucket
                // link) published with a non-temporal store: fence after each.
                assert_eq!((d.flushes, d.ntstores, d.fences), (1, 1, 2), "key {k}");
                plain += 1;
                continue;
            }
            resizes += 1;
            // A resize: front fence, the whole new table (at least 16 bucket lines) flushed,
            // back fence, the root published with one non-temporal store and its fence.
            // (A new table already past its threshold resizes again: one such set each.)
            assert!(d.resize_flushes >= 16, "{d:?}");
            assert!(d.resize_ntstores >= 1, "{d:?}");
            assert_eq!(d.resize_fences, 3 * d.resize_ntstores, "{d:?}");
            // Besides it, exactly the insert's own overflow bucket and link.
            assert_eq!(
                (d.flushes - d.resize_flushes, d.ntstores - d.resize_ntstores),
                (1, 1)
            );
            assert_eq!(d.fences - d.resize_fences, 2);
            if resizes == 1 {
                // The first resize comes only once 8 overflow buckets exist (100 % of the
                // buckets, not 1 %): at least 3 + 7 * 3 + 1 = 25 keys (all in one chain).
                assert!(k >= 25, "resized at key {k}");
            }
        }
        assert!(
            plain > 0 && resizes >= 2,
            "{plain} plain, {resizes} resizes"
        );
    }

    /// Loads and stores of one insert, with the locks on the buckets' lines or evicted.
    fn one_insert(evict: bool) -> (u64, u64) {
        let opts = TonicOpts {
            evict_volatile: evict,
            ..TonicOpts::default()
        };
        let (mut pm, mut idx, _) = fresh(&SPEC, KeyType::Int, opts, RegionConfig::default());
        let before = pm.stats();
        idx.insert(&mut pm, Key::Int(5), 1).unwrap();
        let d = pm.stats().minus(&before);
        (d.loads, d.stores)
    }

    #[test]
    fn evicting_locks_removes_the_lock_stores_from_pm() {
        assert_eq!(one_insert(false).1, one_insert(true).1 + 2);
    }

    #[test]
    fn a_lock_on_the_bucket_line_is_taken_by_a_read_modify_write() {
        // The compare-and-swap reads the lock word before storing it; the unlock is a plain
        // store (CLHT's `LOCK_RLS`).
        assert_eq!(one_insert(false).0, one_insert(true).0 + 1);
    }
}
