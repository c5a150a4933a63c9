//! Application model: a memory-bound program as a streaming phase and a random phase over
//! its footprint; each phase's throughput comes from the tier engine's loaded-latency fixed
//! point over the nodes (or Memory Mode hit/miss paths) its pages landed on.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::config::Validator;
use crate::error::ConfigError;
use crate::mempath::{
    solve_fixed_point, LatencyCurve, Source, TierSpec, ANTAGONIST_READS_PER_CORE, GUPS_MLP,
    QUEUE_COEFF,
};

use super::cost::{backing_bandwidth, SwapSpec};
use super::mmcache::{steady_state, MemoryModePattern, MemoryModeSpec, SimCounts};
use super::placer::Placement;
use super::pool::Pool;
use super::topology::NumaMachine;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AppKind {
    /// No application run (allocation only).
    None,
    /// SuperPi/FFT-like: mostly streaming passes with a random (butterfly) share.
    Superpi,
    /// STREAM triad: 2 reads + 1 write per element, all sequential.
    Stream,
    /// GUPS: random 64 B read-modify-writes.
    Gups,
    /// Mix (read and random fractions, traffic per footprint byte) measured from a trace.
    Trace,
}

crate::params! {
    #[params(check)]
    /// The application run over the allocation.
    #[derive(Debug, Clone)]
    pub struct AppSpec {
        pub kind: AppKind = AppKind::None => any, "",
            "Application: `none` (allocation only), `superpi`, `stream`, `gups` or `trace`.";
        pub threads: u32 = 1 => range(1, 4096), "threads", "Application threads.";
        // A pass streams the whole footprint: 10^6 of them is days of simulated time.
        pub passes: f64 = 10.0 => range(0.0, 1e6), "footprints",
            "Bytes moved ÷ footprint bytes; above zero.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub random_fraction: Option<f64> = None => fraction, "",
            "Share of traffic in the random phase; default by kind (superpi 0.3, stream 0, gups 1).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub read_fraction: Option<f64> = None => range(0.05, 1.0), "",
            "Share of line traffic that is reads; default by kind (superpi/stream 2/3, gups 0.5).";
        pub stream_mlp: f64 = ANTAGONIST_READS_PER_CORE => positive, "lines",
            "Lines in flight per thread while streaming (prefetchers); default the tier engine's fitted per-core streaming value.";
        pub random_mlp: f64 = GUPS_MLP => positive, "lines",
            "Lines in flight per thread on random accesses; default the tier engine's GUPS value.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub trace: Option<String> = None => any, "",
            "Trace (any format the trace reader knows), relative to the scenario file; needs `kind = \"trace\"`.";
    }
}

impl AppSpec {
    fn check(&self, v: &mut Validator) {
        v.positive("passes", self.passes, "footprints");
        if (self.kind == AppKind::Trace) != self.trace.is_some() {
            v.fail(
                "trace",
                "kind = \"trace\" needs trace = \"path\", and trace needs kind = \"trace\"",
            );
        }
    }
}

/// The mix the model runs: fractions and traffic per footprint byte.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mix {
    pub random_fraction: f64,
    pub read_fraction: f64,
    pub passes: f64,
}

impl AppSpec {
    pub fn mix(&self) -> Mix {
        let (r, rf) = match self.kind {
            AppKind::Superpi => (0.3, 2.0 / 3.0),
            AppKind::Stream => (0.0, 2.0 / 3.0),
            AppKind::Gups => (1.0, 0.5),
            AppKind::None | AppKind::Trace => (0.0, 1.0),
        };
        Mix {
            random_fraction: self.random_fraction.unwrap_or(r),
            read_fraction: self.read_fraction.unwrap_or(rf),
            passes: self.passes,
        }
    }
}

/// What filtering a trace through the CPU caches found (for the run's warnings).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TraceFilter {
    /// Loads and stores in the trace.
    pub accesses: u64,
    /// Lines read from memory plus dirty lines written back.
    pub memory_lines: u64,
    /// Distinct 4 KiB pages touched, in bytes.
    pub footprint_bytes: u64,
    pub llc_bytes: u64,
}

