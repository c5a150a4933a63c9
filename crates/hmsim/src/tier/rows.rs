//! What a tiering run reports: one results row per (policy, intensity) from the steady
//! state (the means over the last `measure_last_s`), and one timeline row per quantum.
//!
//! Some columns are named after the scenario's tiers (`{tier}_latency_ns`): a row carries
//! them in a flattened map at their place, and the declared columns name them with the
//! `{tier}` placeholder, which the skeleton spells out for a run
//! (`Tiering::column_spellings`).

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::cost;
use super::pmem_tier::PmemColumns;
use super::quantum::{QuantumRecord, SimResult};
use super::scenario::TierScenario;
use super::steady::Steadiness;
use crate::scenario::{columns_len, concat_columns, Column, Dtype, ResultRow};
use crate::stats::Moments;

/// Mean of the values in order (0 when empty), through the one running-moments type.
fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    Moments::of(xs).mean()
}

/// The quanta of the last `measure_last_s` of a run (at least one).
pub(super) fn tail<'a>(sc: &TierScenario, r: &'a SimResult) -> &'a [QuantumRecord] {
    window(sc, &r.timeline)
}

/// The last `measure_last_s` of `timeline` (at least one quantum): a run's measured window.
pub(super) fn window<'a>(sc: &TierScenario, timeline: &'a [QuantumRecord]) -> &'a [QuantumRecord] {
    &timeline[timeline.len().saturating_sub(window_quanta(sc))..]
}

/// The quanta of a run's measured window (at least one).
pub(super) fn window_quanta(sc: &TierScenario) -> usize {
    ((sc.sim.measure_last_s / sc.sim.quantum_s).round() as usize).max(1)
}

/// Mean of `f` over the last `measure_last_s` of a run.
pub(super) fn tail_mean(
    sc: &TierScenario,
    r: &SimResult,
    f: impl Fn(&QuantumRecord) -> f64,
) -> f64 {
    mean(tail(sc, r).iter().map(f))
}

/// A column declaration (the `result_row!` fields, for the rows written by hand below).
const fn col(name: &'static str, unit: &'static str, dtype: Dtype, doc: &'static str) -> Column {
    Column {
        name,
        unit,
        dtype,
        nullable: false,
        measured: false,
        doc,
    }
}

const fn nullable(c: Column) -> Column {
    Column {
        nullable: true,
        ..c
    }
}

use Dtype::{Bool, Float, Int, Str};

/// One run of one policy at one antagonist intensity.
#[derive(Debug, Clone, Serialize)]
pub struct TierRow {
    pub policy: String,
    pub intensity: u32,
    pub antagonist_cores: u32,
    pub object_size_bytes: u64,
    pub page_bytes: u64,
    pub throughput_gb_s: f64,
    pub throughput_mops: f64,
    /// `{tier}_latency_ns`, `{tier}_bandwidth_gb_s`, `{tier}_utilization`,
    /// `{tier}_bottleneck` for each tier in order.
    #[serde(flatten)]
    pub per_tier: Map<String, Value>,
    pub hot_share_default: f64,
    pub alt_hot_share: f64,
    pub alt_traffic_share: f64,
    pub migrations: u64,
    pub migrated_gb: f64,
    pub failed_migrations: u64,
    pub huge_pages_split: u64,
    pub policy_samples: u64,
    pub policy_pages_scanned: u64,
    pub policy_hint_faults: u64,
    pub policy_cpu_s: f64,
    pub policy_cpu_cores: f64,
    /// The PMem write path's columns, when the alternate tier is PMem.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub pmem: Option<PmemColumns>,
    pub oracle_hot_share_default: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replayed_accesses: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pebs_samples: Option<u64>,
    /// Passes over the trace file the measured window replayed (trace-file runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_trace_passes: Option<f64>,
    /// Hit rates of the caches a trace went through (cache-filtered trace runs only).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheColumns>,
    /// Whether the measured window is steady (docs/tiering.md, *Is the window steady?*).
    pub converged: bool,
    pub window_throughput_drift: f64,
    pub window_migration_share: f64,
    /// The run's simulated time, with `sim.until_steady` (it may exceed `duration_s`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_duration_s: Option<f64>,
}

/// The caches' columns of a cache-filtered trace run, over the whole run (the first pass's
/// cold misses included).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CacheColumns {
    pub l1_hit_rate: f64,
    pub l2_hit_rate: f64,
    pub llc_hit_rate: f64,
    pub memory_lines_per_access: f64,
    pub trace_footprint_bytes: u64,
}

