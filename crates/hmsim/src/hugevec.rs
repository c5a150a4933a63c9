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
    advise_bytes(
        v.as_mut_ptr() as usize,
        v.capacity() * std::mem::size_of::<T>(),
    );
}

/// `advise` of the `bytes` bytes from address `start`: only the 2 MiB-aligned part, which
/// lies inside the caller's allocation whatever shares the pages around it.
fn advise_bytes(start: usize, bytes: usize) {
    if bytes < MIN_BYTES {
        return;
    }
    let lo = start.next_multiple_of(HUGE_BYTES);
    let hi = (start + bytes) / HUGE_BYTES * HUGE_BYTES;
    if hi > lo {
        madvise_huge(lo, hi - lo);
    }
}

/// Ask for huge pages over a whole mapping of our own (`start` page-aligned). Advising all
/// of it, not only its 2 MiB-aligned middle, keeps it one kernel mapping (VMA): advice on
/// a part splits the VMA, and `mremap` refuses a range that spans several (`EFAULT`). The
/// kernel still backs only the aligned middle with huge pages.
fn advise_mapping(start: usize, bytes: usize) {
    if bytes >= MIN_BYTES {
        madvise_huge(start, bytes);
    }
}

fn madvise_huge(start: usize, bytes: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: [start, start + bytes) lies inside the caller's own memory; MADV_HUGEPAGE
    // changes only how the kernel backs it, never its contents. A failure (THP off, an old
    // kernel) leaves ordinary pages, which is harmless.
    unsafe {
        libc::madvise(start as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, bytes);
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

/// Words on pages mapped for them alone, zero until written (huge pages where possible): a
/// page no one writes costs neither host memory nor time. `vec![0u64; n]` does not promise
/// that: once the allocator has recycled freed memory of that size (glibc does after the
/// first large free), it clears all `n` words whether or not they are used, and a copy
/// then writes them all again. The persistent indexes' regions are such arrays: a region
/// of 16 MiB holding 2 MiB of index was cleared and copied whole at every fork.
pub struct ZeroPages {
    ptr: std::ptr::NonNull<u64>,
    len: usize,
}

// SAFETY: `ZeroPages` owns its mapping alone, like a `Vec<u64>`.
unsafe impl Send for ZeroPages {}
// SAFETY: shared access only reads, like a `&[u64]`.
unsafe impl Sync for ZeroPages {}

impl ZeroPages {
    /// `len` zero words.
    pub fn zeroed(len: usize) -> ZeroPages {
        ZeroPages::with_prefix(&[], len)
    }

    /// `len` zero words, or None if the host cannot map that much memory.
    pub fn try_zeroed(len: usize) -> Option<ZeroPages> {
        ZeroPages::try_with_prefix(&[], len)
    }

    /// `len` words: a copy of `prefix`, then zeros. Only the pages the prefix covers are
    /// written. Out of memory ends the process, as for a `Vec`.
    pub fn with_prefix(prefix: &[u64], len: usize) -> ZeroPages {
        ZeroPages::try_with_prefix(prefix, len).unwrap_or_else(|| out_of_memory(len))
    }

    /// `with_prefix`, or None if the host cannot map `len` words.
    pub fn try_with_prefix(prefix: &[u64], len: usize) -> Option<ZeroPages> {
        assert!(prefix.len() <= len, "a prefix longer than the array");
        if len == 0 {
            return Some(ZeroPages {
                ptr: std::ptr::NonNull::dangling(),
                len: 0,
            });
        }
        let ptr = Self::map(len)?;
        advise_mapping(ptr.as_ptr() as usize, len * 8);
        // SAFETY: the new mapping holds `len >= prefix.len()` words and overlaps nothing.
        unsafe { std::ptr::copy_nonoverlapping(prefix.as_ptr(), ptr.as_ptr(), prefix.len()) };
        Some(ZeroPages { ptr, len })
    }

    /// Lengthen to `len` words (at least the present length), the new ones zero. On Linux
    /// the pages move to a larger mapping (`mremap`): no word is copied and no page the
    /// array has not written is touched. Elsewhere, or if the kernel refuses the move, a
    /// copy. False, and nothing changed, if the host cannot map `len` words.
    pub fn try_grow(&mut self, len: usize) -> bool {
        assert!(len >= self.len, "grow to a shorter length");
        if len == self.len {
            return true;
        }
        if Self::layout(len).is_none() {
            return false;
        }
        #[cfg(target_os = "linux")]
        if self.len > 0 {
            // SAFETY: our own mapping of `self.len` words, one VMA (see `advise_mapping`);
            // on success the old range is gone and the new one of `len` words holds the old
            // pages, then zero pages; on failure nothing changed.
            let p = unsafe {
                libc::mremap(
                    self.ptr.as_ptr() as *mut libc::c_void,
                    self.len * 8,
                    len * 8,
                    libc::MREMAP_MAYMOVE,
                )
            };
            if p != libc::MAP_FAILED {
                self.ptr =
                    std::ptr::NonNull::new(p as *mut u64).expect("mremap returned a mapping");
                self.len = len;
                advise_mapping(p as usize, len * 8);
                return true;
            }
        }
        match ZeroPages::try_with_prefix(self, len) {
            Some(grown) => {
                *self = grown;
                true
            }
            None => false,
        }
    }

    fn layout(len: usize) -> Option<std::alloc::Layout> {
        std::alloc::Layout::array::<u64>(len).ok()
    }

    /// Fresh zero memory for `len > 0` words, or None if the host has none to give.
    fn map(len: usize) -> Option<std::ptr::NonNull<u64>> {
        let layout = Self::layout(len)?;
        #[cfg(unix)]
        {
            // SAFETY: an anonymous private mapping: new pages, zero, owned by no one else.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    layout.size(),
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return None;
            }
            std::ptr::NonNull::new(p as *mut u64)
        }
        #[cfg(not(unix))]
        {
            // SAFETY: the layout is of `len > 0` words.
            std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) } as *mut u64)
        }
    }
}

