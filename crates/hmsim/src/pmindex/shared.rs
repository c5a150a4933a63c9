//! `SharedIndex`: any registered index used from many OS threads through `&self`.
//!
//! The key space is partitioned into `S` shards (a power of two) by a hash of the key bytes;
//! each shard is its own [`PmRegion`] with its own index in it, behind a `Mutex`. An
//! operation on one key locks one shard, so threads working on different shards run in
//! parallel and every index is thread-safe without changing its code. A scan on an ordered
//! index asks every shard for up to `count` entries ≥ `start` and k-way merges them.
//!
//! What this is not: the original's fine-grained protocol (CLHT's bucket locks, ROWEX,
//! optimistic lock coupling, the Bw-tree's CAS on the mapping table). Contention here is
//! on a shard lock, not the original's; see docs/pm-index.md.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex, MutexGuard, TryLockError};
use std::time::Instant;

use super::index::{IndexOptions, IndexSpec, PmIndex};
use super::key::{mix, Key};
use super::mem;
use super::ops::{Op, Outcome};
use super::region::{PmError, PmRegion, PmResult, PmStats, RegionConfig};
use crate::cputime::thread_cpu_s;

/// Shards when nothing else is said: enough that 2–16 threads rarely meet on one lock.
pub const DEFAULT_SHARDS: usize = 64;
/// Largest shard count accepted.
pub(crate) const MAX_SHARDS: usize = 1 << 16;
/// Smallest region a shard starts with (a region doubles on demand).
const MIN_SHARD_BYTES: u64 = 64 << 10;
/// Salt of the shard hash, so it is independent of `Key::hash64`, which the hash indexes
/// use for buckets (sharding on the same bits would leave most buckets of a shard empty).
const SHARD_SALT: u64 = 0x5851_f42d_4c95_7f2d;

struct Shard {
    pm: PmRegion,
    idx: Box<dyn PmIndex>,
    /// Why an operation on this shard stopped half-way (its region could not give it
    /// memory): the shard cannot be trusted since, so every later operation on it fails
    /// with the same error.
    broken: Option<PmError>,
}

/// One shard's lock, on its own cache lines: a shard's counters change on every operation,
/// and sharing a line with the next shard's lock word would make threads on different
/// shards contend anyway (false sharing).
#[repr(align(128))]
struct Slot(Mutex<Shard>);

/// An index partitioned into independently locked shards; `Send + Sync`.
pub struct SharedIndex {
    spec: &'static IndexSpec,
    shards: Box<[Slot]>,
    /// log2 of the shard count.
    bits: u32,
    /// Lock acquisitions that found the shard held by another thread (had to wait).
    waits: AtomicU64,
}

// The point of the type: shareable between threads (checked at compile time).
const _: fn() = || {
    fn shareable<T: Send + Sync>() {}
    shareable::<SharedIndex>();
};

/// The shard hash of a key: its bytes mixed with a salt (independent of `Key::hash64`).
pub(crate) fn shard_hash(k: &Key) -> u64 {
    let (b, n) = k.bytes();
    b[..n].chunks(8).fold(SHARD_SALT, |h, c| {
        mix(h ^ u64::from_le_bytes(c.try_into().expect("8-byte chunks")))
    })
}

fn check_shards(shards: usize) -> PmResult<u32> {
    if shards == 0 || shards > MAX_SHARDS || !shards.is_power_of_two() {
        return Err(PmError::Setup(format!(
            "shards must be a power of two in 1..={MAX_SHARDS}, got {shards}"
        )));
    }
    Ok(shards.trailing_zeros())
}

/// A shard's region: the total initial size and limit split over the shards.
fn shard_region(cfg: &RegionConfig, shards: usize) -> RegionConfig {
    let n = shards as u64;
    let initial = (cfg.initial_bytes / n)
        .max(MIN_SHARD_BYTES)
        .next_multiple_of(4096);
    RegionConfig {
        initial_bytes: initial,
        max_bytes: (cfg.max_bytes / n).max(initial),
        ..cfg.clone()
    }
}

