//! GUPS in statistical mode: accesses per quantum are drawn in aggregate from the hot/cold
//! split, and observed only through PEBS-like samples.

use rand::Rng;

use crate::cache::filter::TraceCacheModel;
use crate::config::Validator;
use crate::rng::SimRng;

use super::pages::PageTable;
use super::LINE_BYTES;

crate::params! {
    #[params(check)]
    /// The workload: GUPS (defaults: the Colloid paper's setup), a trace, or an application
    /// analog's generated stream.
    #[derive(Debug, Clone, PartialEq)]
    pub struct GupsSpec {
        pub cores: u32 = 15 => range(1, 4096), "", "GUPS cores (Colloid setup: 15).";
        pub mlp: f64 = super::params::GUPS_MLP => range(0.1, 64.0), "reads in flight",
            "Reads in flight per core; fitted to GUPS alone moving 78–80 GB/s (docs/tiering.md, *Calibration*).";
        pub working_set_bytes: u64 = 72 << 30 => range(1 << 20, 1 << 50), "",
            "Working set (Colloid setup: 72 GiB).";
        pub hot_set_bytes: u64 = 24 << 30 => any, "",
            "Hot set inside the working set (Colloid setup: 24 GiB); 0 to working_set_bytes.";
        pub hot_fraction: f64 = 0.9 => fraction, "",
            "Share of updates to the hot set (Colloid setup: 90 %).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub hot_offset_bytes: Option<u64> = None => any, "",
            "Where the hot set starts in the working set; default: its end.";
        pub object_size_bytes: u64 = 64 => range(8, 1 << 21), "",
            "Bytes of one update (Colloid setup: a 64 B load + store).";
        pub read_fraction: f64 = 0.5 => range(0.05, 1.0), "",
            "Fraction of line traffic that is reads (load + store of each line: 0.5).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub hot_move_s: Option<f64> = None => non_negative, "",
            "Time at which the hot set moves to the start of the working set (the convergence figure, fig. 4 in docs/tiering.md: 100 s).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub trace: Option<String> = None => any, "",
            "Trace-driven mode: replay this trace (any format `hmsim trace` reads; relative to the scenario file) instead of GUPS; `cores`, `mlp`, `object_size_bytes` and `read_fraction` still set the demand.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub app: Option<String> = None => any, "",
            "Trace-driven mode on an application analog's generated stream; it sets the working set, object size, read fraction and the default tier's capacity.";
        pub scale: f64 = 1.0 => range(1e-4, 1.0), "of the app's full size",
            "Size factor for `app` (1 = the Colloid paper's sizes; the quick study scales down).";
        pub access_weight: f64 = 1.0 => range(1.0, 1e9), "accesses",
            "Trace-driven mode: application accesses each replayed access stands for (time and the PEBS period scale by it; 1 = every access is its own).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub cache: Option<String> = None => any, "",
            "With `trace`: `filter` (the default) sends the trace's loads and stores through CPU caches (`cache_model`) and only misses and dirty write-backs reach the tiers; `none` counts every record as a memory access (the only way to replay a page-level trace). Generated `app` streams are memory-level traffic and never filtered (docs/tiering.md, *Traces behind caches*).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub cache_model: Option<TraceCacheModel> = None => nested, "",
            "The caches of `cache = \"filter\"` and their hit latencies; default one socket of the study's Xeon Platinum 8362 (Ice Lake-SP).";
    }
}

/// `workload.cache`: through the caches (the default for a trace), or every record a memory
/// access.
pub(super) const CACHE_FILTER: &str = "filter";
pub(super) const CACHE_NONE: &str = "none";
const CACHE_MODES: [&str; 2] = [CACHE_FILTER, CACHE_NONE];

impl GupsSpec {
    fn check(&self, v: &mut Validator) {
        if self.hot_set_bytes > self.working_set_bytes {
            v.fail(
                "hot_set_bytes",
                format!(
                    "{} is larger than working_set_bytes ({}); allowed 0 to {}",
                    self.hot_set_bytes, self.working_set_bytes, self.working_set_bytes
                ),
            );
        }
        if let Some(o) = self.hot_offset_bytes {
            let max = self.working_set_bytes - self.hot_set_bytes.min(self.working_set_bytes);
            v.range("hot_offset_bytes", o, 0, max, "bytes");
        }
        if let Some(a) = &self.app {
            if !super::apps::APPS.contains(&a.as_str()) {
                v.fail(
                    "app",
                    format!(
                        "unknown app '{a}'; allowed: {}",
                        super::apps::APPS.join(", ")
                    ),
                );
            }
            if self.trace.is_some() {
                v.fail("trace", "give either trace or app, not both");
            }
        }
        if let Some(c) = &self.cache {
            v.one_of("cache", c, &CACHE_MODES);
        }
        if self.trace.is_none() {
            let why = "applies to workload.trace only (GUPS and the generated app streams \
                       model memory-level traffic: nothing to filter)";
            if self.cache.is_some() {
                v.fail("cache", why);
            }
            if self.cache_model.is_some() {
                v.fail("cache_model", why);
            }
        } else if self.cache.as_deref() == Some(CACHE_NONE) && self.cache_model.is_some() {
            v.fail(
                "cache_model",
                "has no effect with cache = \"none\"; remove one of them",
            );
        }
    }

