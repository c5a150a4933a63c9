//! MEMTIS cooling of one huge page's sub-page counts: read the skewness inputs from the
//! counts, halve them, and count the halved counts per weighted bin. Cooling reads every
//! count of every sampled huge page (megabytes, every 2 M samples), so on x86-64 sixteen
//! counts go through at once; [`cool_scalar`] is the same pass one count at a time (other
//! targets, and the reference the tests hold the fast pass to).

/// Most distinct weighted bins a halved count (0 …= 127) falls in: bin 0, then the bit
/// lengths of `count × upp` over a 7-bit range of counts (at most 9 for any `upp`).
pub(super) const STEPS: usize = 10;

/// The halved counts where the weighted bin changes: `first[j]` is the lowest halved count
/// in bin `bin[j]`, ascending; `first[0]` is 0; steps past `len` are unused.
#[derive(Clone, Copy)]
pub(super) struct BinSteps {
    pub(super) first: [u8; STEPS],
    pub(super) bin: [u8; STEPS],
    pub(super) len: usize,
}

impl BinSteps {
    /// From the bin of each count (`bin_tab[c]`, non-decreasing in `c`).
    pub(super) fn new(bin_tab: &[u8; 256]) -> BinSteps {
        let mut s = BinSteps {
            first: [0; STEPS],
            bin: [0; STEPS],
            len: 0,
        };
        for x in 0..=127u8 {
            let b = bin_tab[x as usize];
            if s.len == 0 || s.bin[s.len - 1] != b {
                assert!(s.len < STEPS, "a 7-bit count spans at most {STEPS} bins");
                s.first[s.len] = x;
                s.bin[s.len] = b;
                s.len += 1;
            }
        }
        s
    }
}

/// What cooling reads from one huge page's counts `v` (before halving) and the halved
/// counts `x = v / 2`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cooled {
    /// Σ v².
    pub(super) sum_sq: u64,
    /// Counts at or above `hot_min`, and their sum.
    pub(super) hot: u64,
    pub(super) hot_refs: u64,
    /// Σ x.
    pub(super) halved_sum: u64,
    /// `at_least[j]`: halved counts at or above `steps.first[j]`; those in bin
    /// `steps.bin[j]` are `at_least[j] − at_least[j + 1]`.
    pub(super) at_least: [u64; STEPS],
}

impl Cooled {
    /// Halved counts in each bin: calls `f(bin, n)` for each step with `n > 0`.
    pub(super) fn per_bin(&self, steps: &BinSteps, mut f: impl FnMut(usize, u64)) {
        for j in 0..steps.len {
            let next = if j + 1 < steps.len {
                self.at_least[j + 1]
            } else {
                0
            };
            let n = self.at_least[j] - next;
            if n > 0 {
                f(steps.bin[j] as usize, n);
            }
        }
    }
}

/// Cool the counts in `sub` (one huge page's), halving each.
pub(super) fn cool(sub: &mut [u8], hot_min: usize, steps: &BinSteps) -> Cooled {
    #[cfg(target_arch = "x86_64")]
    {
        sse2::cool(sub, hot_min, steps)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        cool_scalar(sub, hot_min, steps)
    }
}

