//! CPU cost of a policy's work. The per-migration CPU comes from the copy engine that moved
//! the pages (copy.rs: a kernel copy thread is busy for its software cost and its copies at the
//! rate they achieved; a DMA engine costs only the per-page host work). The other papers give no
//! per-operation costs; those are order-of-magnitude estimates (documented in docs/tiering.md
//! as assumptions), applied the same way to every policy so that policies compare by the work
//! they do.

use super::policy::PolicyWork;

/// ns of CPU per PEBS sample read and counted (buffer drain, page lookup, count update).
pub(super) const SAMPLE_NS: f64 = 200.0;
/// ns per page-table entry visited by a scan (NUMA-balancing PTE scan, LRU aging check).
pub(super) const PAGE_SCAN_NS: f64 = 20.0;
/// ns per NUMA hint fault taken (trap, fault handling, PTE restore).
pub(super) const HINT_FAULT_NS: f64 = 1_000.0;

/// CPU seconds spent by a policy over a run of `duration_s` whose copy engine spent
/// `copy_cpu_ns` of CPU on migrations (`SimResult::copy_cpu_ns`); dedicated cores (e.g.
/// Colloid's latency monitor on TPP) count fully.
pub(super) fn cpu_seconds(w: &PolicyWork, copy_cpu_ns: f64, duration_s: f64) -> f64 {
    let ns = w.samples_processed as f64 * SAMPLE_NS
        + w.pages_scanned as f64 * PAGE_SCAN_NS
        + w.hint_faults as f64 * HINT_FAULT_NS
        + copy_cpu_ns;
    ns * 1e-9 + w.dedicated_cores as f64 * duration_s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tier::copy::CopyEngine;
    use crate::tier::migrate::{CopyBudget, MigrationQueue};
    use crate::tier::pages::PageTable;
    use crate::tier::policy::Migration;

    #[test]
    fn costs_add_up() {
        let w = PolicyWork {
            samples_processed: 1_000_000,
            pages_scanned: 0,
            hint_faults: 1000,
            dedicated_cores: 1,
            ..Default::default()
        };
        // Ten 4 KiB pages moved by one kernel thread between tiers at 70 and 135 ns: each
        // costs 0.61 µs of software plus its copy at 15.5 lines × 64 B per 205 ns.
        let k = CopyEngine::kernel_migrate_pages();
        let (cost, stream) = k.page_time_ns(4096, 135.0, 70.0);
        let per_page = 610.0 + 4096.0 * 205.0 / (15.5 * 64.0);
        assert!((k.page_cpu_ns(4096, cost, stream) - per_page).abs() < 1e-9);
        // 0.2 s of samples + 1 ms of faults + 1 core × 10 s + the ten pages.
        let c = cpu_seconds(&w, 10.0 * per_page, 10.0);
        assert!((c - (0.2 + 0.001 + 10.0 + 10.0 * per_page * 1e-9)).abs() < 1e-12);
    }

    /// CPU the engine spends moving `pages` 4 KiB pages (all first-touched in tier 0) to tier 1
    /// at the tiers' latencies `latency_ns`.
    fn copy_cpu_ns(engine: &CopyEngine, pages: u64, latency_ns: &[f64]) -> f64 {
        let mut pt = PageTable::first_touch(pages, 4096, &[pages * 4096, pages * 4096]).unwrap();
        let mut q = MigrationQueue::default();
        let migs: Vec<Migration> = (0..pages)
            .filter(|&p| pt.try_tier(p) == Some(0))
            .map(|page| Migration { page, to: 1 })
            .collect();
        q.push(&pt, migs);
        let budget = CopyBudget {
            engine,
            latency_ns,
            thread_ns: 1e12,
            byte_cap: None,
        };
        let mut moved = vec![0; 2];
        let d = q.drain(&mut pt, &budget, &mut moved, |_, _, _, _| {});
        assert_eq!(d.migrations, pages);
        d.cpu_ns
    }

    #[test]
    fn kernel_thread_costs_more_cpu_than_dma_and_more_when_loaded() {
        let (k, d) = (CopyEngine::kernel_migrate_pages(), CopyEngine::hemem_dma());
        let idle = [70.0, 135.0];
        let loaded = [350.0, 400.0];
        let (k_idle, d_idle) = (copy_cpu_ns(&k, 64, &idle), copy_cpu_ns(&d, 64, &idle));
        assert!(k_idle > d_idle, "{k_idle} vs {d_idle}");
        // The kernel thread streams slower at loaded latencies and is busy the longer: its
        // copy time scales with the sum of the two latencies (750 ns vs 205 ns), the software
        // cost does not.
        let k_loaded = copy_cpu_ns(&k, 64, &loaded);
        let software = 64.0 * 610.0;
        let want = software + (k_idle - software) * 750.0 / 205.0;
        assert!(k_loaded > k_idle);
        assert!(
            (k_loaded - want).abs() < 1e-6 * want,
            "{k_loaded} vs {want}"
        );
        // DMA's CPU is the host work only, whatever the tiers' load.
        assert_eq!(copy_cpu_ns(&d, 64, &loaded), d_idle);
        assert!((d_idle - 64.0 * 610.0).abs() < 1e-6);
    }
}
