//! Whole-set operations of [`super::anon_lru`] without data-dependent branches: which
//! entries of a set have aged out, and the move that closes the gap a removed entry
//! leaves. A removal's move used to be a loop that stopped at the first aged-out entry; its
//! exit depends on the set's contents, so the host mispredicted it about once per removal
//! (callgrind's branch simulation: a third of the cache model's mispredictions). Here both
//! are a fixed number of SSE2 lane operations (four entries at a time, part of x86-64),
//! with plain loops elsewhere; the test below holds the two to the same answers.

/// Bit `j` set where entry `j` of a set whose fill count is `now` has aged out: its
/// position plus its age (`now - stamps[j]`, wrapping) is at least `ways`.
#[inline(always)]
pub(super) fn aged_out<const P: usize>(stamps: &[u32; P], now: u32, ways: u32) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of x86-64; `sse2::aged_out` reads entries 0..P in fours.
        unsafe { sse2::aged_out(stamps, now, ways) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        plain::aged_out(stamps, now, ways)
    }
}

/// Entries `p + 1 ..= i` of both arrays move one place towards the front (to `p .. i`);
/// the others, entry `i` included, keep their values (`p <= i < P`).
#[inline(always)]
pub(super) fn close_gap<const P: usize>(
    tags: &mut [u32; P],
    stamps: &mut [u32; P],
    p: usize,
    i: usize,
) {
    debug_assert!(p <= i && i < P);
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of x86-64; `sse2::close_gap` reads and writes entries 0..P
        // in fours.
        unsafe { sse2::close_gap(tags, stamps, p, i) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        plain::close_gap(tags, stamps, p, i)
    }
}

/// The same operations as plain loops: the fallback off x86-64 and the tests' reference.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
mod plain {
    pub(super) fn aged_out<const P: usize>(stamps: &[u32; P], now: u32, ways: u32) -> u64 {
        let mut m = 0u64;
        for (j, &s) in stamps.iter().enumerate() {
            let out = j as u64 + now.wrapping_sub(s) as u64 >= ways as u64;
            m |= (out as u64) << j;
        }
        m
    }

    pub(super) fn close_gap<const P: usize>(
        tags: &mut [u32; P],
        stamps: &mut [u32; P],
        p: usize,
        i: usize,
    ) {
        tags.copy_within(p + 1..=i, p);
        stamps.copy_within(p + 1..=i, p);
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_andnot_si128, _mm_castsi128_ps, _mm_cmpgt_epi32,
        _mm_cmplt_epi32, _mm_loadu_si128, _mm_movemask_ps, _mm_or_si128, _mm_set1_epi32,
        _mm_set_epi32, _mm_setzero_si128, _mm_slli_si128, _mm_srli_si128, _mm_storeu_si128,
        _mm_sub_epi32, _mm_xor_si128,
    };

    /// Entries `c .. c + 4` (`c + 4 <= P`).
    #[inline(always)]
    unsafe fn load<const P: usize>(a: &[u32; P], c: usize) -> __m128i {
        debug_assert!(c + 4 <= P);
        _mm_loadu_si128(a.as_ptr().add(c) as *const __m128i)
    }

    #[inline(always)]
    unsafe fn store<const P: usize>(a: &mut [u32; P], c: usize, v: __m128i) {
        debug_assert!(c + 4 <= P);
        _mm_storeu_si128(a.as_mut_ptr().add(c) as *mut __m128i, v)
    }

    /// The positions `c .. c + 4` of a chunk's lanes.
    #[inline(always)]
    unsafe fn positions(c: usize) -> __m128i {
        let c = c as i32;
        _mm_set_epi32(c + 3, c + 2, c + 1, c)
    }

    /// Lanes of `a` where `mask` is set, of `b` elsewhere.
    #[inline(always)]
    unsafe fn select(mask: __m128i, a: __m128i, b: __m128i) -> __m128i {
        _mm_or_si128(_mm_and_si128(mask, a), _mm_andnot_si128(mask, b))
    }

