//! Unit constants and conversions. Names carry their unit; these helpers keep the
//! conversions in one place (unit mix-ups are the most common simulator bug).

pub const NS_PER_US: f64 = 1e3;
pub const NS_PER_S: f64 = 1e9;
pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;
/// GB/s is 10^9 bytes per second, i.e. exactly one byte per nanosecond.
pub const BYTES_PER_NS_PER_GBPS: f64 = 1.0;

/// Time in ns to move `bytes` at `gbps` (10^9 B/s).
#[inline]
pub fn transfer_ns(bytes: u64, gbps: f64) -> f64 {
    bytes as f64 / (gbps * BYTES_PER_NS_PER_GBPS)
}

/// Bandwidth in GB/s from bytes over nanoseconds.
#[inline]
pub fn gbps(bytes: f64, ns: f64) -> f64 {
    if ns <= 0.0 {
        0.0
    } else {
        bytes / ns
    }
}

/// Bandwidth in MiB/s (as fio and fair-lio report it) from bytes over nanoseconds.
#[inline]
pub fn mib_per_s(bytes: f64, ns: f64) -> f64 {
    if ns <= 0.0 {
        0.0
    } else {
        bytes / MIB as f64 / (ns / NS_PER_S)
    }
}

/// A Julian year, s (lifetimes in years).
pub const SECONDS_PER_YEAR: f64 = 365.25 * 24.0 * 3600.0;

/// A simulated span for messages: `2.3 ms`, `41 µs`, `12.5 s`, `3.2 h`.
pub fn human_seconds(s: f64) -> String {
    let (v, unit) = if s >= 3600.0 {
        (s / 3600.0, "h")
    } else if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "µs")
    } else {
        (s * 1e9, "ns")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

/// The one vocabulary of units. A scenario key or result column whose name ends in
/// `_<suffix>` (or is `<suffix>`) is in that unit, and its declaration leaves the unit empty:
/// the name states it, once. The longest suffix wins (`bandwidth_gb_s` is GB/s, not s).
pub const UNIT_SUFFIXES: &[(&str, &str)] = &[
    ("bytes", "B"),
    ("kib", "KiB"),
    ("mib", "MiB"),
    ("gib", "GiB"),
    ("kb", "kB"),
    ("mb", "MB"),
    ("gb", "GB"),
    ("ns", "ns"),
    ("us", "µs"),
    ("ms", "ms"),
    ("s", "s"),
    ("gb_s", "GB/s"),
    ("mb_s", "MB/s"),
    ("mib_s", "MiB/s"),
    ("mib_per_j", "MiB/J"),
    ("inserts_per_s", "inserts/s"),
    ("mops", "Mops/s"),
    ("mops_per_cpu_s", "Mops/CPU s"),
    ("c", "°C"),
    ("k", "K"),
    ("w", "W"),
    ("j", "J"),
    ("nj", "nJ"),
    ("k_per_w", "K/W"),
    ("j_per_k", "J/K"),
    ("hz", "Hz"),
    ("ghz", "GHz"),
    ("cycles", "cycles"),
    ("years", "years"),
];

/// Spellings of a vocabulary unit that a declaration may not use: it writes the symbol.
const UNIT_ALIASES: &[&str] = &["bytes", "byte", "us", "usec", "sec", "secs", "seconds"];

/// Whether `name` is `suffix` or ends in `_suffix`.
const fn ends_in_token(name: &[u8], suffix: &[u8]) -> bool {
    if name.len() < suffix.len() {
        return false;
    }
    let start = name.len() - suffix.len();
    let mut i = 0;
    while i < suffix.len() {
        if name[start + i] != suffix[i] {
            return false;
        }
        i += 1;
    }
    start == 0 || name[start - 1] == b'_'
}

/// The unit `name`'s suffix states ([`UNIT_SUFFIXES`]), if any.
pub const fn suffix_unit(name: &str) -> Option<&'static str> {
    let name = name.as_bytes();
    let mut best: Option<(usize, &'static str)> = None;
    let mut i = 0;
    while i < UNIT_SUFFIXES.len() {
        let (suffix, unit) = UNIT_SUFFIXES[i];
        if ends_in_token(name, suffix.as_bytes()) {
            best = match best {
                Some((len, _)) if len >= suffix.len() => best,
                _ => Some((suffix.len(), unit)),
            };
        }
        i += 1;
    }
    match best {
        Some((_, unit)) => Some(unit),
        None => None,
    }
}

/// The unit of key or column `name` declared with `declared`: its suffix's unit, or what was
/// declared. Evaluated at compile time by `params!` and `result_row!`, so a unit stated
/// twice (a suffix and a declaration) or spelled outside the vocabulary does not build.
pub const fn unit_of(name: &str, declared: &'static str) -> &'static str {
    if let Some(unit) = suffix_unit(name) {
        if !declared.is_empty() {
            panic!("the key's name states its unit (units::UNIT_SUFFIXES): declare it \"\"");
        }
        return unit;
    }
    let mut i = 0;
    while i < UNIT_ALIASES.len() {
        let alias = UNIT_ALIASES[i].as_bytes();
        if declared.len() == alias.len() && ends_in_token(declared.as_bytes(), alias) {
            panic!("write the unit's symbol from units::UNIT_SUFFIXES (B, µs, s)");
        }
        i += 1;
    }
    declared
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_gbps_moves_one_byte_per_ns() {
        assert_eq!(transfer_ns(4096, 1.0), 4096.0);
        assert!((gbps(2e9, 1e9) - 2.0).abs() < 1e-12);
        assert!((mib_per_s(MIB as f64, 1e9) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_name_states_its_unit_by_its_longest_suffix() {
        assert_eq!(unit_of("latency_ns", ""), "ns");
        assert_eq!(unit_of("bandwidth_gb_s", ""), "GB/s");
        assert_eq!(unit_of("elapsed_s", ""), "s");
        assert_eq!(unit_of("bytes", ""), "B");
        assert_eq!(unit_of("p99_us", ""), "µs");
        // A token inside a word is no suffix.
        assert_eq!(unit_of("iops", "1/s"), "1/s");
        assert_eq!(unit_of("threads", "threads"), "threads");
    }

    #[test]
    #[should_panic(expected = "states its unit")]
    fn a_unit_stated_twice_is_refused() {
        unit_of("latency_ns", "ns");
    }

    #[test]
    #[should_panic(expected = "symbol")]
    fn an_alias_of_a_vocabulary_unit_is_refused() {
        unit_of("quantum", "bytes");
    }
}
