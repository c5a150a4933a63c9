//! One shape for every set of parts picked by name: modules, policies, allocators, indexes,
//! trace formats, benchmarks.

use crate::error::RunError;

/// One registered part: its name in TOML/CLI, a one-line description and its constructor.
pub struct Entry<F: 'static> {
    pub name: &'static str,
    pub about: &'static str,
    pub make: F,
}

/// The parts of one kind (`what`, e.g. "tiering policy"), by name.
pub struct Registry<F: 'static> {
    what: &'static str,
    entries: &'static [Entry<F>],
}

impl<F: 'static> Registry<F> {
    /// A registry of `entries`; names must be unique (checked by `duplicates`, in tests).
    pub const fn new(what: &'static str, entries: &'static [Entry<F>]) -> Self {
        Registry { what, entries }
    }

    /// What kind of part this registry holds, for messages.
    pub fn what(&self) -> &'static str {
        self.what
    }

    /// The entry called `name`, if any.
    pub fn entry(&self, name: &str) -> Option<&'static Entry<F>> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The constructor called `name`, if any.
    pub fn get(&self, name: &str) -> Option<&'static F> {
        self.entry(name).map(|e| &e.make)
    }

    /// The constructor called `name`, or an error at `key` of `file` listing the allowed names.
    pub fn require(&self, name: &str, file: &str, key: &str) -> Result<&'static F, RunError> {
        self.get(name).ok_or_else(|| {
            RunError::config(
                file,
                key,
                format!(
                    "unknown {} '{name}'; allowed: {}",
                    self.what,
                    self.names().join(", ")
                ),
            )
        })
    }

    /// Every name, in registration order.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.name).collect()
    }

    /// Every entry, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &'static Entry<F>> {
        self.entries.iter()
    }

    /// Names registered more than once (empty for a well-formed registry).
    pub fn duplicates(&self) -> Vec<&'static str> {
        let mut seen = std::collections::BTreeSet::new();
        self.entries
            .iter()
            .filter(|e| !seen.insert(e.name))
            .map(|e| e.name)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one() -> Result<u32, RunError> {
        Ok(1)
    }
    static R: Registry<fn() -> Result<u32, RunError>> = Registry::new(
        "number",
        &[
            Entry {
                name: "one",
                about: "the first",
                make: one,
            },
            Entry {
                name: "uno",
                about: "the first, in Spanish",
                make: one,
            },
        ],
    );

    #[test]
    fn finds_by_name_and_lists_the_allowed_names_otherwise() {
        assert_eq!((R.require("uno", "f.toml", "n").unwrap())().unwrap(), 1);
        let e = R.require("two", "f.toml", "n").err().unwrap();
        assert_eq!(e.key, "n");
        assert!(
            e.message
                .contains("unknown number 'two'; allowed: one, uno"),
            "{e}"
        );
        assert!(R.duplicates().is_empty());
    }
}
