//! The `hybrid` scenario: one workload on one UMD under each listed EPF policy.

use serde_json::json;

use super::host::{pages_needed, Host, HostConfig, HostStats};
use super::pigz::PigzLike;
use super::policy::EpfPolicySpec;
use super::umd::Umd;
use super::workload::{from_trace, HybridWorkload, MIB, PAGE_BYTES};
use crate::config::{check_host_memory, Validator};
use crate::error::RunError;
use crate::flash::{build_gc, preset, Ftl, Geometry, GC_POLICIES, NAND_PRESETS};
use crate::result_row;
use crate::scenario::{Column, Ctx, Experiment, Output, ResultRow, Scenario, Step};
use crate::stats::nearest_rank;

/// The `hybrid` module.
pub struct Hybrid;

/// The EPF policies a scenario runs when it lists none.
pub(super) const DEFAULT_POLICIES: &[&str] = &["no_EPF", "all_EPF", "smart_EPF"];

crate::params! {
    #[params(check)]
    /// A `hybrid` scenario: one workload on one UMD under each listed EPF policy.
    #[derive(Debug, Clone)]
    pub struct HybridConfig {
        pub device: HybridDeviceConfig = HybridDeviceConfig::default() => nested, "",
            "The UMD: capacity and DRAM cache.";
        pub flash: FlashSpec = FlashSpec::default() => nested, "", "Its NAND flash and FTL.";
        pub precondition: Precondition = Precondition::default() => nested, "",
            "How the flash is aged before the run.";
        pub host: HostConfig = HostConfig::default() => nested, "", "The host OS and CPU.";
        pub workload: HybridWorkloadSpec = HybridWorkloadSpec::default() => nested, "",
            "The workload.";
        pub policies: Vec<EpfPolicySpec> =
            DEFAULT_POLICIES.iter().map(|n| EpfPolicySpec::named(n)).collect() => nested, "",
            "EPF policies to compare, each once (`[[policies]]`).";
    }
}

crate::params! {
    #[params(check)]
    /// The UMD: logical capacity (what the OS sees) and its DRAM cache.
    #[derive(Debug, Clone)]
    pub struct HybridDeviceConfig {
        pub capacity_mib: f64 = 2048.0 => range(0.0625, 16.0 * 1024.0 * 1024.0), "",
            "Logical capacity the OS sees.";
        pub dram_mib: f64 = 100.0 => any, "",
            "Internal DRAM cache, 0.004 to `capacity_mib`.";
        pub dram_read_ns: u64 = 50 => range(0, 1_000_000), "",
            "Internal DRAM page read (the study's 50 ns).";
        pub dram_write_ns: u64 = 50 => range(0, 1_000_000), "",
            "Internal DRAM page write (the study's 50 ns).";
        pub victim_release: String = VICTIM_RELEASE[0].into() => any, "",
            "When a dirty victim's frame can take the faulting page: `programmed` (its program is done; the spec's) or `page_register` (its data is in the die's page register).";
    }
}
/// Values of `device.victim_release`.
pub(super) const VICTIM_RELEASE: &[&str] = &["programmed", "page_register"];

crate::params! {
    #[params(check)]
    /// The UMD's NAND flash and its FTL.
    #[derive(Debug, Clone)]
    pub struct FlashSpec {
        pub nand: String = "study".into() => any, "", "NAND timing preset.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub read_us: Option<f64> = None => range(0.0, 1e6), "", "Override of the preset's page read.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub program_us: Option<f64> = None => range(0.0, 1e6), "",
            "Override of the preset's page program.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub erase_us: Option<f64> = None => range(0.0, 1e6), "",
            "Override of the preset's block erase.";
        pub pages_per_block: u32 = 64 => range(1, 65536), "pages", "Pages per erase block.";
        pub over_provisioning: f64 = 0.07 => range(0.0, 10.0), "",
            "Spare flash beyond the logical capacity, as a share of it.";
        pub channels: u32 = 4 => range(1, 1024), "", "Flash channels.";
        pub dies_per_channel: u32 = 2 => range(1, 1024), "", "Dies on each channel.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub channel_gb_s: Option<f64> = None => range(1e-6, 1e6), "",
            "Channel transfer rate; default: the preset's.";
        pub gc: String = "greedy".into() => any, "", "Garbage-collection victim policy.";
        pub gc_free_blocks: u32 = 2 => range(1, 1 << 20), "blocks",
            "Free blocks below which garbage collection runs.";
    }
}

