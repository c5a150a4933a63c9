//! PMem as the alternate tier (docs/tiering.md, *PMem as the alternate tier*): the tiering run's
//! writes into the PMem tier — pages copied in by migrations and the application's write-backs — go
//! through the PMem write path (`crate::pmem`: WPQ → XPBuffer → AIT → media) for media writes,
//! write amplification and lifetime.
//!
//! Statistical mode knows only write volumes per quantum, so each quantum drives the path with
//! a scaled, representative sample and the counters are weighted back up by real lines per
//! simulated line of each stream (approximations, documented in docs/tiering.md). The two
//! streams run through separate instances of the path, so each one's WA is its own:
//! - a migration copies its page as sequential 64 B writes; a sample of `chunk_bytes` (4 KiB)
//!   chunks of the quantum's migrated-in pages is copied, weighted by all chunks / copied;
//! - an application write is a 64 B dirty line leaving the CPU cache by eviction, at a random
//!   line of a page of the PMem tier drawn from the workload's access distribution; a sample
//!   of the quantum's written lines is written, weighted by all lines / written.
//!
//! Page `p` lives at PMem address `p × page_bytes` (modulo the tier's capacity): frames are
//! not modelled.

use std::ops::Range;

use rand::Rng;

use super::pmem_halves::WindowHalves;
use super::sim::{QuantumObserver, QuantumView};
use crate::cache::{MemorySink, WriteCause};
use crate::columns::{counter_index, Derived, ResultRow, Scaled};
use crate::config::Validator;
use crate::error::RunError;
use crate::hash::FastMap;
use crate::pmem::{lifetime, DimmSpec, PmemConfig, PmemCounters, PmemSystem};
use crate::result_row;
use crate::rng::{self, SimRng};
use crate::scenario::Ctx;

crate::params! {
    #[params(check)]
    /// `[pmem_tier]`: which tier is PMem, the path's parameters and the sample size.
    #[derive(Debug, Clone)]
    pub struct PmemTierSpec {
        pub tier: usize = 1 => any, "",
            "Index of the PMem tier in `tiers` (the alternate tier by default); 1 to the last tier.";
        pub app_lines_per_quantum: u64 = 100 => range(1, 1 << 24), "lines",
            "Application write lines simulated per quantum (the rest is extrapolated).";
        pub chunks_per_quantum: u64 = 4 => range(1, 1 << 20), "chunks",
            "Migrated chunks copied per quantum (the rest is extrapolated).";
        pub chunk_bytes: u64 = 4096 => range(256, 2 << 20), "",
            "Unit of a migration sample: a sequential run of this many bytes of a migrated page; a power of two.";
        pub address_window_bytes: u64 = 256 << 20 => range(1 << 20, 1 << 44), "",
            "Sampled addresses are folded into this window, a multiple of 2 MiB: the wear map grows with the address space touched, and the sample is too sparse for folding to create XPBuffer hits (256 MiB holds 1 M XPLines against 64 buffered per DIMM).";
        pub path: PmemConfig = PmemConfig::default() => nested, "",
            "The PMem write path (device, DIMMs, XPBuffer, AIT); the pmem module's defaults (docs/pmem.md).";
    }
}

impl PmemTierSpec {
    fn check(&self, v: &mut Validator) {
        if !self.chunk_bytes.is_power_of_two() {
            // A power of two divides both page sizes, so a page is a whole number of chunks.
            v.fail(
                "chunk_bytes",
                format!("{} is not a power of two", self.chunk_bytes),
            );
        }
        if !self.address_window_bytes.is_multiple_of(2 << 20) {
            v.fail(
                "address_window_bytes",
                format!(
                    "{} is not a multiple of 2 MiB (whole pages)",
                    self.address_window_bytes
                ),
            );
        }
    }
}

