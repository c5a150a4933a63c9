//! Statistical-mode simulation: per quantum, solve the tiers' fixed point for the current
//! placement and contention, draw PEBS-like samples, let the policy migrate.

use super::engine::{
    solve_fixed_point, solve_fixed_point_from, Counters, FixedPoint, Source, TierSpec,
};
use super::hw::StatHardware;
use super::pages::{PageTable, BASE_PAGE_BYTES};
use super::policy::{Migration, Observation, TieringPolicy, DEFAULT_TIER, SPLIT_PAGE};
use super::workload::{lines_in_flight_per_core, sample_count, Gups};
use crate::rng;

/// Streaming antagonists on one tier; `cores` may change to `cores_after` at `change_s`.
#[derive(Debug, Clone, PartialEq)]
pub struct Antagonists {
    pub tier: usize,
    pub cores: u32,
    pub reads_per_core: f64,
    pub read_fraction: f64,
    pub change: Option<(f64, u32)>,
}

impl Antagonists {
    /// `cores` streaming 50/50 on the default tier with the calibrated lines in flight.
    pub fn reference(cores: u32) -> Self {
        Antagonists {
            tier: 0,
            cores,
            reads_per_core: super::params::ANTAGONIST_READS_PER_CORE,
            read_fraction: super::params::ANTAGONIST_READ_FRACTION,
            change: None,
        }
    }

