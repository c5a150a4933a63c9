//! CCEH (Nam et al., FAST'19): cache-line-conscious extendible hashing, as RECIPE's build of
//! it runs (its CMake compiles `CCEH_MSB.cpp` without `INPLACE`). A directory of `2^G`
//! segment pointers (G = global depth, indexed by the hash's most significant bits); each
//! segment holds 256 buckets of one 64 B line (`kSegmentBits = 8`: 16 KiB), four 16 B
//! `key | value` pairs each, and a header line (local depth, pattern). A key probes 16
//! consecutive slots (four lines) from the bucket its low 8 hash bits pick.
//!
//! Insert, with RECIPE's fence pattern: the value is stored, fenced, the key stored; then one
//! line is written back by RECIPE's flush helper, which fences before and after (three fences,
//! one flush per insert). Which line depends on [`Persistence`]: `Correct` (the registered
//! `cceh`) flushes the line of the slot written; `Recipe` (`cceh-recipe`) flushes the first
//! line of the probed range, as the original does, so a slot in a later line of the probe is
//! never made durable (a completed insert can be lost at a crash). Both count the same.
//! A full probe range splits the segment: two new segments (depth + 1) receive its entries,
//! each at the first free slot of its probe range in its half (keys then values, no
//! persists), and both are flushed whole (2 × 257 lines, a fence before and after each);
//! then the directory: the upper half's entries are redirected and flushed, then the lower
//! half's (for a one-entry half: store, fence, store, one flush of both); a segment at
//! global depth instead doubles the directory, with the two new segments already in place,
//! flushes the new directory whole and publishes it in the root. The old segment is freed
//! once the directory no longer names it (the original leaks it).
//! Recovery (the original's `Recovery`): within each segment's directory range, entries
//! naming a segment of another local depth are redirected to the range's first segment;
//! this completes or undoes an interrupted redirection (the old segment keeps every entry
//! until it is freed).
//! Deleted string-key records are freed after the slot is cleared durably.
//!
//! Tonic switches: `xpline_nodes` aligns segments and the directory to 256 B XPLines.

use super::super::index::{IndexOptions, IndexSpec, PmIndex, OPT_XPLINE};
use super::super::key::{Key, KeyType};
use super::super::keyslot;
use super::super::mem::{Instr, Peek, PmMem};
use super::super::region::{POff, PmError, PmRegion, PmResult};
use super::{align, clflush};

/// Buckets per segment (`kSegmentBits = 8` in RECIPE's build).
pub(crate) const BUCKETS: u64 = 256;
const PAIRS: u64 = 4;
const SLOTS: u64 = BUCKETS * PAIRS;
/// Slots probed from the home bucket (four lines).
const PROBE: u64 = 16;
const SEG_DATA: u64 = BUCKETS * 64;
/// Segment = buckets + a header line (local depth, pattern): 257 lines, as the original's
/// `sizeof(Segment)` (16 384 B of pairs + depth, lock, pattern).
pub(crate) const SEG_BYTES: u64 = SEG_DATA + 64;
/// Directory header line: global depth.
const DIR_HDR: u64 = 64;

/// Which line an insert writes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Persistence {
    /// The line of the slot written: every completed insert is durable.
    Correct,
    /// The first line of the probed range, as RECIPE's `CCEH::Insert` (known to lose inserts
    /// that land in a later line of the probe).
    Recipe,
}

pub(crate) static SPEC: IndexSpec = IndexSpec {
    name: "cceh",
    about: "CCEH: cacheline-conscious extendible hashing (segments, directory doubling)",
    family: "hash",
    create,
    recover,
    optimizations: &[OPT_XPLINE],
    key_types: &[KeyType::Int, KeyType::Str],
};

/// CCEH with RECIPE's insert flush (the first line of the probe): for cross-checks and the
/// crash test that shows its loss; not registered, so studies use the correct variant.
pub static SPEC_RECIPE: IndexSpec = IndexSpec {
    name: "cceh-recipe",
    about: "CCEH with the original's insert flush (first line of the probe; loses inserts)",
    family: "hash",
    create: create_recipe,
    recover: recover_recipe,
    optimizations: &[OPT_XPLINE],
    key_types: &[KeyType::Int, KeyType::Str],
};

