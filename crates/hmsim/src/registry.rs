//! Modules registered by name: a scenario's `module` key picks its runner.

use std::path::PathBuf;

use serde::Serialize;

use crate::bench::{self, Bench, BenchGroup, BenchResult, COMPONENT_BENCHMARKS};
use crate::config::params::{Params, TableRef};
use crate::config::{apply_overrides_with, line_of_key, Source};
use crate::device::Catalog;
use crate::error::{ConfigError, RunError};
use crate::named::{Entry, Registry};
use crate::progress::{NoProgress, Progress};
pub use crate::scenario::RunOutput;
use crate::scenario::{self, Column, Parts, ResultRow, Scenario};
use crate::tier::PrefixShelf;

/// Runs one module's scenario: (the scenario read after overrides, catalog, progress, the
/// caller's parts).
pub type Runner = fn(&Source, &Catalog, &dyn Progress, &Parts) -> Result<RunOutput, RunError>;

/// The configuration a module's run would use, without running it (see
/// [`scenario::resolve_source`]).
pub type Resolver = fn(&Source, &Catalog) -> Result<serde_json::Value, RunError>;

/// A module as the registry holds it: how to run its scenarios, its `results.csv` columns,
/// and everything else that is listed per module (docs page, study, sweep metrics, the
/// tables of its parameter page): the one list the CLI, the Python package and the
/// generated docs read.
pub struct Module {
    pub run: Runner,
    pub resolve: Resolver,
    pub columns: &'static [Column],
    /// Extra tables a run may write (`name.csv`) and their columns.
    pub tables: &'static [(&'static str, &'static [Column])],
    /// Its page under docs/.
    pub docs: &'static str,
    /// The study that reproduces its paper.
    pub study: &'static str,
    /// The result columns a sweep plots against its first axis.
    pub sweep_metrics: &'static [&'static str],
    /// The root tables of its generated parameter page, and what that page's intro adds.
    pub params: fn() -> Vec<TableRef>,
    pub params_note: &'static str,
    /// The key along which a run is the start of a longer one (see [`Scenario::PREFIX_KEY`]).
    pub prefix_key: Option<&'static str>,
    /// Keys that leave a run's start unchanged (see [`Scenario::SAME_START_KEYS`]).
    pub same_start_keys: &'static [&'static str],
    /// Keys that only say where a run stops (see [`Scenario::STOP_KEYS`]).
    pub stop_keys: &'static [&'static str],
    /// The lengths a resolved run may stop at (see [`Scenario::stop_lengths`]).
    pub stop_lengths: fn(&serde_json::Value) -> Vec<f64>,
    /// Its benchmarks (`hmsim bench --module NAME`).
    pub bench: Option<Bench>,
}

fn param_roots<S: Scenario>() -> Vec<TableRef> {
    let mut roots = vec![S::Config::table()];
    roots.extend(S::MORE_PARAMS.iter().map(|table| table()));
    roots
}

/// The registry entry of scenario module `S`: everything is stated through its
/// [`Scenario`] constants, and it runs through the common skeleton.
const fn module<S: Scenario>() -> Entry<Module> {
    Entry {
        name: S::MODULE,
        about: S::ABOUT,
        make: Module {
            run: scenario::run_source::<S>,
            resolve: scenario::resolve_source::<S>,
            columns: <S::Row as ResultRow>::COLUMNS,
            tables: S::TABLES,
            docs: S::DOCS,
            study: S::STUDY,
            sweep_metrics: S::SWEEP_METRICS,
            params: param_roots::<S>,
            params_note: S::PARAMS_NOTE,
            prefix_key: S::PREFIX_KEY,
            same_start_keys: S::SAME_START_KEYS,
            stop_keys: S::STOP_KEYS,
            stop_lengths: S::stop_lengths,
            bench: None,
        },
    }
}

/// `entry` with its benchmarks.
const fn benched(mut entry: Entry<Module>, run: BenchGroup, about: &'static str) -> Entry<Module> {
    entry.make.bench = Some(Bench { run, about });
    entry
}

