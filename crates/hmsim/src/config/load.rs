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

/// Line where the dotted `key` path is written in `text`, if it is.
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let doc = text.parse::<toml_edit::Document<String>>().ok()?;
    let mut item: &toml_edit::Item = doc.as_item();
    let mut span = None;
    for part in key.split('.').filter(|p| !p.is_empty()) {
        if let Ok(idx) = part.parse::<usize>() {
            item = item.as_array().and_then(|a| a.get(idx)).map(|_| item)?;
            // Arrays of values: point at the array itself.
            continue;
        }
        let table = item.as_table_like()?;
        let (k, next) = table.get_key_value(part)?;
        span = k.span().or_else(|| next.span()).or(span);
        item = next;
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
}