#[derive(Clone)]
pub(crate) struct Cceh {
    o: IndexOptions,
    dir: POff,
    depth: u64,
    persistence: Persistence,
}

fn create(region: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let pm = &mut Instr::new(region);
    make(pm, o, Persistence::Correct)
}

fn create_recipe(region: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let pm = &mut Instr::new(region);
    make(pm, o, Persistence::Recipe)
}

fn make<M: PmMem>(
    pm: &mut M,
    o: &IndexOptions,
    persistence: Persistence,
) -> PmResult<Box<dyn PmIndex>> {
    // Enough segments for the hint at ~50 % fill (the default hint 1024 gives RECIPE's
    // `new CCEH(2)`: two segments).
    let segs = (o.capacity_hint / (SLOTS / 2)).max(2).next_power_of_two();
    let depth = segs.trailing_zeros() as u64;
    let dir = pm.try_alloc(DIR_HDR + 8 * segs, align(o))?;
    pm.zero(dir, DIR_HDR);
    pm.store(dir, depth);
    for i in 0..segs {
        let s = new_segment(pm, o, depth, i)?;
        pm.flush_range(s, SEG_BYTES);
        pm.store(dir + DIR_HDR + 8 * i, s);
    }
    pm.flush_range(dir, DIR_HDR + 8 * segs);
    pm.fence();
    pm.set_root(o.root_slot, dir);
    Ok(Box::new(Cceh {
        o: *o,
        dir,
        depth,
        persistence,
    }))
}

fn new_segment<M: PmMem>(pm: &mut M, o: &IndexOptions, depth: u64, pattern: u64) -> PmResult<POff> {
    let s = pm.try_alloc(SEG_BYTES, align(o))?;
    pm.zero(s, SEG_DATA);
    pm.store(s + SEG_DATA, depth);
    pm.store(s + SEG_DATA + 8, pattern);
    Ok(s)
}

fn recover(region: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let pm = &mut Instr::new(region);
    reopen(pm, o, Persistence::Correct)
}

fn recover_recipe(region: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let pm = &mut Instr::new(region);
    reopen(pm, o, Persistence::Recipe)
}

fn reopen<M: PmMem>(
    pm: &mut M,
    o: &IndexOptions,
    persistence: Persistence,
) -> PmResult<Box<dyn PmIndex>> {
    let dir = pm.root(o.root_slot);
    if dir == 0 {
        return Err(PmError::Corrupt(
            "CCEH: no directory in the root slot".into(),
        ));
    }
    let depth = pm.load(dir);
    if depth > 40 || dir + DIR_HDR + (8 << depth) > pm.region_bytes() {
        return Err(PmError::Corrupt(format!("CCEH: bad global depth {depth}")));
    }
    let c = Cceh {
        o: *o,
        dir,
        depth,
        persistence,
    };
    c.repair(pm)?;
    Ok(Box::new(c))
}

/// Byte offset of slot `i` (0..SLOTS) in a segment.
fn slot_at(seg: POff, i: u64) -> POff {
    seg + 16 * (i % SLOTS)
}

/// First slot of `h`'s probe range.
fn home(h: u64) -> u64 {
    (h & (BUCKETS - 1)) * PAIRS
}

impl Cceh {
    fn seg_index(&self, h: u64) -> u64 {
        if self.depth == 0 {
            0
        } else {
            h >> (64 - self.depth)
        }
    }

    fn entry(&self, i: u64) -> POff {
        self.dir + DIR_HDR + 8 * i
    }

    fn segment<M: PmMem>(&self, pm: &mut M, h: u64) -> POff {
        pm.load(self.entry(self.seg_index(h)))
    }

