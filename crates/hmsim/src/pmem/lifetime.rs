//! Lifetime from the wear map: how long until the most-written line reaches the endurance
//! limit (without wear leveling; with the simulated AIT; with ideal leveling over the whole
//! module), and how much of the rated PBW an hour of the program consumes.

use serde::Serialize;

use super::system::PmemSystem;
use crate::units::SECONDS_PER_YEAR;

#[derive(Debug, Clone, Serialize)]
pub struct HotRange {
    pub start_addr: u64,
    pub bytes: u64,
    pub media_writes_64b: u64,
    pub share: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LifetimeReport {
    pub media_bytes_written: f64,
    pub media_write_rate_bytes_per_s: f64,
    /// Rated endurance of all the DIMMs, bytes.
    pub rated_bytes: f64,
    /// Full-module writes each line endures (rated bytes / capacity).
    pub line_endurance_writes: f64,
    /// Hottest logical 256 B line reaching its endurance with no wear leveling, years.
    pub years_no_wear_leveling: f64,
    /// Hottest physical line under the simulated AIT wear leveling, years.
    pub years_simulated_wear_leveling: f64,
    /// Writes spread perfectly over every line of every module (the rated-PBW view), years.
    pub years_ideal_wear_leveling: f64,
    /// Share of the rated PBW one hour of the program consumes.
    pub rated_fraction_per_hour: f64,
    pub hottest_ranges: Vec<HotRange>,
}

/// Years until `endurance_writes` at `writes` per `elapsed_s` (infinite without writes).
pub(crate) fn years(endurance_writes: f64, writes: f64, elapsed_s: f64) -> f64 {
    if writes <= 0.0 || elapsed_s <= 0.0 {
        f64::INFINITY
    } else {
        endurance_writes / (writes / elapsed_s) / SECONDS_PER_YEAR
    }
}

/// The lifetime a run that left `sys` after `elapsed_s` simulated seconds costs `dimms` DIMMs
/// of `capacity_bytes_per_dimm`, each rated for `rated_bytes_per_dimm` of writes: its media
/// writes, wear map and hottest `top_n` 4 KiB ranges.
pub(crate) fn of_run(
    sys: &PmemSystem,
    elapsed_s: f64,
    rated_bytes_per_dimm: f64,
    capacity_bytes_per_dimm: f64,
    dimms: u32,
    top_n: usize,
) -> LifetimeReport {
    let (physical, logical) = sys.max_line_wear();
    report(
        sys.counters().media_writes_64b,
        elapsed_s,
        rated_bytes_per_dimm,
        capacity_bytes_per_dimm,
        dimms,
        logical,
        physical,
        &sys.page_media_writes(),
        top_n,
    )
}

/// `pages`: media writes (64 B units) per 4 KiB page of the program's address space, as
/// (page, writes) with each page once.
#[allow(clippy::too_many_arguments)]
pub(crate) fn report(
    media_writes_64b: u64,
    elapsed_s: f64,
    rated_bytes_per_dimm: f64,
    capacity_bytes_per_dimm: f64,
    dimms: u32,
    max_logical_line_writes: u32,
    max_physical_line_writes: u32,
    pages: &[(u64, u64)],
    top_n: usize,
) -> LifetimeReport {
    let media_bytes = media_writes_64b as f64 * 64.0;
    let rated = rated_bytes_per_dimm * dimms as f64;
    let line_endurance = rated_bytes_per_dimm / capacity_bytes_per_dimm;
    let mut hot: Vec<(u64, u64)> = pages.to_vec();
    let total: u64 = hot.iter().map(|h| h.1).sum();
    let hottest_first = |a: &(u64, u64), b: &(u64, u64)| b.1.cmp(&a.1).then(a.0.cmp(&b.0));
    // Only the `top_n` hottest are reported: select them before sorting (a trace touching
    // millions of pages would otherwise sort them all).
    if top_n < hot.len() {
        hot.select_nth_unstable_by(top_n, hottest_first);
        hot.truncate(top_n);
    }
    hot.sort_unstable_by(hottest_first);
    LifetimeReport {
        media_bytes_written: media_bytes,
        media_write_rate_bytes_per_s: if elapsed_s > 0.0 {
            media_bytes / elapsed_s
        } else {
            0.0
        },
        rated_bytes: rated,
        line_endurance_writes: line_endurance,
        years_no_wear_leveling: years(line_endurance, max_logical_line_writes as f64, elapsed_s),
        years_simulated_wear_leveling: years(
            line_endurance,
            max_physical_line_writes as f64,
            elapsed_s,
        ),
        years_ideal_wear_leveling: years(rated, media_bytes, elapsed_s),
        rated_fraction_per_hour: if elapsed_s > 0.0 {
            media_bytes / elapsed_s * 3600.0 / rated
        } else {
            0.0
        },
        hottest_ranges: hot
            .into_iter()
            .take(top_n)
            .map(|(p, w)| HotRange {
                start_addr: p << 12,
                bytes: 4096,
                media_writes_64b: w,
                share: w as f64 / total.max(1) as f64,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_written_once_per_second_lasts_its_endurance_in_seconds() {
        let pages = [];
        // 1e6-write endurance; hottest line written 10 times in 10 s.
        let r = report(40, 10.0, 1e6 * 1024.0, 1024.0, 1, 10, 10, &pages, 5);
        assert!((r.years_no_wear_leveling * SECONDS_PER_YEAR - 1e6).abs() < 1e-3);
        assert!(
            (r.years_ideal_wear_leveling * SECONDS_PER_YEAR - 1e6 * 1024.0 / 256.0).abs() < 1e-3
        );
    }
}
