//! Trace-driven mode: a stream of accesses as the per-quantum engine's access source (the
//! same engine, page table, migration queue and policies as statistical mode), so every
//! access of the stream updates page state. Per quantum the fixed
//! point (with last quantum's measured per-tier access shares) gives the application's
//! access rate; that many accesses are taken from the stream; each one counts towards its
//! tier, sets its page's accessed bit, raises a hint fault if its page is marked, and every
//! `period`-th load becomes a PEBS sample.
//!
//! A trace (not a generated stream) goes through CPU caches first ([`CacheFilter`]): every
//! access still sets its page's accessed bit and takes its hint fault (those are page-table
//! events), but only the misses count towards the tiers and PEBS (which samples LLC-miss
//! loads), and the next quantum's demand follows the measured hit rates and hit time.

use super::hint_faults::{HintFault, HintFaults};
use super::hw::PageHardware;
use super::pages::{PageTable, BASE_PAGE_BYTES};
use super::policy::{TieringPolicy, DEFAULT_TIER};
use super::quantum::{run_quanta, Antagonists, SimParams, SimResult};
use super::source::{AccessSource, CachedDemand, Demand, QuantumRate};
use super::stream::{Access, AccessStream};
use super::LINE_BYTES;
use crate::cache::filter::CacheFilter;
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

/// What the caches did with the accesses of one quantum, the demand of the next.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Measured {
    cached: CachedDemand,
    /// Share of the memory lines (reads + write-backs) that are reads.
    read_fraction: f64,
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
    /// When the policy runs (the end of the quantum whose accesses it just saw): the time
    /// `mark` stamps.
    now_s: f64,
}

const ACCESSED: u8 = 1;
const MARKED: u8 = 2;