/// Columns of [`TierRow`] before and after the PMem ones.
#[rustfmt::skip]
const ROW_HEAD: &[Column] = &[
    col("policy", "", Str, "tiering policy (or `best`, the oracle sweep)"),
    col("intensity", "", Int, "antagonist intensity"),
    col("antagonist_cores", "cores", Int, "streaming antagonist cores (at the start)"),
    col("object_size_bytes", "B", Int, "bytes per application access"),
    col("page_bytes", "B", Int, "page size"),
    col("throughput_gb_s", "GB/s", Float, "application traffic, steady state"),
    col("throughput_mops", "Mops/s", Float, "application accesses, steady state"),
    col("{tier}_latency_ns", "ns", Float, "loaded latency of the tier, steady state"),
    col("{tier}_bandwidth_gb_s", "GB/s", Float, "total traffic on the tier, steady state"),
    col("{tier}_utilization", "", Float, "traffic / saturation bandwidth of the tier's tightest resource"),
    col("{tier}_bottleneck", "", Str, "the tier's tightest resource (`media` or a path resource)"),
    col("hot_share_default", "", Float, "share of the hot set in the default tier, steady state"),
    col("alt_hot_share", "", Float, "share of the hot set in the alternate tiers, steady state"),
    col("alt_traffic_share", "", Float, "share of application accesses to the alternate tiers, steady state"),
    col("migrations", "", Int, "pages migrated"),
    col("migrated_gb", "GB", Float, "bytes migrated"),
    col("failed_migrations", "", Int, "migration requests refused (full tier, no budget, bad split)"),
    col("huge_pages_split", "", Int, "huge pages split into 4 KiB pages"),
    col("policy_samples", "", Int, "PEBS samples the policy processed"),
    col("policy_pages_scanned", "", Int, "pages the policy's scans visited"),
    col("policy_hint_faults", "", Int, "NUMA hint faults the policy took"),
    col("policy_cpu_s", "s", Float, "CPU time of the policy's work (docs/tiering.md cost model)"),
    col("policy_cpu_cores", "cores", Float, "policy CPU time per second of run"),
];
#[rustfmt::skip]
const ROW_TAIL: &[Column] = &[
    nullable(col("oracle_hot_share_default", "", Float, "hot-set share in the default tier of the best oracle placement (`best` only)")),
    nullable(col("replayed_accesses", "", Int, "stream accesses replayed (trace-driven runs)")),
    nullable(col("pebs_samples", "", Int, "PEBS samples taken (trace-driven runs)")),
    nullable(col("window_trace_passes", "", Float, "passes over the trace file the measured window replayed (trace-file runs; below 2 the run warns: its numbers depend on where the window falls in the trace)")),
    nullable(col("l1_hit_rate", "", Float, "L1 hits / L1 lookups over the run (cache-filtered traces)")),
    nullable(col("l2_hit_rate", "", Float, "L2 hits / L2 lookups (the L1 misses) over the run (cache-filtered traces)")),
    nullable(col("llc_hit_rate", "", Float, "LLC hits / LLC lookups (the L2 misses) over the run (cache-filtered traces)")),
    nullable(col("memory_lines_per_access", "lines", Float, "memory reads + dirty write-backs per trace access over the run (cache-filtered traces)")),
    nullable(col("trace_footprint_bytes", "B", Int, "distinct 64 B lines the trace touches x 64 (cache-filtered traces)")),
    col("converged", "", Bool, "the measured window is steady: |window_throughput_drift| <= 0.01 and window_migration_share <= 0.05"),
    col("window_throughput_drift", "", Float, "throughput change from the measured window's first half to its second, / its mean"),
    col("window_migration_share", "", Float, "bytes migrated in the measured window / application bytes in it"),
    nullable(col("run_duration_s", "s", Float, "the run's simulated time (`sim.until_steady` runs only)")),
];

const ROW_PARTS: &[&[Column]] = &[ROW_HEAD, PmemColumns::COLUMNS, ROW_TAIL];
const ROW_COLUMNS: [Column; columns_len(ROW_PARTS)] = concat_columns(ROW_PARTS);

impl ResultRow for TierRow {
    const COLUMNS: &'static [Column] = &ROW_COLUMNS;
}

