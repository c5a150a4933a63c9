use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::{line_of_key, Validate, Validator};
use crate::error::ConfigError;

use super::spec::DeviceSpec;

/// The catalog files shipped with hmsim, embedded so the core works without any data path.
pub fn builtin_files() -> &'static [(&'static str, &'static str)] {
    macro_rules! dev {
        ($f:literal) => {
            (
                concat!("builtin:", $f),
                include_str!(concat!("../../devices/", $f)),
            )
        };
    }
    &[
        dev!("stt-mram-ssd.toml"),
        dev!("samsung-970-evo.toml"),
        dev!("samsung-970-evo-fairlio.toml"),
        dev!("intel-ssd-750.toml"),
        dev!("intel-ssd-750-fairlio.toml"),
        dev!("intel-optane-900p.toml"),
        dev!("nand-ssd-tlc.toml"),
        dev!("nand-ssd-qlc.toml"),
        dev!("ddr4-dram.toml"),
        dev!("cxl-dram.toml"),
        dev!("optane-pmem.toml"),
        dev!("stt-mram-cell.toml"),
        dev!("pcm.toml"),
        dev!("nand-cell.toml"),
        dev!("nor-flash-cell.toml"),
        dev!("xpoint-cell.toml"),
    ]
}

/// The known name closest to `name`: one containing it (or contained in it), else the
/// one at the smallest edit distance if that is at most a third of the name (at least 2).
pub(super) fn nearest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    if lower.len() >= 3 {
        let mut containing: Vec<&str> = known
            .iter()
            .copied()
            .filter(|k| k.contains(lower.as_str()) || lower.contains(*k))
            .collect();
        containing.sort_by_key(|k| (k.len().abs_diff(lower.len()), *k));
        if let Some(k) = containing.first() {
            return Some(k);
        }
    }
    let best = known.iter().map(|k| (edit_distance(&lower, k), *k)).min()?;
    (best.0 <= (lower.chars().count() / 3).max(2)).then_some(best.1)
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

struct RawDevice {
    file: String,
    text: String,
    table: toml::Table,
}

/// All known devices, by name. Later files override earlier ones of the same name, so a
/// user's directory can replace a built-in preset.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    devices: BTreeMap<String, (DeviceSpec, String)>,
    /// Each device's own file as written (before `base` is merged in): where a figure was set.
    own: BTreeMap<String, OwnFile>,
}

/// A device file as written: its keys, text (for lines) and base.
#[derive(Debug, Clone)]
struct OwnFile {
    file: String,
    text: String,
    table: toml::Table,
}

/// Whether `table` sets the dotted key `path` (`write.latency_ns`, `endurance`).
fn sets(table: &toml::Table, path: &str) -> bool {
    let mut t = table;
    let mut parts = path.split('.').peekable();
    while let Some(p) = parts.next() {
        match (t.get(p), parts.peek()) {
            (Some(_), None) => return true,
            (Some(toml::Value::Table(inner)), Some(_)) => t = inner,
            _ => return false,
        }
    }
    false
}

impl Catalog {
    /// Built-in devices plus every device file among the `*.toml` in `extra` directories (or
    /// the named files themselves). In a directory, scenario and sweep files (a top-level
    /// `module`, `scenario` or `axes` key) are not devices and are skipped, so a folder can
    /// hold a user's devices beside the scenarios that use them.
    pub fn load(extra: &[PathBuf]) -> Result<Catalog, ConfigError> {
        let mut raws: Vec<RawDevice> = Vec::new();
        for (file, text) in builtin_files() {
            raws.push(parse_raw(file, text)?);
        }
        for path in extra {
            let in_dir = !path.is_file();
            for file in toml_files(path)? {
                let text = crate::config::read_config_text(&file).map_err(|e| {
                    ConfigError::new(
                        &file.display().to_string(),
                        "",
                        format!("cannot read device file: {e}"),
                    )
                })?;
                if in_dir && !looks_like_a_device(&text) {
                    continue;
                }
                raws.push(parse_raw(&file.display().to_string(), &text)?);
            }
        }
        Catalog::from_raw(raws)
    }

    /// Only the built-in devices.
    pub fn builtin() -> Catalog {
        Catalog::load(&[]).expect("built-in device files are valid (checked by tests)")
    }

