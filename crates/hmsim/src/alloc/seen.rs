//! The lines a request has touched so far: a set that is emptied once per request, so it
//! is an open-addressing table whose slots carry the request's generation (emptying it is
//! one increment, not a clear) and that grows when a request touches many lines (an
//! order-10 block's struct pages, a batch refill). The `struct page` lines, most of what a
//! path touches, skip the table: their generations sit in an array indexed by the line.

use std::ops::Range;

/// A set of line numbers, emptied by [`SeenLines::clear`] in O(1).
pub(super) struct SeenLines {
    /// Lines from `dense_first` on (the `struct page` array, most of a path's lines): the
    /// generation each was last inserted in, indexed by the line: a load and a compare
    /// instead of a hash probe. Other lines go to `slots`. The low 16 bits of the
    /// generation: half the footprint of a full one in the host's caches (the array spans
    /// every frame's `struct page`, and a path's lines land anywhere in it); cleared when
    /// they wrap.
    dense: Vec<u16>,
    dense_first: u64,
    /// (line, generation) per slot; a slot of an older generation is free.
    slots: Vec<(u64, u32)>,
    /// `slots.len() - 1` (a power of two minus one): every probe index is masked by it,
    /// so the slots are read without a bounds check.
    mask: usize,
    generation: u32,
    /// Inserts left before the table is half full and doubles.
    room: usize,
}

/// Slots of a new table.
const SLOTS: usize = 64;

impl Default for SeenLines {
    fn default() -> Self {
        SeenLines {
            dense: Vec::new(),
            dense_first: 0,
            slots: vec![(0, 0); SLOTS],
            mask: SLOTS - 1,
            generation: 1,
            room: SLOTS / 2,
        }
    }
}

/// Most lines a set indexes directly (2 MiB of generations, the `struct page`s of about
/// 4.7 GiB of frames); lines beyond it are hashed.
const DENSE_MAX: u64 = 1 << 20;

impl SeenLines {
    /// A set that indexes the lines of `dense` directly (up to `DENSE_MAX` of them).
    pub(super) fn with_dense(dense: Range<u64>) -> SeenLines {
        let lines = dense.end.saturating_sub(dense.start).min(DENSE_MAX);
        SeenLines {
            dense: vec![0; lines as usize],
            dense_first: dense.start,
            ..SeenLines::default()
        }
    }

    /// Forget every line.
    #[inline]
    pub(super) fn clear(&mut self) {
        self.room = self.slots.len() / 2;
        self.generation = self.generation.wrapping_add(1);
        if self.generation as u16 == 0 {
            self.wrap();
        }
    }

    /// Generation 0 marks never-used entries: when the dense entries' 16 bits wrap, they
    /// start over (every 65,536 requests); when the slots' 32 bits wrap, they do too.
    #[cold]
    fn wrap(&mut self) {
        self.dense.fill(0);
        if self.generation == 0 {
            self.slots.fill((0, 0));
        }
        self.generation += 1;
    }

    #[inline]
    fn home(&self, line: u64) -> usize {
        let h = line.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 32) as usize & self.mask
    }

    /// Add `line`; false if it was there already.
    #[inline]
    pub(super) fn insert(&mut self, line: u64) -> bool {
        let g = self.generation;
        if let Some(d) = self
            .dense
            .get_mut(line.wrapping_sub(self.dense_first) as usize)
        {
            return std::mem::replace(d, g as u16) != g as u16;
        }
        let mask = self.mask;
        let mut i = self.home(line);
        loop {
            debug_assert!(i < self.slots.len());
            // SAFETY: `i` is masked by `mask`, which is `slots.len() - 1` (see `mask`).
            let slot = unsafe { self.slots.get_unchecked_mut(i) };
            if slot.1 != g {
                *slot = (line, g);
                self.room -= 1;
                if self.room == 0 {
                    self.grow();
                }
                return true;
            }
            if slot.0 == line {
                return false;
            }
            i = (i + 1) & mask;
        }
    }

    /// Double the table (at most half full keeps probe runs short).
    #[cold]
    fn grow(&mut self) {
        let g = self.generation;
        let doubled = vec![(0, 0); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        self.mask = self.slots.len() - 1;
        // Half the old table's slots are in use: the doubled table has as many left.
        self.room = old.len() / 2;
        let mask = self.mask;
        for (l, _) in old.into_iter().filter(|&(_, og)| og == g) {
            let mut i = self.home(l);
            while self.slots[i].1 == g {
                i = (i + 1) & mask;
            }
            self.slots[i] = (l, g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    proptest::proptest! {
        /// Agrees with a `HashSet` cleared at the same points, through growth and many
        /// generations.
        #[test]
        fn matches_a_hash_set(
            ops in proptest::collection::vec((0u8..20, 0u64..300), 1..3000),
            dense in proptest::bool::ANY,
        ) {
            // Lines 100..200 indexed directly, the others hashed (or all hashed).
            let mut s = if dense {
                SeenLines::with_dense(100..200)
            } else {
                SeenLines::default()
            };
            let mut h = HashSet::new();
            for (op, line) in ops {
                if op == 0 {
                    s.clear();
                    h.clear();
                } else {
                    proptest::prop_assert_eq!(s.insert(line), h.insert(line));
                }
            }
        }
    }

    #[test]
    fn dense_generations_start_over_when_their_16_bits_wrap() {
        let mut s = SeenLines::with_dense(5..8);
        s.insert(7);
        // 65,535 requests later the low 16 bits come round to this generation's again.
        s.generation = 0xffff;
        s.clear();
        assert_eq!(s.generation as u16, 1);
        assert!(s.insert(7), "a line of 65,536 requests ago is not seen");
        assert!(!s.insert(7));
    }

    #[test]
    fn generation_wrap_forgets_everything() {
        let mut s = SeenLines::with_dense(5..8);
        s.insert(7);
        s.generation = u32::MAX;
        s.insert(9);
        s.clear();
        assert!(s.insert(9) && s.insert(7));
    }
}