fn shard_options(opts: &IndexOptions, shards: usize) -> IndexOptions {
    IndexOptions {
        capacity_hint: (opts.capacity_hint / shards as u64).max(16),
        ..*opts
    }
}

impl SharedIndex {
    /// `shards` empty `spec` indexes, each in its own anonymous region (`cfg`'s initial size
    /// and limit divided by `shards`; a shard starts at ≥ 64 KiB), each created with
    /// `opts.capacity_hint / shards` (≥ 16).
    pub fn create(
        spec: &'static IndexSpec,
        opts: &IndexOptions,
        cfg: &RegionConfig,
        shards: usize,
    ) -> PmResult<SharedIndex> {
        SharedIndex::build(spec, opts, cfg, shards, |_, rcfg, o| {
            let mut pm = PmRegion::anonymous(rcfg.clone())?;
            let idx = (spec.create)(&mut pm, o)?;
            Ok((pm, idx))
        })
    }

    /// Reopen from one image per shard (as [`SharedIndex::images`] returns them, e.g. after
    /// a crash) through the index's own `recover`.
    pub fn recover(
        spec: &'static IndexSpec,
        opts: &IndexOptions,
        cfg: &RegionConfig,
        images: &[Vec<u8>],
    ) -> PmResult<SharedIndex> {
        SharedIndex::build(spec, opts, cfg, images.len(), |i, rcfg, o| {
            let mut pm = PmRegion::from_image(&images[i], rcfg.clone())?;
            let idx = (spec.recover)(&mut pm, o)?;
            Ok((pm, idx))
        })
    }

    /// `shards` shards from `make(shard, its region config, its index options)`.
    fn build(
        spec: &'static IndexSpec,
        opts: &IndexOptions,
        cfg: &RegionConfig,
        shards: usize,
        mut make: impl FnMut(
            usize,
            &RegionConfig,
            &IndexOptions,
        ) -> PmResult<(PmRegion, Box<dyn PmIndex>)>,
    ) -> PmResult<SharedIndex> {
        let bits = check_shards(shards)?;
        let (rcfg, o) = (shard_region(cfg, shards), shard_options(opts, shards));
        let shards = (0..shards)
            .map(|i| {
                make(i, &rcfg, &o).map(|(pm, idx)| {
                    Slot(Mutex::new(Shard {
                        pm,
                        idx,
                        broken: None,
                    }))
                })
            })
            .collect::<PmResult<Vec<_>>>()?;
        Ok(SharedIndex {
            spec,
            shards: shards.into_boxed_slice(),
            bits,
            waits: AtomicU64::new(0),
        })
    }

