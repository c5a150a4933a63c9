//! Statistical mode: the GUPS workload as the per-quantum engine's access source. Samples
//! and hint faults are drawn from the workload's access distribution (per-page rates), not
//! from individual accesses.

use super::hint_faults::HintFaults;
use super::hw::{PageHardware, StatHardware};
use super::pages::{PageTable, BASE_PAGE_BYTES};
use super::policy::{TieringPolicy, DEFAULT_TIER};
use super::quantum::{app_accesses_per_ns, app_sources, run_quanta, EarlyEnd};
pub use super::quantum::{Antagonists, QuantumRecord, SimParams, SimResult};
use super::source::{AccessSource, Demand, QuantumEnd, QuantumRate};
use super::workload::{sample_count, Gups};
use crate::error::ConfigError;
use crate::mempath::{solve_fixed_point, FixedPoint, TierSpec};
use crate::rng::{self, SimRng};

/// What one quantum did, for models fed by the tiering run (the PMem write path).
pub struct QuantumView<'a> {
    pub quantum: u64,
    pub quantum_s: f64,
    pub pages: &'a PageTable,
    pub gups: &'a Gups,
    /// Migrations copied this quantum: (page, from tier, to tier).
    pub moved: &'a [(u64, usize, usize)],
    /// 64 B lines the application wrote back to each tier this quantum.
    pub app_write_lines: &'a [f64],
    /// Share of the application's accesses and hot pages on each tier this quantum.
    pub tier_shares: &'a [f64],
    pub hot_pages: &'a [u64],
}

/// Called after every quantum of [`simulate_observed`].
pub trait QuantumObserver {
    fn quantum(&mut self, view: &QuantumView);
}

impl QuantumObserver for () {
    fn quantum(&mut self, _: &QuantumView) {}
}

/// An observer a run may or may not have (the PMem feeder).
impl<T: QuantumObserver> QuantumObserver for Option<T> {
    fn quantum(&mut self, view: &QuantumView) {
        if let Some(o) = self {
            o.quantum(view);
        }
    }
}

fn demand_of(gups: &Gups) -> Demand {
    Demand {
        cores: gups.spec.cores,
        mlp: gups.spec.mlp,
        lines_per_access: gups.lines_per_access(),
        read_fraction: gups.spec.read_fraction,
        cache: None,
    }
}

/// Application throughput at a fixed point: (accesses per ns, GB/s).
pub fn app_throughput(fp: &FixedPoint, gups: &Gups) -> (f64, f64) {
    let acc = app_accesses_per_ns(fp, gups.lines_per_access());
    (acc, acc * gups.bytes_per_access())
}

/// Solve one quantum without policy or sampling (for calibration and tests).
pub fn steady_point(
    tiers: &[TierSpec],
    gups: &Gups,
    shares: &[f64],
    ant: &Antagonists,
    ant_cores: u32,
) -> FixedPoint {
    solve_fixed_point(
        tiers,
        &app_sources(&demand_of(gups), shares, ant, ant_cores),
        &[],
    )
}

/// GUPS in statistical mode, with an optional observer of each quantum.
struct GupsSource<'a> {
    gups: Gups,
    sample_rng: SimRng,
    hw: StatHardware,
    /// Hot units per tier (a split huge page's base pages move one by one).
    hot: Vec<u64>,
    shares: Vec<f64>,
    observer: &'a mut dyn QuantumObserver,
    /// Hot units per tier before this quantum's migrations, and the migrations made.
    hot_before: Vec<u64>,
    moved_pages: Vec<(u64, usize, usize)>,
    app_write_lines: Vec<f64>,
}

