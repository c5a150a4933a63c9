//! A pigz-like `pigz -d` as a full system runs it: one inflater thread and the reader,
//! writer and checker helpers that pigz starts for decompression, the kernel's page cache
//! holding the input file and every page written through `write()`, and a resident OS.
//!
//! - **reader**: per input buffer, a `read()`: the kernel's file pages (new page-cache
//!   pages, filled from disk) copied into one of two user input buffers; it reuses a buffer
//!   only after the inflater is done with it.
//! - **inflater**: consumes the input buffers in order (each chunk depends on the one
//!   before: the deflate stream is sequential), writes the output into its 32 KB window
//!   with back-references into it, and when the window is full hands it over: copies it to
//!   the output buffer once the writer and checker are done with the previous one.
//! - **writer**: a `write()` per output buffer: the buffer copied into new page-cache pages
//!   of the output file. **checker**: reads the output buffer (CRC-32).
//! - **resident OS**: pages in use before the run (kernel, daemons); every system call
//!   touches a few of them, skewed towards a hot part.
//!
//! The output ratio is measured by deflating a sample of the generated text (the same kind
//! of text as the committed `pigz -d` trace's input) at pigz's default level.

use std::io::Write;
use std::sync::Arc;

use flate2::write::DeflateEncoder;
use flate2::Compression;
use rand::Rng;

use super::workload::{Dep, Ev, HybridWorkload, ThreadSpec, Touch, MIB, PAGE_BYTES};
use crate::rng::SimRng;

crate::params! {
    /// The pigz-like decompression workload: a reader, an inflater, a writer and a checker
    /// thread handing windows along (docs/hybrid.md).
    #[derive(Debug, Clone)]
    pub struct PigzLike {
        pub input_mib: f64 = 45.0 => range(0.01, 65536.0), "",
            "The compressed input file.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub output_ratio: Option<f64> = None => range(0.1, 1000.0), "",
            "Output bytes per input byte; unset: measured on the generated text.";
        pub window_kib: u32 = 32 => range(4, 1 << 20), "",
            "The inflate window, which is also the unit handed to the writer and checker.";
        pub buffer_kib: u32 = 32 => range(4, 1 << 20), "",
            "One user input buffer (the reader fills two in turn).";
        pub instructions_per_byte: f64 = 6.0 => range(0.0, 1e6), "instructions per byte",
            "Inflate instructions per output byte (zlib's inflate runs a few per byte).";
        pub copy_instructions_per_byte: f64 = 0.25 => range(0.0, 1e6), "instructions per byte",
            "Copies between user buffers and the page cache (`read()`, `write()`, the hand-off).";
        pub check_instructions_per_byte: f64 = 1.0 => range(0.0, 1e6), "instructions per byte",
            "The checker's CRC-32.";
        pub hot_pages: u32 = 4 => range(1, 1 << 16), "pages",
            "The inflater's hot pages (Huffman tables, stack).";
        pub os_resident_mib: f64 = 32.0 => range(0.0, 65536.0), "",
            "Memory the OS occupies before the run (kernel, daemons, shell).";
        pub os_pages_per_syscall: u32 = 2 => range(0, 1 << 16), "pages",
            "Resident-OS pages each system call touches.";
    }
}

/// Bytes of generated text deflated to measure the output ratio.
const SAMPLE_BYTES: usize = 1 << 20;

/// Output bytes per input byte of the generated text: a 500-word vocabulary of 3–9
/// letters from ten, one random word per line, deflated at level 6 (pigz's default).
/// Deflating the megabyte costs more than many a run it feeds, and the ratio depends on the
/// seed alone: each seed's is kept for the life of the process.
pub(super) fn measured_ratio(seed: u64) -> f64 {
    static KEPT: std::sync::Mutex<Vec<(u64, f64)>> = std::sync::Mutex::new(Vec::new());
    let kept = |k: &Vec<(u64, f64)>| k.iter().find(|e| e.0 == seed).map(|e| e.1);
    if let Some(r) = kept(&KEPT.lock().unwrap_or_else(|e| e.into_inner())) {
        return r;
    }
    let r = deflated_ratio(seed);
    let mut k = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if kept(&k).is_none() {
        // A handful of seeds per study; a long sweep over seeds keeps the latest 64.
        if k.len() == 64 {
            k.remove(0);
        }
        k.push((seed, r));
    }
    r
}

