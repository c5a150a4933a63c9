//! The declared output schema (`hmsim schema`) is what runs write: every table a small run of
//! each module produces is declared by that module, with the same columns.

use hmsim::registry::{module_names, module_schema, run_scenario, schema};
use hmsim::scenario::Column;

/// A small run of each module that writes every extra table the module has.
const RUNS: &[&str] = &[
    "module = \"storage\"\n[device]\nname = \"intel-optane-900p\"\n[job]\nop = \"read\"\n\
     queue_depth = 4\nblock_size_bytes = 4096\nduration_s = 0.001\n\
     [thermal]\nfan = false\nduration_s = 5.0\nstep_s = 1.0\n",
    "module = \"pmem\"\n[workload]\npattern = \"seq-write\"\nfootprint_bytes = 65536\n\
     operations = 100\n",
    "module = \"tiering\"\nseed = 3\n[workload]\nworking_set_bytes = 8589934592\n\
     hot_set_bytes = 2147483648\n[antagonist]\nintensities = [0]\n[policy]\n\
     names = [\"static-default\"]\n[sim]\nduration_s = 0.2\nmeasure_last_s = 0.1\n",
    "module = \"allocators\"\nseed = 7\nframes = 4096\n[[allocators]]\nname = \"buddy\"\n\
     [workload.synthetic]\nthreads = 2\nallocs_per_thread = 500\n",
    "module = \"pm-index\"\nseed = 3\n[index]\nname = \"fast-fair\"\n[workload]\nkind = \"a\"\n\
     records = 1000\noperations = 1000\n\
     [throughput]\nmeasure = false\nrepeats = 1\nreal_threads = [1]\nshards = 8\n",
    "module = \"numa\"\npolicies = [\"linux-default\"]\n[allocation]\nsize_bytes = 1073741824\n",
    "module = \"hybrid\"\n[device]\ncapacity_mib = 16\ndram_mib = 0.5\n[workload]\nthreads = 2\n\
     [workload.pigz]\ninput_mib = 0.2\nos_resident_mib = 0.5\n[[policies]]\nname = \"no_EPF\"\n",
];

/// Whether `name` is the declared column `c`, a `{tier}` template standing for any tier name.
fn matches(c: &Column, name: &str) -> bool {
    match c.name.split_once("{tier}") {
        Some((pre, post)) => {
            name.len() > pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
        None => c.name == name,
    }
}

#[test]
fn every_table_a_run_writes_is_declared_with_its_columns() {
    let mut seen = Vec::new();
    for text in RUNS {
        let out = run_scenario(text, "s.toml", &[], &[]).unwrap_or_else(|e| panic!("{e}"));
        let declared = module_schema(&out.module).unwrap();
        seen.push(out.module.clone());
        for (name, carried) in &out.columns {
            let table = declared
                .tables
                .iter()
                .find(|t| t.name == name)
                .unwrap_or_else(|| panic!("{}: table {name} written but not declared", out.module));
            for c in carried.iter() {
                let d = table.columns.iter().find(|d| matches(d, &c.name));
                let d =
                    d.unwrap_or_else(|| panic!("{}: {name}.{} not declared", out.module, c.name));
                assert_eq!(
                    (d.unit, d.dtype, d.measured),
                    (c.unit, c.dtype, c.measured),
                    "{}: {name}.{}",
                    out.module,
                    c.name
                );
            }
            if name != "results" {
                assert!(!out.tables[name].is_empty(), "{}: {name} empty", out.module);
            }
        }
        // Each declared extra table was written by this run (the runs above enable them all).
        let written: Vec<&str> = out.columns.keys().map(String::as_str).collect();
        for t in &declared.tables {
            assert!(
                written.contains(&t.name),
                "{}: {} not written",
                out.module,
                t.name
            );
        }
    }
    assert_eq!(
        seen,
        module_names(),
        "one run per module, in registry order"
    );
}

#[test]
fn schema_lists_each_module_with_results_first_and_marks_host_measurements() {
    let all = schema();
    assert_eq!(all.len(), module_names().len());
    assert!(all.iter().all(|m| m.tables[0].name == "results"));
    let pm = all.iter().find(|m| m.module == "pm-index").unwrap();
    let real = pm.tables.iter().find(|t| t.name == "real_threads").unwrap();
    let col = |n: &str| real.columns.iter().find(|c| c.name == n).unwrap();
    assert!(col("wall_s").measured && col("throughput_mops").measured);
    assert!(!col("os_threads").measured && !col("index").measured);
    // Tiering's throughput is simulated: not a host measurement.
    let tier = all.iter().find(|m| m.module == "tiering").unwrap();
    let t = tier.tables[0]
        .columns
        .iter()
        .find(|c| c.name == "throughput_mops");
    assert!(!t.unwrap().measured);
    assert!(module_schema("nope").is_none());
}