/// Every module with a scenario runner, by the name a scenario's `module` key uses.
pub static MODULES: Registry<Module> = Registry::new(
    "module",
    &[
        benched(
            module::<crate::storage::Storage>(),
            bench::storage_group,
            "4 KiB random reads at QD 16 on the STT-MRAM SSD",
        ),
        benched(
            module::<crate::pmem::Pmem>(),
            bench::pmem_group,
            "64 B stores + clwb through caches, WPQ, XPBuffer, AIT and media",
        ),
        benched(
            module::<crate::tier::Tiering>(),
            bench::tiering_group,
            "GUPS under HeMem, MEMTIS, TPP and a PMem tier; a trace-driven replay",
        ),
        benched(
            module::<crate::alloc::Allocators>(),
            bench::allocators_group,
            "the buddy family on a kernel-compile stream and order-0 pairs",
        ),
        benched(
            module::<crate::pmindex::PmIndexStudy>(),
            bench::pmindex_group,
            "every persistent index: YCSB Load with the PMem model, natively, on threads",
        ),
        benched(
            module::<crate::numa::Numa>(),
            bench::numa_group,
            "placing 3,000 GiB in 4 KiB pages under four policies",
        ),
        benched(
            module::<crate::hybrid::Hybrid>(),
            bench::hybrid_group,
            "page-level events of pigz -d through TLBs, UMD and FTL",
        ),
    ],
);

/// Every benchmark of `module` (a module's, from its entry, or a shared component's), or
/// of all of them for `None`; an unknown name is an error at `--module` listing the known
/// ones.
pub fn run_benchmarks(module: Option<&str>, scale: f64) -> Result<Vec<BenchResult>, RunError> {
    let modules = MODULES
        .iter()
        .filter_map(|e| Some((e.name, e.make.bench.as_ref()?.run)));
    let components = COMPONENT_BENCHMARKS.iter().map(|e| (e.name, e.make));
    let all: Vec<(&str, BenchGroup)> = modules.chain(components).collect();
    let groups: Vec<BenchGroup> = match module {
        None => all.iter().map(|(_, g)| *g).collect(),
        Some(m) => match all.iter().find(|(n, _)| *n == m) {
            Some((_, g)) => vec![*g],
            None => {
                let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
                return Err(RunError::config(
                    "--module",
                    "",
                    format!(
                        "unknown benchmark module '{m}'; allowed: {}",
                        names.join(", ")
                    ),
                ));
            }
        },
    };
    let mut out = Vec::new();
    for group in groups {
        out.extend(group(scale)?);
    }
    Ok(out)
}

pub fn module_names() -> Vec<&'static str> {
    MODULES.names()
}

/// The default of an array-of-tables key `key` of `module` that has one (a tiering
/// scenario's `tiers`), as TOML: `--set tiers.1.x=v` on a scenario without `[[tiers]]`
/// writes these out, then changes entry 1.
pub fn default_array_of_tables(module: &str, key: &str) -> Option<toml_edit::Item> {
    #[derive(serde::Serialize)]
    struct Tiers {
        tiers: Vec<crate::mempath::TierSpec>,
    }
    let text = match (module, key) {
        ("tiering", "tiers") => toml::to_string(&Tiers {
            tiers: crate::tier::params::reference_tiers(),
        })
        .ok()?,
        _ => return None,
    };
    let mut doc = text.parse::<toml_edit::DocumentMut>().ok()?;
    doc.remove(key)
}

/// Apply `key.path=value` overrides to TOML `text` (see `config::apply_overrides_with`), an
/// array of tables the scenario leaves to its default written out from the module's default.
pub fn apply_overrides(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
) -> Result<String, ConfigError> {
    apply_overrides_with(text, file, overrides, &default_array_of_tables)
}

/// Run the scenario `text` read from `file`, after applying `overrides` (`key.path`, `value`),
/// with devices from the built-in catalog plus `device_paths`.
pub fn run_scenario(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    device_paths: &[PathBuf],
) -> Result<RunOutput, ConfigError> {
    run_scenario_with_progress(text, file, overrides, device_paths, &NoProgress)
}

/// [`run_scenario`], reporting progress of long work to `progress`.
pub fn run_scenario_with_progress(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    device_paths: &[PathBuf],
    progress: &dyn Progress,
) -> Result<RunOutput, ConfigError> {
    run_scenario_with_parts(text, file, overrides, device_paths, progress, &Parts::new())
}

