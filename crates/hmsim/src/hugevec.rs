//! Large arrays read at random, backed by transparent huge pages where the kernel allows it.
//!
//! The tiering models index arrays of tens of megabytes at random (per-4-KiB sample counts,
//! per-page mark times, the page table); the persistent indexes live in regions of hundreds
//! of megabytes and follow pointers across them; the cache model's LLC is megabytes of tags.
//! With 4 KiB pages almost every such access also misses the TLB, and a page walk under a
//! hypervisor costs as much as the cache miss itself. Asking for 2 MiB pages
//! (`madvise(MADV_HUGEPAGE)`, which works when `/sys/kernel/mm/transparent_hugepage/enabled`
//! is `always` or `madvise`) removes most of those walks. Only speed changes: the contents
//! are the same whichever pages back them.

/// Bytes of a huge page on the platforms that have them.
const HUGE_BYTES: usize = 2 << 20;

/// Arrays smaller than this keep ordinary pages (the advice could not cover a whole huge
/// page of them, or would not pay). Two huge pages: a Cascade Lake LLC's tags (4.7 MB) are
/// above it.
const MIN_BYTES: usize = 2 * HUGE_BYTES;

/// Ask for huge pages over the 2 MiB-aligned part of `v`'s allocation (its capacity). Call
/// it before the memory is first written: pages already touched stay as they are.
pub fn advise<T>(v: &mut Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < MIN_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = v.as_mut_ptr() as usize;
        let lo = start.next_multiple_of(HUGE_BYTES);
        let hi = (start + bytes) / HUGE_BYTES * HUGE_BYTES;
        if hi > lo {
            // SAFETY: [lo, hi) lies inside the vector's own allocation; MADV_HUGEPAGE changes
            // only how the kernel backs it, never its contents. A failure (THP off, an old
            // kernel) leaves ordinary pages, which is harmless.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// A vector with room for `capacity` elements, advised to huge pages before first use.
pub fn with_capacity<T>(capacity: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(capacity);
    advise(&mut v);
    v
}

/// `vec![value; len]` on huge pages where possible.
pub fn filled<T: Clone>(len: usize, value: T) -> Vec<T> {
    let mut v = with_capacity(len);
    v.resize(len, value);
    v
}

/// `vec![0u64; len]` on huge pages where possible. A large zeroed allocation is usually
/// fresh memory the allocator has just mapped and no one has written, so the advice reaches
/// it before its first touch (where it is not, only the speed differs).
pub fn zeroed_words(len: usize) -> Vec<u64> {
    let mut v = vec![0u64; len];
    advise(&mut v);
    v
}

/// A copy of `words` on huge pages where possible.
pub fn copy_of_words(words: &[u64]) -> Vec<u64> {
    let mut v = zeroed_words(words.len());
    v.copy_from_slice(words);
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn filled_vectors_hold_their_values() {
        for len in [0, 1, 1000, 3 << 20] {
            let v = super::filled(len, -1.0f32);
            assert_eq!(v.len(), len);
            assert!(v.iter().all(|&x| x == -1.0));
        }
        let w: Vec<u64> = (0..(1u64 << 20)).map(|i| i * 7).collect();
        assert_eq!(super::copy_of_words(&w), w);
        assert!(super::zeroed_words(1 << 20).iter().all(|&x| x == 0));
        let mut v: Vec<u8> = super::with_capacity(10 << 20);
        assert!(v.capacity() >= 10 << 20);
        v.extend(std::iter::repeat_n(7u8, 10 << 20));
        assert_eq!(v.iter().map(|&x| x as u64).sum::<u64>(), 7 * (10 << 20));
    }

    /// Where the kernel takes advice (`madvise` or `always`), the middle of a large zeroed
    /// vector lies in a mapping eligible for huge pages (`THPeligible: 1` in smaps): the
    /// advice reached it. Without the advice, under `madvise`, it would be 0.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_zeroed_words_are_eligible_for_huge_pages() {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if !mode.contains("[madvise]") && !mode.contains("[always]") {
            eprintln!(
                "skipped: transparent huge pages are off here ({})",
                mode.trim()
            );
            return;
        }
        let v = super::zeroed_words(4 * super::HUGE_BYTES / 8);
        let at = v.as_ptr() as usize + 2 * super::HUGE_BYTES;
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        // A mapping's header line starts `lo-hi ` in hex; its fields follow it.
        let range = |line: &str| {
            let (lo, hi) = line.split_once(' ')?.0.split_once('-')?;
            Some(usize::from_str_radix(lo, 16).ok()?..usize::from_str_radix(hi, 16).ok()?)
        };
        let mut inside = false;
        let mut eligible = None;
        for line in smaps.lines() {
            if let Some(r) = range(line) {
                inside = r.contains(&at);
            } else if let Some(e) = line.strip_prefix("THPeligible:").filter(|_| inside) {
                eligible = Some(e.trim().to_string());
            }
        }
        assert_eq!(
            eligible.as_deref(),
            Some("1"),
            "THPeligible of the vector's mapping"
        );
        drop(v);
    }
}
