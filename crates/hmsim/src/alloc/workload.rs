//! Allocation request streams: replay of a kmem trace and a synthetic generator.
//!
//! A workload is one list of requests in time order; each carries the CPU that issues it
//! and a block id. An `Alloc` defines its id; a `Free` names the id of an earlier `Alloc`.
//! The simulated allocator picks its own frames, so trace pfns are only used to pair a
//! free with its allocation: they are remapped to whatever block the simulated allocator
//! handed out for that id.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{MAX_CPUS, MAX_ORDER};
use crate::config::{Validate, Validator};
use crate::error::ConfigError;
use crate::hash::FastMap;
use crate::trace::{gfp, open_trace, Kind, KMEM_PAGE_BYTES, NO_ID, NO_TIME};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocOp {
    Alloc { order: u8 },
    Free,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Req {
    pub ts_ns: u64,
    pub cpu: u16,
    pub id: u32,
    pub op: AllocOp,
}

/// A request stream and what was dropped while building it.
#[derive(Debug, Clone, Default)]
pub struct AllocWorkload {
    pub name: String,
    pub reqs: Vec<Req>,
    /// Number of block ids used (ids are `0..blocks`).
    pub blocks: u32,
    /// Distinct CPUs (ids `0..cpus`).
    pub cpus: u16,
    /// Time of the last request (ns from the first).
    pub duration_ns: u64,
    /// Trace frees of blocks allocated before the trace started (or of pages inside a
    /// larger allocated block): skipped.
    pub skipped_frees: u64,
    /// Trace frees whose order differs from the allocation at that pfn: skipped (the
    /// block stays allocated).
    pub order_mismatch_frees: u64,
    /// Trace allocations at a pfn the trace never freed (a lost free): the earlier block
    /// stays allocated in the simulation.
    pub allocs_over_live: u64,
    /// Trace allocations above order 10: skipped.
    pub orders_above_max: u64,
    /// Migratetype per block id (traces); empty = every request movable.
    pub alloc_mt: Vec<u8>,
}

impl AllocWorkload {
    /// The most frames the workload holds at once if every allocation succeeds: the memory
    /// an array needs for none of its allocations to fail for want of frames (fragmentation
    /// may still fail some).
    pub fn peak_live_frames(&self) -> u64 {
        const NOT_HELD: u8 = u8::MAX;
        let mut held = vec![NOT_HELD; self.blocks as usize];
        let (mut live, mut peak) = (0u64, 0u64);
        for q in &self.reqs {
            let h = &mut held[q.id as usize];
            match q.op {
                AllocOp::Alloc { order } => {
                    *h = order;
                    live += 1 << order;
                    peak = peak.max(live);
                }
                // As the replay does: a free of a block not held frees nothing.
                AllocOp::Free if *h != NOT_HELD => live -= 1 << std::mem::replace(h, NOT_HELD),
                AllocOp::Free => {}
            }
        }
        peak
    }
}

/// Which kernel's requests a trace replay issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Kernel {
    /// As recorded.
    #[default]
    #[serde(rename = "as-recorded")]
    AsRecorded,
    /// As Linux 2.6.32 (the study's kernel) would have asked: see [`split_in_2_6_32`].
    #[serde(rename = "2.6.32")]
    Linux2632,
}

/// Whether a recorded multi-page request was a run of single pages in Linux 2.6.32.
/// Two 6.x allocations are opportunistic high-order attempts with an order-0 fallback:
/// socket page-frag refills (`skb_page_frag_refill`: order 3 since 3.x, compound,
/// `__GFP_NORETRY` and no warning — printed as `GFP_NOWAIT|__GFP_COMP|__GFP_NORETRY` or
/// with `__GFP_NOWARN`; 2.6.32 filled socket buffers with single pages) and page-cache
/// large folios (readahead: compound and movable). 2.6.32 had neither, so each is 2^order
/// order-0 requests there. Other multi-page requests (slab pages, stacks, huge pages) are
/// kept.
pub fn split_in_2_6_32(order: u8, flags: u32) -> bool {
    let quiet = flags & (gfp::NOWARN | gfp::NOWAIT) != 0;
    let page_frag = order == 3 && flags & gfp::COMP != 0 && flags & gfp::NORETRY != 0 && quiet;
    let folio = flags & gfp::COMP != 0
        && flags & (gfp::HIGHUSER_MOVABLE | gfp::MOVABLE) != 0
        && flags & gfp::TRANSHUGE == 0
        && flags & gfp::TRANSHUGE_LIGHT == 0;
    order > 0 && (page_frag || folio)
}

