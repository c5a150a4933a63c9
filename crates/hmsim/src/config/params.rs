//! `params!`: each configuration parameter declared once — its type, default, range check,
//! unit and one-line doc — next to its struct. From one declaration per field the macro
//! generates the struct (serde derives, `deny_unknown_fields`), `Default` (when every field
//! has a default), a [`Validate`] impl from the declared checks, and a [`Params`] table that
//! `docs/parameters/` is generated from (see docs/parameters/README.md).
//!
//! ```text
//! params! {
//!     /// Options of a thermal run.
//!     #[derive(Debug, Clone)]
//!     pub struct ThermalConfig {
//!         pub ambient_c: f64 = 25.0 => range(-40.0, 125.0), "", "Ambient temperature.";
//!         pub initial_c: Option<f64> = None => range(-40.0, 150.0), "", "Start temperature.";
//!         pub job: JobSpec => nested, "", "The job (required: no default).";
//!     }
//! }
//! ```
//!
//! Field checks: `any` (none), `range(lo, hi)` (inclusive, [`Validator::range`]), `positive`,
//! `non_negative`, `fraction` (0 to 1), `nested` (the field's own table; `Option`/`Vec` of a
//! table too), `table` (a nested table whose keys the hand-written `check` validates). An
//! `Option` field is checked only when given. Checks that involve several
//! fields or other files stay in a hand-written `fn check(&self, v: &mut Validator)`, which
//! the generated `validate` calls after the field checks when the struct is marked
//! `#[params(check)]`. A struct with a field that has no default is marked
//! `#[params(required)]` (or `#[params(required, check)]`): it gets no `Default`, and its
//! missing fields are reported by serde as before.

use std::fmt::Display;

use serde::Serialize;

use super::{Validate, Validator};

/// One row of a generated parameter table.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamDoc {
    /// TOML key.
    pub name: &'static str,
    /// Rust type as declared.
    pub ty: &'static str,
    /// Default as TOML would write it; `None` for a required key.
    pub default: Option<String>,
    /// Allowed values as checked by the generated `validate` ("" when not range-checked).
    pub range: String,
    pub unit: &'static str,
    pub doc: &'static str,
    /// The nested table this key holds, if any.
    pub table: Option<TableRef>,
}

/// A parameter table by name, with the function that lists its rows.
#[derive(Debug, Clone, Copy)]
pub struct TableRef {
    pub name: &'static str,
    pub params: fn() -> Vec<ParamDoc>,
}

