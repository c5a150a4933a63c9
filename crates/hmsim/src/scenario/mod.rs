//! The one shape every module's scenario has: a common [`Header`], a module [`Scenario`] with
//! its own `Config`, an [`Experiment`] whose points the skeleton runs, and result
//! [`ResultRow`]s, a [`Ctx`] for paths, devices, random streams and progress, and
//! [`Registry`]s for parts picked by name (`Registry` and `Progress` live
//! below every component, in `named.rs` and `progress.rs`, and are re-exported here). See
//! docs/architecture.md.

mod ctx;
mod grid;
mod header;
mod output;

pub use crate::columns::{
    columns_len, concat_columns, Column, ColumnType, Dtype, ResultRow, RunColumn, Spelling,
};
pub use crate::named::{Entry, Registry};
pub use crate::progress::{NoProgress, Progress};
pub use ctx::{Ctx, Parts};
pub use grid::{Experiment, Step};
pub use header::Header;
pub use output::{to_map, Output, RunOutput, Table};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::params::{Params, TableRef};
use crate::config::{Source, Validate, Validator};
use crate::device::{blame_slot, explain_unknown_key, fill_slots, Catalog, Slot};
use crate::error::RunError;

/// A module's scenario: its configuration, its result row and how to run it.
pub trait Scenario {
    /// The `module = "…"` name.
    const MODULE: &'static str;
    /// One line on what the module simulates.
    const ABOUT: &'static str;
    /// Its page under docs/ (`storage.md`).
    const DOCS: &'static str;
    /// The study that reproduces its paper (`hmsim reproduce NAME`).
    const STUDY: &'static str;
    /// The result columns a sweep plots against its first axis.
    const SWEEP_METRICS: &'static [&'static str];
    /// Tables its generated parameter page lists beside `Config`'s, and what the page's
    /// intro says beyond the common sentence.
    const MORE_PARAMS: &'static [fn() -> TableRef] = &[];
    const PARAMS_NOTE: &'static str = "";
    /// A key (`sim.duration_s`) such that a run is, result for result, the start of the
    /// same scenario's run with a larger value: the module then takes the caller's shelf of
    /// kept results as a part, and runs differing only there can share one simulation
    /// (`registry::run_scenario_chain`).
    const PREFIX_KEY: Option<&'static str> = None;
    /// Keys that leave a run's start unchanged (pm-index's YCSB workload and distribution:
    /// every point of one index loads the same records first). The module keeps that start
    /// per thread, so runs differing only there run one after another on one worker.
    const SAME_START_KEYS: &'static [&'static str] = &[];
    /// Keys that only say where a run stops, never what it does before (tiering's
    /// `sim.until_steady` and `sim.max_duration_s`): runs differing there and along
    /// [`Self::PREFIX_KEY`] still share one simulation, the longest run keeping its results
    /// at every length ([`Self::stop_lengths`]) another may stop at.
    const STOP_KEYS: &'static [&'static str] = &[];
    /// The values of [`Self::PREFIX_KEY`] at which a run of the resolved scenario
    /// `resolved` may stop (empty: only its own value there, or not known).
    fn stop_lengths(_resolved: &Value) -> Vec<f64> {
        Vec::new()
    }
    /// Everything of the scenario but the [`Header`].
    type Config: DeserializeOwned + Serialize + Validate + Params;
    /// One row of `results.csv`.
    type Row: ResultRow;
    /// The extra tables a run may write (`name.csv`), each with its row type's columns.
    const TABLES: &'static [(&'static str, &'static [Column])] = &[];

    /// An array of tables whose entries may name a catalog device (tiering's `tiers`):
    /// the skeleton fills what an entry does not write from the device before the
    /// configuration is read, and points errors at what the user wrote.
    const DEVICE_SLOTS: Option<&'static Slot> = None;

    /// Its experiment on `cfg`: the grid of points the skeleton runs ([`Experiment`]).
    type Experiment<'a>: Experiment<Row = Self::Row>
    where
        Self: 'a;

    /// Build the experiment of a validated `cfg`: everything the points share (workloads
    /// read, devices resolved, what can only be checked once those are known).
    fn build<'a>(cfg: &'a Self::Config, ctx: &Ctx<'a>) -> Result<Self::Experiment<'a>, RunError>;

    /// Per-run names of the placeholders in its declared column names (tiering's
    /// `{tier}_latency_ns`, one column per tier of the run).
    fn column_spellings(_cfg: &Self::Config) -> Vec<Spelling> {
        Vec::new()
    }
}

/// The header keys of a scenario; other keys are the module's (checked there).
#[derive(Deserialize)]
struct HeaderOnly {
    module: String,
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
}

