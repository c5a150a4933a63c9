//! Access streams for trace-driven mode: a trace file read through the one trace reader
//! (`crate::trace`), page addresses remapped to dense page numbers in first-touch order.
//! The application analogs (`apps.rs`) are streams too, so both share one replay loop.

use std::path::{Path, PathBuf};

use crate::error::ConfigError;
use crate::hash::FastMap;
use crate::trace::{open_trace, Kind, TraceError, TraceReader, TraceRecord};

/// One access: a dense page number, the 4 KiB base page inside it (0 for 4 KiB pages; PEBS
/// records the address, so a policy that splits huge pages can count sub-pages), whether
/// it is a load (PEBS samples loads only), and for trace streams the 64 B line in dense
/// page space (`page × lines per page + line in page`, what the cache filter looks up) and
/// whether it writes. Generated streams are memory-level traffic: `line` 0, never filtered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub page: u64,
    pub sub: u16,
    pub load: bool,
    pub store: bool,
    pub line: u64,
}

/// Bits of the 4 KiB index inside a page of `1 << page_shift` bytes.
pub fn sub_bits(page_shift: u32) -> u32 {
    page_shift.saturating_sub(BASE_PAGE_SHIFT)
}
const BASE_PAGE_SHIFT: u32 = 12;
/// Bits of a byte address inside its 64 B line.
const LINE_SHIFT: u32 = 6;

/// A stream of page accesses over `pages()` pages (numbered 0.. in first-touch order).
pub trait AccessStream {
    fn pages(&self) -> u64;
    /// Appends exactly `n` accesses to `out` (streams loop or are unbounded).
    fn fill(&mut self, n: usize, out: &mut Vec<Access>) -> Result<(), ConfigError>;
    /// The reference hot set (for the hot-share metric only; policies never see it).
    fn is_hot(&self, page: u64) -> bool;
    fn hot_pages(&self) -> u64;
}

/// Traces up to this many accesses (and < 2^31 pages) are kept in memory after the first
/// pass (4 B each); longer ones are streamed again on every pass.
const CACHE_ACCESSES: usize = 1 << 28;
/// Records per `read_batch` call.
const BATCH: usize = 4096;
/// Records ahead whose page slot the first pass asks the host for (and half as far, their
/// line bits).
const AHEAD: usize = 16;
/// Share of accesses the reference hot set of a trace carries (its most accessed pages).
const TRACE_HOT_SHARE: f64 = 0.8;

/// A trace file replayed in a loop. A first pass counts its pages (for the page table) and
/// finds its hot set; the replay reads the file again through the same reader, batch by
/// batch, so memory stays bounded by the page count.
pub struct TraceStream {
    path: PathBuf,
    key: String,
    page_shift: u32,
    /// Bits of the 4 KiB index inside a page (0 for 4 KiB pages).
    sub_bits: u32,
    map: PageNumbers,
    hot: Vec<bool>,
    hot_pages: u64,
    reader: Option<Box<dyn TraceReader>>,
    batch: Vec<TraceRecord>,
    pos: usize,
    /// Bits of the 64 B line inside a page (`page_shift - 6`).
    line_bits: u32,
    /// The whole trace as (page << (2 + line_bits) | line in page << 2 | store << 1 | load)
    /// when it has at most `CACHE_ACCESSES` accesses: replay then skips decoding and page
    /// lookups.
    cached: Vec<u32>,
    /// Accesses in one pass over the file.
    pub accesses_per_pass: u64,
    /// Distinct 64 B lines the trace touches (its footprint at line granularity).
    pub distinct_lines: u64,
    /// The trace was reduced to one record per run of accesses to a page (`hmsim trace
    /// record --page-level`): its records are not the program's line accesses.
    pub page_level: bool,
}

/// Lines touched, one bit per line of each dense page (pages arrive in first-touch order).
struct LineSet {
    words_per_page: usize,
    bits: Vec<u64>,
    count: u64,
}

impl LineSet {
    fn new(line_bits: u32) -> Self {
        LineSet {
            words_per_page: (1usize << line_bits).div_ceil(64),
            bits: Vec::new(),
            count: 0,
        }
    }

