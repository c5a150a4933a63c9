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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_gbps_moves_one_byte_per_ns() {
        assert_eq!(transfer_ns(4096, 1.0), 4096.0);
        assert!((gbps(2e9, 1e9) - 2.0).abs() < 1e-12);
        assert!((mib_per_s(MIB as f64, 1e9) - 1.0).abs() < 1e-12);
    }
}
