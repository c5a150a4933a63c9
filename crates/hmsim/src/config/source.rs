//! A TOML file read once. The text is parsed into one tree whose keys and values keep where
//! they were written; the header, the device slots and the module's configuration are all
//! read from that tree (or an edited copy of it), and any later error finds its line in it
//! instead of parsing the text again.

use std::ops::Range;

use serde::de::DeserializeOwned;
use toml_edit::{Item, Table, TableLike, Value};

use super::load::{insane, line_of_offset, renamed_key, syntax_error};
use crate::error::ConfigError;

#[cfg(test)]
thread_local! {
    /// The files this thread parsed into a [`Source`], in order (tests count parses).
    pub(crate) static PARSED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A TOML file (`file` is its name in messages) and the tree parsed from its `text`.
#[derive(Clone, Debug)]
pub struct Source<'a> {
    file: &'a str,
    text: &'a str,
    root: Table,
}

impl<'a> Source<'a> {
    /// Parse `text`, refusing what no configuration may hold: a syntax error, a key that was
    /// renamed, a number or name beyond the bounds every config shares. Errors name the line.
    pub fn parse(text: &'a str, file: &'a str) -> Result<Self, ConfigError> {
        #[cfg(test)]
        PARSED.with(|p| p.borrow_mut().push(file.to_string()));
        let doc = toml_edit::Document::parse(text).map_err(|e| syntax_error(&e, text, file))?;
        let root = doc.into_item();
        let problem =
            renamed_key(&root, &mut Vec::new()).or_else(|| insane(&root, &mut Vec::new()));
        let Item::Table(root) = root else {
            unreachable!("a parsed document's root is a table")
        };
        let source = Source { file, text, root };
        if let Some((key, message)) = problem {
            let line = source.line_of_key(&key);
            return Err(ConfigError::new(file, &key, message).at_line(line));
        }
        Ok(source)
    }

    /// The file's name in messages.
    pub fn file(&self) -> &'a str {
        self.file
    }

    /// The text as written (after overrides).
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The parsed root table.
    pub fn root(&self) -> &Table {
        &self.root
    }

    /// A copy with its tree changed by `edit`. Keys and values kept from this source still
    /// name their lines in its text; ones `edit` adds have none.
    pub fn edited(&self, edit: impl FnOnce(&mut Table)) -> Source<'a> {
        let mut root = self.root.clone();
        edit(&mut root);
        Source { root, ..*self }
    }

    /// The line where the dotted `key` path is written, if it is. Numeric parts index
    /// arrays, including arrays of tables (`tiers.1.capacity_bytes`).
    pub fn line_of_key(&self, key: &str) -> Option<usize> {
        key_span(&self.root, key).map(|s| line_of_offset(self.text, s.start))
    }

    /// The tree read as `T`; errors name the file, line and key path.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, ConfigError> {
        let de = toml_edit::de::Deserializer::from(toml_edit::DocumentMut::from(self.root.clone()));
        serde_path_to_error::deserialize(de).map_err(|e| {
            let mut key = e.path().to_string();
            if key == "." {
                key.clear();
            }
            let inner = e.inner();
            // serde says "unknown field `x`"; users write keys, not fields.
            let message = inner
                .message()
                .trim()
                .replace("unknown field", "unknown key")
                .replace("missing field", "missing required key");
            let line = inner
                .span()
                .map(|s| line_of_offset(self.text, s.start))
                .or_else(|| self.line_of_key(&key));
            ConfigError::new(self.file, &key, message).at_line(line)
        })
    }
}

/// Deserialize `text` (from `file`) into `T`; errors name the file, line and key path.
pub fn parse_toml<T: DeserializeOwned>(text: &str, file: &str) -> Result<T, ConfigError> {
    Source::parse(text, file)?.deserialize()
}

