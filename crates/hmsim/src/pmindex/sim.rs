//! Feeds a region's event stream to the cache + PMem model of `crate::pmem` (caches → WPQ →
//! XPBuffer → AIT → media), so every operation's LLC misses, WPQ inserts, write requests and
//! media writes are known. The region sits at simulated address 0 (4 KiB aligned, so the
//! DIMM interleaving sees the region's own layout).

use super::region::{PmEvent, PmObserver};
use crate::cache::CacheConfig;
use crate::pmem::{DimmSpec, Machine, Persist, PmemConfig};

pub(crate) struct ModelObserver {
    pub m: Machine,
}

impl ModelObserver {
    pub(crate) fn new(
        pmem: &PmemConfig,
        cache: &CacheConfig,
        cores: usize,
        dimm: DimmSpec,
        seed: u64,
    ) -> ModelObserver {
        let mut m = Machine::new(pmem, cache, cores, dimm, seed);
        // The study reads counters, LLC misses and the clocks, never the per-operation
        // latency histograms: skip recording them (about a tenth of the per-event cost).
        m.record_latency = false;
        ModelObserver { m }
    }

    /// Accesses that missed the LLC (loads and stores' read-for-ownership), so far.
    pub(crate) fn llc_misses(&self) -> u64 {
        self.m.h.level_stats()[2].misses
    }
}

impl PmObserver for ModelObserver {
    fn fork(&self) -> Option<Box<dyn PmObserver>> {
        Some(Box::new(ModelObserver { m: self.m.clone() }))
    }
    fn host_hint(&self, core: usize, off: u64, len: u64) {
        self.m.prefetch_sets(core, off, len);
    }
    #[inline]
    fn event(&mut self, core: usize, e: PmEvent) {
        let m = &mut self.m;
        match e {
            PmEvent::Load { off, len } => {
                if m.try_l1_hit(core, off, len as u64, false).is_none() {
                    m.read_op(core, off, len as u64);
                }
            }
            PmEvent::Store { off, len } => {
                if m.try_l1_hit(core, off, len as u64, true).is_none() {
                    m.write_op(core, off, len as u64, Persist::None, false);
                }
            }
            PmEvent::NtStore { off, len } => {
                m.write_op(core, off, len as u64, Persist::Ntstore, false);
            }
            PmEvent::Flush { off, kind } => m.flush_op(core, off, kind),
            PmEvent::Fence => {}
        }
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}
