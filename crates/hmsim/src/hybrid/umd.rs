//! The UMD ("Unified Memory Device"): an internal DRAM cache in front of a flash FTL,
//! the L2P from logical pages to DRAM frames or flash pages, the modified page walk and
//! internal page faults with their service-time estimate.

use super::cache::UmdDramCache;
use crate::flash::{FlashOp, Ftl, Units, NONE};

/// What the modified page walk finds for a logical page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    /// In DRAM frame `frame`, usable from `ready_ns` (a fault may still be filling it).
    Dram { frame: u32, ready_ns: u64 },
    /// Only in flash: an internal page fault.
    Flash,
    /// Never written (or trimmed): the OS must allocate it.
    Unmapped,
}

/// One fault's work: the frame the page now occupies, the estimate the device computes
/// before doing it, when it is really done, the logical page evicted (if any) and whether
/// any flash operation was needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub frame: u32,
    /// Evicted frame's former page; TLBs holding `frame` must drop it.
    pub evicted: Option<u32>,
    pub estimate_ns: u64,
    pub done_ns: u64,
    pub flash_work: bool,
    pub gc_runs: u64,
}

pub struct Umd {
    /// A dirty victim's frame is reused once its data is in the die's page register,
    /// not when its program is done (`victim_release = "page_register"`).
    pub release_at_register: bool,
    pub cache: UmdDramCache,
    pub ftl: Ftl,
    units: Units,
    frame_of: Vec<u32>,
    ready_ns: Vec<u64>,
    dram_read_ns: u64,
    dram_write_ns: u64,
    ops: Vec<FlashOp>,
    pub writebacks: u64,
    /// Fresh pages whose dead flash copy was read in (short faults of recycled pages).
    pub stale_reads: u64,
    /// Pages written whole by a DMA (no flash read).
    pub dma_fills: u64,
}

impl Umd {
    /// `dram_frames` page frames of DRAM over `ftl`; DRAM page read/write costs in ns.
    pub fn new(ftl: Ftl, dram_frames: u32, dram_read_ns: u64, dram_write_ns: u64) -> Umd {
        let g = *ftl.geometry();
        Umd {
            release_at_register: false,
            cache: UmdDramCache::new(dram_frames),
            units: Units::new(g.channels, g.dies()),
            frame_of: vec![NONE; g.logical_pages as usize],
            ready_ns: vec![0; dram_frames as usize],
            dram_read_ns,
            dram_write_ns,
            ops: Vec::new(),
            ftl,
            writebacks: 0,
            stale_reads: 0,
            dma_fills: 0,
        }
    }

    pub fn logical_pages(&self) -> u32 {
        self.frame_of.len() as u32
    }

    /// Before the run: `lpn` holds data the host wrote earlier (the resident OS), so it
    /// has a flash copy; the writes are not counted.
    pub fn preload(&mut self, lpn: u32) {
        if self.ftl.lookup(lpn) == NONE {
            self.ftl.write(lpn, &mut self.ops);
            self.ops.clear();
        }
    }

    /// The modified page walk's query for `lpn`.
    #[inline]
    pub fn walk(&self, lpn: u32) -> Walk {
        let f = self.frame_of[lpn as usize];
        if f != NONE {
            Walk::Dram {
                frame: f,
                ready_ns: self.ready_ns[f as usize],
            }
        } else if self.ftl.lookup(lpn) != NONE {
            Walk::Flash
        } else {
            Walk::Unmapped
        }
    }

    /// A host access through DRAM frame `f` (the device sees DDR traffic, so recency and
    /// dirtiness are tracked on every access).
    #[inline]
    pub fn access(&mut self, f: u32, write: bool) {
        self.cache.touch(f, write);
    }

