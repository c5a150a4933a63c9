//! Feeds a region's event stream to the cache + PMem model of `crate::pmem` (caches → WPQ →
//! XPBuffer → AIT → media), so every operation's LLC misses, WPQ inserts, write requests and
//! media writes are known. The region sits at simulated address 0 (4 KiB aligned, so the
//! DIMM interleaving sees the region's own layout).

use super::region::{Held, PmEvent, PmObserver};
use crate::cache::{CacheConfig, LINE_BYTES};
use crate::pmem::{DimmSpec, Machine, Persist, PmemConfig};

pub(crate) struct ModelObserver {
    pub m: Machine,
    /// Whether the region may hold back accesses that repeat a line (tests compare both).
    pub takes_repeats: bool,
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
        ModelObserver {
            m,
            takes_repeats: true,
        }
    }

    /// Accesses that missed the LLC (loads and stores' read-for-ownership), so far.
    pub(crate) fn llc_misses(&self) -> u64 {
        self.m.h.level_stats()[2].misses
    }
}

impl PmObserver for ModelObserver {
    fn fork(&self) -> Option<Box<dyn PmObserver>> {
        Some(Box::new(ModelObserver {
            m: self.m.clone(),
            takes_repeats: self.takes_repeats,
        }))
    }
    /// A single-line load or store of the line the core's last single-line load or store
    /// touched, nothing between: that access hit L1 or filled it, and either way left the
    /// line in the slot `try_l1_hit` looks at first, so this one hits there, changing only
    /// counts, the core's clock and the line's dirty bit.
    fn takes_repeats(&self) -> bool {
        self.takes_repeats
    }
    fn repeats(&mut self, h: Held) {
        self.m.repeat_l1_hits(
            h.core,
            h.line * LINE_BYTES,
            h.loads,
            h.stores,
            h.store_bytes,
        );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pmindex::key::KeyType;
    use crate::pmindex::region::{PmRegion, RegionConfig};
    use crate::pmindex::registry::registry;
    use crate::pmindex::testing::{fresh, random_ops};

    /// The model's whole state as numbers: each level's counts, PMem's counters, the lines
    /// and bytes, each core's clock to the bit.
    fn state(pm: &mut PmRegion) -> String {
        let o = pm.observer_mut().and_then(|o| o.as_any_mut()).unwrap();
        let m = &mut o.downcast_mut::<ModelObserver>().unwrap().m;
        m.drain();
        // The model sees region offsets, far below 128 GiB: its caches keep 32-bit ways
        // (half the host bytes per set; cache::Hierarchy).
        assert!(!m.h.is_wide(), "the model's caches were widened");
        let clocks: Vec<u64> = m.clocks.iter().map(|c| c.to_bits()).collect();
        format!(
            "{:?} {:?} {} {} {} {clocks:?} {}",
            m.h.level_stats(),
            m.sys.counters(),
            m.loaded_lines,
            m.stored_lines,
            m.stored_bytes,
            m.elapsed_ns().to_bits()
        )
    }

    /// Every index, on one and three cores, and with flush coalescing on two: the model
    /// that takes the region's held repeats ends in the state of the one that gets every
    /// access as an event, to the last count and clock bit.
    #[test]
    fn held_repeats_leave_the_model_as_events_do() {
        let ops = random_ops(KeyType::Int, 3000, 800, 5);
        for spec in registry() {
            for (cores, coalesce) in [(1, false), (3, false), (2, true)] {
                let run = |takes_repeats: bool| {
                    let rcfg = RegionConfig {
                        coalesce_flushes: coalesce,
                        ..RegionConfig::default()
                    };
                    let (mut pm, mut idx, _) = fresh(spec, KeyType::Int, Default::default(), rcfg);
                    let dimm = DimmSpec::from_rating(128 << 30, 1e15);
                    let mut m = ModelObserver::new(
                        &PmemConfig::default(),
                        &CacheConfig::default(),
                        cores,
                        dimm,
                        3,
                    );
                    m.takes_repeats = takes_repeats;
                    pm.set_observer(Some(Box::new(m)));
                    for (i, op) in ops.iter().enumerate() {
                        if matches!(op, crate::pmindex::ops::Op::Scan(..)) && !spec.ordered() {
                            continue;
                        }
                        pm.set_thread(i % cores);
                        op.apply(idx.as_mut(), &mut pm).unwrap();
                        if i == ops.len() / 3 {
                            // A copy carries on as the original, with what it holds.
                            pm = pm.fork().unwrap();
                        }
                        if i == ops.len() / 2 {
                            // A look at the model mid-run gets what is held first.
                            let _ = state(&mut pm);
                        }
                    }
                    (state(&mut pm), pm.stats())
                };
                assert_eq!(
                    run(true),
                    run(false),
                    "{} on {cores} cores, coalescing {coalesce}",
                    spec.name
                );
            }
        }
    }
}
