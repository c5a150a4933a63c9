//! MEMTIS's access-count histogram bins, shared by the policy and its huge-page splitting.

pub(super) const BINS: usize = 16;

/// `weight` moves from histogram bin `old` to `new`. Most samples leave their page in its
/// bin (a bin spans a doubling of the count): skipping the no-op pair spares a chain of
/// store-to-load forwards through the histogram from one sample to the next.
#[inline(always)]
pub(super) fn move_weight(hist: &mut [u64; BINS], old: usize, new: usize, weight: u64) {
    if new != old {
        hist[old] -= weight;
        hist[new] += weight;
    }
}

/// Bin of a count: 0 for none, else ⌊log2 count⌋ + 1, capped at 15.
pub fn bin_of(count: u32) -> usize {
    if count == 0 {
        0
    } else {
        ((32 - count.leading_zeros()) as usize).min(BINS - 1)
    }
}
