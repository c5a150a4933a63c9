//! The PMem side of the socket: iMCs with their WPQs, interleaved DIMMs each with an
//! XPBuffer, an AIT and media. Implements [`MemorySink`] for the cache hierarchy.

use super::ait::Ait;
use super::config::PmemConfig;
use super::wear_table::LineTally;
use super::xpbuffer::{MediaWrite, XpBuffer, FULL};
use crate::cache::{MemorySink, WriteCause};
use crate::hash::FastMap;
use crate::rng;

crate::counters! {
    /// PmemCounters named as Intel PCM (`PMM_WPQ_INSERTS`) and ipmctl (64 B units) name them;
    /// also the counter columns of every row that reports the PMem path (field order is
    /// column order), and the one declaration of the columns rows derive from them.
    #[derive(Copy, Default, PartialEq)]
    pub struct PmemCounters {
        wpq_inserts: u64 ["lines", "64 B lines inserted into the write pending queues"],
        write_requests: u64 ["requests", "DDR-T write requests to the DIMMs"],
        read_requests: u64 ["requests", "DDR-T read requests to the DIMMs"],
        media_writes_64b: u64 ["64 B", "media writes, in 64 B units"],
        media_reads_64b: u64 ["64 B", "media reads, in 64 B units"],
        xpbuffer_merges: u64 ["requests", "writes combined in the XPBuffer"],
        xpbuffer_early_writebacks: u64 ["XPLines", "partly written XPLines written back early (RMW)"],
        ait_buffer_misses: u64 ["accesses", "media accesses missing the AIT buffer"],
        migrations: u64 ["blocks", "wear-leveling block migrations"],
        bad_block_remaps: u64 ["blocks", "blocks remapped as worn out"],
    }
}

/// Stale records (of entries merged, read or replaced since) `queued_order` may hold beyond
/// twice the live entries before it is compacted.
const ORDER_SLACK: usize = 4096;

/// Queued writes a DIMM keeps at most (≈ 7.6 ms of 256 B media writes at 2.2 GB/s). Only a
/// floor held far back reaches it: a core that has not run, or cores whose clocks drift
/// milliseconds apart, while back-pressure keeps the writes in flight to a few dozen. Then
/// the writes done by the current request's time go too (a lagging core's read may miss a
/// wait of at most one media write), counted in `queue_cap_drops`, so memory stays bounded.
const QUEUED_CAP: usize = 1 << 16;

#[derive(Clone)]
struct Dimm {
    xpb: XpBuffer,
    ait: Ait,
    write_requests: u64,
    read_requests: u64,
    media_writes: u64, // 256 B units
    media_reads: u64,
    // Media time by direction: the controller overlaps reads with writes.
    read_busy_ns: f64,
    write_busy_ns: f64,
    stall_until_ns: f64,
    /// When the media write queue drains (a single-server queue of 256 B writes).
    write_queue_until_ns: f64,
    /// The latest media write of each XPLine that a request may still meet: later writes to
    /// the XPLine merge into it until it starts, and reads wait for it to finish. An entry
    /// is dropped once it is done by [`PmemSystem::floor_ns`] (no request can meet it then),
    /// so the map holds the writes in flight, not every write since the start.
    queued: FastMap<u64, QueuedWrite>,
    /// Every insert into `queued` as (XPLine, start), in insertion order. Media writes start
    /// in the order they are queued, so the entries that are done are at the front: a sweep
    /// pops them instead of scanning the whole map (work per write stays constant however
    /// far the writes run ahead of the media).
    queued_order: std::collections::VecDeque<(u64, f64)>,
    /// Records visited by sweeps and compactions of `queued_order` (a work count for tests).
    queue_work: u64,
    /// Media writes that found `QUEUED_CAP` queued writes and dropped by their own time.
    queue_cap_drops: u64,
    /// With in-order requests: when the request at the head of the DIMM's request queue
    /// stops waiting for its XPLine (no later request is taken before then).
    head_blocked_until_ns: f64,
}

impl Dimm {
    /// Drop the queued writes done by `floor_ns` (exactly those with `start_ns + keep_ns <=
    /// floor_ns`), popping them from the front of `queued_order`.
    fn drop_done(&mut self, floor_ns: f64, keep_ns: f64) {
        while let Some(&(x, start)) = self.queued_order.front() {
            if start + keep_ns > floor_ns {
                break;
            }
            self.queued_order.pop_front();
            self.queue_work += 1;
            // A record whose entry was replaced or removed since is stale.
            if self.queued.get(&x).is_some_and(|q| q.start_ns == start) {
                self.queued.remove(&x);
            }
        }
    }