/// Read a kmem trace (`Alloc`/`Free` records; others ignored). Traced CPU ids become
/// dense ids `0..cpus` in order of first appearance; timestamps are made relative to the
/// first record and non-decreasing (a record without time takes the previous one's).
pub fn from_trace(path: &Path, file: &str, key: &str) -> Result<AllocWorkload, ConfigError> {
    from_trace_as(path, file, key, Kernel::AsRecorded)
}

/// [`from_trace`], issuing the requests `kernel` would have made: with
/// [`Kernel::Linux2632`] a request [`split_in_2_6_32`] recognises becomes 2^order order-0
/// requests at its time (and its free 2^order frees).
pub fn from_trace_as(
    path: &Path,
    file: &str,
    key: &str,
    kernel: Kernel,
) -> Result<AllocWorkload, ConfigError> {
    let reader = open_trace(path, None).map_err(|e| {
        ConfigError::new(
            file,
            key,
            format!("cannot read trace '{}': {e}", path.display()),
        )
    })?;
    let mut w = AllocWorkload {
        name: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        ..Default::default()
    };
    let mut cpu_map: FastMap<u16, u16> = FastMap::default();
    // pfn → (first block id, recorded order, issued as 2^order single pages).
    let mut live: FastMap<u64, (u32, u8, bool)> = FastMap::default();
    let (mut t0, mut last) = (None, 0u64);
    for r in reader {
        let r = r.map_err(|e| ConfigError::new(file, key, format!("trace error: {e}")))?;
        if r.kind != Kind::Alloc && r.kind != Kind::Free {
            continue;
        }
        let ts = if r.timestamp_ns == NO_TIME {
            last
        } else {
            let t0 = *t0.get_or_insert(r.timestamp_ns);
            r.timestamp_ns.saturating_sub(t0).max(last)
        };
        last = ts;
        let traced = if r.cpu == NO_ID { 0 } else { r.cpu };
        let n = cpu_map.len();
        let cpu = *cpu_map.entry(traced).or_insert(n as u16);
        if cpu as usize >= MAX_CPUS {
            return Err(ConfigError::new(
                file,
                key,
                format!("trace uses more than {MAX_CPUS} CPUs"),
            ));
        }
        let pfn = r.address / KMEM_PAGE_BYTES;
        if r.kind == Kind::Alloc {
            if r.order > MAX_ORDER {
                w.orders_above_max += 1;
                continue;
            }
            let split = kernel == Kernel::Linux2632 && split_in_2_6_32(r.order, r.gfp);
            let (n, order) = if split {
                (1u32 << r.order, 0)
            } else {
                (1, r.order)
            };
            let id = w.blocks;
            w.blocks += n;
            if live.insert(pfn, (id, r.order, split)).is_some() {
                w.allocs_over_live += 1;
            }
            for i in 0..n {
                w.alloc_mt.push(r.migratetype);
                w.reqs.push(Req {
                    ts_ns: ts,
                    cpu,
                    id: id + i,
                    op: AllocOp::Alloc { order },
                });
            }
        } else {
            match live.get(&pfn) {
                Some(&(id, o, split)) if o == r.order => {
                    live.remove(&pfn);
                    let n = if split { 1u32 << o } else { 1 };
                    for i in 0..n {
                        w.reqs.push(Req {
                            ts_ns: ts,
                            cpu,
                            id: id + i,
                            op: AllocOp::Free,
                        });
                    }
                }
                Some(_) => w.order_mismatch_frees += 1,
                None => w.skipped_frees += 1,
            }
        }
    }
    w.cpus = cpu_map.len().max(1) as u16;
    w.duration_ns = last;
    Ok(w)
}

/// Most allocations a synthetic stream may make (its requests take 24 bytes each, two per
/// allocation).
pub const MAX_ALLOCS: u32 = 20_000_000;