/// Rated bytes and DIMM layout of the configured device, a catalog memory device with an
/// endurance rating.
pub(super) fn dimm_of(spec: &PmemTierSpec, ctx: &Ctx) -> Result<(DimmSpec, f64), RunError> {
    let (dev, rated) =
        ctx.memory_device_with_endurance(&spec.path.device, "pmem_tier.path.device")?;
    Ok((DimmSpec::from_rating(dev.capacity_bytes, rated), rated))
}

/// One write stream (migration copies or application write-backs) through its own PMem path.
struct Stream {
    sys: PmemSystem,
    /// Lines written into the model, and the real lines they stand for.
    simulated_lines: u64,
    real_lines: f64,
}

impl Stream {
    fn new(spec: &PmemTierSpec, dimm: DimmSpec, seed: u64) -> Stream {
        Stream {
            sys: PmemSystem::new(
                &spec.path,
                dimm.capacity_bytes,
                dimm.line_endurance_writes,
                seed,
            ),
            simulated_lines: 0,
            real_lines: 0.0,
        }
    }

    fn write(&mut self, line: u64, cause: WriteCause) {
        self.sys.mem_write(line, 0, cause);
        self.simulated_lines += 1;
    }

    /// Real lines per simulated line: one weight per stream over the run, so a write's media
    /// effect counts the same whichever quantum the XPBuffer evicts it in.
    fn weight(&self) -> f64 {
        if self.simulated_lines == 0 {
            0.0
        } else {
            self.real_lines / self.simulated_lines as f64
        }
    }

    /// Where the stream stands: the mark a window's writes are counted from.
    fn mark(&self) -> StreamMark {
        StreamMark {
            real_lines: self.real_lines,
            simulated_lines: self.simulated_lines,
            media_writes_64b: self.sys.counters().media_writes_64b,
        }
    }

    /// Real media writes (64 B units) since `from`: the real lines written since then at
    /// the write amplification of the lines simulated since then (a window's own pattern:
    /// the run's weight would spread the copies of its first seconds over the window).
    fn media_since(&self, from: &StreamMark) -> f64 {
        let now = self.mark();
        let simulated = now.simulated_lines - from.simulated_lines;
        if simulated == 0 {
            return 0.0;
        }
        let wa = (now.media_writes_64b - from.media_writes_64b) as f64 / simulated as f64;
        (now.real_lines - from.real_lines) * wa
    }

    /// A counter of the stream extrapolated to the real lines: one stream's part of a scaled
    /// column of [`PmemColumns`] (the column's declaration names the counter).
    fn scaled<const I: usize>(&self) -> Derived<PmemCounters, Scaled, I> {
        Derived::of(&self.sys.counters(), self.weight())
    }
}

/// A stream's counts at the start of the measured window.
#[derive(Debug, Clone, Copy)]
struct StreamMark {
    real_lines: f64,
    simulated_lines: u64,
    media_writes_64b: u64,
}

/// The feeder's counts at the start of the measured window: the lifetimes extrapolate the
/// window's write rate, not the run's.
#[derive(Debug, Clone, Copy)]
struct WindowMark {
    migration: StreamMark,
    app: StreamMark,
    hottest_app_xpline_requests: f64,
    settled_app_xpline_requests: f64,
}

/// A lifetime for a message: years from one year on, else days.
fn years_or_days(years: f64) -> String {
    if !years.is_finite() {
        "never".to_string()
    } else if years >= 1.0 {
        format!("{years:.2} years")
    } else {
        format!("{:.1} days", years * 365.25)
    }
}

/// The scaled write requests and media writes (a stream's or both), typed by their counter:
/// they feed the write amplification and the lifetime as well as their own columns.
type Requests =
    Derived<PmemCounters, Scaled, { counter_index(PmemCounters::COLUMNS, "write_requests") }>;
type MediaWrites =
    Derived<PmemCounters, Scaled, { counter_index(PmemCounters::COLUMNS, "media_writes_64b") }>;