    /// Drop the records of entries that merges and reads removed or later writes replaced:
    /// called when they outnumber the live ones, so each call at least halves the list.
    fn compact_order(&mut self) {
        self.queue_work += self.queued_order.len() as u64;
        let queued = &self.queued;
        self.queued_order
            .retain(|&(x, start)| queued.get(&x).is_some_and(|q| q.start_ns == start));
    }
}

#[derive(Clone, Copy)]
struct QueuedWrite {
    start_ns: f64,
    /// A read-modify-write takes later writes to its XPLine into the line until its fill
    /// read returns (VANS patches an RMW entry in its read / modify states); a write of a
    /// complete line (`patch_until_ns` = 0) takes none: a write to it waits for it instead.
    patch_until_ns: f64,
    mask: u8,
    rmw_read: bool,
}

#[derive(Clone)]
pub struct PmemSystem {
    n_dimms: u64,
    per_imc: u64,
    interleave: u64,
    /// `log2(interleave)` when the interleave is a power of two (route by shift and mask).
    interleave_shift: Option<u32>,
    dimms: Vec<Dimm>,
    wpq_inserts: Vec<u64>,
    write_ns: f64,
    read_ns: f64,
    stall_ns: f64,
    xpb_entries: f64,
    backlog_entries: f64,
    merge_queued: bool,
    in_order: bool,
    /// How long after its start a media write still holds its XPLine (later writes to it
    /// wait): the media write latency if set, else 0 (a started write is out of the way).
    line_hold_ns: f64,
    read_media_ns: f64,
    /// Media writes a DIMM's queue holds before the WPQ stops granting credits.
    queue_room: f64,
    /// Set by the driver: the time the current operation's requests arrive.
    pub now_ns: f64,
    /// Set by the driver: no request arrives before this time (with a clock per core, the
    /// slowest core's). Queued media writes done by then are dropped, as no request can
    /// meet them; 0 (never raised) keeps them all (up to `QUEUED_CAP` per DIMM). Answers do
    /// not depend on when the drops happen, only the host memory the queue takes.
    pub floor_ns: f64,
    /// How long after its start a queued media write still matters to a request: a read
    /// waits for it to finish, a write to its XPLine for `line_hold_ns`.
    keep_ns: f64,
    /// Per-operation effects the driver reads and resets.
    pub op_read_hits: u32,
    pub op_read_misses: u32,
    /// Media reads of this operation whose translation missed the AIT buffer.
    pub op_ait_misses: u32,
    pub op_wait_ns: f64,
    /// The time the current request was issued (`now_ns` moves on to the time its DIMM
    /// takes it when an in-order request queue is blocked); its waits count from here.
    issue_ns: f64,
    /// Until when the current request waits for its own XPLine (0: it does not).
    line_wait_until_ns: f64,
}

impl PmemSystem {
    /// `line_endurance_writes`: media writes a line endures (rated bytes / capacity).
    pub fn new(
        cfg: &PmemConfig,
        dimm_capacity_bytes: u64,
        line_endurance_writes: u32,
        seed: u64,
    ) -> PmemSystem {
        let dimms = (0..cfg.dimms)
            .map(|d| Dimm {
                xpb: {
                    let b = XpBuffer::new(
                        cfg.xpbuffer.entries as usize,
                        cfg.xpbuffer.eager_full_writeback,
                    );
                    if cfg.xpbuffer.replacement == "random" {
                        b.with_random_replacement(rng::stream(seed, &format!("pmem.xpbuffer.{d}")))
                    } else {
                        b
                    }
                },
                ait: Ait::new(
                    &cfg.ait,
                    dimm_capacity_bytes,
                    line_endurance_writes,
                    rng::stream(seed, &format!("pmem.ait.{d}")),
                ),
                write_requests: 0,
                read_requests: 0,
                media_writes: 0,
                media_reads: 0,
                read_busy_ns: 0.0,
                write_busy_ns: 0.0,
                stall_until_ns: 0.0,
                write_queue_until_ns: 0.0,
                queued: FastMap::default(),
                queued_order: Default::default(),
                queue_work: 0,
                queue_cap_drops: 0,
                head_blocked_until_ns: 0.0,
            })
            .collect();
        PmemSystem {
            n_dimms: cfg.dimms as u64,
            per_imc: cfg.dimms_per_imc as u64,
            interleave: cfg.interleave_bytes,
            interleave_shift: cfg
                .interleave_bytes
                .is_power_of_two()
                .then(|| cfg.interleave_bytes.trailing_zeros()),
            dimms,
            wpq_inserts: vec![0; cfg.dimms.div_ceil(cfg.dimms_per_imc) as usize],
            write_ns: 256.0 / cfg.timing.media_write_gb_s,
            read_ns: 256.0 / cfg.timing.media_read_gb_s,
            stall_ns: cfg.ait.migration_stall_ns,
            xpb_entries: cfg.xpbuffer.entries as f64,
            backlog_entries: cfg.xpbuffer.backlog_write_entries as f64,
            merge_queued: cfg.xpbuffer.merge_queued_writes,
            in_order: cfg.xpbuffer.in_order_requests,
            line_hold_ns: cfg.timing.media_write_latency_ns.unwrap_or(0.0),
            read_media_ns: cfg.timing.read_media_ns,
            // The XPBuffer entries not kept free to assemble writes hold the queued lines.
            queue_room: (cfg
                .xpbuffer
                .entries
                .saturating_sub(cfg.xpbuffer.backlog_write_entries))
            .max(1) as f64,
            now_ns: 0.0,
            floor_ns: 0.0,
            keep_ns: (256.0 / cfg.timing.media_write_gb_s)
                .max(cfg.timing.media_write_latency_ns.unwrap_or(0.0)),
            op_read_hits: 0,
            op_read_misses: 0,
            op_ait_misses: 0,
            op_wait_ns: 0.0,
            issue_ns: 0.0,
            line_wait_until_ns: 0.0,
        }
    }