/// What a `Vec` does when the allocator has no memory: report and end the process.
fn out_of_memory(len: usize) -> ! {
    match ZeroPages::layout(len) {
        Some(layout) => std::alloc::handle_alloc_error(layout),
        None => panic!("{len} words exceed the address space"),
    }
}

impl Drop for ZeroPages {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        #[cfg(unix)]
        // SAFETY: our own mapping of `len` words, unmapped once.
        unsafe {
            libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.len * 8);
        }
        #[cfg(not(unix))]
        // SAFETY: allocated by `map` with this layout.
        unsafe {
            std::alloc::dealloc(
                self.ptr.as_ptr() as *mut u8,
                Self::layout(self.len).expect("the layout it was allocated with"),
            );
        }
    }
}

impl std::ops::Deref for ZeroPages {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        // SAFETY: `len` initialised words (zero or copied), or an empty slice.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for ZeroPages {
    fn deref_mut(&mut self) -> &mut [u64] {
        // SAFETY: as in `deref`, and `&mut self` is the only access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
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
        let mut v: Vec<u8> = super::with_capacity(10 << 20);
        assert!(v.capacity() >= 10 << 20);
        v.extend(std::iter::repeat_n(7u8, 10 << 20));
        assert_eq!(v.iter().map(|&x| x as u64).sum::<u64>(), 7 * (10 << 20));
    }

    /// Zero pages read as zero, a prefix copy holds the prefix and zeros after it, writes
    /// stick, and copies are independent of their source.
    #[test]
    fn zero_pages_hold_their_prefix_then_zeros() {
        for len in [0usize, 1, 7, 4096, 3 << 20] {
            let mut z = super::ZeroPages::zeroed(len);
            assert_eq!(z.len(), len);
            assert!(z.iter().all(|&w| w == 0));
            for (i, w) in z.iter_mut().enumerate().step_by(509) {
                *w = i as u64 * 3 + 1;
            }
            for cut in [0, len / 3, len] {
                let c = super::ZeroPages::with_prefix(&z[..cut], len + 100);
                assert_eq!(c.len(), len + 100);
                assert_eq!(&c[..cut], &z[..cut]);
                assert!(c[cut..].iter().all(|&w| w == 0));
            }
            let mut c = super::ZeroPages::with_prefix(&z, len);
            if len > 0 {
                c[len - 1] = u64::MAX;
                assert_ne!(z[len - 1], u64::MAX);
            }
            drop(z);
            assert!(c.iter().step_by(509).skip(1).all(|&w| w % 3 == 1));
            // Growing keeps every word and adds zeros, past the size that takes huge pages.
            let before = c.to_vec();
            for extra in [0, 1, 5 << 20] {
                let n = c.len() + extra;
                assert!(c.try_grow(n));
                assert_eq!(c.len(), n);
                assert_eq!(&c[..before.len()], &before[..]);
                assert!(c[before.len()..].iter().all(|&w| w == 0));
                if n > before.len() {
                    // The new words are writable.
                    c[n - 1] = 9;
                    assert_eq!(c[n - 1], 9);
                    c[n - 1] = 0;
                }
            }
        }
    }