impl PartialEq for TableRef {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// A struct declared with [`params!`](crate::params): its parameter table.
pub trait Params {
    /// The struct's name, which names its table.
    const NAME: &'static str;
    fn params() -> Vec<ParamDoc>;
    fn table() -> TableRef {
        TableRef {
            name: Self::NAME,
            params: Self::params,
        }
    }
}

/// A field that holds a nested table (a `params!` struct, or an `Option`/`Vec` of one).
pub trait Nested {
    fn nested_table() -> Option<TableRef>;
    fn validate_at(&self, v: &mut Validator, key: &str);
}

impl<T: Params + Validate> Nested for T {
    fn nested_table() -> Option<TableRef> {
        Some(<T as Params>::table())
    }
    fn validate_at(&self, v: &mut Validator, key: &str) {
        v.nested(key, self);
    }
}

impl<T: Nested> Nested for Option<T> {
    fn nested_table() -> Option<TableRef> {
        T::nested_table()
    }
    fn validate_at(&self, v: &mut Validator, key: &str) {
        if let Some(x) = self {
            x.validate_at(v, key);
        }
    }
}

impl<T: Nested> Nested for Vec<T> {
    fn nested_table() -> Option<TableRef> {
        T::nested_table()
    }
    fn validate_at(&self, v: &mut Validator, key: &str) {
        for (i, x) in self.iter().enumerate() {
            x.validate_at(v, &format!("{key}.{i}"));
        }
    }
}

/// A field checked with `range(lo, hi)`: a number, or an optional one.
pub trait InRange<B> {
    fn check_range(&self, v: &mut Validator, field: &str, lo: B, hi: B, unit: &str);
}

/// A field checked with `positive`/`non_negative`: a number, or an optional one.
pub trait Signed {
    fn as_f64(&self) -> Option<f64>;
}

macro_rules! numeric {
    ($($t:ty),*) => {$(
        impl InRange<$t> for $t {
            fn check_range(&self, v: &mut Validator, field: &str, lo: $t, hi: $t, unit: &str) {
                v.range(field, *self, lo, hi, unit);
            }
        }
        impl InRange<$t> for Option<$t> {
            fn check_range(&self, v: &mut Validator, field: &str, lo: $t, hi: $t, unit: &str) {
                if let Some(x) = self {
                    v.range(field, *x, lo, hi, unit);
                }
            }
        }
        impl Signed for $t {
            fn as_f64(&self) -> Option<f64> {
                Some(*self as f64)
            }
        }
        impl Signed for Option<$t> {
            fn as_f64(&self) -> Option<f64> {
                self.map(|x| x as f64)
            }
        }
    )*};
}
numeric!(f64, f32, u8, u16, u32, u64, usize, i32, i64);

/// `positive` check of a field (skipped for an absent optional value).
pub fn check_positive<T: Signed>(v: &mut Validator, field: &str, value: &T, unit: &str) {
    if let Some(x) = value.as_f64() {
        v.positive(field, x, unit);
    }
}

/// `non_negative` check of a field (skipped for an absent optional value).
pub fn check_non_negative<T: Signed>(v: &mut Validator, field: &str, value: &T, unit: &str) {
    if let Some(x) = value.as_f64() {
        v.non_negative(field, x, unit);
    }
}

/// `fraction` check of a field (skipped for an absent optional value).
pub fn check_fraction<T: InRange<f64>>(v: &mut Validator, field: &str, value: &T) {
    value.check_range(v, field, 0.0, 1.0, "");
}

/// A default value as a TOML reader would write it.
pub fn show_default<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Null) => "—".to_string(),
        Ok(v) => show_json(&v),
        Err(_) => "—".to_string(),
    }
}

/// Lists of points longer than this are shortened in the tables.
const LONG_LIST: usize = 6;

fn show_json(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "—".to_string(),
        Value::String(s) => format!("\"{s}\""),
        // A long list of points (a latency curve) is shown by its ends and length.
        Value::Array(a) if a.len() > LONG_LIST && a[0].is_array() => format!(
            "[{}, {}, …, {}] ({} items)",
            show_json(&a[0]),
            show_json(&a[1]),
            show_json(&a[a.len() - 1]),
            a.len()
        ),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(show_json).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) if m.is_empty() => "{}".to_string(),
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k} = {}", show_json(v)))
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// Text of a `range(lo, hi)` check of a field of type `F` for the tables.
pub fn show_range<F: InRange<T>, T: Display>(lo: T, hi: T) -> String {
    format!("{lo} to {hi}")
}

