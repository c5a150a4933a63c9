//! Host-memory bounds. A scenario whose keys are inside their documented ranges can still ask
//! for more memory than the machine has (a billion-record index, a petabyte of 4 KiB pages):
//! allocating it aborts the process. Before allocating, a module estimates what its
//! configuration needs (a lower bound from the sizes of the structures it will allocate) and
//! refuses one beyond what this machine has available, unless `HMSIM_ALLOW_LARGE=1` is set.

/// Environment variable that turns the refusal off (`1`, `true` or `yes`).
pub const ALLOW_LARGE_ENV: &str = "HMSIM_ALLOW_LARGE";

/// Bytes of memory this machine has available: `MemAvailable` of `/proc/meminfo` (else
/// `MemTotal`); `None` where it cannot be read (then nothing is refused).
pub fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo_field(&text, "MemAvailable:").or_else(|| meminfo_field(&text, "MemTotal:"))
}

fn meminfo_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let mut words = line[name.len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    let unit = match words.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    Some(n.saturating_mul(unit))
}

/// Whether `HMSIM_ALLOW_LARGE` asks to try configurations beyond the machine's memory.
pub fn large_allowed() -> bool {
    std::env::var(ALLOW_LARGE_ENV)
        .map(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
        .unwrap_or(false)
}

/// `Err` with a one-line message when `need` bytes (an estimate) exceed what this machine has
/// available; `what` says what needs it, `detail` what drives it: "`{what}` needs about 206 GB
/// of host memory{detail}; this machine has …".
pub fn check_host_memory(need: u64, what: &str, detail: &str) -> Result<(), String> {
    if large_allowed() {
        return Ok(());
    }
    check_against(need, available_memory_bytes(), what, detail)
}

/// [`check_host_memory`] against `available` bytes (`None`: unknown, nothing refused).
pub fn check_against(
    need: u64,
    available: Option<u64>,
    what: &str,
    detail: &str,
) -> Result<(), String> {
    match available {
        Some(avail) if need > avail => Err(format!(
            "{what} needs about {} of host memory{detail}; this machine has {} available \
             (set {ALLOW_LARGE_ENV}=1 to try anyway)",
            human_bytes(need),
            human_bytes(avail)
        )),
        _ => Ok(()),
    }
}

/// Bytes in decimal units, rounded (`206 GB`, `1.5 MB`).
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 7] = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1000.0 && i + 1 < UNITS.len() {
        v /= 1000.0;
        i += 1;
    }
    if i == 0 || v >= 10.0 {
        format!("{v:.0} {}", UNITS[i])
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_beyond_the_available_memory_and_reads_meminfo() {
        let e = check_against(
            206_000_000_000,
            Some(21_000_000_000),
            "the index",
            " for 4 keys",
        )
        .unwrap_err();
        assert!(
            e.contains("the index needs about 206 GB of host memory for 4 keys"),
            "{e}"
        );
        assert!(
            e.contains("21 GB available") && e.contains(ALLOW_LARGE_ENV),
            "{e}"
        );
        assert!(check_against(1 << 20, Some(1 << 30), "x", "").is_ok());
        assert!(check_against(u64::MAX, None, "x", "").is_ok());
        let text = "MemTotal:       32000000 kB\nMemAvailable:   21000000 kB\n";
        assert_eq!(
            meminfo_field(text, "MemAvailable:"),
            Some(21_000_000 * 1024)
        );
        assert_eq!(human_bytes(1_500_000), "1.5 MB");
        if std::path::Path::new("/proc/meminfo").exists() {
            assert!(available_memory_bytes().is_some_and(|b| b > 0));
        }
    }
}
