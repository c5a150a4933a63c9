use crate::error::ConfigError;

/// Apply `key.path=value` overrides (from `--set` or a sweep axis) to TOML `text`.
/// The value is read as a TOML value (`16`, `true`, `"x"`, `[1, 2]`); a bare word that is not
/// valid TOML is taken as a string, so `--set device.name=intel-ssd-750` works unquoted.
pub fn apply_overrides(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
) -> Result<String, ConfigError> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc = text.parse::<toml_edit::DocumentMut>().map_err(|e| {
        ConfigError::new(file, "", format!("not valid TOML: {}", e.message().trim()))
    })?;
    for (key, raw) in overrides {
        let value = parse_value(raw);
        let parts: Vec<&str> = key.split('.').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(ConfigError::new(
                "<override>",
                key,
                "expected a dotted key path like job.queue_depth",
            ));
        }
        let mut table = doc.as_table_mut() as &mut dyn toml_edit::TableLike;
        for part in &parts[..parts.len() - 1] {
            let entry = table
                .entry(part)
                .or_insert(toml_edit::Item::Table(toml_edit::Table::new()));
            table = entry.as_table_like_mut().ok_or_else(|| {
                ConfigError::new(
                    "<override>",
                    key,
                    format!("'{part}' is a value, not a table"),
                )
            })?;
        }
        table.insert(parts[parts.len() - 1], toml_edit::Item::Value(value));
    }
    Ok(doc.to_string())
}

fn parse_value(raw: &str) -> toml_edit::Value {
    raw.trim()
        .parse::<toml_edit::Value>()
        .unwrap_or_else(|_| toml_edit::Value::from(raw.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_and_create() {
        let out = apply_overrides(
            "seed = 1\n[job]\nqueue_depth = 4\n",
            "s.toml",
            &[
                ("job.queue_depth".into(), "16".into()),
                ("device.name".into(), "intel-ssd-750".into()),
            ],
        )
        .unwrap();
        let v: toml::Table = toml::from_str(&out).unwrap();
        assert_eq!(v["job"]["queue_depth"].as_integer(), Some(16));
        assert_eq!(v["device"]["name"].as_str(), Some("intel-ssd-750"));
    }

    #[test]
    fn override_through_a_value_is_an_error() {
        let e =
            apply_overrides("seed = 1\n", "s.toml", &[("seed.x".into(), "1".into())]).unwrap_err();
        assert_eq!(e.key, "seed.x");
    }
}
