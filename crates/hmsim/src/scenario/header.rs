//! The four keys every scenario shares, read before the module's own configuration.

use serde::{Deserialize, Serialize};

/// `module`, `seed`, `name`, `description`: the top-level keys common to every module.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Header {
    /// Which module runs the scenario.
    pub module: String,
    /// Root of every random stream of the run.
    #[serde(default)]
    pub seed: u64,
    /// A label for tables and file names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Free text, copied into `summary.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl Header {
    /// The header's keys, removed from the document before a module's configuration is read
    /// so that configurations can keep `deny_unknown_fields`.
    pub const KEYS: [&'static str; 4] = ["module", "seed", "name", "description"];
}
