//! Page-level event streams for the host threads and their hand-offs: replay of any trace
//! (reduced to pages by the trace layer's [`PageLevel`]); the pigz-like generator is
//! [`super::pigz`].

use std::path::Path;
use std::sync::Arc;

use crate::error::ConfigError;
use crate::hash::FastMap;
use crate::trace::{open_trace, Kind, PageLevel};

pub(super) const PAGE_BYTES: u64 = 4096;
/// Sizes in this module are binary megabytes.
pub(super) const MIB: u64 = 1 << 20;

/// Who touches a page, which decides what its first use costs the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Touch {
    /// A load or store of the thread: a first use is a page fault (exception + handler).
    #[default]
    Cpu,
    /// The kernel's copy inside a system call to or from a page-cache page (`write()`,
    /// `read()`): a first use costs the allocation, not an exception, and the copy runs with
    /// page faults disabled, so an internal fault there cannot block.
    Syscall,
    /// A disk's DMA writing the whole page (readahead filling an input page): no CPU
    /// access, no TLB, and the device needs no flash read because nothing of the old
    /// contents survives.
    Dma,
}

/// One page-level access: a page of the thread's process, read or write, after `gap`
/// instructions, by the thread, the kernel or a device (`touch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ev {
    pub page: u32,
    pub gap: u32,
    pub write: bool,
    pub touch: Touch,
}

/// Before event `at`, the thread waits (blocks, as on a futex) until thread `thread` has
/// done `reached` events: a producer/consumer hand-off between the threads of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dep {
    pub at: u32,
    pub thread: u16,
    pub reached: u32,
}

/// What one thread replays, in which address space, and whom it waits for (sorted by
/// `at`).
#[derive(Debug, Clone)]
pub struct ThreadSpec {
    pub process: u16,
    pub events: Arc<Vec<Ev>>,
    pub deps: Vec<Dep>,
}

#[derive(Debug, Clone)]
pub struct HybridWorkload {
    pub name: String,
    pub threads: Vec<ThreadSpec>,
    /// Distinct data pages of each process (page ids are `0..pages`).
    pub process_pages: Vec<u32>,
    /// Pages `0..resident_pages` of process 0 were in use before the run (the resident
    /// OS): mapped to logical pages held in flash, so their first touch is an internal
    /// fault, not an OS page fault.
    pub resident_pages: u32,
    /// Input size the workload stands for (MiB), for the results table.
    pub input_mib: f64,
    /// Output bytes per input byte of a decompressor (0: not a decompressor).
    pub output_ratio: f64,
}

impl HybridWorkload {
    pub fn events(&self) -> u64 {
        self.threads.iter().map(|t| t.events.len() as u64).sum()
    }

    /// Distinct data pages over all processes.
    pub fn footprint_pages(&self) -> u64 {
        self.process_pages.iter().map(|&p| p as u64).sum()
    }

    /// `threads` threads replaying `events`, in one shared address space or one process each.
    fn replicate(
        name: String,
        events: Vec<Ev>,
        pages: u32,
        threads: u16,
        shared: bool,
        input_mib: f64,
    ) -> HybridWorkload {
        let events = Arc::new(events);
        let procs = if shared { 1 } else { threads };
        HybridWorkload {
            name,
            threads: (0..threads)
                .map(|t| ThreadSpec {
                    process: if shared { 0 } else { t },
                    events: events.clone(),
                    deps: Vec::new(),
                })
                .collect(),
            process_pages: vec![pages; procs as usize],
            resident_pages: 0,
            input_mib,
            output_ratio: 0.0,
        }
    }
}

/// Page-level events a trace replay holds at most over all its passes (12 bytes each).
const MAX_TRACE_EVENTS: u64 = 100_000_000;

/// Reads any trace the trace layer knows, reduced to 4 KB page runs; page numbers become
/// dense ids in order of first use; instructions between accesses become gaps.
pub(super) fn from_trace(
    path: &Path,
    file: &str,
    key: &str,
    threads: u16,
    shared: bool,
    input_mib: f64,
    passes: u32,
) -> Result<HybridWorkload, ConfigError> {
    let err = |m: String| {
        ConfigError::new(
            file,
            key,
            format!("cannot read trace '{}': {m}", path.display()),
        )
    };
    let reader = open_trace(path, None).map_err(|e| err(e.to_string()))?;
    let mut ids: FastMap<u64, u32> = FastMap::default();
    let mut events = Vec::new();
    let mut gap = 0u64;
    for r in PageLevel::new(reader, PAGE_BYTES) {
        let r = r.map_err(|e| err(e.to_string()))?;
        gap += r.inst_gap;
        if !matches!(r.kind, Kind::Load | Kind::Store | Kind::Modify) {
            continue;
        }
        let next = ids.len() as u32;
        let page = *ids.entry(r.address / PAGE_BYTES).or_insert(next);
        events.push(Ev {
            page,
            gap: gap.min(u32::MAX as u64) as u32,
            write: r.kind.is_write(),
            touch: Touch::Cpu,
        });
        gap = 0;
    }
    if events.is_empty() {
        return Err(err("no load/store records".into()));
    }
    // The passes follow one another on the same pages (ids stay those of the first pass).
    let total = events.len() as u64 * passes as u64;
    if total > MAX_TRACE_EVENTS {
        return Err(ConfigError::new(
            file,
            "workload.trace_passes",
            format!(
                "{passes} passes of {} page-level events are {total}, more than the {MAX_TRACE_EVENTS} a \
                 replay holds: fewer passes",
                events.len()
            ),
        ));
    }
    let events = events.repeat(passes as usize);
    let mut name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if passes > 1 {
        name = format!("{name}, {passes} passes");
    }
    Ok(HybridWorkload::replicate(
        name,
        events,
        ids.len() as u32,
        threads,
        shared,
        input_mib * passes as f64,
    ))
}