    /// (DIMM, DIMM-local 64 B line) of a global 64 B line.
    #[inline]
    fn route(&self, line: u64) -> (usize, u64) {
        let addr = line << 6;
        let (chunk, within) = match self.interleave_shift {
            Some(s) => (addr >> s, addr & (self.interleave - 1)),
            None => (addr / self.interleave, addr % self.interleave),
        };
        let dimm = (chunk % self.n_dimms) as usize;
        let local = (chunk / self.n_dimms) * self.interleave + within;
        (dimm, local >> 6)
    }

    /// Global byte address of a DIMM-local XPLine (inverse of `route`).
    fn global_addr(&self, dimm: usize, xpline: u64) -> u64 {
        let local = xpline * 256;
        ((local / self.interleave) * self.n_dimms + dimm as u64) * self.interleave
            + local % self.interleave
    }

    #[inline]
    fn wait_for(&mut self, d: usize) {
        let until = self.dimms[d].stall_until_ns;
        if until > self.now_ns {
            self.op_wait_ns = self.op_wait_ns.max(until - self.now_ns);
        }
    }

    #[inline]
    fn media_write(&mut self, d: usize, w: MediaWrite) {
        let dimm = &mut self.dimms[d];
        dimm.ait.translate(w.xpline / super::ait::XPLINES_PER_BLOCK);
        dimm.media_writes += 1;
        dimm.write_busy_ns += self.write_ns;
        let start = dimm.write_queue_until_ns.max(self.now_ns);
        dimm.write_queue_until_ns = start + self.write_ns;
        if self.merge_queued && start + self.line_hold_ns > self.now_ns {
            if dimm.queued.len() < QUEUED_CAP {
                dimm.drop_done(self.floor_ns, self.keep_ns);
            } else {
                dimm.queue_cap_drops += 1;
                dimm.drop_done(self.now_ns, self.keep_ns);
            }
            if dimm.queued_order.len() >= 2 * dimm.queued.len() + ORDER_SLACK {
                dimm.compact_order();
            }
            let patch_until_ns = if w.rmw_read {
                self.now_ns + self.read_media_ns
            } else {
                0.0
            };
            dimm.queued_order.push_back((w.xpline, start));
            dimm.queued.insert(
                w.xpline,
                QueuedWrite {
                    start_ns: start,
                    patch_until_ns,
                    mask: w.mask,
                    rmw_read: w.rmw_read,
                },
            );
        }
        if w.rmw_read {
            dimm.media_reads += 1;
            dimm.read_busy_ns += self.read_ns;
        }
        if dimm.ait.media_write(w.xpline) {
            let now = self.now_ns.max(dimm.stall_until_ns);
            dimm.stall_until_ns = now + self.stall_ns;
            dimm.write_queue_until_ns = dimm.write_queue_until_ns.max(now) + self.stall_ns;
            // A migration blocks both directions.
            dimm.write_busy_ns += self.stall_ns;
            dimm.read_busy_ns += self.stall_ns;
        }
    }

