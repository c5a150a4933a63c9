//! Level hashing (Zuo et al., OSDI'18), as RECIPE's copy of it runs (`Level_hashing.cpp`,
//! `new LevelHashing(10)`): a top level of N buckets and a bottom level of N/2. A key has
//! two top buckets, one in each half of the level (`f % (N/2)`, `s % (N/2) + N/2` for two
//! hashes f, s), and the two bottom buckets the same formulas give for N/2; after a resize
//! (N → 2N) a key's bottom buckets are its old top ones. Bucket: a token word (byte j = slot
//! j in use) and three 16 B `key | value` slots.
//!
//! Insert, in the original's order: for the top level, then the bottom one, slot 0 of the
//! first bucket, slot 0 of the second, slot 1 of the first, ...; the first free slot gets
//! the value, a fence, the key and the token, then the bucket is written back by RECIPE's
//! flush helper (a fence before and after). When all four buckets are full: move one item of
//! a top bucket, then of a bottom bucket, to its other bucket of the same level (the item is
//! written and its bucket flushed, the old token cleared and flushed, the new key written in
//! its place); after the first resize, then move an item of a bottom bucket up to one of its
//! top buckets; else resize: a new top level of 2N buckets is announced in the descriptor,
//! each bottom item is inserted into it (bucket flushed) and its old token cleared (flushed),
//! then a new descriptor (new top, old top as bottom) is persisted and published in the root.
//! Recovery: an interrupted resize is rolled forward (items still in the old bottom are
//! moved, copies already made only lose their old token); an item a crash left in two
//! buckets keeps one copy.
//!
//! Two bucket layouts: [`SPEC`] (`level-hashing`) keeps a bucket on one 64 B line, so its
//! value, key and token stores reach PMem together (TSO orders stores to one line, a line
//! is written back whole) and one flush persists an insert; [`SPEC_RECIPE`] uses the
//! original's 72 B `Node` (3 token bytes padded to 8, three 16 B slots, 13 B of padding,
//! rounded to 8), which spans two lines, so each bucket flush is two and a slot can lie on
//! another line than its token: durable under strict persistence only (an early write-back
//! of the token's line can publish a slot whose line is lost).
//!
//! Tonic switches: `xpline_nodes` aligns the levels to 256 B.

use super::super::index::{IndexOptions, IndexSpec, PmIndex, OPT_COALESCE, OPT_XPLINE};
use super::super::key::{mix, Key, KeyType};
use super::super::keyslot;
use super::super::mem::{Instr, Peek, PmMem};
use super::super::region::{POff, PmError, PmRegion, PmResult};
use super::{align, clflush};

const SLOTS: u64 = 3;
/// Descriptor: top, bottom, N, resizes so far, the new top level while a resize runs.
const DESC: u64 = 192;
const D_TOP: u64 = 0;
const D_BOTTOM: u64 = 8;
const D_N: u64 = 16;
const D_RESIZES: u64 = 24;
const D_INTERIM: u64 = 64;

pub(crate) static SPEC: IndexSpec = IndexSpec {
    name: "level-hashing",
    about: "Level hashing: two levels, one-move displacement, resize rehashes the bottom level",
    family: "hash",
    create,
    recover,
    optimizations: &[OPT_COALESCE, OPT_XPLINE],
    key_types: &[KeyType::Int, KeyType::Str],
};

/// Level hashing with the original's 72 B buckets (two lines per bucket flush): for
/// cross-checks; not registered (durable under strict persistence only).
pub static SPEC_RECIPE: IndexSpec = IndexSpec {
    name: "level-hashing-recipe",
    about: "Level hashing with the original's 72 B buckets (strict persistence only)",
    family: "hash",
    create: create_recipe,
    recover: recover_recipe,
    optimizations: &[OPT_COALESCE, OPT_XPLINE],
    key_types: &[KeyType::Int, KeyType::Str],
};

/// Bucket stride of each layout.
const BUCKET_LINE: u64 = 64;
const BUCKET_RECIPE: u64 = 72;

#[derive(Clone)]
pub(crate) struct Level {
    o: IndexOptions,
    /// Bucket stride (64 or 72 B).
    bucket: u64,
    desc: POff,
    top: POff,
    bottom: POff,
    n: u64,
    resizes: u64,
}