impl TraceHardware {
    pub fn new(pages: u64) -> Self {
        TraceHardware {
            flags: vec![0; pages as usize],
            marked_at: vec![0.0; pages as usize],
            faults: Vec::new(),
            now_s: 0.0,
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

impl PageHardware for TraceHardware {
    fn mark(&mut self, page: u64) {
        let p = page as usize;
        if let Some(f) = self.flags.get_mut(p) {
            if *f & MARKED == 0 {
                *f |= MARKED;
                self.marked_at[p] = self.now_s;
            }
        }
    }

    fn test_and_clear_accessed(&mut self, page: u64) -> bool {
        self.flags.get_mut(page as usize).is_some_and(|f| {
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
    /// Accesses taken in each quantum, in order (what a run's measured window replayed).
    pub per_quantum: Vec<u64>,
}

/// A quantum's misses (memory reads) per tier, write-backs and total hit time.
#[derive(Default)]
struct Filtered {
    reads: u64,
    writebacks: u64,
    hit_ns: f64,
}

/// A stream replayed quantum by quantum.
struct StreamSource<'a> {
    demand: &'a StreamDemand,
    stream: &'a mut dyn AccessStream,
    hw: TraceHardware,
    splittable: bool,
    /// Accounting units per page (a split page's base pages move one by one).
    units: u64,
    /// Hot units per tier.
    hot: Vec<u64>,
    /// Access shares per tier measured last quantum (before the first: the placement's).
    shares: Vec<f64>,
    batch: Vec<Access>,
    /// Loads until the next PEBS sample (a countdown, as the PMU's counter).
    to_sample: f64,
    /// Fraction of a stream access carried to the next quantum, so none is lost.
    carry: f64,
    counts: ReplayCounts,
    /// The CPU caches a trace goes through (`None`: every access is a memory access).
    cache: Option<CacheFilter>,
    /// Before the first quantum nothing is measured: every access a miss (a cold cache).
    measured: Measured,
}

impl AccessSource for StreamSource<'_> {
    fn place(&mut self, p: &SimParams, policy: &mut dyn TieringPolicy) -> Option<PageTable> {
        let caps: Vec<u64> = p.tiers.iter().map(|t| t.capacity_bytes).collect();
        let n_pages = self.stream.pages();
        // A policy that splits huge pages (MEMTIS) gets a table in 4 KiB units; each access
        // carries its 4 KiB index, so samples name sub-pages and split pages resolve per
        // access.
        self.splittable = policy.splits_pages() && p.page_bytes > BASE_PAGE_BYTES;
        let pt = PageTable::place_with(n_pages, p.page_bytes, self.splittable, &caps, |pg| {
            policy.initial_tier(pg)
        })?;
        self.units = pt.units_per_page();
        let n = p.tiers.len();
        self.hw = TraceHardware::new(n_pages);
        self.counts.per_tier = vec![0; n];
        self.hot = vec![0; n];
        for pg in 0..n_pages {
            if self.stream.is_hot(pg) {
                self.hot[pt.tier(pg)] += self.units;
            }
        }
        self.shares = (0..n)
            .map(|t| pt.used_pages(t) as f64 / n_pages.max(1) as f64)
            .collect();
        Some(pt)
    }

    fn demand(&self) -> Demand {
        match self.cache {
            None => Demand {
                cores: self.demand.cores,
                mlp: self.demand.mlp,
                lines_per_access: self.demand.lines_per_access(),
                read_fraction: self.demand.read_fraction,
                cache: None,
            },
            // Behind caches an access is one line; its memory traffic is measured.
            Some(_) => Demand {
                cores: self.demand.cores,
                mlp: self.demand.mlp,
                lines_per_access: 1.0,
                read_fraction: self.measured.read_fraction,
                cache: Some(self.measured.cached),
            },
        }
    }

    fn gb_s(&self, accesses_per_ns: f64) -> f64 {
        match self.cache {
            None => {
                accesses_per_ns * self.demand.lines_per_access() * LINE_BYTES
                    / self.demand.read_fraction
            }
            // Memory traffic: the misses' reads and the dirty write-backs.
            Some(_) => {
                accesses_per_ns * self.measured.cached.misses_per_access * LINE_BYTES
                    / self.measured.read_fraction
            }
        }
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
        let weight = self.demand.weight;
        // Behind caches a PEBS event is one missing load of one line.
        let lines = match self.cache {
            None => self.demand.lines_per_access(),
            Some(_) => 1.0,
        };
        // Stream accesses this quantum (fractions carried, so none is lost).
        let want = r.accesses_per_ns * (r.quantum_s * 1e9) / weight + self.carry;
        let take = want.floor() as usize;
        self.carry = want - take as f64;
        self.batch.clear();
        self.stream.fill(take, &mut self.batch)?;
        let period = r.sample_period as f64;
        let mut per_tier = vec![0u64; self.shares.len()];
        let dt = if take > 0 {
            r.quantum_s / take as f64
        } else {
            0.0
        };
        let mut filtered = Filtered::default();
        let before = self.cache.as_ref().map(|c| c.traffic);
        for (i, a) in self.batch.iter().enumerate() {
            // Page-table events happen on every access, hit or miss.
            self.hw.access(a.page, r.time_s + i as f64 * dt);
            if let Some(c) = self.cache.as_mut() {
                if let Some(ns) = c.access(a.line, a.store) {
                    filtered.hit_ns += ns;
                    continue;
                }
            }
            let tier = if pt.is_split(a.page) {
                pt.tier(pt.base_id(a.page, u64::from(a.sub)))
            } else {
                pt.tier(a.page)
            };
            per_tier[tier] += 1;
            if a.load {
                // Each line of the object is one LLC-miss load for PEBS.
                self.to_sample -= weight * lines;
                while self.to_sample <= 0.0 {
                    samples.push(a.page);
                    if self.splittable {
                        subpages.push(a.sub);
                    }
                    self.to_sample += period;
                }
            }
        }
        self.counts.accesses += take as u64;
        self.counts.per_quantum.push(take as u64);
        self.counts.samples += samples.len() as u64;
        for (c, k) in self.counts.per_tier.iter_mut().zip(&per_tier) {
            *c += k;
        }
        let reaching: u64 = per_tier.iter().sum();
        if let (Some(c), Some(b)) = (self.cache.as_ref(), before) {
            filtered.reads = c.traffic.reads - b.reads;
            filtered.writebacks = c.traffic.writebacks - b.writebacks;
            if take > 0 {
                let lines = filtered.reads + filtered.writebacks;
                self.measured = Measured {
                    cached: CachedDemand {
                        misses_per_access: filtered.reads as f64 / take as f64,
                        hit_ns_per_access: filtered.hit_ns / take as f64,
                    },
                    read_fraction: if lines > 0 {
                        // The engine's floor on a read fraction (a write-back-only quantum).
                        (filtered.reads as f64 / lines as f64).max(0.05)
                    } else {
                        1.0
                    },
                };
            }
        }
        // Shares of the accesses that reached memory (all of them without caches); a
        // quantum whose accesses all hit keeps the last shares.
        if reaching > 0 {
            self.shares = per_tier
                .iter()
                .map(|&c| c as f64 / reaching as f64)
                .collect();
        }
        Ok(HintFaults::given(self.hw.take_faults()))
    }

    fn hardware(&mut self, now_s: f64) -> &mut dyn PageHardware {
        self.hw.now_s = now_s;
        &mut self.hw
    }

    fn moved(&mut self, pt: &PageTable, page: u64, from: usize, to: usize) {
        let (parent, size) = match pt.parent_of(page) {
            Some((h, _)) => (h, 1),
            None => (page, self.units),
        };
        if self.stream.is_hot(parent) {
            self.hot[from] -= size;
            self.hot[to] += size;
        }
    }

    fn hot_share_default(&self) -> f64 {
        if self.stream.hot_pages() > 0 {
            self.hot[DEFAULT_TIER] as f64 / (self.stream.hot_pages() * self.units) as f64
        } else {
            0.0
        }
    }
}

/// Run `policy` over `stream`. `None` if the stream's pages do not fit in the tiers.
pub fn simulate_stream(
    p: &SimParams,
    demand: &StreamDemand,
    stream: &mut dyn AccessStream,
    ant: &Antagonists,
    policy: &mut dyn TieringPolicy,
) -> Result<Option<(SimResult, ReplayCounts)>, ConfigError> {
    simulate_stream_cached(p, demand, stream, None, ant, policy).map(|r| r.map(|(r, c, _)| (r, c)))
}

/// [`simulate_stream`] with the stream's accesses going through `cache` first (a trace's
/// loads and stores; `None`: each access is a memory access). Returns the filter too, for
/// its hit rates.
pub fn simulate_stream_cached(
    p: &SimParams,
    demand: &StreamDemand,
    stream: &mut dyn AccessStream,
    cache: Option<CacheFilter>,
    ant: &Antagonists,
    policy: &mut dyn TieringPolicy,
) -> Result<Option<(SimResult, ReplayCounts, Option<CacheFilter>)>, ConfigError> {
    let mut source = StreamSource {
        demand,
        stream,
        hw: TraceHardware::new(0),
        splittable: false,
        units: 1,
        hot: Vec::new(),
        shares: Vec::new(),
        batch: Vec::new(),
        to_sample: 0.0,
        carry: 0.0,
        counts: ReplayCounts::default(),
        cache,
        measured: Measured {
            cached: CachedDemand {
                misses_per_access: 1.0,
                hit_ns_per_access: 0.0,
            },
            read_fraction: demand.read_fraction,
        },
    };
    let r = run_quanta(p, &mut source, ant, policy, &[], None)?;
    Ok(r.map(|r| (r, source.counts, source.cache)))
}
