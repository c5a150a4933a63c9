//! Page-level event streams for the host threads: replay of any trace (reduced to pages by
//! the trace layer's [`PageLevel`]) and a synthetic pigz-like decompressor.

use std::path::Path;
use std::sync::Arc;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::config::{Validate, Validator};
use crate::error::ConfigError;
use crate::hash::FastMap;
use crate::trace::{open_trace, Kind, PageLevel};

pub const PAGE_BYTES: u64 = 4096;
/// Sizes in this module are binary megabytes.
pub const MB: u64 = 1 << 20;

/// One page-level access: a page of the thread's process, read or write, after `gap`
/// instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ev {
    pub page: u32,
    pub gap: u32,
    pub write: bool,
}

/// What one thread replays and in which address space.
#[derive(Debug, Clone)]
pub struct ThreadSpec {
    pub process: u16,
    pub events: Arc<Vec<Ev>>,
}

#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    pub threads: Vec<ThreadSpec>,
    /// Distinct data pages of each process (page ids are `0..pages`).
    pub process_pages: Vec<u32>,
    /// Input size the workload stands for (MB), for the results table.
    pub input_mb: f64,
}

impl Workload {
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
        input_mb: f64,
    ) -> Workload {
        let events = Arc::new(events);
        let procs = if shared { 1 } else { threads };
        Workload {
            name,
            threads: (0..threads)
                .map(|t| ThreadSpec {
                    process: if shared { 0 } else { t },
                    events: events.clone(),
                })
                .collect(),
            process_pages: vec![pages; procs as usize],
            input_mb,
        }
    }
}

/// Reads any trace the trace layer knows, reduced to 4 KB page runs; page numbers become
/// dense ids in order of first use; instructions between accesses become gaps.
pub fn from_trace(
    path: &Path,
    file: &str,
    key: &str,
    threads: u16,
    shared: bool,
    input_mb: f64,
) -> Result<Workload, ConfigError> {
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
        });
        gap = 0;
    }
    if events.is_empty() {
        return Err(err("no load/store records".into()));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Workload::replicate(
        name,
        events,
        ids.len() as u32,
        threads,
        shared,
        input_mb,
    ))
}

/// A pigz-like decompressor (`pigz -d`): each thread inflates its slice of the input —
/// streamed input pages, output pages written once in order, back-references into the last
/// 32 KB of output (the deflate window), and a few hot pages (Huffman tables, stack).
/// Input pages are new to memory when first read (the file comes from disk into the page
/// cache), output pages when first written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PigzLike {
    #[serde(default = "d_input")]
    pub input_mb: f64,
    /// Output bytes per input byte.
    #[serde(default = "d_ratio")]
    pub output_ratio: f64,
    #[serde(default = "d_window")]
    pub window_kb: u32,
    /// Instructions per output byte (zlib's inflate runs a few per byte).
    #[serde(default = "d_ipb")]
    pub instructions_per_byte: f64,
    /// Per-thread hot pages (tables, stack, buffers).
    #[serde(default = "d_hot")]
    pub hot_pages: u32,
}

fn d_input() -> f64 {
    45.0
}
fn d_ratio() -> f64 {
    2.0
}
fn d_window() -> u32 {
    32
}
fn d_ipb() -> f64 {
    6.0
}
fn d_hot() -> u32 {
    4
}

impl Default for PigzLike {
    fn default() -> Self {
        PigzLike {
            input_mb: d_input(),
            output_ratio: d_ratio(),
            window_kb: d_window(),
            instructions_per_byte: d_ipb(),
            hot_pages: d_hot(),
        }
    }
}

impl Validate for PigzLike {
    fn validate(&self, v: &mut Validator) {
        v.range("input_mb", self.input_mb, 0.01, 65536.0, "MB");
        v.range("output_ratio", self.output_ratio, 0.1, 100.0, "");
        v.range("window_kb", self.window_kb, 4, 1 << 20, "KB");
        v.range(
            "instructions_per_byte",
            self.instructions_per_byte,
            0.0,
            1e6,
            "",
        );
        v.range("hot_pages", self.hot_pages, 1, 1 << 16, "pages");
    }
}

/// Accesses per output page: the page is produced in this many chunks, each reading the
/// input, a table, the window and writing the output.
const CHUNKS_PER_PAGE: u32 = 4;

impl PigzLike {
    pub fn generate(&self, threads: u16, seed: u64) -> Workload {
        let mb = MB as f64 / PAGE_BYTES as f64;
        let in_pages = ((self.input_mb * mb / threads as f64).ceil() as u32).max(1);
        let out_pages = ((in_pages as f64 * self.output_ratio).ceil() as u32).max(1);
        let window = (self.window_kb as u64 * 1024 / PAGE_BYTES).max(1) as u32;
        let gap =
            (self.instructions_per_byte * PAGE_BYTES as f64 / (CHUNKS_PER_PAGE * 3) as f64) as u32;
        // Per thread: hot pages, then its input pages, then its output pages.
        let per_thread = self.hot_pages + in_pages + out_pages;
        let mut rng = crate::rng::stream(seed, "hybrid-pigz");
        let threads_v = (0..threads)
            .map(|t| {
                let base = t as u32 * per_thread;
                let (hot, input, output) = (
                    base,
                    base + self.hot_pages,
                    base + self.hot_pages + in_pages,
                );
                let mut ev = Vec::with_capacity((out_pages * CHUNKS_PER_PAGE * 4) as usize);
                for j in 0..out_pages {
                    let inp = ((j as f64 / self.output_ratio) as u32).min(in_pages - 1);
                    for c in 0..CHUNKS_PER_PAGE {
                        ev.push(Ev {
                            page: input + inp,
                            gap,
                            write: false,
                        });
                        ev.push(Ev {
                            page: hot + (c + j) % self.hot_pages,
                            gap,
                            write: c == 0,
                        });
                        if j > 0 {
                            let back = rng.random_range(1..=window.min(j));
                            ev.push(Ev {
                                page: output + j - back,
                                gap,
                                write: false,
                            });
                        }
                        ev.push(Ev {
                            page: output + j,
                            gap: 0,
                            write: true,
                        });
                    }
                }
                ThreadSpec {
                    process: 0,
                    events: Arc::new(ev),
                }
            })
            .collect();
        Workload {
            name: format!("pigz-like-{}MB", self.input_mb),
            threads: threads_v,
            process_pages: vec![per_thread * threads as u32],
            input_mb: self.input_mb,
        }
    }
}