crate::params! {
    /// The study's preconditioning (DRAM cache empty afterwards).
    #[derive(Debug, Clone, Copy)]
    pub struct Precondition {
        pub sequential_fraction: f64 = 0.6 => fraction, "",
            "Share of the capacity written sequentially first.";
        pub random_fraction: f64 = 0.5 => range(0.0, 100.0), "× capacity",
            "Random overwrites afterwards, in capacities.";
    }
}

crate::params! {
    #[params(check)]
    /// A trace (`trace = "path"`, relative to the scenario file) or the pigz-like generator.
    #[derive(Debug, Clone)]
    pub struct HybridWorkloadSpec {
        pub threads: u16 = 5 => range(1, 4096), "", "Application threads.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub trace: Option<String> = None => any, "", "A trace file, relative to the scenario.";
        pub share_address_space: bool = false => any, "",
            "Trace replay: threads of one process (shared pages) or one process each.";
        pub trace_passes: u32 = 1 => range(1, 1000), "passes",
            "Trace replay: each thread replays the trace this many times in a row, on the same pages: \
             a longer run of the same program, as a decompressor reuses its buffers over a longer input \
             (at most 100 M events in all).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub input_mib: Option<f64> = None => any, "",
            "Trace replay: the input size one pass of the trace stands for, for the results table (0 to 1e9).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub pigz: Option<PigzLike> = None => nested, "", "The pigz-like generator (docs/hybrid.md).";
    }
}

impl HybridDeviceConfig {
    fn check(&self, v: &mut Validator) {
        v.range(
            "dram_mib",
            self.dram_mib,
            0.004,
            self.capacity_mib,
            "MiB (at most capacity_mib)",
        );
        v.one_of("victim_release", &self.victim_release, VICTIM_RELEASE);
    }
}

impl FlashSpec {
    fn check(&self, v: &mut Validator) {
        let names: Vec<&str> = NAND_PRESETS.iter().map(|p| p.0).collect();
        v.one_of("nand", &self.nand, &names);
        v.one_of("gc", &self.gc, &GC_POLICIES.names());
    }
}

impl HybridWorkloadSpec {
    fn check(&self, v: &mut Validator) {
        if self.trace.is_some() && self.pigz.is_some() {
            v.fail("pigz", "give either trace or [workload.pigz], not both");
        }
        if self.trace_passes > 1 && self.trace.is_none() {
            v.fail(
                "trace_passes",
                "only for a trace; [workload.pigz] sets its length by input_mib",
            );
        }
        if let Some(m) = self.input_mib {
            if self.trace.is_none() {
                v.fail(
                    "input_mib",
                    "only for a trace; [workload.pigz] has its own input_mib",
                );
            }
            v.range("input_mib", m, 0.0, 1e9, "MiB");
        }
    }
}

/// Host memory the device needs at least, bytes (an estimate, a lower bound): per logical page
/// (`device.capacity_mib` / 4 KiB) the UMD's frame map and the FTL's logical-to-physical map
/// (4 B each) and at least one physical page's reverse map (4 B), per DRAM frame
/// (`device.dram_mib` / 4 KiB) its ready time (8 B); the block tables and the workload come
/// on top.
pub(super) fn host_memory_estimate(sc: &HybridConfig) -> u64 {
    let pages = |mib: f64| (mib * MIB as f64 / PAGE_BYTES as f64).max(0.0) as u64;
    pages(sc.device.capacity_mib)
        .saturating_mul(12)
        .saturating_add(pages(sc.device.dram_mib).saturating_mul(8))
}

impl HybridConfig {
    fn check(&self, v: &mut Validator) {
        if self.policies.is_empty() {
            v.fail("policies", "empty; list at least one [[policies]]");
        }
        let labels: Vec<String> = self
            .policies
            .iter()
            .map(|p| match p.threshold_us {
                Some(t) => format!("{} (threshold_us = {t})", p.name),
                None => p.name.clone(),
            })
            .collect();
        v.distinct("policies", &labels);
    }
}

impl HybridConfig {
    pub fn logical_pages(&self) -> u32 {
        (self.device.capacity_mib * MIB as f64 / PAGE_BYTES as f64) as u32
    }

