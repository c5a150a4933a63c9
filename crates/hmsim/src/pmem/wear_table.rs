//! Per-line wear counters (media writes per 256 B XPLine) in a two-level table: a small map
//! finds the chunk of 1024 blocks (4 MiB of address space, 16 Ki lines), and the chunk holds
//! the counts. A chunk starts sparse, an open-addressing table of (line, count) slots that
//! grows with the lines written, and becomes a dense array of one counter per line when the
//! sparse table would be as large. Uniform random writes over a large module then cost
//! 16–32 B of host memory per line written instead of 64 KiB per chunk touched (1 M writes
//! over 16 GiB: about 16 MB instead of 256 MB), so the counters mostly stay in the host's
//! caches and few pages are faulted in; sequential and dense footprints keep the direct index.

use crate::hash::FastMap;

/// Writes per XPLine of one 4 KiB block.
pub(super) type BlockWear = [u32; 16];

const LINES_PER_BLOCK: u64 = 16;
const CHUNK_BLOCKS: u64 = 1024;
const CHUNK_LINES: u64 = CHUNK_BLOCKS * LINES_PER_BLOCK;
/// Slots of a new sparse chunk.
const SPARSE_MIN_SLOTS: usize = 16;
/// Slots of the largest sparse chunk (8 B each, at most half used): doubling it would take as
/// much memory as the dense array (4 B per line), so a chunk needing more turns dense.
const SPARSE_MAX_SLOTS: usize = (CHUNK_LINES / 4) as usize;

/// One written line of a sparse chunk: `key` is the line's index in the chunk plus one (0:
/// an empty slot).
#[derive(Clone, Copy, Default)]
struct Slot {
    key: u32,
    count: u32,
}

/// Lines with at least one media write, their writes, and those of them with three or
/// more (how often lines repeat: `hmsim lifetime`'s check that random writes are uniform).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LineTally {
    pub lines: u64,
    pub writes: u64,
    pub lines_3plus: u64,
}

impl LineTally {
    /// This tally and a line with `n` writes (none: not a written line).
    pub fn count(self, n: u32) -> LineTally {
        if n == 0 {
            return self;
        }
        LineTally {
            lines: self.lines + 1,
            writes: self.writes + n as u64,
            lines_3plus: self.lines_3plus + (n >= 3) as u64,
        }
    }

    pub fn add(self, o: LineTally) -> LineTally {
        LineTally {
            lines: self.lines + o.lines,
            writes: self.writes + o.writes,
            lines_3plus: self.lines_3plus + o.lines_3plus,
        }
    }
}

#[derive(Clone)]
enum Chunk {
    /// Linear probing, at most half full (a probe for a new line stays short).
    Sparse {
        slots: Box<[Slot]>,
        len: usize,
    },
    Dense(Box<[u32]>),
}

/// Home slot of line `i` in a table of `n` slots (a power of two): Fibonacci hashing, so
/// strided lines (one per block, one per page) spread over the table.
#[inline]
fn home(i: u32, n: usize) -> usize {
    (i.wrapping_mul(0x9e37_79b9) >> (32 - n.trailing_zeros())) as usize
}

impl Chunk {
    fn new() -> Chunk {
        Chunk::Sparse {
            slots: vec![Slot::default(); SPARSE_MIN_SLOTS].into_boxed_slice(),
            len: 0,
        }
    }

    /// Add one write to line `i`; its count after.
    #[inline]
    fn increment(&mut self, i: u32) -> u32 {
        let (slots, len) = match self {
            Chunk::Dense(c) => {
                let w = &mut c[i as usize];
                *w += 1;
                return *w;
            }
            Chunk::Sparse { slots, len } => (slots, len),
        };
        let mask = slots.len() - 1;
        let mut s = home(i, slots.len());
        loop {
            let slot = &mut slots[s];
            if slot.key == i + 1 {
                slot.count += 1;
                return slot.count;
            }
            if slot.key == 0 {
                break;
            }
            s = (s + 1) & mask;
        }
        if 2 * (*len + 1) <= slots.len() {
            slots[s] = Slot {
                key: i + 1,
                count: 1,
            };
            *len += 1;
        } else {
            self.grow_with(i);
        }
        1
    }