/// Every table reachable from `roots` through nested keys, in order, each once.
pub fn tables_from(roots: &[TableRef]) -> Vec<(&'static str, Vec<ParamDoc>)> {
    let mut out: Vec<(&'static str, Vec<ParamDoc>)> = Vec::new();
    let mut todo: Vec<TableRef> = roots.iter().rev().copied().collect();
    while let Some(t) = todo.pop() {
        if out.iter().any(|(n, _)| *n == t.name) {
            continue;
        }
        let rows = (t.params)();
        let nested: Vec<TableRef> = rows.iter().filter_map(|r| r.table).collect();
        out.push((t.name, rows));
        todo.extend(nested.into_iter().rev());
    }
    out
}

/// Markdown for the tables reachable from `roots` (see docs/parameters/README.md).
pub fn markdown(title: &str, intro: &str, roots: &[TableRef]) -> String {
    let mut s = format!(
        "# {title}\n\n<!-- Generated from the params! declarations in the code; do not edit. \
         `UPDATE_PARAM_DOCS=1 cargo test -p hmsim --lib param_docs` rewrites it. -->\n\n{intro}\n"
    );
    for (name, rows) in tables_from(roots) {
        s.push_str(&format!("\n## {name}\n\n"));
        s.push_str("| key | type | default | allowed | unit | meaning |\n");
        s.push_str("| --- | --- | --- | --- | --- | --- |\n");
        for r in rows {
            let default = r.default.as_deref().unwrap_or("required");
            let meaning = match r.table {
                Some(t) => format!("{} See [{}](#{}).", r.doc, t.name, t.name.to_lowercase()),
                None => r.doc.to_string(),
            };
            s.push_str(&format!(
                "| `{}` | `{}` | `{}` | {} | {} | {} |\n",
                r.name,
                r.ty.replace(' ', ""),
                default.replace('|', "\\|"),
                r.range,
                r.unit,
                meaning.replace('|', "\\|"),
            ));
        }
    }
    s
}

/// Declare a configuration struct with one line per parameter; see the module docs of
/// `config::params` for the form.
#[macro_export]
macro_rules! params {
    (#[params(required, check)] $($rest:tt)*) => {
        $crate::params!(@parse [required] [check] $($rest)*);
    };
    (#[params(required)] $($rest:tt)*) => {
        $crate::params!(@parse [required] [nocheck] $($rest)*);
    };
    (#[params(check)] $($rest:tt)*) => {
        $crate::params!(@parse [defaults] [check] $($rest)*);
    };
    (@parse [$kind:ident] [$check:ident]
        $(#[$attr:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fattr:meta])*
                $fvis:vis $fname:ident : $fty:ty $(= $fdefault:expr)?
                    => $fcheck:ident $(($($carg:expr),*))?, $unit:literal, $doc:literal;
            )*
        }
    ) => {
        $crate::params!(@struct $kind
            [$(#[$attr])*] $vis $name
            [$( [$(#[$fattr])*] [#[doc = $doc]] $fvis $fname [$fty] [$($fdefault)?] )*]);
        $crate::params!(@default $kind $name [$( $fname [$($fdefault)?] )*]);

        impl $crate::config::Validate for $name {
            #[allow(unused_variables)]
            fn validate(&self, v: &mut $crate::config::Validator) {
                $( $crate::params!(@check self v $fname $unit $fcheck $(($($carg),*))?); )*
                $crate::params!(@hook $check self v);
            }
        }

        impl $crate::config::params::Params for $name {
            const NAME: &'static str = stringify!($name);
            fn params() -> Vec<$crate::config::params::ParamDoc> {
                vec![$(
                    $crate::config::params::ParamDoc {
                        name: stringify!($fname),
                        ty: stringify!($fty),
                        default: $crate::params!(@show_default [$fty] [$($fdefault)?]),
                        range: $crate::params!(@show_range [$fty] $fcheck $(($($carg),*))?),
                        unit: const { $crate::units::unit_of(stringify!($fname), $unit) },
                        doc: $doc,
                        table: $crate::params!(@table [$fty] $fcheck),
                    },
                )*]
            }
        }
    };
    // Every field has a default: serde fills missing keys from `Default`.
    (@struct defaults [$($attr:tt)*] $vis:vis $name:ident
        [$( [$($fattr:tt)*] [$($fdoc:tt)*] $fvis:vis $fname:ident [$fty:ty] [$($fdefault:tt)*] )*]) => {
        #[derive(serde::Serialize, serde::Deserialize)]
        $($attr)*
        #[serde(default, deny_unknown_fields)]
        $vis struct $name {
            $( $($fdoc)* $($fattr)* $fvis $fname: $fty, )*
        }
    };
    // Some keys are required: a private shadow struct with the same name and keys reads the
    // table (defaulted keys optional), so serde's messages for missing or unknown keys stay.
    (@struct required [$($attr:tt)*] $vis:vis $name:ident
        [$( [$($fattr:tt)*] [$($fdoc:tt)*] $fvis:vis $fname:ident [$fty:ty] [$($fdefault:tt)*] )*]) => {
        #[derive(serde::Serialize)]
        $($attr)*
        $vis struct $name {
            $( $($fdoc)* $($fattr)* $fvis $fname: $fty, )*
        }
        const _: () = {
            #[allow(non_snake_case, dead_code, unreachable_pub, clippy::all)]
            mod shadow {
                #[allow(unused_imports)]
                use super::*;
                #[derive(serde::Deserialize)]
                #[serde(deny_unknown_fields)]
                pub struct $name {
                    $( $($fattr)*
                       // Only keys with a default are optional (the doc line just
                       // carries the default so that this attribute repeats with it).
                       $( #[serde(default)] #[doc = stringify!($fdefault)] )*
                       pub $fname: $crate::params!(@shadow_ty [$fty] [$($fdefault)*]), )*
                }
            }
            impl<'de> serde::Deserialize<'de> for $name {
                fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    let s = <shadow::$name as serde::Deserialize>::deserialize(d)?;
                    Ok($name {
                        $( $fname: $crate::params!(@take [$fty] s.$fname, [$($fdefault)*]), )*
                    })
                }
            }
        };
    };

    (@shadow_ty [$fty:ty] []) => { $fty };
    (@shadow_ty [$fty:ty] [$($d:tt)+]) => { Option<$fty> };
    (@take [$fty:ty] $s:ident.$f:ident, []) => { $s.$f };
    (@take [$fty:ty] $s:ident.$f:ident, [$d:expr]) => {
        match $s.$f { Some(x) => x, None => { let d: $fty = $d; d } }
    };

    (@default defaults $name:ident [$( $fname:ident [$($fdefault:tt)*] )*]) => {
        impl Default for $name {
            fn default() -> Self {
                $name { $( $fname: $crate::params!(@value $fname [$($fdefault)*]), )* }
            }
        }
    };
    (@default required $name:ident [$($x:tt)*]) => {};
    (@value $fname:ident [$d:expr]) => { $d };
    (@value $fname:ident []) => {
        compile_error!(concat!("params!: `", stringify!($fname),
            "` has no default; mark the struct #[params(required)]"))
    };

    (@hook check $s:ident $v:ident) => { $s.check($v) };
    (@hook nocheck $s:ident $v:ident) => {};

    (@check $s:ident $v:ident $f:ident $unit:literal any) => {};
    (@check $s:ident $v:ident $f:ident $unit:literal range($lo:expr, $hi:expr)) => {
        $crate::config::params::InRange::check_range(&$s.$f, $v, stringify!($f), $lo, $hi,
            const { $crate::units::unit_of(stringify!($f), $unit) })
    };
    (@check $s:ident $v:ident $f:ident $unit:literal positive) => {
        $crate::config::params::check_positive($v, stringify!($f), &$s.$f,
            const { $crate::units::unit_of(stringify!($f), $unit) })
    };
    (@check $s:ident $v:ident $f:ident $unit:literal non_negative) => {
        $crate::config::params::check_non_negative($v, stringify!($f), &$s.$f,
            const { $crate::units::unit_of(stringify!($f), $unit) })
    };
    (@check $s:ident $v:ident $f:ident $unit:literal fraction) => {
        $crate::config::params::check_fraction($v, stringify!($f), &$s.$f)
    };
    (@check $s:ident $v:ident $f:ident $unit:literal table) => {};
    (@check $s:ident $v:ident $f:ident $unit:literal nested) => {
        $crate::config::params::Nested::validate_at(&$s.$f, $v, stringify!($f))
    };

    (@show_range [$fty:ty] any) => { String::new() };
    (@show_range [$fty:ty] range($lo:expr, $hi:expr)) => {
        $crate::config::params::show_range::<$fty, _>($lo, $hi)
    };
    (@show_range [$fty:ty] positive) => { "> 0".to_string() };
    (@show_range [$fty:ty] non_negative) => { "≥ 0".to_string() };
    (@show_range [$fty:ty] fraction) => { "0 to 1".to_string() };
    (@show_range [$fty:ty] nested) => { String::new() };
    (@show_range [$fty:ty] table) => { String::new() };

    (@show_default [$fty:ty] []) => { None };
    (@show_default [$fty:ty] [$d:expr]) => {
        Some($crate::config::params::show_default(&{ let d: $fty = $d; d }))
    };

    (@table [$fty:ty] nested) => { <$fty as $crate::config::params::Nested>::nested_table() };
    (@table [$fty:ty] table) => { <$fty as $crate::config::params::Nested>::nested_table() };
    (@table [$fty:ty] $other:ident) => { None };

    ($($rest:tt)*) => {
        $crate::params!(@parse [defaults] [nocheck] $($rest)*);
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{parse_toml, Source};

    crate::params! {
        #[derive(Debug, Clone, PartialEq)]
        pub(super) struct Inner {
            pub rate_gb_s: f64 = 2.5 => positive, "", "A rate.";
            pub limit_ns: Option<u64> = None => range(1, 100), "", "An optional limit.";
        }
    }

    crate::params! {
        #[params(required, check)]
        #[derive(Debug, Clone, PartialEq)]
        pub(super) struct Outer {
            pub depth: u32 => range(1, 64), "", "Required depth.";
            pub share: f64 = 0.5 => fraction, "", "A share.";
            pub inner: Inner = Inner::default() => nested, "", "One inner table.";
            pub list: Vec<Inner> = Vec::new() => nested, "", "Inner tables.";
        }
    }

    impl Outer {
        fn check(&self, v: &mut Validator) {
            if self.depth == 7 {
                v.fail("depth", "seven is unlucky");
            }
        }
    }

    fn first_error(text: &str) -> String {
        let source = match Source::parse(text, "t.toml") {
            Ok(s) => s,
            Err(e) => return e.to_string(),
        };
        let o: Outer = match source.deserialize() {
            Ok(o) => o,
            Err(e) => return e.to_string(),
        };
        match Validator::check(&source, &o) {
            Ok(()) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn defaults_fill_missing_keys_and_required_keys_stay_required() {
        let o: Outer = parse_toml("depth = 3\n", "t.toml").unwrap();
        assert_eq!(o.share, 0.5);
        assert_eq!(o.inner, Inner::default());
        assert_eq!(Inner::default().rate_gb_s, 2.5);
        let e = first_error("share = 0.1\n");
        assert!(e.contains("missing required key `depth`"), "{e}");
        let e = first_error("depth = 3\nsurprise = 1\n");
        assert!(e.contains("unknown key `surprise`"), "{e}");
        let i: Inner = parse_toml("", "t.toml").unwrap();
        assert_eq!(i, Inner::default());
        assert!(parse_toml::<Inner>("rate = 1.0\n", "t.toml").is_err());
    }

    #[test]
    fn declared_checks_give_the_validator_messages_with_key_paths() {
        assert_eq!(first_error("depth = 3\n"), "ok");
        assert_eq!(
            first_error("depth = 0\n"),
            "t.toml:1: key 'depth': 0 is out of range; allowed 1 to 64"
        );
        let e = first_error("depth = 3\nshare = 1.5\n");
        assert!(
            e.contains("'share': 1.5 is out of range; allowed 0 to 1"),
            "{e}"
        );
        let e = first_error("depth = 3\n[inner]\nrate_gb_s = 0.0\n");
        assert!(
            e.contains("'inner.rate_gb_s'") && e.contains("positive"),
            "{e}"
        );
        let e = first_error("depth = 3\n[[list]]\n[[list]]\nlimit_ns = 500\n");
        assert!(e.contains("'list.1.limit_ns': 500 is out of range"), "{e}");
        assert_eq!(first_error("depth = 3\n[inner]\nlimit_ns = 50\n"), "ok");
        assert!(first_error("depth = 7\n").contains("seven is unlucky"));
    }

    #[test]
    fn tables_list_every_key_with_default_range_and_nesting() {
        let rows = Outer::params();
        let names: Vec<&str> = rows.iter().map(|r| r.name).collect();
        assert_eq!(names, ["depth", "share", "inner", "list"]);
        assert_eq!(rows[0].default, None);
        assert_eq!(rows[0].range, "1 to 64");
        assert_eq!(rows[1].default.as_deref(), Some("0.5"));
        assert_eq!(rows[2].table.map(|t| t.name), Some("Inner"));
        let inner = Inner::params();
        assert_eq!(inner[0].unit, "GB/s");
        assert_eq!(inner[1].default.as_deref(), Some("—"));
        let all = tables_from(&[Outer::table()]);
        let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["Outer", "Inner"]);
        let md = markdown("Outer", "Test.", &[Outer::table()]);
        assert!(
            md.contains("| `depth` | `u32` | `required` | 1 to 64 |"),
            "{md}"
        );
    }
}
