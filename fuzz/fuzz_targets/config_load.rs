//! Any text through the config loader: TOML parsing with its shared bounds, `--set`
//! overrides, and the device catalog's reader.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

static CATALOG: OnceLock<hmsim::device::Catalog> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = hmsim::config::parse_toml::<toml::Table>(text, "f.toml");
    // The first line as an override `key=value` applied to the rest.
    if let Some((first, rest)) = text.split_once('\n') {
        if let Some((k, v)) = first.split_once('=') {
            let _ = hmsim::registry::apply_overrides(rest, "f.toml", &[(k.into(), v.into())]);
        }
    }
    let catalog = CATALOG.get_or_init(hmsim::device::Catalog::builtin);
    let _ = catalog.parse_device_file("f.toml", text);
});
