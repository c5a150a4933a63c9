//! Page-mapping FTL: L2P and P2L tables, per-block valid counts and erase counts, one open
//! write block, a FIFO free-block pool and garbage collection when the pool runs low.
//!
//! Allocation and GC work on superblocks — one physical block from every die — and
//! consecutive pages of a superblock go to consecutive dies, so writes and GC copies
//! spread over all dies (the usual striping of page-mapping FTLs). With one die a
//! superblock is a block.

use std::collections::VecDeque;

use rand::Rng;

use super::gc::GcPolicy;
use super::nand::NandTiming;
use super::timing::{FlashOp, OpKind};
use crate::rng::SimRng;

/// "No page": an unmapped logical page or an invalid physical one.
pub const NONE: u32 = u32::MAX;

/// Shape of the flash array.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    pub logical_pages: u32,
    pub pages_per_block: u32,
    /// Spare capacity as a fraction of the logical capacity.
    pub over_provisioning: f64,
    pub channels: u32,
    pub dies_per_channel: u32,
    pub page_bytes: u64,
    /// Channel bandwidth for page transfers; `None`: transfers are inside the array times.
    pub channel_gb_s: Option<f64>,
    /// GC runs when opening a write block leaves fewer free blocks than this.
    pub gc_free_blocks: u32,
}

impl Geometry {
    pub fn dies(&self) -> u32 {
        self.channels * self.dies_per_channel
    }

    /// Pages of a superblock (a block on every die).
    pub fn superblock_pages(&self) -> u32 {
        self.pages_per_block * self.dies()
    }

    /// Superblocks: the logical capacity plus over-provisioning, and never fewer than GC
    /// needs to make progress (one full superblock more than the data, the GC reserve and
    /// the write superblock).
    pub fn blocks(&self) -> u32 {
        let ppb = self.superblock_pages() as f64;
        let data = (self.logical_pages as f64 / ppb).ceil();
        let total = (self.logical_pages as f64 * (1.0 + self.over_provisioning) / ppb).ceil();
        total.max(data + self.gc_free_blocks as f64 + 1.0) as u32
    }
}

/// Counters since the last [`Ftl::reset_stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FtlStats {
    pub host_writes: u64,
    pub gc_writes: u64,
    pub reads: u64,
    /// Physical block erases (a superblock erase counts one per die).
    pub erases: u64,
    /// Victim blocks cleaned.
    pub gc_runs: u64,
    pub trims: u64,
}

impl FtlStats {
    /// Flash programs per host write; `None` before the first host write.
    pub fn waf(&self) -> Option<f64> {
        (self.host_writes > 0)
            .then(|| (self.host_writes + self.gc_writes) as f64 / self.host_writes as f64)
    }
}

pub struct Ftl {
    geo: Geometry,
    nand: NandTiming,
    xfer_ns: u64,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    valid: Vec<u32>,
    erase_count: Vec<u32>,
    /// Write sequence number of each block's last program (cost-benefit age).
    stamp: Vec<u64>,
    free: VecDeque<u32>,
    /// Full blocks (GC candidates) and each block's index in it.
    full: Vec<u32>,
    full_pos: Vec<u32>,
    active: u32,
    next_page: u32,
    seq: u64,
    in_gc: bool,
    gc: Box<dyn GcPolicy>,
    pub stats: FtlStats,
}