    #[inline(always)]
    pub(super) unsafe fn aged_out<const P: usize>(stamps: &[u32; P], now: u32, ways: u32) -> u64 {
        // Cached: age < ways - position, unsigned (the age is a wrapping u32; the room is
        // 0 at and beyond the ways): compared as signed after flipping the top bits.
        let flip = _mm_set1_epi32(i32::MIN);
        let now = _mm_set1_epi32(now as i32);
        let ways = _mm_set1_epi32(ways as i32);
        let mut m = 0u64;
        for c in (0..P).step_by(4) {
            let age = _mm_sub_epi32(now, load(stamps, c));
            let room = _mm_sub_epi32(ways, positions(c));
            let room = _mm_and_si128(room, _mm_cmpgt_epi32(room, _mm_setzero_si128()));
            let cached = _mm_cmplt_epi32(_mm_xor_si128(age, flip), _mm_xor_si128(room, flip));
            let cached = _mm_movemask_ps(_mm_castsi128_ps(cached)) as u64;
            m |= (!cached & 0xf) << c;
        }
        m
    }

    #[inline(always)]
    pub(super) unsafe fn close_gap<const P: usize>(
        tags: &mut [u32; P],
        stamps: &mut [u32; P],
        p: usize,
        i: usize,
    ) {
        let after = _mm_set1_epi32(p as i32 - 1);
        let before = _mm_set1_epi32(i as i32);
        // Upwards: a chunk takes its first lane from the next chunk, not yet written.
        for c in (0..P).step_by(4) {
            let at = positions(c);
            let moved = _mm_and_si128(_mm_cmpgt_epi32(at, after), _mm_cmplt_epi32(at, before));
            for a in [&mut *tags, &mut *stamps] {
                let cur = load(a, c);
                let next = if c + 4 < P {
                    load(a, c + 4)
                } else {
                    _mm_setzero_si128()
                };
                let shifted = _mm_or_si128(_mm_srli_si128::<4>(cur), _mm_slli_si128::<12>(next));
                store(a, c, select(moved, shifted, cur));
            }
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    fn sets<const P: usize>() -> impl proptest::strategy::Strategy<Value = ([u32; P], [u32; P])> {
        use proptest::prelude::*;
        // Stamps near a fill count of 1000 (ages 0..20, a few from the future, i.e. wrapped).
        (
            proptest::array::uniform::<_, P>(prop_oneof![0u32..6, Just(u32::MAX)]),
            proptest::array::uniform::<_, P>(980u32..1003),
        )
    }

    fn check<const P: usize>(
        (tags, stamps): ([u32; P], [u32; P]),
        ways: u32,
        p: usize,
        i: usize,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        for now in [1000u32, 990, 0, u32::MAX] {
            proptest::prop_assert_eq!(
                aged_out(&stamps, now, ways),
                plain::aged_out(&stamps, now, ways),
                "now {} ways {}",
                now,
                ways
            );
        }
        let (p, i) = (p.min(i) % P, p.max(i) % P);
        let (p, i) = (p.min(i), p.max(i));
        let (mut t1, mut s1, mut t2, mut s2) = (tags, stamps, tags, stamps);
        close_gap(&mut t1, &mut s1, p, i);
        plain::close_gap(&mut t2, &mut s2, p, i);
        proptest::prop_assert_eq!((t1, s1), (t2, s2), "p {} i {}", p, i);
        Ok(())
    }

    proptest::proptest! {
        /// The lane operations give exactly what the plain loops give, for sets of 8, 16 and
        /// 64 entries, every associativity up to the set size, every gap.
        #[test]
        fn lanes_equal_the_plain_loops(
            s8 in sets::<8>(), s16 in sets::<16>(), s64 in sets::<64>(),
            ways in 1u32..65, p in 0usize..64, i in 0usize..64,
        ) {
            check(s8, ways.min(8), p, i)?;
            check(s16, ways.min(16), p, i)?;
            check(s64, ways, p, i)?;
        }
    }
}
