//! MEMTIS's access-count histogram bins, shared by the policy and its huge-page splitting.

pub(super) const BINS: usize = 16;

/// Bin of a count: 0 for none, else ⌊log2 count⌋ + 1, capped at 15.
pub fn bin_of(count: u32) -> usize {
    if count == 0 {
        0
    } else {
        ((32 - count.leading_zeros()) as usize).min(BINS - 1)
    }
}