/// The configuration of module `S` in the scenario `text` (header keys dropped), for tests.
#[cfg(test)]
pub(crate) fn parse_config<S: Scenario>(text: &str) -> S::Config {
    let source = Source::parse(text, "t.toml").unwrap();
    without_header(&source).deserialize().unwrap()
}

/// `source` without the header's keys, so the module's configuration is read with
/// `deny_unknown_fields`.
fn without_header<'a>(source: &Source<'a>) -> Source<'a> {
    source.edited(|root| root.retain(|k, _| !Header::KEYS.contains(&k)))
}

/// Parse, validate and run the scenario `text` (from `file`) of module `S`.
pub fn run<S: Scenario>(
    text: &str,
    file: &str,
    catalog: &Catalog,
    progress: &dyn Progress,
) -> Result<RunOutput, RunError> {
    run_source::<S>(
        &Source::parse(text, file)?,
        catalog,
        progress,
        &Parts::new(),
    )
}

/// Validate and run module `S` on the scenario read into `source` (parsed once, by the
/// caller), offering the caller's `parts` to the module (refused if it leaves one).
pub fn run_source<S: Scenario>(
    source: &Source,
    catalog: &Catalog,
    progress: &dyn Progress,
    parts: &Parts,
) -> Result<RunOutput, RunError> {
    let Some(slot) = S::DEVICE_SLOTS else {
        return run_tree::<S>(source, catalog, progress, parts);
    };
    let (filled, device_warnings) = fill_slots(source, catalog, slot)?;
    let mut out = match &filled {
        Some(f) => {
            run_tree::<S>(f, catalog, progress, parts).map_err(|e| blame_slot(e, source, slot))?
        }
        None => run_tree::<S>(source, catalog, progress, parts)
            .map_err(|e| explain_unknown_key(e, source, slot))?,
    };
    // Once per run, before the rows' own warnings.
    out.warnings.splice(0..0, device_warnings);
    Ok(out)
}

/// The configuration a run of module `S` on `source` would use, as `summary.json` shows it
/// (`resolved_config`), without running: two scenarios with the same answer (keys spelled
/// out or left to their defaults, in any order) run the same simulation, so a sweep runs
/// such points once. Devices are filled into their slots as for a run.
pub fn resolve_source<S: Scenario>(source: &Source, catalog: &Catalog) -> Result<Value, RunError> {
    let filled = match S::DEVICE_SLOTS {
        Some(slot) => fill_slots(source, catalog, slot)?.0,
        None => None,
    };
    let source = filled.as_ref().unwrap_or(source);
    let (header, cfg) = read_config::<S>(source)?;
    Ok(resolved(&header, &cfg))
}

/// The header and the validated configuration of module `S` in `source`.
fn read_config<S: Scenario>(source: &Source) -> Result<(Header, S::Config), RunError> {
    // HeaderOnly reads the header's keys and ignores the module's.
    let h: HeaderOnly = source.deserialize()?;
    let header = Header {
        module: h.module,
        seed: h.seed,
        name: h.name,
        description: h.description,
    };
    let cfg: S::Config = without_header(source).deserialize()?;
    Validator::check(source, &cfg)?;
    Ok((header, cfg))
}

fn run_tree<S: Scenario>(
    source: &Source,
    catalog: &Catalog,
    progress: &dyn Progress,
    parts: &Parts,
) -> Result<RunOutput, RunError> {
    let (header, cfg) = read_config::<S>(source)?;
    let ctx = Ctx::new(source, &header, catalog)
        .with_progress(progress)
        .with_parts(parts);
    let output = grid::run(S::build(&cfg, &ctx)?, &ctx)?;
    if let Some(what) = parts.left().first() {
        return Err(ctx.error("module", format!("a {} run takes no {what}", S::MODULE)));
    }
    Ok(RunOutput::from_output(
        S::MODULE,
        header.seed,
        resolved(&header, &cfg),
        output,
        &S::column_spellings(&cfg),
    ))
}

/// The header's keys, then the configuration's, as `summary.json` shows them.
fn resolved<C: Serialize>(header: &Header, cfg: &C) -> Value {
    let mut all = match serde_json::to_value(header) {
        Ok(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    if let Ok(Value::Object(m)) = serde_json::to_value(cfg) {
        all.extend(m);
    }
    Value::Object(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_keys_are_dropped_and_lines_kept() {
        let text = "module = \"x\"\nseed = 3\ndescription = \"\"\"two\nlines\"\"\"\n[a]\nname = \"kept\"\n";
        let source = Source::parse(text, "t.toml").unwrap();
        let body = without_header(&source);
        let t: toml::Table = body.deserialize().unwrap();
        assert_eq!(t.keys().collect::<Vec<_>>(), vec!["a"]);
        assert_eq!(t["a"]["name"].as_str(), Some("kept"));
        assert_eq!(body.line_of_key("a.name"), Some(6));
    }
}
