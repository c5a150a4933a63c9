//! Trace-driven mode: the same tier engine, page table, migration queue and policies as
//! statistical mode, but every access of a stream updates page state. Per quantum the fixed
//! point (with last quantum's measured per-tier access shares) gives the application's
//! access rate; that many accesses are taken from the stream; each one counts towards its
//! tier, sets its page's accessed bit, raises a hint fault if its page is marked, and every
//! `period`-th load becomes a PEBS sample.

use super::engine::{solve_fixed_point_from, Counters, Source};
use super::hw::{HintFault, PageHardware};
use super::pages::{PageTable, BASE_PAGE_BYTES};
use super::policy::{Migration, Observation, TieringPolicy, DEFAULT_TIER};
use super::sim::{
    drain_migrations, enqueue_migrations, Antagonists, QuantumRecord, SimParams, SimResult,
};
use super::stream::{Access, AccessStream};
use super::workload::lines_in_flight_per_core;
use super::LINE_BYTES;
use crate::error::ConfigError;

/// The application's demand: closed-loop cores and what one access moves.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamDemand {
    pub cores: u32,
    pub mlp: f64,
    pub object_size_bytes: u64,
    pub read_fraction: f64,
    /// Application accesses each stream access stands for (1: every access is replayed).
    pub weight: f64,
}

impl StreamDemand {
    fn lines_per_access(&self) -> f64 {
        self.object_size_bytes.div_ceil(LINE_BYTES as u64) as f64
    }
}

/// Hint faults and accessed bits from the actual accesses. One flag byte per page keeps the
/// per-access work to one byte read and write; mark times are read only on a fault.
pub struct TraceHardware {
    /// Bit 0: accessed since the last clear; bit 1: marked (PROT_NONE).
    flags: Vec<u8>,
    /// Mark time per page (s), valid while the page is marked.
    marked_at: Vec<f64>,
    /// Faults taken this quantum, in access order; delivered at the next quantum.
    faults: Vec<HintFault>,
}

const ACCESSED: u8 = 1;
const MARKED: u8 = 2;

impl TraceHardware {
    pub fn new(pages: u64) -> Self {
        TraceHardware {
            flags: vec![0; pages as usize],
            marked_at: vec![0.0; pages as usize],
            faults: Vec::new(),
        }
    }

    /// One access to `page` at `time_s`.
    #[inline]
    pub fn access(&mut self, page: u64, time_s: f64) {
        let p = page as usize;
        let f = self.flags[p];
        self.flags[p] = (f | ACCESSED) & !MARKED;
        if f & MARKED != 0 {
            self.faults.push(HintFault {
                page,
                latency_s: time_s - self.marked_at[p],
            });
        }
    }

    pub fn take_faults(&mut self) -> Vec<HintFault> {
        std::mem::take(&mut self.faults)
    }
}

/// The hardware as the policy sees it during its quantum: `mark` stamps the time the
/// policy runs (the end of the quantum whose accesses it just saw).
struct Marking<'a> {
    hw: &'a mut TraceHardware,
    now_s: f64,
}

impl PageHardware for Marking<'_> {
    fn mark(&mut self, page: u64) {
        let p = page as usize;
        if let Some(f) = self.hw.flags.get_mut(p) {
            if *f & MARKED == 0 {
                *f |= MARKED;
                self.hw.marked_at[p] = self.now_s;
            }
        }
    }

    fn test_and_clear_accessed(&mut self, page: u64) -> bool {
        self.hw.flags.get_mut(page as usize).is_some_and(|f| {
            let was = *f & ACCESSED != 0;
            *f &= !ACCESSED;
            was
        })
    }
}

/// Counts of a replay: accesses taken from the stream and counted per tier.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayCounts {
    pub accesses: u64,
    pub per_tier: Vec<u64>,
    pub samples: u64,
}

