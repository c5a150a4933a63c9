//! Allocation cost of a vmalloc-style bulk allocation: per-page kernel work plus zeroing
//! each page by one core, whose bandwidth is bounded by the lines it keeps in flight ÷ the
//! latency of the path to where the page landed and by the media's write bandwidth, remote
//! penalties included; pages pushed to swap cost a swap-out each.

use crate::cache::LINE_BYTES;

use super::placer::Placement;
use super::pool::Pool;
use super::topology::NumaMachine;

crate::params! {
    /// Kernel cost of a bulk allocation.
    #[derive(Debug, Clone, Copy)]
    pub struct AllocCost {
        // Assumption: the study gives no figure; order of a buddy fast path plus a PTE write.
        pub ns_per_page: f64 = 250.0 => non_negative, "ns",
            "Page-allocator call + page-table update per 4 KiB page (an assumption).";
        // The kernel clears pages with `rep stosb`, whose fast-string stores write whole
        // lines without a read for ownership, each holding an L1D fill buffer until the
        // controller accepts it (Intel optimization manual: 12 fill buffers on
        // Skylake-SP / Cascade Lake cores).
        pub lines_in_flight: f64 = 12.0 => range(1.0, 256.0), "lines",
            "64 B lines one core keeps in flight while zeroing a page (its L1D fill buffers).";
    }
}

crate::params! {
    /// Swap space behind the nodes (assumption: an NVMe SSD; ~4 KiB at ~0.5 GB/s plus fault
    /// handling per page).
    #[derive(Debug, Clone, Copy)]
    pub struct SwapSpec {
        pub bytes: u64 = 16 << 30 => any, "", "Swap space (an assumption: 16 GiB).";
        pub ns_per_page: f64 = 10_000.0 => non_negative, "ns",
            "Writing one page out (allocation) or faulting it back in (access).";
    }
}

/// Breakdown of one allocation's time (ns).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AllocTime {
    pub kernel_ns: f64,
    pub zero_ns: f64,
    pub remote_ns: f64,
    pub swap_ns: f64,
}

impl AllocTime {
    pub fn total_ns(&self) -> f64 {
        self.kernel_ns + self.zero_ns + self.remote_ns + self.swap_ns
    }
}

impl AllocCost {
    /// One core's zeroing bandwidth (GB/s) over a path whose store completes after
    /// `latency_ns`: lines in flight × 64 B ÷ latency (Little's law).
    pub fn latency_bound_gb_s(&self, latency_ns: f64) -> f64 {
        self.lines_in_flight * LINE_BYTES as f64 / latency_ns
    }
}

/// Time to allocate and zero `pl` for a task on `socket`; `used_before` pages were on each
/// pool node before (a Memory Mode cache holds the first `cache` bytes of a node's pages).
pub(super) fn alloc_time(
    m: &NumaMachine,
    pool: &Pool,
    pl: &Placement,
    used_before: &[u64],
    socket: usize,
    c: &AllocCost,
    swap: &SwapSpec,
) -> AllocTime {
    let pb = pool.page_bytes as f64;
    let mut t = AllocTime::default();
    // Interleaved pages: bytes, bytes × path latency, and the busiest node's media time.
    let (mut rr_bytes, mut rr_lat, mut slowest_node_ns) = (0.0, 0.0, 0.0f64);
    for (i, &pages) in pl.pages.iter().enumerate() {
        if pages == 0 {
            continue;
        }
        let n = &pool.nodes[i];
        let p = m.path(socket, n.topo);
        t.kernel_ns += pages as f64 * c.ns_per_page;
        if p.remote {
            // One remote round trip per page (struct page and PTE work on the far node).
            t.remote_ns += pages as f64 * m.spec.interconnect.remote_extra_latency_ns;
        }
        if n.cache_bytes > 0 {
            // Memory Mode: zeroes stay in the DRAM cache until it is full; beyond, each line
            // waits for the tag read of the DRAM slot and its dirty victim's write to PMem,
            // and the PMem modules' write bandwidth bounds.
            let cache_pages = n.cache_bytes / pool.page_bytes;
            let cached = cache_pages.saturating_sub(used_before[i]).min(pages);
            let (_, w) = backing_bandwidth(m, socket, &n.backing);
            let far = m.path(socket, n.backing[0]);
            let hit_bw = c
                .latency_bound_gb_s(p.write_latency_ns)
                .min(p.write_bandwidth_gb_s);
            let miss_bw = c
                .latency_bound_gb_s(p.read_latency_ns + far.write_latency_ns)
                .min(w);
            t.zero_ns += cached as f64 * pb / hit_bw;
            t.zero_ns += (pages - cached) as f64 * pb / miss_bw;
        } else {
            // Pages filled node after node are zeroed one node at a time.
            let rr = pl.interleaved.get(i).copied().unwrap_or(0);
            let bw = c
                .latency_bound_gb_s(p.write_latency_ns)
                .min(p.write_bandwidth_gb_s);
            t.zero_ns += (pages - rr) as f64 * pb / bw;
            if rr > 0 {
                rr_bytes += rr as f64 * pb;
                rr_lat += rr as f64 * pb * p.write_latency_ns;
                slowest_node_ns = slowest_node_ns.max(rr as f64 * pb / p.write_bandwidth_gb_s);
            }
        }
    }
    // Interleaved pages: consecutive pages go to different nodes and stores complete at each
    // node's write queue, so the nodes write in parallel: the core's lines in flight over
    // the mean path latency, or the busiest node's media, bounds.
    if rr_bytes > 0.0 {
        let core = c.latency_bound_gb_s(rr_lat / rr_bytes);
        t.zero_ns += (rr_bytes / core).max(slowest_node_ns);
    }
    t.swap_ns = pl.swap_pages as f64 * swap.ns_per_page;
    t
}

/// Aggregate (read, write) bandwidth of far modules seen from `socket` (interleaved).
pub(super) fn backing_bandwidth(m: &NumaMachine, socket: usize, modules: &[usize]) -> (f64, f64) {
    let mut r = 0.0;
    let mut w = 0.0;
    let mut remote = false;
    for &f in modules {
        let p = m.path(socket, f);
        remote |= p.remote;
        r += m.nodes[f].media.read_bandwidth_gb_s;
        w += m.nodes[f].media.write_bandwidth_gb_s;
    }
    if remote {
        let cap = m.spec.interconnect.bandwidth_gb_s;
        (r.min(cap), w.min(cap))
    } else {
        (r, w)
    }
}