    /// Whether a stored key (hash `h`) belongs to a segment of `depth`/`pattern`.
    fn belongs(h: u64, depth: u64, pattern: u64) -> bool {
        depth == 0 || h >> (64 - depth) == pattern
    }

    fn find<M: PmMem>(&self, pm: &mut M, key: Key) -> Option<POff> {
        let h = key.hash64();
        let seg = self.segment(pm, h);
        (0..PROBE).map(|i| slot_at(seg, home(h) + i)).find(|&s| {
            let k = pm.load(s);
            k != 0 && keyslot::matches(pm, k, key)
        })
    }

    /// The original's `Recovery`: in the directory range of each segment (by its local
    /// depth), redirect entries naming a segment of another depth to that segment.
    fn repair<M: PmMem>(&self, pm: &mut M) -> PmResult<()> {
        let n = 1u64 << self.depth;
        let mut i = 0;
        let mut changed = None;
        while i < n {
            let seg = pm.load(self.entry(i));
            let l = pm.load(seg + SEG_DATA);
            if l > self.depth {
                return Err(PmError::Corrupt(format!(
                    "CCEH: segment depth {l} > global {}",
                    self.depth
                )));
            }
            let span = 1u64 << (self.depth - l);
            for j in i + 1..(i + span).min(n) {
                let other = pm.load(self.entry(j));
                if other != seg && pm.load(other + SEG_DATA) != l {
                    pm.store(self.entry(j), seg);
                    let (lo, hi) = changed.unwrap_or((j, j));
                    changed = Some((lo.min(j), hi.max(j)));
                }
            }
            i += span;
        }
        if let Some((lo, hi)) = changed {
            pm.persist(self.entry(lo), 8 * (hi - lo + 1));
        }
        Ok(())
    }

    /// Split the segment `h` maps to into two new ones; doubles the directory if the
    /// segment is at global depth.
    fn split<M: PmMem>(&mut self, pm: &mut M, h: u64) -> PmResult<()> {
        let x = self.seg_index(h);
        let old = pm.load(self.entry(x));
        let l = pm.load(old + SEG_DATA);
        let p = pm.load(old + SEG_DATA + 8);
        let halves = [
            new_segment(pm, &self.o, l + 1, p << 1)?,
            new_segment(pm, &self.o, l + 1, (p << 1) | 1)?,
        ];
        // Where each entry goes: (half, old slot, new slot, key word, value).
        let mut plan = Vec::new();
        let mut used = vec![false; 2 * SLOTS as usize];
        let mut packed = true;
        for i in 0..SLOTS {
            let k = pm.load(slot_at(old, i));
            if k == 0 {
                continue;
            }
            let kh = keyslot::load(pm, self.o.key_type, k).hash64();
            let half = ((kh >> (63 - l)) & 1) as usize;
            let v = pm.load(slot_at(old, i) + 8);
            let free = (0..PROBE)
                .map(|d| (home(kh) + d) % SLOTS)
                .find(|&d| !used[half * SLOTS as usize + d as usize]);
            match free {
                Some(d) => {
                    used[half * SLOTS as usize + d as usize] = true;
                    plan.push((half, i, d, k, v));
                }
                None => packed = false,
            }
        }
        if !packed {
            // The original drops such an entry; the old slot is always free in its half.
            for e in plan.iter_mut() {
                e.2 = e.1;
            }
            for i in 0..SLOTS {
                let k = pm.load(slot_at(old, i));
                if k != 0 && !plan.iter().any(|e| e.1 == i) {
                    let kh = keyslot::load(pm, self.o.key_type, k).hash64();
                    let half = ((kh >> (63 - l)) & 1) as usize;
                    plan.push((half, i, i, k, pm.load(slot_at(old, i) + 8)));
                }
            }
        }
        for &(half, _, d, k, v) in &plan {
            let s = slot_at(halves[half], d);
            pm.store(s, k);
            pm.store(s + 8, v);
        }
        clflush(pm, halves[0], SEG_BYTES);
        clflush(pm, halves[1], SEG_BYTES);
        if l == self.depth {
            return self.double(pm, x, old, halves);
        }
        // The old segment's directory range: the upper half first, then the lower.
        let chunk = 1u64 << (self.depth - l);
        let x0 = x - x % chunk;
        let half = chunk / 2;
        if half == 1 {
            pm.store(self.entry(x0 + 1), halves[1]);
            pm.fence();
            pm.store(self.entry(x0), halves[0]);
            clflush(pm, self.entry(x0), 16);
        } else {
            for i in 0..half {
                pm.store(self.entry(x0 + half + i), halves[1]);
            }
            clflush(pm, self.entry(x0 + half), 8 * half);
            for i in 0..half {
                pm.store(self.entry(x0 + i), halves[0]);
            }
            clflush(pm, self.entry(x0), 8 * half);
        }
        pm.free(old, SEG_BYTES);
        Ok(())
    }