    /// A region that doubles again and again, as a persistent index's shard does (64 KiB to
    /// 64 MiB), keeps every word it wrote, from sizes that are and are not multiples of a
    /// huge page. Advice on only the aligned middle of a mapping split it into several
    /// kernel mappings, and the next move failed (`EFAULT`) at 4 → 8 MiB.
    #[test]
    fn zero_pages_keep_their_words_through_repeated_doubling() {
        for start_words in [8 << 10, (5 << 17) + 512] {
            let mut z = super::ZeroPages::zeroed(start_words);
            let mut written = 0;
            while z.len() < 8 << 20 {
                // One word per 4 KiB page of the new part, then every earlier one checked.
                for i in (written..z.len()).step_by(512) {
                    z[i] = i as u64 + 1;
                }
                written = z.len();
                let n = z.len() * 2;
                assert!(z.try_grow(n), "growing to {n} words");
                assert!(z.iter().enumerate().all(|(i, &w)| w
                    == if i < written && i % 512 == 0 {
                        i as u64 + 1
                    } else {
                        0
                    }));
            }
        }
    }

    /// A move the kernel refuses (here: a mapping split in two by advice on part of it, as
    /// the old advice did) falls back to a copy: the array still grows and keeps its words.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_refused_move_copies_instead() {
        let words = (5 << 17) + 512;
        let mut z = super::ZeroPages::zeroed(words);
        for i in (0..words).step_by(512) {
            z[i] = i as u64 + 1;
        }
        // Different advice on the first 1 MiB than on the rest: two kernel mappings.
        // SAFETY: the first MiB of our own mapping; advice changes no contents.
        unsafe {
            libc::madvise(
                z.as_mut_ptr() as *mut libc::c_void,
                1 << 20,
                libc::MADV_NOHUGEPAGE,
            );
        }
        assert!(z.try_grow(2 * words));
        assert!(z.iter().enumerate().all(|(i, &w)| {
            w == if i < words && i % 512 == 0 {
                i as u64 + 1
            } else {
                0
            }
        }));
    }

    /// Memory the host cannot map is refused, not fatal: the array is not made, or not
    /// grown and left as it was.
    #[test]
    fn zero_pages_beyond_the_host_are_refused() {
        // 2^48 bytes: beyond a process's address space without 5-level paging's opt-in.
        let huge = 1usize << 45;
        assert!(super::ZeroPages::try_zeroed(huge).is_none());
        assert!(super::ZeroPages::try_zeroed(usize::MAX / 4).is_none());
        let mut z = super::ZeroPages::with_prefix(&[5, 6, 7], 4096);
        assert!(!z.try_grow(huge));
        assert_eq!((z.len(), &z[..4]), (4096, &[5, 6, 7, 0][..]));
    }

    /// Where the kernel takes advice (`madvise` or `always`), the middle of a large zero-page
    /// array lies in a mapping eligible for huge pages (`THPeligible: 1` in smaps): the
    /// advice reached it. Without the advice, under `madvise`, it would be 0.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_zero_pages_are_eligible_for_huge_pages() {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if !mode.contains("[madvise]") && !mode.contains("[always]") {
            eprintln!(
                "skipped: transparent huge pages are off here ({})",
                mode.trim()
            );
            return;
        }
        let v = super::ZeroPages::zeroed(4 * super::HUGE_BYTES / 8);
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
