//! A set of a region's line numbers as one bit per line: the lines stored since their last
//! flush, which flush coalescing looks up on every store and every flush. A region's lines
//! are dense from 0, so a bit array (grown to the highest line set) answers in a shift and a
//! mask where a hash set hashed, probed and rehashed (≈ 15 % of a coalescing run's host time).

#[derive(Clone, Default)]
pub(super) struct LineBits {
    words: Vec<u64>,
}

impl LineBits {
    /// Add `line`.
    #[inline]
    pub(super) fn insert(&mut self, line: u64) {
        let w = (line / 64) as usize;
        if w >= self.words.len() {
            self.grow(w);
        }
        self.words[w] |= 1 << (line % 64);
    }

    /// Remove `line`; whether it was there.
    #[inline]
    pub(super) fn remove(&mut self, line: u64) -> bool {
        let Some(word) = self.words.get_mut((line / 64) as usize) else {
            return false;
        };
        let bit = 1 << (line % 64);
        let was = *word & bit != 0;
        *word &= !bit;
        was
    }

    /// Room for word `w` (twice the words, at least: few reallocations as a region grows).
    #[cold]
    fn grow(&mut self, w: usize) {
        let len = (w + 1).max(2 * self.words.len());
        self.words.resize(len, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    proptest::proptest! {
        /// Every answer equals a set's on random inserts and removals over a wide range.
        #[test]
        fn equals_a_set(ops in proptest::collection::vec((proptest::bool::ANY, 0u64..5000), 1..400)) {
            let mut bits = LineBits::default();
            let mut set = BTreeSet::new();
            for (insert, line) in ops {
                if insert {
                    bits.insert(line);
                    set.insert(line);
                } else {
                    proptest::prop_assert_eq!(bits.remove(line), set.remove(&line), "line {}", line);
                }
            }
            for line in 0..5000 {
                proptest::prop_assert_eq!(bits.remove(line), set.contains(&line), "line {}", line);
            }
        }
    }
}