    pub fn dram_frames(&self) -> u32 {
        ((self.device.dram_mib * MIB as f64 / PAGE_BYTES as f64) as u32).max(1)
    }

    pub fn geometry(&self) -> Geometry {
        let f = &self.flash;
        Geometry {
            logical_pages: self.logical_pages(),
            pages_per_block: f.pages_per_block,
            over_provisioning: f.over_provisioning,
            channels: f.channels,
            dies_per_channel: f.dies_per_channel,
            page_bytes: PAGE_BYTES,
            channel_gb_s: f.channel_gb_s,
            gc_free_blocks: f.gc_free_blocks,
        }
    }

    /// A preconditioned UMD with an empty DRAM cache (random streams from `seed`).
    pub fn build_umd(&self, seed: u64) -> Umd {
        let f = &self.flash;
        let mut nand = preset(&f.nand).expect("validated");
        let us = |x: f64| (x * 1e3).round() as u64;
        if let Some(x) = f.read_us {
            nand.read_ns = us(x);
        }
        if let Some(x) = f.program_us {
            nand.program_ns = us(x);
        }
        if let Some(x) = f.erase_us {
            nand.erase_ns = us(x);
        }
        let mut ftl = Ftl::new(
            self.geometry(),
            nand,
            build_gc(&f.gc, seed).expect("validated"),
        );
        let p = self.precondition;
        ftl.precondition(
            p.sequential_fraction,
            p.random_fraction,
            &mut crate::rng::stream(seed, "hybrid-precondition"),
        );
        let mut umd = Umd::new(
            ftl,
            self.dram_frames(),
            self.device.dram_read_ns,
            self.device.dram_write_ns,
        );
        umd.release_at_register = self.device.victim_release == "page_register";
        umd
    }

    /// The trace (`workload.trace`, relative to the scenario `file`) or the pigz-like
    /// workload generated from `seed`.
    pub fn load_workload(&self, file: &str, seed: u64) -> Result<HybridWorkload, RunError> {
        let w = &self.workload;
        match &w.trace {
            Some(rel) => {
                let base = std::path::Path::new(file)
                    .parent()
                    .map(std::path::Path::to_path_buf)
                    .unwrap_or_default();
                from_trace(
                    &base.join(rel),
                    file,
                    "workload.trace",
                    w.threads,
                    w.share_address_space,
                    w.input_mib.unwrap_or(0.0),
                    w.trace_passes,
                )
            }
            None => Ok(w.pigz.clone().unwrap_or_default().generate(seed)),
        }
    }
}

/// One scenario run: the policy's host statistics and the device's.
pub(super) struct PolicyRun {
    pub stats: HostStats,
    pub gc_runs: u64,
    pub waf: Option<f64>,
    pub erases: u64,
    pub max_erase_count: u32,
    pub writebacks: u64,
    pub stale_reads: u64,
    pub dma_fills: u64,
}

/// `w` on a fresh UMD under policy `p`; `Err` names an unregistered policy.
pub(super) fn simulate(
    sc: &HybridConfig,
    w: &HybridWorkload,
    p: &EpfPolicySpec,
    seed: u64,
) -> Result<PolicyRun, String> {
    let mut umd = sc.build_umd(seed);
    let policy = p.build()?;
    let stats = Host::new(sc.host, &mut umd, policy.as_ref(), w, seed).run(w);
    Ok(PolicyRun {
        stats,
        gc_runs: umd.ftl.stats.gc_runs,
        waf: umd.ftl.stats.waf(),
        erases: umd.ftl.stats.erases,
        max_erase_count: umd.ftl.erase_counts().iter().copied().max().unwrap_or(0),
        writebacks: umd.writebacks,
        stale_reads: umd.stale_reads,
        dma_fills: umd.dma_fills,
    })
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b != 0).then(|| a as f64 / b as f64)
}

/// The `q` quantile of sorted service times in ns, in µs (empty when there are none).
fn percentile_us(sorted_ns: &[u64], q: f64) -> Option<f64> {
    nearest_rank(sorted_ns, q).map(|ns| ns as f64 / 1e3)
}

/// Internal faults served within the smart threshold's default (no program, erase or queue
/// in front of the read): the study's "short" faults.
fn short_faults(s: &HostStats) -> u64 {
    let limit = (crate::hybrid::policy::DEFAULT_THRESHOLD_US * 1e3) as u64;
    s.service.iter().filter(|x| x.1 <= limit).count() as u64
}

