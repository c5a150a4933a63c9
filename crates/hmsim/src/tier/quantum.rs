//! The per-quantum engine shared by every execution mode: per quantum, solve the tiers'
//! fixed point for the current placement and contention, take the quantum's accesses from
//! an [`AccessSource`] (PEBS-like samples, hint faults), let the policy decide, and copy
//! migrations with the policy's copy engine (its threads load the tiers as closed-loop
//! sources in the next quantum).

use super::migrate::{CopyBudget, MigrationQueue};
use super::pages::PageTable;
use super::policy::{Observation, PolicyWork, TieringPolicy, DEFAULT_TIER};
pub use super::sim_params::SimParams;
use super::source::{AccessSource, Demand, QuantumEnd, QuantumRate};
use super::workload::lines_in_flight_per_core;
use crate::error::ConfigError;
use crate::mempath::CopyFlow;
use crate::mempath::{solve_fixed_point_from, FixedPoint, Source, TierCounters};

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
    /// One quantum's record from its solved fixed point.
    #[allow(clippy::too_many_arguments)]
    fn of(
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
    /// CPU time the policy's copy engine spent on migrations, ns (docs/tiering.md, *CPU cost*).
    pub copy_cpu_ns: f64,
    pub pages: PageTable,
    pub work: PolicyWork,
    /// The result after each of the kept quantum counts ([`run_quanta`]'s `keep_at`), by
    /// that count: the engine is causal (nothing in a quantum depends on how many follow),
    /// so each is the result of a run that long.
    pub prefixes: Vec<(u64, SimResult)>,
}