/// Measure a trace's mix with the one trace reader, behind the one cache model (the study
/// machine's Cascade Lake caches, `CacheConfig::default()`): only the lines the caches let
/// through — misses read from memory and dirty lines written back — are memory traffic.
/// Reads vs write-backs; memory accesses that do not continue a sequential run (within
/// 128 B after the previous one) count as random; traffic per distinct 4 KiB page touched.
/// A trace the caches absorb entirely keeps the mix of its records (and its traffic is 0).
pub(super) fn trace_mix(
    path: &std::path::Path,
    file: &str,
) -> Result<(Mix, TraceFilter), ConfigError> {
    let caches = crate::cache::CacheConfig::default();
    let model = crate::cache::filter::TraceCacheModel {
        l1: caches.l1,
        l2: caches.l2,
        llc: caches.llc,
        replacement: caches.replacement,
        ..Default::default()
    };
    let mut filter = crate::cache::filter::CacheFilter::new(&model, 1);
    let mut r = crate::trace::open_trace(path, None).map_err(ConfigError::from)?;
    let mut batch = Vec::new();
    // (reads, writes, random) over the records, and over the memory reads.
    let (mut all, mut mem) = ([0u64; 3], [0u64; 3]);
    let (mut last, mut last_mem) = (u64::MAX, u64::MAX);
    let mut pages = BTreeSet::new();
    let continues = |a: u64, prev: u64| a >= prev && a <= prev.saturating_add(128);
    while r.read_batch(&mut batch, 4096).map_err(ConfigError::from)? > 0 {
        for rec in &batch {
            let (rd, wr) = (rec.kind.is_read(), rec.kind.is_write());
            if !rd && !wr {
                continue;
            }
            all[0] += rd as u64;
            all[1] += wr as u64;
            all[2] += !continues(rec.address, last) as u64;
            last = rec.address;
            pages.insert(rec.address >> 12);
            if filter.access(rec.address >> 6, wr).is_none() {
                mem[2] += !continues(rec.address, last_mem) as u64;
                last_mem = rec.address;
            }
        }
    }
    let n = all[0] + all[1];
    if n == 0 {
        return Err(ConfigError::new(
            file,
            "app.trace",
            "the trace has no loads or stores",
        ));
    }
    mem[0] = filter.traffic.reads;
    mem[1] = filter.traffic.writebacks;
    let lines = mem[0] + mem[1];
    let footprint_bytes = pages.len() as u64 * 4096;
    // Each access that misses reads its line from memory (stores allocate), so the memory
    // reads are the accesses that missed.
    let (random_fraction, read_fraction) = if mem[0] > 0 {
        (mem[2] as f64 / mem[0] as f64, mem[0] as f64 / lines as f64)
    } else {
        (all[2] as f64 / n as f64, all[0] as f64 / n as f64)
    };
    Ok((
        Mix {
            random_fraction: random_fraction.min(1.0),
            read_fraction: read_fraction.max(0.05),
            passes: lines as f64 * 64.0 / footprint_bytes as f64,
        },
        TraceFilter {
            accesses: n,
            memory_lines: lines,
            footprint_bytes,
            llc_bytes: filter.llc_bytes(),
        },
    ))
}

/// What the application run produced.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct AppResult {
    pub runtime_ns: f64,
    /// Bytes moved ÷ memory time (swap faults excluded).
    pub bandwidth_gb_s: f64,
    /// Access-weighted loaded latency of the random phase (or the stream if none).
    pub latency_ns: f64,
    /// Access-weighted idle latency of random / sequential reads where the pages are.
    pub idle_latency_ns: f64,
    pub idle_seq_latency_ns: f64,
    /// Share of 64 B accesses that hit a Memory Mode DRAM cache (`None`: no cache).
    pub cache_hit_ratio: Option<f64>,
    /// Bytes read from / written to far memory (incl. Memory Mode fills and write-backs).
    pub far_read_bytes: f64,
    pub far_write_bytes: f64,
    pub swap_ns: f64,
}

struct Tier {
    spec: TierSpec,
    share: f64,
    far: bool,
    remote: bool,
    /// PMem (read, written) bytes per 64 B access served here: a Memory Mode miss fills a
    /// whole block and writes back a dirty victim.
    far_bytes: (f64, f64),
    /// DRAM bytes per 64 B access this tier adds to the hit tier it `fills` (tag probe +
    /// fill).
    fill_bytes: f64,
    /// Index of the tier that receives this tier's fills (Memory Mode DRAM cache).
    fills: Option<usize>,
}

fn tier(name: String, lat: f64, bw: f64, mix_penalty: f64) -> TierSpec {
    TierSpec {
        name,
        capacity_bytes: 0,
        unloaded_latency_ns: lat,
        read_bandwidth_gb_s: bw,
        write_bandwidth_gb_s: None,
        mix_penalty,
        queue_coeff: QUEUE_COEFF,
        curve: LatencyCurve::mess(),
        path: Vec::new(),
    }
}

/// Steady-state Memory Mode cache counts of each pool node holding pages (None: no cache),
/// for a pattern, from the one cache model.
fn cache_counts(
    pool: &Pool,
    pl: &Placement,
    pattern: MemoryModePattern,
    rf: f64,
    mm: &MemoryModeSpec,
    seed: u64,
) -> Vec<Option<SimCounts>> {
    pl.pages
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let n = &pool.nodes[i];
            (p > 0 && n.cache_bytes > 0).then(|| {
                let mut rng = crate::rng::stream(seed, &format!("numa-mm-{i}-{pattern:?}"));
                steady_state(
                    pattern,
                    mm,
                    p,
                    n.cache_bytes / pool.page_bytes,
                    n.budget.managed_bytes / pool.page_bytes,
                    rf,
                    &mut rng,
                )
            })
        })
        .collect()
}