/// The results row of one run: its steady state (the tail's means) and its totals.
pub(super) fn row_of(sc: &TierScenario, policy: &str, intensity: u32, r: &SimResult) -> TierRow {
    let tail = tail(sc, r);
    let avg = |f: &dyn Fn(&QuantumRecord) -> f64| mean(tail.iter().map(f));
    let mut per_tier = Map::new();
    for (t, spec) in sc.tiers.iter().enumerate() {
        per_tier.insert(
            format!("{}_latency_ns", spec.name),
            json!(avg(&|q| q.latency_ns[t])),
        );
        let bw = avg(&|q| q.bandwidth_gb_s[t]);
        per_tier.insert(format!("{}_bandwidth_gb_s", spec.name), json!(bw));
        // How close the tier runs to its tightest resource, and which resource that is.
        let rf = avg(&|q| q.read_fraction[t]);
        per_tier.insert(
            format!("{}_utilization", spec.name),
            json!(bw / spec.saturation_gb_s(rf)),
        );
        let b = spec.bottleneck(rf);
        let name = if b == 0 {
            "media"
        } else {
            spec.path[b - 1].name.as_str()
        };
        per_tier.insert(format!("{}_bottleneck", spec.name), json!(name));
    }
    let cpu = cost::cpu_seconds(&r.work, r.copy_cpu_ns, sc.sim.duration_s);
    let steady = Steadiness::of(tail, sc.sim.quantum_s);
    TierRow {
        policy: policy.to_string(),
        intensity,
        antagonist_cores: intensity * sc.antagonist.cores_per_intensity,
        object_size_bytes: sc.workload.object_size_bytes,
        page_bytes: sc.sim.page_bytes,
        throughput_gb_s: avg(&|q| q.throughput_gb_s),
        throughput_mops: avg(&|q| q.mops),
        per_tier,
        hot_share_default: avg(&|q| q.hot_share_default),
        alt_hot_share: 1.0 - avg(&|q| q.hot_share_default),
        alt_traffic_share: avg(&|q| q.alt_traffic_share),
        migrations: r.migrations,
        migrated_gb: r.migrated_bytes as f64 / 1e9,
        failed_migrations: r.failed_migrations,
        huge_pages_split: r.pages.split_count(),
        policy_samples: r.work.samples_processed,
        policy_pages_scanned: r.work.pages_scanned,
        policy_hint_faults: r.work.hint_faults,
        policy_cpu_s: cpu,
        policy_cpu_cores: cpu / sc.sim.duration_s,
        pmem: None,
        oracle_hot_share_default: None,
        replayed_accesses: None,
        pebs_samples: None,
        window_trace_passes: None,
        cache: None,
        converged: steady.converged(),
        window_throughput_drift: steady.drift,
        run_duration_s: None,
        window_migration_share: steady.migration_share,
    }
}

/// One quantum of one run (a row of the `timeline` table).
#[derive(Debug, Clone, Serialize)]
pub(super) struct TimelineRow {
    pub policy: String,
    pub intensity: u32,
    pub time_s: f64,
    pub throughput_gb_s: f64,
    pub throughput_mops: f64,
    /// `{tier}_latency_ns` for each tier in order.
    #[serde(flatten)]
    pub latency_ns: Map<String, Value>,
    pub hot_share_default: f64,
    pub migrated_bytes: u64,
}

impl ResultRow for TimelineRow {
    #[rustfmt::skip]
    const COLUMNS: &'static [Column] = &[
        col("policy", "", Str, "tiering policy"),
        col("intensity", "", Int, "antagonist intensity"),
        col("time_s", "s", Float, "start of the quantum"),
        col("throughput_gb_s", "GB/s", Float, "application traffic"),
        col("throughput_mops", "Mops/s", Float, "application accesses"),
        col("{tier}_latency_ns", "ns", Float, "loaded latency of the tier"),
        col("hot_share_default", "", Float, "share of the hot set in the default tier"),
        col("migrated_bytes", "B", Int, "bytes copied by migrations in the quantum"),
    ];
}

/// One quantum of run (`policy`, `intensity`) as a row of the `timeline` table.
pub(super) fn timeline_row(
    sc: &TierScenario,
    policy: &str,
    intensity: u32,
    q: &QuantumRecord,
) -> TimelineRow {
    TimelineRow {
        policy: policy.to_string(),
        intensity,
        time_s: q.time_s,
        throughput_gb_s: q.throughput_gb_s,
        throughput_mops: q.mops,
        latency_ns: sc
            .tiers
            .iter()
            .enumerate()
            .map(|(t, spec)| (format!("{}_latency_ns", spec.name), json!(q.latency_ns[t])))
            .collect(),
        hot_share_default: q.hot_share_default,
        migrated_bytes: q.migrated_bytes,
    }
}
