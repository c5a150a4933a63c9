//! Hints to the host's memory system, for models whose tables are larger than the host's
//! caches: they change nothing any model computes.

/// Ask the host to fetch the cache line holding `p` into its caches: a table entry that a
/// lookup will read soon, its address known early, so its host-memory latency overlaps
/// other work. A hint: it never faults and reads nothing the program sees, so any address
/// will do (one past a table's end, say).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint (SSE, part of x86-64): it never faults and reads
        // nothing architecturally, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
