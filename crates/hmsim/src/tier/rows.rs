//! What a tiering run reports: one results row per (policy, intensity) from the steady
//! state (the means over the last `measure_last_s`), and one timeline row per quantum.

use serde_json::{json, Map, Value};

use super::cost;
use super::quantum::{QuantumRecord, SimResult};
use super::scenario::TierScenario;

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

/// The quanta of the last `measure_last_s` of a run (at least one).
fn tail<'a>(sc: &TierScenario, r: &'a SimResult) -> &'a [QuantumRecord] {
    let keep = ((sc.sim.measure_last_s / sc.sim.quantum_s).round() as usize).max(1);
    &r.timeline[r.timeline.len().saturating_sub(keep)..]
}

/// Mean of `f` over the last `measure_last_s` of a run.
pub(super) fn tail_mean(
    sc: &TierScenario,
    r: &SimResult,
    f: impl Fn(&QuantumRecord) -> f64,
) -> f64 {
    mean(tail(sc, r).iter().map(f))
}

/// The results row of one run: its steady state (the tail's means) and its totals.
pub(super) fn row_of(
    sc: &TierScenario,
    policy: &str,
    intensity: u32,
    r: &SimResult,
) -> Map<String, Value> {
    let tail = tail(sc, r);
    let avg = |f: &dyn Fn(&QuantumRecord) -> f64| mean(tail.iter().map(f));
    let mut m = Map::new();
    m.insert("policy".into(), json!(policy));
    m.insert("intensity".into(), json!(intensity));
    m.insert(
        "antagonist_cores".into(),
        json!(intensity * sc.antagonist.cores_per_intensity),
    );
    m.insert(
        "object_size_bytes".into(),
        json!(sc.workload.object_size_bytes),
    );
    m.insert("page_bytes".into(), json!(sc.sim.page_bytes));
    m.insert("throughput_gb_s".into(), json!(avg(&|q| q.throughput_gb_s)));
    m.insert("throughput_mops".into(), json!(avg(&|q| q.mops)));
    for (t, spec) in sc.tiers.iter().enumerate() {
        m.insert(
            format!("{}_latency_ns", spec.name),
            json!(avg(&|q| q.latency_ns[t])),
        );
        let bw = avg(&|q| q.bandwidth_gb_s[t]);
        m.insert(format!("{}_bandwidth_gb_s", spec.name), json!(bw));
        // How close the tier runs to its tightest resource, and which resource that is.
        let rf = avg(&|q| q.read_fraction[t]);
        m.insert(
            format!("{}_utilization", spec.name),
            json!(bw / spec.saturation_gb_s(rf)),
        );
        let b = spec.bottleneck(rf);
        let name = if b == 0 {
            "media"
        } else {
            spec.path[b - 1].name.as_str()
        };
        m.insert(format!("{}_bottleneck", spec.name), json!(name));
    }
    m.insert(
        "hot_share_default".into(),
        json!(avg(&|q| q.hot_share_default)),
    );
    m.insert(
        "alt_hot_share".into(),
        json!(1.0 - avg(&|q| q.hot_share_default)),
    );
    m.insert(
        "alt_traffic_share".into(),
        json!(avg(&|q| q.alt_traffic_share)),
    );
    m.insert("migrations".into(), json!(r.migrations));
    m.insert("migrated_gb".into(), json!(r.migrated_bytes as f64 / 1e9));
    m.insert("failed_migrations".into(), json!(r.failed_migrations));
    m.insert("huge_pages_split".into(), json!(r.pages.split_count()));
    m.insert("policy_samples".into(), json!(r.work.samples_processed));
    m.insert("policy_pages_scanned".into(), json!(r.work.pages_scanned));
    m.insert("policy_hint_faults".into(), json!(r.work.hint_faults));
    // Mean bytes per migration: split huge pages move 4 KiB at a time.
    let mean_bytes = r
        .migrated_bytes
        .checked_div(r.migrations)
        .unwrap_or(sc.sim.page_bytes);
    let cpu = cost::cpu_seconds(&r.work, r.migrations, mean_bytes, sc.sim.duration_s);
    m.insert("policy_cpu_s".into(), json!(cpu));
    m.insert("policy_cpu_cores".into(), json!(cpu / sc.sim.duration_s));
    m
}

/// One quantum of run (`policy`, `intensity`) as a row of the `timeline` table.
pub(super) fn timeline_row(
    sc: &TierScenario,
    policy: &str,
    intensity: u32,
    q: &QuantumRecord,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("policy".into(), json!(policy));
    m.insert("intensity".into(), json!(intensity));
    m.insert("time_s".into(), json!(q.time_s));
    m.insert("throughput_gb_s".into(), json!(q.throughput_gb_s));
    m.insert("throughput_mops".into(), json!(q.mops));
    for (t, spec) in sc.tiers.iter().enumerate() {
        m.insert(format!("{}_latency_ns", spec.name), json!(q.latency_ns[t]));
    }
    m.insert("hot_share_default".into(), json!(q.hot_share_default));
    m.insert("migrated_bytes".into(), json!(q.migrated_bytes));
    m
}
