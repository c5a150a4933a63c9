//! Level hashing (Zuo et al., OSDI'18): a top level of N buckets and a bottom level of N/2;
//! a key has two top buckets (two hash functions) and the two bottom buckets below them.
//! Bucket = one 64 B line: a token word (byte j = slot j in use) and three 16 B
//! `key | value` slots (the paper's buckets hold four larger slots; three fit a line here).
//!
//! Persistence (as the paper's log-free writes): an insert writes the slot and flushes it,
//! fences, then sets the slot's token, flushes, fences — the token publishes the slot.
//! When all four buckets are full, one resident item moves to its alternative top bucket
//! (copy + token there, then clear the old token) to make room; if none can, the table
//! resizes: a new top level of 2N buckets receives the old bottom level's items and is
//! flushed whole, then a new level descriptor (new top, old top as bottom) is persisted and
//! published in the root (copy-on-write, so a crash keeps the old or the new table).
//! Update: the value in place (8 B, atomic), flush, fence. Delete: clear the token, flush,
//! fence. Recovery: a crash mid-movement can leave an item in two buckets; recovery clears
//! the duplicate's token.
//!
//! Tonic switches: `coalesce_flushes` (region) also lets the slot and its token, which share
//! one line, be persisted with one flush (TSO orders the two stores on the line);
//! `xpline_nodes` aligns the levels to 256 B.

use super::super::index::{IndexOptions, IndexSpec, PmIndex, OPT_COALESCE, OPT_XPLINE};
use super::super::key::{mix, Key, KeyType};
use super::super::keyslot;
use super::super::region::{POff, PmError, PmRegion, PmResult};

const SLOTS: u64 = 3;
const BUCKET: u64 = 64;
/// Level descriptor: top level, bottom level, top buckets N.
const DESC: u64 = 64;

pub static SPEC: IndexSpec = IndexSpec {
    name: "level-hashing",
    about: "Level hashing: two levels, one-move displacement, resize rehashes the bottom level",
    family: "hash",
    create,
    recover,
    optimizations: &[OPT_COALESCE, OPT_XPLINE],
    key_types: &[KeyType::Int, KeyType::Str],
};

pub struct Level {
    o: IndexOptions,
    desc: POff,
    top: POff,
    bottom: POff,
    n: u64,
}

fn align(o: &IndexOptions) -> u64 {
    if o.opts.xpline_nodes {
        256
    } else {
        64
    }
}

fn new_level(pm: &mut PmRegion, o: &IndexOptions, buckets: u64) -> PmResult<POff> {
    let l = pm.alloc(buckets * BUCKET, align(o))?;
    pm.zero(l, buckets * BUCKET);
    Ok(l)
}

fn publish(pm: &mut PmRegion, o: &IndexOptions, top: POff, bottom: POff, n: u64) -> PmResult<POff> {
    let d = pm.alloc(DESC, 64)?;
    pm.write_u64(d, top);
    pm.write_u64(d + 8, bottom);
    pm.write_u64(d + 16, n);
    pm.persist(d, 24);
    pm.set_root(o.root_slot, d);
    Ok(d)
}

fn create(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let n = (o.capacity_hint / SLOTS).max(4).next_power_of_two();
    let top = new_level(pm, o, n)?;
    let bottom = new_level(pm, o, n / 2)?;
    pm.flush_range(top, n * BUCKET);
    pm.flush_range(bottom, n / 2 * BUCKET);
    pm.fence();
    let desc = publish(pm, o, top, bottom, n)?;
    Ok(Box::new(Level {
        o: *o,
        desc,
        top,
        bottom,
        n,
    }))
}

