//! Page copy engines (docs/tiering.md, *Migration copies*): the threads (or DMA channels)
//! that copy migrated pages. Each is a closed-loop streaming source: it keeps a bounded
//! number of lines in flight, reading the source tier and writing the destination tier, so
//! its streaming rate is lines × 64 B / (L_source + L_destination) at the tiers' loaded
//! latencies; a kernel migration also pays a per-page software cost (unmap, TLB shootdown,
//! remap) during which the thread copies nothing. The same engine says what a migration costs
//! the CPU (docs/tiering.md, *CPU cost*): a kernel copy thread is a CPU, busy for the software
//! cost and the copy at the rate it achieved; a DMA channel copies off the CPU, which pays
//! only the per-page work of submitting the copy and remapping the page.

use serde::{Deserialize, Serialize};

use super::pages::BASE_PAGE_BYTES;
use super::LINE_BYTES;

/// How a system copies pages: `threads` copy threads (or DMA channels), each keeping
/// `lines_in_flight` lines in flight, and a per-page software cost for 4 KiB and 2 MiB pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopyEngine {
    pub name: &'static str,
    pub threads: u32,
    pub lines_in_flight: f64,
    /// Software cost per migrated 4 KiB page, ns (no copy: unmap, TLB shootdown, remap).
    pub page_cost_4k_ns: f64,
    /// The same for a 2 MiB page.
    pub page_cost_2m_ns: f64,
    /// Where the copy runs and so what it costs the CPU.
    pub cpu: CopyCpu,
}

/// What a page copy costs the CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CopyCpu {
    /// The copy threads are CPU threads: busy for the whole page time (software cost plus
    /// the streaming copy at the tiers' loaded latencies).
    Threads,
    /// The copy is offloaded (DMA): the CPU pays per page only the host work of submitting
    /// the copy and remapping the page, ns for 4 KiB and 2 MiB pages; the channels' time is
    /// not CPU time.
    Offload {
        page_cost_4k_ns: f64,
        page_cost_2m_ns: f64,
    },
}

/// A per-page cost at `page_bytes`: the 4 KiB figure up to 4 KiB, the 2 MiB one from 2 MiB,
/// linear in between.
fn interpolate_ns(cost_4k_ns: f64, cost_2m_ns: f64, page_bytes: u64) -> f64 {
    let huge = (2u64 << 20) as f64;
    let b = page_bytes as f64;
    if page_bytes <= BASE_PAGE_BYTES {
        cost_4k_ns
    } else if b >= huge {
        cost_2m_ns
    } else {
        let f = (b - BASE_PAGE_BYTES as f64) / (huge - BASE_PAGE_BYTES as f64);
        cost_4k_ns + f * (cost_2m_ns - cost_4k_ns)
    }
}

impl CopyEngine {
    /// HeMem's copies (Raybuck et al., ACM SOSP 2021; the evaluated build: `USE_DMA`,
    /// `NUM_CHANNS` 2, 1 MiB per request): two I/OAT DMA channels, each a streaming source
    /// with the cores' streaming in-flight limit. The page-table work (write-protect, remap)
    /// is done by HeMem's policy thread beside the copies, so the channels pay no per-page
    /// cost here; that thread's per-page work is the CPU cost of a migration
    /// (`params::HEMEM_HOST_PAGE_COST_*`).
    pub fn hemem_dma() -> Self {
        CopyEngine {
            name: "dma",
            threads: super::reference::HEMEM_DMA_CHANNELS,
            lines_in_flight: super::reference::ANTAGONIST_READS_PER_CORE,
            page_cost_4k_ns: 0.0,
            page_cost_2m_ns: 0.0,
            cpu: CopyCpu::Offload {
                page_cost_4k_ns: super::reference::HEMEM_HOST_PAGE_COST_4K_NS,
                page_cost_2m_ns: super::reference::HEMEM_HOST_PAGE_COST_2M_NS,
            },
        }
    }

    /// The kernel's `migrate_pages` (TPP, MEMTIS): one kernel thread (kswapd, kmigrated or
    /// the hint-fault path) copies page by page and pays the per-page software cost.
    pub fn kernel_migrate_pages() -> Self {
        CopyEngine {
            name: "migrate_pages",
            threads: 1,
            lines_in_flight: super::reference::ANTAGONIST_READS_PER_CORE,
            page_cost_4k_ns: super::reference::KERNEL_PAGE_COST_4K_NS,
            page_cost_2m_ns: super::reference::KERNEL_PAGE_COST_2M_NS,
            cpu: CopyCpu::Threads,
        }
    }

