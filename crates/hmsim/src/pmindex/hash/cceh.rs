//! CCEH (Nam et al., FAST'19): cache-line-conscious extendible hashing. A directory of
//! `2^G` segment pointers (G = global depth, indexed by the hash's most significant bits);
//! each segment holds 64 buckets of one 64 B line, four 16 B `key | value` pairs each, and
//! a header (local depth, pattern). A key probes four consecutive buckets (16 slots) from
//! the bucket its low hash bits pick.
//!
//! Persistence (done correctly, unlike RECIPE's bundled copy, which did not flush on the
//! common path): the value and then the key are stored in one 16 B pair — one cache line, so
//! TSO orders them on the line — then the line is flushed and fenced: one flush per insert.
//! A full probe range splits the segment: a new segment with the entries whose next hash
//! bit is 1 is written and flushed whole; a split record (old, new, directory range) is
//! persisted in the directory header; the directory entries are redirected and flushed; the
//! old segment's depth/pattern are persisted; the record is cleared. Moved entries stay in
//! the old segment and are ignored by pattern (CCEH's lazy deletion). A segment at global
//! depth first doubles the directory: a new directory is written and flushed whole, then
//! published in the root.
//! Recovery: redo an interrupted split from the split record (idempotent), then rebuild
//! nothing else — stale copies are invisible by pattern.
//! Deleted string-key records are not freed (a stale copy in a split segment may still
//! name the record; reusing it could make the stale slot look valid).
//!
//! Tonic switches: `xpline_nodes` aligns segments and the directory to 256 B XPLines.

use super::super::index::{IndexOptions, IndexSpec, PmIndex, OPT_XPLINE};
use super::super::key::{Key, KeyType};
use super::super::keyslot;
use super::super::region::{POff, PmError, PmRegion, PmResult};

const BUCKETS: u64 = 64;
const PAIRS: u64 = 4;
const PROBE: u64 = 4;
const SEG_DATA: u64 = BUCKETS * 64;
/// Segment header (after the buckets): local depth, pattern.
const SEG_BYTES: u64 = SEG_DATA + 64;
/// Directory header line: global depth, split record (active, old, new, lo, hi).
const DIR_HDR: u64 = 64;

pub static SPEC: IndexSpec = IndexSpec {
    name: "cceh",
    about: "CCEH: cacheline-conscious extendible hashing (segments, directory doubling)",
    family: "hash",
    create,
    recover,
    optimizations: &[OPT_XPLINE],
    key_types: &[KeyType::Int, KeyType::Str],
};

pub struct Cceh {
    o: IndexOptions,
    dir: POff,
    depth: u64,
}

fn align(o: &IndexOptions) -> u64 {
    if o.opts.xpline_nodes {
        256
    } else {
        64
    }
}

fn create(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    // Start with enough segments for the hint at ~50 % fill.
    let segs = (o.capacity_hint / (BUCKETS * PAIRS / 2))
        .max(2)
        .next_power_of_two();
    let depth = segs.trailing_zeros() as u64;
    let dir = pm.alloc(DIR_HDR + 8 * segs, align(o))?;
    pm.zero(dir, DIR_HDR);
    pm.write_u64(dir, depth);
    for i in 0..segs {
        let s = new_segment(pm, o, depth, i)?;
        pm.flush_range(s, SEG_BYTES);
        pm.write_u64(dir + DIR_HDR + 8 * i, s);
    }
    pm.flush_range(dir, DIR_HDR + 8 * segs);
    pm.fence();
    pm.set_root(o.root_slot, dir);
    Ok(Box::new(Cceh { o: *o, dir, depth }))
}

fn new_segment(pm: &mut PmRegion, o: &IndexOptions, depth: u64, pattern: u64) -> PmResult<POff> {
    let s = pm.alloc(SEG_BYTES, align(o))?;
    pm.zero(s, SEG_DATA);
    pm.write_u64(s + SEG_DATA, depth);
    pm.write_u64(s + SEG_DATA + 8, pattern);
    Ok(s)
}

fn recover(pm: &mut PmRegion, o: &IndexOptions) -> PmResult<Box<dyn PmIndex>> {
    let dir = pm.root(o.root_slot);
    if dir == 0 {
        return Err(PmError::Corrupt(
            "CCEH: no directory in the root slot".into(),
        ));
    }
    let depth = pm.read_u64(dir);
    if depth > 40 || dir + DIR_HDR + (8 << depth) > pm.len() {
        return Err(PmError::Corrupt(format!("CCEH: bad global depth {depth}")));
    }
    let mut c = Cceh { o: *o, dir, depth };
    if pm.read_u64(dir + 8) != 0 {
        let rec: Vec<u64> = (2..6).map(|i| pm.read_u64(dir + 8 * i)).collect();
        c.finish_split(pm, rec[0], rec[1], rec[2], rec[3]);
    }
    Ok(Box::new(c))
}