    /// A write of sub-line `sub` to `xpline` at DIMM `d` that merges into the XPLine's queued
    /// media write, if one has not started yet (true: nothing else to do). Completing the
    /// XPLine this way makes the queued read-modify-write a plain write: its fill read is
    /// not needed (VANS turns a patched RMW into a combined write).
    #[inline]
    fn merge_into_queued(&mut self, d: usize, xpline: u64, sub: u8) -> bool {
        let now = self.now_ns;
        let Some(q) = self.dimms[d].queued.get(&xpline).copied() else {
            return false;
        };
        if q.start_ns <= now || q.patch_until_ns <= now {
            let until = q.start_ns + self.line_hold_ns;
            if until > now {
                // Queued behind the media (or still being written) and no longer
                // patchable: the write waits for it, then assembles the XPLine anew.
                self.wait_for_line(until);
            }
            self.dimms[d].queued.remove(&xpline);
            return false;
        }
        let read_ns = self.read_ns;
        let dimm = &mut self.dimms[d];
        let e = dimm.queued.get_mut(&xpline).expect("present");
        e.mask |= 1 << sub;
        if e.rmw_read && e.mask == FULL {
            e.rmw_read = false;
            dimm.media_reads -= 1;
            dimm.read_busy_ns -= read_ns;
        }
        dimm.xpb.merged_writes += 1;
        true
    }

    /// A read of `xpline` at DIMM `d` is ordered after its queued media write: it waits for
    /// the write to finish, and later writes no longer merge into it.
    #[inline]
    fn order_read_after_queued(&mut self, d: usize, xpline: u64) {
        if let Some(q) = self.dimms[d].queued.remove(&xpline) {
            let done = q.start_ns + self.keep_ns;
            if done > self.now_ns {
                self.wait_for_line(done);
            }
        }
    }

    /// The current request waits until `until_ns` for its XPLine's queued media write (the
    /// operation waits from the request's issue time).
    #[inline]
    fn wait_for_line(&mut self, until_ns: f64) {
        self.op_wait_ns = self.op_wait_ns.max(until_ns - self.issue_ns);
        self.line_wait_until_ns = self.line_wait_until_ns.max(until_ns);
    }

    /// Take a request at DIMM `d`: with in-order requests it is taken only when the request
    /// ahead of it stops waiting for its XPLine (VANS's load-store queue serves its head
    /// only: a head waiting for a pending write to its block holds every request behind it).
    #[inline]
    fn take_request(&mut self, d: usize) {
        debug_assert!(self.now_ns >= self.floor_ns, "a request before the floor");
        self.line_wait_until_ns = 0.0;
        self.issue_ns = self.now_ns;
        if self.in_order {
            let until = self.dimms[d].head_blocked_until_ns;
            if until > self.now_ns {
                self.op_wait_ns = self.op_wait_ns.max(until - self.now_ns);
                self.now_ns = until;
            }
        }
    }

    /// With in-order requests, a request that waited for its XPLine is served when the wait
    /// ends (its clock moves there).
    #[inline]
    fn served_after_line_wait(&mut self) {
        if self.in_order && self.line_wait_until_ns > self.now_ns {
            self.now_ns = self.line_wait_until_ns;
        }
    }

    /// The request taken by `take_request` is done at DIMM `d`: a wait for its XPLine blocked
    /// the head of an in-order queue until then. The clock returns to the issue time.
    #[inline]
    fn release_request(&mut self, d: usize) {
        if self.in_order && self.line_wait_until_ns > self.dimms[d].head_blocked_until_ns {
            self.dimms[d].head_blocked_until_ns = self.line_wait_until_ns;
        }
        self.now_ns = self.issue_ns;
    }

    /// A write request needs a WPQ credit: when DIMM `d`'s media queue is longer than its
    /// room, the writer waits until enough queued writes have started.
    #[inline]
    fn wait_for_credit(&mut self, d: usize) {
        let until = self.dimms[d].write_queue_until_ns - self.queue_room * self.write_ns;
        if until > self.now_ns {
            self.op_wait_ns = self.op_wait_ns.max(until - self.now_ns);
        }
    }

    /// XPBuffer entries free to hold partly written XPLines at DIMM `d` now: the buffer less
    /// the lines queued for the media (one per 256 B write in the queue), at least
    /// `backlog_write_entries`.
    #[inline]
    fn dirty_limit(&self, d: usize) -> usize {
        let ahead_ns = self.dimms[d].write_queue_until_ns - self.now_ns;
        // An idle queue holds nothing (the division and rounding are skipped: same value).
        let queued = if ahead_ns > 0.0 {
            ceil_positive(ahead_ns / self.write_ns)
        } else {
            0.0
        };
        let free = (self.xpb_entries - queued).max(self.backlog_entries);
        free as usize
    }