result_row! {
    /// The PMem write path's result columns for one tiering run.
    pub struct PmemColumns {
        pmem_migrated_bytes: u64 ["", "bytes copied into the PMem tier by migrations"],
        pmem_app_write_bytes: f64 ["", "bytes the application wrote back to the PMem tier"],
        pmem_unsampled_write_bytes: f64 ["", "application write bytes of quanta where no page of the tier was drawn (not simulated)"],
        pmem_write_requests: [Scaled(PmemCounters::write_requests), prefix "pmem_"],
        pmem_media_writes_64b: [Scaled(PmemCounters::media_writes_64b), prefix "pmem_"],
        pmem_write_amplification: Option<f64> ["", "media writes / write requests (empty without writes)"],
        pmem_wa_migration: Option<f64> ["", "write amplification of migration copies"],
        pmem_wa_app: Option<f64> ["", "write amplification of application write-backs"],
        // Renamed for the AIT that moves the blocks: the tiering row's `migrations` are pages.
        pmem_ait_migrations: [Scaled(PmemCounters::migrations as ait_migrations), prefix "pmem_"],
        pmem_sampled_write_requests: u64 ["", "write requests simulated line by line"],
        pmem_lifetime_years: f64 ["", "lifetime with ideal wear leveling, at the measured window's media write rate"],
        pmem_hottest_xpline_media_writes: f64 ["", "media writes to the most written XPLine over the run"],
        pmem_lifetime_years_no_wl: f64 ["years", "lifetime without wear leveling (the XPLine most written in the measured window decides, counting the copies that recur between its halves; empty if infinite)"],
        pmem_rated_fraction_per_hour: f64 ["", "share of the rated bytes written per hour, at the measured window's rate"],
        pmem_window_media_write_gb_s: f64 ["", "media write rate in the measured window (the lifetimes' rate; the run's volumes include its one-off placement copies)"],
    }
}

/// Feeds a tiering run's writes into the PMem tier through the PMem path.
pub(super) struct PmemFeeder {
    spec: PmemTierSpec,
    dimm: DimmSpec,
    rated_bytes: f64,
    rng: SimRng,
    window_lines: u64,
    chunks: Vec<(u64, u64)>,
    migration: Stream,
    app: Stream,
    /// Real bytes written into the tier (conservation: requests × 64 = these − unsampled).
    pub migrated_bytes: u64,
    pub app_write_bytes: f64,
    /// App write bytes of quanta where no page of the tier was drawn (not simulated).
    pub unsampled_bytes: f64,
    /// Copies into PMem per page: each writes every XPLine of the page once.
    copies: FastMap<u64, u32>,
    /// Expected write requests to one XPLine of the tier's most accessed page, summed; and
    /// the same had no hot page been on the tier (the placement settled).
    hottest_app_xpline_requests: f64,
    settled_app_xpline_requests: f64,
    /// The measured window's quanta, the counts at its start, and its halves' copies and
    /// hot pages.
    window: Range<u64>,
    at_window: Option<WindowMark>,
    halves: WindowHalves,
    /// The window's simulated seconds so far.
    window_s: f64,
}

impl PmemFeeder {
    pub(super) fn new(
        spec: &PmemTierSpec,
        dimm: DimmSpec,
        rated_bytes: f64,
        seed: u64,
        window: Range<u64>,
    ) -> PmemFeeder {
        PmemFeeder {
            spec: spec.clone(),
            dimm,
            rated_bytes,
            rng: rng::stream(seed, "tier.pmem"),
            window_lines: (dimm.capacity_bytes * spec.path.dimms as u64)
                .min(spec.address_window_bytes)
                / 64,
            chunks: Vec::new(),
            migration: Stream::new(spec, dimm, seed),
            app: Stream::new(spec, dimm, seed.wrapping_add(1)),
            migrated_bytes: 0,
            app_write_bytes: 0.0,
            unsampled_bytes: 0.0,
            copies: FastMap::default(),
            hottest_app_xpline_requests: 0.0,
            settled_app_xpline_requests: 0.0,
            halves: WindowHalves::new(window.clone()),
            window,
            at_window: None,
            window_s: 0.0,
        }
    }

