//! The `hybrid` scenario: one workload on one UMD under each listed EPF policy.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::host::{pages_needed, Host, HostConfig, HostStats};
use super::pigz::PigzLike;
use super::policy::PolicySpec;
use super::umd::Umd;
use super::workload::{from_trace, Workload, MB, PAGE_BYTES};
use crate::config::{parse_toml, Validate, Validator};
use crate::device::Catalog;
use crate::error::ConfigError;
use crate::flash::{build_gc, preset, Ftl, Geometry, GC_POLICIES, NAND_PRESETS};
use crate::registry::RunOutput;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HybridScenario {
    pub module: String,
    #[serde(default)]
    pub seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub device: DeviceSpec,
    #[serde(default)]
    pub flash: FlashSpec,
    #[serde(default)]
    pub precondition: Precondition,
    #[serde(default)]
    pub host: HostConfig,
    #[serde(default)]
    pub workload: WorkloadSpec,
    #[serde(default = "default_policies")]
    pub policies: Vec<PolicySpec>,
}

fn default_policies() -> Vec<PolicySpec> {
    ["no_EPF", "all_EPF", "smart_EPF"]
        .iter()
        .map(|n| PolicySpec::named(n))
        .collect()
}

crate::params! {
    #[params(check)]
    /// The UMD: logical capacity (what the OS sees) and its DRAM cache.
    #[derive(Debug, Clone)]
    pub struct DeviceSpec {
        pub capacity_mb: f64 = 2048.0 => range(0.0625, 16.0 * 1024.0 * 1024.0), "MB",
            "Logical capacity the OS sees (MB of 2^20 bytes).";
        pub dram_mb: f64 = 100.0 => any, "MB",
            "Internal DRAM cache (MB of 2^20 bytes), 0.004 to `capacity_mb`.";
        pub dram_read_ns: u64 = 50 => range(0, 1_000_000), "ns",
            "Internal DRAM page read (the study's 50 ns).";
        pub dram_write_ns: u64 = 50 => range(0, 1_000_000), "ns",
            "Internal DRAM page write (the study's 50 ns).";
        pub victim_release: String = VICTIM_RELEASE[0].into() => any, "",
            "When a dirty victim's frame can take the faulting page: `programmed` (its program is done; the spec's) or `page_register` (its data is in the die's page register).";
    }
}
/// Values of `device.victim_release`.
pub const VICTIM_RELEASE: &[&str] = &["programmed", "page_register"];

