//! What no configuration may hold (bounds every config shares, renamed keys) and how a
//! text TOML cannot read is reported. Parsing itself is [`super::Source`].

use toml_edit::{Item, TableLike, Value};

use crate::error::ConfigError;

/// 1-based line of byte offset `pos` in `text`.
pub(super) fn line_of_offset(text: &str, pos: usize) -> usize {
    text[..pos.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// Largest magnitude of any number in a config (`seed` keys excepted): 10^18 is above every
/// physical count, size or time hmsim models (an exabyte, 30 years in ns), so a larger value
/// is a typo or an attack, and would only overflow or run for ages.
pub(super) const MAX_MAGNITUDE: f64 = 1e18;
/// Keys whose value may be +inf: thresholds, where infinity means "never".
const INFINITE_OK: &[&str] = &["threshold_us"];
/// Longest `name` value: names become table labels and file names.
pub(super) const MAX_NAME_CHARS: usize = 128;
/// Longest string value of any key.
pub(super) const MAX_STRING_CHARS: usize = 4096;

/// The first value under `item` (document order) outside the bounds every config shares:
/// (key path, message).
pub(super) fn insane(item: &Item, path: &mut Vec<String>) -> Option<(String, String)> {
    match item {
        Item::Value(v) => insane_value(v, path),
        Item::Table(t) => in_table(t, path),
        Item::ArrayOfTables(a) => a.iter().enumerate().find_map(|(i, t)| {
            path.push(i.to_string());
            let r = in_table(t, path);
            path.pop();
            r
        }),
        Item::None => None,
    }
}

fn insane_value(value: &Value, path: &mut Vec<String>) -> Option<(String, String)> {
    let last = path.last().map_or("", |s| s.as_str());
    let key = || path.join(".");
    match value {
        Value::Integer(i) if last != "seed" && !last.ends_with("_seed") => {
            let i = *i.value();
            ((i as f64).abs() > MAX_MAGNITUDE).then(|| {
                (key(), format!("{i} is beyond any count, size or time hmsim models (at most 1e18 in magnitude)"))
            })
        }
        // A threshold of +inf is meaningful ("never", e.g. smart_EPF that never signals).
        Value::Float(f) if *f.value() == f64::INFINITY && INFINITE_OK.contains(&last) => None,
        Value::Float(f) if f.value().abs() > MAX_MAGNITUDE => Some((
            key(),
            format!(
                "{} is beyond any count, size or time hmsim models (at most 1e18 in magnitude)",
                f.value()
            ),
        )),
        Value::String(s) if last == "name" => name_problem(s.value()).map(|m| (key(), m)),
        Value::String(s) if s.value().chars().count() > MAX_STRING_CHARS => Some((
            key(),
            format!(
                "a string of {} characters; at most {MAX_STRING_CHARS}",
                s.value().chars().count()
            ),
        )),
        Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| {
            path.push(i.to_string());
            let r = insane_value(v, path);
            path.pop();
            r
        }),
        Value::InlineTable(t) => t.iter().find_map(|(k, v)| {
            path.push(k.to_string());
            let r = insane_value(v, path);
            path.pop();
            r
        }),
        _ => None,
    }
}

/// The first value under the items of `table` outside the bounds, each under its key.
fn in_table(table: &dyn TableLike, path: &mut Vec<String>) -> Option<(String, String)> {
    table.iter().find_map(|(k, v)| {
        path.push(k.to_string());
        let r = insane(v, path);
        path.pop();
        r
    })
}

/// Why `s` cannot be a name (of a tier, policy, device, sweep …), if it cannot.
pub(super) fn name_problem(s: &str) -> Option<String> {
    let n = s.chars().count();
    if s.trim().is_empty() {
        Some("a name cannot be empty".into())
    } else if n > MAX_NAME_CHARS {
        Some(format!(
            "a name of {n} characters; at most {MAX_NAME_CHARS}"
        ))
    } else if s == "." || s == ".." || s.contains(['/', '\\']) {
        Some(format!(
            "'{s}' looks like a path; a name has no '/', '\\' and is not '.' or '..'"
        ))
    } else if s.chars().any(char::is_control) {
        Some("a name cannot hold control characters".into())
    } else {
        None
    }
}

/// A text TOML cannot read, as the error users see: its line, and for a value TOML reads
/// but cannot hold (an integer beyond i64) the key it was written under.
pub(super) fn syntax_error(e: &toml_edit::TomlError, text: &str, file: &str) -> ConfigError {
    let line = e.span().map(|s| line_of_offset(text, s.start));
    let overflowed = e.message().contains("integer number overflowed");
    if let (true, Some(span), Some(key)) = (
        overflowed,
        e.span(),
        line.and_then(|l| key_at_line(text, l)),
    ) {
        let number = text.get(span).unwrap_or("the integer").trim();
        let message = format!(
            "{number} does not fit in a 64-bit integer; hmsim allows at most 1e18 in magnitude"
        );
        return ConfigError::new(file, &key, message).at_line(line);
    }
    let message = format!("not valid TOML: {}", e.message().trim());
    ConfigError::new(file, "", message).at_line(line)
}

/// The dotted key path written on 1-based `line` (`job.queue_depth`, `tiers.1.name`), from
/// the table headers above it; for a line TOML cannot parse, so it is read as plain text.
fn key_at_line(text: &str, line: usize) -> Option<String> {
    let mut table: Vec<String> = Vec::new();
    let mut arrays: std::collections::HashMap<String, usize> = Default::default();
    let dotted = |s: &str| -> Vec<String> {
        s.split('.')
            .map(|p| p.trim().trim_matches('"').trim_matches('\'').to_string())
            .collect()
    };
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if i + 1 == line {
            let (k, _) = l.split_once('=')?;
            let mut path = table.clone();
            path.extend(dotted(k));
            return Some(path.join("."));
        }
        if let Some(h) = l.strip_prefix("[[") {
            let name = h.split("]]").next()?.trim().to_string();
            let n = arrays.entry(name.clone()).or_insert(0);
            table = dotted(&name);
            table.push(n.to_string());
            *n += 1;
        } else if let Some(h) = l.strip_prefix('[') {
            table = dotted(h.split(']').next()?);
        }
    }
    None
}