    fn migrations(&mut self, v: &QuantumView) {
        let page_bytes = v.pages.page_bytes;
        let chunk = self.spec.chunk_bytes.min(page_bytes);
        let per_page = page_bytes / chunk;
        self.chunks.clear();
        for &(page, _, to) in v.moved {
            if to == self.spec.tier {
                self.migrated_bytes += page_bytes;
                *self.copies.entry(page).or_insert(0) += 1;
                for c in 0..per_page {
                    self.chunks.push((page, c));
                }
            }
        }
        let all = self.chunks.len();
        if all == 0 {
            return;
        }
        let take = all.min(self.spec.chunks_per_quantum as usize);
        // Partial Fisher-Yates: `take` distinct chunks, deterministic from the stream.
        for i in 0..take {
            let j = self.rng.random_range(i..all);
            self.chunks.swap(i, j);
        }
        self.migration.real_lines += (all as u64 * chunk / 64) as f64;
        for i in 0..take {
            let (page, c) = self.chunks[i];
            let first = (page * page_bytes + c * chunk) / 64 % self.window_lines;
            for l in 0..chunk / 64 {
                self.migration.write(first + l, WriteCause::NonTemporal);
            }
        }
    }

    fn app_writes(&mut self, v: &QuantumView) {
        let lines = v
            .app_write_lines
            .get(self.spec.tier)
            .copied()
            .unwrap_or(0.0);
        if lines <= 0.0 {
            return;
        }
        self.app_write_bytes += lines * 64.0;
        // The most accessed page on the tier: a hot page if any is there, else a cold one;
        // its share of the tier's writes, spread over its XPLines.
        let t = self.spec.tier;
        let g = v.gups;
        let cold =
            (1.0 - if g.hot_pages > 0 {
                g.spec.hot_fraction
            } else {
                0.0
            }) / g.pages as f64;
        let p_max = if v.hot_pages.get(t).copied().unwrap_or(0) > 0 {
            g.page_probability(g.hot_start)
        } else {
            cold
        };
        let share = v.tier_shares.get(t).copied().unwrap_or(0.0);
        if share > 0.0 {
            let xplines = (v.pages.page_bytes / 256) as f64;
            self.hottest_app_xpline_requests += lines * (p_max / share).min(1.0) / xplines;
            self.settled_app_xpline_requests += lines * (cold / share).min(1.0) / xplines;
        }
        let want = (self.spec.app_lines_per_quantum as f64).min(lines.ceil()) as usize;
        let page_lines = v.pages.page_bytes / 64;
        let mut drawn: Vec<u64> = Vec::with_capacity(want);
        let mut pages = Vec::new();
        // Rejection sampling of the workload's pages that live in the PMem tier; a tier that
        // gets a sliver of the traffic is given up on after 64 × `want` draws.
        for _ in 0..64 {
            pages.clear();
            v.gups.sample_pages(want as u64, &mut self.rng, &mut pages);
            drawn.extend(
                pages
                    .iter()
                    .filter(|&&p| v.pages.tier(p) == self.spec.tier)
                    .take(want - drawn.len()),
            );
            if drawn.len() == want {
                break;
            }
        }
        if drawn.is_empty() {
            self.unsampled_bytes += lines * 64.0;
            return;
        }
        self.app.real_lines += lines;
        for &p in &drawn {
            let line = p * page_lines + self.rng.random_range(0..page_lines);
            self.app
                .write(line % self.window_lines, WriteCause::Eviction);
        }
    }

