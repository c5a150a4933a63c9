//! Result rows declared once: each column's name, unit, type and meaning sit beside the
//! struct that carries its values, so the CSV schema is known before a run and checked after.

use std::marker::PhantomData;
use std::ops::Add;

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

/// A component's counter group: a [`counters!`](crate::counters) struct of `u64` counters,
/// each declared once with its unit and meaning. A row embeds the group whole (`[flatten]`)
/// or derives columns from single counters ([`Derived`]).
pub trait Counters: ResultRow {
    /// The counter of column `i` of `Self::COLUMNS`.
    fn counter(&self, i: usize) -> u64;
}

/// How a column follows from one counter. The column's name is the counter's name (or the
/// name it is renamed to) plus `NAME_SUFFIX`, after the row's prefix; its unit and doc are
/// the counter's plus `UNIT_SUFFIX` and `DOC_SUFFIX`.
pub trait Derivation {
    const NAME_SUFFIX: &'static str;
    /// Appended to the counter's unit; a counter without a unit counts `1`.
    const UNIT_SUFFIX: &'static str;
    const DOC_SUFFIX: &'static str;
    /// The column's value from the counter's.
    fn value(counter: u64, by: f64) -> f64;
}

/// A counter per operation: `by` is the operations (at least one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerOp;

impl Derivation for PerOp {
    const NAME_SUFFIX: &'static str = "_per_op";
    const UNIT_SUFFIX: &'static str = "/op";
    const DOC_SUFFIX: &'static str = ", per operation";
    fn value(counter: u64, ops: f64) -> f64 {
        counter as f64 / ops
    }
}

/// A counter of a sample scaled up to the whole: `by` is the real events per sampled one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scaled;

impl Derivation for Scaled {
    const NAME_SUFFIX: &'static str = "";
    const UNIT_SUFFIX: &'static str = "";
    const DOC_SUFFIX: &'static str = ", scaled up from the sample";
    fn value(counter: u64, weight: f64) -> f64 {
        counter as f64 * weight
    }
}

/// The value of a column derived (`D`) from counter `I` (its index in `S::COLUMNS`) of the
/// counter group `S`: the type `result_row!` gives such a field, so the row's declaration
/// alone says which counter a value comes from. Serialises as its `f64`.
pub struct Derived<S, D, const I: usize>(f64, PhantomData<fn() -> (S, D)>);

// By hand: derived impls would require the group and the derivation to implement them too.
impl<S, D, const I: usize> Clone for Derived<S, D, I> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S, D, const I: usize> Copy for Derived<S, D, I> {}

impl<S, D, const I: usize> PartialEq for Derived<S, D, I> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<S, D, const I: usize> std::fmt::Debug for Derived<S, D, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<S: Counters, D: Derivation, const I: usize> Derived<S, D, I> {
    /// The column from `counters`: their counter `I` derived by `D` with `by`.
    pub fn of(counters: &S, by: f64) -> Self {
        Derived(D::value(counters.counter(I), by), PhantomData)
    }

    pub fn value(self) -> f64 {
        self.0
    }
}

/// Two parts of one derived quantity (the same counter of two samples) added.
impl<S, D, const I: usize> Add for Derived<S, D, I> {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        Derived(self.0 + other.0, PhantomData)
    }
}

impl<S, D, const I: usize> Serialize for Derived<S, D, I> {
    fn serialize<Z: serde::Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        s.serialize_f64(self.0)
    }
}