/// A synthetic allocation stream: per thread, bursts of allocations (a process or a
/// compile job starting up) separated by idle gaps. With `cohorts` (the default) a burst
/// is a cohort: it draws one short or long exponential lifetime, and each of its blocks
/// joins the cohort with probability `cohort_fraction`; the members die together when
/// that lifetime ends (as at exit or munmap), one after another with exponential gaps of
/// mean `cohort_free_gap_ns`, in allocation order. A `handoff_fraction` of the blocks
/// are buffers replaced before they are dropped: each is freed `handoff_gap_ns` (mean,
/// exponential) after its thread's next allocation, and joins no cohort. The other blocks,
/// and every block without `cohorts`, live their own short or long lifetime. Everything is freed in the
/// end (the stream runs until the last block is freed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Synthetic {
    /// Threads (CPUs) issuing requests.
    pub threads: u32,
    /// Allocation requests per thread (each is later freed: 2 requests per block).
    pub allocs_per_thread: u32,
    /// Probability of each order 0, 1, 2, …; normalised; at most 11 entries.
    pub order_mix: Vec<f64>,
    /// Mean allocations per burst (geometric).
    pub burst_allocs_mean: f64,
    /// Mean gap between allocations inside a burst (exponential), ns.
    pub burst_gap_ns: f64,
    /// Mean gap between bursts (exponential), ns.
    pub idle_gap_ns: f64,
    /// Fraction of blocks with the short lifetime.
    pub short_lived_fraction: f64,
    /// Mean short lifetime (exponential), ns.
    pub short_life_ns: f64,
    /// Mean long lifetime (exponential), ns.
    pub long_life_ns: f64,
    /// Bursts die as cohorts; `false`: every block has an independent lifetime.
    pub cohorts: bool,
    /// Probability that a block belongs to its burst's cohort.
    pub cohort_fraction: f64,
    /// Mean gap between consecutive frees of a cohort (exponential), ns.
    pub cohort_free_gap_ns: f64,
    /// Mean short lifetime of a cohort, from its burst's first allocation to its first
    /// free (exponential), ns.
    pub cohort_short_life_ns: f64,
    /// Mean consecutive bursts of a thread that share one cohort (geometric; a process
    /// allocates in several bursts and frees them all at exit).
    pub cohort_bursts_mean: f64,
    /// Fraction of blocks released once their thread's next allocation is made (a buffer
    /// replaced, then dropped: a socket's page-frag refill); they join no cohort.
    pub handoff_fraction: f64,
    /// Mean time from the replacement's allocation to the release (exponential), ns.
    pub handoff_gap_ns: f64,
}

impl Default for Synthetic {
    /// Shaped like the compiler runs of a kernel compile: every number is taken from the
    /// committed trace `gcc.kmem.hmt` (one `gcc -O2 -c`, 110 ms, 9 722 allocations):
    /// orders 94 % 0 and 6 % 2; gaps inside bursts average 2.9 µs and the 78 gaps of
    /// ≥ 100 µs average 1.05 ms, so 9 722 / 78 ≈ 125 allocations per burst; 13 % of the
    /// blocks are freed within the run, with a median lifetime of 11.5 ms (an exponential
    /// of mean 16.6 ms has that median); the rest live until the compiler exits, about the
    /// 110 ms of the run. 97 % of the blocks die with their burst's cohort (the largest
    /// group of its blocks freed together, or still live at the end), and a cohort's frees
    /// follow each other every 1.8 µs; a run of frees holds the blocks of 6.4 bursts, and a
    /// cohort's median life is 8.9 ms (exponential mean 12.8 ms) ([`super::cohort::measure`]).
    /// 0.04 % of the blocks are freed right after the next allocation (a hand-off, here by
    /// coincidence), 211 µs after it.
    fn default() -> Self {
        Synthetic {
            threads: 4,
            allocs_per_thread: 50_000,
            order_mix: vec![0.94, 0.0, 0.06],
            burst_allocs_mean: 125.0,
            burst_gap_ns: 2_900.0,
            idle_gap_ns: 1_050_000.0,
            short_lived_fraction: 0.13,
            short_life_ns: 16_600_000.0,
            long_life_ns: 110_000_000.0,
            cohorts: true,
            cohort_fraction: 0.97,
            cohort_free_gap_ns: 1_800.0,
            cohort_short_life_ns: 12_800_000.0,
            cohort_bursts_mean: 6.36,
            handoff_fraction: 0.0004,
            handoff_gap_ns: 211_000.0,
        }
    }
}