/// The tiers one phase sees: a path per node its pages are on, split into hit and miss
/// paths on Memory Mode nodes (`counts`: the cache model's steady state per node).
#[allow(clippy::too_many_arguments)]
fn tiers(
    m: &NumaMachine,
    pool: &Pool,
    pl: &Placement,
    socket: usize,
    pattern: MemoryModePattern,
    rf: f64,
    mm: &MemoryModeSpec,
    counts: &[Option<SimCounts>],
) -> (Vec<Tier>, Option<f64>) {
    let resident: u64 = pl.pages.iter().sum();
    let mut out = Vec::new();
    let (mut hits, mut cached) = (0.0, 0.0);
    for (i, &p) in pl.pages.iter().enumerate() {
        if p == 0 {
            continue;
        }
        let n = &pool.nodes[i];
        let share = p as f64 / resident as f64;
        let path = m.path(socket, n.topo);
        let lat = |pa: &super::topology::Path| match pattern {
            MemoryModePattern::Stream => pa.read_latency_ns,
            MemoryModePattern::Random => pa.random_read_latency_ns,
        };
        let media = m.nodes[n.topo].media;
        if n.cache_bytes == 0 {
            out.push(Tier {
                spec: tier(
                    format!("node{i}"),
                    lat(&path),
                    path.mixed_bandwidth_gb_s(rf),
                    media.mix_penalty,
                ),
                share,
                remote: path.remote,
                far: !n.cpu || m.nodes[n.topo].kind == super::topology::NodeKind::Far,
                far_bytes: (rf, 1.0 - rf),
                fill_bytes: 0.0,
                fills: None,
            });
            continue;
        }
        let c = counts[i].unwrap_or_default();
        let h = c.hit_ratio();
        // Victims written back per fill.
        let dirty = if c.fills > 0 {
            c.writebacks as f64 / c.fills as f64
        } else {
            0.0
        };
        hits += share * h;
        cached += share;
        let hit_idx = out.len();
        // A hit costs the DRAM path; a write hit first reads the slot to check its tag
        // (the tag lives beside the data), so writes move twice the DRAM bytes
        // (Hildebrand et al., ISPASS 2021).
        let hit_bw = 1.0
            / (rf / path.read_bandwidth_gb_s
                + (1.0 - rf) * (1.0 / path.read_bandwidth_gb_s + 1.0 / path.write_bandwidth_gb_s));
        out.push(Tier {
            spec: tier(
                format!("node{i}-cache"),
                lat(&path),
                hit_bw,
                media.mix_penalty,
            ),
            share: share * h,
            remote: path.remote,
            far: false,
            far_bytes: (0.0, 0.0),
            fill_bytes: 0.0,
            fills: None,
        });
        // A miss probes the DRAM tag, then reads the block from the controller's PMem.
        let f = &m.nodes[n.backing[0]];
        let far_path = m.path(socket, f.id);
        // Each miss reads a block from PMem and writes back a dirty victim (`dirty` per
        // fill), on the controller's modules, interleaved.
        let (r, w) = backing_bandwidth(m, socket, &n.backing);
        let amp = mm.block_bytes as f64 / 64.0;
        let bw = 1.0 / (amp * (1.0 / r + dirty / w));
        out.push(Tier {
            spec: tier(
                format!("node{i}-miss"),
                lat(&path) + lat(&far_path)
                    - if far_path.remote {
                        m.spec.interconnect.remote_extra_latency_ns
                    } else {
                        0.0
                    },
                bw,
                f.media.mix_penalty,
            ),
            share: share * (1.0 - h),
            remote: path.remote,
            far: true,
            far_bytes: (amp, amp * dirty),
            // The tag probe (64 B) and the fill (one block) in the DRAM cache.
            fill_bytes: 1.0 + amp,
            fills: Some(hit_idx),
        });
    }
    // One link carries all remote traffic: split its bandwidth over the remote tiers in
    // proportion to their access shares (their traffic is in that proportion).
    let remote: f64 = out.iter().filter(|t| t.remote).map(|t| t.share).sum();
    if remote > 0.0 {
        let link = m.spec.interconnect.bandwidth_gb_s;
        for t in out.iter_mut().filter(|t| t.remote && t.share > 0.0) {
            let cap = link * t.share / remote;
            t.spec.read_bandwidth_gb_s = t.spec.read_bandwidth_gb_s.min(cap);
        }
    }
    let hr = (cached > 0.0).then(|| hits / cached);
    (out, hr)
}