/// The index in `columns` of the counter `name` (at compile time: an unknown counter does
/// not build).
pub const fn counter_index(columns: &[Column], name: &str) -> usize {
    let mut i = 0;
    while i < columns.len() {
        if same(columns[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("a derived column names a counter its counter group does not declare");
}

/// How many bytes `parts` hold together (for [`joined`]).
pub const fn joined_len(parts: &[&str]) -> usize {
    let (mut n, mut p) = (0, 0);
    while p < parts.len() {
        n += parts[p].len();
        p += 1;
    }
    n
}

/// `parts` one after the other (`N` = [`joined_len`]): a derived column's unit and doc are
/// composed at compile time, so `Column` keeps its `&'static str`s.
pub const fn joined<const N: usize>(parts: &[&str]) -> [u8; N] {
    let mut out = [0; N];
    let (mut n, mut p) = (0, 0);
    while p < parts.len() {
        let b = parts[p].as_bytes();
        let mut i = 0;
        while i < b.len() {
            out[n] = b[i];
            n += 1;
            i += 1;
        }
        p += 1;
    }
    out
}

/// The text of bytes [`joined`] from strings.
pub const fn text(bytes: &'static [u8]) -> &'static str {
    match core::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(_) => panic!("joined strings are UTF-8"),
    }
}

/// A derived column's unit: the counter's `unit` with `suffix` (`1/op` for a counter
/// without one).
pub const fn derived_unit_parts(unit: &'static str, suffix: &'static str) -> [&'static str; 2] {
    if unit.is_empty() && !suffix.is_empty() {
        ["1", suffix]
    } else {
        [unit, suffix]
    }
}

/// `field`, once it is checked to be `name` (prefix, counter or its rename, suffix joined)
/// and to state no unit in its name other than `unit`.
pub const fn derived_name(field: &'static str, name: &str, unit: &str) -> &'static str {
    if !same(field, name) {
        panic!("a derived column is named prefix + counter (or its `as` rename) + the derivation's suffix");
    }
    if let Some(stated) = crate::units::suffix_unit(field) {
        if !same(stated, unit) {
            panic!("a derived column's name states a unit other than its counter's");
        }
    }
    field
}

/// Declare a result row struct and its columns together. A field marked `[flatten]` embeds
/// a column group (any other `result_row!` struct): its columns, with their units and docs,
/// stand in the row at the field's place, so a group shared by several rows (the PMem
/// counters) is declared once. A field declared `[PerOp(Group::counter)]` (any
/// [`Derivation`], optionally `as` a new name and with `, prefix "p_"`) is one column
/// derived from a counter of a [`counters!`](crate::counters) group, at its place: see there.
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
    // A column derived from one counter of a counter group (first: the other arms would
    // read the bracket as a slice type).
    (@munch $meta:tt $vis:tt $name:ident [$($fields:tt)*] [$($parts:tt)*]
        $(#[$fmeta:meta])*
        $field:ident : [$how:ident ( $src:ident :: $counter:ident $(as $renamed:ident)? )
            $(, prefix $prefix:literal)?] $(, $($rest:tt)*)?
    ) => {
        $crate::result_row!(@munch $meta $vis $name
            [$($fields)* $(#[$fmeta])*
                #[doc = concat!("`", stringify!($src), "::", stringify!($counter), "`, derived by `", stringify!($how), "`.")]
                pub $field: $crate::columns::Derived<$src, $how, {
                    $crate::columns::counter_index(
                        <$src as $crate::columns::ResultRow>::COLUMNS, stringify!($counter))
                }>,]
            [$($parts)* &[$crate::result_row!(@derived $field $how $src $counter
                [$($renamed)? $counter] [$($prefix)? ""])],]
            $($($rest)*)?);
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
    // The declared column of a derived field: the counter's column, its name checked and
    // its unit and doc composed with the derivation's.
    (@derived $field:ident $how:ident $src:ident $counter:ident
        [$named:ident $($counter_name:ident)?] [$prefix:literal $($no_prefix:literal)?]) => {{
        use $crate::columns::{joined, joined_len, text, Column, Derivation, ResultRow};
        const COUNTER: Column = <$src as ResultRow>::COLUMNS
            [$crate::columns::counter_index(<$src as ResultRow>::COLUMNS, stringify!($counter))];
        const UNIT: [&str; 2] =
            $crate::columns::derived_unit_parts(COUNTER.unit, <$how as Derivation>::UNIT_SUFFIX);
        const UNIT_BYTES: [u8; joined_len(&UNIT)] = joined(&UNIT);
        const DOC: [&str; 2] = [COUNTER.doc, <$how as Derivation>::DOC_SUFFIX];
        const DOC_BYTES: [u8; joined_len(&DOC)] = joined(&DOC);
        const NAME: [&str; 3] = [$prefix, stringify!($named), <$how as Derivation>::NAME_SUFFIX];
        const NAME_BYTES: [u8; joined_len(&NAME)] = joined(&NAME);
        Column {
            name: $crate::columns::derived_name(
                stringify!($field), text(&NAME_BYTES), text(&UNIT_BYTES)),
            unit: text(&UNIT_BYTES),
            dtype: $crate::columns::Dtype::Float,
            nullable: false,
            measured: COUNTER.measured,
            doc: text(&DOC_BYTES),
        }
    }};
    (@measured measured) => { true };
    (@measured) => { false };
}

/// Declare a component's counters once: a `result_row!` struct of `u64` counters, each with
/// its unit and meaning (its columns, where a row flattens the group), that is also a
/// [`Counters`](crate::columns::Counters) group rows derive single columns from, and has
/// `since` (what was counted between two snapshots).
///
/// ```
/// use hmsim::columns::{Derived, PerOp};
/// hmsim::counters! {
///     /// A cache's counters.
///     pub struct CacheCounters {
///         misses: u64 ["lines", "lines missed"],
///         writebacks: u64 ["lines", "dirty lines written back"],
///     }
/// }
/// hmsim::result_row! {
///     /// One run: its operations, a column per operation and the counters whole.
///     pub struct RunRow {
///         ops: u64 ["operations", "operations run"],
///         misses_per_op: [PerOp(CacheCounters::misses)],
///         // Renamed: the column is `evictions_per_op`, not `writebacks_per_op`.
///         evictions_per_op: [PerOp(CacheCounters::writebacks as evictions)],
///         counters: CacheCounters [flatten],
///     }
/// }
/// use hmsim::scenario::ResultRow;
/// let names: Vec<_> = RunRow::COLUMNS.iter().map(|c| c.name).collect();
/// assert_eq!(names, ["ops", "misses_per_op", "evictions_per_op", "misses", "writebacks"]);
/// assert_eq!(RunRow::COLUMNS[1].unit, "lines/op");
/// assert_eq!(RunRow::COLUMNS[1].doc, "lines missed, per operation");
/// let c = CacheCounters { misses: 6, writebacks: 3 }.since(&CacheCounters { misses: 1, writebacks: 0 });
/// let row = RunRow {
///     ops: 2,
///     misses_per_op: Derived::of(&c, 2.0),
///     evictions_per_op: Derived::of(&c, 2.0),
///     counters: c,
/// };
/// assert_eq!((row.misses_per_op.value(), row.evictions_per_op.value()), (2.5, 1.5));
/// ```
///
/// A derived column not named after its counter does not build:
///
/// ```compile_fail
/// use hmsim::columns::PerOp;
/// hmsim::counters! {
///     pub struct CacheCounters { misses: u64 ["lines", "lines missed"] }
/// }
/// hmsim::result_row! {
///     pub struct RunRow { hits_per_op: [PerOp(CacheCounters::misses)] }
/// }
/// ```
#[macro_export]
macro_rules! counters {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($field:ident : u64 [$unit:literal, $doc:literal]),* $(,)?
        }
    ) => {
        $crate::result_row! {
            $(#[$meta])*
            $vis struct $name { $($field: u64 [$unit, $doc]),* }
        }

        impl $crate::columns::Counters for $name {
            fn counter(&self, i: usize) -> u64 {
                [$(self.$field),*][i]
            }
        }

        impl $name {
            /// What was counted between the snapshot `before` and `self` (counter by counter).
            $vis fn since(&self, before: &$name) -> $name {
                $name { $($field: self.$field - before.$field),* }
            }
        }
    };
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

#[cfg(test)]
mod derived_tests {
    use super::*;

    crate::counters! {
        #[derive(Default)]
        struct Probe {
            hits: u64 ["lines", "lines found"],
            flips: u64 ["", "bits flipped"],
        }
    }

    crate::result_row! {
        struct ProbeRow {
            label: String ["", "a label"],
            hits_per_op: [PerOp(Probe::hits)],
            flips_per_op: [PerOp(Probe::flips)],
            probe_found: [Scaled(Probe::hits as found), prefix "probe_"],
            probe_flips: [Scaled(Probe::flips), prefix "probe_"],
        }
    }

    fn counter(name: &str) -> Column {
        Probe::COLUMNS[counter_index(Probe::COLUMNS, name)]
    }

    #[test]
    fn a_derived_column_takes_its_unit_and_doc_from_its_counter() {
        let cols = &ProbeRow::COLUMNS[1..];
        let from = ["hits", "flips", "hits", "flips"];
        let (per_op, scaled) = (
            (PerOp::UNIT_SUFFIX, PerOp::DOC_SUFFIX),
            (Scaled::UNIT_SUFFIX, Scaled::DOC_SUFFIX),
        );
        for (i, (c, name)) in cols.iter().zip(from).enumerate() {
            let src = counter(name);
            let (unit_suffix, doc_suffix) = if i < 2 { per_op } else { scaled };
            let unit = if src.unit.is_empty() && !unit_suffix.is_empty() {
                format!("1{unit_suffix}")
            } else {
                format!("{}{unit_suffix}", src.unit)
            };
            assert_eq!(c.unit, unit, "{}", c.name);
            assert_eq!(c.doc, format!("{}{doc_suffix}", src.doc), "{}", c.name);
            assert_eq!(
                (c.dtype, c.nullable, c.measured),
                (Dtype::Float, false, false)
            );
        }
        assert_eq!(cols[1].unit, "1/op");
    }

    #[test]
    fn per_op_and_scaled_values_are_the_counter_divided_and_multiplied() {
        let c = Probe { hits: 7, flips: 3 }.since(&Probe { hits: 2, flips: 0 });
        let row = ProbeRow {
            label: "x".into(),
            hits_per_op: Derived::of(&c, 4.0),
            flips_per_op: Derived::of(&c, 4.0),
            probe_found: Derived::of(&c, 2.5) + Derived::of(&Probe { hits: 1, flips: 0 }, 0.5),
            probe_flips: Derived::of(&c, 2.5),
        };
        assert_eq!(row.hits_per_op.value(), 5.0 / 4.0);
        assert_eq!(row.flips_per_op.value(), 3.0 / 4.0);
        assert_eq!(row.probe_found.value(), 5.0 * 2.5 + 0.5);
        assert_eq!(row.probe_flips.value(), 3.0 * 2.5);
        // In the CSV a derived column is its number, at its place.
        let json = serde_json::to_string(&row).unwrap();
        assert_eq!(
            json,
            r#"{"label":"x","hits_per_op":1.25,"flips_per_op":0.75,"probe_found":13.0,"probe_flips":7.5}"#
        );
    }

    #[test]
    fn a_derived_name_is_prefix_counter_and_suffix() {
        assert_eq!(derived_name("x_per_op", "x_per_op", "1/op"), "x_per_op");
    }

    #[test]
    #[should_panic(expected = "prefix + counter")]
    fn a_derived_column_named_otherwise_is_refused() {
        derived_name("y_per_op", "x_per_op", "1/op");
    }

    #[test]
    #[should_panic(expected = "states a unit")]
    fn a_derived_name_stating_another_unit_is_refused() {
        derived_name("pmem_bytes", "pmem_bytes", "lines");
    }
}
