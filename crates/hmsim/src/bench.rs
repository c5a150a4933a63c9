//! Simulation-speed benchmarks behind `hmsim bench` (criterion benches use the same bodies).

use std::time::Instant;

pub use crate::bench_result::BenchResult;
use crate::device::{BlockDevice, Catalog};
use crate::error::RunError;
use crate::named::{Entry, Registry};
use crate::scenario::{self, NoProgress};
use crate::storage::{run_job, JobSpec, OpMix, Pattern};

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
pub fn tiering_gups(seconds: f64) -> Result<BenchResult, RunError> {
    tiering_gups_policy("hemem", 2 << 20, seconds)
}

/// Tiering, statistical mode: the reference GUPS scenario under `policy` with `page_bytes`
/// pages (TPP with 4 KiB pages, MEMTIS with 2 MiB), 1x contention.
pub fn tiering_gups_policy(
    policy: &str,
    page_bytes: u64,
    seconds: f64,
) -> Result<BenchResult, RunError> {
    tiering_gups_with(policy, page_bytes, seconds, "")
}

/// HeMem with the alternate tier as PMem: every write into it through the PMem path.
pub fn tiering_gups_pmem(seconds: f64) -> Result<BenchResult, RunError> {
    let mut r = tiering_gups_with("hemem", 2 << 20, seconds, "[pmem_tier]\ntier = 1\n")?;
    r.case += ", PMem alternate tier (sampled write path)";
    Ok(r)
}

fn tiering_gups_with(
    policy: &str,
    page_bytes: u64,
    seconds: f64,
    extra: &str,
) -> Result<BenchResult, RunError> {
    let text = format!(
        "module = \"tiering\"\nseed = 1\n[policy]\nnames = [\"{policy}\"]\n[antagonist]\n\
         intensities = [1]\n[sim]\nduration_s = {seconds}\nmeasure_last_s = 1.0\n\
         page_bytes = {page_bytes}\ntimeline = false\n{extra}"
    );
    let start = Instant::now();
    scenario::run::<crate::tier::Tiering>(&text, "<bench>", &Catalog::builtin(), &NoProgress)?;
    let wall_s = start.elapsed().as_secs_f64();
    Ok(BenchResult {
        module: "tiering".into(),
        case: format!(
            "GUPS 15 cores x 72 GiB, {} KiB pages, {policy}, 1x contention, {seconds} simulated s",
            page_bytes / 1024
        ),
        unit: "simulated seconds".into(),
        count: seconds as u64,
        wall_s,
        per_wall_second: seconds / wall_s,
    })
}