/// [`run_scenario_with_progress`], offering the module `parts` the text cannot name (a
/// tiering policy written in Python); a module that leaves one untaken refuses the run.
pub fn run_scenario_with_parts(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    device_paths: &[PathBuf],
    progress: &dyn Progress,
    parts: &Parts,
) -> Result<RunOutput, ConfigError> {
    let original = text;
    let text = apply_overrides(text, file, overrides)?;
    // The one parse of the scenario: everything after reads this tree.
    Source::parse(&text, file)
        .and_then(|source| run_module(&source, device_paths, progress, parts))
        .map_err(|e| blame_source(e, original, file, overrides))
}

/// Errors refer to the text after overrides; point them back at what the user wrote: the
/// `--set` that introduced the key, or the key's line in the original file.
fn blame_source(
    mut e: ConfigError,
    original: &str,
    file: &str,
    overrides: &[(String, String)],
) -> ConfigError {
    if overrides.is_empty() || e.file != file {
        return e;
    }
    if let Some((k, v)) = overrides.iter().find(|(k, _)| {
        e.key == *k || e.key.starts_with(&format!("{k}.")) || k.starts_with(&format!("{}.", e.key))
    }) {
        e.file = format!("--set {k}={v}");
        e.line = None;
    } else if !e.key.is_empty() {
        e.line = line_of_key(original, &e.key);
    }
    e
}

/// The configuration the run of [`run_scenario`] would use (`summary.json`'s
/// `resolved_config`), worked out without running it: equal answers mean the same
/// simulation, whatever the spelling of the scenario.
pub fn resolve_scenario(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    device_paths: &[PathBuf],
) -> Result<serde_json::Value, ConfigError> {
    resolve_with(text, file, overrides, &Catalog::load(device_paths)?)
}

/// A scenario's (text, file, overrides), as a sweep's point holds it.
pub type ScenarioSpelling = (String, String, Vec<(String, String)>);

/// A run's output and the host time it took.
pub struct TimedRun {
    pub output: RunOutput,
    /// Wall-clock seconds.
    pub wall_s: f64,
    /// CPU seconds of the thread that ran it and of the helper threads it started
    /// ([`crate::cputime`]): unlike the wall time, not inflated by other work sharing the
    /// cores.
    pub cpu_s: f64,
}

/// [`run_scenario_with_progress`] with the host time the run took.
pub fn run_scenario_timed(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    device_paths: &[PathBuf],
    progress: &dyn Progress,
) -> Result<TimedRun, ConfigError> {
    timed(|| run_scenario_with_progress(text, file, overrides, device_paths, progress))
}

fn timed<E>(run: impl FnOnce() -> Result<RunOutput, E>) -> Result<TimedRun, E> {
    let start = std::time::Instant::now();
    let (output, cpu_s) = crate::cputime::measured(run);
    Ok(TimedRun {
        output: output?,
        wall_s: start.elapsed().as_secs_f64(),
        cpu_s,
    })
}

/// Run `runs` in order, as many [`run_scenario`] calls would, each offered one shared
/// [`PrefixShelf`] keeping results at `keep_s` seconds: a run that is the start of an
/// earlier one in the chain (the same scenario, shorter: its module's
/// [`Module::prefix_key`]) takes its results from it. Every run must be of a module with a
/// prefix key; each output is the one its own run gives, with the host time its run took.
pub fn run_scenario_chain(
    runs: &[ScenarioSpelling],
    keep_s: &[f64],
    device_paths: &[PathBuf],
) -> Result<Vec<TimedRun>, ConfigError> {
    let shelf = PrefixShelf::new(keep_s.to_vec());
    runs.iter()
        .map(|(text, file, overrides)| {
            let parts = Parts::new().with("a shelf of prefix runs", shelf.clone());
            timed(|| {
                run_scenario_with_parts(text, file, overrides, device_paths, &NoProgress, &parts)
            })
        })
        .collect()
}

/// [`resolve_scenario`] of many scenarios against one reading of the device catalog (which
/// costs more than resolving a scenario does): a sweep resolves every point before it runs.
pub fn resolve_scenarios(
    scenarios: &[ScenarioSpelling],
    device_paths: &[PathBuf],
) -> Result<Vec<Result<serde_json::Value, ConfigError>>, ConfigError> {
    let catalog = Catalog::load(device_paths)?;
    Ok(scenarios
        .iter()
        .map(|(text, file, overrides)| resolve_with(text, file, overrides, &catalog))
        .collect())
}