    /// Whether a trace goes through the CPU caches before the tiers.
    pub fn cache_filtered(&self) -> bool {
        self.trace.is_some() && self.cache.as_deref() != Some(CACHE_NONE)
    }
}

/// The hot set as a page range, and per-page access probabilities.
///
/// With 4 KiB units (huge pages that may split, [`Gups::with_units`]) the hot set is a range
/// of 4 KiB units, so a hot set that is not aligned to the page size leaves huge pages that
/// are partly hot (skewed inside); `hot_start`/`hot_pages` are then the pages it touches.
#[derive(Debug, Clone, PartialEq)]
pub struct Gups {
    pub spec: GupsSpec,
    pub pages: u64,
    pub hot_pages: u64,
    pub hot_start: u64,
    moved: bool,
    /// Units per page (1: page granularity, the fast path), and the hot set in units.
    units_per_page: u64,
    hot_start_unit: u64,
    hot_units: u64,
}

impl GupsSpec {
    /// Whether the run is trace-driven (a trace file or an app analog's stream).
    pub fn is_stream(&self) -> bool {
        self.trace.is_some() || self.app.is_some()
    }
}

impl Gups {
    /// GUPS over pages of `page_bytes`. A hot set that is not page-aligned is placed in
    /// 4 KiB units (its edge pages partly hot); an aligned one at page granularity (the fast
    /// path, where the two agree).
    pub fn new(spec: &GupsSpec, page_bytes: u64) -> Self {
        let aligned = |b: u64| b.is_multiple_of(page_bytes);
        let unit = if aligned(spec.hot_set_bytes) && spec.hot_offset_bytes.is_none_or(aligned) {
            page_bytes
        } else {
            super::pages::BASE_PAGE_BYTES.min(page_bytes)
        };
        Self::with_units(spec, page_bytes, unit)
    }

    /// GUPS whose hot set is placed at `unit_bytes` granularity (a divisor of `page_bytes`:
    /// 4 KiB when huge pages may split; `page_bytes` is [`Gups::new`]).
    pub fn with_units(spec: &GupsSpec, page_bytes: u64, unit_bytes: u64) -> Self {
        let pages = spec.working_set_bytes.div_ceil(page_bytes);
        let upp = (page_bytes / unit_bytes.max(1)).max(1);
        let unit = page_bytes / upp;
        let units = pages * upp;
        let hot_units = spec.hot_set_bytes.div_ceil(unit).min(units);
        let hot_start_unit = match spec.hot_offset_bytes {
            Some(o) => (o / unit).min(units - hot_units),
            None => units - hot_units,
        };
        let mut g = Gups {
            spec: spec.clone(),
            pages,
            hot_pages: 0,
            hot_start: 0,
            moved: false,
            units_per_page: upp,
            hot_start_unit,
            hot_units,
        };
        g.set_hot_pages();
        g
    }

    /// The page range the unit range touches.
    fn set_hot_pages(&mut self) {
        let upp = self.units_per_page;
        self.hot_start = self.hot_start_unit / upp;
        let end = (self.hot_start_unit + self.hot_units).div_ceil(upp);
        self.hot_pages = if self.hot_units == 0 {
            0
        } else {
            end - self.hot_start
        };
    }

    /// Units per page (1 unless the hot set is placed in 4 KiB units).
    pub fn units_per_page(&self) -> u64 {
        self.units_per_page
    }

    /// Hot 4 KiB units (hot pages at page granularity).
    pub fn hot_units(&self) -> u64 {
        self.hot_units
    }