/// [`cool`], one count at a time.
pub(super) fn cool_scalar(sub: &mut [u8], hot_min: usize, steps: &BinSteps) -> Cooled {
    let mut r = Cooled::default();
    for c in sub.iter_mut() {
        let v = *c as u64;
        r.sum_sq += v * v;
        if v as usize >= hot_min {
            r.hot += 1;
            r.hot_refs += v;
        }
        let x = *c / 2;
        *c = x;
        r.halved_sum += x as u64;
        for j in 0..steps.len {
            r.at_least[j] += u64::from(x >= steps.first[j]);
        }
    }
    r
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::{BinSteps, Cooled, STEPS};
    use std::arch::x86_64::*;

    /// Vectors per block: the per-byte counters below grow by at most one per vector.
    const BLOCK: usize = 255;

    pub(super) fn cool(sub: &mut [u8], hot_min: usize, steps: &BinSteps) -> Cooled {
        let mut r = Cooled::default();
        let (body, tail) = sub.split_at_mut(sub.len() / 16 * 16);
        for block in body.chunks_mut(16 * BLOCK) {
            // SAFETY: SSE2 is part of x86-64; every load and store is of 16 bytes inside
            // `block` (its length is a multiple of 16).
            unsafe { cool_block(block, hot_min, steps, &mut r) };
        }
        let t = super::cool_scalar(tail, hot_min, steps);
        r.sum_sq += t.sum_sq;
        r.hot += t.hot;
        r.hot_refs += t.hot_refs;
        r.halved_sum += t.halved_sum;
        for j in 0..STEPS {
            r.at_least[j] += t.at_least[j];
        }
        r
    }

    /// Sum of the two 64-bit lanes of `v` (the sums `_mm_sad_epu8` leaves).
    #[inline(always)]
    unsafe fn sum_u64_lanes(v: __m128i) -> u64 {
        (_mm_cvtsi128_si64(v) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v))) as u64
    }

    /// Sum of the 16 bytes of `v`.
    #[inline(always)]
    unsafe fn byte_sum(v: __m128i) -> u64 {
        sum_u64_lanes(_mm_sad_epu8(v, _mm_setzero_si128()))
    }

    /// Sum of the four 32-bit lanes of `v`.
    #[inline(always)]
    unsafe fn sum_u32_lanes(v: __m128i) -> u64 {
        let mut a = [0u32; 4];
        _mm_storeu_si128(a.as_mut_ptr() as *mut __m128i, v);
        a.iter().map(|&x| x as u64).sum()
    }

    /// `block`: at most `BLOCK` vectors of 16 counts.
    #[inline(always)]
    unsafe fn cool_block(block: &mut [u8], hot_min: usize, steps: &BinSteps, r: &mut Cooled) {
        let zero = _mm_setzero_si128();
        let low7 = _mm_set1_epi8(0x7f);
        // A count is hot if max(v, hot_min) == v; with no hot count possible (hot_min 256),
        // the mask is cleared.
        let hot_on = _mm_set1_epi8(if hot_min <= 255 { -1 } else { 0 });
        let hm = _mm_set1_epi8(hot_min.min(255) as u8 as i8);
        let first: [__m128i; STEPS] = std::array::from_fn(|j| _mm_set1_epi8(steps.first[j] as i8));
        let mut hot_n = zero;
        let mut ge = [zero; STEPS];
        let mut sq = zero;
        let (mut refs, mut halved) = (zero, zero);
        let mut zero_vectors = 0u64;
        for chunk in block.chunks_exact_mut(16) {
            let p = chunk.as_mut_ptr() as *mut __m128i;
            let v = _mm_loadu_si128(p);
            if _mm_movemask_epi8(_mm_cmpeq_epi8(v, zero)) == 0xffff {
                zero_vectors += 1;
                continue;
            }
            let x = _mm_and_si128(_mm_srli_epi16(v, 1), low7);
            _mm_storeu_si128(p, x);
            let hot = _mm_and_si128(_mm_cmpeq_epi8(_mm_max_epu8(v, hm), v), hot_on);
            hot_n = _mm_sub_epi8(hot_n, hot);
            refs = _mm_add_epi64(refs, _mm_sad_epu8(_mm_and_si128(v, hot), zero));
            halved = _mm_add_epi64(halved, _mm_sad_epu8(x, zero));
            let (lo, hi) = (_mm_unpacklo_epi8(v, zero), _mm_unpackhi_epi8(v, zero));
            // Four squares of at most 255² per lane per vector: 255 vectors fit in 32 bits.
            sq = _mm_add_epi32(
                sq,
                _mm_add_epi32(_mm_madd_epi16(lo, lo), _mm_madd_epi16(hi, hi)),
            );
            // Step 0 (count 0 and up) is every count: counted from the length below.
            for j in 1..steps.len {
                let m = _mm_cmpeq_epi8(_mm_max_epu8(x, first[j]), x);
                ge[j] = _mm_sub_epi8(ge[j], m);
            }
        }
        // All-zero vectors: hot only if a count of 0 is, and in the halved count's bin 0.
        let hot_zeros = if hot_min == 0 { 16 * zero_vectors } else { 0 };
        r.hot += byte_sum(hot_n) + hot_zeros;
        r.hot_refs += sum_u64_lanes(refs);
        r.halved_sum += sum_u64_lanes(halved);
        r.sum_sq += sum_u32_lanes(sq);
        r.at_least[0] += block.len() as u64;
        for (a, g) in r.at_least.iter_mut().zip(ge).take(steps.len).skip(1) {
            *a += byte_sum(g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tier::memtis_bins::bin_of;
    use proptest::prelude::*;

    fn bin_tab(upp: u64) -> [u8; 256] {
        std::array::from_fn(|c| bin_of((c as u64 * upp).min(u32::MAX as u64) as u32) as u8)
    }

    #[test]
    fn steps_of_512_base_pages_are_the_bit_lengths() {
        let s = BinSteps::new(&bin_tab(512));
        assert_eq!(s.len, 7);
        assert_eq!(&s.first[..7], &[0, 1, 2, 4, 8, 16, 32]);
        assert_eq!(&s.bin[..7], &[0, 10, 11, 12, 13, 14, 15]);
    }

    #[test]
    fn hand_worked_counts() {
        let steps = BinSteps::new(&bin_tab(512));
        let mut sub = vec![0u8; 40];
        sub[3] = 9;
        sub[20] = 1;
        sub[39] = 255;
        let r = cool(&mut sub, 9, &steps);
        assert_eq!(r.sum_sq, 81 + 1 + 255 * 255);
        assert_eq!((r.hot, r.hot_refs), (2, 9 + 255));
        assert_eq!(r.halved_sum, 4 + 127);
        assert_eq!((sub[3], sub[20], sub[39]), (4, 0, 127));
        let mut bins = Vec::new();
        r.per_bin(&steps, |b, n| bins.push((b, n)));
        // 38 counts halve to 0, 4 is in bin 12, 127 in bin 15.
        assert_eq!(bins, vec![(0, 38), (12, 1), (15, 1)]);
    }

    proptest! {
        /// The sixteen-at-a-time pass gives what the one-at-a-time pass gives, counts and
        /// sums, whatever the counts, the hot threshold, the length and the page size.
        #[test]
        fn fast_pass_matches_the_scalar_one(
            counts in proptest::collection::vec(
                prop_oneof![Just(0u8), Just(1u8), Just(255u8), any::<u8>()], 0..5000),
            hot_min in 0usize..=256,
            upp in prop_oneof![Just(512u64), Just(8u64), 1u64..100_000],
        ) {
            let steps = BinSteps::new(&bin_tab(upp));
            let (mut a, mut b) = (counts.clone(), counts);
            let fast = cool(&mut a, hot_min, &steps);
            let slow = cool_scalar(&mut b, hot_min, &steps);
            prop_assert_eq!(fast, slow);
            prop_assert_eq!(a, b);
        }
    }
}
