use crate::error::ConfigError;

/// Apply `key.path=value` overrides (from `--set` or a sweep axis) to TOML `text`.
/// The value is read as a TOML value (`16`, `true`, `"x"`, `[1, 2]`, `{a = 1}`); a bare word
/// that is not valid TOML is taken as a string, so `--set device.name=intel-ssd-750` works
/// unquoted. A numeric part indexes an array of tables or an array (`tiers.1.capacity_bytes`,
/// also written `tiers[1].capacity_bytes`); the element must exist. An array of tables the
/// scenario leaves to its default (a tiering scenario without `[[tiers]]`) is written out
/// from the default first, so an index into it changes one default entry: `defaults(module,
/// key)` gives that default (the modules know it; `registry::apply_overrides` asks them).
pub fn apply_overrides_with(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    defaults: &dyn Fn(&str, &str) -> Option<toml_edit::Item>,
) -> Result<String, ConfigError> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc = text.parse::<toml_edit::DocumentMut>().map_err(|e| {
        ConfigError::new(file, "", format!("not valid TOML: {}", e.message().trim()))
    })?;
    let module = doc
        .get("module")
        .and_then(|m| m.as_str())
        .unwrap_or_default()
        .to_string();
    for (key, raw) in overrides {
        let value = parse_value(raw);
        let parts = key_parts(key)?;
        if parts.len() > 1 && parts[1].parse::<usize>().is_ok() && !doc.contains_key(&parts[0]) {
            match defaults(&module, &parts[0]) {
                Some(item) => {
                    doc.insert(&parts[0], item);
                }
                None => {
                    return Err(ConfigError::new(
                        "<override>",
                        key,
                        format!(
                            "'{}' is not in the scenario, so there is no element {} to change; \
                             write the '{}' entries in the scenario first",
                            parts[0], parts[1], parts[0]
                        ),
                    ))
                }
            }
        }
        set_path(doc.as_item_mut(), &parts, key, value)?;
    }
    Ok(doc.to_string())
}

/// `tiers[1].x` and `tiers.1.x` → ["tiers", "1", "x"].
fn key_parts(key: &str) -> Result<Vec<String>, ConfigError> {
    let dotted = key.replace('[', ".").replace(']', "");
    let parts: Vec<String> = dotted.split('.').map(str::to_string).collect();
    if parts.iter().any(|p| p.is_empty()) || key.matches('[').count() != key.matches(']').count() {
        return Err(ConfigError::new(
            "<override>",
            key,
            "expected a dotted key path like job.queue_depth or tiers.1.unloaded_latency_ns",
        ));
    }
    Ok(parts)
}

fn set_path(
    item: &mut toml_edit::Item,
    parts: &[String],
    key: &str,
    value: toml_edit::Value,
) -> Result<(), ConfigError> {
    let err = |m: String| ConfigError::new("<override>", key, m);
    let (part, rest) = (&parts[0], &parts[1..]);
    let index = part.parse::<usize>().ok();
    match item {
        toml_edit::Item::ArrayOfTables(a) => {
            let len = a.len();
            let i = index.ok_or_else(|| err(format!("'{part}' is not an index of an array")))?;
            let t = a
                .get_mut(i)
                .ok_or_else(|| err(format!("index {i} is out of range; the array has {len}")))?;
            if rest.is_empty() {
                return Err(err("cannot replace a whole table of an array".into()));
            }
            let mut inner = toml_edit::Item::Table(std::mem::take(t));
            let r = set_path(&mut inner, rest, key, value);
            if let toml_edit::Item::Table(back) = inner {
                *t = back;
            }
            r
        }
        toml_edit::Item::Value(toml_edit::Value::Array(a)) => {
            let len = a.len();
            let i = index.ok_or_else(|| err(format!("'{part}' is not an index of an array")))?;
            let v = a
                .get_mut(i)
                .ok_or_else(|| err(format!("index {i} is out of range; the array has {len}")))?;
            if rest.is_empty() {
                *v = value.decorated(" ", "");
                return Ok(());
            }
            let mut inner = toml_edit::Item::Value(v.clone());
            set_path(&mut inner, rest, key, value)?;
            if let toml_edit::Item::Value(back) = inner {
                *v = back;
            }
            Ok(())
        }
        _ => {
            let table = item
                .as_table_like_mut()
                .ok_or_else(|| err(format!("'{part}' is below a value, not a table")))?;
            if rest.is_empty() {
                table.insert(part, toml_edit::Item::Value(value));
                return Ok(());
            }
            let entry = table
                .entry(part)
                .or_insert(toml_edit::Item::Table(toml_edit::Table::new()));
            set_path(entry, rest, key, value)
        }
    }
}

fn parse_value(raw: &str) -> toml_edit::Value {
    raw.trim()
        .parse::<toml_edit::Value>()
        .unwrap_or_else(|_| toml_edit::Value::from(raw.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use crate::registry::apply_overrides;

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
    fn overrides_index_arrays_of_tables_and_arrays() {
        let text = "seed = 1\n[[tiers]]\nname = \"a\"\nlat = 1.0\n[[tiers]]\nname = \"b\"\nlat = 2.0\n[x]\nv = [1, 2, 3]\n";
        let out = apply_overrides(
            text,
            "s.toml",
            &[
                ("tiers.1.lat".into(), "250.0".into()),
                ("tiers[0].curve".into(), "[[0.0, 1.0], [1.0, 2.0]]".into()),
                ("x.v[2]".into(), "9".into()),
                ("tiers.0.extra".into(), "{ a = 1 }".into()),
            ],
        )
        .unwrap();
        let v: toml::Table = toml::from_str(&out).unwrap();
        let tiers = v["tiers"].as_array().unwrap();
        assert_eq!(tiers[0]["lat"].as_float(), Some(1.0));
        assert_eq!(tiers[1]["lat"].as_float(), Some(250.0));
        assert_eq!(tiers[0]["curve"].as_array().unwrap().len(), 2);
        assert_eq!(tiers[0]["extra"]["a"].as_integer(), Some(1));
        assert_eq!(v["x"]["v"].as_array().unwrap()[2].as_integer(), Some(9));
        // The rest of the file is as written (same order, same lines before the change).
        assert!(
            out.starts_with("seed = 1\n[[tiers]]\nname = \"a\""),
            "{out}"
        );
    }

    #[test]
    fn a_missing_index_is_an_error_that_says_how_many() {
        let e = apply_overrides(
            "[[tiers]]\nname = \"a\"\n",
            "s.toml",
            &[("tiers.3.name".into(), "x".into())],
        )
        .unwrap_err();
        assert_eq!(e.key, "tiers.3.name");
        assert!(
            e.message.contains("out of range") && e.message.contains('1'),
            "{e}"
        );
        let e = apply_overrides(
            "[[tiers]]\nname = \"a\"\n",
            "s.toml",
            &[("tiers.name".into(), "x".into())],
        )
        .unwrap_err();
        assert!(e.message.contains("not an index"), "{e}");
    }

    #[test]
    fn override_through_a_value_is_an_error() {
        let e =
            apply_overrides("seed = 1\n", "s.toml", &[("seed.x".into(), "1".into())]).unwrap_err();
        assert_eq!(e.key, "seed.x");
    }
}
