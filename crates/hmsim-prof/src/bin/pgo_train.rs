//! The training run of the profile-guided build (`scripts/build_core.sh`, docs/performance.md,
//! *Profile-guided build*): every module's benchmarks at a tenth of their size, then short
//! runs of the paths the benchmarks leave out (Colloid, TPP at 4 KiB, YCSB run phases with
//! scans), every scenario in `examples/` and a `hmsim lifetime` replay, so the compiler sees
//! where each hot loop branches (a path never run in training is laid out as cold).
//! What it prints is not a measurement (an instrumented build runs slower).
use std::time::Instant;

/// A scenario and the overrides that make it short.
struct Run {
    text: &'static str,
    set: &'static [(&'static str, &'static str)],
}

const TIERING: &str = "module = \"tiering\"\nseed = 1\n[antagonist]\nintensities = [1]\n\
                       [sim]\ntimeline = false\n";

/// TPP and Colloid-TPP at 4 KiB pages in the quick tiering study's 1/8-size setup (GUPS on
/// 2 cores over 9 GiB, tiers of 4 and 12 GB), where its TPP points run.
const TPP_SCALED: &[(&str, &str)] = &[
    ("policy.names", "[\"tpp\", \"colloid-tpp\"]"),
    ("workload.cores", "2"),
    ("workload.working_set_bytes", "9663676416"),
    ("workload.hot_set_bytes", "3221225472"),
    ("tiers.0.capacity_bytes", "4000000000"),
    ("tiers.1.capacity_bytes", "12000000000"),
    ("sim.page_bytes", "4096"),
    ("sim.duration_s", "15"),
    ("sim.measure_last_s", "1"),
];

const RUNS: &[Run] = &[
    Run {
        text: TIERING,
        set: &[
            ("policy.names", "[\"colloid-hemem\", \"colloid-memtis\"]"),
            ("sim.duration_s", "15"),
            ("sim.measure_last_s", "2"),
        ],
    },
    Run {
        text: TIERING,
        set: TPP_SCALED,
    },
    Run {
        text: "module = \"pm-index\"\nseed = 1\n[index]\nname = \"fast-fair\"\n[workload]\n\
               kind = \"e\"\ndistribution = \"zipfian\"\nrecords = 20000\noperations = 5000\n",
        set: &[],
    },
    Run {
        text: "module = \"pm-index\"\nseed = 1\n[index]\nname = \"p-art\"\n[workload]\n\
               kind = \"a\"\ndistribution = \"uniform\"\nrecords = 20000\noperations = 20000\n\
               threads = 4\n",
        set: &[],
    },
    Run {
        text: "module = \"pm-index\"\nseed = 1\n[index]\nname = \"cceh\"\nkey_type = \"string\"\n\
               [workload]\nkind = \"b\"\ndistribution = \"zipfian\"\nrecords = 20000\n\
               operations = 20000\n",
        set: &[],
    },
];

/// A VANS-format trace of `n` random 64 B writes over 16 GiB (`hmsim lifetime`'s replay).
fn vans_random_writes(n: u64) -> String {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut text = String::new();
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.push_str(&format!("{:#x} W\n", (x % (16 << 30)) & !63));
    }
    text
}

fn main() {
    let t = Instant::now();
    let benches = hmsim::registry::run_benchmarks(None, 0.1).expect("benchmarks");
    println!(
        "{} benchmarks in {:.1} s",
        benches.len(),
        t.elapsed().as_secs_f64()
    );
    let set = |s: &[(&str, &str)]| -> Vec<(String, String)> {
        s.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    for (i, r) in RUNS.iter().enumerate() {
        let t = Instant::now();
        hmsim::registry::run_scenario(r.text, "<pgo_train>", &set(r.set), &[]).expect("run");
        println!("run {i} in {:.1} s", t.elapsed().as_secs_f64());
    }
    // Every scenario of the repository's examples (each takes seconds); a file that is not a
    // scenario (a sweep) or needs a device file of its own is passed over, saying so.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("example scenario");
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let t = Instant::now();
        match hmsim::registry::run_scenario(&text, &path.display().to_string(), &[], &[]) {
            Ok(_) => println!("{name} in {:.1} s", t.elapsed().as_secs_f64()),
            Err(e) => println!(
                "{name} passed over ({})",
                e.to_string().lines().next().unwrap_or("")
            ),
        }
    }
    let trace = std::env::temp_dir().join(format!("hmsim-pgo-{}.vans", std::process::id()));
    std::fs::write(&trace, vans_random_writes(200_000)).expect("trace file");
    let text = hmsim::pmem::lifetime_scenario(
        &trace.display().to_string(),
        "optane-pmem",
        r#"{"pmem": {"dimms": 1}}"#,
        Some("vans"),
    )
    .expect("lifetime scenario");
    let t = Instant::now();
    let replay = hmsim::registry::run_scenario(&text, "<lifetime>", &[], &[]);
    std::fs::remove_file(&trace).ok();
    replay.expect("lifetime replay");
    println!("lifetime replay in {:.1} s", t.elapsed().as_secs_f64());
}