    fn from_raw(raws: Vec<RawDevice>) -> Result<Catalog, ConfigError> {
        let mut by_name: BTreeMap<String, RawDevice> = BTreeMap::new();
        for raw in raws {
            let name = match raw.table.get("name").and_then(|n| n.as_str()) {
                Some(n) => n.to_string(),
                None => {
                    return Err(
                        ConfigError::new(&raw.file, "name", "missing required key `name`")
                            .at_line(Some(1)),
                    )
                }
            };
            by_name.insert(name, raw);
        }
        let mut devices = BTreeMap::new();
        for (name, raw) in &by_name {
            let merged = resolve(name, &by_name, 0)?;
            let spec = deserialize(&raw.file, &raw.text, merged)?;
            let mut v = Validator::of_text(&raw.file, &raw.text);
            spec.validate(&mut v);
            v.finish()?;
            devices.insert(name.clone(), (spec, raw.file.clone()));
        }
        let own = by_name
            .into_iter()
            .map(|(name, raw)| {
                let own = OwnFile {
                    file: raw.file,
                    text: raw.text,
                    table: raw.table,
                };
                (name, own)
            })
            .collect();
        Ok(Catalog { devices, own })
    }

    /// The file (and line) that sets the dotted key `key` of device `name`: its own file, or
    /// the file of the base it inherits the key from. `None` when no file in the chain sets
    /// it (a default of the schema).
    pub fn origin(&self, name: &str, key: &str) -> Option<(&str, Option<usize>)> {
        let mut at = name;
        for _ in 0..10 {
            let own = self.own.get(at)?;
            if sets(&own.table, key) {
                return Some((own.file.as_str(), line_of_key(&own.text, key)));
            }
            at = own.table.get("base")?.as_str()?;
        }
        None
    }

    /// `file:line` of [`Catalog::origin`], for messages (`examples/devices/x.toml:14`).
    pub fn origin_text(&self, name: &str, key: &str) -> Option<String> {
        self.origin(name, key).map(|(f, l)| match l {
            Some(l) => format!("{f}:{l}"),
            None => f.to_string(),
        })
    }

    /// Whether a device file of the user's (not a built-in one) sets `key` of device `name`.
    pub fn user_sets(&self, name: &str, key: &str) -> bool {
        self.origin(name, key)
            .is_some_and(|(f, _)| !f.starts_with("builtin:"))
    }

    pub fn get(&self, name: &str) -> Option<&DeviceSpec> {
        self.devices.get(name).map(|(d, _)| d)
    }

    /// The device `name` or an error with the nearest known name, where to add devices,
    /// and the known names.
    pub fn require(&self, name: &str, file: &str, key: &str) -> Result<&DeviceSpec, ConfigError> {
        self.get(name).ok_or_else(|| {
            let names: Vec<&str> = self.devices.keys().map(|s| s.as_str()).collect();
            let hint = match nearest(name, &names) {
                Some(n) => format!("did you mean '{n}'? "),
                None => String::new(),
            };
            ConfigError::new(
                file,
                key,
                format!(
                    "unknown device '{name}'; {hint}devices from files are found with \
                     --device-dir DIR or $HMSIM_DEVICE_PATH; known devices: {}",
                    names.join(", ")
                ),
            )
        })
    }

    /// The memory device `name` with its rated bytes written (`endurance.tbw_bytes`): what
    /// every lifetime estimate of a persistent-memory module needs.
    pub fn memory_with_rated_writes(
        &self,
        name: &str,
        file: &str,
        key: &str,
    ) -> Result<(&DeviceSpec, f64), ConfigError> {
        let dev = self.require(name, file, key)?;
        if dev.kind != super::DeviceKind::Memory {
            return Err(ConfigError::new(
                file,
                key,
                format!(
                    "'{}' is a block device; expected a memory device such as optane-pmem",
                    dev.name
                ),
            ));
        }
        // The PMem write path is Optane's: 256 B XPLines written through the XPBuffer, straight
        // on the memory bus. Other media granularities or a link in front are not modelled.
        const XPLINE_BYTES: u64 = 256;
        if dev.access_bytes != XPLINE_BYTES {
            let at = self
                .origin_text(name, "access_bytes")
                .map(|o| format!(" (set at {o})"))
                .unwrap_or_default();
            return Err(ConfigError::new(
                file,
                key,
                format!(
                    "the PMem write path cannot use device '{}' as it is: access_bytes = {}{at}; \
                     the model's media are {XPLINE_BYTES} B XPLines (Optane's XPBuffer and AIT), \
                     so a device for it gives access_bytes = {XPLINE_BYTES} (start from \
                     base = \"optane-pmem\")",
                    dev.name, dev.access_bytes
                ),
            ));
        }
        if dev.link.is_some() {
            let at = self
                .origin_text(name, "link")
                .map(|o| format!(" (set at {o})"))
                .unwrap_or_default();
            return Err(ConfigError::new(
                file,
                key,
                format!(
                    "the PMem write path cannot use device '{}' as it is: it has a [link]{at}; \
                     the model's DIMMs sit on the memory bus with nothing in front (remove [link])",
                    dev.name
                ),
            ));
        }
        let rated = dev.endurance.as_ref().and_then(|e| e.tbw_bytes);
        let rated = rated.ok_or_else(|| {
            ConfigError::new(
                file,
                key,
                format!(
                    "device '{}' has no endurance.tbw_bytes (rated bytes written)",
                    dev.name
                ),
            )
        })?;
        Ok((dev, rated))
    }