    /// A sparse chunk too full to take line `i`: rebuilt twice as large (or dense) with `i`
    /// written once.
    #[cold]
    fn grow_with(&mut self, i: u32) {
        let Chunk::Sparse { slots, len } = self else {
            unreachable!("only a sparse chunk grows")
        };
        let n = 2 * slots.len();
        if n > SPARSE_MAX_SLOTS {
            let mut dense = vec![0u32; CHUNK_LINES as usize].into_boxed_slice();
            for s in slots.iter().filter(|s| s.key != 0) {
                dense[s.key as usize - 1] = s.count;
            }
            dense[i as usize] = 1;
            *self = Chunk::Dense(dense);
            return;
        }
        let grown_len = *len + 1;
        let mut grown = vec![Slot::default(); n].into_boxed_slice();
        let new = Slot {
            key: i + 1,
            count: 1,
        };
        for s in slots.iter().filter(|s| s.key != 0).chain([&new]) {
            let mut j = home(s.key - 1, n);
            while grown[j].key != 0 {
                j = (j + 1) & (n - 1);
            }
            grown[j] = *s;
        }
        *self = Chunk::Sparse {
            slots: grown,
            len: grown_len,
        };
    }

    /// Writes to line `i` (0 if never written).
    fn get(&self, i: u32) -> u32 {
        match self {
            Chunk::Dense(c) => c[i as usize],
            Chunk::Sparse { slots, .. } => {
                let mut s = home(i, slots.len());
                loop {
                    match slots[s].key {
                        0 => return 0,
                        k if k == i + 1 => return slots[s].count,
                        _ => s = (s + 1) & (slots.len() - 1),
                    }
                }
            }
        }
    }

    fn max(&self) -> u32 {
        match self {
            Chunk::Dense(c) => c.iter().copied().max().unwrap_or(0),
            Chunk::Sparse { slots, .. } => slots.iter().map(|s| s.count).max().unwrap_or(0),
        }
    }

    /// The chunk's lines with a write, tallied.
    fn tally(&self) -> LineTally {
        match self {
            Chunk::Dense(c) => c
                .iter()
                .copied()
                .fold(LineTally::default(), LineTally::count),
            Chunk::Sparse { slots, .. } => slots
                .iter()
                .map(|s| s.count)
                .fold(LineTally::default(), LineTally::count),
        }
    }

    /// `f(block in chunk, wear)` for every block of the chunk with a write, in block order.
    fn for_each_block(&self, mut f: impl FnMut(u64, &BlockWear)) {
        match self {
            Chunk::Dense(c) => {
                for (b, w) in c.chunks_exact(LINES_PER_BLOCK as usize).enumerate() {
                    if w.iter().any(|&x| x > 0) {
                        f(b as u64, w.try_into().expect("16 lines"));
                    }
                }
            }
            Chunk::Sparse { slots, .. } => {
                let mut lines: Vec<Slot> = slots.iter().copied().filter(|s| s.key != 0).collect();
                lines.sort_unstable_by_key(|s| s.key);
                for run in lines.chunk_by(|a, b| (a.key - 1) / 16 == (b.key - 1) / 16) {
                    let mut w = [0u32; 16];
                    for s in run {
                        w[(s.key as usize - 1) % 16] = s.count;
                    }
                    f(((run[0].key - 1) / 16) as u64, &w);
                }
            }
        }
    }