result_row! {
    /// One EPF policy's run of the workload (`results.csv`).
    pub struct HybridRow {
        policy: String ["", "EPF policy"],
        label: String ["", "policy with its threshold"],
        threshold_us: Option<f64> ["", "smart_EPF's threshold (empty for the others)"],
        workload: String ["", "workload name"],
        dram_mib: f64 ["", "UMD DRAM cache"],
        capacity_mib: f64 ["", "UMD logical capacity"],
        input_mib: f64 ["", "input size the workload stands for"],
        footprint_mib: f64 ["", "pages the workload touches"],
        threads: usize ["threads", "workload threads"],
        output_ratio: Option<f64> ["", "output / input size (empty: none)"],
        resident_os_mib: f64 ["", "pages resident before the run"],
        gc_policy: String ["", "flash GC policy"],
        nand: String ["", "NAND timing preset"],
        runtime_s: f64 ["", "simulated runtime"],
        umd_accesses: u64 ["accesses", "page-level accesses to the UMD"],
        internal_faults: u64 ["faults", "accesses missing the UMD DRAM"],
        internal_fault_share: Option<f64> ["", "internal faults per access"],
        short_faults: u64 ["faults", "internal faults served within 50 us"],
        stale_reads: u64 ["reads", "flash reads of pages the OS had freed"],
        epf_raised: u64 ["faults", "internal faults signalled as EPFs"],
        epf_share: Option<f64> ["", "EPFs per internal fault"],
        epf_reraised: u64 ["faults", "EPFs raised again after a wake-up"],
        fault_waits: u64 ["waits", "accesses waiting on another thread's fault"],
        atomic_faults: u64 ["faults", "internal faults in kernel copies with page faults disabled (cannot block)"],
        epf_with_ready: u64 ["faults", "EPFs raised while another thread was ready"],
        stall_s: f64 ["", "core time stalled on internal faults"],
        idle_s: f64 ["", "core time idle"],
        context_switches: u64 ["switches", "context switches"],
        idle_switches: u64 ["switches", "switches to and from idle"],
        wakeups: u64 ["wakeups", "blocked threads woken"],
        timer_interrupts: u64 ["interrupts", "timer interrupts ending blocks"],
        handoff_waits: u64 ["waits", "waits for another thread's data"],
        os_faults: u64 ["faults", "OS page faults"],
        kernel_allocs: u64 ["pages", "page-cache pages allocated inside system calls"],
        dma_fills: u64 ["pages", "pages written whole by DMA (no flash read)"],
        itlb_misses: u64 ["misses", "instruction TLB misses"],
        dtlb_misses: u64 ["misses", "data TLB misses"],
        victim_writebacks: u64 ["pages", "dirty DRAM victims programmed to flash"],
        gc_runs: u64 ["runs", "flash GC runs"],
        gc_runs_in_faults: u64 ["runs", "GC runs inside an internal fault"],
        gc_each_runtime_share: Option<f64> ["", "mean service time of a fault that ran GC, as a share of the runtime: above 0.05, one GC more or less moves the runtime by that much (a warning)"],
        flash_waf: Option<f64> ["", "flash write amplification"],
        erases: u64 ["blocks", "block erases"],
        max_erase_count: u32 ["erases", "most erases of one block"],
        service_p50_us: Option<f64> ["", "median internal-fault service time"],
        service_p99_us: Option<f64> ["", "99th percentile internal-fault service time"],
        service_max_us: Option<f64> ["", "longest internal-fault service time"],
        service_over_estimate_share: Option<f64> ["", "faults served later than estimated"],
    }
}

result_row! {
    /// Internal faults per log2 service-time bin, per policy (`service.csv`).
    pub struct ServiceRow {
        label: String ["", "policy with its threshold"],
        dram_mib: f64 ["", "UMD DRAM cache"],
        service_lo_us: u64 ["", "bin start"],
        service_hi_us: u64 ["", "bin end"],
        faults: u64 ["faults", "internal faults in the bin"],
    }
}