impl AccessSource for GupsSource<'_> {
    fn place(&mut self, p: &SimParams, policy: &mut dyn TieringPolicy) -> Option<PageTable> {
        let caps: Vec<u64> = p.tiers.iter().map(|t| t.capacity_bytes).collect();
        // A policy that splits huge pages gets a table in 4 KiB units and GUPS's hot set
        // placed in 4 KiB units (sub-page skew where it is not page-aligned), as does GUPS
        // built in 4 KiB units; others keep the fast path.
        let splittable = (policy.splits_pages() || self.gups.units_per_page() > 1)
            && p.page_bytes > BASE_PAGE_BYTES;
        if splittable && self.gups.units_per_page() == 1 {
            self.gups = Gups::with_units(&self.gups.spec, p.page_bytes, BASE_PAGE_BYTES);
        }
        let pt = PageTable::place_with(self.gups.pages, p.page_bytes, splittable, &caps, |pg| {
            policy.initial_tier(pg)
        })?;
        self.hot = self.gups.hot_per_tier(&pt);
        Some(pt)
    }

    fn demand(&self) -> Demand {
        demand_of(&self.gups)
    }

    fn gb_s(&self, accesses_per_ns: f64) -> f64 {
        accesses_per_ns * self.gups.bytes_per_access()
    }

    fn begin_quantum(&mut self, time_s: f64, pt: &PageTable) {
        if self.gups.advance(time_s) {
            self.hot = self.gups.hot_per_tier(pt);
        }
        self.shares = self.gups.tier_shares_from(pt, &self.hot);
    }

    fn shares(&self) -> &[f64] {
        &self.shares
    }

    fn accesses(
        &mut self,
        r: &QuantumRate,
        pt: &PageTable,
        samples: &mut Vec<u64>,
        subpages: &mut Vec<u16>,
    ) -> Result<HintFaults, ConfigError> {
        // PEBS counts LLC-miss loads, one per line (HeMem's load-miss event): an object of
        // several lines is sampled once per line, each sample on the object's page.
        let expected = r.accesses_per_ns * self.gups.lines_per_access() * (r.quantum_s * 1e9)
            / r.sample_period as f64;
        let k = sample_count(expected, &mut self.sample_rng);
        if self.gups.units_per_page() > 1 {
            self.gups
                .sample_units(k, pt, &mut self.sample_rng, samples, subpages);
        } else {
            self.gups.sample_pages(k, &mut self.sample_rng, samples);
        }
        self.hot_before.clone_from(&self.hot);
        self.moved_pages.clear();
        Ok(self
            .hw
            .begin_quantum(r.quantum, &self.gups, r.accesses_per_ns * 1e9))
    }

    fn hardware(&mut self, _now_s: f64) -> &mut dyn PageHardware {
        &mut self.hw
    }

    fn moved(&mut self, pt: &PageTable, page: u64, from: usize, to: usize) {
        self.moved_pages.push((page, from, to));
        let h = self.gups.hot_units_of(pt, page);
        self.hot[from] -= h;
        self.hot[to] += h;
    }

    fn hot_share_default(&self) -> f64 {
        if self.gups.hot_units() > 0 {
            self.hot[DEFAULT_TIER] as f64 / self.gups.hot_units() as f64
        } else {
            0.0
        }
    }

    fn end_quantum(&mut self, end: &QuantumEnd) {
        // Each access reads its lines and writes them back: written lines per line read.
        let rf = self.gups.spec.read_fraction;
        let writes_per_read = (1.0 - rf) / rf;
        let quantum_ns = end.quantum_s * 1e9;
        self.app_write_lines.clear();
        self.app_write_lines.extend(
            end.app_reads_per_ns
                .iter()
                .map(|r| r * writes_per_read * quantum_ns),
        );
        self.observer.quantum(&QuantumView {
            quantum: end.quantum,
            quantum_s: end.quantum_s,
            pages: end.pages,
            gups: &self.gups,
            moved: &self.moved_pages,
            app_write_lines: &self.app_write_lines,
            tier_shares: &self.shares,
            hot_pages: &self.hot_before,
        });
    }
}

pub fn simulate(
    p: &SimParams,
    gups: Gups,
    ant: &Antagonists,
    policy: &mut dyn TieringPolicy,
) -> Option<SimResult> {
    simulate_observed(p, gups, ant, policy, &mut ())
}

/// [`simulate`], showing each quantum's migrations and write traffic to `observer`.
pub fn simulate_observed(
    p: &SimParams,
    gups: Gups,
    ant: &Antagonists,
    policy: &mut dyn TieringPolicy,
    observer: &mut dyn QuantumObserver,
) -> Option<SimResult> {
    simulate_keeping(p, gups, ant, policy, observer, &[], None)
}

/// [`simulate_observed`], also keeping the result after each of `keep_at` quanta
/// ([`SimResult::prefixes`]) and ending early where `end` says.
pub(super) fn simulate_keeping(
    p: &SimParams,
    gups: Gups,
    ant: &Antagonists,
    policy: &mut dyn TieringPolicy,
    observer: &mut dyn QuantumObserver,
    keep_at: &[u64],
    end: Option<&EarlyEnd>,
) -> Option<SimResult> {
    let mut source = GupsSource {
        gups,
        sample_rng: rng::stream(p.seed, "tier.samples"),
        hw: StatHardware::new(p.quantum_s, rng::stream(p.seed, "tier.hw")),
        hot: Vec::new(),
        shares: Vec::new(),
        observer,
        hot_before: Vec::new(),
        moved_pages: Vec::new(),
        app_write_lines: Vec::new(),
    };
    // The statistical source reads no files: its only outcome besides a result is "does
    // not fit" (None).
    run_quanta(p, &mut source, ant, policy, keep_at, end)
        .ok()
        .flatten()
}