fn resolve_with(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    catalog: &Catalog,
) -> Result<serde_json::Value, ConfigError> {
    let original = text;
    let text = apply_overrides(text, file, overrides)?;
    Source::parse(&text, file)
        .and_then(|source| (module_entry(&source)?.resolve)(&source, catalog))
        .map_err(|e| blame_source(e, original, file, overrides))
}

fn run_module(
    source: &Source,
    device_paths: &[PathBuf],
    progress: &dyn Progress,
    parts: &Parts,
) -> Result<RunOutput, RunError> {
    let entry = module_entry(source)?;
    let catalog = Catalog::load(device_paths)?;
    (entry.run)(source, &catalog, progress, parts)
}

/// The registered module a scenario's `module` key names.
fn module_entry(source: &Source) -> Result<&'static Module, RunError> {
    let file = source.file();
    let names = module_names().join(", ");
    let at_module = |message: String| {
        ConfigError::new(file, "module", message).at_line(source.line_of_key("module"))
    };
    let module = match source.root().get("module") {
        Some(m) => match m.as_str() {
            Some(m) => m,
            None => return Err(at_module(format!("expected a string; allowed: {names}"))),
        },
        None => {
            // A sweep file names its scenario and axes, not a module: say which command runs it.
            let root = source.root();
            let sweep = root.contains_key("scenario") && root.contains_key("axes");
            let hint = if sweep {
                " (this is a sweep file, with `scenario` and [axes]: run it with `hmsim sweep`)"
            } else {
                ""
            };
            return Err(ConfigError::new(
                file,
                "module",
                format!("missing required key; allowed: {names}{hint}"),
            ));
        }
    };
    MODULES
        .get(module)
        .ok_or_else(|| at_module(format!("unknown module '{module}'; allowed: {names}")))
}

/// The declared columns of `module`'s `results.csv` (`hmsim._core.columns`); `None` for an
/// unknown module. Tiering's per-tier columns are declared with a `{tier}` placeholder; a
/// run's output carries them spelled out.
pub fn columns(module: &str) -> Option<&'static [Column]> {
    MODULES.get(module).map(|m| m.columns)
}

/// One table of a module's output: `results` (`results.csv`) or an extra table (`name.csv`).
#[derive(Debug, Clone, Serialize)]
pub struct TableSchema {
    pub name: &'static str,
    pub columns: &'static [Column],
}

/// A module as `hmsim schema` and the Python package see it: its declared output tables
/// (`results` first), its docs page, its study and its sweep metrics.
#[derive(Debug, Clone, Serialize)]
pub struct ModuleSchema {
    pub module: &'static str,
    pub about: &'static str,
    pub docs: &'static str,
    pub study: &'static str,
    pub sweep_metrics: &'static [&'static str],
    pub tables: Vec<TableSchema>,
}

fn schema_of(e: &Entry<Module>) -> ModuleSchema {
    let results = TableSchema {
        name: "results",
        columns: e.make.columns,
    };
    let extra = e
        .make
        .tables
        .iter()
        .map(|&(name, columns)| TableSchema { name, columns });
    ModuleSchema {
        module: e.name,
        about: e.about,
        docs: e.make.docs,
        study: e.make.study,
        sweep_metrics: e.make.sweep_metrics,
        tables: std::iter::once(results).chain(extra).collect(),
    }
}

/// Every module's output tables with their declared columns (`hmsim schema`).
pub fn schema() -> Vec<ModuleSchema> {
    MODULES.iter().map(schema_of).collect()
}

