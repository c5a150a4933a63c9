//! The allocator study's result rows: one per allocator run (`results.csv`), the response-
//! time quantiles (`latency.csv`) and the allocation-count histogram (`wear.csv`).
//!
//! A run reports the success rate of each order the workload asks for and the probes of the
//! orders it was told to probe: one declared column per order up to [`MAX_ORDER`], present
//! only for those orders. Model-only columns are absent from `source = "real"` rows and the
//! real-run checks from model rows.

use crate::result_row;

use super::MAX_ORDER;

result_row! {
    /// One allocator's run of the workload.
    #[derive(Default)]
    pub struct AllocRow {
        allocator: String ["", "allocator with its batch size"],
        name: String ["", "allocator name"],
        batch: u32 ["pages", "per-CPU list batch"],
        policy: &'static str ["", "free-list reuse policy"],
        workload: String ["", "workload name"],
        source: &'static str ["", "model, or real (host threads)"],
        threads: u16 ["threads", "workload CPUs"],
        frames: u64 ["frames", "4 KiB frames in the array"],
        requests: u64 ["requests", "allocations and frees issued"],
        allocs: u64 ["requests", "successful allocations"],
        frees: u64 ["requests", "frees"],
        failures: u64 ["requests", "failed allocations"],
        cores: u32 ["cores", "modelled cores"],
        mean_cycles: f64 ["", "mean cost of a memory request (allocations and frees)"],
        std_cycles: f64 ["", "σ of the request cost"],
        p50_cycles: u64 ["", "median request cost"],
        p99_cycles: u64 ["", "99th percentile request cost"],
        p999_cycles: u64 ["", "99.9th percentile request cost"],
        alloc_mean_cycles: f64 ["", "mean allocation cost"],
        alloc_std_cycles: f64 ["", "σ of the allocation cost"],
        alloc_p99_cycles: u64 ["", "99th percentile allocation cost"],
        free_mean_cycles: f64 ["", "mean free cost"],
        free_std_cycles: f64 ["", "σ of the free cost"],
        free_p99_cycles: u64 ["", "99th percentile free cost"],
        alloc_count_max: u32 ["allocations", "allocations of the most allocated frame"],
        alloc_count_mean: f64 ["allocations", "mean allocations per frame"],
        alloc_count_max_over_mean: f64 ["", "max / mean allocations per frame"],
        alloc_count_cov: f64 ["", "σ / mean allocations per frame"],
        frames_touched: u64 ["frames", "frames allocated at least once"],
        lifetime_runs: f64 ["runs", "runs of the workload until the hottest frame wears out"],
        lifetime_ideal_runs: f64 ["runs", "the same with perfectly even wear"],
        lifetime_years: Option<f64> ["", "lifetime in years of back-to-back runs"],
        lifetime_start_gap_runs: Option<f64> ["runs", "lifetime under Start-Gap wear levelling"],
        lifetime_start_gap_random_runs: Option<f64> ["runs", "lifetime under randomized Start-Gap"],
        #[serde(skip_serializing_if = "Option::is_none")]
        locks_per_request: Option<Option<f64>> ["locks", "lock acquisitions per request (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        contended_locks: Option<u64> ["locks", "acquisitions that waited (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        lock_wait_cycles: Option<u64> ["", "cycles waited for locks (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        list_ops_per_request: Option<Option<f64>> ["operations", "free-list operations per request (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        bitmap_words_per_request: Option<Option<f64>> ["words", "bitmap words scanned per request (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        lines_per_request: Option<Option<f64>> ["lines", "cache lines touched per request (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        l1_lines_per_request: Option<Option<f64>> ["lines", "lines served by L1 per request (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        l2_lines_per_request: Option<Option<f64>> ["lines", "lines served by L2 per request (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        llc_lines_per_request: Option<Option<f64>> ["lines", "lines served by the LLC per request (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        cross_core_lines_per_request: Option<Option<f64>> ["lines", "lines taken from another core per request (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        dram_lines_per_request: Option<Option<f64>> ["lines", "lines served by DRAM per request (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        splits: Option<u64> ["blocks", "buddy splits (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        merges: Option<u64> ["blocks", "buddy merges (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        refills: Option<u64> ["batches", "per-CPU list refills (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        drains: Option<u64> ["batches", "per-CPU list drains (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        migratetype_steals: Option<u64> ["blocks", "blocks taken from another migratetype (model only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        order0_success_rate: Option<f64> ["", "share of order-0 allocations that succeeded (orders the workload asks for)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        order1_success_rate: Option<f64> ["", "share of order-1 allocations that succeeded (orders the workload asks for)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        order2_success_rate: Option<f64> ["", "share of order-2 allocations that succeeded (orders the workload asks for)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        order3_success_rate: Option<f64> ["", "share of order-3 allocations that succeeded (orders the workload asks for)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        order4_success_rate: Option<f64> ["", "share of order-4 allocations that succeeded (orders the workload asks for)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        order5_success_rate: Option<f64> ["", "share of order-5 allocations that succeeded (orders the workload asks for)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        order6_success_rate: Option<f64> ["", "share of order-6 allocations that succeeded (orders the workload asks for)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        order7_success_rate: Option<f64> ["", "share of order-7 allocations that succeeded (orders the workload asks for)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        order8_success_rate: Option<f64> ["", "share of order-8 allocations that succeeded (orders the workload asks for)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        order9_success_rate: Option<f64> ["", "share of order-9 allocations that succeeded (orders the workload asks for)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        order10_success_rate: Option<f64> ["", "share of order-10 allocations that succeeded (orders the workload asks for)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order0_free_blocks: Option<u64> ["blocks", "free order-0 blocks after the run (probed orders)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order0_success_rate: Option<Option<f64>> ["", "share of order-0 probes that succeeded"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order0_mean_cycles: Option<f64> ["", "mean cost of an order-0 probe"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order1_free_blocks: Option<u64> ["blocks", "free order-1 blocks after the run (probed orders)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order1_success_rate: Option<Option<f64>> ["", "share of order-1 probes that succeeded"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order1_mean_cycles: Option<f64> ["", "mean cost of an order-1 probe"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order2_free_blocks: Option<u64> ["blocks", "free order-2 blocks after the run (probed orders)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order2_success_rate: Option<Option<f64>> ["", "share of order-2 probes that succeeded"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order2_mean_cycles: Option<f64> ["", "mean cost of an order-2 probe"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order3_free_blocks: Option<u64> ["blocks", "free order-3 blocks after the run (probed orders)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order3_success_rate: Option<Option<f64>> ["", "share of order-3 probes that succeeded"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order3_mean_cycles: Option<f64> ["", "mean cost of an order-3 probe"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order4_free_blocks: Option<u64> ["blocks", "free order-4 blocks after the run (probed orders)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order4_success_rate: Option<Option<f64>> ["", "share of order-4 probes that succeeded"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order4_mean_cycles: Option<f64> ["", "mean cost of an order-4 probe"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order5_free_blocks: Option<u64> ["blocks", "free order-5 blocks after the run (probed orders)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order5_success_rate: Option<Option<f64>> ["", "share of order-5 probes that succeeded"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order5_mean_cycles: Option<f64> ["", "mean cost of an order-5 probe"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order6_free_blocks: Option<u64> ["blocks", "free order-6 blocks after the run (probed orders)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order6_success_rate: Option<Option<f64>> ["", "share of order-6 probes that succeeded"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order6_mean_cycles: Option<f64> ["", "mean cost of an order-6 probe"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order7_free_blocks: Option<u64> ["blocks", "free order-7 blocks after the run (probed orders)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order7_success_rate: Option<Option<f64>> ["", "share of order-7 probes that succeeded"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order7_mean_cycles: Option<f64> ["", "mean cost of an order-7 probe"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order8_free_blocks: Option<u64> ["blocks", "free order-8 blocks after the run (probed orders)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order8_success_rate: Option<Option<f64>> ["", "share of order-8 probes that succeeded"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order8_mean_cycles: Option<f64> ["", "mean cost of an order-8 probe"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order9_free_blocks: Option<u64> ["blocks", "free order-9 blocks after the run (probed orders)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order9_success_rate: Option<Option<f64>> ["", "share of order-9 probes that succeeded"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order9_mean_cycles: Option<f64> ["", "mean cost of an order-9 probe"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order10_free_blocks: Option<u64> ["blocks", "free order-10 blocks after the run (probed orders)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order10_success_rate: Option<Option<f64>> ["", "share of order-10 probes that succeeded"],
        #[serde(skip_serializing_if = "Option::is_none")]
        probe_order10_mean_cycles: Option<f64> ["", "mean cost of an order-10 probe"],
        trace_skipped_frees: u64 ["requests", "trace frees of blocks never allocated, skipped"],
        trace_order_mismatch_frees: u64 ["requests", "trace frees at another order than their allocation"],
        trace_allocs_over_live: u64 ["requests", "trace allocations of a block still live"],
        trace_orders_above_max: u64 ["requests", "trace requests above the largest order"],
        #[serde(skip_serializing_if = "Option::is_none")]
        checker_violations: Option<u64> ["frames", "frames handed out twice or freed while free (real only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        outliers: Option<u64> ["requests", "requests over 100 × the median, left out of means (real only)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        free_frames_end: Option<u64> ["frames", "free frames after the run (real only)"],
    }
}

impl AllocRow {
    /// Sets the success rate of order `k` (at most [`MAX_ORDER`]).
    pub fn set_order_success_rate(&mut self, k: usize, rate: f64) {
        match k {
            0 => self.order0_success_rate = Some(rate),
            1 => self.order1_success_rate = Some(rate),
            2 => self.order2_success_rate = Some(rate),
            3 => self.order3_success_rate = Some(rate),
            4 => self.order4_success_rate = Some(rate),
            5 => self.order5_success_rate = Some(rate),
            6 => self.order6_success_rate = Some(rate),
            7 => self.order7_success_rate = Some(rate),
            8 => self.order8_success_rate = Some(rate),
            9 => self.order9_success_rate = Some(rate),
            10 => self.order10_success_rate = Some(rate),
            _ => debug_assert!(k > MAX_ORDER as usize),
        }
    }

    /// Sets the probe columns of order `k` (at most [`MAX_ORDER`]).
    pub fn set_probe(
        &mut self,
        k: u8,
        free_blocks: u64,
        success_rate: Option<f64>,
        mean_cycles: f64,
    ) {
        match k {
            0 => {
                self.probe_order0_free_blocks = Some(free_blocks);
                self.probe_order0_success_rate = Some(success_rate);
                self.probe_order0_mean_cycles = Some(mean_cycles);
            }
            1 => {
                self.probe_order1_free_blocks = Some(free_blocks);
                self.probe_order1_success_rate = Some(success_rate);
                self.probe_order1_mean_cycles = Some(mean_cycles);
            }
            2 => {
                self.probe_order2_free_blocks = Some(free_blocks);
                self.probe_order2_success_rate = Some(success_rate);
                self.probe_order2_mean_cycles = Some(mean_cycles);
            }
            3 => {
                self.probe_order3_free_blocks = Some(free_blocks);
                self.probe_order3_success_rate = Some(success_rate);
                self.probe_order3_mean_cycles = Some(mean_cycles);
            }
            4 => {
                self.probe_order4_free_blocks = Some(free_blocks);
                self.probe_order4_success_rate = Some(success_rate);
                self.probe_order4_mean_cycles = Some(mean_cycles);
            }
            5 => {
                self.probe_order5_free_blocks = Some(free_blocks);
                self.probe_order5_success_rate = Some(success_rate);
                self.probe_order5_mean_cycles = Some(mean_cycles);
            }
            6 => {
                self.probe_order6_free_blocks = Some(free_blocks);
                self.probe_order6_success_rate = Some(success_rate);
                self.probe_order6_mean_cycles = Some(mean_cycles);
            }
            7 => {
                self.probe_order7_free_blocks = Some(free_blocks);
                self.probe_order7_success_rate = Some(success_rate);
                self.probe_order7_mean_cycles = Some(mean_cycles);
            }
            8 => {
                self.probe_order8_free_blocks = Some(free_blocks);
                self.probe_order8_success_rate = Some(success_rate);
                self.probe_order8_mean_cycles = Some(mean_cycles);
            }
            9 => {
                self.probe_order9_free_blocks = Some(free_blocks);
                self.probe_order9_success_rate = Some(success_rate);
                self.probe_order9_mean_cycles = Some(mean_cycles);
            }
            10 => {
                self.probe_order10_free_blocks = Some(free_blocks);
                self.probe_order10_success_rate = Some(success_rate);
                self.probe_order10_mean_cycles = Some(mean_cycles);
            }
            _ => debug_assert!(k > MAX_ORDER),
        }
    }
}

result_row! {
    /// One quantile of one run's response-time distribution.
    pub struct LatencyRow {
        allocator: String ["", "allocator with its batch size"],
        source: &'static str ["", "model or real"],
        quantile: f64 ["", "quantile"],
        cycles: u64 ["", "request cost at the quantile"],
    }
}

result_row! {
    /// Frames allocated between `alloc_count_lo` and `alloc_count_hi` times (log2 bins).
    pub struct WearRow {
        allocator: String ["", "allocator with its batch size"],
        alloc_count_lo: u64 ["allocations", "bin start"],
        alloc_count_hi: u64 ["allocations", "bin end"],
        frames: u64 ["frames", "frames in the bin"],
    }
}
