//! The worked example of docs/architecture.md, "How to add a module": a complete small
//! module, compiled and tested here so the tutorial cannot drift from the skeleton. Each
//! `// tutorial: NAME` line starts the region the doc shows as one code block, in order.

// tutorial: imports
use hmsim::config::params::{markdown, Params};
use hmsim::config::Validator;
use hmsim::device::Catalog;
use hmsim::error::RunError;
use hmsim::result_row;
use hmsim::scenario::{self, Ctx, Experiment, NoProgress, Output, RunOutput, Scenario, Step};
use rand::Rng;
use serde_json::json;

// tutorial: config
hmsim::params! {
    #[params(check)]
    /// A `queue` run: one server, Poisson arrivals, exponential service times.
    #[derive(Debug, Clone)]
    pub struct QueueConfig {
        pub device: String = "optane-pmem".into() => any, "",
            "Catalog device whose read latency is the mean service time.";
        pub utilizations: Vec<f64> = vec![0.5] => any, "",
            "Offered loads, one run each: arrival rate × mean service time (0.01 to 0.99).";
        pub requests: u64 = 200_000 => range(1_000, 100_000_000), "requests",
            "Requests measured.";
        pub warmup_requests: u64 = 10_000 => range(0, 10_000_000), "requests",
            "Requests simulated before measuring, so the queue forgets that it started empty.";
    }
}

impl QueueConfig {
    /// Checks across keys, called by the generated `validate` after the field checks.
    fn check(&self, v: &mut Validator) {
        for (i, u) in self.utilizations.iter().enumerate() {
            if !(0.01..=0.99).contains(u) {
                let key = format!("utilizations.{i}");
                v.fail(&key, format!("{u} is out of range; allowed 0.01 to 0.99"));
            }
        }
        if self.warmup_requests >= self.requests {
            v.fail("warmup_requests", "must be fewer than `requests`");
        }
    }
}

// tutorial: model
/// Response times (ns) of `warmup + n` requests through one server whose service times are
/// exponential with mean `service_ns`, arrivals Poisson at `utilization / service_ns`
/// (Lindley's recursion: the next wait is this wait plus this service, less the gap to the
/// next arrival). The first `warmup` are dropped.
pub fn response_times_ns(
    service_ns: f64,
    utilization: f64,
    warmup: u64,
    n: u64,
    rng: &mut impl Rng,
) -> Vec<f64> {
    let mean_gap_ns = service_ns / utilization;
    // An exponential draw of mean `mean`; 1 − u is in (0, 1], so the log is finite.
    let mut exp = |mean: f64| -mean * (1.0 - rng.random::<f64>()).ln();
    let mut wait_ns = 0.0_f64;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..warmup + n {
        let s = exp(service_ns);
        if i >= warmup {
            out.push(wait_ns + s);
        }
        wait_ns = (wait_ns + s - exp(mean_gap_ns)).max(0.0);
    }
    out
}

/// M/M/1 time in system: exponential with mean S / (1 − ρ), i.e. 1 / (μ − λ).
pub fn mm1_mean_ns(service_ns: f64, utilization: f64) -> f64 {
    service_ns / (1.0 - utilization)
}

/// Its 99th percentile: ln(100) times the mean.
pub fn mm1_p99_ns(service_ns: f64, utilization: f64) -> f64 {
    100f64.ln() * mm1_mean_ns(service_ns, utilization)
}

/// Requests in one relaxation time of M/M/1, ρ / (1 − √ρ)²: how many it takes the queue
/// to forget its state.
pub fn mm1_relaxation_requests(utilization: f64) -> f64 {
    utilization / (1.0 - utilization.sqrt()).powi(2)
}