    /// Hot units of page `id` of `pt` (a page or a base page; 0 or 1 at page granularity).
    #[inline]
    pub fn hot_units_of(&self, pt: &PageTable, id: u64) -> u64 {
        let upp = self.units_per_page;
        let (lo, hi) = if id < self.pages {
            (id * upp, id * upp + upp)
        } else {
            match pt.parent_of(id) {
                Some((h, i)) => (h * upp + i, h * upp + i + 1),
                None => return 0,
            }
        };
        let (a, b) = (self.hot_start_unit, self.hot_start_unit + self.hot_units);
        hi.min(b).saturating_sub(lo.max(a))
    }

    /// Move the hot set once `time_s` passes `hot_move_s`: to the start of the working set
    /// or, if it is there already, to the end. Returns true when it moved.
    pub fn advance(&mut self, time_s: f64) -> bool {
        match self.spec.hot_move_s {
            Some(t) if !self.moved && time_s >= t => {
                self.moved = true;
                self.hot_start_unit = if self.hot_start_unit == 0 {
                    self.pages * self.units_per_page - self.hot_units
                } else {
                    0
                };
                self.set_hot_pages();
                true
            }
            _ => false,
        }
    }

    pub fn is_hot(&self, page: u64) -> bool {
        page >= self.hot_start && page < self.hot_start + self.hot_pages
    }

    fn hot_fraction(&self) -> f64 {
        if self.hot_pages == 0 {
            0.0
        } else {
            self.spec.hot_fraction
        }
    }

    /// Access probability of a (hot, cold) page (a wholly hot page at 4 KiB units).
    pub fn probabilities(&self) -> (f64, f64) {
        let h = self.hot_fraction();
        let cold = (1.0 - h) / self.pages as f64;
        if self.hot_pages == 0 {
            return (cold, cold);
        }
        if self.units_per_page == 1 {
            return (cold + h / self.hot_pages as f64, cold);
        }
        (
            cold + h * self.units_per_page as f64 / self.hot_units as f64,
            cold,
        )
    }

    /// Access probability of one page.
    pub fn page_probability(&self, page: u64) -> f64 {
        let (hot, cold) = self.probabilities();
        if self.units_per_page > 1 {
            let hu = self.hot_units_of_page(page);
            return cold + (hot - cold) * hu as f64 / self.units_per_page as f64;
        }
        if self.is_hot(page) {
            hot
        } else {
            cold
        }
    }

    fn hot_units_of_page(&self, page: u64) -> u64 {
        let upp = self.units_per_page;
        let (a, b) = (self.hot_start_unit, self.hot_start_unit + self.hot_units);
        (page * upp + upp)
            .min(b)
            .saturating_sub((page * upp).max(a))
    }

    /// Hot units (hot pages at page granularity) on each tier under placement `pt`.
    pub fn hot_per_tier(&self, pt: &PageTable) -> Vec<u64> {
        let mut h = vec![0; pt.tiers()];
        if self.units_per_page == 1 {
            for p in self.hot_start..self.hot_start + self.hot_pages {
                h[pt.tier(p)] += 1;
            }
            return h;
        }
        for p in self.hot_start..self.hot_start + self.hot_pages {
            if pt.is_split(p) {
                for i in 0..self.units_per_page {
                    let b = pt.base_id(p, i);
                    h[pt.tier(b)] += self.hot_units_of(pt, b);
                }
            } else {
                h[pt.tier(p)] += self.hot_units_of_page(p);
            }
        }
        h
    }

    /// Share of accesses to each tier (sums to 1) from the units (pages) and hot units per
    /// tier; `pt`'s accounting unit must be this workload's.
    pub fn tier_shares_from(&self, pt: &PageTable, hot_per_tier: &[u64]) -> Vec<f64> {
        let units = self.pages * self.units_per_page;
        let cold_p = (1.0 - self.hot_fraction()) / units as f64;
        let hot_extra = if self.hot_units > 0 {
            self.hot_fraction() / self.hot_units as f64
        } else {
            0.0
        };
        (0..pt.tiers())
            .map(|t| pt.used_units(t) as f64 * cold_p + hot_per_tier[t] as f64 * hot_extra)
            .collect()
    }

    /// Share of accesses to each tier under placement `pt` (sums to 1).
    pub fn tier_shares(&self, pt: &PageTable) -> Vec<f64> {
        self.tier_shares_from(pt, &self.hot_per_tier(pt))
    }

    /// Lines per access and bytes of traffic per access (reads + write-backs).
    pub fn lines_per_access(&self) -> f64 {
        self.spec.object_size_bytes.div_ceil(LINE_BYTES as u64) as f64
    }
    pub fn bytes_per_access(&self) -> f64 {
        self.lines_per_access() * LINE_BYTES / self.spec.read_fraction
    }