/// Keys renamed to the one spelling of their unit (`_gb_s` for 10^9 B/s, `_mib` for 2^20
/// bytes): (old, new). The one policy for a renamed key: a file that still uses the old key
/// is rejected with a message naming the new one (never read silently under a spelling
/// whose unit differs, as `_mb` for MiB did), rather than with serde's list of expected keys.
pub(super) const RENAMED_KEYS: &[(&str, &str)] = &[
    ("bandwidth_gbps", "bandwidth_gb_s"),
    ("link_gbps", "link_gb_s"),
    ("after_bandwidth_gbps", "after_bandwidth_gb_s"),
    ("media_read_gbps", "media_read_gb_s"),
    ("media_write_gbps", "media_write_gb_s"),
    ("channel_gbps", "channel_gb_s"),
    // hybrid's MiB and KiB sizes
    ("capacity_mb", "capacity_mib"),
    ("dram_mb", "dram_mib"),
    ("input_mb", "input_mib"),
    ("os_resident_mb", "os_resident_mib"),
    ("window_kb", "window_kib"),
    ("buffer_kb", "buffer_kib"),
];

/// The first key under `item` (a whole file) that [`RENAMED_KEYS`] renamed: (key path,
/// message).
pub(super) fn renamed_key(item: &Item, path: &mut Vec<String>) -> Option<(String, String)> {
    let renamed = |k: &str, path: &[String]| {
        RENAMED_KEYS
            .iter()
            .find(|(old, _)| *old == k)
            .map(|(old, new)| {
                (
                    path.join("."),
                    format!("'{old}' was renamed; write '{new}' (same value and unit)"),
                )
            })
    };
    let table = |t: &dyn TableLike, path: &mut Vec<String>| {
        t.iter().find_map(|(k, v)| {
            path.push(k.to_string());
            let found = renamed(k, path).or_else(|| renamed_key(v, path));
            path.pop();
            found
        })
    };
    match item {
        Item::Table(t) => table(t, path),
        Item::Value(Value::InlineTable(t)) => table(t, path),
        Item::ArrayOfTables(a) => a.iter().enumerate().find_map(|(i, t)| {
            path.push(i.to_string());
            let found = table(t, path);
            path.pop();
            found
        }),
        Item::Value(Value::Array(a)) => a.iter().enumerate().find_map(|(i, v)| {
            path.push(i.to_string());
            let found = v.as_inline_table().and_then(|t| table(t, path));
            path.pop();
            found
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_at_a_line_follows_table_headers_and_dotted_keys() {
        assert_eq!(
            key_at_line("[a.\"b\"]\nc.d = 1\n", 2).as_deref(),
            Some("a.b.c.d")
        );
        assert_eq!(
            key_at_line("[[t]]\nx = 1\n[[t]]\ny = 2\n", 4).as_deref(),
            Some("t.1.y")
        );
    }
}
