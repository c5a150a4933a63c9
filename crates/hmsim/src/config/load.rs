use serde::de::DeserializeOwned;

use crate::error::ConfigError;

/// 1-based line of byte offset `pos` in `text`.
fn line_of_offset(text: &str, pos: usize) -> usize {
    text[..pos.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// Line where the dotted `key` path is written in `text`, if it is. Numeric parts index
/// arrays, including arrays of tables (`tiers.1.capacity_bytes`).
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let doc = text.parse::<toml_edit::Document<String>>().ok()?;
    let parts: Vec<&str> = key.split('.').filter(|p| !p.is_empty()).collect();
    let mut table: &dyn toml_edit::TableLike = doc.as_table();
    let mut span = None;
    let mut i = 0;
    while i < parts.len() {
        let (k, item) = table.get_key_value(parts[i])?;
        span = k.span().or_else(|| item.span()).or(span);
        i += 1;
        let index = parts.get(i).and_then(|p| p.parse::<usize>().ok());
        match (item, index) {
            (toml_edit::Item::ArrayOfTables(a), Some(idx)) => {
                let t = a.get(idx)?;
                span = t.span().or(span);
                table = t;
                i += 1;
            }
            (toml_edit::Item::Value(toml_edit::Value::Array(a)), Some(idx)) => {
                let v = a.get(idx)?;
                span = v.span().or(span);
                i += 1;
                match v.as_inline_table() {
                    Some(t) => table = t,
                    None => break,
                }
            }
            _ => match item.as_table_like() {
                Some(t) => table = t,
                None => break,
            },
        }
    }
    span.map(|s| line_of_offset(text, s.start))
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

/// The first value of `value` outside the bounds every config shares: (key path, message).
fn insane(value: &toml::Value, path: &mut Vec<String>) -> Option<(String, String)> {
    let last = path.last().map_or("", |s| s.as_str());
    let key = || path.join(".");
    match value {
        toml::Value::Integer(i) if last != "seed" && !last.ends_with("_seed") => {
            ((*i as f64).abs() > MAX_MAGNITUDE).then(|| {
                (key(), format!("{i} is beyond any count, size or time hmsim models (at most 1e18 in magnitude)"))
            })
        }
        // A threshold of +inf is meaningful ("never", e.g. smart_EPF that never signals).
        toml::Value::Float(f) if *f == f64::INFINITY && INFINITE_OK.contains(&last) => None,
        toml::Value::Float(f) if f.abs() > MAX_MAGNITUDE => Some((
            key(),
            format!("{f} is beyond any count, size or time hmsim models (at most 1e18 in magnitude)"),
        )),
        toml::Value::String(s) if last == "name" => name_problem(s).map(|m| (key(), m)),
        toml::Value::String(s) if s.chars().count() > MAX_STRING_CHARS => Some((
            key(),
            format!("a string of {} characters; at most {MAX_STRING_CHARS}", s.chars().count()),
        )),
        toml::Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| {
            path.push(i.to_string());
            let r = insane(v, path);
            path.pop();
            r
        }),
        toml::Value::Table(t) => t.iter().find_map(|(k, v)| {
            path.push(k.clone());
            let r = insane(v, path);
            path.pop();
            r
        }),
        _ => None,
    }
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

/// Deserialize `text` (from `file`) into `T`; errors name the file, line and key path.
pub fn parse_toml<T: DeserializeOwned>(text: &str, file: &str) -> Result<T, ConfigError> {
    let de = toml::Deserializer::parse(text).map_err(|e| {
        let line = e.span().map(|s| line_of_offset(text, s.start));
        ConfigError::new(file, "", format!("not valid TOML: {}", e.message().trim())).at_line(line)
    })?;
    match text.parse::<toml::Table>() {
        Ok(table) => {
            let value = toml::Value::Table(table);
            let problem =
                renamed_key(&value, &mut Vec::new()).or_else(|| insane(&value, &mut Vec::new()));
            if let Some((key, message)) = problem {
                let line = line_of_key(text, &key);
                return Err(ConfigError::new(file, &key, message).at_line(line));
            }
        }
        Err(e) => {
            // A value TOML reads but cannot hold (an integer beyond i64): the parser finds
            // it at its span; a typed deserializer would blame whichever key it read first.
            let line = e.span().map(|s| line_of_offset(text, s.start));
            let key = line.and_then(|l| key_at_line(text, l)).unwrap_or_default();
            let mut message = e.message().trim().to_string();
            if message.contains("as i128") {
                // toml reads the digits as i128 and refuses them: say it in the user's terms.
                let number = message
                    .split('`')
                    .nth(1)
                    .unwrap_or("the integer")
                    .to_string();
                message = format!(
                    "{number} does not fit in a 64-bit integer; hmsim allows at most 1e18 in magnitude"
                );
            }
            return Err(ConfigError::new(file, &key, message).at_line(line));
        }
    }
    serde_path_to_error::deserialize(de).map_err(|e| {
        let mut key = e.path().to_string();
        if key == "." {
            key.clear();
        }
        let inner = e.inner();
        let mut message = inner.message().trim().to_string();
        // serde says "unknown field `x`"; users write keys, not fields.
        message = message
            .replace("unknown field", "unknown key")
            .replace("missing field", "missing required key");
        let line = inner
            .span()
            .map(|s| line_of_offset(text, s.start))
            .or_else(|| line_of_key(text, &key));
        ConfigError::new(file, &key, message).at_line(line)
    })
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

/// The first key of `value` (a whole file) that [`RENAMED_KEYS`] renamed: (key path, message).
pub(super) fn renamed_key(value: &toml::Value, path: &mut Vec<String>) -> Option<(String, String)> {
    match value {
        toml::Value::Table(t) => t.iter().find_map(|(k, v)| {
            path.push(k.clone());
            let found = match RENAMED_KEYS.iter().find(|(old, _)| old == k) {
                Some((old, new)) => Some((
                    path.join("."),
                    format!("'{old}' was renamed; write '{new}' (same value and unit)"),
                )),
                None => renamed_key(v, path),
            };
            path.pop();
            found
        }),
        toml::Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| {
            path.push(i.to_string());
            let found = renamed_key(v, path);
            path.pop();
            found
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Job {
        #[allow(dead_code)]
        queue_depth: u32,
    }

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Top {
        #[allow(dead_code)]
        seed: u64,
        #[allow(dead_code)]
        job: Job,
    }

    #[test]
    fn unknown_key_names_path_line_and_allowed() {
        let text = "seed = 1\n[job]\nqueue_depht = 4\n";
        let e = parse_toml::<Top>(text, "s.toml").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.key.starts_with("job"), "{e}");
        assert!(
            e.message.contains("queue_depht") && e.message.contains("queue_depth"),
            "{e}"
        );
    }

    #[test]
    fn wrong_type_names_key() {
        let text = "seed = 1\n[job]\nqueue_depth = \"deep\"\n";
        let e = parse_toml::<Top>(text, "s.toml").unwrap_err();
        assert_eq!(e.key, "job.queue_depth");
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn negative_into_unsigned_is_an_error() {
        let e = parse_toml::<Top>("seed = 1\n[job]\nqueue_depth = -4\n", "s.toml").unwrap_err();
        assert_eq!(e.key, "job.queue_depth");
    }

    #[test]
    fn absurd_numbers_and_names_are_refused_with_their_key() {
        let text = "seed = 9223372036854775807\n[job]\nqueue_depth = 9223372036854775807\n";
        let e = parse_toml::<Top>(text, "s.toml").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("job.queue_depth", Some(3)));
        assert!(e.message.contains("1e18"), "{e}");
        // +inf is "never" for a threshold, and absurd elsewhere.
        assert!(parse_toml::<toml::Table>("[[p]]\nthreshold_us = inf\n", "s.toml").is_ok());
        let e = parse_toml::<toml::Table>("[job]\nduration_s = inf\n", "s.toml").unwrap_err();
        assert_eq!(e.key, "job.duration_s");
        let e = parse_toml::<toml::Table>("[[t]]\nname = \"../x\"\n", "s.toml").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("t.0.name", Some(2)));
        let long = format!("name = \"{}\"\n", "a".repeat(200));
        assert!(parse_toml::<toml::Table>(&long, "s.toml").is_err());
        assert!(parse_toml::<toml::Table>("name = \"\"\n", "s.toml").is_err());
        assert!(parse_toml::<toml::Table>("name = \"ok-name 1\"\nx = 1e17\n", "s").is_ok());
    }

    /// An integer beyond i64 names its own key and line, not `module`.
    #[test]
    fn an_integer_beyond_i64_names_its_key_and_line() {
        let text = "module = \"storage\"\nseed = 1\n[job]\nqueue_depth = 99999999999999999999\n";
        let e = parse_toml::<toml::Table>(text, "s.toml").unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("job.queue_depth", Some(4)),
            "{e}"
        );
        #[derive(Deserialize, Debug)]
        struct Header {
            #[allow(dead_code)]
            module: Option<toml::Value>,
        }
        let e = parse_toml::<Header>(text, "s.toml").unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("job.queue_depth", Some(4)),
            "{e}"
        );
        assert!(
            e.message
                .contains("99999999999999999999 does not fit in a 64-bit integer"),
            "{e}"
        );
        let text = "module = \"tiering\"\n[[tiers]]\nname = \"a\"\n[[tiers]]\nname = \"b\"\ncapacity_bytes = -99999999999999999999\n";
        let e = parse_toml::<Header>(text, "s.toml").unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("tiers.1.capacity_bytes", Some(6)),
            "{e}"
        );
        assert_eq!(
            key_at_line("[a.\"b\"]\nc.d = 1\n", 2).as_deref(),
            Some("a.b.c.d")
        );
    }

    #[test]
    fn line_of_nested_key() {
        assert_eq!(line_of_key("a = 1\n[b]\nc = 2\n", "b.c"), Some(3));
        assert_eq!(line_of_key("a = 1\n", "b.c"), None);
    }

    #[test]
    fn line_of_key_in_an_array_of_tables() {
        let text = "seed = 1\n[[tiers]]\nname = \"a\"\ncapacity_bytes = 1\n[[tiers]]\nname = \"b\"\ncapacity_bytes = 0\n";
        assert_eq!(line_of_key(text, "tiers.1.capacity_bytes"), Some(7));
        assert_eq!(line_of_key(text, "tiers.0.name"), Some(3));
        assert_eq!(line_of_key("x = [{a = 1}, {a = 2}]\n", "x.1.a"), Some(1));
    }
}