impl Validate for Synthetic {
    fn validate(&self, v: &mut Validator) {
        v.range("threads", self.threads, 1, MAX_CPUS as u32, "");
        v.range(
            "allocs_per_thread",
            self.allocs_per_thread,
            1,
            MAX_ALLOCS,
            "",
        );
        let total = self.threads as u64 * self.allocs_per_thread as u64;
        if total > MAX_ALLOCS as u64 {
            v.fail(
                "allocs_per_thread",
                format!("threads × allocs_per_thread = {total}; allowed up to {MAX_ALLOCS} in all"),
            );
        }
        if self.order_mix.is_empty() || self.order_mix.len() > MAX_ORDER as usize + 1 {
            v.fail(
                "order_mix",
                format!(
                    "{} entries; allowed 1 to {} (orders 0 to {MAX_ORDER})",
                    self.order_mix.len(),
                    MAX_ORDER + 1
                ),
            );
        }
        for (i, p) in self.order_mix.iter().enumerate() {
            v.non_negative(&format!("order_mix.{i}"), *p, "probability weight");
        }
        if self.order_mix.iter().sum::<f64>() <= 0.0 {
            v.fail(
                "order_mix",
                "weights sum to zero; give at least one positive",
            );
        }
        v.range("burst_allocs_mean", self.burst_allocs_mean, 1.0, 1e9, "");
        v.non_negative("burst_gap_ns", self.burst_gap_ns, "ns");
        v.non_negative("idle_gap_ns", self.idle_gap_ns, "ns");
        v.fraction("short_lived_fraction", self.short_lived_fraction);
        v.non_negative("short_life_ns", self.short_life_ns, "ns");
        v.non_negative("long_life_ns", self.long_life_ns, "ns");
        v.fraction("cohort_fraction", self.cohort_fraction);
        v.non_negative("cohort_free_gap_ns", self.cohort_free_gap_ns, "ns");
        v.non_negative("cohort_short_life_ns", self.cohort_short_life_ns, "ns");
        v.range("cohort_bursts_mean", self.cohort_bursts_mean, 1.0, 1e9, "");
        v.fraction("handoff_fraction", self.handoff_fraction);
        v.non_negative("handoff_gap_ns", self.handoff_gap_ns, "ns");
    }
}

fn exp(rng: &mut impl Rng, mean: f64) -> u64 {
    if mean <= 0.0 {
        return 0;
    }
    let u: f64 = rng.random();
    (-(1.0 - u).ln() * mean) as u64
}

/// Geometric on 1, 2, … with mean `mean` (≥ 1).
fn geometric(rng: &mut impl Rng, mean: f64) -> u64 {
    let p = 1.0 / mean;
    if p >= 1.0 {
        return 1;
    }
    let u: f64 = rng.random();
    1 + ((1.0 - u).ln() / (1.0 - p).ln()) as u64
}

impl Synthetic {
    /// Geometric burst length with mean `burst_allocs_mean` (≥ 1).
    fn burst_len(&self, rng: &mut impl Rng) -> u64 {
        geometric(rng, self.burst_allocs_mean)
    }

    /// A short or a long exponential lifetime, short with probability
    /// `short_lived_fraction`.
    fn lifetime(&self, rng: &mut impl Rng) -> u64 {
        let short = rng.random::<f64>() < self.short_lived_fraction;
        exp(
            rng,
            if short {
                self.short_life_ns
            } else {
                self.long_life_ns
            },
        )
    }

    /// A cohort's lifetime: short (`cohort_short_life_ns`) with probability
    /// `short_lived_fraction`, else long.
    fn cohort_lifetime(&self, rng: &mut impl Rng) -> u64 {
        let short = rng.random::<f64>() < self.short_lived_fraction;
        exp(
            rng,
            if short {
                self.cohort_short_life_ns
            } else {
                self.long_life_ns
            },
        )
    }