/// Tiering, trace-driven mode: `records` accesses of a native trace (4 KiB pages over
/// 1 GiB, 90 % to a 256 MiB hot range) replayed once under HeMem on one core; counts every
/// replayed access (the first pass that numbers the pages is inside the wall time).
pub fn tiering_trace(records: u64) -> BenchResult {
    use crate::tier::replay::{simulate_stream, StreamDemand};
    use crate::tier::stream::TraceStream;
    use crate::trace::{Kind, NativeHeader, NativeWriter, TraceRecord};
    use rand::Rng;
    let path = std::env::temp_dir().join(format!("hmsim-bench-tier-{}.hmt", std::process::id()));
    let mut rng = crate::rng::stream(1, "bench.tier.trace");
    let file = std::fs::File::create(&path).expect("temp file");
    let mut w = NativeWriter::new(std::io::BufWriter::new(file), &NativeHeader::default())
        .expect("native writer");
    for i in 0..records {
        let page = if rng.random_range(0..10) < 9 {
            rng.random_range(0..65_536u64)
        } else {
            rng.random_range(0..262_144u64)
        };
        let kind = if i % 4 == 0 { Kind::Store } else { Kind::Load };
        w.write(&TraceRecord::new(kind, page << 12, 8))
            .expect("temp write");
    }
    drop(w.finish().expect("temp finish"));
    let demand = StreamDemand {
        cores: 1,
        mlp: crate::tier::params::GUPS_MLP,
        object_size_bytes: 64,
        read_fraction: 0.75,
        weight: 1.0,
    };
    let mut tiers = crate::tier::params::reference_tiers();
    tiers[0].capacity_bytes = 512 << 20;
    let quantum_s = 0.01;
    // Roughly one pass: the engine sets the access rate, so size the run from it.
    let p = crate::tier::SimParams {
        tiers,
        page_bytes: 4096,
        quantum_s,
        duration_s: records as f64 / 30e6,
        sample_period: 5003,
        migrate_limit_gb_s: None,
        ewma_alpha: 0.5,
        seed: 1,
    };
    let start = Instant::now();
    let mut stream = TraceStream::open(&path, 4096, "<bench>", "workload.trace").expect("valid");
    let mut pol = crate::tier::make_policy_with("hemem", &Default::default()).expect("hemem");
    let (_, counts) = simulate_stream(
        &p,
        &demand,
        &mut stream,
        &crate::tier::Antagonists::reference(0),
        pol.as_mut(),
    )
    .expect("valid trace")
    .expect("fits");
    let wall_s = start.elapsed().as_secs_f64();
    std::fs::remove_file(&path).ok();
    BenchResult {
        module: "tiering".into(),
        case: "trace-driven, native trace, 4 KiB pages over 1 GiB, HeMem, one core".into(),
        unit: "accesses".into(),
        count: counts.accesses,
        wall_s,
        per_wall_second: counts.accesses as f64 / wall_s,
    }
}

/// Page-frame allocators: requests (allocations + frees) simulated per wall second through
/// the buddy allocator on the synthetic kernel-compile stream (4 CPUs, 2^18 frames).
pub fn allocators_buddy(allocs_per_thread: u64) -> Result<BenchResult, RunError> {
    let text = format!(
        "module = \"allocators\"\nseed = 1\nframes = 262144\n[[allocators]]\nname = \"buddy\"\n\
         [workload.synthetic]\nthreads = 4\nallocs_per_thread = {allocs_per_thread}\n"
    );
    let start = Instant::now();
    let out = scenario::run::<crate::alloc::Allocators>(
        &text,
        "<bench>",
        &Catalog::builtin(),
        &NoProgress,
    )?;
    let wall_s = start.elapsed().as_secs_f64();
    let requests = out.rows[0]
        .get("requests")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    Ok(BenchResult {
        module: "allocators".into(),
        case: "buddy, synthetic kernel-compile stream, 4 CPUs, 2^18 frames".into(),
        unit: "requests".into(),
        count: requests,
        wall_s,
        per_wall_second: requests as f64 / wall_s,
    })
}

/// A YCSB Load of `n` integer keys and an empty `index` in a fresh anonymous region.
fn pmindex_setup(
    index: &str,
    n: u64,
) -> (
    Vec<crate::pmindex::Op>,
    crate::pmindex::PmRegion,
    Box<dyn crate::pmindex::PmIndex>,
) {
    use crate::pmindex::ycsb::{load_ops, Distribution, YcsbSpec, YcsbWorkload};
    use crate::pmindex::{find, IndexOptions, KeyType, PmRegion, RegionConfig};
    let spec = find(index).expect("a registered index");
    let y = YcsbSpec {
        workload: YcsbWorkload::Load,
        key_type: KeyType::Int,
        distribution: Distribution::Uniform,
        zipf_theta: 0.99,
        records: n,
        operations: 0,
        scan_max: 100,
    };
    let ops = load_ops(&y, 1);
    let mut pm = PmRegion::anonymous(RegionConfig::default()).expect("anonymous region");
    let idx = (spec.create)(&mut pm, &IndexOptions::new(KeyType::Int)).expect("create");
    (ops, pm, idx)
}