    /// Ask the host for the word holding the bit of (`page`, `line_in_page`), if any.
    #[inline]
    fn prefetch(&self, page: u64, line_in_page: u64) {
        let i = page as usize * self.words_per_page + (line_in_page / 64) as usize;
        if i < self.bits.len() {
            crate::hostmem::prefetch(&self.bits[i]);
        }
    }

    #[inline]
    fn insert(&mut self, page: u64, line_in_page: u64) {
        let i = page as usize * self.words_per_page + (line_in_page / 64) as usize;
        if i >= self.bits.len() {
            self.bits.resize((i + 1).next_power_of_two(), 0);
        }
        let b = 1u64 << (line_in_page % 64);
        if self.bits[i] & b == 0 {
            self.bits[i] |= b;
            self.count += 1;
        }
    }
}

/// A trace problem as a scenario error: the scenario's key, the trace file and its line.
fn trace_error(e: TraceError, file: &str, key: &str) -> ConfigError {
    let c: ConfigError = e.into();
    let at = c.line.map(|l| format!(" line {l}")).unwrap_or_default();
    ConfigError::new(file, key, format!("{}{at}: {}", c.file, c.message))
}

/// Page key → dense page number. Keys within `WINDOW` pages above the first key are looked
/// up in a flat array (a trace's heap is usually compact), others in a hash map. The flat
/// array keeps each page's access count beside its number, so counting a first-pass access
/// touches one host cache line, not two (the first pass is bound by these random look-ups).
struct PageNumbers {
    base: u64,
    direct: Vec<Slot>,
    map: FastMap<u64, u64>,
    len: u64,
    /// Accesses per page number not held in `direct` (hash-mapped keys, and what a slot's
    /// 32-bit count hands over when it fills).
    counts: Vec<u64>,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    number: u32,
    count: u32,
}

const WINDOW: u64 = 1 << 24;
const NONE: u32 = u32::MAX;
const EMPTY: Slot = Slot {
    number: NONE,
    count: 0,
};

/// Where a page's count lives: a flat-array slot or the page's entry in `counts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counter {
    Direct(usize),
    Far(usize),
}

impl PageNumbers {
    fn new() -> Self {
        PageNumbers {
            base: u64::MAX,
            direct: Vec::new(),
            map: FastMap::default(),
            len: 0,
            counts: Vec::new(),
        }
    }

    /// The key's number, numbering it next if new; the flag says whether it was new.
    #[cfg(test)]
    fn number(&mut self, key: u64) -> (u64, bool) {
        let (p, new, _) = self.lookup(key);
        (p, new)
    }

    /// [`Self::number`], and where the page's access count lives.
    #[inline]
    fn lookup(&mut self, key: u64) -> (u64, bool, Counter) {
        if self.base == u64::MAX {
            self.base = key;
        }
        let mut off = key.wrapping_sub(self.base);
        let next = self.len;
        if off >= WINDOW && key < self.base && self.len < NONE as u64 {
            let end = self.base + self.direct.len() as u64;
            if end - key <= WINDOW {
                self.lower_base(key);
                off = key - self.base;
            }
        }
        let at = if off < WINDOW && self.len < NONE as u64 {
            let i = off as usize;
            if i >= self.direct.len() {
                self.direct.resize((i + 1).next_power_of_two(), EMPTY);
            }
            let slot = &mut self.direct[i];
            if slot.number != NONE {
                return (u64::from(slot.number), false, Counter::Direct(i));
            }
            slot.number = next as u32;
            Counter::Direct(i)
        } else {
            let p = *self.map.entry(key).or_insert(next);
            if p != next {
                return (p, false, Counter::Far(p as usize));
            }
            Counter::Far(next as usize)
        };
        self.counts.push(0);
        self.len += 1;
        (next, true, at)
    }

