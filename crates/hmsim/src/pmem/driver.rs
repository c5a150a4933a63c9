//! Drives the cache hierarchy + PMem system: synthetic per-thread patterns (the study's
//! microbenchmarks) and single-instruction primitives for trace replay. Timing is a bound
//! model: each thread's clock advances by its operations' unloaded latencies (plus waits on a
//! DIMM stalled by a migration); the run lasts as long as the slowest thread or the busiest
//! DIMM's media, whichever is longer.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::config::{PmemConfig, PmemTiming};
use super::system::{PmemCounters, PmemSystem};
use crate::cache::{CacheConfig, FlushKind, Hierarchy, HitLevel, MemorySink, WriteCause};
use crate::config::Validator;
use crate::rng;
use crate::stats::{LatencyHistogram, Summary};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PmemPattern {
    SeqWrite,
    RandWrite,
    SeqRead,
    RandRead,
    /// 128 B writes: the first half of every XPLine of the region, then every second half,
    /// and again (FAST'20's XPBuffer-size probe; `access_bytes` is ignored).
    XplineHalves,
}

/// How written lines are made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Persist {
    Clflush,
    Clflushopt,
    Clwb,
    Ntstore,
    /// Plain stores: lines reach PMem only by eviction (or never, with eADR semantics).
    None,
}

crate::params! {
    #[params(required, check)]
    /// Per-thread microbenchmark: each thread works on its own region.
    #[derive(Debug, Clone)]
    pub struct PmemWorkload {
        pub pattern: PmemPattern => any, "", "Access pattern of each thread: `seq-write`, `rand-write`, `seq-read`, `rand-read` or `xpline-halves` (128 B writes: the first half of every XPLine of the region, then every second half: the XPBuffer probe of Yang et al., FAST 2020).";
        pub threads: u32 = 1 => range(1, 1024), "", "Threads, each on its own region.";
        pub footprint_bytes: u64 => range(64, 1 << 40), "",
            "Region each thread touches; at least `access_bytes`.";
        pub access_bytes: u64 = 64 => range(64, 1 << 24), "",
            "Bytes per operation (a multiple of 64).";
        pub persist: Persist = Persist::Clwb => any, "",
            "How stores persist: `clflush`, `clflushopt`, `clwb`, `ntstore` or `none`.";
        pub fence: bool = true => any, "", "`sfence` after each operation.";
        pub operations: u64 => range(1, 1 << 40), "", "Operations per thread.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub region_stride_bytes: Option<u64> = None => any, "",
            "Distance between thread regions; default: footprint rounded up to 4 KiB (separate allocations, so threads land on different DIMMs).";
    }
}

impl PmemWorkload {
    /// Alignment and sizes relative to each other.
    fn check(&self, v: &mut Validator) {
        if self.access_bytes >= 64 {
            v.multiple_of("access_bytes", self.access_bytes, 64);
        }
        if self.footprint_bytes < self.access_bytes {
            v.fail(
                "footprint_bytes",
                format!(
                    "{} is smaller than access_bytes ({})",
                    self.footprint_bytes, self.access_bytes
                ),
            );
        }
        if self.pattern == PmemPattern::XplineHalves && !self.footprint_bytes.is_multiple_of(256) {
            v.fail(
                "footprint_bytes",
                format!(
                    "{} is not a whole number of 256 B XPLines (pattern xpline-halves)",
                    self.footprint_bytes
                ),
            );
        }
        if let Some(s) = self.region_stride_bytes {
            if s < self.footprint_bytes {
                v.fail(
                    "region_stride_bytes",
                    format!(
                        "{s} is smaller than footprint_bytes ({})",
                        self.footprint_bytes
                    ),
                );
            }
        }
    }
}

/// What the path needs to know of one DIMM.
#[derive(Debug, Clone, Copy)]
pub struct DimmSpec {
    pub capacity_bytes: u64,
    /// Media writes one line endures (rated bytes written / capacity).
    pub line_endurance_writes: u32,
}

impl DimmSpec {
    /// From a catalog device's capacity and rated bytes written.
    pub fn from_rating(capacity_bytes: u64, rated_bytes: f64) -> DimmSpec {
        let writes = (rated_bytes / capacity_bytes as f64).clamp(1.0, u32::MAX as f64) as u32;
        DimmSpec {
            capacity_bytes,
            line_endurance_writes: writes,
        }
    }
}