fn recover(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let desc = pm.root(o.root_slot);
    if desc == 0 {
        return Err(PmError::Corrupt(
            "Level hashing: no descriptor in the root".into(),
        ));
    }
    let (top, bottom, n) = (
        pm.read_u64(desc),
        pm.read_u64(desc + 8),
        pm.read_u64(desc + 16),
    );
    if !n.is_power_of_two() || top + n * BUCKET > pm.len() {
        return Err(PmError::Corrupt(format!(
            "Level hashing: bad level size {n}"
        )));
    }
    let lv = Level {
        o: *o,
        desc,
        top,
        bottom,
        n,
    };
    // An interrupted movement leaves an item in two buckets: drop the second copy.
    let mut seen = std::collections::HashSet::new();
    for b in lv.all_buckets() {
        let tok = pm.read_u64(b);
        for j in 0..SLOTS {
            if tok >> (8 * j) & 0xff == 0 {
                continue;
            }
            let key = keyslot::peek(pm, o.key_type, pm.peek_u64(b + 8 + 16 * j));
            if !seen.insert(key) {
                let t = pm.read_u64(b) & !(0xff << (8 * j));
                pm.write_u64(b, t);
                pm.persist(b, 8);
            }
        }
    }
    Ok(Box::new(lv))
}

impl Level {
    /// Top-level indexes from the hashes' most significant bits, so that after a resize
    /// (N → 2N) a key's bottom bucket (top index / 2) is its old top bucket.
    fn hashes(&self, key: Key) -> (u64, u64) {
        let h = key.hash64();
        let bits = self.n.trailing_zeros();
        (h >> (64 - bits), mix(h ^ 0x5bd1_e995) >> (64 - bits))
    }

    /// The four candidate buckets: two top, the two bottom ones below them.
    fn candidates(&self, key: Key) -> [POff; 4] {
        let (a, b) = self.hashes(key);
        [
            self.top + a * BUCKET,
            self.top + b * BUCKET,
            self.bottom + (a / 2) * BUCKET,
            self.bottom + (b / 2) * BUCKET,
        ]
    }

