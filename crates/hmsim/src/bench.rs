//! Simulation-speed benchmarks behind `hmsim bench` (criterion benches use the same bodies).

use std::time::Instant;

use serde::Serialize;

use crate::device::{BlockDevice, Catalog};
use crate::storage::{run_job, JobSpec, OpMix, Pattern};

#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    pub module: String,
    pub case: String,
    /// What is counted (`requests`, `accesses`, ...).
    pub unit: String,
    pub count: u64,
    pub wall_s: f64,
    pub per_wall_second: f64,
}

/// 4 KiB random reads at QD 16 on the STT-MRAM SSD preset, `requests` of them, one core.
pub fn storage_4k_random_qd16(requests: u64) -> BenchResult {
    let catalog = Catalog::builtin();
    let spec = catalog.get("stt-mram-ssd").expect("built-in preset");
    let job = JobSpec {
        pattern: Pattern::Random,
        op: OpMix::Read,
        read_fraction: 1.0,
        queue_depth: 16,
        block_size_bytes: 4096,
        duration_s: 1.0,
        total_bytes: Some(requests * 4096),
        region_bytes: None,
    };
    let power = spec.power.clone().expect("preset has power");
    let mut rng = crate::rng::stream(1, "bench");
    let start = Instant::now();
    let res = run_job(
        BlockDevice::new(spec),
        &power,
        &job,
        spec.capacity_bytes,
        &mut rng,
    );
    let wall_s = start.elapsed().as_secs_f64();
    BenchResult {
        module: "storage".into(),
        case: "4 KiB random read, QD 16, stt-mram-ssd".into(),
        unit: "requests".into(),
        count: res.requests,
        wall_s,
        per_wall_second: res.requests as f64 / wall_s,
    }
}

/// Every benchmark of `module` (or all modules for `None`).
pub fn run(module: Option<&str>, scale: f64) -> Vec<BenchResult> {
    let mut out = Vec::new();
    if module.is_none() || module == Some("storage") {
        out.push(storage_4k_random_qd16(
            (5_000_000.0 * scale).max(1000.0) as u64
        ));
    }
    out
}