/// Persistent indexes: inserts per wall second of a YCSB Load of `inserts` integer keys into
/// `index`, with the full cache + PMem model fed by every load/store/flush/fence (`model`),
/// or with the instrumentation's counters only (the index itself, in DRAM).
pub fn pmindex_load(index: &str, inserts: u64, model: bool) -> BenchResult {
    let (ops, mut pm, mut idx) = pmindex_setup(index, inserts);
    if model {
        use crate::cache::CacheConfig;
        use crate::pmem::{DimmSpec, PmemConfig};
        pm.set_observer(Some(Box::new(crate::pmindex::sim::ModelObserver::new(
            &PmemConfig::default(),
            &CacheConfig::default(),
            1,
            DimmSpec::from_rating(256 << 30, 3.6e17),
            1,
        ))));
    }
    let start = Instant::now();
    for op in &ops {
        op.apply(idx.as_mut(), &mut pm).expect("insert");
    }
    let wall_s = start.elapsed().as_secs_f64();
    BenchResult {
        module: "pm-index".into(),
        case: format!(
            "{index} YCSB Load, {inserts} int keys, {}",
            if model {
                "full cache + PMem model"
            } else {
                "counters only (DRAM)"
            }
        ),
        unit: "inserts".into(),
        count: inserts,
        wall_s,
        per_wall_second: inserts as f64 / wall_s,
    }
}

/// Persistent indexes on real threads: YCSB Load of `inserts` integer keys into `index`
/// through a `SharedIndex` of 64 shards, operation i on OS thread i % `threads`, counters
/// only (DRAM, no model); wall clock, on this machine (2 cores: more threads oversubscribe).
pub fn pmindex_threads(index: &str, inserts: u64, threads: usize) -> BenchResult {
    use crate::pmindex::shared::run_threads;
    use crate::pmindex::ycsb::key_of;
    use crate::pmindex::{find, IndexOptions, KeyType, Op, RegionConfig, SharedIndex};
    let spec = find(index).expect("a registered index");
    let ops: Vec<Op> = (0..inserts)
        .map(|i| Op::Insert(key_of(KeyType::Int, i), i))
        .collect();
    let idx = SharedIndex::create(
        spec,
        &IndexOptions::new(KeyType::Int),
        &RegionConfig::default(),
        crate::pmindex::DEFAULT_SHARDS,
    )
    .expect("create");
    let r = run_threads(&idx, &ops, threads).expect("load");
    assert_eq!(r.failed_inserts, 0, "every key is new");
    BenchResult {
        module: "pm-index".into(),
        case: format!(
            "{index} YCSB Load, {inserts} int keys, {threads} OS thread(s), SharedIndex 64 shards, counters only (DRAM), wall clock"
        ),
        unit: "inserts".into(),
        count: inserts,
        wall_s: r.wall_s,
        per_wall_second: inserts as f64 / r.wall_s,
    }
}

/// Persistent indexes natively (counters only, region in DRAM, no observer): a YCSB Load of
/// `n` integer keys, then one lookup of each key in the same scattered order; inserts and
/// lookups per wall second.
pub fn pmindex_native(index: &str, n: u64) -> [BenchResult; 2] {
    let (ops, mut pm, mut idx) = pmindex_setup(index, n);
    let start = Instant::now();
    for op in &ops {
        op.apply(idx.as_mut(), &mut pm).expect("insert");
    }
    let load_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let mut found = 0u64;
    for op in &ops {
        found += idx.lookup(&mut pm, op.key()).is_some() as u64;
    }
    let lookup_s = start.elapsed().as_secs_f64();
    assert_eq!(found, n, "{index}: every loaded key is found");
    let row = |what: &str, unit: &str, wall_s: f64| BenchResult {
        module: "pm-index".into(),
        case: format!("{index} {what}, {n} int keys, counters only (DRAM)"),
        unit: unit.into(),
        count: n,
        wall_s,
        per_wall_second: n as f64 / wall_s,
    };
    [
        row("YCSB Load", "inserts", load_s),
        row("lookups after the load", "lookups", lookup_s),
    ]
}