    fn all_buckets(&self) -> impl Iterator<Item = POff> + '_ {
        (0..self.n)
            .map(|i| self.top + i * BUCKET)
            .chain((0..self.n / 2).map(|i| self.bottom + i * BUCKET))
    }

    fn find(&self, pm: &mut PmRegion, key: Key) -> Option<(POff, u64)> {
        for b in self.candidates(key) {
            let tok = pm.read_u64(b);
            for j in 0..SLOTS {
                if tok >> (8 * j) & 0xff != 0 {
                    let k = pm.read_u64(b + 8 + 16 * j);
                    if keyslot::matches(pm, k, key) {
                        return Some((b, j));
                    }
                }
            }
        }
        None
    }

    fn free_slot(pm: &mut PmRegion, b: POff) -> Option<u64> {
        let tok = pm.read_u64(b);
        (0..SLOTS).find(|j| tok >> (8 * j) & 0xff == 0)
    }

    /// Write `slot`/`value` into free slot `j` of bucket `b`, then publish it by its token.
    fn put(pm: &mut PmRegion, b: POff, j: u64, slot: u64, value: u64) {
        let s = b + 8 + 16 * j;
        pm.write_u64(s, slot);
        pm.write_u64(s + 8, value);
        let coalesce = pm.config().coalesce_flushes;
        if !coalesce {
            pm.flush(s);
            pm.fence();
        }
        let tok = pm.read_u64(b) | 1 << (8 * j);
        pm.write_u64(b, tok);
        pm.flush(b);
        pm.fence();
    }

    fn clear(pm: &mut PmRegion, b: POff, j: u64) {
        let tok = pm.read_u64(b) & !(0xff << (8 * j));
        pm.write_u64(b, tok);
        pm.flush(b);
        pm.fence();
    }

    /// Move one item out of `b` to its other candidate bucket of the same level.
    fn make_room(&self, pm: &mut PmRegion, b: POff, top: bool) -> Option<u64> {
        for j in 0..SLOTS {
            let k = pm.read_u64(b + 8 + 16 * j);
            let key = keyslot::load(pm, self.o.key_type, k);
            let c = self.candidates(key);
            let (x, y) = if top { (c[0], c[1]) } else { (c[2], c[3]) };
            let alt = if x == b { y } else { x };
            if alt == b {
                continue;
            }
            if let Some(fj) = Self::free_slot(pm, alt) {
                let v = pm.read_u64(b + 16 + 16 * j);
                Self::put(pm, alt, fj, k, v);
                Self::clear(pm, b, j);
                return Some(j);
            }
        }
        None
    }

    fn resize(&mut self, pm: &mut PmRegion) -> PmResult<()> {
        let n2 = self.n * 2;
        let top2 = new_level(pm, &self.o, n2)?;
        let mut next = Level {
            o: self.o,
            desc: 0,
            top: top2,
            bottom: self.top,
            n: n2,
        };
        // The old bottom's items go into the new top (no persists per item: the whole new
        // level is flushed once, before it is published).
        for i in 0..self.n / 2 {
            let b = self.bottom + i * BUCKET;
            let tok = pm.read_u64(b);
            for j in 0..SLOTS {
                if tok >> (8 * j) & 0xff == 0 {
                    continue;
                }
                let k = pm.read_u64(b + 8 + 16 * j);
                let v = pm.read_u64(b + 16 + 16 * j);
                let key = keyslot::load(pm, self.o.key_type, k);
                let c = next.candidates(key);
                let dest = [c[0], c[1]]
                    .into_iter()
                    .find_map(|d| Self::free_slot(pm, d).map(|fj| (d, fj)));
                let Some((d, fj)) = dest else {
                    // Both new top buckets full (rare): grow again from the old table.
                    pm.free(top2, n2 * BUCKET);
                    return self.resize_twice(pm);
                };
                pm.write_u64(d + 8 + 16 * fj, k);
                pm.write_u64(d + 16 + 16 * fj, v);
                let t = pm.read_u64(d) | 1 << (8 * fj);
                pm.write_u64(d, t);
            }
        }
        pm.flush_range(top2, n2 * BUCKET);
        pm.fence();
        next.desc = publish(pm, &self.o, top2, self.top, n2)?;
        pm.free(self.bottom, self.n / 2 * BUCKET);
        pm.free(self.desc, DESC);
        *self = next;
        Ok(())
    }

    /// Fallback when the old bottom does not fit the new top: rebuild both levels at 2N
    /// from every item (still copy-on-write).
    fn resize_twice(&mut self, pm: &mut PmRegion) -> PmResult<()> {
        let mut items = Vec::new();
        for b in self.all_buckets().collect::<Vec<_>>() {
            let tok = pm.read_u64(b);
            for j in 0..SLOTS {
                if tok >> (8 * j) & 0xff != 0 {
                    items.push((pm.read_u64(b + 8 + 16 * j), pm.read_u64(b + 16 + 16 * j)));
                }
            }
        }
        let mut n2 = self.n * 2;
        'grow: loop {
            let top = new_level(pm, &self.o, n2)?;
            let bottom = new_level(pm, &self.o, n2 / 2)?;
            let next = Level {
                o: self.o,
                desc: 0,
                top,
                bottom,
                n: n2,
            };
            for &(k, v) in &items {
                let key = keyslot::load(pm, self.o.key_type, k);
                let Some((d, fj)) = next
                    .candidates(key)
                    .into_iter()
                    .find_map(|d| Self::free_slot(pm, d).map(|fj| (d, fj)))
                else {
                    pm.free(top, n2 * BUCKET);
                    pm.free(bottom, n2 / 2 * BUCKET);
                    n2 *= 2;
                    continue 'grow;
                };
                pm.write_u64(d + 8 + 16 * fj, k);
                pm.write_u64(d + 16 + 16 * fj, v);
                let t = pm.read_u64(d) | 1 << (8 * fj);
                pm.write_u64(d, t);
            }
            pm.flush_range(top, n2 * BUCKET);
            pm.flush_range(bottom, n2 / 2 * BUCKET);
            pm.fence();
            let desc = publish(pm, &self.o, top, bottom, n2)?;
            pm.free(self.top, self.n * BUCKET);
            pm.free(self.bottom, self.n / 2 * BUCKET);
            pm.free(self.desc, DESC);
            *self = Level { desc, ..next };
            return Ok(());
        }
    }
}