    /// `f(block in chunk, writes summed over its lines)` for every block of the chunk with
    /// a write (a sparse chunk adds its slots up in `sums`, 1024 zeros, left zeroed).
    fn for_each_block_sum(&self, sums: &mut [u64], mut f: impl FnMut(u64, u64)) {
        match self {
            Chunk::Dense(_) => self.for_each_block(|b, w| f(b, w.iter().map(|&x| x as u64).sum())),
            Chunk::Sparse { slots, .. } => {
                for s in slots.iter().filter(|s| s.key != 0) {
                    sums[(s.key as usize - 1) / LINES_PER_BLOCK as usize] += s.count as u64;
                }
                for (b, sum) in sums.iter_mut().enumerate() {
                    if *sum > 0 {
                        f(b as u64, *sum);
                        *sum = 0;
                    }
                }
            }
        }
    }

    /// Where line `i`'s count is (or would be put), for a prefetch.
    #[inline]
    fn slot_ptr(&self, i: u32) -> *const u8 {
        match self {
            Chunk::Dense(c) => &c[i as usize] as *const u32 as *const u8,
            Chunk::Sparse { slots, .. } => &slots[home(i, slots.len())] as *const Slot as *const u8,
        }
    }
}

#[derive(Default, Clone)]
pub(super) struct WearTable {
    chunks: FastMap<u64, Chunk>,
}

impl WearTable {
    /// Add one write to `line` (an XPLine: block × 16 + line in block); its count after.
    #[inline]
    pub(super) fn increment(&mut self, line: u64) -> u32 {
        self.chunks
            .entry(line / CHUNK_LINES)
            .or_insert_with(Chunk::new)
            .increment((line % CHUNK_LINES) as u32)
    }

    /// Ask the host to fetch `line`'s counter: called when the line is first written to the
    /// XPBuffer, its media write comes some requests later and then finds the counter in
    /// the host's cache (a hint: nothing changes, and a chunk not yet made is skipped).
    #[inline]
    pub(super) fn prefetch(&self, line: u64) {
        if let Some(c) = self.chunks.get(&(line / CHUNK_LINES)) {
            crate::hostmem::prefetch(c.slot_ptr((line % CHUNK_LINES) as u32));
        }
    }

    /// The block's counters (zeros if never written).
    pub(super) fn get(&self, block: u64) -> BlockWear {
        let Some(c) = self.chunks.get(&(block / CHUNK_BLOCKS)) else {
            return [0; 16];
        };
        let first = ((block % CHUNK_BLOCKS) * LINES_PER_BLOCK) as u32;
        std::array::from_fn(|j| c.get(first + j as u32))
    }

    /// Most writes any line received (0 if none).
    pub(super) fn max_line(&self) -> u32 {
        self.chunks.values().map(Chunk::max).max().unwrap_or(0)
    }

    /// The lines with at least one write, tallied.
    pub(super) fn tally(&self) -> LineTally {
        self.chunks
            .values()
            .map(Chunk::tally)
            .fold(LineTally::default(), LineTally::add)
    }

    /// `f(block, wear)` for every block with at least one write, each once, in no set order.
    pub(super) fn for_each_block(&self, mut f: impl FnMut(u64, &BlockWear)) {
        for (&c, chunk) in &self.chunks {
            chunk.for_each_block(|b, w| f(c * CHUNK_BLOCKS + b, w));
        }
    }