/// Run `policy` over `stream`. `None` if the stream's pages do not fit in the tiers.
pub fn simulate_stream(
    p: &SimParams,
    demand: &StreamDemand,
    stream: &mut dyn AccessStream,
    ant: &Antagonists,
    policy: &mut dyn TieringPolicy,
) -> Result<Option<(SimResult, ReplayCounts)>, ConfigError> {
    let caps: Vec<u64> = p.tiers.iter().map(|t| t.capacity_bytes).collect();
    let n_pages = stream.pages();
    // A policy that splits huge pages (MEMTIS) gets a table in 4 KiB units; each access
    // carries its 4 KiB index, so samples name sub-pages and split pages resolve per access.
    let splittable = policy.splits_pages() && p.page_bytes > BASE_PAGE_BYTES;
    let Some(mut pt) = PageTable::place_with(n_pages, p.page_bytes, splittable, &caps, |pg| {
        policy.initial_tier(pg)
    }) else {
        return Ok(None);
    };
    let units = pt.units_per_page();
    let n = p.tiers.len();
    let mut counters = Counters::new(n, p.ewma_alpha);
    let mut app_rate = vec![0.0; n];
    let quanta = (p.duration_s / p.quantum_s).round().max(1.0) as u64;
    let quantum_ns = p.quantum_s * 1e9;
    let budget = (p.migrate_limit_gb_s * quantum_ns) as u64;
    let mut open = vec![0.0; n];
    let mut hw = TraceHardware::new(n_pages);
    let mut queue: std::collections::VecDeque<Migration> = Default::default();
    let mut counts = ReplayCounts {
        per_tier: vec![0; n],
        ..Default::default()
    };
    let mut out = SimResult {
        timeline: Vec::with_capacity(quanta as usize),
        migrations: 0,
        migrated_bytes: 0,
        failed_migrations: 0,
        pages: pt.clone(),
        work: Default::default(),
    };
    // Hot set per tier in accounting units (a split page's base pages move one by one).
    let mut hot = vec![0u64; n];
    for pg in 0..n_pages {
        if stream.is_hot(pg) {
            hot[pt.tier(pg)] += units;
        }
    }
    // Before the first access the shares follow the placement.
    let mut shares: Vec<f64> = (0..n)
        .map(|t| pt.used_pages(t) as f64 / n_pages.max(1) as f64)
        .collect();
    let mut last_latency: Vec<f64> = p.tiers.iter().map(|t| t.unloaded_latency_ns).collect();
    let mut batch: Vec<Access> = Vec::new();
    let mut samples: Vec<u64> = Vec::new();
    let mut subpages: Vec<u16> = Vec::new();
    let mut queued_bytes = 0u64;
    // Loads until the next PEBS sample (a countdown, as the PMU's counter).
    let mut to_sample = 0.0f64;
    let mut carry = 0.0f64;
    let lines = demand.lines_per_access();
    for q in 0..quanta {
        let time_s = q as f64 * p.quantum_s;
        let ant_cores = ant.cores_at(time_s);
        let mut srcs = vec![Source::Spread {
            share: shares.clone(),
            reads: demand.cores as f64
                * lines_in_flight_per_core(demand.mlp, lines, ant.reads_per_core),
            read_fraction: demand.read_fraction,
        }];
        if ant_cores > 0 {
            srcs.push(Source::Pinned {
                tier: ant.tier,
                reads: ant_cores as f64 * ant.reads_per_core,
                read_fraction: ant.read_fraction,
            });
        }
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
        let reads_per_ns: f64 = fp.reads[0]
            .iter()
            .zip(&fp.tiers)
            .map(|(r, t)| if *r > 0.0 { r / t.latency_ns } else { 0.0 })
            .sum();
        let acc_per_ns = reads_per_ns / lines;
        let gb_s = acc_per_ns * lines * LINE_BYTES / demand.read_fraction;
        // Stream accesses this quantum (fractions carried, so none is lost).
        let want = acc_per_ns * quantum_ns / demand.weight + carry;
        let take = want.floor() as usize;
        carry = want - take as f64;
        batch.clear();
        stream.fill(take, &mut batch)?;
        let period = policy.sample_period().unwrap_or(p.sample_period).max(1) as f64;
        samples.clear();
        subpages.clear();
        let mut per_tier = vec![0u64; n];
        let dt = if take > 0 {
            p.quantum_s / take as f64
        } else {
            0.0
        };
        for (i, a) in batch.iter().enumerate() {
            let tier = if pt.is_split(a.page) {
                pt.tier(pt.base_id(a.page, u64::from(a.sub)))
            } else {
                pt.tier(a.page)
            };
            per_tier[tier] += 1;
            hw.access(a.page, time_s + i as f64 * dt);
            if a.load {
                // Each line of the object is one LLC-miss load for PEBS.
                to_sample -= demand.weight * lines;
                while to_sample <= 0.0 {
                    samples.push(a.page);
                    if splittable {
                        subpages.push(a.sub);
                    }
                    to_sample += period;
                }
            }
        }
        counts.accesses += take as u64;
        counts.samples += samples.len() as u64;
        for (c, k) in counts.per_tier.iter_mut().zip(&per_tier) {
            *c += k;
        }
        if take > 0 {
            shares = per_tier.iter().map(|&c| c as f64 / take as f64).collect();
        }
        let lat: Vec<Option<f64>> = (0..n).map(|t| counters.latency_ns(t)).collect();
        let faults = hw.take_faults();
        let migs = policy.quantum_hw(
            &Observation {
                time_s,
                quantum_s: p.quantum_s,
                samples: &samples,
                sample_subpages: &subpages,
                sample_period: period as u64,
                latency_ns: &lat,
                app_arrivals_per_ns: &app_rate,
                pages: &pt,
                migrate_budget_bytes: budget.saturating_sub(queued_bytes),
                hint_faults: &faults,
            },
            &mut Marking {
                hw: &mut hw,
                now_s: time_s + p.quantum_s,
            },
        );
        enqueue_migrations(&pt, &mut queue, &mut queued_bytes, migs);
        let mut moved = vec![0u64; n];
        let bytes = drain_migrations(
            &mut pt,
            &mut queue,
            budget,
            &mut queued_bytes,
            &mut out,
            &mut moved,
            |pt, page, from, to| {
                let (parent, size) = match pt.parent_of(page) {
                    Some((h, _)) => (h, 1),
                    None => (page, units),
                };
                if stream.is_hot(parent) {
                    hot[from] -= size;
                    hot[to] += size;
                }
            },
        );
        out.migrated_bytes += bytes;
        for t in 0..n {
            open[t] = moved[t] as f64 / quantum_ns;
        }
        let hot_share_default = if stream.hot_pages() > 0 {
            hot[DEFAULT_TIER] as f64 / (stream.hot_pages() * units) as f64
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
    Ok(Some((out, counts)))
}
