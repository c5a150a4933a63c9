//! What a run produces: typed rows inside the core, JSON rows with their schema across the
//! boundary to Python.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::columns::{spell_columns, Column, ResultRow, RunColumn, Spelling};

/// A module's result: rows for `results.csv`, extra tables (e.g. `thermal.csv`) and headline
/// metrics for `summary.json`.
pub struct Output<R: ResultRow> {
    pub rows: Vec<R>,
    pub tables: BTreeMap<String, Table>,
    pub headline: Map<String, Value>,
    /// What limits how far the rows can be trusted (a lifetime resting on the final drain,
    /// a window that is not steady): printed by the CLI and kept in `summary.json`.
    pub warnings: Vec<String>,
}

impl<R: ResultRow> Output<R> {
    pub fn new(rows: Vec<R>) -> Self {
        Output {
            rows,
            tables: BTreeMap::new(),
            headline: Map::new(),
            warnings: Vec::new(),
        }
    }

    /// `other`'s rows, tables, headline metrics and warnings added after this output's
    /// (a table or metric of the same name is replaced).
    pub fn append(&mut self, other: Output<R>) {
        self.rows.extend(other.rows);
        self.tables.extend(other.tables);
        self.headline.extend(other.headline);
        self.warnings.extend(other.warnings);
    }

    /// The same output with each row made an `S` by `f`.
    pub fn map_rows<S: ResultRow>(self, f: impl FnMut(R) -> S) -> Output<S> {
        Output {
            rows: self.rows.into_iter().map(f).collect(),
            tables: self.tables,
            headline: self.headline,
            warnings: self.warnings,
        }
    }

    /// Add the extra table `name` (written as `name.csv`).
    pub fn table<T: ResultRow>(&mut self, name: &str, rows: &[T]) {
        self.tables.insert(name.to_string(), Table::of(rows));
    }
}

/// An extra results table: declared columns and rows.
pub struct Table {
    pub columns: &'static [Column],
    pub rows: Vec<Map<String, Value>>,
}

impl Table {
    pub fn of<T: ResultRow>(rows: &[T]) -> Table {
        Table {
            columns: T::COLUMNS,
            rows: rows.iter().map(to_map).collect(),
        }
    }
}

/// A row as a JSON object, fields in declaration order.
pub fn to_map<T: Serialize>(row: &T) -> Map<String, Value> {
    match serde_json::to_value(row) {
        Ok(Value::Object(m)) => m,
        // Row structs are plain structs of numbers and strings: they always serialise to objects.
        _ => Map::new(),
    }
}

/// What one scenario run produced, as it crosses to Python: tidy rows for `results.csv`, extra
/// tables, headline metrics, the resolved configuration for `summary.json`, and the declared
/// columns of each table (`results` for the main one).
#[derive(Debug, Clone, Serialize)]
pub struct RunOutput {
    pub module: String,
    pub seed: u64,
    pub version: &'static str,
    pub resolved: Value,
    pub rows: Vec<Map<String, Value>>,
    pub tables: BTreeMap<String, Vec<Map<String, Value>>>,
    pub headline: Map<String, Value>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub columns: BTreeMap<String, Vec<RunColumn>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
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
            columns: BTreeMap::new(),
            warnings: Vec::new(),
        }
    }

    /// The run output of a module's typed `output`, its columns named as `spellings` say
    /// for this run (tiering's `{tier}_…` after the run's tiers).
    pub fn from_output<R: ResultRow>(
        module: &str,
        seed: u64,
        resolved: Value,
        output: Output<R>,
        spellings: &[Spelling],
    ) -> RunOutput {
        let mut out = RunOutput::new(module, seed, resolved);
        out.rows = output.rows.iter().map(to_map).collect();
        out.columns
            .insert("results".to_string(), spell_columns(R::COLUMNS, spellings));
        for (name, table) in output.tables {
            out.columns
                .insert(name.clone(), spell_columns(table.columns, spellings));
            out.tables.insert(name, table.rows);
        }
        out.headline = output.headline;
        out.warnings = output.warnings;
        out
    }
}