/// The simulated machine: caches, PMem, per-thread clocks and write-latency histogram.
#[derive(Clone)]
pub struct Machine {
    pub h: Hierarchy,
    pub sys: PmemSystem,
    t: PmemTiming,
    pub clocks: Vec<f64>,
    pub write_latency: LatencyHistogram,
    pub read_latency: LatencyHistogram,
    /// 64 B lines the program stored (incl. non-temporal) and loaded, and bytes it stored.
    pub stored_lines: u64,
    pub stored_bytes: u64,
    pub loaded_lines: u64,
    pub eadr: bool,
    /// Record each operation's latency in `write_latency`/`read_latency` (default on).
    /// Users that never read the histograms (the pm-index observer) turn it off: the
    /// histograms are outputs only, so every other result is unchanged.
    pub record_latency: bool,
    /// Scratch of `write_ops_interleaved` (kept to avoid allocating per round).
    scratch: Interleave,
    /// L1, L2 and LLC hit latencies over `mlp` (see `over_mlp`).
    hit_over_mlp: [f64; 3],
}

#[derive(Default, Clone)]
struct Interleave {
    spans: Vec<(u64, u64)>,
    order: Vec<u32>,
    next: Vec<u64>,
    own: Vec<f64>,
    wait: Vec<f64>,
}

impl Machine {
    pub fn new(
        cfg: &PmemConfig,
        cache: &CacheConfig,
        cores: usize,
        dimm: DimmSpec,
        seed: u64,
    ) -> Machine {
        Machine {
            h: Hierarchy::new(cache, cores, seed),
            sys: PmemSystem::new(cfg, dimm.capacity_bytes, dimm.line_endurance_writes, seed),
            t: cfg.timing.clone(),
            clocks: vec![0.0; cores],
            write_latency: LatencyHistogram::default(),
            read_latency: LatencyHistogram::default(),
            stored_lines: 0,
            stored_bytes: 0,
            loaded_lines: 0,
            eadr: cfg.persistence == "eadr",
            record_latency: true,
            scratch: Interleave::default(),
            hit_over_mlp: [
                cfg.timing.l1_hit_ns / cfg.timing.mlp,
                cfg.timing.l2_hit_ns / cfg.timing.mlp,
                cfg.timing.llc_hit_ns / cfg.timing.mlp,
            ],
        }
    }

    fn begin(&mut self, core: usize) {
        self.sys.now_ns = self.clocks[core];
        self.sys.floor_ns = slowest(&self.clocks);
        self.sys.op_read_hits = 0;
        self.sys.op_read_misses = 0;
        self.sys.op_ait_misses = 0;
        self.sys.op_wait_ns = 0.0;
    }

    fn level_ns(&self, level: HitLevel) -> f64 {
        match level {
            HitLevel::L1 => self.t.l1_hit_ns,
            HitLevel::L2 => self.t.l2_hit_ns,
            HitLevel::Llc => self.t.llc_hit_ns,
            // Memory reads are priced from the PMem side's hit/miss counts in `finish`.
            HitLevel::Memory => 0.0,
        }
    }

    /// Close an operation of `core` that took `own_ns` besides its PMem reads; returns its
    /// latency. A fenced operation holds the thread for its whole latency; independent ones
    /// overlap `mlp` deep, so the thread's clock advances by latency / mlp.
    fn finish(&mut self, core: usize, own_ns: f64, lines: f64, serial: bool) -> f64 {
        // Most operations stay in the caches: no PMem reads, whose price is then exactly 0
        // (skipped, same value).
        let quiet = self.sys.op_read_hits == 0
            && self.sys.op_read_misses == 0
            && self.sys.op_ait_misses == 0;
        let reads = if quiet {
            0.0
        } else {
            self.sys.op_read_hits as f64 * self.t.read_buffer_hit_ns
                + self.sys.op_read_misses as f64 * self.t.read_media_ns
                + self.sys.op_ait_misses as f64 * self.t.ait_miss_ns
        };
        // The overlap factor only matters for multi-line operations (computed only then: a
        // division per event saved, same values).
        let reads = if !quiet && lines > 1.0 {
            let overlap = 1.0 + (lines - 1.0) / self.t.overlap_lines;
            reads / lines * overlap
        } else {
            reads
        };
        let wait = self.sys.op_wait_ns;
        let lat = own_ns + reads + wait;
        let start = self.clocks[core];
        self.clocks[core] += if serial { lat } else { self.over_mlp(lat) };
        // A wait on the DIMM (a stall, a WPQ credit, an ordered read) holds the thread for its
        // full length, however many operations it overlaps.
        if wait > 0.0 && self.clocks[core] < start + wait {
            self.clocks[core] = start + wait;
        }
        lat
    }