    /// The result columns for a run of `duration_s`: volumes and write amplification over
    /// the run, lifetimes at the measured window's rate (the run's when it had no window).
    pub(super) fn columns(&self, duration_s: f64) -> PmemColumns {
        // Each stream's counters scaled by its own weight; a column is the two streams summed.
        let (mig, app) = (&self.migration, &self.app);
        let (mreq, areq): (Requests, Requests) = (mig.scaled(), app.scaled());
        let (mmedia, amedia): (MediaWrites, MediaWrites) = (mig.scaled(), app.scaled());
        let (req, media) = ((mreq + areq).value(), (mmedia + amedia).value());
        let (mreq, areq, mmedia, amedia) =
            (mreq.value(), areq.value(), mmedia.value(), amedia.value());
        let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        let wa_app = self.wa_app();
        // Without wear leveling the most written XPLine decides. A sparse sample cannot show
        // it, so it is computed: the most copied page gives each of its XPLines one media
        // write per copy; the tier's most accessed page gets its share of the app's write
        // requests, each a media write of its XPLine at the app stream's WA / 4 (both on
        // the same line: an upper bound).
        let hottest = self.copies.values().copied().max().unwrap_or(0) as f64
            + self.hottest_app_xpline_requests * wa_app / 4.0;
        // The lifetimes' rates: the window's writes over its seconds. The first seconds'
        // placement copies happen once in a program's life; extrapolated with the run, they
        // would make the lifetime depend on the run's length. For the hottest XPLine only
        // copies that recur count (one copy in a window is not a rate: pmem_halves.rs).
        let (rate_media, rate_s, hottest_per_s) = match self.window_rates(wa_app) {
            Some((media, hottest)) => (media, self.window_s, hottest),
            None => (media, duration_s, hottest / duration_s),
        };
        let life = lifetime::report(
            rate_media.round() as u64,
            rate_s,
            self.rated_bytes,
            self.dimm.capacity_bytes as f64,
            self.spec.path.dimms,
            0,
            0,
            &[],
            0,
        );
        let years_no_wl = self.no_wl_years(hottest_per_s);
        PmemColumns {
            pmem_migrated_bytes: self.migrated_bytes,
            pmem_app_write_bytes: self.app_write_bytes,
            pmem_unsampled_write_bytes: self.unsampled_bytes,
            pmem_write_requests: mig.scaled() + app.scaled(),
            pmem_media_writes_64b: mig.scaled() + app.scaled(),
            pmem_write_amplification: ratio(media, req),
            pmem_wa_migration: ratio(mmedia, mreq),
            pmem_wa_app: ratio(amedia, areq),
            pmem_ait_migrations: mig.scaled() + app.scaled(),
            pmem_sampled_write_requests: self.migration.simulated_lines + self.app.simulated_lines,
            pmem_lifetime_years: life.years_ideal_wear_leveling,
            pmem_hottest_xpline_media_writes: hottest,
            pmem_lifetime_years_no_wl: years_no_wl,
            pmem_rated_fraction_per_hour: life.rated_fraction_per_hour,
            pmem_window_media_write_gb_s: if rate_s > 0.0 {
                rate_media * 64.0 / rate_s / 1e9
            } else {
                0.0
            },
        }
    }
    /// The application stream's write amplification (0 without writes).
    fn wa_app(&self) -> f64 {
        let (req, media): (Requests, MediaWrites) = (self.app.scaled(), self.app.scaled());
        let req = req.value();
        if req > 0.0 {
            media.value() / req
        } else {
            0.0
        }
    }

    /// The measured window's media writes and its hottest XPLine's writes per second (none
    /// without a whole window): copies that recur into one page, and the app's share.
    fn window_rates(&self, wa_app: f64) -> Option<(f64, f64)> {
        let w = self.at_window.as_ref()?;
        if self.window_s <= 0.0 || !self.halves.complete() {
            return None;
        }
        let media = self.migration.media_since(&w.migration) + self.app.media_since(&w.app);
        let app = self.hottest_app_xpline_requests - w.hottest_app_xpline_requests;
        let hottest = self.halves.recurring_copies_per_s() + self.xpline_writes_per_s(app, wa_app);
        Some((media, hottest))
    }

    /// One XPLine's media writes per second in the window from `requests` app write requests
    /// to it, each `wa_app / 4` XPLine writes.
    fn xpline_writes_per_s(&self, requests: f64, wa_app: f64) -> f64 {
        requests * wa_app / 4.0 / self.window_s
    }