    /// A frame for a page coming in at `now_ns`: a free one, else the LRU victim, whose
    /// program (if dirty) is queued in `ops`. Returns the frame, the evicted page and the
    /// DRAM time spent so far (estimate and clock).
    fn take_frame(&mut self, now_ns: u64) -> (u32, Option<u32>, u64, u64) {
        let mut est = 0u64;
        let mut t = now_ns;
        let mut evicted = None;
        let frame = match self.cache.take_free() {
            Some(f) => f,
            None => {
                let v = self
                    .cache
                    .lru()
                    .expect("a DRAM cache has at least one frame");
                let vl = self.cache.lpn(v);
                if self.cache.is_dirty(v) {
                    est += self.dram_read_ns;
                    t += self.dram_read_ns;
                    self.ftl.write(vl, &mut self.ops);
                    self.writebacks += 1;
                }
                self.frame_of[vl as usize] = NONE;
                evicted = Some(vl);
                v
            }
        };
        (frame, evicted, est, t)
    }

    /// A disk's DMA writes the whole of `lpn` at `now_ns` (readahead filling a page-cache
    /// page). It needs a frame like a fault (the victim's program first if it is dirty)
    /// but no flash read: nothing of the old contents survives a whole-page write. The
    /// frame is ready after the victim's program and the DRAM write of the data; no thread
    /// waits here (the disk does), only a later access that finds the frame not ready.
    pub fn fill_whole(&mut self, lpn: u32, now_ns: u64) -> Fault {
        let f = self.frame_of[lpn as usize];
        if f != NONE {
            // Already in DRAM: the data overwrites the frame in place.
            self.cache.touch(f, true);
            return Fault {
                frame: f,
                evicted: None,
                estimate_ns: 0,
                done_ns: self.ready_ns[f as usize].max(now_ns),
                flash_work: false,
                gc_runs: 0,
            };
        }
        self.ops.clear();
        let gc_before = self.ftl.stats.gc_runs;
        let taken = self.take_frame(now_ns);
        self.dma_fills += 1;
        self.finish_fault(lpn, taken, true, true, gc_before)
    }

    /// Brings `lpn` into DRAM at `now_ns`: a free frame or the LRU victim (programmed to
    /// flash first if dirty, with any GC that needs), then the page read from flash. For a
    /// `fresh` page (the OS zero-fills a page it took from its free list) the device still
    /// reads the flash copy if there is one: nobody told it the old contents are dead, and
    /// the walk comes before the zero-fill's stores (a short fault when the victim is
    /// clean). The estimate is the DRAM operation times plus the flash operations
    /// scheduled on idle dies and channels; the done time schedules the same operations on
    /// the real ones, so it exceeds the estimate only when earlier work still occupies them.
    pub fn fault(&mut self, lpn: u32, now_ns: u64, fresh: bool) -> Fault {
        self.ops.clear();
        let gc_before = self.ftl.stats.gc_runs;
        let taken = self.take_frame(now_ns);
        let read = self.ftl.read(lpn);
        if let Some(op) = read {
            self.ops.push(op);
        } else {
            assert!(fresh, "a flash fault is for a page in flash");
        }
        if read.is_some() && fresh {
            self.stale_reads += 1;
        }
        self.finish_fault(lpn, taken, read.is_some(), fresh, gc_before)
    }

    /// The rest of a fault on a frame `take_frame` gave: the flash operations in `self.ops`
    /// scheduled (estimate on idle units, done time on the real ones), the DRAM write of
    /// the data if any arrives, and `lpn` installed in the frame.
    fn finish_fault(
        &mut self,
        lpn: u32,
        (frame, evicted, mut est, mut t): (u32, Option<u32>, u64, u64),
        data_written: bool,
        dirty: bool,
        gc_before: u64,
    ) -> Fault {
        if self.release_at_register {
            est += self.units.idle_released(&self.ops);
            t = self.units.schedule_released(&self.ops, t);
        } else {
            est += self.units.idle_span(&self.ops);
            t = self.units.schedule(&self.ops, t);
        }
        if data_written {
            est += self.dram_write_ns;
            t += self.dram_write_ns;
        }
        self.cache.install(frame, lpn, dirty);
        self.frame_of[lpn as usize] = frame;
        self.ready_ns[frame as usize] = t;
        Fault {
            frame,
            evicted,
            estimate_ns: est,
            done_ns: t,
            flash_work: !self.ops.is_empty(),
            gc_runs: self.ftl.stats.gc_runs - gc_before,
        }
    }
}