    /// `lat / mlp`, with the quotients of the three cache-hit latencies (by far the most
    /// common latencies) computed once: the same values without a division per event.
    #[inline]
    fn over_mlp(&self, lat: f64) -> f64 {
        let [l1, l2, llc] = self.hit_over_mlp;
        if lat == self.t.l1_hit_ns {
            l1
        } else if lat == self.t.l2_hit_ns {
            l2
        } else if lat == self.t.llc_hit_ns {
            llc
        } else {
            lat / self.t.mlp
        }
    }

    /// Write `bytes` at `addr` from `core`, persisting with `persist`, then an optional fence.
    pub fn write_op(
        &mut self,
        core: usize,
        addr: u64,
        bytes: u64,
        persist: Persist,
        fence: bool,
    ) -> f64 {
        self.begin(core);
        let (first, lines) = span(addr, bytes);
        let mut own = 0.0;
        for i in 0..lines {
            own += self.write_line(core, first + i * 64, persist);
        }
        self.close_write(core, bytes, lines, own, persist, fence)
    }

    /// Write operations of different cores issued together, their 64 B lines reaching memory
    /// in a random interleaving (each core's lines in order): concurrent threads do not run in
    /// lockstep, and the iMC sees their requests mixed line by line. `ops`: (core, addr);
    /// at most one operation per core. Returns nothing; latencies go to the histogram.
    pub fn write_ops_interleaved(
        &mut self,
        ops: &[(usize, u64)],
        bytes: u64,
        persist: Persist,
        fence: bool,
        rng: &mut rng::SimRng,
    ) {
        let mut sc = std::mem::take(&mut self.scratch);
        sc.spans.clear();
        sc.spans.extend(ops.iter().map(|&(_, a)| span(a, bytes)));
        sc.order.clear();
        for (i, &(_, lines)) in sc.spans.iter().enumerate() {
            sc.order
                .extend(std::iter::repeat_n(i as u32, lines as usize));
        }
        // Fisher-Yates with the workload's own stream (deterministic per seed).
        for k in (1..sc.order.len()).rev() {
            let j = rng.random_range(0..=k);
            sc.order.swap(k, j);
        }
        sc.next.clear();
        sc.next.resize(ops.len(), 0);
        sc.own.clear();
        sc.own.resize(ops.len(), 0.0);
        sc.wait.clear();
        sc.wait.resize(ops.len(), 0.0);
        for &i in &sc.order {
            let i = i as usize;
            let core = ops[i].0;
            self.begin(core);
            let a = sc.spans[i].0 + sc.next[i] * 64;
            sc.next[i] += 1;
            sc.own[i] += self.write_line(core, a, persist);
            sc.wait[i] = sc.wait[i].max(self.sys.op_wait_ns);
        }
        for (i, &(core, _)) in ops.iter().enumerate() {
            self.sys.op_wait_ns = sc.wait[i];
            self.close_write(core, bytes, sc.spans[i].1, sc.own[i], persist, fence);
        }
        self.scratch = sc;
    }

    /// One 64 B line of a write operation; returns its cache-hit time.
    #[inline]
    fn write_line(&mut self, core: usize, a: u64, persist: Persist) -> f64 {
        if persist == Persist::Ntstore {
            self.h.ntstore(core, a, &mut self.sys);
            return 0.0;
        }
        let kind = match persist {
            Persist::Clflush => FlushKind::Clflush,
            Persist::Clflushopt => FlushKind::Clflushopt,
            Persist::Clwb => FlushKind::Clwb,
            Persist::Ntstore | Persist::None => {
                let lvl = self.h.store(core, a, &mut self.sys);
                return self.level_ns(lvl);
            }
        };
        let lvl = self.h.store_flush(core, a, kind, &mut self.sys);
        self.level_ns(lvl)
    }