    /// Years until an XPLine written `per_s` times a second reaches its endurance.
    fn no_wl_years(&self, per_s: f64) -> f64 {
        if per_s > 0.0 {
            self.dimm.line_endurance_writes as f64 / per_s / crate::units::SECONDS_PER_YEAR
        } else {
            f64::INFINITY
        }
    }

    /// Whether the hot pages on the tier were still moving across the measured window (the
    /// no-WL lifetime is then a transient).
    pub(super) fn placing(&self) -> bool {
        self.halves.hot_pages_moving()
    }

    /// The warning for a no-WL lifetime that rests on hot pages still coming into or leaving
    /// the tier in a window whose throughput may be steady, or none.
    pub(super) fn warning(&self, who: &str) -> Option<String> {
        if !self.placing() {
            return None;
        }
        let wa_app = self.wa_app();
        let (_, hottest) = self.window_rates(wa_app)?;
        let w = self.at_window.as_ref()?;
        // The same rate had a cold page been the tier's most accessed in every quantum.
        let cold_instead = (self.settled_app_xpline_requests - w.settled_app_xpline_requests)
            - (self.hottest_app_xpline_requests - w.hottest_app_xpline_requests);
        let settled = hottest + self.xpline_writes_per_s(cold_instead, wa_app);
        let [first, second] = self.halves.hot_pages_per_half();
        let leaving = if second < first {
            format!(
                "; once none is left it would be {}",
                years_or_days(self.no_wl_years(settled))
            )
        } else {
            String::new()
        };
        Some(format!(
            "{who}: pmem_lifetime_years_no_wl ({}) is a transient: the hot pages in the PMem \
             tier went from {first:.1} to {second:.1} on average between the measured window's \
             halves, so the policy is still moving them, and while one is there its XPLines \
             are the most written{leaving}. To fix: lengthen sim.duration_s, or set \
             sim.until_steady = true, which goes on until the hot pages settle (up to \
             sim.max_duration_s)",
            years_or_days(self.no_wl_years(hottest)),
        ))
    }
}