    /// Move the window's start down to `key` or below (`key` is under it, and the span from
    /// `key` to the last slot fits the window), keeping every slot: the first key of a trace
    /// is rarely its lowest, and a key under the window was hashed, its count a second
    /// random access. The room below at least doubles, so a trace walking down moves the
    /// slots O(log) times. No hashed key comes under the moved window: one under the old
    /// start was hashed because it lay more than the window below the last slot, which it
    /// still does (slots are never dropped), and one above stays above.
    fn lower_base(&mut self, key: u64) {
        let end = self.base + self.direct.len() as u64;
        let want = (end - key)
            .max(2 * self.direct.len() as u64)
            .next_power_of_two()
            .min(WINDOW);
        let base = end.saturating_sub(want).min(key);
        let shift = (self.base - base) as usize;
        let mut direct = vec![EMPTY; shift + self.direct.len()];
        direct[shift..].copy_from_slice(&self.direct);
        self.direct = direct;
        self.base = base;
        debug_assert!(self.map.keys().all(|k| k.wrapping_sub(base) >= WINDOW));
    }

    /// Ask the host for the slot of `key`, if the window holds one.
    #[inline]
    fn prefetch(&self, key: u64) {
        let off = key.wrapping_sub(self.base);
        if off < self.direct.len() as u64 {
            crate::hostmem::prefetch(&self.direct[off as usize]);
        }
    }

    /// The number of `key` if its slot holds one (no lookup, nothing changed).
    #[inline]
    fn peek(&self, key: u64) -> Option<u64> {
        let off = key.wrapping_sub(self.base);
        let s = self.direct.get(usize::try_from(off).ok()?)?;
        (s.number != NONE).then_some(u64::from(s.number))
    }

    /// Count one access where `lookup` said.
    #[inline]
    fn count(&mut self, at: Counter) {
        match at {
            Counter::Direct(i) => {
                let slot = &mut self.direct[i];
                if slot.count == u32::MAX {
                    self.counts[slot.number as usize] += u64::from(u32::MAX);
                    slot.count = 0;
                }
                slot.count += 1;
            }
            Counter::Far(p) => self.counts[p] += 1,
        }
    }

    /// Accesses per page number, and the number of pages.
    fn take_counts(&mut self) -> Vec<u64> {
        let mut counts = std::mem::take(&mut self.counts);
        for s in &mut self.direct {
            if s.number != NONE {
                counts[s.number as usize] += u64::from(s.count);
                s.count = 0;
            }
        }
        counts
    }

    fn get(&self, key: u64) -> u64 {
        let off = key.wrapping_sub(self.base);
        match self.direct.get(off as usize) {
            Some(s) if off < WINDOW && s.number != NONE => u64::from(s.number),
            _ => self.map[&key],
        }
    }
}

fn is_access(k: Kind) -> bool {
    matches!(k, Kind::Load | Kind::Store | Kind::Modify)
}