    /// (device, file it came from), sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&DeviceSpec, &str)> {
        self.devices.values().map(|(d, f)| (d, f.as_str()))
    }

    /// Parse a single device file (e.g. a scenario's inline `device.file`), resolving `base`
    /// against this catalog.
    pub fn parse_device_file(&self, file: &str, text: &str) -> Result<DeviceSpec, ConfigError> {
        let raw = parse_raw(file, text)?;
        let mut table = raw.table.clone();
        if let Some(base) = table
            .get("base")
            .and_then(|b| b.as_str())
            .map(str::to_string)
        {
            let parent = self.require(&base, file, "base")?;
            let parent_value = toml::Value::try_from(parent).expect("device specs serialize");
            let mut merged = parent_value.as_table().cloned().unwrap_or_default();
            merged.remove("base");
            merge(&mut merged, table);
            table = merged;
        }
        let spec = deserialize(file, text, table)?;
        let mut v = Validator::of_text(file, text);
        spec.validate(&mut v);
        v.finish()?;
        Ok(spec)
    }
}

fn toml_files(path: &Path) -> Result<Vec<PathBuf>, ConfigError> {
    let shown = path.display().to_string();
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path)
        .map_err(|e| ConfigError::new(&shown, "", format!("cannot read device directory: {e}")))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

/// Not a scenario or sweep file: those have a top-level `module`, `scenario` or `axes` key,
/// a device never does. Unparseable text counts as a device so its error is reported.
fn looks_like_a_device(text: &str) -> bool {
    match text.parse::<toml::Table>() {
        Ok(t) => !["module", "scenario", "axes"]
            .iter()
            .any(|k| t.contains_key(*k)),
        Err(_) => true,
    }
}

fn parse_raw(file: &str, text: &str) -> Result<RawDevice, ConfigError> {
    let table: toml::Table = crate::config::parse_toml(text, file)?;
    Ok(RawDevice {
        file: file.to_string(),
        text: text.to_string(),
        table,
    })
}

/// Deep-merge `over` into `base`: tables merge key by key, anything else replaces.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

fn resolve(
    name: &str,
    all: &BTreeMap<String, RawDevice>,
    depth: usize,
) -> Result<toml::Table, ConfigError> {
    let raw = &all[name];
    let Some(base) = raw.table.get("base").and_then(|b| b.as_str()) else {
        return Ok(raw.table.clone());
    };
    if depth > 8 || base == name {
        return Err(ConfigError::new(
            &raw.file,
            "base",
            format!("'{base}' makes a cycle of base devices"),
        )
        .at_line(line_of_key(&raw.text, "base")));
    }
    if !all.contains_key(base) {
        let names: Vec<&str> = all.keys().map(|s| s.as_str()).collect();
        return Err(ConfigError::new(
            &raw.file,
            "base",
            format!("unknown base device '{base}'; known: {}", names.join(", ")),
        )
        .at_line(line_of_key(&raw.text, "base")));
    }
    let mut merged = resolve(base, all, depth + 1)?;
    merge(&mut merged, raw.table.clone());
    Ok(merged)
}