impl QuantumObserver for PmemFeeder {
    fn quantum(&mut self, v: &QuantumView) {
        let now = (v.quantum + 1) as f64 * v.quantum_s * 1e9;
        // Every request of a quantum arrives at its end, so none comes before it.
        for sys in [&mut self.migration.sys, &mut self.app.sys] {
            sys.now_ns = now;
            sys.floor_ns = now;
        }
        if v.quantum == self.window.start {
            self.at_window = Some(WindowMark {
                migration: self.migration.mark(),
                app: self.app.mark(),
                hottest_app_xpline_requests: self.hottest_app_xpline_requests,
                settled_app_xpline_requests: self.settled_app_xpline_requests,
            });
        }
        if self.at_window.is_some() {
            self.window_s += v.quantum_s;
        }
        let t = self.spec.tier;
        let copied = v.moved.iter().filter(|m| m.2 == t).map(|m| m.0);
        let hot = v.hot_pages.get(t).copied().unwrap_or(0);
        self.halves.quantum(v.quantum, v.quantum_s, hot, copied);
        self.migrations(v);
        self.app_writes(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columns::{Counters, Derivation};
    use crate::tier::{Gups, GupsSpec, PageTable};

    /// A feeder whose window starts at quantum `window_from`, on 1 GiB DIMMs of 1000 writes
    /// per line, and `copies` quanta of 0.5 s, the pages of each copied into PMem (tier 1 of
    /// a 64-page table); no application writes.
    fn fed(window_from: u64, copies: &[Vec<u64>]) -> PmemFeeder {
        fed_hot(window_from, copies, &vec![8; copies.len()])
    }

    /// [`fed`], with `hot[q]` hot pages on the PMem tier in quantum `q`.
    fn fed_hot(window_from: u64, copies: &[Vec<u64>], hot: &[u64]) -> PmemFeeder {
        let spec: PmemTierSpec = toml::from_str("").unwrap();
        let dimm = DimmSpec {
            capacity_bytes: 1 << 30,
            line_endurance_writes: 1000,
        };
        let window = window_from..copies.len() as u64;
        let mut f = PmemFeeder::new(&spec, dimm, 1e12, 1, window);
        let gups = Gups::new(
            &GupsSpec {
                working_set_bytes: 64 << 12,
                hot_set_bytes: 8 << 12,
                ..Default::default()
            },
            4096,
        );
        let pt = PageTable::first_touch(64, 4096, &[32 << 12, 64 << 12]).unwrap();
        for (q, pages) in copies.iter().enumerate() {
            let moved: Vec<(u64, usize, usize)> = pages.iter().map(|&p| (p, 0, 1)).collect();
            f.quantum(&QuantumView {
                quantum: q as u64,
                quantum_s: 0.5,
                pages: &pt,
                gups: &gups,
                moved: &moved,
                app_write_lines: &[0.0, 0.0],
                tier_shares: &[0.5, 0.5],
                hot_pages: &[8 - hot[q], hot[q]],
            });
        }
        f
    }

    #[test]
    fn copies_are_written_whole_and_the_most_copied_page_sets_the_no_wl_lifetime() {
        // Page 3 is copied into PMem twice, page 5 once; no application writes.
        let f = fed(u64::MAX, &[vec![3, 5], vec![3]]);
        let cols = crate::scenario::to_map(&f.columns(1.0));
        let num = |k: &str| cols[k].as_f64().unwrap();
        // A scaled column: each stream's counter times the stream's weight, summed.
        for (col, k) in [
            ("pmem_write_requests", "write_requests"),
            ("pmem_media_writes_64b", "media_writes_64b"),
            ("pmem_ait_migrations", "migrations"),
        ] {
            let i = counter_index(PmemCounters::COLUMNS, k);
            let scaled = |s: &Stream| s.sys.counters().counter(i) as f64 * s.weight();
            assert_eq!(num(col), scaled(&f.migration) + scaled(&f.app), "{col}");
        }
        assert_eq!(num("pmem_migrated_bytes"), 3.0 * 4096.0);
        assert_eq!(num("pmem_write_requests"), 3.0 * 64.0);
        // 64 sequential lines fill 16 XPLines, each one 256 B media write (4 units).
        assert_eq!(num("pmem_media_writes_64b"), 3.0 * 64.0);
        assert_eq!(num("pmem_hottest_xpline_media_writes"), 2.0);
        let years = 1000.0 / 2.0 / crate::units::SECONDS_PER_YEAR;
        assert!((num("pmem_lifetime_years_no_wl") / years - 1.0).abs() < 1e-12);
    }

    /// The lifetimes extrapolate the measured window's writes over its seconds: a burst of
    /// placement copies before it counts in the run's volumes, not in its lifetimes.
    #[test]
    fn the_lifetimes_are_the_measured_windows_rate() {
        // Quanta 0 and 1: ten pages copied in, page 3 twice; the window (quanta 2 and 3, 1 s):
        // page 7 copied in each quantum.
        let burst: Vec<u64> = (0..10).chain([3]).collect();
        let copies = [burst.clone(), burst, vec![7], vec![7]];
        let run = |window_from| crate::scenario::to_map(&fed(window_from, &copies).columns(2.0));
        let num = |m: &serde_json::Map<String, serde_json::Value>, k: &str| m[k].as_f64().unwrap();
        let (window, whole) = (run(2), run(u64::MAX));
        // The run's volumes do not depend on the window: 24 copies of 64 lines.
        for k in [
            "pmem_migrated_bytes",
            "pmem_write_requests",
            "pmem_media_writes_64b",
        ] {
            assert_eq!(num(&window, k), num(&whole, k), "{k}");
        }
        assert_eq!(num(&window, "pmem_migrated_bytes"), 24.0 * 4096.0);
        // Pages 3 and 7, copied four times each, are the run's most written; in the window
        // page 7 is, copied in each half (0.5 s) again: 1000 writes' endurance lasts 500 s.
        assert_eq!(num(&window, "pmem_hottest_xpline_media_writes"), 4.0);
        let years = |s: f64| s / crate::units::SECONDS_PER_YEAR;
        let no_wl = num(&window, "pmem_lifetime_years_no_wl");
        assert!((no_wl / years(500.0) - 1.0).abs() < 1e-12, "{no_wl}");
        // Without a window, the run's: four copies in 2 s.
        let no_wl = num(&whole, "pmem_lifetime_years_no_wl");
        assert!((no_wl / years(500.0) - 1.0).abs() < 1e-12, "{no_wl}");
        // The window's media write rate: two copies of 64 lines (64 B each) in 1 s; the
        // run's, 24 copies in 2 s.
        assert_eq!(
            num(&window, "pmem_window_media_write_gb_s"),
            2.0 * 64.0 * 64.0 / 1e9
        );
        assert_eq!(
            num(&whole, "pmem_window_media_write_gb_s"),
            24.0 * 64.0 * 64.0 / 2.0 / 1e9
        );
        // Ideal wear leveling: 2 of the 24 copies' media writes in half the run's time, a
        // sixth of the run's rate: six times its lifetime.
        let ratio = num(&window, "pmem_lifetime_years") / num(&whole, "pmem_lifetime_years");
        assert!((ratio - 6.0).abs() < 1e-9, "{ratio}");
        let ratio = num(&whole, "pmem_rated_fraction_per_hour")
            / num(&window, "pmem_rated_fraction_per_hour");
        assert!((ratio - 6.0).abs() < 1e-9, "{ratio}");
    }

    /// A page copied once in the window is a placement's copy, not a rate: the lifetime
    /// without wear leveling counts the copies that recur between the window's halves, and
    /// says when hot pages are still moving through the tier.
    #[test]
    fn one_off_copies_do_not_set_the_no_wl_lifetime() {
        let copies = [vec![1], vec![1], vec![2, 3], vec![4], vec![5], vec![6]];
        let cols = |f: &PmemFeeder| crate::scenario::to_map(&f.columns(3.0));
        // The window (quanta 2..6, 2 s): six pages copied once each; none recurs.
        let f = fed(2, &copies);
        assert!(
            cols(&f)["pmem_lifetime_years_no_wl"].is_null(),
            "{:?}",
            cols(&f)
        );
        assert_eq!(f.warning("x"), None);
        // Page 1's two copies come before it: they count in the run's hottest XPLine only.
        assert_eq!(
            cols(&f)["pmem_hottest_xpline_media_writes"].as_f64(),
            Some(2.0)
        );
        // Hot pages on the tier falling from 8 to 2 across the window: a transient.
        let f = fed_hot(2, &copies, &[8, 8, 8, 6, 3, 2]);
        let w = f.warning("hemem at intensity 3×").expect("a warning");
        assert!(w.contains("from 7.0 to 2.5"), "{w}");
        assert!(w.contains("lengthen sim.duration_s"), "{w}");
        // Steady at 4 hot pages: none.
        assert_eq!(fed_hot(2, &copies, &[8, 8, 4, 4, 4, 4]).warning("x"), None);
    }

    #[test]
    fn the_scaled_columns_are_the_pmem_counters_declarations() {
        for (col, k) in [
            ("pmem_write_requests", "write_requests"),
            ("pmem_media_writes_64b", "media_writes_64b"),
            ("pmem_ait_migrations", "migrations"),
        ] {
            let counter = PmemCounters::COLUMNS[counter_index(PmemCounters::COLUMNS, k)];
            let c = PmemColumns::COLUMNS.iter().find(|c| c.name == col).unwrap();
            assert_eq!(c.unit, format!("{}{}", counter.unit, Scaled::UNIT_SUFFIX));
            assert_eq!(c.doc, format!("{}{}", counter.doc, Scaled::DOC_SUFFIX));
        }
    }
}