impl TraceStream {
    /// Opens `path`; errors name the scenario `file`, the `key` and the trace's own location.
    pub fn open(path: &Path, page_bytes: u64, file: &str, key: &str) -> Result<Self, ConfigError> {
        let name_err = |e| trace_error(e, file, key);
        let page_shift = page_bytes.trailing_zeros();
        let sb = sub_bits(page_shift);
        let lb = page_shift - LINE_SHIFT;
        let line_mask = (1u64 << lb) - 1;
        let mut reader = open_trace(path, None).map_err(name_err)?;
        let page_level = crate::trace::is_page_level(reader.as_ref());
        let mut lines = LineSet::new(lb);
        let mut map = PageNumbers::new();
        let mut batch = Vec::with_capacity(BATCH);
        let mut cached: Vec<u32> = Vec::new();
        let mut caching = true;
        // Consecutive accesses often hit the same page: skip the lookup for them.
        let (mut last_key, mut last_p, mut last_at) = (u64::MAX, 0u64, Counter::Far(0));
        while reader.read_batch(&mut batch, BATCH).map_err(name_err)? > 0 {
            for (j, r) in batch.iter().enumerate() {
                // The slots and line bits of pages a little ahead are random host memory:
                // ask for them early (hints only; the same numbers and counts).
                if let Some(a) = batch.get(j + AHEAD) {
                    map.prefetch(a.address >> page_shift);
                }
                if let Some(a) = batch.get(j + AHEAD / 2) {
                    if let Some(p) = map.peek(a.address >> page_shift) {
                        lines.prefetch(p, (a.address >> LINE_SHIFT) & line_mask);
                    }
                }
                if !is_access(r.kind) {
                    continue;
                }
                let key = r.address >> page_shift;
                let p = if key == last_key {
                    last_p
                } else {
                    let (p, _, at) = map.lookup(key);
                    (last_key, last_p, last_at) = (key, p, at);
                    p
                };
                map.count(last_at);
                let lip = (r.address >> LINE_SHIFT) & line_mask;
                lines.insert(p, lip);
                if caching {
                    if cached.len() < CACHE_ACCESSES && p < 1 << (30 - lb) {
                        cached.push(
                            ((p as u32) << (2 + lb))
                                | ((lip as u32) << 2)
                                | (u32::from(r.kind.is_write()) << 1)
                                | u32::from(r.kind.is_read()),
                        );
                    } else {
                        caching = false;
                        cached = Vec::new();
                    }
                }
            }
        }
        let counts = map.take_counts();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            return Err(ConfigError::new(
                file,
                key,
                format!(
                    "{}: no memory accesses (load/store/modify records) in the trace",
                    path.display()
                ),
            ));
        }
        // Hot set: the most accessed pages carrying TRACE_HOT_SHARE of the accesses.
        let mut order: Vec<usize> = (0..counts.len()).collect();
        order.sort_by(|&a, &b| counts[b].cmp(&counts[a]).then(a.cmp(&b)));
        let mut hot = vec![false; counts.len()];
        let mut acc = 0u64;
        let mut hot_pages = 0;
        for i in order {
            if acc as f64 >= TRACE_HOT_SHARE * total as f64 {
                break;
            }
            hot[i] = true;
            hot_pages += 1;
            acc += counts[i];
        }
        let reader = if caching {
            None
        } else {
            Some(open_trace(path, None).map_err(name_err)?)
        };
        Ok(TraceStream {
            path: path.to_path_buf(),
            key: key.to_string(),
            page_shift,
            sub_bits: sb,
            line_bits: lb,
            map,
            hot,
            hot_pages,
            reader,
            batch,
            pos: usize::MAX,
            cached,
            accesses_per_pass: total,
            distinct_lines: lines.count,
            page_level,
        })
    }
}

impl AccessStream for TraceStream {
    fn pages(&self) -> u64 {
        self.map.len
    }

    fn fill(&mut self, n: usize, out: &mut Vec<Access>) -> Result<(), ConfigError> {
        let err = |e, key: &str| trace_error(e, "<replay>", key);
        let Some(reader) = self.reader.as_mut() else {
            // Cached: the same accesses the reader gave on the first pass, in order, looped.
            let mut left = n;
            while left > 0 {
                if self.pos >= self.cached.len() {
                    self.pos = 0;
                }
                let end = (self.pos + left).min(self.cached.len());
                let lb = self.line_bits;
                let line_mask = (1u32 << lb) - 1;
                // The 4 KiB index is the line index's top bits.
                let sub_shift = BASE_PAGE_SHIFT - LINE_SHIFT;
                out.extend(self.cached[self.pos..end].iter().map(|&c| {
                    let lip = (c >> 2) & line_mask;
                    let page = u64::from(c >> (2 + lb));
                    Access {
                        page,
                        sub: (lip >> sub_shift) as u16,
                        load: c & 1 == 1,
                        store: c & 2 != 0,
                        line: (page << lb) | u64::from(lip),
                    }
                }));
                left -= end - self.pos;
                self.pos = end;
            }
            return Ok(());
        };
        let mut left = n;
        while left > 0 {
            if self.pos >= self.batch.len() {
                let got = reader
                    .read_batch(&mut self.batch, BATCH)
                    .map_err(|e| err(e, &self.key))?;
                if got == 0 {
                    // End of the trace: replay it from the start.
                    *reader = open_trace(&self.path, None).map_err(|e| err(e, &self.key))?;
                }
                self.pos = 0;
                continue;
            }
            let r = self.batch[self.pos];
            self.pos += 1;
            if !is_access(r.kind) {
                continue;
            }
            // Every address was numbered by the first pass over the same file.
            let page = self.map.get(r.address >> self.page_shift);
            let lb = self.line_bits;
            out.push(Access {
                page,
                sub: ((r.address >> BASE_PAGE_SHIFT) & ((1u64 << self.sub_bits) - 1)) as u16,
                load: r.kind.is_read(),
                store: r.kind.is_write(),
                line: (page << lb) | ((r.address >> LINE_SHIFT) & ((1u64 << lb) - 1)),
            });
            left -= 1;
        }
        Ok(())
    }

