//! The `pmem` scenario: a microbenchmark through caches → WPQ → XPBuffer → AIT → media.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::config::PmemConfig;
use super::driver::{run_workload, DimmSpec, PmemWorkload};
use super::lifetime;
use crate::cache::CacheConfig;
use crate::config::{parse_toml, Validate, Validator};
use crate::device::{Catalog, DeviceKind};
use crate::error::ConfigError;
use crate::registry::RunOutput;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PmemScenario {
    pub module: String,
    #[serde(default)]
    pub seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub pmem: PmemConfig,
    #[serde(default)]
    pub cache: CacheConfig,
    pub workload: PmemWorkload,
    /// How many hottest 4 KiB ranges to report.
    #[serde(default = "ten")]
    pub top_n: usize,
}

fn ten() -> usize {
    10
}

impl Validate for PmemScenario {
    fn validate(&self, v: &mut Validator) {
        v.nested("pmem", &self.pmem);
        v.nested("cache", &self.cache);
        v.nested("workload", &self.workload);
        v.range("top_n", self.top_n, 0, 10_000, "");
    }
}

fn insert(m: &mut Map<String, Value>, k: &str, v: Value) {
    m.insert(k.to_string(), v);
}

pub fn run(text: &str, file: &str, catalog: &Catalog) -> Result<RunOutput, ConfigError> {
    let sc: PmemScenario = parse_toml(text, file)?;
    Validator::check(file, text, &sc)?;
    let dev = catalog.require(&sc.pmem.device, file, "pmem.device")?;
    if dev.kind != DeviceKind::Memory {
        return Err(ConfigError::new(
            file,
            "pmem.device",
            format!("'{}' is a block device; expected a memory device", dev.name),
        ));
    }
    let rated = dev
        .endurance
        .as_ref()
        .and_then(|e| e.tbw_bytes)
        .ok_or_else(|| {
            ConfigError::new(
                file,
                "pmem.device",
                format!(
                    "device '{}' has no endurance.tbw_bytes (rated bytes written)",
                    dev.name
                ),
            )
        })?;
    let w = &sc.workload;
    let dimm = DimmSpec::from_rating(dev.capacity_bytes, rated);
    let (r, m) = run_workload(&sc.pmem, &sc.cache, w, dimm, sc.seed);
    let life = lifetime::report(
        r.counters.media_writes_64b,
        r.elapsed_s,
        rated,
        dev.capacity_bytes as f64,
        sc.pmem.dimms,
        r.max_logical_line_writes,
        r.max_physical_line_writes,
        &m.sys.page_media_writes(),
        sc.top_n,
    );
    let c = r.counters;
    let ratio = |a: u64, b: u64| {
        if b == 0 {
            Value::Null
        } else {
            json!(a as f64 / b as f64)
        }
    };
    let mut row = Map::new();
    for (k, v) in [
        (
            "pattern",
            serde_json::to_value(w.pattern).unwrap_or(Value::Null),
        ),
        ("threads", json!(w.threads)),
        ("footprint_bytes", json!(w.footprint_bytes)),
        ("access_bytes", json!(w.access_bytes)),
        (
            "flush",
            serde_json::to_value(w.persist).unwrap_or(Value::Null),
        ),
        ("persistence", json!(sc.pmem.persistence)),
        ("dimms", json!(sc.pmem.dimms)),
        ("stored_lines", json!(r.stored_lines)),
        ("loaded_lines", json!(r.loaded_lines)),
        ("flushed_lines", json!(r.flushed_lines)),
        (
            "write_amplification",
            ratio(c.media_writes_64b, c.write_requests),
        ),
        ("wa_cache_to_wpq", ratio(c.wpq_inserts, r.stored_lines)),
        ("wa_wpq_to_requests", ratio(c.write_requests, c.wpq_inserts)),
        ("wa_end_to_end", ratio(c.media_writes_64b, r.stored_lines)),
        ("bandwidth_gb_s", json!(r.bandwidth_gb_s)),
        ("elapsed_s", json!(r.elapsed_s)),
        (
            "write_latency_mean_ns",
            json!(r.write_latency.mean_us * 1e3),
        ),
        ("write_latency_p99_ns", json!(r.write_latency.p99_us * 1e3)),
        ("write_latency_p99999_us", json!(r.write_p99999_us)),
        ("read_latency_mean_ns", json!(r.read_latency.mean_us * 1e3)),
        ("max_line_media_writes", json!(r.max_logical_line_writes)),
    ] {
        insert(&mut row, k, v);
    }
    for (k, v) in c.columns().into_iter().chain(life.columns()) {
        row.insert(k.to_string(), v);
    }
    for (name, st) in ["l1", "l2", "llc"].iter().zip(m.h.level_stats()) {
        insert(&mut row, &format!("{name}_hits"), json!(st.hits));
        insert(&mut row, &format!("{name}_misses"), json!(st.misses));
        insert(
            &mut row,
            &format!("{name}_writebacks"),
            json!(st.writebacks),
        );
    }
    let mut out = RunOutput::new(
        "pmem",
        sc.seed,
        serde_json::to_value(&sc).unwrap_or(Value::Null),
    );
    let mut headline = Map::new();
    for k in [
        "write_amplification",
        "wa_end_to_end",
        "bandwidth_gb_s",
        "lifetime_years_no_wl",
        "rated_fraction_per_hour",
    ] {
        insert(&mut headline, k, row[k].clone());
    }
    out.headline = headline;
    out.rows.push(row);
    out.tables
        .insert("hot_ranges".into(), life.hot_range_rows());
    Ok(out)
}