/// Line where the dotted `key` path is written in `text`, if it is (for text not read into
/// a [`Source`]: an error pointed back at a file before overrides). Numeric parts index
/// arrays, including arrays of tables (`tiers.1.capacity_bytes`).
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let doc = toml_edit::Document::parse(text).ok()?;
    key_span(doc.as_table(), key).map(|s| line_of_offset(text, s.start))
}

/// Where the dotted `key` (or serde's `tiers[1].x`) is written under `root`: its key's
/// span, or its value's.
fn key_span(root: &Table, key: &str) -> Option<Range<usize>> {
    // serde's spelling of an index (`tiers[1].x`) is the dotted one (`tiers.1.x`).
    let key = key.replace('[', ".").replace(']', "");
    let parts: Vec<&str> = key.split('.').filter(|p| !p.is_empty()).collect();
    let mut table: &dyn TableLike = root;
    let mut span = None;
    let mut i = 0;
    while i < parts.len() {
        let (k, item) = table.get_key_value(parts[i])?;
        span = k.span().or_else(|| item.span()).or(span);
        i += 1;
        let index = parts.get(i).and_then(|p| p.parse::<usize>().ok());
        match (item, index) {
            (Item::ArrayOfTables(a), Some(idx)) => {
                let t = a.get(idx)?;
                span = t.span().or(span);
                table = t;
                i += 1;
            }
            (Item::Value(Value::Array(a)), Some(idx)) => {
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
    span
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
    fn absurd_numbers_and_names_are_refused_with_their_key() {
        let text = "seed = 9223372036854775807\n[job]\nqueue_depth = 9223372036854775807\n";
        let e = parse_toml::<Top>(text, "s.toml").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("job.queue_depth", Some(3)));
        assert!(e.message.contains("1e18"), "{e}");
        // +inf is "never" for a threshold, and absurd elsewhere.
        assert!(parse_toml::<toml::Table>("[[p]]\nthreshold_us = inf\n", "s.toml").is_ok());
        let e = parse_toml::<toml::Table>("[job]\nduration_s = inf\n", "s.toml").unwrap_err();
        assert_eq!(e.key, "job.duration_s");
        let e = parse_toml::<toml::Table>("[[t]]\nname = \"../x\"\n", "s.toml").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("t.0.name", Some(2)));
        let long = format!("name = \"{}\"\n", "a".repeat(200));
        assert!(parse_toml::<toml::Table>(&long, "s.toml").is_err());
        assert!(parse_toml::<toml::Table>("name = \"\"\n", "s.toml").is_err());
        assert!(parse_toml::<toml::Table>("name = \"ok-name 1\"\nx = 1e17\n", "s").is_ok());
    }

    /// An integer beyond i64 names its own key and line, not `module`.
    #[test]
    fn an_integer_beyond_i64_names_its_key_and_line() {
        let text = "module = \"storage\"\nseed = 1\n[job]\nqueue_depth = 99999999999999999999\n";
        let e = parse_toml::<toml::Table>(text, "s.toml").unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("job.queue_depth", Some(4)),
            "{e}"
        );
        #[derive(Deserialize, Debug)]
        struct Header {
            #[allow(dead_code)]
            module: Option<toml::Value>,
        }
        let e = parse_toml::<Header>(text, "s.toml").unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("job.queue_depth", Some(4)),
            "{e}"
        );
        assert!(
            e.message
                .contains("99999999999999999999 does not fit in a 64-bit integer"),
            "{e}"
        );
        let text = "module = \"tiering\"\n[[tiers]]\nname = \"a\"\n[[tiers]]\nname = \"b\"\ncapacity_bytes = -99999999999999999999\n";
        let e = parse_toml::<Header>(text, "s.toml").unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("tiers.1.capacity_bytes", Some(6)),
            "{e}"
        );
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
        assert_eq!(line_of_key(text, "tiers[1].capacity_bytes"), Some(7));
        assert_eq!(line_of_key(text, "tiers[1]"), Some(5));
    }
}
