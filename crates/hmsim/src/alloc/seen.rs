//! The lines a request has touched so far: a set that is emptied once per request, so it
//! is an open-addressing table whose slots carry the request's generation (emptying it is
//! one increment, not a clear) and that grows when a request touches many lines (an
//! order-10 block's struct pages, a batch refill).

/// A set of line numbers, emptied by [`SeenLines::clear`] in O(1).
pub struct SeenLines {
    /// (line, generation) per slot; a slot of an older generation is free.
    slots: Vec<(u64, u32)>,
    generation: u32,
    len: usize,
}

impl Default for SeenLines {
    fn default() -> Self {
        SeenLines {
            slots: vec![(0, 0); 64],
            generation: 1,
            len: 0,
        }
    }
}

impl SeenLines {
    /// Forget every line.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Generation 0 marks never-used slots: start over after a wrap.
            self.slots.fill((0, 0));
            self.generation = 1;
        }
    }

    #[inline]
    fn home(&self, line: u64) -> usize {
        let h = line.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 32) as usize & (self.slots.len() - 1)
    }

    /// Add `line`; false if it was there already.
    #[inline]
    pub fn insert(&mut self, line: u64) -> bool {
        let mask = self.slots.len() - 1;
        let mut i = self.home(line);
        loop {
            let (l, g) = self.slots[i];
            if g != self.generation {
                self.slots[i] = (line, self.generation);
                self.len += 1;
                if self.len * 2 > self.slots.len() {
                    self.grow();
                }
                return true;
            }
            if l == line {
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
        let mask = self.slots.len() - 1;
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
        ) {
            let (mut s, mut h) = (SeenLines::default(), HashSet::new());
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
    fn generation_wrap_forgets_everything() {
        let mut s = SeenLines::default();
        s.insert(7);
        s.generation = u32::MAX;
        s.insert(9);
        s.clear();
        assert!(s.insert(9) && s.insert(7));
    }
}