    /// A new directory of twice the entries, with the split segment `old` (entry `x`)
    /// replaced by its two halves; flushed whole, then published in the root. (The original
    /// flushes the old directory's entries and then its pointer, capacity and depth words.)
    fn double<M: PmMem>(
        &mut self,
        pm: &mut M,
        x: u64,
        old: POff,
        halves: [POff; 2],
    ) -> PmResult<()> {
        let n = 1u64 << self.depth;
        let dir2 = pm.try_alloc(DIR_HDR + 16 * n, align(&self.o))?;
        pm.zero(dir2, DIR_HDR);
        pm.store(dir2, self.depth + 1);
        for i in 0..n {
            let (a, b) = if i == x {
                (halves[0], halves[1])
            } else {
                let s = pm.load(self.entry(i));
                (s, s)
            };
            pm.store(dir2 + DIR_HDR + 16 * i, a);
            pm.store(dir2 + DIR_HDR + 16 * i + 8, b);
        }
        clflush(pm, dir2, DIR_HDR + 16 * n);
        pm.set_root(self.o.root_slot, dir2);
        pm.free(self.dir, DIR_HDR + 8 * n);
        pm.free(old, SEG_BYTES);
        self.dir = dir2;
        self.depth += 1;
        Ok(())
    }

    /// Entries of every distinct segment: (key, value, slot offset, segment).
    fn visible<M: PmMem>(&self, pm: &M) -> Vec<(Key, u64, POff, POff)> {
        let mut out = Vec::new();
        let mut last = 0;
        for i in 0..1u64 << self.depth {
            let seg = pm.peek(self.entry(i));
            if seg == last {
                continue;
            }
            last = seg;
            for s in (0..SLOTS).map(|x| slot_at(seg, x)) {
                let k = pm.peek(s);
                if k != 0 {
                    let key = keyslot::peek(pm, self.o.key_type, k);
                    out.push((key, pm.peek(s + 8), s, seg));
                }
            }
        }
        out
    }
}

impl PmIndex for Cceh {
    fn fork(&self) -> Option<Box<dyn PmIndex>> {
        Some(Box::new(self.clone()))
    }
    fn insert(&mut self, region: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let pm = &mut Instr::new(region);
        debug_assert!(keyslot::valid(key));
        let h = key.hash64();
        let mut made = None;
        loop {
            let seg = self.segment(pm, h);
            let mut free = None;
            for i in 0..PROBE {
                let s = slot_at(seg, home(h) + i);
                let k = pm.load(s);
                if k == 0 {
                    free = free.or(Some(s));
                } else if keyslot::matches(pm, k, key) {
                    return Ok(false);
                }
            }
            if let Some(s) = free {
                let slot = match made {
                    Some(x) => x,
                    None => keyslot::make(pm, key)?,
                };
                pm.store(s + 8, value);
                pm.fence();
                pm.store(s, slot);
                let line = match self.persistence {
                    Persistence::Correct => s,
                    Persistence::Recipe => slot_at(seg, home(h)),
                };
                clflush(pm, line, 1);
                return Ok(true);
            }
            if made.is_none() && self.o.key_type == KeyType::Str {
                made = Some(keyslot::make(pm, key)?);
            }
            pm.set_resizing(true);
            let r = self.split(pm, h);
            pm.set_resizing(false);
            r?;
        }
    }