impl Ftl {
    pub fn new(geo: Geometry, nand: NandTiming, gc: Box<dyn GcPolicy>) -> Ftl {
        let blocks = geo.blocks();
        let pages = blocks as usize * geo.superblock_pages() as usize;
        let xfer_ns = geo
            .channel_gb_s
            .map_or(0, |g| (geo.page_bytes as f64 / g).round() as u64);
        let mut free: VecDeque<u32> = (0..blocks).collect();
        let active = free.pop_front().expect("at least one block");
        Ftl {
            geo,
            nand,
            xfer_ns,
            l2p: vec![NONE; geo.logical_pages as usize],
            p2l: vec![NONE; pages],
            valid: vec![0; blocks as usize],
            erase_count: vec![0; blocks as usize],
            stamp: vec![0; blocks as usize],
            free,
            full: Vec::new(),
            full_pos: vec![NONE; blocks as usize],
            active,
            next_page: 0,
            seq: 0,
            in_gc: false,
            gc,
            stats: FtlStats::default(),
        }
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }
    pub fn nand(&self) -> &NandTiming {
        &self.nand
    }
    pub fn gc_name(&self) -> &'static str {
        self.gc.name()
    }
    /// Erases of each superblock (each of its physical blocks was erased this often).
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }
    pub fn free_blocks(&self) -> usize {
        self.free.len()
    }
    pub fn reset_stats(&mut self) {
        self.stats = FtlStats::default();
    }

    /// Physical page of `lpn`, or [`NONE`].
    #[inline]
    pub fn lookup(&self, lpn: u32) -> u32 {
        self.l2p[lpn as usize]
    }

    fn sb_pages(&self) -> u32 {
        self.geo.superblock_pages()
    }

    fn die_of_page(&self, ppn: u32) -> u32 {
        ppn % self.geo.dies()
    }

    fn read_op(&self, ppn: u32) -> FlashOp {
        FlashOp {
            kind: OpKind::Read,
            die: self.die_of_page(ppn),
            array_ns: self.nand.read_ns,
            xfer_ns: self.xfer_ns,
        }
    }

    /// The op reading `lpn`, or `None` if it has no flash copy.
    pub fn read(&mut self, lpn: u32) -> Option<FlashOp> {
        let ppn = self.l2p[lpn as usize];
        (ppn != NONE).then(|| {
            self.stats.reads += 1;
            self.read_op(ppn)
        })
    }

    fn invalidate(&mut self, lpn: u32) {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            self.p2l[old as usize] = NONE;
            let b = (old / self.sb_pages()) as usize;
            self.valid[b] -= 1;
            self.l2p[lpn as usize] = NONE;
        }
    }

    /// Drops `lpn`'s flash copy (its data is dead: the host overwrites the whole page).
    pub fn trim(&mut self, lpn: u32) {
        if self.l2p[lpn as usize] != NONE {
            self.stats.trims += 1;
        }
        self.invalidate(lpn);
    }

    /// Writes `lpn` out of place, appending the programs (and any GC reads, programs and
    /// erases it triggers, in order) to `ops`.
    pub fn write(&mut self, lpn: u32, ops: &mut Vec<FlashOp>) {
        self.invalidate(lpn);
        self.stats.host_writes += 1;
        self.program(lpn, ops);
    }

    fn program(&mut self, lpn: u32, ops: &mut Vec<FlashOp>) {
        if self.next_page == self.sb_pages() {
            self.open_block(ops);
        }
        let b = self.active;
        let ppn = b * self.sb_pages() + self.next_page;
        self.next_page += 1;
        self.p2l[ppn as usize] = lpn;
        self.l2p[lpn as usize] = ppn;
        self.valid[b as usize] += 1;
        self.seq += 1;
        self.stamp[b as usize] = self.seq;
        ops.push(FlashOp {
            kind: OpKind::Program,
            die: self.die_of_page(ppn),
            array_ns: self.nand.program_ns,
            xfer_ns: self.xfer_ns,
        });
    }

    fn open_block(&mut self, ops: &mut Vec<FlashOp>) {
        let done = self.active;
        self.full_pos[done as usize] = self.full.len() as u32;
        self.full.push(done);
        self.active = self
            .free
            .pop_front()
            .expect("GC keeps at least one free block");
        self.next_page = 0;
        if !self.in_gc && self.free.len() < self.geo.gc_free_blocks as usize {
            self.collect(ops);
        }
    }

    fn collect(&mut self, ops: &mut Vec<FlashOp>) {
        self.in_gc = true;
        let ppb = self.sb_pages();
        while self.free.len() < self.geo.gc_free_blocks as usize && !self.full.is_empty() {
            let mut victim = self
                .gc
                .select(&self.full, &self.valid, &self.stamp, self.seq, ppb);
            if self.valid[victim as usize] == ppb {
                // A fully valid victim frees nothing; take the fewest-valid block instead.
                victim = *self
                    .full
                    .iter()
                    .min_by_key(|&&b| (self.valid[b as usize], b))
                    .expect("non-empty");
                if self.valid[victim as usize] == ppb {
                    break;
                }
            }
            self.remove_full(victim);
            for off in 0..ppb {
                let ppn = victim * ppb + off;
                let lpn = self.p2l[ppn as usize];
                if lpn == NONE {
                    continue;
                }
                ops.push(self.read_op(ppn));
                self.p2l[ppn as usize] = NONE;
                self.valid[victim as usize] -= 1;
                self.stats.gc_writes += 1;
                self.program(lpn, ops);
            }
            for die in 0..self.geo.dies() {
                ops.push(FlashOp {
                    kind: OpKind::Erase,
                    die,
                    array_ns: self.nand.erase_ns,
                    xfer_ns: 0,
                });
            }
            self.erase_count[victim as usize] += 1;
            self.stats.erases += self.geo.dies() as u64;
            self.stats.gc_runs += 1;
            self.free.push_back(victim);
        }
        self.in_gc = false;
    }

    fn remove_full(&mut self, b: u32) {
        let i = self.full_pos[b as usize] as usize;
        self.full.swap_remove(i);
        if i < self.full.len() {
            self.full_pos[self.full[i] as usize] = i as u32;
        }
        self.full_pos[b as usize] = NONE;
    }

    /// The study's preconditioning: write the first `sequential` fraction of the logical
    /// pages in order, then `random` × logical pages at uniformly random logical pages.
    /// Counters are reset afterwards, so the run's WAF is the run's own.
    pub fn precondition(&mut self, sequential: f64, random: f64, rng: &mut SimRng) {
        let n = self.geo.logical_pages;
        let mut ops = Vec::new();
        for lpn in 0..((n as f64 * sequential) as u32).min(n) {
            self.write(lpn, &mut ops);
            ops.clear();
        }
        for _ in 0..(n as f64 * random) as u64 {
            self.write(rng.random_range(0..n), &mut ops);
            ops.clear();
        }
        self.reset_stats();
    }

    /// Checks the mapping invariants: every mapped logical page points at a physical page
    /// that points back; per-block valid counts match; free blocks hold nothing.
    pub fn check(&self) -> Result<(), String> {
        let ppb = self.sb_pages() as usize;
        let mut valid = vec![0u32; self.valid.len()];
        for (lpn, &ppn) in self.l2p.iter().enumerate() {
            if ppn == NONE {
                continue;
            }
            if self.p2l[ppn as usize] != lpn as u32 {
                return Err(format!(
                    "lpn {lpn} -> ppn {ppn} which maps back to {}",
                    self.p2l[ppn as usize]
                ));
            }
            valid[ppn as usize / ppb] += 1;
        }
        let back = self.p2l.iter().filter(|&&l| l != NONE).count();
        let mapped = self.l2p.iter().filter(|&&p| p != NONE).count();
        if back != mapped {
            return Err(format!(
                "{back} valid physical pages but {mapped} mapped logical pages"
            ));
        }
        if valid != self.valid {
            return Err("per-block valid counts disagree with the L2P table".into());
        }
        if let Some(b) = self.free.iter().find(|&&b| self.valid[b as usize] != 0) {
            return Err(format!("free block {b} holds valid pages"));
        }
        Ok(())
    }
}