fn deserialize(file: &str, text: &str, table: toml::Table) -> Result<DeviceSpec, ConfigError> {
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let key = e.path().to_string();
        let key = if key == "." { String::new() } else { key };
        let message = e
            .inner()
            .message()
            .trim()
            .replace("unknown field", "unknown key")
            .replace("missing field", "missing required key");
        ConfigError::new(file, &key, message).at_line(line_of_key(text, &key))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures beyond physical bounds are refused with their key: 1e-9 ns, 1e17 GB/s.
    #[test]
    fn device_figures_beyond_physical_bounds_are_refused() {
        let cat = Catalog::builtin();
        for (section, key, value) in [
            ("read", "latency_ns", "1e-9"),
            ("write", "bandwidth_gb_s", "1e17"),
            ("read", "latency_ns", "2e10"),
        ] {
            let text =
                format!("name = \"x\"\nbase = \"ddr4-dram\"\n[{section}]\n{key} = {value}\n");
            let e = cat.parse_device_file("x.toml", &text).unwrap_err();
            assert_eq!(e.key, format!("{section}.{key}"), "{e}");
            assert_eq!(e.line, Some(4), "{e}");
            assert!(e.message.contains("out of range"), "{e}");
        }
        let text = "name = \"x\"\nbase = \"ddr4-dram\"\n[read]\nlatency_ns = 0.5\n";
        cat.parse_device_file("x.toml", text).unwrap();
    }

    /// A memory device's [link] is checked like any figure; block-only sections are refused
    /// on memory devices and [link] on block devices, each naming its key and line.
    #[test]
    fn link_and_block_sections_are_checked_by_kind() {
        let cat = Catalog::builtin();
        let ok = "name = \"x\"\nbase = \"cxl-dram\"\n[link]\nname = \"cxl-x8\"\nread_gb_s = 30.0\n";
        let d = cat.parse_device_file("x.toml", ok).unwrap();
        assert_eq!(d.link.unwrap().read_gb_s, Some(30.0));
        for (text, key, line, part) in [
            (
                "name = \"x\"\nbase = \"cxl-dram\"\n[link]\nname = \"l\"\nwrite_gb_s = 1e6\n",
                "link.write_gb_s",
                Some(5),
                "out of range",
            ),
            (
                "name = \"x\"\nbase = \"cxl-dram\"\n[link]\nname = \"l\"\n",
                "link",
                Some(3),
                "needs read_gb_s",
            ),
            (
                "name = \"x\"\nbase = \"intel-ssd-750\"\n[link]\nname = \"l\"\ntotal_gb_s = 4.0\n",
                "link",
                Some(3),
                "[interface]",
            ),
            (
                "name = \"x\"\nbase = \"cxl-dram\"\n[write_cache]\ncapacity_bytes = 1\nafter_latency_ns = 1.0\nafter_bandwidth_gb_s = 1.0\n",
                "write_cache",
                Some(3),
                "block devices only",
            ),
            (
                "name = \"x\"\nbase = \"cxl-dram\"\n[read]\nmax_iops = 1e6\n",
                "read.max_iops",
                Some(4),
                "block devices only",
            ),
        ] {
            let e = cat.parse_device_file("x.toml", text).unwrap_err();
            assert_eq!(e.key, key, "{e}");
            assert_eq!(e.line, line, "{e}");
            assert!(e.message.contains(part), "{e}");
        }
    }

    /// The PMem write path refuses media of another access size, or with a link, naming
    /// where the figure is set.
    #[test]
    fn the_pmem_path_refuses_other_media_granularities_and_links() {
        let dir = std::env::temp_dir().join(format!("hmsim-pmem-dev-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let small = "name = \"small\"\nbase = \"optane-pmem\"\naccess_bytes = 64\n";
        let linked =
            "name = \"linked\"\nbase = \"optane-pmem\"\n[link]\nname = \"l\"\nread_gb_s = 8.0\n";
        std::fs::write(dir.join("small.toml"), small).unwrap();
        std::fs::write(dir.join("linked.toml"), linked).unwrap();
        let c = Catalog::load(std::slice::from_ref(&dir)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        c.memory_with_rated_writes("optane-pmem", "s.toml", "pmem.device")
            .unwrap();
        let e = c
            .memory_with_rated_writes("small", "s.toml", "pmem.device")
            .unwrap_err();
        assert_eq!(e.key, "pmem.device");
        assert!(e.message.contains("access_bytes = 64 (set at "), "{e}");
        assert!(e.message.contains("small.toml:3"), "{e}");
        let e = c
            .memory_with_rated_writes("linked", "s.toml", "pmem.device")
            .unwrap_err();
        assert!(e.message.contains("[link] (set at "), "{e}");
    }

    /// An unknown device names the nearest known one and where devices come from.
    #[test]
    fn unknown_device_suggests_the_nearest_name_and_the_search_path() {
        let cat = Catalog::builtin();
        let e = cat
            .require("optane-900p", "s.toml", "device.name")
            .unwrap_err();
        assert!(
            e.message.contains("did you mean 'intel-optane-900p'?"),
            "{e}"
        );
        assert!(e.message.contains("--device-dir"), "{e}");
        assert!(e.message.contains("HMSIM_DEVICE_PATH"), "{e}");
        let e = cat.require("ddr4-dramm", "s.toml", "device").unwrap_err();
        assert!(e.message.contains("did you mean 'ddr4-dram'?"), "{e}");
        let e = cat.require("zzzzzzzzzz", "s.toml", "device").unwrap_err();
        assert!(!e.message.contains("did you mean"), "{e}");
        assert!(e.message.contains("known devices: "), "{e}");
    }

    #[test]
    fn builtin_catalog_is_valid_and_complete() {
        let c = Catalog::builtin();
        let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/devices"))
            .unwrap()
            .count();
        assert_eq!(
            c.iter().count(),
            files,
            "every file in devices/ is listed in builtin_files()"
        );
        for name in [
            "stt-mram-ssd",
            "samsung-970-evo",
            "intel-ssd-750",
            "intel-optane-900p",
            "optane-pmem",
            "ddr4-dram",
        ] {
            assert!(c.get(name).is_some(), "missing {name}");
        }
    }

    #[test]
    fn every_number_in_builtin_files_has_a_source_comment() {
        for (file, text) in builtin_files() {
            for (i, line) in text.lines().enumerate() {
                let l = line.trim();
                if l.starts_with('#') || l.starts_with('[') || !l.contains('=') {
                    continue;
                }
                let value = l.split_once('=').unwrap().1.trim();
                if value.starts_with('"') {
                    continue;
                }
                let has_number = value
                    .split('#')
                    .next()
                    .unwrap()
                    .chars()
                    .any(|c| c.is_ascii_digit());
                if has_number {
                    assert!(
                        value.contains('#'),
                        "{file}:{}: number without a source comment: {l}",
                        i + 1
                    );
                }
            }
        }
    }

    #[test]
    fn a_device_directory_skips_scenarios_and_sweeps_beside_the_devices() {
        let dir = std::env::temp_dir().join(format!("hmsim-devdir-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let device = "name = \"my-cxl\"\nbase = \"cxl-dram\"\ndescription = \"d\"\n[read]\nlatency_ns = 250.0 # mine\nbandwidth_gb_s = 30.0 # mine\n";
        std::fs::write(dir.join("my-cxl.toml"), device).unwrap();
        std::fs::write(dir.join("run.toml"), "module = \"tiering\"\nseed = 1\n").unwrap();
        std::fs::write(
            dir.join("sweep.toml"),
            "scenario = \"run.toml\"\n[axes]\nseed = [1, 2]\n",
        )
        .unwrap();
        let c = Catalog::load(std::slice::from_ref(&dir)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let d = c.get("my-cxl").unwrap();
        assert_eq!(d.read.latency_ns, 250.0);
        assert_eq!(d.read.bandwidth_gb_s, 30.0);
        assert_eq!(c.iter().count(), builtin_files().len() + 1);
    }

    #[test]
    fn the_old_gbps_spelling_names_the_new_key() {
        let c = Catalog::builtin();
        let text = "name = \"old\"\nbase = \"cxl-dram\"\ndescription = \"d\"\n[read]\nlatency_ns = 1.0 # x\nbandwidth_gbps = 2.0 # x\n";
        let e = c.parse_device_file("o.toml", text).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("read.bandwidth_gbps", Some(6)));
        assert!(e.message.contains("write 'bandwidth_gb_s'"), "{e}");
    }

    #[test]
    fn user_file_with_missing_field_names_it() {
        let c = Catalog::builtin();
        let text = "name = \"x\"\nkind = \"block\"\ndescription = \"d\"\ntechnology = \"nand\"\ncapacity_bytes = 1\n[read]\nlatency_ns = 1.0\n";
        let e = c.parse_device_file("x.toml", text).unwrap_err();
        assert!(e.message.contains("missing required key"), "{e}");
    }

    #[test]
    fn user_file_can_inherit_a_preset() {
        let c = Catalog::builtin();
        let text = "name = \"my-900p\"\nbase = \"intel-optane-900p\"\ndescription = \"hot\"\n[power]\nidle_w = 6.0 # mine\nread_active_w = 15.0 # mine\nwrite_active_w = 15.0 # mine\n";
        let d = c.parse_device_file("my.toml", text).unwrap();
        assert_eq!(d.name, "my-900p");
        assert_eq!(d.power.as_ref().unwrap().idle_w, 6.0);
        assert_eq!(
            d.read.bandwidth_gb_s,
            c.get("intel-optane-900p").unwrap().read.bandwidth_gb_s
        );
    }
}