    fn lookup(&mut self, region: &mut PmRegion, key: Key) -> Option<u64> {
        let pm = &mut Instr::new(region);
        let s = self.find(pm, key)?;
        Some(pm.load(s + 8))
    }

    fn update(&mut self, region: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let pm = &mut Instr::new(region);
        let Some(s) = self.find(pm, key) else {
            return Ok(false);
        };
        pm.store(s + 8, value);
        pm.persist(s + 8, 8);
        Ok(true)
    }

    fn delete(&mut self, region: &mut PmRegion, key: Key) -> PmResult<bool> {
        let pm = &mut Instr::new(region);
        let Some(s) = self.find(pm, key) else {
            return Ok(false);
        };
        let k = pm.load(s);
        pm.store(s, 0);
        pm.persist(s, 8);
        keyslot::release(pm, self.o.key_type, k);
        Ok(true)
    }

    fn check_invariants(&self, region: &PmRegion) -> Result<(), String> {
        let pm = &Peek(region);
        let n = 1u64 << self.depth;
        let mut i = 0;
        while i < n {
            let seg = pm.peek(self.entry(i));
            let l = pm.peek(seg + SEG_DATA);
            let p = pm.peek(seg + SEG_DATA + 8);
            if l > self.depth {
                return Err(format!("segment depth {l} > global {}", self.depth));
            }
            let span = 1u64 << (self.depth - l);
            if i % span != 0 || (l > 0 && i >> (self.depth - l) != p) {
                return Err(format!(
                    "entry {i}: segment pattern {p}/{l} does not cover it"
                ));
            }
            for j in i..i + span {
                if pm.peek(self.entry(j)) != seg {
                    return Err(format!(
                        "entries {i}..{}: not all the same segment",
                        i + span
                    ));
                }
            }
            i += span;
        }
        let mut seen = std::collections::HashSet::new();
        for (key, _, s, seg) in self.visible(pm) {
            if !seen.insert(key) {
                return Err(format!("{key:?} stored twice"));
            }
            let h = key.hash64();
            let home_seg = pm.peek(self.entry(self.seg_index(h)));
            let l = pm.peek(seg + SEG_DATA);
            let p = pm.peek(seg + SEG_DATA + 8);
            let in_probe = (0..PROBE).any(|x| slot_at(seg, home(h) + x) == s);
            if home_seg != seg || !Self::belongs(h, l, p) || !in_probe {
                return Err(format!("{key:?} outside its probe range"));
            }
        }
        region.check_allocator()
    }

