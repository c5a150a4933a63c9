//! Catalog devices in a scenario's memory slots: a table that describes one memory (a tier,
//! ...) may name a catalog device (`device = "cxl-dram"`); the keys it does not write itself
//! are filled from that device, so keys written beside `device` override the device's
//! figures. The filling happens on the TOML text before the module parses it, so a module's
//! own schema stays the one place its keys are defined (docs/devices.md, "Devices in a
//! scenario").
//!
//! A device is used whole or refused: every figure of the device either fills a key, or is
//! checked against what the module can honour (and the run refused naming the figure), or
//! is informational for this module (a warning when a user's device file sets it).

use crate::config::Source;
use crate::error::ConfigError;

use super::spec::{DeviceKind, DeviceSpec};
use super::Catalog;

/// A slot key filled from a device: its name and how to read it off the device (`None`: the
/// device does not give it, the module's default applies).
pub type SlotKey = (&'static str, fn(&DeviceSpec) -> Option<toml_edit::Value>);

/// Why a module cannot honour one of a device's figures: the device key and the message.
pub type Refusal = (&'static str, String);

/// A kind of memory slot: where its tables are in a scenario and which keys a device fills.
pub struct Slot {
    /// Top-level key of the array of tables (`tiers`).
    pub array: &'static str,
    /// The module, for messages (`tiering`).
    pub module: &'static str,
    pub keys: &'static [SlotKey],
    /// A figure of the device the module cannot honour, given the keys the table writes
    /// itself (an override can make a figure moot).
    pub refuse: fn(&DeviceSpec, &dyn toml_edit::TableLike) -> Option<Refusal>,
    /// Device keys the module does not use (informational for it): named in a warning when a
    /// user's device file sets them, not when they come from a built-in device.
    pub unused: &'static [(&'static str, &'static str)],
}

/// Bytes a tier moves per access (one cache line, `mempath::LINE_BYTES`).
const TIER_LINE_BYTES: u64 = 64;

/// A tier of the tiering module (docs/tiering.md): name, capacity software sees, unloaded
/// read latency, read and write saturation bandwidth of the media, and the link in front of
/// it as the tier's path.
pub const MEMORY_TIER: Slot = Slot {
    array: "tiers",
    module: "tiering",
    keys: &[
        ("name", |d| Some(d.name.clone().into())),
        ("capacity_bytes", |d| {
            Some((d.usable_capacity_bytes.unwrap_or(d.capacity_bytes) as i64).into())
        }),
        ("unloaded_latency_ns", |d| Some(d.read.latency_ns.into())),
        ("read_bandwidth_gb_s", |d| {
            Some(d.read.bandwidth_gb_s.into())
        }),
        ("write_bandwidth_gb_s", |d| {
            Some(d.write.bandwidth_gb_s.into())
        }),
        ("path", link_as_path),
    ],
    refuse: refuse_in_tier,
    unused: &[
        (
            "read.energy_nj_per_access",
            "the tiering model reports no energy",
        ),
        (
            "write.energy_nj_per_access",
            "the tiering model reports no energy",
        ),
        ("power", "the tiering model reports no power or energy"),
        (
            "endurance",
            "the tiering model counts no wear (the PMem write path does: [pmem_tier])",
        ),
        (
            "thermal",
            "the tiering model has no temperature, so no throttling either",
        ),
    ],
};

/// The device's `[link]` as a one-resource tier path.
fn link_as_path(d: &DeviceSpec) -> Option<toml_edit::Value> {
    let l = d.link.as_ref()?;
    let mut t = toml_edit::InlineTable::new();
    t.insert("name", l.name.clone().into());
    for (k, b) in [
        ("read_gb_s", l.read_gb_s),
        ("write_gb_s", l.write_gb_s),
        ("total_gb_s", l.total_gb_s),
    ] {
        if let Some(b) = b {
            t.insert(k, b.into());
        }
    }
    let mut a = toml_edit::Array::new();
    a.push(t);
    Some(toml_edit::Value::Array(a))
}

/// What a tier cannot honour. Writes: the model treats write-backs as posted (the CPU never
/// waits on one; the media's occupancy by writes comes through the bandwidths), which holds
/// while a write completes at the media no slower than a read; slower writes make reads
/// queue behind them in a way the DRAM-shaped curve does not describe, unless the tier
/// gives its own `curve` measured on the device. Access size: the tier's bandwidths are for
/// 64 B lines; media that access more per request lose bandwidth to 64 B accesses, unless
/// the tier gives both bandwidths itself.
fn refuse_in_tier(d: &DeviceSpec, table: &dyn toml_edit::TableLike) -> Option<Refusal> {
    if d.write.latency_ns > d.read.latency_ns && !table.contains_key("curve") {
        return Some((
            "write.latency_ns",
            format!(
                "{} ns is above its read.latency_ns ({} ns); a tier treats \
                 write-backs as posted (the CPU never waits on them), which holds only for media \
                 whose writes complete no slower than reads (DRAM, CXL DRAM). Give the tier a \
                 `curve` measured on this device (reads queueing behind slow writes included), or \
                 for PMem-class media use [pmem_tier] with the tier's figures written out",
                d.write.latency_ns, d.read.latency_ns
            ),
        ));
    }
    let both_bandwidths =
        table.contains_key("read_bandwidth_gb_s") && table.contains_key("write_bandwidth_gb_s");
    if d.access_bytes != TIER_LINE_BYTES && !both_bandwidths {
        return Some((
            "access_bytes",
            format!(
                "{} B per media access; a tier moves {TIER_LINE_BYTES} B lines and its \
                 bandwidths are for {TIER_LINE_BYTES} B accesses, which such media serve at a \
                 fraction of their stated bandwidth (the model does not compute it). Write the \
                 tier's read_bandwidth_gb_s and write_bandwidth_gb_s for {TIER_LINE_BYTES} B \
                 accesses beside `device`",
                d.access_bytes
            ),
        ));
    }
    None
}

/// The warning for the figures of device `name` (named at `key`) that `module` does not use
/// (`unused`: device key, why) and that a user's device file sets; `None` when there are
/// none (built-in devices carry such figures for other modules and stay quiet).
pub fn unused_figures(
    catalog: &Catalog,
    name: &str,
    key: &str,
    module: &str,
    unused: &[(&str, &str)],
) -> Option<String> {
    let named: Vec<String> = unused
        .iter()
        .filter(|(k, _)| catalog.user_sets(name, k))
        .map(|(k, why)| {
            let o = catalog.origin_text(name, k).unwrap_or_default();
            format!("{k} ({o}: {why})")
        })
        .collect();
    (!named.is_empty()).then(|| {
        format!(
            "{key}: device '{name}' sets figures the {module} model does not use: {}",
            named.join("; ")
        )
    })
}

/// Device figures the PMem write path (modules pmem, pm-index, and tiering's `[pmem_tier]`)
/// does not use: it takes the device's capacity and rated bytes written; its media timing is
/// `[pmem.timing]` (or the module's own timing table).
pub const PMEM_UNUSED: &[(&str, &str)] = &[
    (
        "read.latency_ns",
        "media timing comes from the pmem timing table (read_media_ns)",
    ),
    (
        "read.bandwidth_gb_s",
        "media timing comes from the pmem timing table (media_read_gb_s)",
    ),
    (
        "write.latency_ns",
        "media timing comes from the pmem timing table (persist_ns)",
    ),
    (
        "write.bandwidth_gb_s",
        "media timing comes from the pmem timing table (media_write_gb_s)",
    ),
    (
        "read.energy_nj_per_access",
        "the pmem model reports no energy",
    ),
    (
        "write.energy_nj_per_access",
        "the pmem model reports no energy",
    ),
    ("power", "the pmem model reports no power or energy"),
    ("thermal", "the pmem model has no temperature"),
    (
        "usable_capacity_bytes",
        "wear spreads over the raw capacity_bytes",
    ),
];

/// `source` with every table of `slot` that names a device completed from the catalog and
/// its `device` key removed (so the module sees only its own keys), and the warnings for
/// device figures the module does not use. The filled source is `None` when no table names
/// a device: `source` is used as written.
pub fn fill_slots<'a>(
    source: &Source<'a>,
    catalog: &Catalog,
    slot: &Slot,
) -> Result<(Option<Source<'a>>, Vec<String>), ConfigError> {
    let mut warnings = Vec::new();
    let mut result = Ok(());
    let mut changed = false;
    let filled = source.edited(|root| {
        let Some(item) = root.get_mut(slot.array) else {
            return;
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
            _ => return,
        };
        for (i, table) in tables.into_iter().enumerate() {
            match fill_table(table, i, source, catalog, slot, &mut warnings) {
                Ok(filled) => changed |= filled,
                Err(e) => {
                    result = Err(e);
                    return;
                }
            }
        }
    });
    result?;
    Ok((changed.then_some(filled), warnings))
}

/// Entry `i` of `slot` completed from the device it names, with the warning for device
/// figures the module does not use added to `warnings`; whether the entry names a device.
fn fill_table(
    table: &mut dyn toml_edit::TableLike,
    i: usize,
    source: &Source,
    catalog: &Catalog,
    slot: &Slot,
    warnings: &mut Vec<String>,
) -> Result<bool, ConfigError> {
    let Some(value) = table.get("device") else {
        return Ok(false);
    };
    let file = source.file();
    let key = format!("{}.{i}.device", slot.array);
    let at = |e: ConfigError| e.at_line(source.line_of_key(&key));
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
    if let Some((field, why)) = (slot.refuse)(device, &*table) {
        let set_at = catalog
            .origin_text(&name, field)
            .map(|o| format!(" (set at {o})"))
            .unwrap_or_default();
        return Err(at(ConfigError::new(
            file,
            &key,
            format!(
                "the {} model cannot use device '{name}' as it is: {field}{set_at}: {why}",
                slot.module
            ),
        )));
    }
    warnings.extend(unused_figures(
        catalog,
        &name,
        &key,
        slot.module,
        slot.unused,
    ));
    for (k, get) in slot.keys {
        if !table.contains_key(k) {
            if let Some(v) = get(device) {
                table.insert(k, toml_edit::Item::Value(v));
            }
        }
    }
    table.remove("device");
    Ok(true)
}

/// An error found in the filled source, pointed back at what the user wrote: the key's own
/// line, or (for a key the device filled) the line of its slot's `device` key.
pub fn blame_slot(mut e: ConfigError, original: &Source, slot: &Slot) -> ConfigError {
    if e.file != original.file() || e.key.is_empty() {
        return e;
    }
    if explain(&mut e, original, slot) {
        return e;
    }
    let key = dotted(&e.key);
    e.line = original.line_of_key(&key).or_else(|| {
        let rest = key.strip_prefix(slot.array)?.strip_prefix('.')?;
        let index = rest.split('.').next()?;
        original.line_of_key(&format!("{}.{index}.device", slot.array))
    });
    e
}

/// An unknown key in one of `slot`'s tables: the allowed keys include `device` (removed
/// before the module parses the table), and the line is the unknown key's own in
/// `original`. Other errors are returned as they are.
pub fn explain_unknown_key(mut e: ConfigError, original: &Source, slot: &Slot) -> ConfigError {
    explain(&mut e, original, slot);
    e
}

/// [`explain_unknown_key`] in place; whether it found the key's line.
fn explain(e: &mut ConfigError, original: &Source, slot: &Slot) -> bool {
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
        if let Some(line) = original.line_of_key(&path) {
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

    /// `text`'s memory tiers filled from the catalog `c`.
    fn fill<'a>(
        text: &'a str,
        c: &Catalog,
    ) -> Result<(Option<Source<'a>>, Vec<String>), ConfigError> {
        fill_slots(&Source::parse(text, "s.toml")?, c, &MEMORY_TIER)
    }

    fn tiers(source: &Source) -> Vec<toml::Table> {
        let v: toml::Table = source.deserialize().unwrap();
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
            let e = crate::scenario::run::<crate::tier::Tiering>(
                &text,
                "s.toml",
                &c,
                &crate::progress::NoProgress,
            )
            .unwrap_err();
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
        let (out, warnings) = fill(text, &c).unwrap();
        let out = out.unwrap();
        assert!(
            warnings.is_empty(),
            "a built-in device warns of nothing: {warnings:?}"
        );
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
            t[1]["write_bandwidth_gb_s"].as_float(),
            Some(d.write.bandwidth_gb_s)
        );
        assert_eq!(
            t[1]["capacity_bytes"].as_integer(),
            Some(d.capacity_bytes as i64)
        );
        assert!(!t[1].contains_key("path"), "cxl-dram has no [link]");
        assert!(!t[1].contains_key("device"));
    }

    #[test]
    fn no_device_leaves_the_text_alone() {
        let c = Catalog::builtin();
        let text = "[[tiers]]\nname = \"a\"\n";
        assert!(fill(text, &c).unwrap().0.is_none());
    }

    #[test]
    fn unknown_or_block_devices_are_errors_at_the_device_line() {
        let c = Catalog::builtin();
        let e = fill("seed = 1\n[[tiers]]\ndevice = \"nope\"\n", &c).unwrap_err();
        assert_eq!(e.key, "tiers.0.device");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("cxl-dram"), "{e}");
        let e = fill("[[tiers]]\ndevice = \"intel-ssd-750\"\n", &c).unwrap_err();
        assert!(e.message.contains("block device"), "{e}");
    }

    /// A catalog of the built-in devices plus `files` (name, text) written to a folder.
    fn with_files(tag: &str, files: &[(&str, &str)]) -> Catalog {
        let dir = std::env::temp_dir().join(format!("hmsim-slot-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
        }
        let c = Catalog::load(std::slice::from_ref(&dir)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        c
    }

    const EXPANDER: &str = "name = \"x8\"\nbase = \"cxl-dram\"\ndescription = \"d\"\nusable_capacity_bytes = 100000000000\n[read]\nlatency_ns = 250.0\nbandwidth_gb_s = 38.4\n[write]\nlatency_ns = 250.0\nbandwidth_gb_s = 12.0\n[link]\nname = \"cxl-x8\"\nread_gb_s = 30.0\nwrite_gb_s = 29.0\n";

    /// A device's write bandwidth, usable capacity and link reach the tier; a path written in
    /// the tier wins over the link.
    #[test]
    fn write_bandwidth_usable_capacity_and_link_fill_the_tier() {
        let c = with_files("fill", &[("x8", EXPANDER)]);
        let text = "[[tiers]]\nname = \"local\"\n[[tiers]]\ndevice = \"x8\"\n";
        let (out, warnings) = fill(text, &c).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let t = tiers(&out.unwrap());
        assert_eq!(t[1]["capacity_bytes"].as_integer(), Some(100_000_000_000));
        assert_eq!(t[1]["read_bandwidth_gb_s"].as_float(), Some(38.4));
        assert_eq!(t[1]["write_bandwidth_gb_s"].as_float(), Some(12.0));
        let path = t[1]["path"].as_array().unwrap();
        assert_eq!(path.len(), 1);
        let link = path[0].as_table().unwrap();
        assert_eq!(link["name"].as_str(), Some("cxl-x8"));
        assert_eq!(link["read_gb_s"].as_float(), Some(30.0));
        assert_eq!(link["write_gb_s"].as_float(), Some(29.0));
        assert!(!link.contains_key("total_gb_s"));
        let own = "[[tiers]]\nname = \"local\"\n[[tiers]]\ndevice = \"x8\"\npath = []\n";
        let t = tiers(&fill(own, &c).unwrap().0.unwrap());
        assert!(t[1]["path"].as_array().unwrap().is_empty());
    }

    /// The link becomes the tier's path in a run: its bottleneck column names it for reads.
    #[test]
    fn a_device_link_is_the_tiers_path_in_a_run() {
        let c = with_files("run", &[("x8", EXPANDER)]);
        let text = "module = \"tiering\"\nseed = 1\n[[tiers]]\nname = \"local\"\ncapacity_bytes = 4000000000\nunloaded_latency_ns = 70.0\nread_bandwidth_gb_s = 160.0\n[[tiers]]\ndevice = \"x8\"\n[workload]\nworking_set_bytes = 8589934592\nhot_set_bytes = 2147483648\n[antagonist]\nintensities = [0]\n[policy]\nnames = [\"static-default\"]\n[sim]\nduration_s = 0.2\nmeasure_last_s = 0.1\n";
        let out = crate::scenario::run::<crate::tier::Tiering>(
            text,
            "s.toml",
            &c,
            &crate::progress::NoProgress,
        )
        .unwrap();
        let tier = &out.resolved["tiers"][1];
        assert_eq!(tier["path"][0]["name"], "cxl-x8");
        assert_eq!(tier["write_bandwidth_gb_s"], 12.0);
    }

    /// A figure a tier cannot honour refuses the device at the tier's `device` line, naming
    /// the figure, where it is set, why and the fix; the tier's own curve (or bandwidths)
    /// make it moot.
    #[test]
    fn figures_a_tier_cannot_honour_are_refused_at_the_device_line() {
        let c = Catalog::builtin();
        let head = "seed = 1\n[[tiers]]\nname = \"local\"\n[[tiers]]\n";
        let e = fill(&format!("{head}device = \"pcm\"\n"), &c).unwrap_err();
        assert_eq!(e.key, "tiers.1.device", "{e}");
        assert_eq!(e.line, Some(5), "{e}");
        for part in [
            "write.latency_ns (set at builtin:pcm.toml:14): 100 ns is above",
            "above its read.latency_ns (50 ns)",
            "posted",
            "curve",
            "[pmem_tier]",
        ] {
            assert!(e.message.contains(part), "{part}: {e}");
        }
        let curve = format!("{head}device = \"pcm\"\ncurve = [[0.0, 1.0], [1.0, 3.0]]\n");
        fill(&curve, &c).unwrap();
        let e = fill(&format!("{head}device = \"optane-pmem\"\n"), &c).unwrap_err();
        assert!(
            e.message
                .contains("access_bytes (set at builtin:optane-pmem.toml:"),
            "{e}"
        );
        assert!(e.message.contains("): 256 B per media access"), "{e}");
        let both = format!(
            "{head}device = \"optane-pmem\"\nread_bandwidth_gb_s = 1.6\nwrite_bandwidth_gb_s = 0.6\n"
        );
        let (out, _) = fill(&both, &c).unwrap();
        // What software sees of the DIMM: its usable capacity.
        let t = tiers(&out.unwrap());
        let d = c.get("optane-pmem").unwrap();
        assert_eq!(
            t[1]["capacity_bytes"].as_integer(),
            d.usable_capacity_bytes.map(|b| b as i64)
        );
        // No built-in device that a study or example uses as a tier is refused.
        for name in ["ddr4-dram", "cxl-dram", "xpoint-cell"] {
            fill(&format!("{head}device = \"{name}\"\n"), &c).unwrap();
        }
    }

    /// Figures the tiering model does not use are named once per device when a user's file
    /// sets them, with the file and line; inherited built-in ones stay quiet.
    #[test]
    fn unused_figures_a_user_file_sets_are_warned_of_once() {
        let mine = "name = \"hot\"\nbase = \"cxl-dram\"\n[write]\nenergy_nj_per_access = 2.0\n[thermal]\nr_passive_k_per_w = 5.0\nr_fan_k_per_w = 2.0\nc_j_per_k = 10.0\n";
        let c = with_files("warn", &[("hot", mine)]);
        let text = "[[tiers]]\nname = \"local\"\n[[tiers]]\ndevice = \"hot\"\n";
        let (_, w) = fill(text, &c).unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("tiers.1.device: device 'hot'"), "{w:?}");
        assert!(w[0].contains("write.energy_nj_per_access ("), "{w:?}");
        assert!(w[0].contains("hot.toml:4"), "{w:?}");
        assert!(w[0].contains("thermal ("), "{w:?}");
        assert!(
            !w[0].contains("endurance"),
            "inherited from cxl-dram: {w:?}"
        );
    }

    /// serde names an entry `tiers[0]`: its error still finds the entry's line.
    #[test]
    fn an_error_in_an_entry_serde_names_with_brackets_finds_its_line() {
        let text =
            "module = \"tiering\"\n[[tiers]]\nname = \"local\"\n[[tiers]]\ndevice = \"cxl-dram\"\n";
        let e = crate::scenario::run::<crate::tier::Tiering>(
            text,
            "s.toml",
            &Catalog::builtin(),
            &crate::progress::NoProgress,
        )
        .unwrap_err();
        assert!(e.message.contains("capacity_bytes"), "{e}");
        assert_eq!(e.line, Some(2), "{e}");
    }

    #[test]
    fn errors_in_filled_keys_point_at_the_device_line() {
        let original = "seed = 1\n[[tiers]]\nname = \"a\"\n[[tiers]]\ndevice = \"cxl-dram\"\n";
        let e = ConfigError::new("s.toml", "tiers.1.capacity_bytes", "too big").at_line(Some(9));
        assert_eq!(
            blame_slot(e, &Source::parse(original, "s.toml").unwrap(), &MEMORY_TIER).line,
            Some(5)
        );
    }
}