/// Run `app` over the pages of `pl` (allocated by a task on `socket`).
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    m: &NumaMachine,
    pool: &Pool,
    pl: &Placement,
    socket: usize,
    mix: Mix,
    app: &AppSpec,
    mm: &MemoryModeSpec,
    swap: &SwapSpec,
    seed: u64,
) -> AppResult {
    let resident: u64 = pl.pages.iter().sum();
    let total = resident + pl.swap_pages;
    let mut res = AppResult::default();
    if total == 0 {
        return res;
    }
    let footprint = total as f64 * pool.page_bytes as f64;
    let rf = mix.read_fraction;
    let swap_share = pl.swap_pages as f64 / total as f64;
    let mut mem_ns = 0.0;
    let mut moved = 0.0;
    let mut hit_acc = (0.0, 0.0);
    for (pattern, frac, mlp) in [
        (
            MemoryModePattern::Stream,
            1.0 - mix.random_fraction,
            app.stream_mlp,
        ),
        (
            MemoryModePattern::Random,
            mix.random_fraction,
            app.random_mlp,
        ),
    ] {
        if frac <= 0.0 {
            continue;
        }
        let bytes = footprint * mix.passes * frac * (1.0 - swap_share);
        let counts = cache_counts(pool, pl, pattern, rf, mm, seed);
        let (ts, hr) = tiers(m, pool, pl, socket, pattern, rf, mm, &counts);
        let specs: Vec<TierSpec> = ts.iter().map(|t| t.spec.clone()).collect();
        let src = Source::Spread {
            share: ts.iter().map(|t| t.share).collect(),
            reads: app.threads as f64 * mlp,
            read_fraction: rf,
            think_ns: 0.0,
        };
        // Memory Mode fills write into the DRAM cache beside the program's own traffic:
        // open-loop load on the hit path, refined once from the first solution.
        let mut open = vec![0.0; ts.len()];
        let mut fp = solve_fixed_point(&specs, std::slice::from_ref(&src), &open);
        if ts.iter().any(|t| t.fills.is_some()) {
            for (t, x) in ts.iter().zip(&fp.tiers) {
                if let Some(h) = t.fills {
                    open[h] += x.bandwidth_gb_s * t.fill_bytes;
                }
            }
            fp = solve_fixed_point(&specs, std::slice::from_ref(&src), &open);
        }
        let x: f64 = fp
            .tiers
            .iter()
            .zip(&open)
            .map(|(p, o)| (p.bandwidth_gb_s - o).max(0.0))
            .sum();
        let ns = if x > 0.0 { bytes / x } else { 0.0 };
        mem_ns += ns;
        moved += bytes;
        let lat: f64 = ts
            .iter()
            .zip(&fp.tiers)
            .map(|(t, p)| t.share * p.latency_ns)
            .sum();
        if pattern == MemoryModePattern::Random || mix.random_fraction <= 0.0 {
            res.latency_ns = lat;
        }
        for t in ts.iter().filter(|t| t.far) {
            res.far_read_bytes += bytes * t.share * t.far_bytes.0;
            res.far_write_bytes += bytes * t.share * t.far_bytes.1;
        }
        if let Some(h) = hr {
            hit_acc.0 += h * frac;
            hit_acc.1 += frac;
        }
    }
    // Idle random-read latency where the pages are (what a pointer chase would see).
    let counts = cache_counts(pool, pl, MemoryModePattern::Random, 1.0, mm, seed);
    let (ts, _) = tiers(
        m,
        pool,
        pl,
        socket,
        MemoryModePattern::Random,
        1.0,
        mm,
        &counts,
    );
    res.idle_latency_ns = ts
        .iter()
        .map(|t| t.share * t.spec.unloaded_latency_ns)
        .sum();
    let counts = cache_counts(pool, pl, MemoryModePattern::Stream, 1.0, mm, seed);
    let (ts, _) = tiers(
        m,
        pool,
        pl,
        socket,
        MemoryModePattern::Stream,
        1.0,
        mm,
        &counts,
    );
    res.idle_seq_latency_ns = ts
        .iter()
        .map(|t| t.share * t.spec.unloaded_latency_ns)
        .sum();
    // Swapped pages fault back in: once per page per pass when streaming, once per access
    // when random; threads fault in parallel.
    let page_accesses = pool.page_bytes as f64 / 64.0;
    let faults = pl.swap_pages as f64
        * mix.passes
        * ((1.0 - mix.random_fraction) + mix.random_fraction * page_accesses);
    res.swap_ns = faults * swap.ns_per_page / app.threads as f64;
    res.runtime_ns = mem_ns + res.swap_ns;
    res.bandwidth_gb_s = if mem_ns > 0.0 { moved / mem_ns } else { 0.0 };
    res.cache_hit_ratio = (hit_acc.1 > 0.0).then(|| hit_acc.0 / hit_acc.1);
    res
}