    /// Close a write operation of `lines` lines whose stores took `own` ns: add the persist
    /// cost and advance the core's clock; returns the latency.
    fn close_write(
        &mut self,
        core: usize,
        bytes: u64,
        lines: u64,
        mut own: f64,
        persist: Persist,
        fence: bool,
    ) -> f64 {
        self.stored_bytes += bytes;
        self.stored_lines += lines;
        // The store buffer hides the read-for-ownership of a missing line: it costs PMem read
        // traffic and media time, not operation latency.
        self.sys.op_read_hits = 0;
        self.sys.op_read_misses = 0;
        self.sys.op_ait_misses = 0;
        let n = lines as f64;
        own += match persist {
            // clflush is ordered: each completes before the next.
            Persist::Clflush => n * self.t.persist_ns,
            Persist::Clflushopt | Persist::Clwb if fence => {
                self.t.persist_ns * (1.0 + (n - 1.0) / self.t.overlap_lines)
            }
            Persist::Ntstore if fence => {
                self.t.ntstore_persist_ns * (1.0 + (n - 1.0) / self.t.overlap_lines)
            }
            _ => 0.0,
        };
        let serial = fence || persist == Persist::Clflush;
        let lat = self.finish(core, own, n, serial);
        if self.record_latency {
            self.write_latency.record_ns(lat);
        }
        lat
    }

    /// A one-line load or plain store (no persist, no fence) that hits `core`'s L1: exactly
    /// what `read_op` / `write_op` would do for it (no memory traffic, so the latency is the
    /// L1 hit time), without their general work. Most accesses of an index walking a node
    /// are such. None (nothing done) otherwise.
    #[inline(always)]
    pub fn try_l1_hit(&mut self, core: usize, addr: u64, bytes: u64, write: bool) -> Option<f64> {
        if (addr ^ (addr + bytes.max(1) - 1)) >= 64 || !self.h.hit_l1(core, addr, write) {
            return None;
        }
        let lat = self.t.l1_hit_ns;
        if write {
            self.stored_bytes += bytes;
            self.stored_lines += 1;
        } else {
            self.loaded_lines += 1;
        }
        self.clocks[core] += self.hit_over_mlp[0];
        if self.record_latency {
            let h = if write {
                &mut self.write_latency
            } else {
                &mut self.read_latency
            };
            h.record_ns(lat);
        }
        Some(lat)
    }

    /// `loads` loads and `stores` stores (of `store_bytes` together) by `core`, each within the
    /// line holding `addr` and each an L1 hit in the slot the line's last access left it: what
    /// as many [`Machine::try_l1_hit`] calls give (counts, clock and latencies), with one
    /// look at L1. The accesses of a run that repeats one line (`pmindex`'s held repeats).
    pub fn repeat_l1_hits(
        &mut self,
        core: usize,
        addr: u64,
        loads: u64,
        stores: u64,
        store_bytes: u64,
    ) {
        let n = loads + stores;
        if !self.h.repeat_l1_hits(core, addr, n, stores > 0) {
            self.repeats_one_by_one(core, addr, (loads, stores, store_bytes));
            return;
        }
        self.loaded_lines += loads;
        self.stored_lines += stores;
        self.stored_bytes += store_bytes;
        // One add per access, as one call each would make them (the same rounding), in a
        // register: through memory each add would wait for the last one's store.
        let step = self.hit_over_mlp[0];
        let mut clock = self.clocks[core];
        for _ in 0..n {
            clock += step;
        }
        self.clocks[core] = clock;
        if self.record_latency {
            let lat = self.t.l1_hit_ns;
            for _ in 0..loads {
                self.read_latency.record_ns(lat);
            }
            for _ in 0..stores {
                self.write_latency.record_ns(lat);
            }
        }
    }

