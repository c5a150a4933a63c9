//! The training run of the profile-guided build (`scripts/build_core.sh`, docs/performance.md,
//! *Profile-guided build*): every module's benchmarks at a tenth of their size, then short
//! runs of the paths the benchmarks leave out (Colloid, TPP at 4 KiB, YCSB run phases with
//! scans, numa and hybrid scenarios), so the compiler sees where each hot loop branches.
//! What it prints is not a measurement (an instrumented build runs slower).
use std::time::Instant;

/// A scenario and the overrides that make it short.
struct Run {
    text: &'static str,
    set: &'static [(&'static str, &'static str)],
}

const TIERING: &str = "module = \"tiering\"\nseed = 1\n[antagonist]\nintensities = [1]\n\
                       [sim]\ntimeline = false\n";

/// The quick tiering study's 1/8-size setup (GUPS on 2 cores over 9 GiB, tiers of 4 and
/// 12 GB), where its TPP points run at 4 KiB pages.
const SCALED: &[(&str, &str)] = &[
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
        text: "module = \"tiering\"\nseed = 1\n[policy]\nnames = [\"tpp\", \"colloid-tpp\"]\n\
               [antagonist]\nintensities = [1]\n[sim]\ntimeline = false\n",
        set: SCALED,
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

/// Scenario files of the repository's `examples/` run as they are (each takes seconds).
const EXAMPLE_FILES: &[&str] = &[
    "numa-pmem-aliusm-machine.toml",
    "hybrid-pigz-epf.toml",
    "pmem-clwb-hotspot.toml",
    "allocators-compare.toml",
];

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
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    for f in EXAMPLE_FILES {
        let path = format!("{dir}/{f}");
        let text = std::fs::read_to_string(&path).expect("example scenario");
        let t = Instant::now();
        hmsim::registry::run_scenario(&text, &path, &[], &[]).expect("run");
        println!("{f} in {:.1} s", t.elapsed().as_secs_f64());
    }
}