/// The declared output tables of `module`; `None` for an unknown module.
pub fn module_schema(module: &str) -> Option<ModuleSchema> {
    MODULES.entry(module).map(schema_of)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file without `module` is refused with the modules allowed; a sweep file given to
    /// `run` is also told which command runs it.
    #[test]
    fn a_missing_module_names_the_modules_and_a_sweep_file_its_command() {
        let err = |text: &str| {
            run_scenario(text, "s.toml", &[], &[])
                .unwrap_err()
                .to_string()
        };
        let plain = err("seed = 1\n");
        assert!(plain.contains("missing required key; allowed: ") && plain.contains("tiering"));
        assert!(!plain.contains("hmsim sweep"), "{plain}");
        let sweep = err("scenario = \"s.toml\"\n[axes]\n\"job.queue_depth\" = [1, 2]\n");
        assert!(sweep.contains("run it with `hmsim sweep`"), "{sweep}");
    }

    /// Between the CLI and the model a scenario is parsed once: the module's name, the
    /// header, the tiers a device fills, the configuration and the lines of its errors are
    /// all read from one tree, with or without `--set` overrides.
    #[test]
    fn a_scenario_is_parsed_once() {
        let text = "module = \"tiering\"\nseed = 1\n[[tiers]]\nname = \"local\"\ncapacity_bytes = 4000000000\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 160.0\n[[tiers]]\ndevice = \"cxl-dram\"\n[workload]\nworking_set_bytes = 8589934592\nhot_set_bytes = 2147483648\n[antagonist]\nintensities = [0]\n[policy]\nnames = [\"static-default\"]\n[sim]\nduration_s = 0.2\nmeasure_last_s = 0.1\n";
        let parses = |overrides: &[(String, String)]| {
            crate::config::PARSED.with(|p| p.borrow_mut().clear());
            run_scenario(text, "once.toml", overrides, &[]).unwrap();
            crate::config::PARSED.with(|p| p.borrow().iter().filter(|f| *f == "once.toml").count())
        };
        assert_eq!(parses(&[]), 1);
        assert_eq!(parses(&[("seed".into(), "2".into())]), 1);
        // An error is still found at its line in that one tree.
        let bad = text.replace("duration_s = 0.2", "duration_s = -1.0");
        crate::config::PARSED.with(|p| p.borrow_mut().clear());
        let e = run_scenario(&bad, "once.toml", &[], &[]).unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("sim.duration_s", Some(18)),
            "{e}"
        );
        let n =
            crate::config::PARSED.with(|p| p.borrow().iter().filter(|f| *f == "once.toml").count());
        assert_eq!(n, 1);
    }

    /// Resolving a scenario without running it gives the configuration its run reports,
    /// device slots filled; spellings of one simulation resolve alike, another does not;
    /// errors are a run's.
    #[test]
    fn a_scenario_resolves_as_its_run_reports() {
        let text = "module = \"tiering\"\nseed = 1\n[[tiers]]\nname = \"local\"\ncapacity_bytes = 4000000000\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 160.0\n[[tiers]]\ndevice = \"cxl-dram\"\n[workload]\nworking_set_bytes = 8589934592\nhot_set_bytes = 2147483648\n[antagonist]\nintensities = [0]\n[policy]\nnames = [\"static-default\"]\n[sim]\nduration_s = 0.2\nmeasure_last_s = 0.1\n";
        let set = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        let resolved = resolve_scenario(text, "r.toml", &[], &[]).unwrap();
        let run = run_scenario(text, "r.toml", &[], &[]).unwrap();
        assert_eq!(resolved, run.resolved);
        assert!(
            resolved["tiers"][1]["unloaded_latency_ns"]
                .as_f64()
                .unwrap()
                > 70.0
        );
        // Keys the text leaves to their defaults, written out at those values.
        let sim = resolved["sim"].as_object().unwrap();
        let defaulted: Vec<(String, String)> = sim
            .iter()
            .filter(|(k, v)| !text.contains(&format!("{k} =")) && (v.is_number() || v.is_boolean()))
            .map(|(k, v)| (format!("sim.{k}"), v.to_string()))
            .collect();
        assert!(defaulted.len() >= 2, "{sim:?}");
        assert_eq!(
            resolve_scenario(text, "r.toml", &defaulted, &[]).unwrap(),
            resolved
        );
        assert_eq!(
            resolve_scenario(text, "r.toml", &set("seed", "1"), &[]).unwrap(),
            resolved
        );
        let other = resolve_scenario(text, "r.toml", &set("seed", "2"), &[]).unwrap();
        assert_ne!(other, resolved);
        // Many at once, against one reading of the catalog: the same answers, an error in
        // its place.
        let many = resolve_scenarios(
            &[
                (text.into(), "r.toml".into(), set("seed", "2")),
                (text.into(), "r.toml".into(), set("sim.duration_s", "-1.0")),
                (text.into(), "r.toml".into(), Vec::new()),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(many[0].as_ref().unwrap(), &other);
        assert!(many[1].is_err());
        assert_eq!(many[2].as_ref().unwrap(), &resolved);
        let e = resolve_scenario(text, "r.toml", &set("sim.duration_s", "-1.0"), &[]).unwrap_err();
        let r = run_scenario(text, "r.toml", &set("sim.duration_s", "-1.0"), &[]).unwrap_err();
        assert_eq!((e.file, e.key, e.message), (r.file, r.key, r.message));
    }

    #[test]
    fn declared_columns_are_those_a_run_carries() {
        let out = run_scenario(SCENARIO, "s.toml", &[], &[]).unwrap();
        let declared: Vec<&str> = columns("storage").unwrap().iter().map(|c| c.name).collect();
        let carried: Vec<&str> = out.columns["results"]
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(declared, carried);
        assert!(columns("nope").is_none());
    }

    /// A policy that never migrates: enough to see whose rows a run carries.
    struct Idle;

    impl crate::tier::TieringPolicy for Idle {
        fn name(&self) -> &'static str {
            "idle"
        }
        fn quantum(&mut self, _obs: &crate::tier::Observation) -> Vec<crate::tier::Migration> {
            Vec::new()
        }
    }

    fn idle_policy() -> Parts {
        let external = crate::tier::ExternalPolicy {
            name: "mine".to_string(),
            make: Box::new(|| Box::new(Idle)),
        };
        Parts::new().with(crate::tier::EXTERNAL_POLICY, external)
    }

    /// The caller's parts reach the module through the run's context (no state beside
    /// the call), and a module that takes none refuses them.
    #[test]
    fn parts_go_to_the_module_that_takes_them() {
        let text = "module = \"tiering\"\nseed = 1\n[antagonist]\nintensities = [0, 1]\n\
                    [sim]\nduration_s = 0.2\nmeasure_last_s = 0.1\ntimeline = false\n\
                    [policy]\nnames = [\"python:mine\"]\n";
        let parts = idle_policy();
        let out = run_scenario_with_parts(text, "t.toml", &[], &[], &NoProgress, &parts).unwrap();
        let policies: Vec<&str> = out
            .rows
            .iter()
            .map(|r| r["policy"].as_str().unwrap())
            .collect();
        assert_eq!(policies, ["mine", "mine"]);
        assert_eq!(out.resolved["policy"]["names"][0], "python:mine");
        assert!(parts.left().is_empty());
        // The next run on this thread has no part: a python: name alone is refused.
        let e = run_scenario(text, "t.toml", &[], &[]).unwrap_err();
        assert!(
            e.key == "policy.names" && e.message.contains("Python package"),
            "{e}"
        );
        // A hook never replaces registered policies behind the scenario's back.
        let registered = text.replace("python:mine", "hemem");
        let e =
            run_scenario_with_parts(&registered, "t.toml", &[], &[], &NoProgress, &idle_policy())
                .unwrap_err();
        assert!(
            e.key == "policy.names" && e.message.contains("in place of"),
            "{e}"
        );
        let e = run_scenario_with_parts(SCENARIO, "s.toml", &[], &[], &NoProgress, &idle_policy())
            .unwrap_err();
        assert!(
            e.key == "module" && e.message.contains("takes no tiering policy hook"),
            "{e}"
        );
    }

    /// Tiering's per-tier columns are named after the run's tiers, whatever they are.
    #[test]
    fn per_tier_columns_are_named_after_the_run_tiers() {
        let text = "module = \"tiering\"\n[sim]\nduration_s = 0.2\nmeasure_last_s = 0.1\n\
                    timeline = false\n";
        let sets = [("tiers.0.name", "near"), ("tiers.1.name", "far")];
        let overrides: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), format!("\"{v}\"")))
            .collect();
        let out = run_scenario(text, "t.toml", &overrides, &[]).unwrap();
        let names: Vec<&str> = out.columns["results"]
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert!(names.contains(&"near_latency_ns") && names.contains(&"far_latency_ns"));
        assert!(!names.iter().any(|n| n.contains("{tier}")), "{names:?}");
        assert!(out.rows[0].contains_key("far_latency_ns"));
    }

    #[test]
    fn every_module_has_benchmarks_and_unknown_names_are_refused() {
        for e in MODULES.iter() {
            assert!(e.make.bench.is_some(), "{} has benchmarks", e.name);
        }
        let e = run_benchmarks(Some("nope"), 1.0).unwrap_err();
        assert_eq!(e.file, "--module");
        assert!(e.message.contains("allowed: storage, pmem"), "{e}");
        assert!(e.message.ends_with(", trace"), "{e}");
        assert_eq!(run_benchmarks(Some("storage"), 1e-4).unwrap().len(), 1);
    }

    #[test]
    fn every_module_is_registered_once() {
        assert!(MODULES.duplicates().is_empty());
        assert_eq!(MODULES.names().len(), 7);
    }

    #[test]
    fn every_module_names_its_page_a_study_and_sweep_metrics_it_has() {
        let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        let mut studies: Vec<&str> = MODULES.iter().map(|e| e.make.study).collect();
        studies.sort();
        studies.dedup();
        assert_eq!(studies.len(), 7, "one study per module");
        for e in MODULES.iter() {
            assert!(
                docs.join(e.make.docs).is_file(),
                "{}: docs/{}",
                e.name,
                e.make.docs
            );
            assert!(!e.make.sweep_metrics.is_empty(), "{}", e.name);
            for m in e.make.sweep_metrics {
                // a per-tier column is declared as `{tier}_…` (tiering's `default_latency_ns`)
                let declared = |c: &Column| match c.name.strip_prefix("{tier}") {
                    Some(rest) => m.ends_with(rest) && m.len() > rest.len(),
                    None => c.name == *m,
                };
                assert!(
                    e.make.columns.iter().any(declared),
                    "{}: sweep metric {m} is no result column",
                    e.name
                );
            }
        }
    }

    const SCENARIO: &str = "module = \"storage\"\n[device]\nname = \"intel-optane-900p\"\n[job]\nop = \"read\"\nqueue_depth = 4\nblock_size_bytes = 4096\nduration_s = 0.001\n";

    /// `--set tiers.1.x=v` on a tiering scenario without `[[tiers]]` changes the default
    /// tiers: written out exactly, then entry 1 changed.
    #[test]
    fn an_override_into_default_tiers_changes_that_default() {
        #[derive(serde::Deserialize)]
        struct Tiers {
            tiers: Vec<crate::mempath::TierSpec>,
        }
        let text = "module = \"tiering\"\nseed = 3\n";
        let ov = vec![("tiers.1.unloaded_latency_ns".to_string(), "250".to_string())];
        let out = apply_overrides(text, "s.toml", &ov).unwrap();
        let got: Tiers = toml::from_str(&out).unwrap();
        let mut want = crate::tier::params::reference_tiers();
        want[1].unloaded_latency_ns = 250.0;
        assert_eq!(got.tiers, want);
        // A key with no default array to write out says what to do instead.
        let ov = vec![("policies.0.x".to_string(), "1".to_string())];
        let e = apply_overrides(text, "s.toml", &ov).unwrap_err();
        assert!(
            e.message.contains("'policies' is not in the scenario"),
            "{e}"
        );
    }

    #[test]
    fn errors_from_overrides_name_the_override() {
        let ov = vec![("job.queue_depth".to_string(), "0".to_string())];
        let e = run_scenario(SCENARIO, "s.toml", &ov, &[]).unwrap_err();
        assert_eq!(e.file, "--set job.queue_depth=0");
        assert_eq!(e.key, "job.queue_depth");
    }

    #[test]
    fn errors_elsewhere_keep_the_original_line_despite_overrides() {
        let bad = SCENARIO.replace("op = \"read\"", "op = \"readd\"");
        let e = run_scenario(&bad, "s.toml", &[], &[]).unwrap_err();
        assert_eq!(e.line, Some(5));
        let ov = vec![
            ("device.name".to_string(), "intel-ssd-750".to_string()),
            ("seed".to_string(), "3".to_string()),
        ];
        let e = run_scenario(&bad, "s.toml", &ov, &[]).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.key.as_str()),
            ("s.toml", Some(5), "job.op")
        );
    }
}