    /// `repeat_l1_hits` when the line is not where the invariant says (not reached): one
    /// access at a time, loads first, so a broken invariant costs exactness, not the run.
    #[cold]
    #[inline(never)]
    fn repeats_one_by_one(&mut self, core: usize, addr: u64, (loads, stores, store_bytes): Counts) {
        debug_assert!(
            false,
            "repeated line {addr:#x} is not where core {core}'s L1 left it"
        );
        for k in 0..loads + stores {
            let (write, bytes) = if k < loads {
                (false, 1)
            } else {
                (true, store_bytes / stores)
            };
            if self.try_l1_hit(core, addr, bytes, write).is_none() {
                if write {
                    self.write_op(core, addr, bytes, Persist::None, false);
                } else {
                    self.read_op(core, addr, bytes);
                }
            }
        }
    }

    /// A host hint that `core` reads `bytes` at `addr` soon: fetch the cache model's sets of
    /// those lines into the host's caches. Nothing is modelled, counted or changed.
    pub fn prefetch_sets(&self, core: usize, addr: u64, bytes: u64) {
        let (first, lines) = span(addr, bytes);
        for i in 0..lines {
            self.h.prefetch_sets(core, first + i * 64);
        }
    }

    /// Read `bytes` at `addr` from `core`.
    pub fn read_op(&mut self, core: usize, addr: u64, bytes: u64) -> f64 {
        self.begin(core);
        let (first, lines) = span(addr, bytes);
        let mut own = 0.0;
        for i in 0..lines {
            let lvl = self.h.load(core, first + i * 64, &mut self.sys);
            own += self.level_ns(lvl);
        }
        self.loaded_lines += lines;
        let lat = self.finish(core, own, lines as f64, false);
        if self.record_latency {
            self.read_latency.record_ns(lat);
        }
        lat
    }

    /// A flush instruction of its own (trace replay): the line's write-back, if dirty.
    pub fn flush_op(&mut self, core: usize, addr: u64, kind: FlushKind) {
        self.begin(core);
        self.h.flush(core, addr, kind, &mut self.sys);
        let lat = self.t.persist_ns;
        self.clocks[core] += lat;
    }

    /// Compute between memory operations: `ns` of the core's time.
    pub fn compute(&mut self, core: usize, ns: f64) {
        self.clocks[core] += ns;
    }

    /// Write back every dirty cached line (a finished program's lines reach memory).
    pub fn drain(&mut self) {
        // The write-backs go through the WPQ like any other: each core's waits for a credit
        // when its DIMM's media queue is full, so its clock runs on with the drain and the
        // queue never holds more than its room.
        let mut paced = Paced {
            sys: &mut self.sys,
            clocks: &mut self.clocks,
        };
        self.h.writeback_all(&mut paced);
    }

    /// Run time: slowest thread or busiest DIMM, ns.
    pub fn elapsed_ns(&self) -> f64 {
        self.clocks
            .iter()
            .copied()
            .fold(0.0, f64::max)
            .max(self.sys.max_busy_ns())
    }
}

/// The slowest core's clock: no request comes before it, as clocks only advance (the PMem
/// side's `floor_ns`).
#[inline]
fn slowest(clocks: &[f64]) -> f64 {
    match clocks {
        [only] => *only,
        all => all.iter().copied().fold(f64::INFINITY, f64::min),
    }
}

/// Loads, stores and the stores' bytes of a run of repeats (`Machine::repeat_l1_hits`).
type Counts = (u64, u64, u64);

/// The PMem side as the cache write-back of [`Machine::drain`] sees it: each write-back is
/// issued at its core's clock, which advances by the WPQ credit wait it meets.
struct Paced<'a> {
    sys: &'a mut PmemSystem,
    clocks: &'a mut [f64],
}

impl MemorySink for Paced<'_> {
    fn mem_read(&mut self, line: u64, core: usize) {
        self.sys.now_ns = self.clocks[core];
        self.sys.floor_ns = slowest(self.clocks);
        self.sys.op_wait_ns = 0.0;
        self.sys.mem_read(line, core);
        self.clocks[core] += self.sys.op_wait_ns;
    }

    fn mem_write(&mut self, line: u64, core: usize, cause: WriteCause) {
        self.sys.now_ns = self.clocks[core];
        self.sys.floor_ns = slowest(self.clocks);
        self.sys.op_wait_ns = 0.0;
        self.sys.mem_write(line, core, cause);
        self.clocks[core] += self.sys.op_wait_ns;
    }
}

/// First 64 B line address and number of lines `bytes` at `addr` touch.
#[inline]
fn span(addr: u64, bytes: u64) -> (u64, u64) {
    let first = addr & !63;
    let last = (addr + bytes.max(1) - 1) & !63;
    (first, (last - first) / 64 + 1)
}