    /// Draw `n` samples of accesses at 4 KiB units: each is a unit, hot with the hot
    /// fraction, else uniform; `out` gets its page (or its base page's id once `pt` split
    /// the page) and `subs` its index within the page (PEBS records the data address).
    pub fn sample_units(
        &self,
        n: u64,
        pt: &PageTable,
        rng: &mut SimRng,
        out: &mut Vec<u64>,
        subs: &mut Vec<u16>,
    ) {
        let h = self.hot_fraction();
        let upp = self.units_per_page;
        let units = self.pages * upp;
        // With a power-of-two number of units per page (4 KiB and 2 MiB pages), a shift and
        // a mask split a unit instead of a 64-bit division.
        let shift = upp.is_power_of_two().then(|| upp.trailing_zeros());
        // Written in place (both vectors grown first): no capacity test per sample.
        let start = out.len();
        let subs_start = subs.len();
        out.resize(start + n as usize, 0);
        subs.resize(subs_start + n as usize, 0);
        for (o, sub) in out[start..].iter_mut().zip(&mut subs[subs_start..]) {
            let u = if rng.random::<f64>() < h {
                self.hot_start_unit + rng.random_range(0..self.hot_units)
            } else {
                rng.random_range(0..units)
            };
            let (p, i) = match shift {
                Some(s) => (u >> s, u & (upp - 1)),
                None => (u / upp, u % upp),
            };
            *o = if pt.is_split(p) { pt.base_id(p, i) } else { p };
            *sub = i as u16;
        }
    }

    /// Draw `n` samples of accesses: each is a page, hot with the hot fraction, else uniform.
    pub fn sample_pages(&self, n: u64, rng: &mut SimRng, out: &mut Vec<u64>) {
        let h = self.hot_fraction();
        // Written in place (the vector grown first): no capacity test per sample.
        let start = out.len();
        out.resize(start + n as usize, 0);
        for o in &mut out[start..] {
            *o = if rng.random::<f64>() < h {
                self.hot_start + rng.random_range(0..self.hot_pages)
            } else {
                rng.random_range(0..self.pages)
            };
        }
    }
}

/// Lines a core keeps in flight when each object spans `lines_per_object` lines: an object's
/// lines are independent (and prefetched together), so a core with `mlp` objects in flight
/// holds `mlp × lines` lines, up to the streaming in-flight limit `streaming_cap` (the line
/// fill buffers and L2 prefetcher queue that also bound a streaming core: the antagonists'
/// calibrated `reads_per_core`). A core never holds fewer than `mlp` (a user may set an MLP
/// above the cap for one-line objects).
pub(super) fn lines_in_flight_per_core(mlp: f64, lines_per_object: f64, streaming_cap: f64) -> f64 {
    (mlp * lines_per_object).min(streaming_cap.max(mlp))
}

/// Number of samples for `expected` sampled events: the integer part plus one with the
/// probability of the fractional part (mean-exact, deterministic given the stream).
pub(super) fn sample_count(expected: f64, rng: &mut SimRng) -> u64 {
    let base = expected.floor();
    base as u64 + u64::from(rng.random::<f64>() < expected - base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_sum_to_one_and_follow_the_hot_split() {
        let spec = GupsSpec {
            hot_offset_bytes: Some(0),
            ..Default::default()
        };
        let g = Gups::new(&spec, 2 << 20);
        let pt =
            PageTable::first_touch(g.pages, 2 << 20, &[32_000_000_000, 96_000_000_000]).unwrap();
        let s = g.tier_shares(&pt);
        assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Hot set (24 GiB) in the default tier plus its share of the uniform 10 %.
        let d_pages = pt.used_pages(0) as f64;
        let expect = 0.9 + 0.1 * d_pages / g.pages as f64;
        assert!((s[0] - expect).abs() < 1e-12);
        let direct: f64 = (0..g.pages)
            .filter(|&p| pt.tier(p) == 0)
            .map(|p| g.page_probability(p))
            .sum();
        assert!((s[0] - direct).abs() < 1e-9);
    }

    #[test]
    fn sampling_follows_the_hot_fraction() {
        let g = Gups::new(&GupsSpec::default(), 2 << 20);
        let mut rng = crate::rng::stream(1, "test");
        let mut v = Vec::new();
        g.sample_pages(100_000, &mut rng, &mut v);
        let hot = v.iter().filter(|&&p| g.is_hot(p)).count() as f64 / 1e5;
        // 90 % to the hot set plus the hot set's third of the uniform 10 %.
        assert!((hot - (0.9 + 0.1 / 3.0)).abs() < 0.01, "{hot}");
    }
}
