use std::fmt::Display;

use super::Source;
use crate::error::ConfigError;

/// Range and consistency checks for a parsed config. Implementors call the [`Validator`]
/// helpers with field names; the validator tracks the key path and the first error.
pub trait Validate {
    fn validate(&self, v: &mut Validator);
}

/// Where a validator finds the line of a key.
enum Lines<'a> {
    Tree(&'a Source<'a>),
    Text(&'a str),
}

/// Collects the first validation error with its full key path and source line.
pub struct Validator<'a> {
    file: &'a str,
    lines: Lines<'a>,
    path: Vec<String>,
    error: Option<ConfigError>,
}

impl<'a> Validator<'a> {
    /// A validator of what was read from `source` (errors name its lines).
    pub fn new(source: &'a Source<'a>) -> Self {
        Validator {
            file: source.file(),
            lines: Lines::Tree(source),
            path: Vec::new(),
            error: None,
        }
    }

    /// A validator of what was read from `text` of `file` without keeping its tree (a device
    /// file merged over its base): an error's line is looked up in the text.
    pub fn of_text(file: &'a str, text: &'a str) -> Self {
        Validator {
            file,
            lines: Lines::Text(text),
            path: Vec::new(),
            error: None,
        }
    }

    /// Validate `item` (the whole config) and return the first error.
    pub fn check<T: Validate + ?Sized>(source: &Source, item: &T) -> Result<(), ConfigError> {
        let mut v = Validator::new(source);
        item.validate(&mut v);
        v.finish()
    }

    pub fn finish(self) -> Result<(), ConfigError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn key(&self, field: &str) -> String {
        let mut parts = self.path.clone();
        if !field.is_empty() {
            parts.push(field.to_string());
        }
        parts.join(".")
    }

    /// Check the nested table `name` with its own `Validate` impl.
    pub fn nested<T: Validate + ?Sized>(&mut self, name: &str, item: &T) {
        self.path.push(name.to_string());
        item.validate(self);
        self.path.pop();
    }

    /// Record an error at `field` (relative to the current table) unless one is recorded.
    pub fn fail(&mut self, field: &str, message: impl Into<String>) {
        if self.error.is_none() {
            let key = self.key(field);
            let line = match self.lines {
                Lines::Tree(source) => source.line_of_key(&key),
                Lines::Text(text) => super::line_of_key(text, &key),
            };
            self.error = Some(ConfigError::new(self.file, &key, message).at_line(line));
        }
    }

    /// `lo <= value <= hi`, inclusive; the message states the allowed range and unit.
    pub fn range<T: PartialOrd + Display + Copy>(
        &mut self,
        field: &str,
        value: T,
        lo: T,
        hi: T,
        unit: &str,
    ) {
        if !(value >= lo && value <= hi) {
            let unit = if unit.is_empty() {
                String::new()
            } else {
                format!(" {unit}")
            };
            self.fail(
                field,
                format!("{value} is out of range; allowed {lo} to {hi}{unit}"),
            );
        }
    }

    /// A finite value strictly above zero.
    pub fn positive(&mut self, field: &str, value: f64, unit: &str) {
        if !(value.is_finite() && value > 0.0) {
            self.fail(
                field,
                format!("{value} is not allowed; expected a positive number ({unit})"),
            );
        }
    }

    /// A finite value at or above zero.
    pub fn non_negative(&mut self, field: &str, value: f64, unit: &str) {
        if !(value.is_finite() && value >= 0.0) {
            self.fail(
                field,
                format!("{value} is not allowed; expected zero or more ({unit})"),
            );
        }
    }

    /// No entry of the list `field` repeats an earlier one (a repeated policy or intensity
    /// would run twice and give two rows with one label).
    pub fn distinct<T: PartialEq + Display>(&mut self, field: &str, items: &[T]) {
        for (j, b) in items.iter().enumerate() {
            if let Some(i) = items[..j].iter().position(|a| a == b) {
                self.fail(
                    &format!("{field}.{j}"),
                    format!("'{b}' repeats entry {i} of '{field}'; list each once"),
                );
                return;
            }
        }
    }

    /// A fraction in [0, 1].
    pub fn fraction(&mut self, field: &str, value: f64) {
        self.range(field, value, 0.0, 1.0, "");
    }

    /// `value` must be a multiple of `unit_bytes` (e.g. a 512 B sector).
    pub fn multiple_of(&mut self, field: &str, value: u64, unit_bytes: u64) {
        if !value.is_multiple_of(unit_bytes) {
            self.fail(
                field,
                format!("{value} is not a multiple of {unit_bytes} bytes"),
            );
        }
    }

    /// `value` must be one of `allowed`.
    pub fn one_of(&mut self, field: &str, value: &str, allowed: &[&str]) {
        if !allowed.contains(&value) {
            self.fail(
                field,
                format!("'{value}' is not known; allowed: {}", allowed.join(", ")),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Job {
        queue_depth: u32,
    }
    impl Validate for Job {
        fn validate(&self, v: &mut Validator) {
            v.range("queue_depth", self.queue_depth, 1, 64, "");
        }
    }
    struct Top {
        job: Job,
    }
    impl Validate for Top {
        fn validate(&self, v: &mut Validator) {
            v.nested("job", &self.job);
        }
    }

    #[test]
    fn repeated_list_entry_names_its_index() {
        let src = Source::parse("policies = [\"a\", \"b\", \"a\"]\n", "s.toml").unwrap();
        let mut v = Validator::new(&src);
        v.distinct("policies", &["a", "b", "a"]);
        let e = v.finish().unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("policies.2", Some(1)));
        assert!(e.message.contains("repeats entry 0"), "{e}");
        let src = Source::parse("", "s.toml").unwrap();
        let mut v = Validator::new(&src);
        v.distinct("x", &[1, 2, 3]);
        assert!(v.finish().is_ok());
    }

    #[test]
    fn range_error_names_path_line_and_range() {
        let text = "seed = 1\n\n[job]\nqueue_depth = 0\n";
        let e = Validator::check(
            &Source::parse(text, "s.toml").unwrap(),
            &Top {
                job: Job { queue_depth: 0 },
            },
        )
        .unwrap_err();
        assert_eq!(e.key, "job.queue_depth");
        assert_eq!(e.line, Some(4));
        assert!(e.message.contains("1 to 64"), "{e}");
        assert_eq!(
            e.to_string(),
            "s.toml:4: key 'job.queue_depth': 0 is out of range; allowed 1 to 64"
        );
    }
}