fn row(sc: &HybridConfig, w: &HybridWorkload, p: &EpfPolicySpec, r: &PolicyRun) -> HybridRow {
    let s = &r.stats;
    let mut service: Vec<u64> = s.service.iter().map(|x| x.1).collect();
    service.sort_unstable();
    let over = s.service.iter().filter(|x| x.1 > x.0).count() as u64;
    HybridRow {
        policy: p.name.clone(),
        label: p.label(),
        threshold_us: (p.name == "smart_EPF").then(|| p.threshold_us()),
        workload: w.name.clone(),
        dram_mib: sc.device.dram_mib,
        capacity_mib: sc.device.capacity_mib,
        input_mib: w.input_mib,
        footprint_mib: w.footprint_pages() as f64 * PAGE_BYTES as f64 / MIB as f64,
        threads: w.threads.len(),
        output_ratio: (w.output_ratio > 0.0).then_some(w.output_ratio),
        resident_os_mib: w.resident_pages as f64 * PAGE_BYTES as f64 / MIB as f64,
        gc_policy: sc.flash.gc.clone(),
        nand: sc.flash.nand.clone(),
        runtime_s: s.runtime_ns as f64 / 1e9,
        umd_accesses: s.umd_accesses,
        internal_faults: s.internal_faults,
        internal_fault_share: ratio(s.internal_faults, s.umd_accesses),
        short_faults: short_faults(s),
        stale_reads: r.stale_reads,
        epf_raised: s.epf_raised,
        epf_share: ratio(s.epf_raised, s.internal_faults),
        epf_reraised: s.epf_reraised,
        fault_waits: s.fault_waits,
        atomic_faults: s.atomic_faults,
        epf_with_ready: s.epf_with_ready,
        stall_s: s.stall_ns as f64 / 1e9,
        idle_s: s.idle_ns as f64 / 1e9,
        context_switches: s.context_switches,
        idle_switches: s.idle_switches,
        wakeups: s.wakeups,
        timer_interrupts: s.timer_interrupts,
        handoff_waits: s.handoff_waits,
        os_faults: s.os_faults,
        kernel_allocs: s.kernel_allocs,
        dma_fills: r.dma_fills,
        itlb_misses: s.itlb_misses,
        dtlb_misses: s.dtlb_misses,
        victim_writebacks: r.writebacks,
        gc_runs: r.gc_runs,
        gc_runs_in_faults: s.gc_runs_in_faults,
        gc_each_runtime_share: gc_each_share(s),
        flash_waf: r.waf,
        erases: r.erases,
        max_erase_count: r.max_erase_count,
        service_p50_us: percentile_us(&service, 0.5),
        service_p99_us: percentile_us(&service, 0.99),
        service_max_us: percentile_us(&service, 1.0),
        service_over_estimate_share: ratio(over, s.service.len() as u64),
    }
}

/// A GC on the critical path's share of the runtime above which one GC more or less is
/// worth a warning.
const GC_SHARE_WARN: f64 = 0.05;

/// The mean service time of a fault that ran GC over the runtime (None without one).
fn gc_each_share(s: &HostStats) -> Option<f64> {
    (s.gc_runs_in_faults > 0 && s.runtime_ns > 0)
        .then(|| s.gc_fault_ns as f64 / s.gc_runs_in_faults as f64 / s.runtime_ns as f64)
}

/// The warning for a run whose runtime rests on a few GCs on the critical path: GC runs
/// when a superblock fills, so whether the last one falls inside the run depends on where
/// the run ends and on the seed's placement, and each moves the runtime by its service
/// time. None when each is a small part of the runtime (many GCs average out).
pub(super) fn gc_share_warning(p: &EpfPolicySpec, s: &HostStats) -> Option<String> {
    let share = gc_each_share(s)?;
    let each_ns = s.gc_fault_ns as f64 / s.gc_runs_in_faults as f64;
    (share > GC_SHARE_WARN).then(|| {
        format!(
            "policy {}: each of its {} GC run(s) on the critical path took ≈ {:.1} ms, {:.0} % of the \
             {:.3} s runtime: one GC more or less (where the run ends; the seed's placement) moves the \
             runtime by that much, more than the policies may differ. Compare them over a longer \
             workload, or over seeds (hmsim run … --replicates 5)",
            p.label(),
            s.gc_runs_in_faults,
            each_ns / 1e6,
            share * 100.0,
            s.runtime_ns as f64 / 1e9
        )
    })
}