// tutorial: row
result_row! {
    /// One run (`results.csv`).
    pub struct QueueRow {
        device: String ["", "catalog device"],
        utilization: f64 ["", "offered load"],
        service_ns: f64 ["", "mean service time: the device's read latency"],
        mean_latency_ns: f64 ["", "simulated mean time in system"],
        p99_latency_ns: f64 ["", "simulated 99th percentile time in system"],
        mm1_mean_latency_ns: f64 ["", "closed-form M/M/1 mean time in system"],
        mm1_p99_latency_ns: f64 ["", "closed-form M/M/1 99th percentile"],
    }
}

// tutorial: scenario
/// The module: its name, its config, its row, its experiment.
pub struct Queue;

impl Scenario for Queue {
    const MODULE: &'static str = "queue";
    const ABOUT: &'static str = "M/M/1 latency of a catalog device under Poisson load";
    const DOCS: &'static str = "queue.md";
    const STUDY: &'static str = "queue";
    const SWEEP_METRICS: &'static [&'static str] = &["mean_latency_ns", "p99_latency_ns"];
    type Config = QueueConfig;
    type Row = QueueRow;
    type Experiment<'a> = QueueRuns<'a>;

    fn build<'a>(cfg: &'a QueueConfig, ctx: &Ctx<'a>) -> Result<QueueRuns<'a>, RunError> {
        let service_ns = ctx.device(&cfg.device, "device")?.read.latency_ns;
        Ok(QueueRuns { cfg, service_ns })
    }
}

// tutorial: experiment
/// The queue at each offered load of the scenario.
pub struct QueueRuns<'a> {
    cfg: &'a QueueConfig,
    service_ns: f64,
}

impl Experiment for QueueRuns<'_> {
    /// A utilization.
    type Point = f64;
    type Row = QueueRow;

    fn unit(&self) -> &'static str {
        "utilizations"
    }

    fn points(&self) -> Vec<f64> {
        self.cfg.utilizations.clone()
    }

    fn run_point(
        &mut self,
        u: f64,
        ctx: &Ctx,
        out: &mut Output<QueueRow>,
    ) -> Result<Step<f64>, RunError> {
        let (service_ns, n) = (self.service_ns, self.cfg.requests);
        // A stream per point, named after it: adding a point shifts no other point's numbers.
        let mut rng = ctx.rng(&format!("queue.arrivals.{u}"));
        let mut t = response_times_ns(service_ns, u, self.cfg.warmup_requests, n, &mut rng);
        t.sort_by(f64::total_cmp);
        out.rows.push(QueueRow {
            device: self.cfg.device.clone(),
            utilization: u,
            service_ns,
            mean_latency_ns: t.iter().sum::<f64>() / t.len() as f64,
            p99_latency_ns: t[t.len() * 99 / 100],
            mm1_mean_latency_ns: mm1_mean_ns(service_ns, u),
            mm1_p99_latency_ns: mm1_p99_ns(service_ns, u),
        });
        // A limit of the numbers, not an error: printed by the CLI, kept in summary.json.
        let relaxations = n as f64 / mm1_relaxation_requests(u);
        if relaxations < 100.0 {
            out.warnings.push(format!(
                "{n} requests are only {relaxations:.0} relaxation times at utilization {u}: \
                 the mean is noisy; raise `requests`"
            ));
        }
        Ok(Step::Done)
    }

    fn finish(self, mut out: Output<QueueRow>) -> Result<Output<QueueRow>, RunError> {
        out.headline
            .insert("service_ns".into(), json!(self.service_ns));
        Ok(out)
    }
}

// tutorial: tests
const SCENARIO: &str = r#"
module = "queue"
seed = 7
device = "optane-pmem"
utilizations = [0.6]
requests = 1000000
"#;

/// What the registry does for `module = "queue"` (one entry in registry.rs).
fn run(text: &str) -> Result<RunOutput, RunError> {
    scenario::run::<Queue>(text, "queue.toml", &Catalog::builtin(), &NoProgress)
}