impl PmIndex for Level {
    fn insert(&mut self, pm: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        debug_assert!(keyslot::valid(key));
        if self.find(pm, key).is_some() {
            return Ok(false);
        }
        let slot = keyslot::make(pm, key)?;
        loop {
            let c = self.candidates(key);
            // A free slot in the top buckets, then the bottom ones.
            for b in c {
                if let Some(j) = Self::free_slot(pm, b) {
                    Self::put(pm, b, j, slot, value);
                    return Ok(true);
                }
            }
            for (b, top) in [(c[0], true), (c[1], true), (c[2], false), (c[3], false)] {
                if let Some(j) = self.make_room(pm, b, top) {
                    Self::put(pm, b, j, slot, value);
                    return Ok(true);
                }
            }
            pm.set_resizing(true);
            let r = self.resize(pm);
            pm.set_resizing(false);
            r?;
        }
    }

    fn lookup(&mut self, pm: &mut PmRegion, key: Key) -> Option<u64> {
        let (b, j) = self.find(pm, key)?;
        Some(pm.read_u64(b + 16 + 16 * j))
    }

    fn update(&mut self, pm: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let Some((b, j)) = self.find(pm, key) else {
            return Ok(false);
        };
        pm.write_u64(b + 16 + 16 * j, value);
        pm.persist(b + 16 + 16 * j, 8);
        Ok(true)
    }

    fn delete(&mut self, pm: &mut PmRegion, key: Key) -> PmResult<bool> {
        let Some((b, j)) = self.find(pm, key) else {
            return Ok(false);
        };
        let k = pm.read_u64(b + 8 + 16 * j);
        Self::clear(pm, b, j);
        keyslot::release(pm, self.o.key_type, k);
        Ok(true)
    }

    fn check_invariants(&self, pm: &PmRegion) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for b in self.all_buckets() {
            let tok = pm.peek_u64(b);
            if tok & !0x00ff_ffff != 0 {
                return Err(format!("bucket {b}: bad token word {tok:#x}"));
            }
            for j in 0..SLOTS {
                if tok >> (8 * j) & 0xff == 0 {
                    continue;
                }
                let key = keyslot::peek(pm, self.o.key_type, pm.peek_u64(b + 8 + 16 * j));
                if !self.candidates(key).contains(&b) {
                    return Err(format!("{key:?} in a bucket that is not one of its four"));
                }
                if !seen.insert(key) {
                    return Err(format!("{key:?} stored twice"));
                }
            }
        }
        pm.check_allocator()
    }

    fn entries(&self, pm: &PmRegion) -> Vec<(Key, u64)> {
        let mut out = Vec::new();
        for b in self.all_buckets() {
            let tok = pm.peek_u64(b);
            for j in 0..SLOTS {
                if tok >> (8 * j) & 0xff != 0 {
                    out.push((
                        keyslot::peek(pm, self.o.key_type, pm.peek_u64(b + 8 + 16 * j)),
                        pm.peek_u64(b + 16 + 16 * j),
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::testing::{fresh, standard_checks};
    use super::super::super::{RegionConfig, TonicOpts};
    use super::*;

    #[test]
    fn matches_the_model_for_both_key_types_and_switches() {
        standard_checks(&SPEC).unwrap();
    }

    #[test]
    fn insert_flushes_slot_then_token_or_once_when_coalesced() {
        for (coalesce, want) in [(false, (2, 2)), (true, (1, 1))] {
            let cfg = RegionConfig {
                coalesce_flushes: coalesce,
                ..RegionConfig::default()
            };
            let (mut pm, mut idx, _) = fresh(&SPEC, KeyType::Int, TonicOpts::default(), cfg);
            let before = pm.stats();
            idx.insert(&mut pm, Key::Int(3), 4).unwrap();
            let d = pm.stats().minus(&before);
            assert_eq!((d.flushes, d.fences), want, "coalesce {coalesce}");
        }
    }
}