/// Closed-loop sources for the application (spread over tiers by `shares`) and the
/// antagonists (pinned to their tier).
pub(super) fn app_sources(
    d: &Demand,
    shares: &[f64],
    ant: &Antagonists,
    ant_cores: u32,
) -> Vec<Source> {
    let per_core = lines_in_flight_per_core(d.mlp, d.lines_per_access, ant.reads_per_core);
    // Behind caches, the accesses in flight spend the hit time between memory reads; when
    // nothing misses, none is in memory.
    let (reads, think_ns) = match d.cache.map(|c| c.think_ns()) {
        None => (d.cores as f64 * per_core, 0.0),
        Some(Some(think)) => (d.cores as f64 * per_core, think),
        Some(None) => (0.0, 0.0),
    };
    let mut s = vec![Source::Spread {
        share: shares.to_vec(),
        reads,
        read_fraction: d.read_fraction,
        think_ns,
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

/// The application's (first source's) reads per ns on each tier at a fixed point.
fn app_reads_per_ns(fp: &FixedPoint) -> impl Iterator<Item = f64> + '_ {
    fp.reads[0]
        .iter()
        .zip(&fp.tiers)
        .map(|(r, t)| if *r > 0.0 { r / t.latency_ns } else { 0.0 })
}

/// Application accesses per ns at a fixed point.
pub(super) fn app_accesses_per_ns(fp: &FixedPoint, lines_per_access: f64) -> f64 {
    app_reads_per_ns(fp).sum::<f64>() / lines_per_access
}

/// The quanta a run of `duration_s` simulates.
pub(super) fn quanta_of(duration_s: f64, quantum_s: f64) -> u64 {
    (duration_s / quantum_s).round().max(1.0) as u64
}

/// Where a run may end before its duration: after each of `at` quanta, if `done` says so
/// of the timeline so far (`sim.until_steady`: its measured window is steady). The engine
/// is causal, so a run that ends there is, to the bit, the run of that length.
pub(super) struct EarlyEnd<'a> {
    pub at: Vec<u64>,
    pub done: &'a dyn Fn(&[QuantumRecord]) -> bool,
}

/// Run `policy` for the scenario's duration on the accesses of `source`, also keeping the
/// result after each of `keep_at` quanta (in `prefixes`), and ending early where `end`
/// says. `None` when the pages do not fit in the tiers; errors come from the source (a
/// trace that fails to read).
pub(super) fn run_quanta(
    p: &SimParams,
    source: &mut dyn AccessSource,
    ant: &Antagonists,
    policy: &mut dyn TieringPolicy,
    keep_at: &[u64],
    end: Option<&EarlyEnd>,
) -> Result<Option<SimResult>, ConfigError> {
    let Some(mut pt) = source.place(p, policy) else {
        return Ok(None);
    };
    let n = p.tiers.len();
    let mut counters = TierCounters::new(n, p.ewma_alpha);
    let mut app_rate = vec![0.0; n];
    let quanta = quanta_of(p.duration_s, p.quantum_s);
    let quantum_ns = p.quantum_s * 1e9;
    let byte_cap = p.migrate_limit_gb_s.map(|g| (g * quantum_ns) as u64);
    let engine = policy.copy_engine();
    let open = vec![0.0; n];
    // Copy traffic of the migrations made at the end of the previous quantum.
    let mut flows: Vec<CopyFlow> = Vec::new();
    let mut samples = Vec::new();
    let mut subpages: Vec<u16> = Vec::new();
    let mut queue = MigrationQueue::default();
    let mut out = SimResult {
        timeline: Vec::with_capacity(quanta as usize),
        migrations: 0,
        migrated_bytes: 0,
        failed_migrations: 0,
        copy_cpu_ns: 0.0,
        pages: pt.clone(),
        work: Default::default(),
        prefixes: Vec::new(),
    };
    let mut last_latency: Vec<f64> = p.tiers.iter().map(|t| t.unloaded_latency_ns).collect();
    let mut reads_per_ns = vec![0.0; n];
    let mut memo: Option<(Vec<Source>, Vec<f64>, FixedPoint)> = None;
    for q in 0..quanta {
        let time_s = q as f64 * p.quantum_s;
        source.begin_quantum(time_s, &pt);
        let ant_cores = ant.cores_at(time_s);
        // Per quantum: a cache-filtered trace's demand follows its measured hit rates.
        let demand = source.demand();
        let mut srcs = app_sources(&demand, source.shares(), ant, ant_cores);
        if !flows.is_empty() {
            srcs.push(Source::Copy {
                flows: std::mem::take(&mut flows),
            });
        }
        // The fixed point is a function of the sources and the starting latencies alone:
        // between migrations a quantum often repeats the last one's inputs to the bit (the
        // iteration has reached its own fixed point), and then its answer.
        let fp = match &memo {
            Some((s, start, fp))
                if s.len() == srcs.len()
                    && s.iter().zip(&srcs).all(|(a, b)| a.same_bits(b))
                    && start
                        .iter()
                        .zip(&last_latency)
                        .all(|(a, b)| a.to_bits() == b.to_bits()) =>
            {
                fp.clone()
            }
            _ => {
                let fp = solve_fixed_point_from(&p.tiers, &srcs, &open, &last_latency);
                memo = Some((srcs.clone(), last_latency.clone(), fp.clone()));
                fp
            }
        };
        last_latency = fp.tiers.iter().map(|t| t.latency_ns).collect();
        counters.update(&fp);
        for ((rate, r), out) in app_rate
            .iter_mut()
            .zip(app_reads_per_ns(&fp))
            .zip(&mut reads_per_ns)
        {
            *out = r;
            *rate = if q == 0 {
                r
            } else {
                p.ewma_alpha * r + (1.0 - p.ewma_alpha) * *rate
            };
        }
        let acc_per_ns = match demand.cache {
            None => app_accesses_per_ns(&fp, demand.lines_per_access),
            Some(c) => c.accesses_per_ns(
                app_reads_per_ns(&fp).sum(),
                demand.cores as f64 * demand.mlp,
            ),
        };
        let gb_s = source.gb_s(acc_per_ns);
        samples.clear();
        subpages.clear();
        let period = policy.sample_period().unwrap_or(p.sample_period).max(1);
        let rate = QuantumRate {
            quantum: q,
            time_s,
            quantum_s: p.quantum_s,
            accesses_per_ns: acc_per_ns,
            sample_period: period,
        };
        let faults = source.accesses(&rate, &pt, &mut samples, &mut subpages)?;
        let lat: Vec<Option<f64>> = (0..n).map(|t| counters.latency_ns(t)).collect();
        // What the copy threads can move this quantum at its loaded latencies: swaps of
        // the policy's page size between the default tier and the first alternate tier.
        let alt = if n > 1 { 1 } else { 0 };
        let rate = engine.rate_gb_s(p.page_bytes, last_latency[alt], last_latency[DEFAULT_TIER]);
        let copy_bytes = ((rate * quantum_ns) as u64).min(byte_cap.unwrap_or(u64::MAX));
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
                migrate_budget_bytes: queue.budget_left(copy_bytes),
                hint_faults: &faults,
            },
            // The policy runs at the end of the quantum whose accesses it just saw.
            source.hardware(time_s + p.quantum_s),
        );
        queue.push(&pt, migs);
        let mut moved = vec![0u64; n];
        let budget = CopyBudget {
            engine: &engine,
            latency_ns: &last_latency,
            thread_ns: engine.threads as f64 * quantum_ns,
            byte_cap,
        };
        let d = queue.drain(&mut pt, &budget, &mut moved, |pt, page, from, to| {
            source.moved(pt, page, from, to)
        });
        out.migrations += d.migrations;
        out.failed_migrations += d.failed;
        out.migrated_bytes += d.bytes;
        out.copy_cpu_ns += d.cpu_ns;
        source.end_quantum(&QuantumEnd {
            quantum: q,
            quantum_s: p.quantum_s,
            pages: &pt,
            app_reads_per_ns: &reads_per_ns,
        });
        // Copies load the tiers during the next quantum as closed-loop streaming sources
        // (reads on the source tier, writes on the destination), with the lines in flight
        // of the thread time spent streaming, at most every thread's limit.
        let busy_ns: f64 = d.streaming_ns.iter().map(|s| s.2).sum();
        let scale = (budget.thread_ns / busy_ns.max(1e-300)).min(1.0);
        flows = d
            .streaming_ns
            .iter()
            .filter(|s| s.2 > 0.0)
            .map(|&(from, to, ns)| CopyFlow {
                from,
                to,
                lines: ns * scale / quantum_ns * engine.lines_in_flight,
            })
            .collect();
        out.timeline.push(QuantumRecord::of(
            time_s,
            gb_s,
            acc_per_ns,
            &fp,
            source.hot_share_default(),
            1.0 - source.shares()[DEFAULT_TIER],
            d.bytes,
            ant_cores,
        ));
        if keep_at.contains(&(q + 1)) {
            let kept = SimResult {
                timeline: out.timeline.clone(),
                migrations: out.migrations,
                migrated_bytes: out.migrated_bytes,
                failed_migrations: out.failed_migrations,
                copy_cpu_ns: out.copy_cpu_ns,
                pages: pt.clone(),
                work: policy.work(),
                prefixes: Vec::new(),
            };
            out.prefixes.push((q + 1, kept));
        }
        if end.is_some_and(|e| e.at.contains(&(q + 1)) && (e.done)(&out.timeline)) {
            break;
        }
    }
    out.pages = pt;
    out.work = policy.work();
    Ok(Some(out))
}