    fn entries(&self, region: &PmRegion) -> Vec<(Key, u64)> {
        let pm = &Peek(region);
        self.visible(pm)
            .into_iter()
            .map(|(k, v, _, _)| (k, v))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::crash::crash_test;
    use super::super::super::ops::Op;
    use super::super::super::region::CrashCapture;
    use super::super::super::testing::{fresh, random_ops, standard_checks};
    use super::super::super::{RegionConfig, TonicOpts};
    use super::*;

    #[test]
    fn matches_the_model_for_both_key_types_switches_and_persistence_modes() {
        standard_checks(&SPEC).unwrap();
        standard_checks(&SPEC_RECIPE).unwrap();
    }

    #[test]
    fn a_common_insert_costs_one_flush_and_three_fences() {
        for spec in [&SPEC, &SPEC_RECIPE] {
            let (mut pm, mut idx, _) = fresh(
                spec,
                KeyType::Int,
                TonicOpts::default(),
                RegionConfig::default(),
            );
            let before = pm.stats();
            assert!(idx.insert(&mut pm, Key::Int(9), 1).unwrap());
            let d = pm.stats().minus(&before);
            assert_eq!(
                (d.flushes, d.fences, d.ntstores),
                (1, 3, 0),
                "{}",
                spec.name
            );
        }
    }

    /// Closed form of a split: both new segments flushed whole (2 × 257 lines, a fence
    /// before and after each), then either a doubled directory (header line + 2 entries
    /// per old entry, fenced before and after, and the root: flush + fence) or the old
    /// segment's directory range (one entry per half: store, fence, store, one flush with
    /// its two fences). The insert that triggered it still costs 1 flush and 3 fences.
    #[test]
    fn split_flushes_follow_the_closed_form() {
        let (mut pm, mut idx, _) = fresh(
            &SPEC,
            KeyType::Int,
            TonicOpts::default(),
            RegionConfig::default(),
        );
        let mut splits = 0;
        let mut k = 1;
        while splits < 6 {
            let g0 = global_depth(&pm);
            let before = pm.stats();
            assert!(idx.insert(&mut pm, Key::Int(k), k).unwrap());
            k += 1;
            let d = pm.stats().minus(&before);
            if d.resize_flushes == 0 {
                assert_eq!((d.flushes, d.fences), (1, 3));
                continue;
            }
            splits += 1;
            let g1 = global_depth(&pm);
            let segs = 2 * SEG_BYTES.div_ceil(64);
            let (dir_flushes, dir_fences) = if g1 > g0 {
                assert_eq!(g1, g0 + 1);
                ((DIR_HDR + 16 * (1 << g0)).div_ceil(64) + 1, 3)
            } else {
                // Every segment starts at global depth, so a later split at lower depth
                // redirects a range: one entry per half here while G − l = 1.
                (1, 3)
            };
            assert_eq!(
                d.resize_flushes,
                segs + dir_flushes,
                "split {splits} at key {k}"
            );
            assert_eq!(d.resize_fences, 4 + dir_fences, "split {splits} at key {k}");
            assert_eq!(
                (d.flushes - d.resize_flushes, d.fences - d.resize_fences),
                (1, 3)
            );
        }
        idx.check_invariants(&pm).unwrap();
    }

    /// The directory's global depth (root slot 0 is at byte 64 of the region header).
    fn global_depth(pm: &PmRegion) -> u64 {
        pm.peek_u64(pm.peek_u64(64))
    }

    /// RECIPE's insert flushes the first line of the probe: an insert landing in a later
    /// line is never made durable and a crash loses it; the correct variant loses none.
    /// Both recover from every sampled persist point otherwise (splits included).
    #[test]
    fn the_recipe_insert_path_loses_inserts_the_correct_one_does_not() {
        let ops: Vec<Op> = (1..700).map(|k| Op::Insert(Key::Int(k), k)).collect();
        let cap = CrashCapture {
            probability: 0.02,
            adversarial: false,
        };
        let rcfg = RegionConfig::default();
        let kt = KeyType::Int;
        let r = crash_test(&SPEC_RECIPE, kt, TonicOpts::default(), &rcfg, &ops, cap, 5);
        assert!(r.failures > 0, "{r:#?}");
        assert!(
            r.first_failures.iter().any(|f| f.contains("lost")),
            "{r:#?}"
        );
        let r = crash_test(&SPEC, kt, TonicOpts::default(), &rcfg, &ops, cap, 5);
        assert_eq!(r.failures, 0, "{r:#?}");
    }

    /// Splits and directory doublings at sampled persist points, strict and adversarial,
    /// both key types (enough inserts for several splits of two 16 KiB segments).
    #[test]
    fn splits_recover_at_sampled_persist_points() {
        let rcfg = RegionConfig::default();
        for kt in [KeyType::Int, KeyType::Str] {
            for adversarial in [false, true] {
                let ops = random_ops(kt, 4000, 3000, 7);
                let cap = CrashCapture {
                    probability: 0.01,
                    adversarial,
                };
                let r = crash_test(&SPEC, kt, TonicOpts::default(), &rcfg, &ops, cap, 9);
                assert_eq!(r.failures, 0, "{r:#?}");
                assert!(r.images_checked > 20, "{r:#?}");
            }
        }
    }
}