impl Cceh {
    fn seg_index(&self, h: u64) -> u64 {
        if self.depth == 0 {
            0
        } else {
            h >> (64 - self.depth)
        }
    }

    fn segment(&self, pm: &mut PmRegion, h: u64) -> POff {
        pm.read_u64(self.dir + DIR_HDR + 8 * self.seg_index(h))
    }

    /// Whether a stored key (hash `h`) belongs to a segment of `depth`/`pattern`.
    fn belongs(h: u64, depth: u64, pattern: u64) -> bool {
        depth == 0 || h >> (64 - depth) == pattern
    }

    fn slot_off(seg: POff, h: u64, i: u64) -> POff {
        let b = ((h & (BUCKETS - 1)) + i / PAIRS) % BUCKETS;
        seg + b * 64 + (i % PAIRS) * 16
    }

    fn find(&self, pm: &mut PmRegion, key: Key) -> Option<POff> {
        let h = key.hash64();
        let seg = self.segment(pm, h);
        (0..PROBE * PAIRS)
            .map(|i| Self::slot_off(seg, h, i))
            .find(|&s| {
                let k = pm.read_u64(s);
                k != 0 && keyslot::matches(pm, k, key)
            })
    }

    /// Split the segment `key` maps to; doubles the directory first if needed.
    fn split(&mut self, pm: &mut PmRegion, h: u64) -> PmResult<()> {
        let old = self.segment(pm, h);
        let l = pm.read_u64(old + SEG_DATA);
        let p = pm.read_u64(old + SEG_DATA + 8);
        if l == self.depth {
            self.double(pm)?;
        }
        let new = new_segment(pm, &self.o, l + 1, (p << 1) | 1)?;
        for b in 0..BUCKETS {
            for j in 0..PAIRS {
                let s = old + b * 64 + j * 16;
                let k = pm.read_u64(s);
                if k == 0 {
                    continue;
                }
                let kh = keyslot::load(pm, self.o.key_type, k).hash64();
                if Self::belongs(kh, l, p) && (kh >> (63 - l)) & 1 == 1 {
                    let v = pm.read_u64(s + 8);
                    let d = new + b * 64 + j * 16;
                    pm.write_u64(d + 8, v);
                    pm.write_u64(d, k);
                }
            }
        }
        pm.flush_range(new, SEG_BYTES);
        pm.fence();
        // Directory range of the new segment's half.
        let span = 1u64 << (self.depth - l - 1);
        let lo = ((p << 1) | 1) << (self.depth - l - 1);
        let (lo, hi) = (lo, lo + span);
        for (i, v) in [1, old, new, lo, hi].into_iter().enumerate() {
            pm.write_u64(self.dir + 8 + 8 * i as u64, v);
        }
        pm.persist(self.dir, DIR_HDR);
        self.finish_split(pm, old, new, lo, hi);
        Ok(())
    }

    /// Steps 2–4 of a split (also the recovery redo): redirect, persist the old segment's
    /// new depth/pattern, clear the record.
    fn finish_split(&mut self, pm: &mut PmRegion, old: POff, new: POff, lo: u64, hi: u64) {
        for i in lo..hi {
            pm.write_u64(self.dir + DIR_HDR + 8 * i, new);
        }
        pm.flush_range(self.dir + DIR_HDR + 8 * lo, 8 * (hi - lo));
        pm.fence();
        let l = pm.read_u64(new + SEG_DATA) - 1;
        let p = pm.read_u64(new + SEG_DATA + 8) >> 1;
        pm.write_u64(old + SEG_DATA, l + 1);
        pm.write_u64(old + SEG_DATA + 8, p << 1);
        pm.persist(old + SEG_DATA, 16);
        pm.write_u64(self.dir + 8, 0);
        pm.persist(self.dir + 8, 8);
    }

    fn double(&mut self, pm: &mut PmRegion) -> PmResult<()> {
        let n = 1u64 << self.depth;
        let dir2 = pm.alloc(DIR_HDR + 16 * n, align(&self.o))?;
        pm.zero(dir2, DIR_HDR);
        pm.write_u64(dir2, self.depth + 1);
        for i in 0..n {
            let s = pm.read_u64(self.dir + DIR_HDR + 8 * i);
            pm.write_u64(dir2 + DIR_HDR + 16 * i, s);
            pm.write_u64(dir2 + DIR_HDR + 16 * i + 8, s);
        }
        pm.flush_range(dir2, DIR_HDR + 16 * n);
        pm.fence();
        pm.set_root(self.o.root_slot, dir2);
        pm.free(self.dir, DIR_HDR + 8 * n);
        self.dir = dir2;
        self.depth += 1;
        Ok(())
    }