pub(super) fn deflated_ratio(seed: u64) -> f64 {
    let mut rng = crate::rng::stream(seed, "hybrid-pigz-text");
    let words: Vec<Vec<u8>> = (0..500)
        .map(|_| {
            let n = rng.random_range(3..=9);
            (0..n).map(|_| b'a' + rng.random_range(0..10u8)).collect()
        })
        .collect();
    let mut text = Vec::with_capacity(SAMPLE_BYTES + 16);
    while text.len() < SAMPLE_BYTES {
        text.extend_from_slice(&words[rng.random_range(0..words.len())]);
        text.push(b'\n');
    }
    let mut z = DeflateEncoder::new(Vec::new(), Compression::new(6));
    z.write_all(&text).expect("writing to memory");
    let z = z.finish().expect("writing to memory");
    text.len() as f64 / z.len() as f64
}

pub(super) const INFLATER: u16 = 0;
pub(super) const READER: u16 = 1;
pub(super) const WRITER: u16 = 2;
pub(super) const CHECKER: u16 = 3;

/// Accesses per output page: the inflater produces a page in this many steps, each reading
/// the input, a table and the window and writing the window.
const STEPS_PER_PAGE: u32 = 4;
/// Instructions of a system call's entry and its walk over kernel data, per touched page.
const SYSCALL_INSTRUCTIONS: u32 = 200;

/// Which hand-off a dependency waits for; resolved to event counts once all streams exist.
#[derive(Clone, Copy)]
enum Mark {
    Loaded(usize),
    Consumed(usize),
    Flushed(usize),
    Written(usize),
    Checked(usize),
}

#[derive(Default)]
struct Stream {
    ev: Vec<Ev>,
    waits: Vec<(u32, u16, Mark)>,
}

impl Stream {
    fn push(&mut self, page: u32, gap: u32, write: bool) {
        self.push_by(page, gap, write, Touch::Cpu);
    }
    fn push_by(&mut self, page: u32, gap: u32, write: bool, touch: Touch) {
        self.ev.push(Ev {
            page,
            gap,
            write,
            touch,
        });
    }
    fn wait(&mut self, thread: u16, m: Mark) {
        self.waits.push((self.ev.len() as u32, thread, m));
    }
    fn len(&self) -> u32 {
        self.ev.len() as u32
    }
}

/// Page ids of the one process.
struct Layout {
    os: u32,
    hot: u32,
    in_buf: u32,
    window: u32,
    out_buf: u32,
    file_in: u32,
    file_out: u32,
    end: u32,
}

impl PigzLike {
    pub fn ratio(&self, seed: u64) -> f64 {
        self.output_ratio.unwrap_or_else(|| measured_ratio(seed))
    }

