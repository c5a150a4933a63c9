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
pub const MODULES: &[(&str, Runner)] = &[
    ("storage", crate::storage::run),
    ("pmem", crate::pmem::run),
    ("tiering", crate::tier::run),
    ("allocators", crate::alloc::run),
    ("pm-index", crate::pmindex::run),
    ("numa", crate::numa::run),
    ("hybrid", crate::hybrid::run),
];

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
    let original = text;
    let text = apply_overrides(text, file, overrides)?;
    run_module(&text, file, device_paths).map_err(|e| blame_source(e, original, file, overrides))
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

fn run_module(text: &str, file: &str, device_paths: &[PathBuf]) -> Result<RunOutput, ConfigError> {
    let header: Header = crate::config::parse_toml(text, file)?;
    let names = module_names().join(", ");
    let module = match header.module {
        Some(toml::Value::String(m)) => m,
        Some(_) => {
            return Err(ConfigError::new(
                file,
                "module",
                format!("expected a string; allowed: {names}"),
            )
            .at_line(line_of_key(text, "module")))
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
        .at_line(line_of_key(text, "module")));
    };
    let catalog = Catalog::load(device_paths)?;
    runner(text, file, &catalog)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENARIO: &str = "module = \"storage\"\n[device]\nname = \"intel-optane-900p\"\n[job]\nop = \"read\"\nqueue_depth = 4\nblock_size_bytes = 4096\nduration_s = 0.001\n";

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