    /// Visible entries of every distinct segment: (key, value, slot offset, segment).
    fn visible(&self, pm: &PmRegion) -> Vec<(Key, u64, POff, POff)> {
        let mut out = Vec::new();
        let mut last = 0;
        for i in 0..1u64 << self.depth {
            let seg = pm.peek_u64(self.dir + DIR_HDR + 8 * i);
            if seg == last {
                continue;
            }
            last = seg;
            let l = pm.peek_u64(seg + SEG_DATA);
            let p = pm.peek_u64(seg + SEG_DATA + 8);
            for s in (0..BUCKETS * PAIRS).map(|x| seg + (x / PAIRS) * 64 + (x % PAIRS) * 16) {
                let k = pm.peek_u64(s);
                if k == 0 {
                    continue;
                }
                let key = keyslot::peek(pm, self.o.key_type, k);
                if Self::belongs(key.hash64(), l, p) {
                    out.push((key, pm.peek_u64(s + 8), s, seg));
                }
            }
        }
        out
    }
}

impl PmIndex for Cceh {
    fn insert(&mut self, pm: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        debug_assert!(keyslot::valid(key));
        let h = key.hash64();
        let mut made = None;
        loop {
            let seg = self.segment(pm, h);
            let l = pm.read_u64(seg + SEG_DATA);
            let p = pm.read_u64(seg + SEG_DATA + 8);
            let mut free = None;
            for i in 0..PROBE * PAIRS {
                let s = Self::slot_off(seg, h, i);
                let k = pm.read_u64(s);
                if k == 0 {
                    free = free.or(Some(s));
                } else if keyslot::matches(pm, k, key) {
                    return Ok(false);
                } else if free.is_none()
                    && !Self::belongs(keyslot::load(pm, self.o.key_type, k).hash64(), l, p)
                {
                    free = Some(s); // a stale copy left by a split
                }
            }
            if let Some(s) = free {
                let slot = match made {
                    Some(x) => x,
                    None => keyslot::make(pm, key)?,
                };
                pm.write_u64(s + 8, value);
                pm.write_u64(s, slot);
                pm.flush(s);
                pm.fence();
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

    fn lookup(&mut self, pm: &mut PmRegion, key: Key) -> Option<u64> {
        let s = self.find(pm, key)?;
        Some(pm.read_u64(s + 8))
    }

    fn update(&mut self, pm: &mut PmRegion, key: Key, value: u64) -> PmResult<bool> {
        let Some(s) = self.find(pm, key) else {
            return Ok(false);
        };
        pm.write_u64(s + 8, value);
        pm.persist(s + 8, 8);
        Ok(true)
    }

    fn delete(&mut self, pm: &mut PmRegion, key: Key) -> PmResult<bool> {
        let Some(s) = self.find(pm, key) else {
            return Ok(false);
        };
        pm.write_u64(s, 0);
        pm.persist(s, 8);
        Ok(true)
    }

    fn check_invariants(&self, pm: &PmRegion) -> Result<(), String> {
        if pm.peek_u64(self.dir + 8) != 0 {
            return Err("split record still active".into());
        }
        let n = 1u64 << self.depth;
        let mut i = 0;
        while i < n {
            let seg = pm.peek_u64(self.dir + DIR_HDR + 8 * i);
            let l = pm.peek_u64(seg + SEG_DATA);
            let p = pm.peek_u64(seg + SEG_DATA + 8);
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
                if pm.peek_u64(self.dir + DIR_HDR + 8 * j) != seg {
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
            let home = pm.peek_u64(self.dir + DIR_HDR + 8 * self.seg_index(h));
            let in_probe = (0..PROBE * PAIRS).any(|x| Self::slot_off(seg, h, x) == s);
            if home != seg || !in_probe {
                return Err(format!("{key:?} outside its probe range"));
            }
        }
        pm.check_allocator()
    }

    fn entries(&self, pm: &PmRegion) -> Vec<(Key, u64)> {
        self.visible(pm)
            .into_iter()
            .map(|(k, v, _, _)| (k, v))
            .collect()
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
    fn a_common_insert_costs_one_flush_and_one_fence() {
        let (mut pm, mut idx, _) = fresh(
            &SPEC,
            KeyType::Int,
            TonicOpts::default(),
            RegionConfig::default(),
        );
        let before = pm.stats();
        assert!(idx.insert(&mut pm, Key::Int(9), 1).unwrap());
        let d = pm.stats().minus(&before);
        assert_eq!((d.flushes, d.fences, d.ntstores), (1, 1, 0));
    }
}