    pub fn spec(&self) -> &'static IndexSpec {
        self.spec
    }

    /// The shard that owns `k` (the top bits of [`shard_hash`]).
    pub fn shard_of(&self, k: &Key) -> usize {
        if self.bits == 0 {
            0
        } else {
            (shard_hash(k) >> (64 - self.bits)) as usize
        }
    }

    /// Lock acquisitions so far that had to wait for another thread (shard contention).
    pub fn lock_waits(&self) -> u64 {
        self.waits.load(Ordering::Relaxed)
    }

    fn lock(&self, i: usize) -> MutexGuard<'_, Shard> {
        // A poisoned lock means an index operation panicked half-way: its shard cannot be
        // trusted, so neither can any later answer.
        const POISONED: &str = "a shard's lock is poisoned: an operation on it panicked";
        match self.shards[i].0.try_lock() {
            Ok(g) => g,
            Err(TryLockError::WouldBlock) => {
                self.waits.fetch_add(1, Ordering::Relaxed);
                self.shards[i].0.lock().expect(POISONED)
            }
            Err(TryLockError::Poisoned(_)) => panic!("{POISONED}"),
        }
    }

    /// `f` on the shard of `k`, under its lock. A region error that unwinds out of the
    /// index operation is caught here, before the lock is released (unwinding through it
    /// would poison it, and every thread after would panic), and breaks the shard.
    fn on_shard<R>(
        &self,
        i: usize,
        f: impl FnOnce(&mut dyn PmIndex, &mut PmRegion) -> PmResult<R>,
    ) -> PmResult<R> {
        let mut g = self.lock(i);
        let Shard { pm, idx, broken } = &mut *g;
        if let Some(e) = broken {
            return Err(e.clone());
        }
        mem::catch_exhausted(|| f(idx.as_mut(), pm)).unwrap_or_else(|e| {
            *broken = Some(e.clone());
            Err(e)
        })
    }

    fn on_key<R>(
        &self,
        k: &Key,
        f: impl FnOnce(&mut dyn PmIndex, &mut PmRegion) -> PmResult<R>,
    ) -> PmResult<R> {
        self.on_shard(self.shard_of(k), f)
    }

    pub fn insert(&self, k: Key, v: u64) -> PmResult<bool> {
        self.on_key(&k, |idx, pm| idx.insert(pm, k, v))
    }
    pub fn lookup(&self, k: Key) -> PmResult<Option<u64>> {
        self.on_key(&k, |idx, pm| Ok(idx.lookup(pm, k)))
    }
    pub fn update(&self, k: Key, v: u64) -> PmResult<bool> {
        self.on_key(&k, |idx, pm| idx.update(pm, k, v))
    }
    pub fn delete(&self, k: Key) -> PmResult<bool> {
        self.on_key(&k, |idx, pm| idx.delete(pm, k))
    }

    /// Up to `count` entries with key ≥ `start`, in key order, appended to `out`. Every
    /// shard is asked for up to `count` entries (one lock at a time) and the sorted runs
    /// are k-way merged: S times the index work of one scan. Not a snapshot: a write to a
    /// shard already read (or not yet read) during the scan may be missed (or seen).
    pub fn scan(&self, start: Key, count: usize, out: &mut Vec<(Key, u64)>) -> PmResult<()> {
        if !self.spec.ordered() {
            return Err(PmError::Unsupported("range scan on an unordered index"));
        }
        if count == 0 {
            return Ok(());
        }
        let mut runs = Vec::with_capacity(self.shards.len());
        for i in 0..self.shards.len() {
            let mut run = Vec::with_capacity(count);
            self.on_shard(i, |idx, pm| idx.scan(pm, start, count, &mut run))?;
            if !run.is_empty() {
                runs.push(run);
            }
        }
        merge_runs(&runs, count, out);
        Ok(())
    }

    /// Apply one operation (as [`Op::apply`] does on an unshared index).
    pub fn apply(&self, op: &Op) -> PmResult<Outcome> {
        Ok(match *op {
            Op::Insert(k, v) => Outcome::Done(self.insert(k, v)?),
            Op::Lookup(k) => Outcome::Found(self.lookup(k)?),
            Op::Update(k, v) => Outcome::Done(self.update(k, v)?),
            Op::Delete(k) => Outcome::Done(self.delete(k)?),
            Op::Scan(k, n) => {
                let mut out = Vec::with_capacity(n);
                self.scan(k, n, &mut out)?;
                Outcome::Scanned(out)
            }
        })
    }

    /// The instrumentation counters of all shards, summed.
    pub fn stats(&self) -> PmStats {
        (0..self.shards.len()).fold(PmStats::default(), |s, i| s.plus(&self.lock(i).pm.stats()))
    }

    /// Each shard's invariants, and every entry in the shard its key hashes to.
    pub fn check_invariants(&self) -> Result<(), String> {
        for i in 0..self.shards.len() {
            let g = self.lock(i);
            g.idx
                .check_invariants(&g.pm)
                .map_err(|e| format!("{} shard {i}: {e}", self.spec.name))?;
            if let Some((k, _)) = g
                .idx
                .entries(&g.pm)
                .into_iter()
                .find(|(k, _)| self.shard_of(k) != i)
            {
                return Err(format!(
                    "{} shard {i} holds {k:?}, which belongs to shard {}",
                    self.spec.name,
                    self.shard_of(&k)
                ));
            }
        }
        Ok(())
    }

    /// Every entry of every shard, any order.
    pub fn entries(&self) -> Vec<(Key, u64)> {
        (0..self.shards.len())
            .flat_map(|i| {
                let g = self.lock(i);
                g.idx.entries(&g.pm)
            })
            .collect()
    }

    /// Each shard's region bytes up to its high-water mark (what a clean shutdown leaves).
    pub fn images(&self) -> Vec<Vec<u8>> {
        (0..self.shards.len())
            .map(|i| {
                let g = self.lock(i);
                let mut img = vec![0u8; g.pm.used_bytes() as usize];
                g.pm.peek_bytes(0, &mut img);
                img
            })
            .collect()
    }
}