    pub fn cores_at(&self, time_s: f64) -> u32 {
        match self.change {
            Some((t, c)) if time_s >= t => c,
            _ => self.cores,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SimParams {
    pub tiers: Vec<TierSpec>,
    pub page_bytes: u64,
    pub quantum_s: f64,
    pub duration_s: f64,
    pub sample_period: u64,
    /// Migration copy rate limit, GB/s: at most this × quantum bytes move per quantum.
    pub migrate_limit_gb_s: f64,
    pub ewma_alpha: f64,
    pub seed: u64,
}

/// One quantum of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantumRecord {
    pub time_s: f64,
    pub throughput_gb_s: f64,
    pub mops: f64,
    pub latency_ns: Vec<f64>,
    pub bandwidth_gb_s: Vec<f64>,
    /// Read fraction of each tier's traffic (sets its saturation and bottleneck).
    pub read_fraction: Vec<f64>,
    /// Little's law per tier: occupancy / arrival rate (equals latency_ns).
    pub little_ns: Vec<f64>,
    pub hot_share_default: f64,
    pub alt_traffic_share: f64,
    pub migrated_bytes: u64,
    pub fixed_point_iterations: usize,
    pub converged: bool,
    pub antagonist_cores: u32,
}

impl QuantumRecord {
    /// One quantum's record from its solved fixed point; both execution modes (statistical and
    /// trace-driven) record a quantum this way.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn of(
        time_s: f64,
        throughput_gb_s: f64,
        accesses_per_ns: f64,
        fp: &FixedPoint,
        hot_share_default: f64,
        alt_traffic_share: f64,
        migrated_bytes: u64,
        antagonist_cores: u32,
    ) -> QuantumRecord {
        QuantumRecord {
            time_s,
            throughput_gb_s,
            mops: accesses_per_ns * 1e3,
            latency_ns: fp.tiers.iter().map(|t| t.latency_ns).collect(),
            bandwidth_gb_s: fp.tiers.iter().map(|t| t.bandwidth_gb_s).collect(),
            read_fraction: fp.tiers.iter().map(|t| t.read_fraction).collect(),
            little_ns: fp
                .tiers
                .iter()
                .map(|t| {
                    if t.arrivals_per_ns > 0.0 {
                        t.occupancy / t.arrivals_per_ns
                    } else {
                        t.latency_ns
                    }
                })
                .collect(),
            hot_share_default,
            alt_traffic_share,
            migrated_bytes,
            fixed_point_iterations: fp.iterations,
            converged: fp.converged,
            antagonist_cores,
        }
    }
}

pub struct SimResult {
    pub timeline: Vec<QuantumRecord>,
    pub migrations: u64,
    pub migrated_bytes: u64,
    pub failed_migrations: u64,
    pub pages: PageTable,
    pub work: super::policy::PolicyWork,
}

/// Per-tier sources for the application (spread by `shares`) and the antagonists.
fn sources(gups: &Gups, shares: &[f64], ant: &Antagonists, ant_cores: u32) -> Vec<Source> {
    let per_core =
        lines_in_flight_per_core(gups.spec.mlp, gups.lines_per_access(), ant.reads_per_core);
    let mut s = vec![Source::Spread {
        share: shares.to_vec(),
        reads: gups.spec.cores as f64 * per_core,
        read_fraction: gups.spec.read_fraction,
    }];
    if ant_cores > 0 {
        s.push(Source::Pinned {
            tier: ant.tier,
            reads: ant_cores as f64 * ant.reads_per_core,
            read_fraction: ant.read_fraction,
        });
    }
    s
}

/// Application throughput at a fixed point: (accesses per ns, GB/s).
pub fn app_throughput(fp: &FixedPoint, gups: &Gups) -> (f64, f64) {
    let reads_per_ns: f64 = fp.reads[0]
        .iter()
        .zip(&fp.tiers)
        .map(|(r, t)| if *r > 0.0 { r / t.latency_ns } else { 0.0 })
        .sum();
    let acc = reads_per_ns / gups.lines_per_access();
    (acc, acc * gups.bytes_per_access())
}

/// Bytes a queued request will copy: its page's size, nothing for a split.
fn request_bytes(pt: &PageTable, m: &Migration) -> u64 {
    if m.to == SPLIT_PAGE {
        0
    } else {
        pt.page_size(m.page)
    }
}

/// Queues a policy's migrations behind those still waiting, keeping `queued_bytes` (what the
/// policy's next budget is reduced by) equal to the queue's copy bytes.
pub(super) fn enqueue_migrations(
    pt: &PageTable,
    queue: &mut std::collections::VecDeque<Migration>,
    queued_bytes: &mut u64,
    migs: Vec<Migration>,
) {
    *queued_bytes += migs.iter().map(|m| request_bytes(pt, m)).sum::<u64>();
    queue.extend(migs);
}

/// Copies queued migrations in order until this quantum's copy budget is spent (a request
/// that does not fit waits for the next quantum); splits cost no copy. Returns the bytes
/// copied; `moved` gets them per tier (read on one, written on the other) and `on_move`
/// sees each completed move as (page, from, to). Shared by both execution modes.
pub(super) fn drain_migrations(
    pt: &mut PageTable,
    queue: &mut std::collections::VecDeque<Migration>,
    budget: u64,
    queued_bytes: &mut u64,
    out: &mut SimResult,
    moved: &mut [u64],
    mut on_move: impl FnMut(&PageTable, u64, usize, usize),
) -> u64 {
    let mut bytes = 0u64;
    while let Some(&m) = queue.front() {
        let size = request_bytes(pt, &m);
        if bytes + size > budget {
            break;
        }
        queue.pop_front();
        *queued_bytes -= size;
        if m.to == SPLIT_PAGE {
            // A split changes only the page table (no copy).
            if pt.split(m.page).is_err() {
                out.failed_migrations += 1;
            }
            continue;
        }
        let from = pt.try_tier(m.page).unwrap_or(0);
        match pt.migrate(m.page, m.to) {
            Ok(()) => {
                bytes += size;
                moved[from] += size;
                moved[m.to] += size;
                out.migrations += 1;
                on_move(pt, m.page, from, m.to);
            }
            Err(_) => out.failed_migrations += 1,
        }
    }
    bytes
}

/// Solve one quantum without policy or sampling (for calibration and tests).
pub fn steady_point(
    tiers: &[TierSpec],
    gups: &Gups,
    shares: &[f64],
    ant: &Antagonists,
    ant_cores: u32,
) -> FixedPoint {
    solve_fixed_point(tiers, &sources(gups, shares, ant, ant_cores), &[])
}

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
    mut gups: Gups,
    ant: &Antagonists,
    policy: &mut dyn TieringPolicy,
    observer: &mut dyn QuantumObserver,
) -> Option<SimResult> {
    let caps: Vec<u64> = p.tiers.iter().map(|t| t.capacity_bytes).collect();
    // A policy that splits huge pages gets a table in 4 KiB units and GUPS's hot set placed
    // in 4 KiB units (sub-page skew where it is not page-aligned), as does GUPS built in
    // 4 KiB units; others keep the fast path.
    let splittable =
        (policy.splits_pages() || gups.units_per_page() > 1) && p.page_bytes > BASE_PAGE_BYTES;
    if splittable && gups.units_per_page() == 1 {
        gups = Gups::with_units(&gups.spec, p.page_bytes, BASE_PAGE_BYTES);
    }
    let mut pt = PageTable::place_with(gups.pages, p.page_bytes, splittable, &caps, |pg| {
        policy.initial_tier(pg)
    })?;
    let n = p.tiers.len();
    let mut counters = Counters::new(n, p.ewma_alpha);
    let mut app_rate = vec![0.0; n];
    let mut sample_rng = rng::stream(p.seed, "tier.samples");
    let quanta = (p.duration_s / p.quantum_s).round().max(1.0) as u64;
    let quantum_ns = p.quantum_s * 1e9;
    let budget = (p.migrate_limit_gb_s * quantum_ns) as u64;
    let mut open = vec![0.0; n];
    let mut samples = Vec::new();
    let mut subpages: Vec<u16> = Vec::new();
    let mut queued_bytes = 0u64;
    let mut hw = StatHardware::new(p.quantum_s, rng::stream(p.seed, "tier.hw"));
    // Migrations decided but not yet copied (the copy rate limit spreads a batch over quanta).
    let mut queue: std::collections::VecDeque<Migration> = Default::default();
    let mut out = SimResult {
        timeline: Vec::with_capacity(quanta as usize),
        migrations: 0,
        migrated_bytes: 0,
        failed_migrations: 0,
        pages: pt.clone(),
        work: Default::default(),
    };
    let mut hot = gups.hot_per_tier(&pt);
    let mut last_latency: Vec<f64> = p.tiers.iter().map(|t| t.unloaded_latency_ns).collect();
    let mut moved_pages: Vec<(u64, usize, usize)> = Vec::new();
    let mut app_write_lines = vec![0.0; n];
    // Each access reads its lines and writes them back: written lines per line read.
    let rf = gups.spec.read_fraction;
    let writes_per_read = (1.0 - rf) / rf;
    for q in 0..quanta {
        let time_s = q as f64 * p.quantum_s;
        if gups.advance(time_s) {
            hot = gups.hot_per_tier(&pt);
        }
        let ant_cores = ant.cores_at(time_s);
        let shares = gups.tier_shares_from(&pt, &hot);
        let srcs = sources(&gups, &shares, ant, ant_cores);
        let fp = solve_fixed_point_from(&p.tiers, &srcs, &open, &last_latency);
        last_latency = fp.tiers.iter().map(|t| t.latency_ns).collect();
        counters.update(&fp);
        for (t, rate) in app_rate.iter_mut().enumerate() {
            let r = if fp.reads[0][t] > 0.0 {
                fp.reads[0][t] / fp.tiers[t].latency_ns
            } else {
                0.0
            };
            *rate = if q == 0 {
                r
            } else {
                p.ewma_alpha * r + (1.0 - p.ewma_alpha) * *rate
            };
        }
        let (acc_per_ns, gb_s) = app_throughput(&fp, &gups);
        samples.clear();
        subpages.clear();
        let period = policy.sample_period().unwrap_or(p.sample_period).max(1);
        // PEBS counts LLC-miss loads, one per line (HeMem's load-miss event): an object of
        // several lines is sampled once per line, each sample on the object's page.
        let expected = acc_per_ns * gups.lines_per_access() * quantum_ns / period as f64;
        let k = sample_count(expected, &mut sample_rng);
        if gups.units_per_page() > 1 {
            gups.sample_units(k, &pt, &mut sample_rng, &mut samples, &mut subpages);
        } else {
            gups.sample_pages(k, &mut sample_rng, &mut samples);
        }
        let lat: Vec<Option<f64>> = (0..n).map(|t| counters.latency_ns(t)).collect();
        let faults = hw.begin_quantum(q, &gups, acc_per_ns * 1e9);
        let migs = policy.quantum_hw(
            &Observation {
                time_s,
                quantum_s: p.quantum_s,
                samples: &samples,
                sample_subpages: &subpages,
                sample_period: period,
                latency_ns: &lat,
                app_arrivals_per_ns: &app_rate,
                pages: &pt,
                migrate_budget_bytes: budget.saturating_sub(queued_bytes),
                hint_faults: &faults,
            },
            &mut hw,
        );
        enqueue_migrations(&pt, &mut queue, &mut queued_bytes, migs);
        let hot_now = hot.clone();
        let mut moved = vec![0u64; n];
        moved_pages.clear();
        let bytes = drain_migrations(
            &mut pt,
            &mut queue,
            budget,
            &mut queued_bytes,
            &mut out,
            &mut moved,
            |pt, page, from, to| {
                moved_pages.push((page, from, to));
                let h = gups.hot_units_of(pt, page);
                hot[from] -= h;
                hot[to] += h;
            },
        );
        out.migrated_bytes += bytes;
        for (t, w) in app_write_lines.iter_mut().enumerate() {
            let reads_per_ns = if fp.reads[0][t] > 0.0 {
                fp.reads[0][t] / fp.tiers[t].latency_ns
            } else {
                0.0
            };
            *w = reads_per_ns * writes_per_read * quantum_ns;
        }
        observer.quantum(&QuantumView {
            quantum: q,
            quantum_s: p.quantum_s,
            pages: &pt,
            gups: &gups,
            moved: &moved_pages,
            app_write_lines: &app_write_lines,
            tier_shares: &shares,
            hot_pages: &hot_now,
        });
        // Copies load both tiers during the next quantum (read on one, write on the other).
        for t in 0..n {
            open[t] = moved[t] as f64 / quantum_ns;
        }
        let hot_share_default = if gups.hot_units() > 0 {
            hot[DEFAULT_TIER] as f64 / gups.hot_units() as f64
        } else {
            0.0
        };
        out.timeline.push(QuantumRecord::of(
            time_s,
            gb_s,
            acc_per_ns,
            &fp,
            hot_share_default,
            1.0 - shares[DEFAULT_TIER],
            bytes,
            ant_cores,
        ));
    }
    out.pages = pt;
    out.work = policy.work();
    Some(out)
}
