//! The generated parameter pages in `docs/parameters/`: one page per module (and one for
//! device files), each listing the tables its scenario reads, from the `params!` declarations.
//! A test fails when a committed page differs from what the code declares.

use crate::config::params::{markdown, Params, TableRef};

/// One generated page: file stem, title, intro line, root tables.
pub struct Page {
    pub stem: &'static str,
    pub title: String,
    pub intro: String,
    pub roots: Vec<TableRef>,
}

/// Every generated page: the device files', one per registered module (its tables from
/// the registry), the NUMA topology files'.
pub fn pages() -> Vec<Page> {
    let mut pages = vec![Page {
        stem: "devices",
        title: "Device file keys".into(),
        intro: "Keys of a device file (docs/devices.md): one catalog device, memory or block."
            .into(),
        roots: vec![crate::device::DeviceSpec::table()],
    }];
    pages.extend(crate::registry::MODULES.iter().map(|e| Page {
        stem: e.name,
        title: format!("{} module keys", e.name),
        intro: format!(
            "Keys of a `module = \"{}\"` scenario (docs/{}), besides `module`, `seed`, `name` \
             and `description`{}.",
            e.name, e.make.docs, e.make.params_note
        ),
        roots: (e.make.params)(),
    }));
    pages.push(Page {
        stem: "numa-topology",
        title: "NUMA topology file keys".into(),
        intro: "Keys of a machine topology (docs/numa-pmem.md): a preset's file or a \
                scenario's inline `[topology]`."
            .into(),
        roots: vec![crate::numa::topology::Topology::table()],
    });
    pages
}

/// The text of each generated page: (file stem, markdown).
pub fn render() -> Vec<(&'static str, String)> {
    pages()
        .into_iter()
        .map(|p| (p.stem, markdown(&p.title, &p.intro, &p.roots)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/parameters")
    }

    /// The committed pages match the declarations; `UPDATE_PARAM_DOCS=1` rewrites them.
    #[test]
    fn committed_parameter_pages_are_up_to_date() {
        let update = std::env::var_os("UPDATE_PARAM_DOCS").is_some();
        let mut stale = Vec::new();
        for (stem, text) in render() {
            let path = dir().join(format!("{stem}.md"));
            let old = std::fs::read_to_string(&path).unwrap_or_default();
            if old != text {
                if update {
                    std::fs::write(&path, &text).expect("write parameter page");
                } else {
                    stale.push(path.display().to_string());
                }
            }
        }
        assert!(
            stale.is_empty(),
            "out of date (run UPDATE_PARAM_DOCS=1 cargo test -p hmsim --lib param_docs): {stale:?}"
        );
    }

    #[test]
    fn every_page_has_a_table_per_root_and_no_key_twice_in_a_table() {
        for p in pages() {
            let tables = crate::config::params::tables_from(&p.roots);
            assert!(tables.len() >= p.roots.len(), "{}", p.stem);
            for (name, rows) in tables {
                let mut keys: Vec<&str> = rows.iter().map(|r| r.name).collect();
                keys.sort_unstable();
                keys.dedup();
                assert_eq!(keys.len(), rows.len(), "{}: {name} repeats a key", p.stem);
                assert!(
                    rows.iter().all(|r| !r.doc.is_empty()),
                    "{name}: a key has no doc"
                );
            }
        }
    }
}
