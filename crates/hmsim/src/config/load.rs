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

/// Deserialize `text` (from `file`) into `T`; errors name the file, line and key path.
pub fn parse_toml<T: DeserializeOwned>(text: &str, file: &str) -> Result<T, ConfigError> {
    let de = toml::Deserializer::parse(text).map_err(|e| {
        let line = e.span().map(|s| line_of_offset(text, s.start));
        ConfigError::new(file, "", format!("not valid TOML: {}", e.message().trim())).at_line(line)
    })?;
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
