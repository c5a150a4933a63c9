//! The worked example of docs/architecture.md, "How to add a module": a complete small
//! module, compiled and tested here so the tutorial cannot drift from the skeleton.

use hmsim::config::{Validate, Validator};
use hmsim::device::Catalog;
use hmsim::error::RunError;
use hmsim::result_row;
use hmsim::scenario::{self, Ctx, NoProgress, Output, RunOutput, Scenario};
use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Parameters of an `mdl-queue` run: one table, every key with a default.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueueConfig {
    /// Catalog device whose read latency is the service time of one request.
    pub device: String,
    /// Offered loads as utilisations of the device (arrival rate × service time).
    pub utilizations: Vec<f64>,
    /// Requests simulated per load.
    pub requests: u64,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            device: "optane-pmem".into(),
            utilizations: vec![0.3, 0.6, 0.9],
            requests: 200_000,
        }
    }
}

impl Validate for QueueConfig {
    fn validate(&self, v: &mut Validator) {
        v.range("requests", self.requests, 1_000, 100_000_000, "requests");
        if self.utilizations.is_empty() {
            v.fail("utilizations", "expected at least one load");
        }
        for (i, &u) in self.utilizations.iter().enumerate() {
            // An M/D/1 queue is stable only below full load.
            v.range(&format!("utilizations.{i}"), u, 0.01, 0.99, "(utilisation)");
        }
    }
}

/// Response times (ns) of `n` requests through one server of fixed service time
/// `service_ns`, arrivals Poisson at `utilization / service_ns` (Lindley's recursion:
/// the next wait is this wait plus the service, less the gap to the next arrival).
pub fn response_times_ns(
    service_ns: f64,
    utilization: f64,
    n: u64,
    rng: &mut impl Rng,
) -> Vec<f64> {
    let mean_gap_ns = service_ns / utilization;
    let mut wait_ns = 0.0_f64;
    (0..n)
        .map(|_| {
            let response = wait_ns + service_ns;
            let gap_ns = -mean_gap_ns * (1.0 - rng.random::<f64>()).ln();
            wait_ns = (wait_ns + service_ns - gap_ns).max(0.0);
            response
        })
        .collect()
}

/// Pollaczek–Khinchine mean response time of M/D/1: S + ρS / (2(1 − ρ)).
pub fn md1_mean_response_ns(service_ns: f64, utilization: f64) -> f64 {
    service_ns + utilization * service_ns / (2.0 * (1.0 - utilization))
}

result_row! {
    /// One offered load.
    pub struct QueueRow {
        device: String ["", "catalog device"],
        utilization: f64 ["", "offered load over service rate"],
        service_ns: f64 ["ns", "service time: the device's read latency"],
        mean_latency_ns: f64 ["ns", "simulated mean response time"],
        p99_latency_ns: f64 ["ns", "simulated 99th percentile response time"],
        md1_mean_latency_ns: f64 ["ns", "closed-form M/D/1 mean response time"],
    }
}

/// The module: its name, its config, its row, its model.
pub struct MdlQueue;

impl Scenario for MdlQueue {
    const MODULE: &'static str = "mdl-queue";
    const ABOUT: &'static str = "M/D/1 latency of a catalog device under Poisson load";
    type Config = QueueConfig;
    type Row = QueueRow;

    fn run(cfg: &QueueConfig, ctx: &Ctx) -> Result<Output<QueueRow>, RunError> {
        let service_ns = ctx.device(&cfg.device, "device")?.read.latency_ns;
        let mut out = Output::new(Vec::new());
        for (i, &u) in cfg.utilizations.iter().enumerate() {
            // One stream per load: adding a load never changes another load's numbers.
            let mut rng = ctx.rng(&format!("arrivals.{i}"));
            let mut t = response_times_ns(service_ns, u, cfg.requests, &mut rng);
            t.sort_by(f64::total_cmp);
            out.rows.push(QueueRow {
                device: cfg.device.clone(),
                utilization: u,
                service_ns,
                mean_latency_ns: t.iter().sum::<f64>() / t.len() as f64,
                p99_latency_ns: t[(t.len() * 99) / 100],
                md1_mean_latency_ns: md1_mean_response_ns(service_ns, u),
            });
        }
        out.headline.insert("service_ns".into(), json!(service_ns));
        Ok(out)
    }
}

const SCENARIO: &str = r#"
module = "mdl-queue"
seed = 7
device = "optane-pmem"
utilizations = [0.3, 0.6]
"#;

/// What the module registry does for `module = "mdl-queue"` (one `Entry` in registry.rs).
fn run(text: &str) -> Result<RunOutput, RunError> {
    scenario::run::<MdlQueue>(text, "queue.toml", &Catalog::builtin(), &NoProgress)
}

#[test]
fn simulated_mean_matches_the_closed_form() {
    let out = run(SCENARIO).unwrap();
    assert_eq!(out.rows.len(), 2);
    for row in &out.rows {
        let sim = row["mean_latency_ns"].as_f64().unwrap();
        let exact = row["md1_mean_latency_ns"].as_f64().unwrap();
        assert!((sim / exact - 1.0).abs() < 0.02, "{sim} vs {exact}");
        assert!(row["p99_latency_ns"].as_f64().unwrap() > sim);
    }
}

#[test]
fn same_seed_same_rows_other_seed_other_rows() {
    let a = run(SCENARIO).unwrap();
    assert_eq!(a.rows, run(SCENARIO).unwrap().rows);
    let other = run(&SCENARIO.replace("seed = 7", "seed = 8")).unwrap();
    assert_ne!(a.rows, other.rows);
}

#[test]
fn bad_input_names_the_key() {
    let e = run(&SCENARIO.replace("0.6]", "1.2]")).unwrap_err();
    assert!(e.to_string().contains("utilizations.1"), "{e}");
    let e = run(&SCENARIO.replace("\"optane-pmem\"", "\"no-such-device\"")).unwrap_err();
    assert!(e.to_string().contains("device"), "{e}");
    let e = run(&format!("{SCENARIO}colour = 1\n")).unwrap_err();
    assert!(e.to_string().contains("colour"), "{e}");
}