crate::params! {
    #[params(check)]
    /// The UMD's NAND flash and its FTL.
    #[derive(Debug, Clone)]
    pub struct FlashSpec {
        pub nand: String = "study".into() => any, "", "NAND timing preset.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub read_us: Option<f64> = None => range(0.0, 1e6), "µs", "Override of the preset's page read.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub program_us: Option<f64> = None => range(0.0, 1e6), "µs",
            "Override of the preset's page program.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub erase_us: Option<f64> = None => range(0.0, 1e6), "µs",
            "Override of the preset's block erase.";
        pub pages_per_block: u32 = 64 => range(1, 65536), "pages", "Pages per erase block.";
        pub over_provisioning: f64 = 0.07 => range(0.0, 10.0), "",
            "Spare flash beyond the logical capacity, as a share of it.";
        pub channels: u32 = 4 => range(1, 1024), "", "Flash channels.";
        pub dies_per_channel: u32 = 2 => range(1, 1024), "", "Dies on each channel.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub channel_gb_s: Option<f64> = None => range(1e-6, 1e6), "GB/s",
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
    pub struct WorkloadSpec {
        pub threads: u16 = 5 => range(1, 4096), "", "Application threads.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub trace: Option<String> = None => any, "", "A trace file, relative to the scenario.";
        pub share_address_space: bool = false => any, "",
            "Trace replay: threads of one process (shared pages) or one process each.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub input_mb: Option<f64> = None => any, "MB",
            "Trace replay: the input size the trace stands for, for the results table (0 to 1e9).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub pigz: Option<PigzLike> = None => nested, "", "The pigz-like generator (docs/hybrid.md).";
    }
}

impl DeviceSpec {
    fn check(&self, v: &mut Validator) {
        v.range(
            "dram_mb",
            self.dram_mb,
            0.004,
            self.capacity_mb,
            "MB (at most capacity_mb)",
        );
        v.one_of("victim_release", &self.victim_release, VICTIM_RELEASE);
    }
}

impl FlashSpec {
    fn check(&self, v: &mut Validator) {
        let names: Vec<&str> = NAND_PRESETS.iter().map(|p| p.0).collect();
        v.one_of("nand", &self.nand, &names);
        v.one_of("gc", &self.gc, GC_POLICIES);
    }
}

impl WorkloadSpec {
    fn check(&self, v: &mut Validator) {
        if self.trace.is_some() && self.pigz.is_some() {
            v.fail("pigz", "give either trace or [workload.pigz], not both");
        }
        if let Some(m) = self.input_mb {
            if self.trace.is_none() {
                v.fail(
                    "input_mb",
                    "only for a trace; [workload.pigz] has its own input_mb",
                );
            }
            v.range("input_mb", m, 0.0, 1e9, "MB");
        }
    }
}

impl Validate for HybridScenario {
    fn validate(&self, v: &mut Validator) {
        v.nested("device", &self.device);
        v.nested("flash", &self.flash);
        v.nested("precondition", &self.precondition);
        v.nested("host", &self.host);
        v.nested("workload", &self.workload);
        if self.policies.is_empty() {
            v.fail("policies", "empty; list at least one [[policies]]");
        }
        for (i, p) in self.policies.iter().enumerate() {
            v.nested(&format!("policies.{i}"), p);
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

impl HybridScenario {
    pub fn logical_pages(&self) -> u32 {
        (self.device.capacity_mb * MB as f64 / PAGE_BYTES as f64) as u32
    }

    pub fn dram_frames(&self) -> u32 {
        ((self.device.dram_mb * MB as f64 / PAGE_BYTES as f64) as u32).max(1)
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

    /// A preconditioned UMD with an empty DRAM cache.
    pub fn build_umd(&self) -> Umd {
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
            build_gc(&f.gc, self.seed).expect("validated"),
        );
        let p = self.precondition;
        ftl.precondition(
            p.sequential_fraction,
            p.random_fraction,
            &mut crate::rng::stream(self.seed, "hybrid-precondition"),
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

    pub fn load_workload(&self, file: &str) -> Result<Workload, ConfigError> {
        let w = &self.workload;
        match &w.trace {
            Some(rel) => {
                let base = Path::new(file)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                from_trace(
                    &base.join(rel),
                    file,
                    "workload.trace",
                    w.threads,
                    w.share_address_space,
                    w.input_mb.unwrap_or(0.0),
                )
            }
            None => Ok(w.pigz.clone().unwrap_or_default().generate(self.seed)),
        }
    }
}

/// One scenario run: the policy's host statistics and the device's.
pub struct PolicyRun {
    pub stats: HostStats,
    pub gc_runs: u64,
    pub waf: Option<f64>,
    pub erases: u64,
    pub max_erase_count: u32,
    pub writebacks: u64,
    pub stale_reads: u64,
}

pub fn simulate(sc: &HybridScenario, w: &Workload, p: &PolicySpec) -> PolicyRun {
    let mut umd = sc.build_umd();
    let policy = p.build();
    let stats = Host::new(sc.host, &mut umd, policy.as_ref(), w, sc.seed).run(w);
    PolicyRun {
        stats,
        gc_runs: umd.ftl.stats.gc_runs,
        waf: umd.ftl.stats.waf(),
        erases: umd.ftl.stats.erases,
        max_erase_count: umd.ftl.erase_counts().iter().copied().max().unwrap_or(0),
        writebacks: umd.writebacks,
        stale_reads: umd.stale_reads,
    }
}

fn ratio(a: u64, b: u64) -> Value {
    if b == 0 {
        Value::Null
    } else {
        json!(a as f64 / b as f64)
    }
}

fn percentile(sorted: &[u64], q: f64) -> Value {
    if sorted.is_empty() {
        return Value::Null;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    json!(sorted[i] as f64 / 1e3)
}

/// Internal faults served within the smart threshold's default (no program, erase or queue
/// in front of the read): the study's "short" faults.
fn short_faults(s: &HostStats) -> u64 {
    let limit = (crate::hybrid::policy::DEFAULT_THRESHOLD_US * 1e3) as u64;
    s.service.iter().filter(|x| x.1 <= limit).count() as u64
}

fn row(sc: &HybridScenario, w: &Workload, p: &PolicySpec, r: &PolicyRun) -> Map<String, Value> {
    let s = &r.stats;
    let mut service: Vec<u64> = s.service.iter().map(|x| x.1).collect();
    service.sort_unstable();
    let over = s.service.iter().filter(|x| x.1 > x.0).count() as u64;
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    put("policy", json!(p.name));
    put("label", json!(p.label()));
    put(
        "threshold_us",
        if p.name == "smart_EPF" {
            json!(p.threshold_us())
        } else {
            Value::Null
        },
    );
    put("workload", json!(w.name));
    put("dram_mb", json!(sc.device.dram_mb));
    put("capacity_mb", json!(sc.device.capacity_mb));
    put("input_mb", json!(w.input_mb));
    put(
        "footprint_mb",
        json!(w.footprint_pages() as f64 * PAGE_BYTES as f64 / MB as f64),
    );
    put("threads", json!(w.threads.len()));
    put(
        "output_ratio",
        if w.output_ratio > 0.0 {
            json!(w.output_ratio)
        } else {
            Value::Null
        },
    );
    put(
        "resident_os_mb",
        json!(w.resident_pages as f64 * PAGE_BYTES as f64 / MB as f64),
    );
    put("gc_policy", json!(sc.flash.gc));
    put("nand", json!(sc.flash.nand));
    put("runtime_s", json!(s.runtime_ns as f64 / 1e9));
    put("umd_accesses", json!(s.umd_accesses));
    put("internal_faults", json!(s.internal_faults));
    put(
        "internal_fault_share",
        ratio(s.internal_faults, s.umd_accesses),
    );
    put("short_faults", json!(short_faults(s)));
    put("stale_reads", json!(r.stale_reads));
    put("epf_raised", json!(s.epf_raised));
    put("epf_share", ratio(s.epf_raised, s.internal_faults));
    put("epf_reraised", json!(s.epf_reraised));
    put("fault_waits", json!(s.fault_waits));
    put("stall_s", json!(s.stall_ns as f64 / 1e9));
    put("idle_s", json!(s.idle_ns as f64 / 1e9));
    put("context_switches", json!(s.context_switches));
    put("idle_switches", json!(s.idle_switches));
    put("wakeups", json!(s.wakeups));
    put("timer_interrupts", json!(s.timer_interrupts));
    put("handoff_waits", json!(s.handoff_waits));
    put("os_faults", json!(s.os_faults));
    put("itlb_misses", json!(s.itlb_misses));
    put("dtlb_misses", json!(s.dtlb_misses));
    put("victim_writebacks", json!(r.writebacks));
    put("gc_runs", json!(r.gc_runs));
    put("gc_runs_in_faults", json!(s.gc_runs_in_faults));
    put("flash_waf", r.waf.map_or(Value::Null, |x| json!(x)));
    put("erases", json!(r.erases));
    put("max_erase_count", json!(r.max_erase_count));
    put("service_p50_us", percentile(&service, 0.5));
    put("service_p99_us", percentile(&service, 0.99));
    put("service_max_us", percentile(&service, 1.0));
    put(
        "service_over_estimate_share",
        ratio(over, s.service.len() as u64),
    );
    m
}

/// Internal-fault service times in log2 µs bins, per policy (the distribution figure).
fn service_rows(label: &str, dram_mb: f64, s: &HostStats) -> Vec<Map<String, Value>> {
    let mut bins = [0u64; 40];
    for &(_, ns) in &s.service {
        let us = (ns / 1000).max(1);
        bins[63 - us.leading_zeros() as usize] += 1;
    }
    bins.iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(b, &n)| {
            let mut m = Map::new();
            m.insert("label".into(), json!(label));
            m.insert("dram_mb".into(), json!(dram_mb));
            m.insert("service_lo_us".into(), json!(1u64 << b));
            m.insert("service_hi_us".into(), json!(1u64 << (b + 1)));
            m.insert("faults".into(), json!(n));
            m
        })
        .collect()
}

pub fn run(text: &str, file: &str, _catalog: &Catalog) -> Result<RunOutput, ConfigError> {
    let sc: HybridScenario = parse_toml(text, file)?;
    Validator::check(file, text, &sc)?;
    let w = sc.load_workload(file)?;
    let need = pages_needed(&w, &sc.host);
    if need > sc.logical_pages() as u64 {
        return Err(ConfigError::new(
            file,
            "device.capacity_mb",
            format!(
                "the workload needs {need} pages ({:.1} MB) but the device holds {} pages; raise capacity_mb",
                need as f64 * PAGE_BYTES as f64 / MB as f64,
                sc.logical_pages()
            ),
        )
        .at_line(crate::config::line_of_key(text, "device.capacity_mb")));
    }
    let mut out = RunOutput::new(
        "hybrid",
        sc.seed,
        serde_json::to_value(&sc).unwrap_or(Value::Null),
    );
    let mut service = Vec::new();
    for p in &sc.policies {
        let r = simulate(&sc, &w, p);
        out.rows.push(row(&sc, &w, p, &r));
        service.extend(service_rows(&p.label(), sc.device.dram_mb, &r.stats));
        out.headline.insert(
            format!("runtime_s[{}]", p.label()),
            json!(r.stats.runtime_ns as f64 / 1e9),
        );
    }
    out.tables.insert("service".into(), service);
    let h = &mut out.headline;
    h.insert("workload".into(), json!(w.name));
    h.insert("events".into(), json!(w.events()));
    h.insert("dram_mb".into(), json!(sc.device.dram_mb));
    Ok(out)
}
