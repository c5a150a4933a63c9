//! Result rows declared once: each column's name, unit, type and meaning sit beside the
//! struct that carries its values, so the CSV schema is known before a run and checked after.

use serde::Serialize;

/// The type of a result column, as the Python side builds the DataFrame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    Float,
    Int,
    Bool,
    Str,
}

/// One declared column of a results table.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Column {
    pub name: &'static str,
    /// Unit, empty for labels and dimensionless ratios.
    pub unit: &'static str,
    pub dtype: Dtype,
    /// Whether the column may be empty (`null`) in some rows.
    pub nullable: bool,
    /// A value measured with the host's clock, not a simulated result: it differs between runs.
    pub measured: bool,
    pub doc: &'static str,
}

/// A Rust type that can be a result column.
pub trait ColumnType {
    const DTYPE: Dtype;
    const NULLABLE: bool = false;
}

macro_rules! column_types {
    ($dtype:ident: $($t:ty),*) => {
        $(impl ColumnType for $t { const DTYPE: Dtype = Dtype::$dtype; })*
    };
}
column_types!(Float: f64, f32);
column_types!(Int: u64, u32, u16, u8, usize, i64, i32);
column_types!(Bool: bool);
column_types!(Str: String, &'static str);

impl<T: ColumnType> ColumnType for Option<T> {
    const DTYPE: Dtype = T::DTYPE;
    const NULLABLE: bool = true;
}

/// A row of a results table: serialised field by field, in declaration order.
pub trait ResultRow: Serialize {
    const COLUMNS: &'static [Column];
}

/// How many columns `parts` hold together.
pub const fn columns_len(parts: &[&[Column]]) -> usize {
    let (mut n, mut p) = (0, 0);
    while p < parts.len() {
        n += parts[p].len();
        p += 1;
    }
    n
}

/// The columns of `parts` one after the other (`N` = [`columns_len`] of `parts`): a row's
/// own columns and the groups it embeds, as one list in serialisation order.
pub const fn concat_columns<const N: usize>(parts: &[&[Column]]) -> [Column; N] {
    const NONE: Column = Column {
        name: "",
        unit: "",
        dtype: Dtype::Float,
        nullable: false,
        measured: false,
        doc: "",
    };
    let mut out = [NONE; N];
    let (mut n, mut p) = (0, 0);
    while p < parts.len() {
        let mut i = 0;
        while i < parts[p].len() {
            out[n] = parts[p][i];
            n += 1;
            i += 1;
        }
        p += 1;
    }
    assert!(n == N, "concat_columns: N is not the number of columns");
    out
}

/// Declare a result row struct and its columns together. A field marked `[flatten]` embeds
/// a column group (any other `result_row!` struct): its columns, with their units and docs,
/// stand in the row at the field's place, so a group shared by several rows (the PMem
/// counters) is declared once.
///
/// ```
/// hmsim::result_row! {
///     /// Counters several rows report.
///     pub struct Counts {
///         reads: u64 ["requests", "read requests"],
///         writes: u64 ["requests", "write requests"],
///     }
/// }
/// hmsim::result_row! {
///     /// One run of a job.
///     pub struct JobRow {
///         device: String ["", "catalog device name"],
///         bandwidth_gb_s: f64 ["", "achieved bandwidth"],
///         counts: Counts [flatten],
///         #[serde(skip_serializing_if = "Option::is_none")]
///         p99_us: Option<f64> ["", "99th percentile latency"],
///         wall_s: f64 ["", "host wall-clock time", measured],
///     }
/// }
/// use hmsim::scenario::ResultRow;
/// let names: Vec<_> = JobRow::COLUMNS.iter().map(|c| c.name).collect();
/// assert_eq!(names, ["device", "bandwidth_gb_s", "reads", "writes", "p99_us", "wall_s"]);
/// assert_eq!(JobRow::COLUMNS[1].unit, "GB/s");
/// assert!(JobRow::COLUMNS[4].nullable && JobRow::COLUMNS[5].measured);
/// let row = JobRow {
///     device: "d".into(),
///     bandwidth_gb_s: 1.0,
///     counts: Counts { reads: 2, writes: 3 },
///     p99_us: None,
///     wall_s: 0.5,
/// };
/// let keys: Vec<_> = hmsim::scenario::to_map(&row).keys().cloned().collect();
/// assert_eq!(keys, ["device", "bandwidth_gb_s", "reads", "writes", "wall_s"]);
/// ```
#[macro_export]
macro_rules! result_row {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident { $($body:tt)* }
    ) => {
        $crate::result_row!(@munch [$(#[$meta])*] [$vis] $name [] [] $($body)*);
    };
    // A column group, flattened into the row.
    (@munch $meta:tt $vis:tt $name:ident [$($fields:tt)*] [$($parts:tt)*]
        $(#[$fmeta:meta])*
        $field:ident : $ty:ty [flatten] $(, $($rest:tt)*)?
    ) => {
        $crate::result_row!(@munch $meta $vis $name
            [$($fields)* $(#[$fmeta])* #[serde(flatten)] pub $field: $ty,]
            [$($parts)* <$ty as $crate::columns::ResultRow>::COLUMNS,]
            $($($rest)*)?);
    };
    // One column.
    (@munch $meta:tt $vis:tt $name:ident [$($fields:tt)*] [$($parts:tt)*]
        $(#[$fmeta:meta])*
        $field:ident : $ty:ty [$unit:literal, $doc:literal $(, $flag:ident)?] $(, $($rest:tt)*)?
    ) => {
        $crate::result_row!(@munch $meta $vis $name
            [$($fields)* $(#[$fmeta])* #[doc = $doc] pub $field: $ty,]
            [$($parts)* &[$crate::columns::Column {
                name: stringify!($field),
                unit: $crate::units::unit_of(stringify!($field), $unit),
                dtype: <$ty as $crate::columns::ColumnType>::DTYPE,
                nullable: <$ty as $crate::columns::ColumnType>::NULLABLE,
                measured: $crate::result_row!(@measured $($flag)?),
                doc: $doc,
            }],]
            $($($rest)*)?);
    };
    // Every field read: the struct and its columns.
    (@munch [$($meta:tt)*] [$vis:vis] $name:ident [$($fields:tt)*] [$($parts:tt)*]) => {
        $($meta)*
        #[derive(Debug, Clone, serde::Serialize)]
        $vis struct $name { $($fields)* }

        impl $crate::columns::ResultRow for $name {
            const COLUMNS: &'static [$crate::columns::Column] = {
                const PARTS: &[&[$crate::columns::Column]] = &[$($parts)*];
                const ALL: [$crate::columns::Column; $crate::columns::columns_len(PARTS)] =
                    $crate::columns::concat_columns(PARTS);
                &ALL
            };
        }
    };
    (@measured measured) => { true };
    (@measured) => { false };
}

/// A column of one run's output: a declared [`Column`] whose `{placeholder}` (if any) is
/// spelled out for that run, so its name is owned. Serialises as a `Column` does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunColumn {
    pub name: String,
    pub unit: &'static str,
    pub dtype: Dtype,
    pub nullable: bool,
    pub measured: bool,
    pub doc: &'static str,
}

impl RunColumn {
    fn named(c: &Column, name: String) -> RunColumn {
        RunColumn {
            name,
            unit: c.unit,
            dtype: c.dtype,
            nullable: c.nullable,
            measured: c.measured,
            doc: c.doc,
        }
    }
}

/// Per-run names of a column placeholder: each run of consecutive declared columns whose
/// names hold `placeholder` (`{tier}`) repeats once per name, in order (the order a row
/// holds its values), with the placeholder replaced.
pub type Spelling = (&'static str, Vec<String>);

/// `columns` as one run names them (see [`Spelling`]).
pub fn spell_columns(columns: &[Column], spellings: &[Spelling]) -> Vec<RunColumn> {
    let mut out: Vec<RunColumn> = columns
        .iter()
        .map(|c| RunColumn::named(c, c.name.to_string()))
        .collect();
    for (placeholder, names) in spellings {
        let mut spelled = Vec::with_capacity(out.len());
        let mut rest = out.into_iter().peekable();
        while let Some(c) = rest.next() {
            if !c.name.contains(placeholder) {
                spelled.push(c);
                continue;
            }
            let mut group = vec![c];
            while let Some(next) = rest.next_if(|n| n.name.contains(placeholder)) {
                group.push(next);
            }
            for name in names {
                for g in &group {
                    spelled.push(RunColumn {
                        name: g.name.replace(placeholder, name),
                        ..g.clone()
                    });
                }
            }
        }
        out = spelled;
    }
    out
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn named(cols: &[Column], name: &str) -> bool {
    let mut i = 0;
    while i < cols.len() {
        if same(cols[i].name, name) {
            return true;
        }
        i += 1;
    }
    false
}

/// How many columns `a` and the columns of `b` whose names `a` lacks make (for [`union`]).
pub const fn union_len(a: &[Column], b: &[Column]) -> usize {
    let (mut n, mut j) = (a.len(), 0);
    while j < b.len() {
        if !named(a, b[j].name) {
            n += 1;
        }
        j += 1;
    }
    n
}

/// The columns of `a`, then those of `b` whose names `a` lacks: the `results.csv` columns
/// of a row type that is one of two rows (a run writes one kind only).
pub const fn union<const N: usize>(a: &[Column], b: &[Column]) -> [Column; N] {
    let mut out = [a[0]; N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < b.len() {
        if !named(a, b[j].name) {
            out[i] = b[j];
            i += 1;
        }
        j += 1;
    }
    out
}

#[cfg(test)]
mod spell_tests {
    use super::*;

    const fn col(name: &'static str) -> Column {
        Column {
            name,
            unit: "ns",
            dtype: Dtype::Float,
            nullable: false,
            measured: false,
            doc: "",
        }
    }

    #[test]
    fn a_placeholder_group_repeats_per_name_in_place() {
        let cols = [
            col("policy"),
            col("{tier}_a"),
            col("{tier}_b"),
            col("total"),
        ];
        let names: Vec<String> = spell_columns(&cols, &[("{tier}", vec!["x".into(), "y".into()])])
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["policy", "x_a", "x_b", "y_a", "y_b", "total"]);
        let plain = spell_columns(&cols[..1], &[]);
        assert_eq!(plain[0].name, "policy");
        assert_eq!(plain[0].unit, "ns");
        // Serialised as the declared column is.
        assert_eq!(
            serde_json::to_value(&plain[0]).unwrap(),
            serde_json::to_value(cols[0]).unwrap()
        );
    }
}
