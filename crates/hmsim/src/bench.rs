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

/// Cache-line events (stores + flushes reaching the PMem path) per wall second: 64 B writes
/// with clwb over 1 GiB per thread on 6 DIMMs, through caches, WPQ, XPBuffer, AIT and media.
/// Random writes touch host memory all over (the simulated LLC, the wear map), sequential
/// ones do not: both are reported.
pub fn pmem_clwb(operations: u64, random: bool) -> BenchResult {
    use crate::cache::CacheConfig;
    use crate::pmem::{run_workload, DimmSpec, Persist, PmemConfig, PmemPattern, PmemWorkload};
    let w = PmemWorkload {
        pattern: if random {
            PmemPattern::RandWrite
        } else {
            PmemPattern::SeqWrite
        },
        threads: 4,
        footprint_bytes: 1 << 30,
        access_bytes: 64,
        persist: Persist::Clwb,
        fence: true,
        operations: operations / 4,
        region_stride_bytes: None,
    };
    let start = Instant::now();
    let (r, _) = run_workload(
        &PmemConfig::default(),
        &CacheConfig::default(),
        &w,
        DimmSpec {
            capacity_bytes: 256 << 30,
            line_endurance_writes: u32::MAX,
        },
        1,
    );
    let wall_s = start.elapsed().as_secs_f64();
    // Each operation is a store and a flush: two cache-line events.
    let events = 2 * r.stored_lines;
    BenchResult {
        module: "pmem".into(),
        case: format!(
            "64 B {} store + clwb + sfence, 4 threads x 1 GiB, 6 DIMMs",
            if random { "random" } else { "sequential" }
        ),
        unit: "cache-line events".into(),
        count: events,
        wall_s,
        per_wall_second: events as f64 / wall_s,
    }
}

/// Native trace reading: records per wall second over an in-memory native trace of
/// `records` accesses (90 % strided, 10 % random in 256 MB, like a program's mix).
pub fn trace_native_read(records: u64) -> BenchResult {
    use crate::trace::{open_reader, Format, Kind, NativeHeader, NativeWriter, TraceRecord};
    use rand::Rng;
    let mut rng = crate::rng::stream(1, "bench.trace");
    let mut w = NativeWriter::new(Vec::new(), &NativeHeader::default()).expect("in-memory writer");
    let mut addr = 0x7f00_0000_0000u64;
    for i in 0..records {
        addr = if rng.random_range(0..100) < 90 {
            addr + 64
        } else {
            0x7f00_0000_0000 + rng.random_range(0..256u64 << 20)
        };
        let mut r = TraceRecord::new(if i % 10 < 7 { Kind::Load } else { Kind::Store }, addr, 8);
        r.inst_gap = i % 4;
        w.write(&r).expect("in-memory write");
    }
    let bytes = w.finish().expect("in-memory finish");
    let start = Instant::now();
    let mut reader = open_reader(
        Box::new(std::io::Cursor::new(bytes)),
        "bench",
        Some(Format::Native),
    )
    .expect("native");
    let (mut batch, mut n) = (Vec::new(), 0u64);
    while reader.read_batch(&mut batch, 4096).expect("valid trace") > 0 {
        n += batch.len() as u64;
    }
    let wall_s = start.elapsed().as_secs_f64();
    BenchResult {
        module: "trace".into(),
        case: "native read, 90 % strided / 10 % random accesses".into(),
        unit: "records".into(),
        count: n,
        wall_s,
        per_wall_second: n as f64 / wall_s,
    }
}

/// Tiering, statistical mode: the reference GUPS scenario (15 cores, 72 GiB, 2 MB pages) under
/// HeMem for `seconds` simulated seconds; reports simulated seconds per wall second.
pub fn tiering_gups(seconds: f64) -> BenchResult {
    tiering_gups_policy("hemem", 2 << 20, seconds)
}

/// Tiering, statistical mode: the reference GUPS scenario under `policy` with `page_bytes`
/// pages (TPP with 4 KiB pages, MEMTIS with 2 MiB), 1x contention.
pub fn tiering_gups_policy(policy: &str, page_bytes: u64, seconds: f64) -> BenchResult {
    tiering_gups_with(policy, page_bytes, seconds, "")
}

/// HeMem with the alternate tier as PMem: every write into it through the PMem path.
pub fn tiering_gups_pmem(seconds: f64) -> BenchResult {
    let mut r = tiering_gups_with("hemem", 2 << 20, seconds, "[pmem_tier]\ntier = 1\n");
    r.case += ", PMem alternate tier (sampled write path)";
    r
}

fn tiering_gups_with(policy: &str, page_bytes: u64, seconds: f64, extra: &str) -> BenchResult {
    let text = format!(
        "module = \"tiering\"\nseed = 1\n[policy]\nnames = [\"{policy}\"]\n[antagonist]\n\
         intensities = [1]\n[sim]\nduration_s = {seconds}\nmeasure_last_s = 1.0\n\
         page_bytes = {page_bytes}\ntimeline = false\n{extra}"
    );
    let start = Instant::now();
    crate::registry::run_scenario(&text, "<bench>", &[], &[]).expect("the bench scenario is valid");
    let wall_s = start.elapsed().as_secs_f64();
    BenchResult {
        module: "tiering".into(),
        case: format!(
            "GUPS 15 cores x 72 GiB, {} KiB pages, {policy}, 1x contention, {seconds} simulated s",
            page_bytes / 1024
        ),
        unit: "simulated seconds".into(),
        count: seconds as u64,
        wall_s,
        per_wall_second: seconds / wall_s,
    }
}

/// Page-frame allocators: requests (allocations + frees) simulated per wall second through
/// the buddy allocator on the synthetic kernel-compile stream (4 CPUs, 2^18 frames).
pub fn allocators_buddy(allocs_per_thread: u64) -> BenchResult {
    let text = format!(
        "module = \"allocators\"\nseed = 1\nframes = 262144\n[[allocators]]\nname = \"buddy\"\n\
         [workload.synthetic]\nthreads = 4\nallocs_per_thread = {allocs_per_thread}\n"
    );
    let start = Instant::now();
    let out = crate::registry::run_scenario(&text, "<bench>", &[], &[])
        .expect("the bench scenario is valid");
    let wall_s = start.elapsed().as_secs_f64();
    let requests = out.rows[0]
        .get("requests")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    BenchResult {
        module: "allocators".into(),
        case: "buddy, synthetic kernel-compile stream, 4 CPUs, 2^18 frames".into(),
        unit: "requests".into(),
        count: requests,
        wall_s,
        per_wall_second: requests as f64 / wall_s,
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
    if module.is_none() || module == Some("pmem") {
        let ops = (4_000_000.0 * scale).max(1000.0) as u64;
        out.push(pmem_clwb(ops, false));
        out.push(pmem_clwb(ops, true));
    }
    if module.is_none() || module == Some("tiering") {
        out.push(tiering_gups((100.0 * scale).max(1.0)));
        out.push(tiering_gups_policy(
            "memtis",
            2 << 20,
            (100.0 * scale).max(1.0),
        ));
        out.push(tiering_gups_policy("tpp", 4096, (100.0 * scale).max(1.0)));
        out.push(tiering_gups_pmem((100.0 * scale).max(1.0)));
    }
    if module.is_none() || module == Some("allocators") {
        out.push(allocators_buddy((250_000.0 * scale).max(100.0) as u64));
    }
    if module.is_none() || module == Some("trace") {
        out.push(trace_native_read((10_000_000.0 * scale).max(1000.0) as u64));
    }
    out
}