/// Internal-fault service times in log2 µs bins, per policy (the distribution figure).
fn service_rows(label: &str, dram_mib: f64, s: &HostStats) -> Vec<ServiceRow> {
    let mut bins = [0u64; 40];
    for &(_, ns) in &s.service {
        let us = (ns / 1000).max(1);
        bins[63 - us.leading_zeros() as usize] += 1;
    }
    bins.iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(b, &n)| ServiceRow {
            label: label.to_string(),
            dram_mib,
            service_lo_us: 1u64 << b,
            service_hi_us: 1u64 << (b + 1),
            faults: n,
        })
        .collect()
}

impl Scenario for Hybrid {
    const MODULE: &'static str = "hybrid";
    const ABOUT: &'static str =
        "DRAM-cached flash devices: internal faults and the host's EPF policies";
    type Config = HybridConfig;
    type Row = HybridRow;
    const DOCS: &'static str = "hybrid.md";
    const STUDY: &'static str = "hybrid";
    const SWEEP_METRICS: &'static [&'static str] = &["runtime_s", "stall_s", "epf_share"];
    const PARAMS_NOTE: &'static str =
        ". Sizes in `_mib` and `_kib` are MiB and KiB (2^20 and 2^10 bytes)";
    const TABLES: &'static [(&'static str, &'static [Column])] =
        &[("service", ServiceRow::COLUMNS)];

    type Experiment<'a> = HybridRun<'a>;

    fn build<'a>(sc: &'a HybridConfig, ctx: &Ctx<'a>) -> Result<HybridRun<'a>, RunError> {
        check_host_memory(
            host_memory_estimate(sc),
            "the device model (its page maps)",
            &format!(
                " for {} MiB of capacity and {} MiB of DRAM cache (device.dram_mib)",
                sc.device.capacity_mib, sc.device.dram_mib
            ),
        )
        .map_err(|e| ctx.error("device.capacity_mib", e))?;
        let w = sc.load_workload(ctx.file(), ctx.seed())?;
        let need = pages_needed(&w, &sc.host);
        if need > sc.logical_pages() as u64 {
            return Err(ctx.error(
                "device.capacity_mib",
                format!(
                    "the workload needs {need} pages ({:.1} MiB) but the device holds {} pages; raise capacity_mib",
                    need as f64 * PAGE_BYTES as f64 / MIB as f64,
                    sc.logical_pages()
                ),
            ));
        }
        Ok(HybridRun {
            sc,
            w,
            service: Vec::new(),
            headline: serde_json::Map::new(),
        })
    }
}

/// The scenario's workload under each of its EPF policies.
pub struct HybridRun<'a> {
    sc: &'a HybridConfig,
    w: HybridWorkload,
    service: Vec<ServiceRow>,
    headline: serde_json::Map<String, serde_json::Value>,
}

impl Experiment for HybridRun<'_> {
    /// The index of a policy in `policies`.
    type Point = usize;
    type Row = HybridRow;

    fn unit(&self) -> &'static str {
        "policies"
    }

    fn points(&self) -> Vec<usize> {
        (0..self.sc.policies.len()).collect()
    }

    fn run_point(
        &mut self,
        i: usize,
        ctx: &Ctx,
        out: &mut Output<HybridRow>,
    ) -> Result<Step<usize>, RunError> {
        let (sc, w) = (self.sc, &self.w);
        let p = &sc.policies[i];
        let r = simulate(sc, w, p, ctx.seed())
            .map_err(|e| ctx.error(&format!("policies.{i}.name"), e))?;
        out.rows.push(row(sc, w, p, &r));
        out.warnings.extend(gc_share_warning(p, &r.stats));
        self.service
            .extend(service_rows(&p.label(), sc.device.dram_mib, &r.stats));
        self.headline.insert(
            format!("runtime_s[{}]", p.label()),
            json!(r.stats.runtime_ns as f64 / 1e9),
        );
        Ok(Step::Done)
    }

    fn finish(self, mut out: Output<HybridRow>) -> Result<Output<HybridRow>, RunError> {
        out.table("service", &self.service);
        out.headline = self.headline;
        let h = &mut out.headline;
        h.insert("workload".into(), json!(self.w.name));
        h.insert("events".into(), json!(self.w.events()));
        h.insert("dram_mib".into(), json!(self.sc.device.dram_mib));
        Ok(out)
    }
}