    pub fn counters(&self) -> PmemCounters {
        let mut c = PmemCounters {
            wpq_inserts: self.wpq_inserts.iter().sum(),
            ..Default::default()
        };
        for d in &self.dimms {
            c.write_requests += d.write_requests;
            c.read_requests += d.read_requests;
            c.media_writes_64b += 4 * (d.media_writes + d.ait.migration_writes);
            c.media_reads_64b += 4 * (d.media_reads + d.ait.migration_reads);
            c.migrations += d.ait.migrations;
            c.bad_block_remaps += d.ait.bad_block_remaps;
            c.xpbuffer_merges += d.xpb.merged_writes;
            c.xpbuffer_early_writebacks += d.xpb.early_writebacks;
            c.ait_buffer_misses += d.ait.buffer_stats().1;
        }
        c
    }

    /// Media writes the program caused (64 B units) per 4 KiB page of its address space
    /// (migration copies excluded), as (page, writes) with each page once, in no set order.
    pub fn page_media_writes(&self) -> Vec<(u64, u64)> {
        let mut pages: Vec<(u64, u64)> = Vec::new();
        for (d, dimm) in self.dimms.iter().enumerate() {
            dimm.ait.block_writes(|block, writes| {
                let page = self.global_addr(d, block * super::ait::XPLINES_PER_BLOCK) >> 12;
                pages.push((page, 4 * writes));
            });
        }
        // An interleave that is a multiple of 4 KiB keeps each DIMM block in one page of its
        // own; a finer one spreads a page over several DIMMs: add their shares up.
        if !self.interleave.is_multiple_of(4096) {
            pages.sort_unstable_by_key(|p| p.0);
            pages.dedup_by(|b, a| {
                let same = a.0 == b.0;
                if same {
                    a.1 += b.1;
                }
                same
            });
        }
        pages
    }

    /// Records of queued media writes visited to keep the queues current, over all DIMMs:
    /// the bookkeeping work, which stays proportional to the media writes.
    pub fn queue_work(&self) -> u64 {
        self.dimms.iter().map(|d| d.queue_work).sum()
    }

    /// Media writes that found a DIMM's queue at its cap (`QUEUED_CAP`) and dropped the
    /// writes done by their own time rather than by the floor's, over all DIMMs.
    pub fn queue_cap_drops(&self) -> u64 {
        self.dimms.iter().map(|d| d.queue_cap_drops).sum()
    }

    /// Queued media writes a request may still meet (not yet done by `floor_ns`), over all
    /// DIMMs.
    pub fn queued_writes(&self) -> usize {
        self.dimms.iter().map(|d| d.queued.len()).sum()
    }

    pub fn wpq_inserts_per_imc(&self) -> &[u64] {
        &self.wpq_inserts
    }

    /// Longest media busy time of any DIMM, ns (the bandwidth bound of the run).
    pub fn max_busy_ns(&self) -> f64 {
        self.dimms
            .iter()
            .map(|d| d.read_busy_ns.max(d.write_busy_ns))
            .fold(0.0, f64::max)
    }

    /// Highest media writes of one physical / logical 256 B line, over all DIMMs.
    pub fn max_line_wear(&self) -> (u32, u32) {
        let p = self
            .dimms
            .iter()
            .map(|d| d.ait.max_physical_wear())
            .max()
            .unwrap_or(0);
        let l = self
            .dimms
            .iter()
            .map(|d| d.ait.max_logical_wear())
            .max()
            .unwrap_or(0);
        (p, l)
    }

    /// The logical XPLines written, tallied over every DIMM.
    pub fn logical_tally(&self) -> LineTally {
        self.dimms
            .iter()
            .map(|d| d.ait.logical_tally())
            .fold(LineTally::default(), LineTally::add)
    }
}

/// `x.ceil()` for `x >= 0`, without a call into the maths library (the build targets
/// plain x86-64, which has no rounding instruction): exact below 2^52, where every `f64`
/// that is not an integer truncates to the integer below it.
#[inline]
fn ceil_positive(x: f64) -> f64 {
    if x < 4_503_599_627_370_496.0 {
        let t = x as u64 as f64;
        if t < x {
            t + 1.0
        } else {
            t
        }
    } else {
        x.ceil()
    }
}

impl MemorySink for PmemSystem {
    #[inline]
    fn mem_read(&mut self, line: u64, _core: usize) {
        let (d, local) = self.route(line);
        self.wait_for(d);
        self.take_request(d);
        if self.merge_queued {
            self.order_read_after_queued(d, local >> 2);
            self.served_after_line_wait();
        }
        let dimm = &mut self.dimms[d];
        dimm.read_requests += 1;
        let (hit, evicted) = dimm.xpb.read(local >> 2);
        if hit {
            self.op_read_hits += 1;
        } else {
            self.op_read_misses += 1;
            dimm.media_reads += 1;
            dimm.read_busy_ns += self.read_ns;
            if !dimm.ait.translate(local >> 6) {
                self.op_ait_misses += 1;
            }
        }
        if let Some(w) = evicted {
            self.media_write(d, w);
        }
        self.release_request(d);
    }