/// What a workload run measured.
#[derive(Debug, Clone, Serialize)]
pub struct PmemRunResult {
    pub counters: PmemCounters,
    pub wpq_inserts_per_imc: Vec<u64>,
    pub stored_lines: u64,
    pub loaded_lines: u64,
    pub flushed_lines: u64,
    pub elapsed_s: f64,
    /// Bytes the program wrote (or read, for read patterns) per second, GB/s.
    pub bandwidth_gb_s: f64,
    pub write_latency: Summary,
    pub read_latency: Summary,
    /// p99.999 of write-operation latency, µs.
    pub write_p99999_us: f64,
    pub max_physical_line_writes: u32,
    pub max_logical_line_writes: u32,
}

/// Run a per-thread microbenchmark; threads take turns operation by operation.
pub fn run_workload(
    cfg: &PmemConfig,
    cache: &CacheConfig,
    w: &PmemWorkload,
    dimm: DimmSpec,
    seed: u64,
) -> (PmemRunResult, Machine) {
    let threads = w.threads as usize;
    let mut m = Machine::new(cfg, cache, threads, dimm, seed);
    let stride = w
        .region_stride_bytes
        .unwrap_or(w.footprint_bytes.div_ceil(4096) * 4096);
    let slots = (w.footprint_bytes / w.access_bytes).max(1);
    let op_bytes = if w.pattern == PmemPattern::XplineHalves {
        128
    } else {
        w.access_bytes
    };
    let mut pos = vec![0u64; threads];
    let mut rngs: Vec<_> = (0..threads)
        .map(|t| rng::stream(seed, &format!("pmem.workload.{t}")))
        .collect();
    let write = matches!(
        w.pattern,
        PmemPattern::SeqWrite | PmemPattern::RandWrite | PmemPattern::XplineHalves
    );
    let mut mix = rng::stream(seed, "pmem.workload.interleave");
    let mut round: Vec<(usize, u64)> = Vec::with_capacity(threads);
    let halves_lines = (w.footprint_bytes / 256).max(1);
    for _ in 0..w.operations {
        round.clear();
        for t in 0..threads {
            let offset = match w.pattern {
                PmemPattern::SeqWrite | PmemPattern::SeqRead => {
                    let s = pos[t];
                    pos[t] = if s + 1 == slots { 0 } else { s + 1 };
                    s * w.access_bytes
                }
                PmemPattern::RandWrite | PmemPattern::RandRead => {
                    rngs[t].random_range(0..slots) * w.access_bytes
                }
                PmemPattern::XplineHalves => {
                    // First halves of every XPLine of the region, then the second halves.
                    let s = pos[t];
                    pos[t] = if s + 1 == 2 * halves_lines { 0 } else { s + 1 };
                    (s % halves_lines) * 256 + (s / halves_lines) * 128
                }
            };
            round.push((t, t as u64 * stride + offset));
        }
        if write && threads > 1 {
            m.write_ops_interleaved(&round, op_bytes, w.persist, w.fence, &mut mix);
            continue;
        }
        for &(t, addr) in &round {
            if write {
                m.write_op(t, addr, op_bytes, w.persist, w.fence);
            } else {
                m.read_op(t, addr, op_bytes);
            }
        }
    }
    let elapsed = m.elapsed_ns();
    let bytes = (m.stored_lines + m.loaded_lines) as f64 * 64.0;
    let (pw, lw) = m.sys.max_line_wear();
    let res = PmemRunResult {
        counters: m.sys.counters(),
        wpq_inserts_per_imc: m.sys.wpq_inserts_per_imc().to_vec(),
        stored_lines: m.stored_lines,
        loaded_lines: m.loaded_lines,
        flushed_lines: m.h.flushed_lines,
        elapsed_s: elapsed * 1e-9,
        bandwidth_gb_s: if elapsed > 0.0 { bytes / elapsed } else { 0.0 },
        write_latency: m.write_latency.summary(),
        read_latency: m.read_latency.summary(),
        write_p99999_us: m.write_latency.summary().p99999,
        max_physical_line_writes: pw,
        max_logical_line_writes: lw,
    };
    (res, m)
}