    pub fn generate(&self, seed: u64, name: &str) -> AllocWorkload {
        let total: f64 = self.order_mix.iter().sum();
        let mut cdf = Vec::new();
        let mut acc = 0.0;
        for p in &self.order_mix {
            acc += p / total;
            cdf.push(acc);
        }
        let mut reqs = Vec::new();
        for t in 0..self.threads {
            let mut rng = crate::rng::stream(seed, &format!("alloc.workload.t{t}"));
            let base = t * self.allocs_per_thread;
            let mut heap: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
            let (mut next_alloc, mut made) = (0u64, 0u32);
            let mut burst_left = self.burst_len(&mut rng);
            // The current cohort: when it dies (drawn at its first burst's first
            // allocation), when its latest member is freed, and how many more bursts
            // join it.
            let (mut cohort_death, mut last_member_free) = (None::<u64>, None::<u64>);
            let mut cohort_bursts_left = 0u64;
            // Blocks waiting for their replacement's allocation.
            let mut handoff: Vec<u32> = Vec::new();
            loop {
                let alloc_due = (made < self.allocs_per_thread).then_some(next_alloc);
                match (heap.peek(), alloc_due) {
                    (Some(&Reverse((d, id))), a) if a.is_none_or(|a| d <= a) => {
                        heap.pop();
                        reqs.push(Req {
                            ts_ns: d,
                            cpu: t as u16,
                            id,
                            op: AllocOp::Free,
                        });
                    }
                    (_, Some(at)) => {
                        let u: f64 = rng.random();
                        let order = cdf.iter().position(|&c| u < c).unwrap_or(cdf.len() - 1);
                        let id = base + made;
                        made += 1;
                        reqs.push(Req {
                            ts_ns: at,
                            cpu: t as u16,
                            id,
                            op: AllocOp::Alloc { order: order as u8 },
                        });
                        for h in handoff.drain(..) {
                            heap.push(Reverse((at + exp(&mut rng, self.handoff_gap_ns), h)));
                        }
                        // The thread's last block has no replacement: it lives its own life.
                        let hands_off = made < self.allocs_per_thread
                            && rng.random::<f64>() < self.handoff_fraction;
                        let death = if hands_off {
                            handoff.push(id);
                            None
                        } else if self.cohorts {
                            let d0 = match cohort_death {
                                // Alive: this allocation may join it.
                                Some(d) if d > at => d,
                                _ => {
                                    cohort_bursts_left =
                                        geometric(&mut rng, self.cohort_bursts_mean) - 1;
                                    last_member_free = None;
                                    at + self.cohort_lifetime(&mut rng)
                                }
                            };
                            cohort_death = Some(d0);
                            if rng.random::<f64>() < self.cohort_fraction {
                                // Members leave in allocation order, one gap apart, none
                                // before it was allocated.
                                let d = match last_member_free {
                                    None => d0,
                                    Some(p) => p + exp(&mut rng, self.cohort_free_gap_ns),
                                }
                                .max(at);
                                last_member_free = Some(d);
                                Some(d)
                            } else {
                                Some(at + self.lifetime(&mut rng))
                            }
                        } else {
                            Some(at + self.lifetime(&mut rng))
                        };
                        if let Some(death) = death {
                            heap.push(Reverse((death, id)));
                        }
                        burst_left -= 1;
                        if burst_left == 0 {
                            burst_left = self.burst_len(&mut rng);
                            if cohort_bursts_left == 0 {
                                cohort_death = None;
                            } else {
                                cohort_bursts_left -= 1;
                            }
                            next_alloc = at + exp(&mut rng, self.idle_gap_ns);
                        } else {
                            next_alloc = at + exp(&mut rng, self.burst_gap_ns);
                        }
                    }
                    (None, None) => break,
                    _ => unreachable!(),
                }
            }
        }
        // Stable: each thread's own order survives equal timestamps.
        reqs.sort_by_key(|r| r.ts_ns);
        let duration_ns = reqs.last().map_or(0, |r| r.ts_ns);
        AllocWorkload {
            name: name.to_string(),
            reqs,
            blocks: self.threads * self.allocs_per_thread,
            cpus: self.threads as u16,
            duration_ns,
            ..Default::default()
        }
    }
}
