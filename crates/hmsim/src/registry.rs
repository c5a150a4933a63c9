//! Modules registered by name: a scenario's `module` key picks its runner.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::{apply_overrides, line_of_key};
use crate::device::Catalog;
use crate::error::ConfigError;

/// What one scenario run produced: tidy rows for `results.csv`, extra tables (e.g.
/// `thermal.csv`), headline metrics and the resolved configuration for `summary.json`.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutput {
    pub module: String,
    pub seed: u64,
    pub version: &'static str,
    pub resolved: Value,
    pub rows: Vec<Map<String, Value>>,
    pub tables: BTreeMap<String, Vec<Map<String, Value>>>,
    pub headline: Map<String, Value>,
}

impl RunOutput {
    pub fn new(module: &str, seed: u64, resolved: Value) -> RunOutput {
        RunOutput {
            module: module.to_string(),
            seed,
            version: crate::VERSION,
            resolved,
            rows: Vec::new(),
            tables: BTreeMap::new(),
            headline: Map::new(),
        }
    }
}

type Runner = fn(&str, &str, &Catalog) -> Result<RunOutput, ConfigError>;

/// Every module with a scenario runner, by the name a scenario's `module` key uses.
pub const MODULES: &[(&str, Runner)] = &[("storage", crate::storage::run)];

pub fn module_names() -> Vec<&'static str> {
    MODULES.iter().map(|(n, _)| *n).collect()
}

#[derive(Deserialize)]
struct Header {
    module: Option<toml::Value>,
}

/// Run the scenario `text` read from `file`, after applying `overrides` (`key.path`, `value`),
/// with devices from the built-in catalog plus `device_paths`.
pub fn run_scenario(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    device_paths: &[PathBuf],
) -> Result<RunOutput, ConfigError> {
    let text = apply_overrides(text, file, overrides)?;
    let header: Header = crate::config::parse_toml(&text, file)?;
    let names = module_names().join(", ");
    let module = match header.module {
        Some(toml::Value::String(m)) => m,
        Some(_) => {
            return Err(ConfigError::new(
                file,
                "module",
                format!("expected a string; allowed: {names}"),
            )
            .at_line(line_of_key(&text, "module")))
        }
        None => {
            return Err(ConfigError::new(
                file,
                "module",
                format!("missing required key; allowed: {names}"),
            ))
        }
    };
    let Some((_, runner)) = MODULES.iter().find(|(n, _)| *n == module) else {
        return Err(ConfigError::new(
            file,
            "module",
            format!("unknown module '{module}'; allowed: {names}"),
        )
        .at_line(line_of_key(&text, "module")));
    };
    let catalog = Catalog::load(device_paths)?;
    runner(&text, file, &catalog)
}