    /// The four threads of one `pigz -d` process.
    pub fn generate(&self, seed: u64) -> HybridWorkload {
        let pages_of = |kb: u32| ((kb as u64 * 1024).div_ceil(PAGE_BYTES)).max(1) as u32;
        let mb_pages = |mb: f64| (mb * MIB as f64 / PAGE_BYTES as f64).ceil() as u32;
        let ratio = self.ratio(seed);
        let (bp, wp) = (pages_of(self.buffer_kib), pages_of(self.window_kib));
        let in_pages = mb_pages(self.input_mib).max(1);
        let out_pages = ((in_pages as f64 * ratio).ceil() as u32).max(1);
        let os = mb_pages(self.os_resident_mib);
        let mut l = Layout {
            os: 0,
            hot: os,
            in_buf: os + self.hot_pages,
            window: 0,
            out_buf: 0,
            file_in: 0,
            file_out: 0,
            end: 0,
        };
        l.window = l.in_buf + 2 * bp;
        l.out_buf = l.window + wp;
        l.file_in = l.out_buf + wp;
        l.file_out = l.file_in + in_pages;
        l.end = l.file_out + out_pages;
        let page_gap = |ipb: f64| (ipb * PAGE_BYTES as f64) as u32;
        let step_gap =
            (self.instructions_per_byte * PAGE_BYTES as f64 / (STEPS_PER_PAGE * 3) as f64) as u32;
        let copy_gap = page_gap(self.copy_instructions_per_byte);
        let check_gap = page_gap(self.check_instructions_per_byte);
        let mut rng = crate::rng::stream(seed, "hybrid-pigz");
        let syscall = |s: &mut Stream, rng: &mut SimRng| {
            for i in 0..self.os_pages_per_syscall {
                if os == 0 {
                    break;
                }
                let u: f64 = rng.random();
                let page = ((os as f64 * u * u) as u32).min(os - 1);
                s.push(l.os + page, SYSCALL_INSTRUCTIONS, i % 2 == 1);
            }
        };

        let chunks = in_pages.div_ceil(bp) as usize;
        let flushes = out_pages.div_ceil(wp) as usize;
        let mut th: Vec<Stream> = (0..4).map(|_| Stream::default()).collect();
        let (mut loaded, mut consumed) = (vec![0u32; chunks], vec![0u32; chunks]);
        let (mut flushed, mut written, mut checked) = (
            vec![0u32; flushes],
            vec![0u32; flushes],
            vec![0u32; flushes],
        );

        // Reader: read() into input buffer c % 2, after the inflater has drained it.
        for (c, end) in loaded.iter_mut().enumerate() {
            let s = &mut th[READER as usize];
            if c >= 2 {
                s.wait(INFLATER, Mark::Consumed(c - 2));
            }
            syscall(s, &mut rng);
            let first = c as u32 * bp;
            let last = (first + bp).min(in_pages);
            // Readahead allocates the read's page-cache pages and the disk's DMA fills
            // them whole; then the kernel copies each out to the user buffer.
            for p in first..last {
                s.push_by(l.file_in + p, 0, true, Touch::Dma);
            }
            for p in first..last {
                s.push_by(l.file_in + p, 0, false, Touch::Syscall);
                s.push(l.in_buf + (c as u32 % 2) * bp + (p - first), copy_gap, true);
            }
            *end = s.len();
        }

        // Inflater: chunk by chunk, the window flushed to the output buffer when full.
        let mut j = 0u32;
        for (c, done) in consumed.iter_mut().enumerate() {
            let first = c as u32 * bp;
            let n_in = (first + bp).min(in_pages) - first;
            let out_end = if c + 1 == chunks {
                out_pages
            } else {
                (((first + n_in) as f64 * ratio).ceil() as u32).min(out_pages)
            };
            let n_out = out_end.saturating_sub(j).max(1);
            let start = j;
            th[INFLATER as usize].wait(READER, Mark::Loaded(c));
            while j < out_end {
                let s = &mut th[INFLATER as usize];
                let ip = ((j - start) as u64 * n_in as u64 / n_out as u64) as u32;
                for step in 0..STEPS_PER_PAGE {
                    s.push(l.in_buf + (c as u32 % 2) * bp + ip, step_gap, false);
                    s.push(l.hot + (step + j) % self.hot_pages, step_gap, step == 0);
                    if j > 0 {
                        let back = rng.random_range(1..=wp.min(j));
                        s.push(l.window + (j - back) % wp, step_gap, false);
                    }
                    s.push(l.window + j % wp, 0, true);
                }
                j += 1;
                if j.is_multiple_of(wp) || j == out_pages {
                    let k = ((j - 1) / wp) as usize;
                    if k > 0 {
                        s.wait(WRITER, Mark::Written(k - 1));
                        s.wait(CHECKER, Mark::Checked(k - 1));
                    }
                    for q in 0..(j - k as u32 * wp) {
                        s.push(l.window + q, 0, false);
                        s.push(l.out_buf + q, copy_gap, true);
                    }
                    flushed[k] = s.len();
                }
            }
            *done = th[INFLATER as usize].len();
        }

        // Writer: write() of each output buffer into new page-cache pages; checker: CRC.
        for k in 0..flushes {
            let n = (out_pages - k as u32 * wp).min(wp);
            let s = &mut th[WRITER as usize];
            s.wait(INFLATER, Mark::Flushed(k));
            syscall(s, &mut rng);
            for q in 0..n {
                s.push(l.out_buf + q, 0, false);
                // A page-cache page allocated inside write(), filled by the kernel's copy.
                s.push_by(
                    l.file_out + k as u32 * wp + q,
                    copy_gap,
                    true,
                    Touch::Syscall,
                );
            }
            written[k] = s.len();
            let s = &mut th[CHECKER as usize];
            s.wait(INFLATER, Mark::Flushed(k));
            for q in 0..n {
                s.push(l.out_buf + q, check_gap, false);
            }
            checked[k] = s.len();
        }

        let resolve = |m: Mark| match m {
            Mark::Loaded(c) => loaded[c],
            Mark::Consumed(c) => consumed[c],
            Mark::Flushed(k) => flushed[k],
            Mark::Written(k) => written[k],
            Mark::Checked(k) => checked[k],
        };
        let threads = th
            .into_iter()
            .map(|s| ThreadSpec {
                process: 0,
                deps: s
                    .waits
                    .iter()
                    .map(|&(at, thread, m)| Dep {
                        at,
                        thread,
                        reached: resolve(m),
                    })
                    .collect(),
                events: Arc::new(s.ev),
            })
            .collect();
        HybridWorkload {
            name: format!("pigz-d-{}MB", self.input_mib),
            threads,
            process_pages: vec![l.end],
            resident_pages: os,
            input_mib: self.input_mib,
            output_ratio: ratio,
        }
    }
}