/// NUMA placement: 3,000 GiB in 4 KiB pages (≈ 786 M pages) placed by 56 tasks in 1 GiB
/// vmalloc chunks on the aliusM machine under `policy`, with allocation cost; pages per second.
pub fn numa_place(policy: &str, gib: u64) -> BenchResult {
    use crate::numa::{allocate, parse_policy, topology, AllocationSpec};
    let m = topology::load(
        None,
        Some("aliusm-2s"),
        &crate::config::Source::parse("", "<bench>").expect("empty text parses"),
        &Catalog::builtin(),
    )
    .expect("built-in preset");
    let p = parse_policy(policy, m.nodes.len()).expect("known policy");
    let a = AllocationSpec {
        size_bytes: gib << 30,
        tasks: 56,
        core: 0,
        core_stride: 1,
        chunk_bytes: Some(1 << 30),
    };
    let start = Instant::now();
    let o = allocate(&m, &p, &a, &Default::default(), &Default::default());
    let wall_s = start.elapsed().as_secs_f64();
    let pages = o.placement.pages.iter().sum::<u64>() + o.placement.swap_pages;
    BenchResult {
        module: "numa".into(),
        case: format!("{gib} GiB in 4 KiB pages, 56 tasks x 1 GiB chunks, {policy}"),
        unit: "pages".into(),
        count: pages,
        wall_s,
        per_wall_second: pages as f64 / wall_s,
    }
}

/// DRAM-cached flash (`hybrid`): page-level events per wall second through the I-/D-TLBs,
/// the UMD (LRU DRAM cache, L2P, internal faults) and the FTL (writes, GC), under
/// smart_EPF: the pigz-like `pigz -d` (45 MB input, inflater and 3 helpers) on a 512 MB device with
/// 100 MB of DRAM, `runs` times. Preconditioning and workload generation are not timed.
pub fn hybrid_pigz(runs: u64) -> BenchResult {
    use crate::hybrid::{EpfPolicySpec, Host, HybridConfig};
    let (text, seed) = ("[device]\ncapacity_mib = 512\ndram_mib = 100\n", 1);
    let sc: HybridConfig = crate::config::parse_toml(text, "<bench>").expect("valid");
    let w = sc.load_workload("<bench>", seed).expect("synthetic");
    let policy = EpfPolicySpec::named("smart_EPF")
        .build()
        .expect("registered");
    let (mut events, mut wall_s) = (0u64, 0.0);
    for _ in 0..runs {
        let mut umd = sc.build_umd(seed);
        let start = Instant::now();
        let s = Host::new(sc.host, &mut umd, policy.as_ref(), &w, seed).run(&w);
        wall_s += start.elapsed().as_secs_f64();
        events += s.umd_accesses;
    }
    BenchResult {
        module: "hybrid".into(),
        case: "pigz-like 45 MB, inflater + 3 helpers, 100 MB DRAM, smart_EPF".into(),
        unit: "page-level events".into(),
        count: events,
        wall_s,
        per_wall_second: events as f64 / wall_s,
    }
}

/// The benchmarks of one module at a work `scale` (1.0: the documented sizes).
pub type BenchGroup = fn(f64) -> Result<Vec<BenchResult>, RunError>;

/// A module's benchmarks, as its registry entry carries them.
pub struct Bench {
    pub run: BenchGroup,
    /// One line on what they measure.
    pub about: &'static str,
}

/// Benchmarks of shared components that are no module (a module's own are in its registry
/// entry: `registry::MODULES`), by the name `hmsim bench --module NAME` takes.
pub static COMPONENT_BENCHMARKS: Registry<BenchGroup> = Registry::new(
    "benchmark component",
    &[Entry {
        name: "trace",
        about: "reading a native trace",
        make: trace_group,
    }],
);