    /// `f(block, writes summed over its lines)` for every block with at least one write,
    /// each once, in no set order (a sparse chunk's blocks without sorting its lines).
    pub(super) fn for_each_block_sum(&self, mut f: impl FnMut(u64, u64)) {
        let mut sums = vec![0u64; CHUNK_BLOCKS as usize];
        for (&c, chunk) in &self.chunks {
            chunk.for_each_block_sum(&mut sums, |b, w| f(c * CHUNK_BLOCKS + b, w));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn counts_land_where_they_are_read() {
        let mut t = WearTable::default();
        for _ in 0..2 {
            t.increment(5 * 16 + 3);
        }
        assert_eq!(t.increment(5000 * 16), 1);
        assert_eq!(t.get(5)[3], 2);
        assert_eq!(t.get(6), [0; 16]);
        let mut blocks = Vec::new();
        t.for_each_block(|b, _| blocks.push(b));
        blocks.sort();
        assert_eq!(blocks, vec![5, 5000]);
        assert_eq!(t.max_line(), 2);
        assert_eq!(
            t.tally(),
            LineTally {
                lines: 2,
                writes: 3,
                lines_3plus: 0
            }
        );
    }

    #[test]
    fn a_chunk_turns_dense_when_the_sparse_table_would_be_as_large() {
        let mut t = WearTable::default();
        // One line per block: 1024 lines of chunk 0 stay sparse (2048 slots, 16 KiB) ...
        for b in 0..1024 {
            t.increment(b * 16);
        }
        assert!(matches!(t.chunks[&0], Chunk::Sparse { ref slots, .. } if slots.len() == 2048));
        // ... 2048 fill 4096 slots (32 KiB) ...
        for b in 0..1024 {
            t.increment(b * 16 + 1);
        }
        assert!(matches!(t.chunks[&0], Chunk::Sparse { ref slots, .. } if slots.len() == 4096));
        // ... and 2049 would need 8192 (64 KiB, the dense array's size): dense, counts kept.
        t.increment(2);
        assert!(matches!(t.chunks[&0], Chunk::Dense(_)));
        assert_eq!(t.get(0), {
            let mut w = [0; 16];
            w[..3].copy_from_slice(&[1, 1, 1]);
            w
        });
        assert_eq!(t.get(1023), {
            let mut w = [0; 16];
            w[0] = 1;
            w[1] = 1;
            w
        });
    }

    proptest::proptest! {
        /// The table agrees with a plain map of line → count on writes of any density:
        /// counts returned and read back, the blocks it lists with their counters, the
        /// maximum and the total.
        #[test]
        fn matches_a_flat_map_of_line_counts(
            writes in proptest::collection::vec((0u64..4, 0u64..3 * CHUNK_LINES, 1u32..4), 0..3000),
        ) {
            let mut t = WearTable::default();
            let mut flat: BTreeMap<u64, u32> = BTreeMap::new();
            for &(spread, x, times) in &writes {
                // Dense bursts into one chunk and sparse writes across three.
                let line = match spread {
                    0 => x % 64,
                    1 => CHUNK_LINES + x % 4096,
                    _ => x,
                };
                for _ in 0..times {
                    let c = flat.entry(line).or_insert(0);
                    *c += 1;
                    proptest::prop_assert_eq!(t.increment(line), *c);
                }
            }
            let mut listed = BTreeMap::new();
            t.for_each_block(|b, w| {
                assert!(listed.insert(b, *w).is_none(), "block {b} listed twice");
            });
            let mut expected: BTreeMap<u64, BlockWear> = BTreeMap::new();
            for (&line, &c) in &flat {
                expected.entry(line / 16).or_insert([0; 16])[(line % 16) as usize] = c;
            }
            proptest::prop_assert_eq!(&listed, &expected);
            let mut sums = BTreeMap::new();
            t.for_each_block_sum(|b, n| {
                assert!(sums.insert(b, n).is_none(), "block {b} summed twice");
            });
            let expected_sums: BTreeMap<u64, u64> = expected
                .iter()
                .map(|(&b, w)| (b, w.iter().map(|&c| c as u64).sum()))
                .collect();
            proptest::prop_assert_eq!(sums, expected_sums);
            t.prefetch(0);
            t.prefetch(9 * CHUNK_LINES);
            for (&b, w) in &expected {
                proptest::prop_assert_eq!(t.get(b), *w);
            }
            proptest::prop_assert_eq!(t.get(3 * CHUNK_BLOCKS + 7), [0; 16]);
            proptest::prop_assert_eq!(t.max_line(), flat.values().copied().max().unwrap_or(0));
            let total: u64 = listed.values().flatten().map(|&c| c as u64).sum();
            proptest::prop_assert_eq!(total, flat.values().map(|&c| c as u64).sum::<u64>());
        }
    }
}