    /// Software cost of migrating one page of `page_bytes`, ns: the 4 KiB figure up to 4 KiB,
    /// the 2 MiB one from 2 MiB, linear in between.
    pub fn page_cost_ns(&self, page_bytes: u64) -> f64 {
        interpolate_ns(self.page_cost_4k_ns, self.page_cost_2m_ns, page_bytes)
    }

    /// CPU time (ns) of migrating one page of `page_bytes` whose copy thread took
    /// `cost_ns` + `stream_ns` ([`Self::page_time_ns`]).
    pub fn page_cpu_ns(&self, page_bytes: u64, cost_ns: f64, stream_ns: f64) -> f64 {
        match self.cpu {
            CopyCpu::Threads => cost_ns + stream_ns,
            CopyCpu::Offload {
                page_cost_4k_ns,
                page_cost_2m_ns,
            } => interpolate_ns(page_cost_4k_ns, page_cost_2m_ns, page_bytes),
        }
    }

    /// One thread's streaming rate (bytes per ns) between tiers with these loaded latencies.
    pub fn stream_bytes_per_ns(&self, src_latency_ns: f64, dst_latency_ns: f64) -> f64 {
        self.lines_in_flight * LINE_BYTES / (src_latency_ns + dst_latency_ns)
    }

    /// Thread time to migrate one page, split as (software cost, streaming copy), ns.
    pub fn page_time_ns(
        &self,
        page_bytes: u64,
        src_latency_ns: f64,
        dst_latency_ns: f64,
    ) -> (f64, f64) {
        let stream = page_bytes as f64 / self.stream_bytes_per_ns(src_latency_ns, dst_latency_ns);
        (self.page_cost_ns(page_bytes), stream)
    }

    /// Pages of `page_bytes` all threads together move per ns (GB/s when × bytes) at these
    /// latencies, busy all the time.
    pub fn rate_gb_s(&self, page_bytes: u64, src_latency_ns: f64, dst_latency_ns: f64) -> f64 {
        let (c, s) = self.page_time_ns(page_bytes, src_latency_ns, dst_latency_ns);
        self.threads as f64 * page_bytes as f64 / (c + s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_cost_interpolates_between_the_two_sizes() {
        let k = CopyEngine::kernel_migrate_pages();
        assert_eq!(k.page_cost_ns(4096), k.page_cost_4k_ns);
        assert_eq!(k.page_cost_ns(2 << 20), k.page_cost_2m_ns);
        let mid = k.page_cost_ns(((2 << 20) + 4096) / 2);
        assert!(mid > k.page_cost_4k_ns.min(k.page_cost_2m_ns));
        assert!(mid < k.page_cost_4k_ns.max(k.page_cost_2m_ns));
    }

    #[test]
    fn streaming_rate_falls_as_latency_grows() {
        let e = CopyEngine::hemem_dma();
        let fast = e.rate_gb_s(2 << 20, 70.0, 135.0);
        let slow = e.rate_gb_s(2 << 20, 350.0, 135.0);
        assert!(slow < fast);
        // Closed form: 2 channels × 15.5 lines × 64 B / 205 ns.
        let want = 2.0 * e.lines_in_flight * 64.0 / 205.0;
        assert!((fast - want).abs() < 1e-9 * want, "{fast} vs {want}");
    }

    #[test]
    fn kernel_pays_per_page_and_dma_does_not() {
        let (k, d) = (CopyEngine::kernel_migrate_pages(), CopyEngine::hemem_dma());
        let per_thread = |e: &CopyEngine, b| e.rate_gb_s(b, 70.0, 135.0) / e.threads as f64;
        // Closed form per thread: page / (software cost + page / stream).
        let stream = k.stream_bytes_per_ns(70.0, 135.0);
        let want = 4096.0 / (k.page_cost_4k_ns + 4096.0 / stream);
        assert!((per_thread(&k, 4096) - want).abs() < 1e-9 * want);
        // 4 KiB pages: the software cost is a large share of a kernel page's time (over a
        // third with the measured 0.61 µs), so a kernel thread moves base pages well below
        // a DMA channel's rate.
        assert!(per_thread(&k, 4096) < 0.7 * per_thread(&d, 4096));
        // With 2 MiB pages the software cost is amortised: the kernel thread streams at
        // nearly a DMA channel's rate.
        assert!(per_thread(&k, 2 << 20) > 0.9 * per_thread(&d, 2 << 20));
        assert!(per_thread(&k, 4096) < per_thread(&k, 2 << 20));
    }
}