pub(crate) fn storage_group(scale: f64) -> Result<Vec<BenchResult>, RunError> {
    let requests = (5_000_000.0 * scale).max(1000.0) as u64;
    Ok(vec![storage_4k_random_qd16(requests)])
}

pub(crate) fn pmem_group(scale: f64) -> Result<Vec<BenchResult>, RunError> {
    let ops = (4_000_000.0 * scale).max(1000.0) as u64;
    Ok(vec![pmem_clwb(ops, false), pmem_clwb(ops, true)])
}

pub(crate) fn tiering_group(scale: f64) -> Result<Vec<BenchResult>, RunError> {
    let seconds = (100.0 * scale).max(1.0);
    Ok(vec![
        tiering_gups(seconds)?,
        tiering_gups_policy("memtis", 2 << 20, seconds)?,
        tiering_gups_policy("tpp", 4096, seconds)?,
        tiering_trace((20_000_000.0 * scale).max(10_000.0) as u64),
        tiering_gups_pmem(seconds)?,
    ])
}

pub(crate) fn allocators_group(scale: f64) -> Result<Vec<BenchResult>, RunError> {
    let mut out = vec![allocators_buddy((250_000.0 * scale).max(100.0) as u64)?];
    let pairs = (5_000_000.0 * scale).max(1000.0) as u64;
    let w = crate::alloc::benchmarks::replay_stream((500_000.0 * scale).max(100.0) as u32);
    for a in ["buddy", "lazy-buddy", "ibuddy", "lazy-ibuddy"] {
        out.push(crate::alloc::benchmarks::order0_pair(a, pairs));
        out.push(crate::alloc::benchmarks::order0_lifo(a, pairs));
        out.push(crate::alloc::benchmarks::order0_pair_recorded(
            a,
            pairs / 10,
        ));
        out.push(crate::alloc::benchmarks::replay(a, &w));
        out.push(crate::alloc::benchmarks::replay_one_thread(a, &w));
        out.push(crate::alloc::benchmarks::replay_flat(a, &w));
    }
    let lines = (10_000_000.0 * scale).max(1000.0) as u64;
    for s in crate::alloc::benchmarks::LineSource::ALL {
        out.push(crate::alloc::benchmarks::cache_lines(s, lines));
    }
    Ok(out)
}

pub(crate) fn pmindex_group(scale: f64) -> Result<Vec<BenchResult>, RunError> {
    let n = (1_000_000.0 * scale).max(1000.0) as u64;
    let indexes = crate::pmindex::registry();
    let mut out = Vec::new();
    for spec in &indexes {
        out.push(pmindex_load(spec.name, n, true));
    }
    for spec in &indexes {
        out.extend(pmindex_native(spec.name, n));
    }
    for index in ["p-clht", "cceh", "fast-fair", "p-art"] {
        for threads in [1, 2] {
            out.push(pmindex_threads(index, n, threads));
        }
    }
    Ok(out)
}

pub(crate) fn numa_group(scale: f64) -> Result<Vec<BenchResult>, RunError> {
    let gib = (3000.0 * scale).max(1.0) as u64;
    Ok(["linux-default", "interleave-all", "aliusm", "memory-mode"]
        .into_iter()
        .map(|p| numa_place(p, gib))
        .collect())
}

pub(crate) fn hybrid_group(scale: f64) -> Result<Vec<BenchResult>, RunError> {
    Ok(vec![hybrid_pigz((10.0 * scale).max(1.0) as u64)])
}

fn trace_group(scale: f64) -> Result<Vec<BenchResult>, RunError> {
    Ok(vec![trace_native_read(
        (10_000_000.0 * scale).max(1000.0) as u64
    )])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_benchmark_group_runs() {
        let r = storage_group(1e-4).unwrap();
        assert_eq!(r.len(), 1);
        assert!(r[0].count >= 1000 && r[0].per_wall_second > 0.0);
    }
}
