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

/// Declare a result row struct and its columns together:
///
/// ```
/// hmsim::result_row! {
///     /// One run of a job.
///     pub struct JobRow {
///         device: String ["", "catalog device name"],
///         bandwidth_gb_s: f64 ["GB/s", "achieved bandwidth"],
///         #[serde(skip_serializing_if = "Option::is_none")]
///         p99_us: Option<f64> ["us", "99th percentile latency"],
///         wall_s: f64 ["s", "host wall-clock time", measured],
///     }
/// }
/// use hmsim::scenario::ResultRow;
/// assert_eq!(JobRow::COLUMNS[1].unit, "GB/s");
/// assert!(JobRow::COLUMNS[2].nullable && JobRow::COLUMNS[3].measured);
/// ```
#[macro_export]
macro_rules! result_row {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty [$unit:literal, $doc:literal $(, $flag:ident)?]
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, serde::Serialize)]
        $vis struct $name {
            $(
                $(#[$fmeta])*
                #[doc = $doc]
                pub $field: $ty,
            )*
        }

        impl $crate::scenario::ResultRow for $name {
            const COLUMNS: &'static [$crate::scenario::Column] = &[
                $(
                    $crate::scenario::Column {
                        name: stringify!($field),
                        unit: $unit,
                        dtype: <$ty as $crate::scenario::ColumnType>::DTYPE,
                        nullable: <$ty as $crate::scenario::ColumnType>::NULLABLE,
                        measured: $crate::result_row!(@measured $($flag)?),
                        doc: $doc,
                    },
                )*
            ];
        }
    };
    (@measured measured) => { true };
    (@measured) => { false };
}