/// A zeroed level. Its zeros need no flush: every level is larger than any block freed
/// before it, so it comes from never-used (zero) space, not from a free list.
fn new_level<M: PmMem>(pm: &mut M, o: &IndexOptions, buckets: u64, bucket: u64) -> PmResult<POff> {
    let l = pm.try_alloc(buckets * bucket, align(o))?;
    pm.zero(l, buckets * bucket);
    Ok(l)
}

fn create(region: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let pm = &mut Instr::new(region);
    make(pm, o, BUCKET_LINE)
}

fn create_recipe(region: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let pm = &mut Instr::new(region);
    make(pm, o, BUCKET_RECIPE)
}

fn make<M: PmMem>(pm: &mut M, o: &IndexOptions, bucket: u64) -> PmResult<Box<dyn PmIndex>> {
    // N top buckets = the hint rounded up (the default 1024 is RECIPE's LevelHashing(10)).
    let n = o.capacity_hint.max(4).next_power_of_two();
    let top = new_level(pm, o, n, bucket)?;
    let bottom = new_level(pm, o, n / 2, bucket)?;
    pm.flush_range(top, n * bucket);
    pm.flush_range(bottom, n / 2 * bucket);
    pm.fence();
    let mut lv = Level {
        o: *o,
        bucket,
        desc: 0,
        top,
        bottom,
        n,
        resizes: 0,
    };
    lv.desc = lv.publish(pm)?;
    Ok(Box::new(lv))
}

fn recover(region: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let pm = &mut Instr::new(region);
    reopen(pm, o, BUCKET_LINE)
}

fn recover_recipe(region: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let pm = &mut Instr::new(region);
    reopen(pm, o, BUCKET_RECIPE)
}

fn reopen<M: PmMem>(pm: &mut M, o: &IndexOptions, bucket: u64) -> PmResult<Box<dyn PmIndex>> {
    let desc = pm.root(o.root_slot);
    if desc == 0 {
        return Err(PmError::Corrupt(
            "Level hashing: no descriptor in the root".into(),
        ));
    }
    let n = pm.load(desc + D_N);
    let mut lv = Level {
        o: *o,
        bucket,
        desc,
        top: pm.load(desc + D_TOP),
        bottom: pm.load(desc + D_BOTTOM),
        n,
        resizes: pm.load(desc + D_RESIZES),
    };
    if n < 4 || !n.is_power_of_two() || lv.top + n * bucket > pm.region_bytes() {
        return Err(PmError::Corrupt(format!(
            "Level hashing: bad level size {n}"
        )));
    }
    let interim = pm.load(desc + D_INTERIM);
    if interim != 0 {
        lv.move_bottom_up(pm, interim)?;
    }
    // An interrupted movement leaves an item in two buckets: drop the second copy.
    let mut seen = std::collections::HashSet::new();
    for b in lv.all_buckets() {
        let tok = pm.load(b);
        for j in 0..SLOTS {
            if tok >> (8 * j) & 0xff == 0 {
                continue;
            }
            let key = keyslot::peek(pm, o.key_type, pm.peek(b + 8 + 16 * j));
            if !seen.insert(key) {
                Level::clear(pm, b, j);
            }
        }
    }
    Ok(Box::new(lv))
}

impl Level {
    fn hashes(key: Key) -> (u64, u64) {
        let h = key.hash64();
        (h, mix(h ^ 0x5bd1_e995))
    }

    /// The two buckets of a level of `n` buckets at `base` (one in each half).
    fn pair(&self, base: POff, n: u64, (f, s): (u64, u64)) -> [POff; 2] {
        [
            base + (f % (n / 2)) * self.bucket,
            base + (s % (n / 2) + n / 2) * self.bucket,
        ]
    }

    /// The four candidate buckets: two top, two bottom.
    fn candidates(&self, key: Key) -> [POff; 4] {
        let h = Self::hashes(key);
        let [a, b] = self.pair(self.top, self.n, h);
        let [c, d] = self.pair(self.bottom, self.n / 2, h);
        [a, b, c, d]
    }