#[test]
fn simulated_latency_matches_the_closed_form() {
    let out = run(SCENARIO).unwrap();
    let row = &out.rows[0];
    let s = row["service_ns"].as_f64().unwrap();
    assert!(s > 0.0);
    // 1 / (μ − λ) with μ = 1/S and λ = 0.6/S.
    let exact = 1.0 / (1.0 / s - 0.6 / s);
    assert!((row["mm1_mean_latency_ns"].as_f64().unwrap() / exact - 1.0).abs() < 1e-12);
    for (sim, closed) in [
        ("mean_latency_ns", "mm1_mean_latency_ns"),
        ("p99_latency_ns", "mm1_p99_latency_ns"),
    ] {
        let (a, b) = (row[sim].as_f64().unwrap(), row[closed].as_f64().unwrap());
        println!("{sim}: simulated {a:.1} ns, closed form {b:.1} ns");
        assert!((a / b - 1.0).abs() < 0.03, "{sim}: {a} vs {b}");
    }
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn same_seed_same_rows_other_seed_other_rows() {
    let a = run(SCENARIO).unwrap();
    assert_eq!(a.rows, run(SCENARIO).unwrap().rows);
    let other = run(&SCENARIO.replace("seed = 7", "seed = 8")).unwrap();
    assert_ne!(a.rows, other.rows);
}

#[test]
fn bad_input_names_the_key_and_line() {
    let e = run(&SCENARIO.replace("[0.6]", "[1.2]")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "queue.toml:5: key 'utilizations.0': 1.2 is out of range; allowed 0.01 to 0.99"
    );
    let e = run(&format!("{SCENARIO}warmup_requests = 2000000\n")).unwrap_err();
    assert!(
        e.to_string()
            .contains("queue.toml:7: key 'warmup_requests'"),
        "{e}"
    );
    let e = run(&SCENARIO.replace("\"optane-pmem\"", "\"no-such-device\"")).unwrap_err();
    assert!(e.to_string().contains("queue.toml:4") && e.to_string().contains("device"));
    let e = run(&format!("{SCENARIO}colour = 1\n")).unwrap_err();
    assert!(e.to_string().contains("colour"), "{e}");
}

/// Counts the points the skeleton announces and reports done.
#[derive(Default)]
struct Count(std::sync::Mutex<(u64, String, u64)>);

impl hmsim::scenario::Progress for Count {
    fn start(&self, total: u64, unit: &str) {
        let mut c = self.0.lock().unwrap();
        (c.0, c.1) = (total, unit.to_string());
    }
    fn advance(&self, n: u64) {
        self.0.lock().unwrap().2 += n;
    }
}

#[test]
fn each_point_is_a_row_and_adding_one_shifts_no_other() {
    let one = run(SCENARIO).unwrap();
    let text = SCENARIO.replace("[0.6]", "[0.3, 0.6]");
    let count = Count::default();
    let two = scenario::run::<Queue>(&text, "queue.toml", &Catalog::builtin(), &count).unwrap();
    assert_eq!(two.rows.len(), 2);
    assert_eq!(two.rows[0]["utilization"], json!(0.3));
    assert_eq!(two.rows[1], one.rows[0]);
    assert_eq!(*count.0.lock().unwrap(), (2, "utilizations".to_string(), 2));
}

#[test]
fn a_short_run_near_saturation_warns() {
    let out = run(&SCENARIO.replace("[0.6]", "[0.99]")).unwrap();
    assert_eq!(out.warnings.len(), 1);
    assert!(
        out.warnings[0].contains("25 relaxation times"),
        "{:?}",
        out.warnings
    );
}

#[test]
fn the_parameter_page_comes_from_the_declarations() {
    let md = markdown(
        "queue module keys",
        "Keys of a queue run.",
        &[QueueConfig::table()],
    );
    let line = "| `utilizations` | `Vec<f64>` | `[0.5]` |  |  | Offered loads";
    assert!(md.contains(line), "{md}");
    assert!(md.contains("| `requests` | `u64` | `200000` | 1000 to 100000000 | requests |"));
}
