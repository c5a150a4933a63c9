//! Catalog devices in a scenario's memory slots: a table that describes one memory (a tier,
//! ...) may name a catalog device (`device = "cxl-dram"`); the keys it does not write itself
//! are filled from that device, so keys written beside `device` override the device's
//! figures. The filling happens on the TOML text before the module parses it, so a module's
//! own schema stays the one place its keys are defined (docs/devices.md, "Devices in a
//! scenario").

use crate::config::line_of_key;
use crate::error::ConfigError;

use super::spec::{DeviceKind, DeviceSpec};
use super::Catalog;

/// A slot key filled from a device: its name and how to read it off the device.
pub type SlotKey = (&'static str, fn(&DeviceSpec) -> toml_edit::Value);

/// A kind of memory slot: where its tables are in a scenario and which keys a device fills.
pub struct Slot {
    /// Top-level key of the array of tables (`tiers`).
    pub array: &'static str,
    pub keys: &'static [SlotKey],
}

/// A tier of the tiering module (docs/tiering.md): name, capacity, unloaded read latency and
/// read saturation bandwidth.
pub const MEMORY_TIER: Slot = Slot {
    array: "tiers",
    keys: &[
        ("name", |d| d.name.clone().into()),
        ("capacity_bytes", |d| (d.capacity_bytes as i64).into()),
        ("unloaded_latency_ns", |d| d.read.latency_ns.into()),
        ("read_bandwidth_gb_s", |d| d.read.bandwidth_gb_s.into()),
    ],
};

/// `text` with every table of `slot` that names a device completed from the catalog and its
/// `device` key removed (so the module sees only its own keys). `None` when no table names
/// a device: the text is used as written.
pub fn fill_slots(
    text: &str,
    file: &str,
    catalog: &Catalog,
    slot: &Slot,
) -> Result<Option<String>, ConfigError> {
    let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else {
        return Ok(None); // the module's parser reports the syntax error with its line
    };
    let mut changed = false;
    let Some(item) = doc.get_mut(slot.array) else {
        return Ok(None);
    };
    let tables: Vec<&mut dyn toml_edit::TableLike> = match item {
        toml_edit::Item::ArrayOfTables(a) => a
            .iter_mut()
            .map(|t| t as &mut dyn toml_edit::TableLike)
            .collect(),
        toml_edit::Item::Value(toml_edit::Value::Array(a)) => a
            .iter_mut()
            .filter_map(|v| v.as_inline_table_mut())
            .map(|t| t as &mut dyn toml_edit::TableLike)
            .collect(),
        _ => return Ok(None),
    };
    for (i, table) in tables.into_iter().enumerate() {
        let Some(value) = table.get("device") else {
            continue;
        };
        let key = format!("{}.{i}.device", slot.array);
        let at = |e: ConfigError| e.at_line(line_of_key(text, &key));
        let Some(name) = value.as_str().map(str::to_string) else {
            return Err(at(ConfigError::new(
                file,
                &key,
                "expected a catalog device name (a string; see `hmsim devices`)",
            )));
        };
        let device = catalog.require(&name, file, &key).map_err(at)?;
        if device.kind != DeviceKind::Memory {
            return Err(at(ConfigError::new(
                file,
                &key,
                format!("'{name}' is a block device; a memory slot needs a memory device"),
            )));
        }
        for (k, get) in slot.keys {
            if !table.contains_key(k) {
                table.insert(k, toml_edit::Item::Value(get(device)));
            }
        }
        table.remove("device");
        changed = true;
    }
    Ok(changed.then(|| doc.to_string()))
}

/// An error found in the filled text, pointed back at what the user wrote: the key's own
/// line, or (for a key the device filled) the line of its slot's `device` key.
pub fn blame_slot(mut e: ConfigError, original: &str, file: &str, slot: &Slot) -> ConfigError {
    if e.file != file || e.key.is_empty() {
        return e;
    }
    if explain(&mut e, original, slot) {
        return e;
    }
    e.line = line_of_key(original, &e.key).or_else(|| {
        let rest = e.key.strip_prefix(slot.array)?.strip_prefix('.')?;
        let index = rest.split('.').next()?;
        line_of_key(original, &format!("{}.{index}.device", slot.array))
    });
    e
}

/// An unknown key in one of `slot`'s tables: the allowed keys include `device` (removed
/// before the module parses the table), and the line is the unknown key's own in
/// `original`. Other errors are returned as they are.
pub fn explain_unknown_key(mut e: ConfigError, original: &str, slot: &Slot) -> ConfigError {
    explain(&mut e, original, slot);
    e
}

/// [`explain_unknown_key`] in place; whether it found the key's line.
fn explain(e: &mut ConfigError, original: &str, slot: &Slot) -> bool {
    if let Some(unknown) = unknown_key_in_slot(e, slot) {
        // serde lists the module's keys; a slot also takes `device` (removed before
        // parsing). The line is the unknown key's own.
        if let Some(at) = e.message.find("expected one of ") {
            let list = at + "expected one of ".len();
            e.message.insert_str(list, "`device`, ");
        }
        let key = dotted(&e.key);
        let path = if key.ends_with(&format!(".{unknown}")) {
            key
        } else {
            format!("{key}.{unknown}")
        };
        if let Some(line) = line_of_key(original, &path) {
            e.key = path;
            e.line = Some(line);
            return true;
        }
    }
    false
}

/// `tiers[1].x` (serde's spelling of a path) as `tiers.1.x`.
fn dotted(key: &str) -> String {
    key.replace('[', ".").replace(']', "")
}

/// The key named by an "unknown key `x`" error inside one of `slot`'s tables.
fn unknown_key_in_slot(e: &ConfigError, slot: &Slot) -> Option<String> {
    let key = dotted(&e.key);
    let rest = key.strip_prefix(slot.array)?.strip_prefix('.')?;
    rest.split('.').next()?.parse::<usize>().ok()?;
    let start = e.message.find("unknown key `")? + "unknown key `".len();
    let len = e.message[start..].find('`')?;
    Some(e.message[start..start + len].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiers(text: &str) -> Vec<toml::Table> {
        let v: toml::Table = toml::from_str(text).unwrap();
        v["tiers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_table().unwrap().clone())
            .collect()
    }

    /// An unknown key in a tier names its own line and lists `device` among the allowed
    /// keys, with or without a device in that tier.
    #[test]
    fn an_unknown_key_in_a_tier_names_its_line_and_device() {
        let c = Catalog::builtin();
        let head = "module = \"tiering\"\n[[tiers]]\nname = \"local\"\ncapacity_bytes = 1000000000\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 160.0\n[[tiers]]\n";
        for tier in [
            "device = \"cxl-dram\"\n# a comment\nlatency_ns = 250.0\n",
            "name = \"far\"\ncapacity_bytes = 1000000000\nlatency_ns = 250.0\n",
        ] {
            let text = format!("{head}{tier}");
            let e = crate::tier::run(&text, "s.toml", &c).unwrap_err();
            assert_eq!(e.line, Some(10), "{e}");
            assert_eq!(e.key, "tiers.1.latency_ns", "{e}");
            assert!(e.message.contains("unknown key `latency_ns`"), "{e}");
            assert!(
                e.message.contains("expected one of `device`, `name`"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_device_fills_the_keys_not_written_beside_it() {
        let c = Catalog::builtin();
        let text = "seed = 1\n[[tiers]]\nname = \"local\"\ncapacity_bytes = 1000\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 160.0\n[[tiers]]\ndevice = \"cxl-dram\"\nunloaded_latency_ns = 250.0\n";
        let out = fill_slots(text, "s.toml", &c, &MEMORY_TIER)
            .unwrap()
            .unwrap();
        let t = tiers(&out);
        let d = c.get("cxl-dram").unwrap();
        assert_eq!(t[0]["capacity_bytes"].as_integer(), Some(1000));
        assert_eq!(t[1]["name"].as_str(), Some("cxl-dram"));
        assert_eq!(t[1]["unloaded_latency_ns"].as_float(), Some(250.0));
        assert_eq!(
            t[1]["read_bandwidth_gb_s"].as_float(),
            Some(d.read.bandwidth_gb_s)
        );
        assert_eq!(
            t[1]["capacity_bytes"].as_integer(),
            Some(d.capacity_bytes as i64)
        );
        assert!(!t[1].contains_key("device"));
    }

    #[test]
    fn no_device_leaves_the_text_alone() {
        let c = Catalog::builtin();
        let text = "[[tiers]]\nname = \"a\"\n";
        assert!(fill_slots(text, "s.toml", &c, &MEMORY_TIER)
            .unwrap()
            .is_none());
    }

    #[test]
    fn unknown_or_block_devices_are_errors_at_the_device_line() {
        let c = Catalog::builtin();
        let e = fill_slots(
            "seed = 1\n[[tiers]]\ndevice = \"nope\"\n",
            "s.toml",
            &c,
            &MEMORY_TIER,
        )
        .unwrap_err();
        assert_eq!(e.key, "tiers.0.device");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("cxl-dram"), "{e}");
        let e = fill_slots(
            "[[tiers]]\ndevice = \"intel-ssd-750\"\n",
            "s.toml",
            &c,
            &MEMORY_TIER,
        )
        .unwrap_err();
        assert!(e.message.contains("block device"), "{e}");
    }

    #[test]
    fn errors_in_filled_keys_point_at_the_device_line() {
        let original = "seed = 1\n[[tiers]]\nname = \"a\"\n[[tiers]]\ndevice = \"cxl-dram\"\n";
        let e = ConfigError::new("s.toml", "tiers.1.capacity_bytes", "too big").at_line(Some(9));
        assert_eq!(
            blame_slot(e, original, "s.toml", &MEMORY_TIER).line,
            Some(5)
        );
    }
}