    fn is_hot(&self, page: u64) -> bool {
        self.hot.get(page as usize).copied().unwrap_or(false)
    }

    fn hot_pages(&self) -> u64 {
        self.hot_pages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_numbers_are_first_touch_order_inside_and_outside_the_window() {
        let mut m = PageNumbers::new();
        let keys = [100u64, 105, 100, 1 << 40, 7, 1 << 40, 105, (1 << 24) + 100];
        let got: Vec<(u64, bool)> = keys.iter().map(|&k| m.number(k)).collect();
        assert_eq!(
            got,
            [
                (0, true),
                (1, true),
                (0, false),
                (2, true),
                (3, true),
                (2, false),
                (1, false),
                (4, true)
            ]
        );
        for (&k, &(p, _)) in keys.iter().zip(&got) {
            assert_eq!(m.get(k), p);
        }
        assert_eq!(m.len, 5);
    }

    proptest::proptest! {
        /// Numbers in first-touch order and per-page access counts, as a plain map gives
        /// them, whatever order the keys come in: keys under the window (which moves down
        /// to take them), far above it, and so far under it that the window cannot reach
        /// them (hashed).
        #[test]
        fn numbers_and_counts_are_a_plain_maps(
            keys in proptest::collection::vec(
                proptest::prop_oneof![
                    0u64..2000,
                    (1u64 << 30) - 3000..(1u64 << 30) + 3000,
                    (1u64 << 40)..(1u64 << 40) + 100,
                ],
                1..400,
            )
        ) {
            let mut m = PageNumbers::new();
            let mut want: std::collections::HashMap<u64, u64> = Default::default();
            let mut counts: Vec<u64> = Vec::new();
            for &k in &keys {
                let next = want.len() as u64;
                let p = *want.entry(k).or_insert(next);
                if p == next {
                    counts.push(0);
                }
                counts[p as usize] += 1;
                let (got, new, at) = m.lookup(k);
                proptest::prop_assert_eq!((got, new), (p, p == next));
                m.count(at);
            }
            for (&k, &p) in &want {
                proptest::prop_assert_eq!(m.get(k), p);
            }
            proptest::prop_assert_eq!(m.take_counts(), counts);
        }
    }

    #[test]
    fn a_key_under_the_window_moves_it_down_unless_the_span_would_not_fit() {
        let mut m = PageNumbers::new();
        let top = WINDOW + 100;
        assert_eq!(m.lookup(top).2, Counter::Direct(0));
        // More than the window under the last slot: hashed.
        assert_eq!(m.lookup(5).2, Counter::Far(1));
        // Within reach: the window moves down to take it, the slots kept.
        let (p, new, at) = m.lookup(top - 10);
        assert!(p == 2 && new && matches!(at, Counter::Direct(_)));
        assert!(m.base <= top - 10 && m.base + m.direct.len() as u64 > top);
        assert_eq!((m.get(top), m.get(5), m.get(top - 10)), (0, 1, 2));
        assert_eq!(m.lookup(top).0, 0, "the first key keeps its number");
    }

    #[test]
    fn access_counts_add_up_in_slots_in_the_map_and_past_a_full_slot() {
        let mut m = PageNumbers::new();
        for &(k, n) in &[(100u64, 3u64), (1 << 40, 2), (105, 1), (100, 2)] {
            for _ in 0..n {
                let (_, _, at) = m.lookup(k);
                m.count(at);
            }
        }
        // A slot whose 32-bit count is full hands it over to the page's 64-bit count.
        let (_, _, at) = m.lookup(105);
        let Counter::Direct(i) = at else {
            panic!("105 is in the window")
        };
        m.direct[i].count = u32::MAX;
        m.count(at);
        assert_eq!(m.take_counts(), vec![5, 2, u64::from(u32::MAX) + 1]);
    }
}
