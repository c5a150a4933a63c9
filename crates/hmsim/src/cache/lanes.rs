//! Whole-set operations of [`super::anon_lru`] without data-dependent branches: which
//! entries of a set hold a tag, which have aged out, and the move that closes the gap a
//! removed entry leaves. A removal's move used to be a loop that stopped at the first
//! aged-out entry; its exit depends on the set's contents, so the host mispredicted it
//! about once per removal (callgrind's branch simulation: a third of the cache model's
//! mispredictions). Here all three are a fixed number of SSE2 lane operations (four entries
//! at a time, part of x86-64), with plain loops elsewhere; the test below holds the two to
//! the same answers. Sets are 8 entries or a multiple of 16: in the larger ones, the lanes'
//! answers of a search or an age test are narrowed 16 at a time into one byte mask
//! (saturating packs), fewer host instructions than a mask per four entries shifted into
//! place.

/// A level's room at each position of a set, `max(ways - j, 0)`, kept with its top bit
/// flipped for SSE2's signed compare: worked out once per level, so an age test is a
/// subtraction and a compare per four entries.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(super) struct Room<const P: usize> {
    flipped: [u32; P],
    /// The ways (the lanes use `flipped`; the plain loops, off x86-64, use this).
    ways: u32,
}

impl<const P: usize> Room<P> {
    pub(super) fn new(ways: u32) -> Self {
        let mut flipped = [0; P];
        for (j, r) in flipped.iter_mut().enumerate() {
            *r = ways.saturating_sub(j as u32) ^ (1 << 31);
        }
        Room { flipped, ways }
    }
}

/// Bit `j` set where entry `j` of `tags` is `tag`.
#[inline(always)]
pub(super) fn matches<const P: usize>(tags: &[u32; P], tag: u32) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of x86-64; `sse2::matches` reads entries 0..P in fours.
        unsafe { sse2::matches(tags, tag) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        plain::matches(tags, tag)
    }
}

/// Bit `j` set where entry `j` of a set whose fill count is `now` has aged out: its
/// position plus its age (`now - stamps[j]`, wrapping) is at least the level's ways.
#[inline(always)]
pub(super) fn aged_out<const P: usize>(stamps: &[u32; P], now: u32, room: &Room<P>) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of x86-64; `sse2::aged_out` reads entries 0..P in fours.
        unsafe { sse2::aged_out(stamps, now, room) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        plain::aged_out(stamps, now, room.ways)
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
    pub(super) fn matches<const P: usize>(tags: &[u32; P], tag: u32) -> u64 {
        let mut m = 0u64;
        for (j, &t) in tags.iter().enumerate() {
            m |= ((t == tag) as u64) << j;
        }
        m
    }

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
        __m128i, _mm_and_si128, _mm_andnot_si128, _mm_castsi128_ps, _mm_cmpeq_epi32,
        _mm_cmpgt_epi32, _mm_cmplt_epi32, _mm_loadu_si128, _mm_movemask_epi8, _mm_movemask_ps,
        _mm_or_si128, _mm_packs_epi16, _mm_packs_epi32, _mm_set1_epi32, _mm_set_epi32,
        _mm_srli_si128, _mm_storeu_si128, _mm_sub_epi32, _mm_xor_si128,
    };

    /// Entries `c .. c + 4` (`c + 4 <= P`).
    #[inline(always)]
    unsafe fn load<const P: usize>(a: &[u32; P], c: usize) -> __m128i {
        // Chunks of four cover a set exactly: the callers' loads and stores stay inside.
        const { assert!(P.is_multiple_of(4), "sets of a multiple of 4 entries") };
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

    /// Bits 0..P from `P` lanes that are all ones or zero, given four at a time by
    /// `lanes(c)` for entries `c .. c + 4`. Sets of 16 or more: sixteen lanes narrowed to
    /// bytes by saturating packs, then one byte mask. Sets of 8: a mask per four lanes
    /// (two packs and a zero register cost more than the one shift and or they save).
    #[inline(always)]
    unsafe fn bits<const P: usize>(lanes: impl Fn(usize) -> __m128i) -> u64 {
        const {
            assert!(
                P == 8 || P.is_multiple_of(16),
                "sets of 8 entries or a multiple of 16"
            )
        };
        let mask4 = |c: usize| _mm_movemask_ps(_mm_castsi128_ps(lanes(c))) as u32 as u64;
        if P == 8 {
            return mask4(0) | mask4(4) << 4;
        }
        let mut m = 0u64;
        for c in (0..P).step_by(16) {
            let lo = _mm_packs_epi32(lanes(c), lanes(c + 4));
            let hi = _mm_packs_epi32(lanes(c + 8), lanes(c + 12));
            m |= u64::from(_mm_movemask_epi8(_mm_packs_epi16(lo, hi)) as u32) << c;
        }
        m
    }

    #[inline(always)]
    pub(super) unsafe fn matches<const P: usize>(tags: &[u32; P], tag: u32) -> u64 {
        let t = _mm_set1_epi32(tag as i32);
        bits::<P>(|c| _mm_cmpeq_epi32(load(tags, c), t))
    }

    #[inline(always)]
    pub(super) unsafe fn aged_out<const P: usize>(
        stamps: &[u32; P],
        now: u32,
        room: &super::Room<P>,
    ) -> u64 {
        // Cached: age < room, unsigned (the age is a wrapping u32): compared as signed
        // with both top bits flipped (the room's were flipped when it was made).
        let flip = _mm_set1_epi32(i32::MIN);
        let now = _mm_set1_epi32(now as i32);
        let cached = bits::<P>(|c| {
            let age = _mm_xor_si128(_mm_sub_epi32(now, load(stamps, c)), flip);
            _mm_cmplt_epi32(age, load(&room.flipped, c))
        });
        !cached & (u64::MAX >> (64 - P))
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
        // Upwards: a chunk's entries one place on (an unaligned load, the next chunk not
        // yet written; the last chunk shifted within itself, its top lane never moved).
        for c in (0..P).step_by(4) {
            let at = positions(c);
            let moved = _mm_and_si128(_mm_cmpgt_epi32(at, after), _mm_cmplt_epi32(at, before));
            for a in [&mut *tags, &mut *stamps] {
                let cur = load(a, c);
                let shifted = if c + 4 < P {
                    // Entries c + 1 .. c + 5, within the array.
                    _mm_loadu_si128(a.as_ptr().add(c + 1) as *const __m128i)
                } else {
                    _mm_srli_si128::<4>(cur)
                };
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
        let room = Room::<P>::new(ways);
        for now in [1000u32, 990, 0, u32::MAX] {
            proptest::prop_assert_eq!(
                aged_out(&stamps, now, &room),
                plain::aged_out(&stamps, now, ways),
                "now {} ways {}",
                now,
                ways
            );
        }
        for tag in [0u32, 3, 5, u32::MAX] {
            proptest::prop_assert_eq!(
                matches(&tags, tag),
                plain::matches(&tags, tag),
                "tag {}",
                tag
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
