//! The real persistence instructions on x86-64 (`clwb`, `clflushopt`, `clflush`, `sfence`),
//! chosen at run time: a region asks for them only when it lives on real PMem/DAX or when its
//! throughput is measured, and a CPU without the instruction is a clear error, not a SIGILL.

use crate::cache::FlushKind;

/// Whether this CPU can execute `kind`; `Err` names what is missing.
pub(crate) fn check_supported(kind: FlushKind) -> Result<(), String> {
    #[cfg(target_arch = "x86_64")]
    {
        // `is_x86_feature_detected!` does not know clwb/clflushopt on stable Rust, so ask
        // CPUID directly: leaf 7 EBX bit 23 = CLFLUSHOPT, bit 24 = CLWB; leaf 1 EDX bit 19
        // = CLFSH.
        use std::arch::x86_64::__cpuid_count;
        // CPUID exists on every x86-64 CPU; leaf 7 is asked only if the max leaf has it.
        let l0 = __cpuid_count(0, 0);
        let leaf1_edx = __cpuid_count(1, 0).edx;
        let leaf7_ebx = if l0.eax >= 7 {
            __cpuid_count(7, 0).ebx
        } else {
            0
        };
        let (ok, feature) = match kind {
            FlushKind::Clwb => (leaf7_ebx & (1 << 24) != 0, "clwb"),
            FlushKind::Clflushopt => (leaf7_ebx & (1 << 23) != 0, "clflushopt"),
            FlushKind::Clflush => (leaf1_edx & (1 << 19) != 0, "clflush"),
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "this CPU does not support {feature}; pick another pm.flush \
                 (clflush works on every x86-64 CPU) or turn pm.hardware_flush off"
            ))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = kind;
        Err(
            "real flush instructions are only implemented on x86-64; turn pm.hardware_flush off"
                .into(),
        )
    }
}

/// Flush the cache line holding `p` with `kind`. Callers have checked [`check_supported`].
///
/// # Safety
/// `p` must point into memory the caller owns, and `kind` must be supported by this CPU.
#[inline]
pub(crate) unsafe fn flush_line(p: *const u8, kind: FlushKind) {
    #[cfg(target_arch = "x86_64")]
    {
        match kind {
            FlushKind::Clwb => clwb(p),
            FlushKind::Clflushopt => clflushopt(p),
            FlushKind::Clflush => std::arch::x86_64::_mm_clflush(p),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (p, kind);
    }
}

#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn clwb(p: *const u8) {
    // `_mm_clwb` is not stable in core::arch yet; the instruction itself is.
    std::arch::asm!("clwb [{0}]", in(reg) p, options(nostack, preserves_flags));
}

#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn clflushopt(p: *const u8) {
    std::arch::asm!("clflushopt [{0}]", in(reg) p, options(nostack, preserves_flags));
}

/// `sfence`: orders the preceding flushes and non-temporal stores.
#[inline]
pub(crate) fn sfence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence is part of SSE, which every x86-64 CPU has.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// A real non-temporal 8 B store (`movnti`).
///
/// # Safety
/// `p` must be 8 B aligned and point into memory the caller owns.
#[inline]
pub(crate) unsafe fn ntstore_u64(p: *mut u8, v: u64) {
    #[cfg(target_arch = "x86_64")]
    std::arch::x86_64::_mm_stream_si64(p as *mut i64, v as i64);
    #[cfg(not(target_arch = "x86_64"))]
    std::ptr::write_volatile(p as *mut u64, v);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clflush_exists_on_x86_64_and_flushing_keeps_the_data() {
        if check_supported(FlushKind::Clflush).is_err() {
            eprintln!("skipped: not x86-64");
            return;
        }
        let mut buf = vec![7u64; 16];
        for kind in [FlushKind::Clflush, FlushKind::Clflushopt, FlushKind::Clwb] {
            if check_supported(kind).is_ok() {
                // SAFETY: buf is ours and the instruction was detected.
                unsafe {
                    flush_line(buf.as_ptr() as *const u8, kind);
                    ntstore_u64(buf.as_mut_ptr().add(1) as *mut u8, 9);
                }
                sfence();
            }
        }
        assert_eq!(buf[0], 7);
        assert_eq!(buf[1], 9);
    }
}