/// The first `count` entries of sorted, key-disjoint `runs`, in order, appended to `out`.
pub(crate) fn merge_runs(runs: &[Vec<(Key, u64)>], count: usize, out: &mut Vec<(Key, u64)>) {
    let mut heap: BinaryHeap<Reverse<(Key, usize, usize)>> = runs
        .iter()
        .enumerate()
        .filter_map(|(r, run)| run.first().map(|e| Reverse((e.0, r, 0))))
        .collect();
    let mut taken = 0;
    while taken < count {
        let Some(Reverse((_, r, i))) = heap.pop() else {
            break;
        };
        out.push(runs[r][i]);
        taken += 1;
        if let Some(e) = runs[r].get(i + 1) {
            heap.push(Reverse((e.0, r, i + 1)));
        }
    }
}

/// What one timed multi-threaded run did.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ThreadRun {
    pub ops: u64,
    /// Wall time from the first thread's start (after a common barrier) until the last
    /// thread finished.
    pub wall_s: f64,
    /// CPU time the threads got, summed (`cpu_s / wall_s` = cores actually used: on a
    /// shared machine less than the thread count).
    pub cpu_s: f64,
    /// Inserts that returned false (in a Load of distinct keys: lost inserts, an error).
    pub failed_inserts: u64,
    /// Shard-lock acquisitions during the run that had to wait for another thread.
    pub lock_waits: u64,
}

/// Run `ops` on `threads` OS threads, operation `i` on thread `i % threads` (the same
/// round-robin split as the simulated threads), each thread's share in its order; time
/// from a common start until all have finished.
pub(crate) fn run_threads(
    idx: &SharedIndex,
    ops: &[Op],
    threads: usize,
) -> Result<ThreadRun, String> {
    let threads = threads.max(1);
    let waits0 = idx.lock_waits();
    let start = Barrier::new(threads + 1);
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let start = &start;
                s.spawn(move || -> Result<(u64, f64, Instant, Instant), String> {
                    start.wait();
                    let (t0, cpu0) = (Instant::now(), thread_cpu_s());
                    let mut failed = 0;
                    for op in ops.iter().skip(t).step_by(threads) {
                        match idx.apply(op).map_err(|e| format!("{op:?}: {e}"))? {
                            Outcome::Done(false) if matches!(op, Op::Insert(..)) => failed += 1,
                            _ => {}
                        }
                    }
                    Ok((failed, thread_cpu_s() - cpu0, t0, Instant::now()))
                })
            })
            .collect();
        start.wait();
        handles
            .into_iter()
            .map(|h| h.join().expect("an index thread panicked"))
            .collect::<Vec<_>>()
    });
    let (mut failed_inserts, mut cpu_s) = (0, 0.0);
    let (mut first, mut last) = (None::<Instant>, None::<Instant>);
    for r in results {
        let (f, c, t0, t1) = r?;
        failed_inserts += f;
        cpu_s += c;
        first = Some(first.map_or(t0, |x| x.min(t0)));
        last = Some(last.map_or(t1, |x| x.max(t1)));
    }
    // The run that started these threads used their CPU.
    crate::cputime::add_helper_cpu_s(cpu_s);
    let wall_s = match (first, last) {
        (Some(a), Some(b)) => (b - a).as_secs_f64(),
        _ => 0.0,
    };
    Ok(ThreadRun {
        ops: ops.len() as u64,
        wall_s,
        cpu_s,
        failed_inserts,
        lock_waits: idx.lock_waits() - waits0,
    })
}

#[cfg(test)]
mod tests;
