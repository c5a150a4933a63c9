//! CPU cost of a policy's work. The papers give no per-operation costs; these are order-of-
//! magnitude estimates (documented in docs/tiering.md as assumptions), applied the same way
//! to every policy so that policies compare by the work they do.

use super::policy::PolicyWork;

/// ns of CPU per PEBS sample read and counted (buffer drain, page lookup, count update).
pub const SAMPLE_NS: f64 = 200.0;
/// ns per page-table entry visited by a scan (NUMA-balancing PTE scan, LRU aging check).
pub const PAGE_SCAN_NS: f64 = 20.0;
/// ns per NUMA hint fault taken (trap, fault handling, PTE restore).
pub const HINT_FAULT_NS: f64 = 1_000.0;
/// Fixed ns per migrated page (unmap, TLB shootdown, remap) ...
pub const MIGRATE_FIXED_NS: f64 = 2_000.0;
/// ... plus the copy at this rate (GB/s) by the migrating thread.
pub const MIGRATE_COPY_GB_S: f64 = 10.0;

/// CPU seconds spent by a policy over a run of `duration_s` with `migrated_pages` pages of
/// `page_bytes` moved; dedicated cores (e.g. Colloid's latency monitor on TPP) count fully.
pub fn cpu_seconds(w: &PolicyWork, migrated_pages: u64, page_bytes: u64, duration_s: f64) -> f64 {
    let ns = w.samples_processed as f64 * SAMPLE_NS
        + w.pages_scanned as f64 * PAGE_SCAN_NS
        + w.hint_faults as f64 * HINT_FAULT_NS
        + migrated_pages as f64 * (MIGRATE_FIXED_NS + page_bytes as f64 / MIGRATE_COPY_GB_S);
    ns * 1e-9 + w.dedicated_cores as f64 * duration_s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_add_up() {
        let w = PolicyWork {
            samples_processed: 1_000_000,
            pages_scanned: 0,
            hint_faults: 1000,
            dedicated_cores: 1,
        };
        // 0.2 s of samples + 1 ms of faults + 1 core × 10 s + 10 × (2 µs + 409.6 ns).
        let c = cpu_seconds(&w, 10, 4096, 10.0);
        assert!((c - (0.2 + 0.001 + 10.0 + 10.0 * 2.4096e-6)).abs() < 1e-12);
    }
}