    fn all_buckets(&self) -> impl Iterator<Item = POff> + '_ {
        (0..self.n)
            .map(|i| self.top + i * self.bucket)
            .chain((0..self.n / 2).map(|i| self.bottom + i * self.bucket))
    }

    fn publish<M: PmMem>(&self, pm: &mut M) -> PmResult<POff> {
        let d = pm.try_alloc(DESC, 64)?;
        pm.zero(d, DESC);
        pm.store(d + D_TOP, self.top);
        pm.store(d + D_BOTTOM, self.bottom);
        pm.store(d + D_N, self.n);
        pm.store(d + D_RESIZES, self.resizes);
        pm.persist(d, DESC);
        pm.set_root(self.o.root_slot, d);
        Ok(d)
    }

    fn find<M: PmMem>(&self, pm: &mut M, key: Key) -> Option<(POff, u64)> {
        for b in self.candidates(key) {
            let tok = pm.load(b);
            for j in 0..SLOTS {
                if tok >> (8 * j) & 0xff != 0 {
                    let k = pm.load(b + 8 + 16 * j);
                    if keyslot::matches(pm, k, key) {
                        return Some((b, j));
                    }
                }
            }
        }
        None
    }

    fn used<M: PmMem>(pm: &mut M, b: POff, j: u64) -> bool {
        pm.load(b) >> (8 * j) & 0xff != 0
    }

    /// The original's slot write: value, fence, key, token; then the bucket's lines by
    /// the flush helper.
    fn put<M: PmMem>(&self, pm: &mut M, b: POff, j: u64, slot: u64, value: u64) {
        let s = b + 8 + 16 * j;
        pm.store(s + 8, value);
        pm.fence();
        pm.store(s, slot);
        let tok = pm.load(b) | 1 << (8 * j);
        pm.store(b, tok);
        clflush(pm, b, self.bucket);
    }

    /// Clear slot `j`'s token and write back its line (the helper's fences around it).
    fn clear<M: PmMem>(pm: &mut M, b: POff, j: u64) {
        let tok = pm.load(b) & !(0xff << (8 * j));
        pm.store(b, tok);
        clflush(pm, b, 1);
    }

    fn item<M: PmMem>(&self, pm: &mut M, b: POff, j: u64) -> (u64, u64, Key) {
        let k = pm.load(b + 8 + 16 * j);
        let v = pm.load(b + 16 + 16 * j);
        (k, v, keyslot::load(pm, self.o.key_type, k))
    }

    /// The original's `try_movement`: move one item of the full bucket `b` (level `top` or
    /// bottom) to a free slot of its other bucket on that level; the new key takes its slot.
    fn try_movement<M: PmMem>(
        &self,
        pm: &mut M,
        b: POff,
        top: bool,
        slot: u64,
        value: u64,
    ) -> bool {
        for i in 0..SLOTS {
            let (k, v, key) = self.item(pm, b, i);
            let c = self.candidates(key);
            let (x, y) = if top { (c[0], c[1]) } else { (c[2], c[3]) };
            let alt = if x == b { y } else { x };
            for j in 0..SLOTS {
                if !Self::used(pm, alt, j) {
                    self.put(pm, alt, j, k, v);
                    Self::clear(pm, b, i);
                    self.put(pm, b, i, slot, value);
                    return true;
                }
            }
        }
        false
    }

    /// The original's `b2t_movement`: move one item of bottom bucket `b` up to a free slot
    /// of one of its top buckets (first, second, alternating by slot); the new key takes
    /// its slot.
    fn b2t_movement<M: PmMem>(&self, pm: &mut M, b: POff, slot: u64, value: u64) -> bool {
        for i in 0..SLOTS {
            let (k, v, key) = self.item(pm, b, i);
            let c = self.candidates(key);
            for j in 0..SLOTS {
                for t in [c[0], c[1]] {
                    if !Self::used(pm, t, j) {
                        self.put(pm, t, j, k, v);
                        Self::clear(pm, b, i);
                        self.put(pm, b, i, slot, value);
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Whether every bottom item finds a slot in a new top level of 2N buckets, placed in
    /// the original's order (bottom buckets and slots in order; each item at the first free
    /// slot, its two buckets alternating by slot). The original drops an item that does not.
    fn resize_fits<M: PmMem>(&self, pm: &mut M) -> bool {
        let n2 = self.n * 2;
        let mut fill = vec![0u8; n2 as usize];
        for i in 0..self.n / 2 {
            let b = self.bottom + i * self.bucket;
            for j in 0..SLOTS {
                if !Self::used(pm, b, j) {
                    continue;
                }
                let (_, _, key) = self.item(pm, b, j);
                let (f, s) = Self::hashes(key);
                // The first free slot in (slot, bucket) order; slots fill in order.
                let d = [f % self.n, s % self.n + self.n];
                let dest = (0..SLOTS as u8)
                    .flat_map(|x| d.map(|b| (b, x)))
                    .find(|&(b, x)| fill[b as usize] <= x);
                match dest {
                    Some((b, _)) => fill[b as usize] += 1,
                    None => return false,
                }
            }
        }
        true
    }

    /// Move every bottom item into the new top level `interim` (announced in the
    /// descriptor), each persisted with its old token cleared, then publish the new levels.
    /// Also the recovery of an interrupted resize: items already copied lose their token.
    fn move_bottom_up<M: PmMem>(&mut self, pm: &mut M, interim: POff) -> PmResult<()> {
        let n2 = self.n * 2;
        for i in 0..self.n / 2 {
            let b = self.bottom + i * self.bucket;
            for j in 0..SLOTS {
                if !Self::used(pm, b, j) {
                    continue;
                }
                let (k, v, key) = self.item(pm, b, j);
                let pair = self.pair(interim, n2, Self::hashes(key));
                let copied = pair.iter().any(|&d| {
                    (0..SLOTS).any(|x| Self::used(pm, d, x) && pm.load(d + 8 + 16 * x) == k)
                });
                if !copied {
                    let dest = (0..SLOTS)
                        .flat_map(|x| pair.map(|d| (d, x)))
                        .find(|&(d, x)| !Self::used(pm, d, x));
                    let Some((d, x)) = dest else {
                        return Err(PmError::Corrupt(
                            "Level hashing: a bottom item does not fit the new level".into(),
                        ));
                    };
                    self.put(pm, d, x, k, v);
                }
                Self::clear(pm, b, j);
            }
        }
        let old_bottom = self.bottom;
        let old_desc = self.desc;
        self.bottom = self.top;
        self.top = interim;
        self.n = n2;
        self.resizes += 1;
        self.desc = self.publish(pm)?;
        pm.free(old_bottom, self.n / 4 * self.bucket);
        pm.free(old_desc, DESC);
        Ok(())
    }

    fn resize<M: PmMem>(&mut self, pm: &mut M) -> PmResult<()> {
        if !self.resize_fits(pm) {
            return self.rebuild(pm);
        }
        let interim = new_level(pm, &self.o, self.n * 2, self.bucket)?;
        pm.store(self.desc + D_INTERIM, interim);
        // The original flushes `sizeof(Node)` bytes from its pointer to the new level.
        clflush(pm, self.desc + D_INTERIM, self.bucket);
        self.move_bottom_up(pm, interim)
    }

    /// When the old bottom does not fit the new top (rare; the original loses the item):
    /// rebuild both levels at 2N (or larger) from every item, copy-on-write, flushed whole.
    fn rebuild<M: PmMem>(&mut self, pm: &mut M) -> PmResult<()> {
        let mut items = Vec::new();
        for b in self.all_buckets().collect::<Vec<_>>() {
            for j in 0..SLOTS {
                if Self::used(pm, b, j) {
                    let (k, v, key) = self.item(pm, b, j);
                    items.push((k, v, key));
                }
            }
        }
        let mut n2 = self.n * 2;
        'grow: loop {
            let top = new_level(pm, &self.o, n2, self.bucket)?;
            let bottom = new_level(pm, &self.o, n2 / 2, self.bucket)?;
            let next = Level {
                o: self.o,
                bucket: self.bucket,
                desc: 0,
                top,
                bottom,
                n: n2,
                resizes: self.resizes + 1,
            };
            for &(k, v, key) in &items {
                let Some((d, x)) = next
                    .candidates(key)
                    .into_iter()
                    .flat_map(|d| (0..SLOTS).map(move |x| (d, x)))
                    .find(|&(d, x)| !Self::used(pm, d, x))
                else {
                    pm.free(top, n2 * self.bucket);
                    pm.free(bottom, n2 / 2 * self.bucket);
                    n2 *= 2;
                    continue 'grow;
                };
                pm.store(d + 8 + 16 * x, k);
                pm.store(d + 16 + 16 * x, v);
                let t = pm.load(d) | 1 << (8 * x);
                pm.store(d, t);
            }
            pm.flush_range(top, n2 * self.bucket);
            pm.flush_range(bottom, n2 / 2 * self.bucket);
            pm.fence();
            let desc = next.publish(pm)?;
            pm.free(self.top, self.n * self.bucket);
            pm.free(self.bottom, self.n / 2 * self.bucket);
            pm.free(self.desc, DESC);
            *self = Level { desc, ..next };
            return Ok(());
        }
    }
}

impl PmIndex for Level {
    fn fork(&self) -> Option<Box<dyn PmIndex>> {
        Some(Box::new(self.clone()))
    }
    fn insert(&mut self, region: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let pm = &mut Instr::new(region);
        debug_assert!(keyslot::valid(key));
        if self.find(pm, key).is_some() {
            return Ok(false);
        }
        let slot = keyslot::make(pm, key)?;
        loop {
            let c = self.candidates(key);
            for pair in [[c[0], c[1]], [c[2], c[3]]] {
                for j in 0..SLOTS {
                    for b in pair {
                        if !Self::used(pm, b, j) {
                            self.put(pm, b, j, slot, value);
                            return Ok(true);
                        }
                    }
                }
            }
            for (b, top) in [(c[0], true), (c[1], true), (c[2], false), (c[3], false)] {
                if self.try_movement(pm, b, top, slot, value) {
                    return Ok(true);
                }
            }
            if self.resizes > 0 {
                for b in [c[2], c[3]] {
                    if self.b2t_movement(pm, b, slot, value) {
                        return Ok(true);
                    }
                }
            }
            pm.set_resizing(true);
            let r = self.resize(pm);
            pm.set_resizing(false);
            r?;
        }
    }

    fn lookup(&mut self, region: &mut PmRegion, key: Key) -> Option<u64> {
        let pm = &mut Instr::new(region);
        let (b, j) = self.find(pm, key)?;
        Some(pm.load(b + 16 + 16 * j))
    }

    fn update(&mut self, region: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let pm = &mut Instr::new(region);
        let Some((b, j)) = self.find(pm, key) else {
            return Ok(false);
        };
        pm.store(b + 16 + 16 * j, value);
        pm.persist(b + 16 + 16 * j, 8);
        Ok(true)
    }

    fn delete(&mut self, region: &mut PmRegion, key: Key) -> PmResult<bool> {
        let pm = &mut Instr::new(region);
        let Some((b, j)) = self.find(pm, key) else {
            return Ok(false);
        };
        let k = pm.load(b + 8 + 16 * j);
        Self::clear(pm, b, j);
        keyslot::release(pm, self.o.key_type, k);
        Ok(true)
    }

    fn check_invariants(&self, region: &PmRegion) -> Result<(), String> {
        let pm = &Peek(region);
        if pm.peek(self.desc + D_INTERIM) != 0 {
            return Err("resize still announced in the descriptor".into());
        }
        let mut seen = std::collections::HashSet::new();
        for b in self.all_buckets() {
            let tok = pm.peek(b);
            if tok & !0x00ff_ffff != 0 {
                return Err(format!("bucket {b}: bad token word {tok:#x}"));
            }
            for j in 0..SLOTS {
                if tok >> (8 * j) & 0xff == 0 {
                    continue;
                }
                let key = keyslot::peek(pm, self.o.key_type, pm.peek(b + 8 + 16 * j));
                if !self.candidates(key).contains(&b) {
                    return Err(format!("{key:?} in a bucket that is not one of its four"));
                }
                if !seen.insert(key) {
                    return Err(format!("{key:?} stored twice"));
                }
            }
        }
        region.check_allocator()
    }

    fn entries(&self, region: &PmRegion) -> Vec<(Key, u64)> {
        let pm = &Peek(region);
        let mut out = Vec::new();
        for b in self.all_buckets() {
            let tok = pm.peek(b);
            for j in 0..SLOTS {
                if tok >> (8 * j) & 0xff != 0 {
                    out.push((
                        keyslot::peek(pm, self.o.key_type, pm.peek(b + 8 + 16 * j)),
                        pm.peek(b + 16 + 16 * j),
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::crash::crash_test;
    use super::super::super::region::CrashCapture;
    use super::super::super::testing::{fresh, random_ops, standard_checks};
    use super::super::super::{RegionConfig, TonicOpts};
    use super::*;

    #[test]
    fn matches_the_model_for_both_key_types_switches_and_layouts() {
        standard_checks(&SPEC).unwrap();
        standard_checks(&SPEC_RECIPE).unwrap();
    }

    /// One bucket write-back with the helper's fences and the fence between value and key:
    /// one line for the 64 B bucket, two for the original's 72 B one.
    #[test]
    fn an_insert_flushes_its_bucket_with_three_fences() {
        for (spec, flushes) in [(&SPEC, 1), (&SPEC_RECIPE, 2)] {
            let (mut pm, mut idx, _) = fresh(
                spec,
                KeyType::Int,
                TonicOpts::default(),
                RegionConfig::default(),
            );
            for k in 1..6 {
                let before = pm.stats();
                idx.insert(&mut pm, Key::Int(k), 4).unwrap();
                let d = pm.stats().minus(&before);
                assert_eq!((d.flushes, d.fences), (flushes, 3), "{} key {k}", spec.name);
            }
        }
    }

    /// Closed form of a resize (no item left behind, no rebuild): the announcement of the
    /// new level (one bucket's bytes from the descriptor's word: 1 line, 2 fences), per
    /// bottom item its bucket write (1 line, 3 fences) and its old token (1 line, 2 fences),
    /// then the new descriptor (3 lines, 1 fence) and the root (1 line, 1 fence).
    #[test]
    fn a_resize_follows_the_closed_form() {
        let (mut pm, mut idx, _) = fresh(
            &SPEC,
            KeyType::Int,
            TonicOpts::default(),
            RegionConfig::default(),
        );
        let mut resizes = 0;
        let mut k = 1;
        while resizes < 3 {
            // Items in the bottom level before the insert (the ones a resize moves).
            let bottom_items = {
                let desc = pm.peek_u64(64);
                let (b, n) = (pm.peek_u64(desc + D_BOTTOM), pm.peek_u64(desc + D_N));
                (0..n / 2)
                    .map(|i| u64::from((pm.peek_u64(b + 64 * i) & 0x00ff_ffff).count_ones()))
                    .sum::<u64>()
            };
            let before = pm.stats();
            assert!(idx.insert(&mut pm, Key::Int(k), k).unwrap());
            k += 1;
            let d = pm.stats().minus(&before);
            if d.resize_flushes == 0 {
                continue;
            }
            resizes += 1;
            assert_eq!(
                d.resize_flushes,
                1 + 2 * bottom_items + 3 + 1,
                "resize {resizes}"
            );
            assert_eq!(
                d.resize_fences,
                2 + 5 * bottom_items + 1 + 1,
                "resize {resizes}"
            );
        }
        idx.check_invariants(&pm).unwrap();
    }

    /// Resizes and movements at sampled persist points: strict and adversarial for the
    /// one-line bucket, strict for the original's two-line bucket.
    #[test]
    fn resizes_recover_at_sampled_persist_points() {
        let rcfg = RegionConfig::default();
        for (spec, modes) in [(&SPEC, &[false, true][..]), (&SPEC_RECIPE, &[false][..])] {
            for kt in [KeyType::Int, KeyType::Str] {
                for &adversarial in modes {
                    let ops = random_ops(kt, 1500, 1200, 5);
                    let cap = CrashCapture {
                        probability: 0.05,
                        adversarial,
                    };
                    let r = crash_test(spec, kt, TonicOpts::default(), &rcfg, &ops, cap, 2);
                    assert_eq!(r.failures, 0, "{}: {r:#?}", spec.name);
                    assert!(r.images_checked > 20, "{r:#?}");
                }
            }
        }
    }
}