    #[inline]
    fn mem_write(&mut self, line: u64, _core: usize, _cause: WriteCause) {
        let (d, local) = self.route(line);
        self.wait_for(d);
        // The WPQ neither merges nor amplifies: every insert becomes one DDR-T request.
        self.wpq_inserts[d / self.per_imc as usize] += 1;
        self.dimms[d].write_requests += 1;
        if self.merge_queued {
            self.wait_for_credit(d);
            self.take_request(d);
            if self.merge_into_queued(d, local >> 2, (local & 3) as u8) {
                self.release_request(d);
                return;
            }
            self.served_after_line_wait();
        } else {
            self.take_request(d);
        }
        let limit = self.dirty_limit(d);
        let dimm = &mut self.dimms[d];
        // The XPLine goes to the media when it leaves the XPBuffer, some requests from now:
        // its wear counter (a host-cache miss over a large footprint) is fetched meanwhile.
        dimm.ait.prefetch_wear(local >> 2);
        for w in dimm
            .xpb
            .write_limited(local >> 2, (local & 3) as u8, limit)
            .into_iter()
            .flatten()
        {
            self.media_write(d, w);
        }
        self.release_request(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_dimm(merge: bool) -> PmemSystem {
        let mut cfg = PmemConfig {
            dimms: 1,
            ..PmemConfig::default()
        };
        cfg.xpbuffer.merge_queued_writes = merge;
        cfg.xpbuffer.backlog_write_entries = 6;
        PmemSystem::new(&cfg, 1 << 30, u32::MAX, 1)
    }

    /// 64 B line `sub` of XPLine `x` on a one-DIMM system.
    fn line(x: u64, sub: u64) -> u64 {
        4 * x + sub
    }

    #[test]
    fn writes_patch_a_queued_read_modify_write_until_its_fill_read_returns() {
        for merge in [false, true] {
            let mut s = one_dimm(merge);
            // A backed-up media queue: only the 6 backlog entries assemble writes, so the
            // seventh partly written XPLine sends the oldest (XPLine 0) to media early.
            s.dimms[0].write_queue_until_ns = 50_000.0;
            for x in 0..7 {
                s.mem_write(line(x, 0), 0, WriteCause::Flush);
            }
            let c = s.counters();
            assert_eq!((c.xpbuffer_early_writebacks, c.media_reads_64b), (1, 4));
            // The rest of XPLine 0 arrives within the fill read's time.
            s.now_ns = 100.0;
            for sub in 1..4 {
                s.mem_write(line(0, sub), 0, WriteCause::Flush);
            }
            let c = s.counters();
            if merge {
                // Patched into the queued write, which no longer needs its fill read.
                assert_eq!((c.media_writes_64b, c.media_reads_64b), (4, 0));
                assert_eq!(c.xpbuffer_merges, 3);
            } else {
                // Assembled anew in the buffer (three quarters, still partial): that pushes
                // the next partly written XPLine out early, another RMW.
                assert_eq!((c.media_writes_64b, c.media_reads_64b), (8, 8));
            }
            assert_eq!(c.write_requests, 10);
        }
    }

    #[test]
    fn a_read_waits_for_the_queued_write_and_ends_the_merging() {
        let mut s = one_dimm(true);
        s.dimms[0].write_queue_until_ns = 50_000.0;
        for x in 0..7 {
            s.mem_write(line(x, 0), 0, WriteCause::Flush);
        }
        s.now_ns = 100.0;
        s.op_wait_ns = 0.0;
        s.mem_read(line(0, 1), 0);
        // Ordered after XPLine 0's write, which starts when the queue has drained.
        assert!(s.op_wait_ns > 49_000.0, "waited {}", s.op_wait_ns);
        s.mem_write(line(0, 1), 0, WriteCause::Flush);
        let c = s.counters();
        assert_eq!(c.xpbuffer_merges, 0, "the read ended the merging");
        // XPLine 0's early write-back kept its fill read; the new partial line pushed
        // XPLine 1 out early too.
        assert_eq!((c.media_writes_64b, c.media_reads_64b), (8, 8));
    }

    #[test]
    fn a_writer_waits_for_a_credit_when_the_media_queue_is_full() {
        let mut s = one_dimm(true);
        let write_ns = s.write_ns;
        // 58 queued media writes (64 entries less 6 assembling) fill the queue's room.
        s.dimms[0].write_queue_until_ns = 60.0 * write_ns;
        s.mem_write(line(1000, 0), 0, WriteCause::Flush);
        assert!(
            (s.op_wait_ns - 2.0 * write_ns).abs() < 1e-6,
            "{}",
            s.op_wait_ns
        );
        let mut free = one_dimm(false);
        free.dimms[0].write_queue_until_ns = 60.0 * write_ns;
        free.mem_write(line(1000, 0), 0, WriteCause::Flush);
        assert_eq!(free.op_wait_ns, 0.0);
    }

    /// One DIMM whose media writes hold their XPLine for VANS's media write latency (300
    /// cycles at 0.75 ns = 225 ns), with or without in-order requests.
    fn holding_dimm(in_order: bool) -> PmemSystem {
        let mut cfg = PmemConfig {
            dimms: 1,
            ..PmemConfig::default()
        };
        cfg.xpbuffer.in_order_requests = in_order;
        cfg.timing.media_write_latency_ns = Some(225.0);
        PmemSystem::new(&cfg, 1 << 30, u32::MAX, 1)
    }

    /// Write 64 B line `sub` of XPLine `x` at `t_ns`; returns the request's wait.
    fn write_at(s: &mut PmemSystem, t_ns: f64, x: u64, sub: u64) -> f64 {
        s.now_ns = t_ns;
        s.op_wait_ns = 0.0;
        s.mem_write(line(x, sub), 0, WriteCause::Flush);
        s.op_wait_ns
    }

    #[test]
    fn rewriting_one_xpline_waits_for_its_media_write_and_four_do_not() {
        // A thread writes one 64 B line every 50 ns, the media queue idle at first.
        // One XPLine (a 256 B region): sub-lines 0..3 at t = 0, 50, 100, 150; the fourth
        // completes the XPLine, whose media write starts at once (t = 150) and holds it
        // until 150 + 225 = 375. The rewrite of sub-line 0 at t = 200 waits 375 - 200 =
        // 175 ns; the next sub-lines (t = 250.. are issued after it) then merge freely.
        let mut one = holding_dimm(false);
        for sub in 0..4 {
            assert_eq!(write_at(&mut one, 50.0 * sub as f64, 0, sub), 0.0);
        }
        assert!((write_at(&mut one, 200.0, 0, 0) - 175.0).abs() < 1e-9);
        // Four XPLines (a 1 KiB region): XPLine 0 is complete at t = 150 as before, but the
        // thread comes back to it only after the other three, at t = 16 x 50 = 800 > 375:
        // its write has finished, nothing waits.
        let mut four = holding_dimm(false);
        let mut t = 0.0;
        for x in 0..4 {
            for sub in 0..4 {
                assert_eq!(write_at(&mut four, t, x, sub), 0.0, "x {x} sub {sub}");
                t += 50.0;
            }
        }
        assert_eq!(write_at(&mut four, t, 0, 0), 0.0);
        assert_eq!(four.counters().media_writes_64b, 16, "four whole XPLines");
        // Without the hold, a started write is out of the way: the one-XPLine rewrite at
        // t = 200 (after the start at 150) does not wait.
        let mut free = one_dimm(true);
        for sub in 0..4 {
            write_at(&mut free, 50.0 * sub as f64, 0, sub);
        }
        assert_eq!(write_at(&mut free, 200.0, 0, 0), 0.0);
    }

    #[test]
    fn an_in_order_dimm_holds_later_requests_behind_a_waiting_one() {
        for in_order in [false, true] {
            let mut s = holding_dimm(in_order);
            for sub in 0..4 {
                write_at(&mut s, 50.0 * sub as f64, 0, sub);
            }
            // The rewrite at t = 200 waits for XPLine 0 until 375 (as above) ...
            assert!((write_at(&mut s, 200.0, 0, 0) - 175.0).abs() < 1e-9);
            // ... and another thread's write to XPLine 9 at t = 210 waits behind it only
            // when the DIMM takes requests in order: 375 - 210 = 165 ns.
            let other = write_at(&mut s, 210.0, 9, 0);
            let read = {
                s.now_ns = 220.0;
                s.op_wait_ns = 0.0;
                s.mem_read(line(20, 0), 0);
                s.op_wait_ns
            };
            if in_order {
                assert!((other - 165.0).abs() < 1e-9, "{other}");
                assert!((read - 155.0).abs() < 1e-9, "{read}");
            } else {
                assert_eq!((other, read), (0.0, 0.0));
            }
            // After the head has stopped waiting, requests pass freely again.
            assert_eq!(write_at(&mut s, 400.0, 10, 0), 0.0);
        }
    }

    /// 100 k whole XPLines written back to back, each request waiting for its WPQ credit:
    /// with the floor at the writer's clock the queue holds the writes in flight; with the
    /// floor held at 0 (another core that never runs) it stops at its cap instead of growing
    /// with every XPLine written.
    #[test]
    fn a_floor_held_back_leaves_the_queue_at_its_cap() {
        for follow in [true, false] {
            let mut s = one_dimm(true);
            let mut t = 0.0;
            for x in 0..100_000 {
                for sub in 0..4 {
                    s.now_ns = t;
                    s.floor_ns = if follow { t } else { 0.0 };
                    s.op_wait_ns = 0.0;
                    s.mem_write(line(x, sub), 0, WriteCause::Flush);
                    t += s.op_wait_ns + 1.0;
                }
            }
            assert_eq!(s.counters().media_writes_64b, 400_000);
            if follow {
                assert!(s.queued_writes() <= 64, "{}", s.queued_writes());
                assert_eq!(s.queue_cap_drops(), 0);
            } else {
                assert!(s.queued_writes() <= QUEUED_CAP, "{}", s.queued_writes());
                assert!(s.queue_cap_drops() > 0);
            }
        }
    }

    proptest::proptest! {
        /// Dropping the queued writes done by the floor changes no answer: a system whose
        /// floor follows the slowest of three cores' clocks gives the same waits and
        /// counters, request by request, as one that keeps every queued write (floor 0), with
        /// and without a media write latency and in-order requests.
        #[test]
        fn dropping_done_writes_changes_no_answer(
            hold in proptest::bool::ANY,
            in_order in proptest::bool::ANY,
            ops in proptest::collection::vec((0usize..3, 0u64..40, 0u64..300, 0u8..4), 1..400),
        ) {
            let mk = || {
                let mut cfg = PmemConfig { dimms: 2, ..PmemConfig::default() };
                cfg.xpbuffer.entries = 8;
                cfg.xpbuffer.backlog_write_entries = 2;
                cfg.xpbuffer.in_order_requests = in_order;
                cfg.timing.media_write_latency_ns = hold.then_some(225.0);
                PmemSystem::new(&cfg, 1 << 30, u32::MAX, 1)
            };
            let (mut kept, mut dropped) = (mk(), mk());
            let mut clocks = [0.0f64; 3];
            for (core, step_ns, x, op) in ops {
                // Small steps on few XPLines (of both DIMMs): writes run ahead of the media
                // and meet queued writes, some still being written.
                clocks[core] += step_ns as f64;
                let floor = clocks.iter().copied().fold(f64::INFINITY, f64::min);
                let line = (x % 48) * 64 + x / 48 * 4 + u64::from(op % 4);
                let mut waits = [0.0; 2];
                for (k, s) in [&mut kept, &mut dropped].into_iter().enumerate() {
                    s.now_ns = clocks[core];
                    s.floor_ns = if k == 1 { floor } else { 0.0 };
                    s.op_wait_ns = 0.0;
                    if op == 3 {
                        s.mem_read(line, core);
                    } else {
                        s.mem_write(line, core, WriteCause::Flush);
                    }
                    waits[k] = s.op_wait_ns;
                }
                clocks[core] += waits[0];
                proptest::prop_assert_eq!(waits[0].to_bits(), waits[1].to_bits());
                proptest::prop_assert!(kept.counters() == dropped.counters());
                proptest::prop_assert!(dropped.queued_writes() <= kept.queued_writes());
            }
            proptest::prop_assert_eq!(dropped.queue_cap_drops(), 0);
        }

        /// The rounding up of queued media writes equals `f64::ceil` for every quotient.
        #[test]
        fn ceil_positive_is_ceil(
            x in 0.0f64..1e20,
            small in 0.0f64..8.0,
            n in 0u64..1 << 53,
        ) {
            for v in [x, small, n as f64, f64::MIN_POSITIVE, 0.0, 4_503_599_627_370_495.5] {
                proptest::prop_assert_eq!(ceil_positive(v).to_bits(), v.ceil().to_bits());
            }
        }
    }

    #[test]
    fn routing_interleaves_4k_and_inverts() {
        let s = PmemSystem::new(&PmemConfig::default(), 1 << 30, u32::MAX, 1);
        assert_eq!(s.route(0).0, 0);
        assert_eq!(s.route(4096 >> 6).0, 1);
        assert_eq!(s.route((6 * 4096) >> 6), (0, 4096 >> 6));
        for addr in [0u64, 256, 4096 + 512, 7 * 4096 + 768, 123 * 4096 + 3840] {
            let (d, local) = s.route(addr >> 6);
            assert_eq!(s.global_addr(d, local >> 2), addr & !255);
        }
    }
}
