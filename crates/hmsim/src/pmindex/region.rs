//! `PmRegion`: the byte range an index lays its nodes in, addressed by offsets (so an image
//! can be copied, crashed and recovered), with instrumented loads, stores, flushes, fences and
//! non-temporal stores. Every primitive (1) updates the counters, (2) passes the event to an
//! optional [`PmObserver`] (the cache + PMem model, or a log; accesses that repeat the last
//! event's line go to the model as counts, see `repeats.rs`), (3) with `hardware_flush` runs
//! the real instruction, and (4) when crash tracking is on, maintains the image that is
//! durable (flushed and fenced) and the lines that are dirty or in flight.

use std::fs::OpenOptions;
use std::path::Path;

use rand::Rng;

pub(crate) use super::counters::PmStats;
use super::hwflush;
use super::line_bits::LineBits;
pub(crate) use super::repeats::Held;
use super::repeats::Repeats;
use crate::cache::FlushKind;
use crate::config::human_bytes;
use crate::hash::FastSet;
use crate::hugevec::ZeroPages;
use crate::rng::SimRng;

/// Byte offset into a region; 0 is the null offset (the header lives there).
pub type POff = u64;

/// Bytes in a cache line (the unit of flushes and crash images).
pub(crate) const LINE: u64 = crate::cache::LINE_BYTES;

/// The region header (its layout is described with the allocator, `alloc.rs`).
pub(crate) const HEADER_BYTES: u64 = 4096;
const MAGIC: u64 = 0x686d_7369_6d50_4d31; // "hmsimPM1"
const OFF_MAGIC: u64 = 0;
pub(super) const OFF_RESERVED: u64 = 16;

/// What went wrong inside a region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PmError {
    /// The region cannot grow to hold `needed_bytes`.
    OutOfSpace { needed_bytes: u64, limit_bytes: u64 },
    /// The operation is not offered by this index (e.g. scan on a hash table).
    Unsupported(&'static str),
    /// A recovered image is not a valid region or index.
    Corrupt(String),
    /// Setting up the region failed (mmap, missing CPU instruction).
    Setup(String),
}

impl std::fmt::Display for PmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PmError::OutOfSpace {
                needed_bytes,
                limit_bytes,
            } => write!(
                f,
                "persistent region full: needs {needed_bytes} bytes, limit {limit_bytes} (raise pm.max_bytes)"
            ),
            PmError::Unsupported(what) => write!(f, "unsupported: {what}"),
            PmError::Corrupt(m) => write!(f, "corrupt image: {m}"),
            PmError::Setup(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for PmError {}

pub type PmResult<T> = Result<T, PmError>;

crate::params! {
    #[params(check)]
    /// How a region persists. Serialized as the scenario's `[pm]` table.
    #[derive(Debug, Clone)]
    pub struct RegionConfig {
        pub flush: FlushKind = FlushKind::Clwb => any, "",
            "The flush instruction `flush`/`persist` use: `clwb`, `clflushopt` or `clflush`.";
        pub hardware_flush: bool = false => any, "",
            "Execute the real instructions (x86-64; checked at creation).";
        pub coalesce_flushes: bool = false => any, "",
            "Tonic optimization \"coalesce flushes\": a flush of a line with no store since its last flush is dropped (it would write back nothing new).";
        pub initial_bytes: u64 = 1 << 20 => range(8192, 1 << 40), "",
            "Initial size of an anonymous region; it doubles on demand up to `max_bytes`.";
        pub max_bytes: u64 = 1 << 36 => any, "",
            "Largest size of the region, `initial_bytes` to 2^44.";
    }
}

impl RegionConfig {
    fn check(&self, v: &mut crate::config::Validator) {
        v.range(
            "max_bytes",
            self.max_bytes,
            self.initial_bytes,
            1 << 44,
            "bytes",
        );
    }
}

/// One instrumented primitive, as fed to the cache + PMem model. Offsets are region offsets
/// (the model places the region at simulated address 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmEvent {
    Load { off: POff, len: u32 },
    Store { off: POff, len: u32 },
    NtStore { off: POff, len: u32 },
    Flush { off: POff, kind: FlushKind },
    Fence,
}

/// Receives every event of a region, tagged with the simulated thread (core) issuing it.
pub trait PmObserver: Send {
    fn event(&mut self, core: usize, e: PmEvent);
    /// For getting the concrete observer back (`set_observer(None)` returns the box).
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
    /// An independent copy in the same state (see [`PmRegion::fork`]); None if it has none.
    fn fork(&self) -> Option<Box<dyn PmObserver>> {
        None
    }
    /// For reading a concrete observer while it stays attached (e.g. the model's counters).
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
    /// `core` is about to read `[off, off+len)` (the region's [`PmRegion::prefetch`]): a
    /// host hint, no event; an observer may fetch its own state for those lines.
    fn host_hint(&self, _core: usize, _off: u64, _len: u64) {}
    /// Whether a single-line load or store in the line of the single-line load or store
    /// delivered just before it (same core, no event between) changes this observer by
    /// counts alone, the same for each such access. The region then holds those accesses
    /// back and delivers them as one [`repeats`](Self::repeats) call, before its next event
    /// and before the observer is reached any other way (`observer_mut`, `set_observer`).
    fn takes_repeats(&self) -> bool {
        false
    }
    /// Held-back repeats (see [`takes_repeats`](Self::takes_repeats)), in place of their events.
    fn repeats(&mut self, _held: Held) {}
}

#[cfg(test)]
/// Keeps the events (tests, small traces).
#[derive(Debug, Default, Clone)]
pub(crate) struct EventLog(pub Vec<(usize, PmEvent)>);

#[cfg(test)]
impl PmObserver for EventLog {
    fn event(&mut self, core: usize, e: PmEvent) {
        self.0.push((core, e));
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// How crash images are taken at persist points (each fence).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CrashCapture {
    /// Probability of capturing at a given fence (1.0 = every persist point).
    pub probability: f64,
    /// Adversarial: each line that is dirty or flushed-but-unfenced reaches the image with
    /// probability 1/2 (whole lines: a cache line is written back as a unit).
    pub adversarial: bool,
}

/// The PM contents a crash at one persist point leaves behind.
#[derive(Debug, Clone)]
pub(crate) struct CrashImage {
    /// Fences completed before the crash (the crash hits just before fence `fence_index`).
    pub fence_index: u64,
    pub bytes: Vec<u8>,
}

struct CrashTrack {
    /// Durable contents: what was flushed (or nt-stored) and then fenced.
    durable: Vec<u8>,
    /// Lines stored since their last flush (volatile until written back).
    dirty: FastSet<u64>,
    /// Lines flushed or nt-stored since the last fence, with their contents at that time.
    pending: Vec<(u64, [u8; 64])>,
    capture: Option<CrashCapture>,
    rng: SimRng,
    images: Vec<CrashImage>,
}

enum Backing {
    /// Words keep 8 B alignment for the atomic-width accesses; zero pages, so the part of
    /// a region above its allocator's high-water mark costs nothing until used.
    Anon(ZeroPages),
    Mapped {
        ptr: *mut u8,
        len: usize,
    },
}

// SAFETY: the mapping is owned by the region and only reached through `&mut self`/`&self`.
unsafe impl Send for Backing {}

impl Drop for Backing {
    fn drop(&mut self) {
        if let Backing::Mapped { ptr, len } = *self {
            // SAFETY: ptr/len come from our own successful mmap.
            unsafe {
                libc::munmap(ptr as *mut libc::c_void, len);
            }
        }
    }
}

pub struct PmRegion {
    mem: Backing,
    len: u64,
    cfg: RegionConfig,
    pub(super) stats: PmStats,
    observer: Option<Box<dyn PmObserver>>,
    core: usize,
    /// Flushes/fences are charged to the allocator while it persists its metadata.
    pub(super) in_alloc: bool,
    /// Set by an index while it resizes or splits (see [`PmRegion::set_resizing`]).
    in_resize: bool,
    /// Lines stored since their last flush (only kept with `coalesce_flushes`).
    unflushed: LineBits,
    crash: Option<Box<CrashTrack>>,
    /// Whether a load or store needs more than the counters: an observer, crash tracking or
    /// flush coalescing is on. Without them (an index in DRAM, measured natively) the
    /// primitives take the inlined fast path: bounds check, access, two counter adds.
    slow: bool,
    /// Accesses that repeat the last event's line, held for an observer that takes them.
    repeats: Repeats,
    /// Volatile allocator state (rebuilt from the header on open).
    pub(super) bump: u64,
    /// Bytes allocated and not freed since opening (see `live_bytes`).
    pub(super) live_bytes: u64,
}

impl PmRegion {
    /// An independent copy of an anonymous region in its present state: contents, counters,
    /// allocator and observer (each its own copy). None for a mapped file, a region under
    /// crash tracking, or an observer that cannot be copied.
    pub(crate) fn fork(&self) -> Option<PmRegion> {
        let observer = match &self.observer {
            Some(o) => Some(o.fork()?),
            None => None,
        };
        let mut r = self.fork_image(self.cfg.clone())?;
        r.observer = observer;
        r.update_slow();
        // The held repeats and the run they continue belong to the observer's state.
        r.repeats = self.repeats;
        Some(r)
    }

    /// A copy of an anonymous region's contents, counters and allocator, with `cfg` and no
    /// observer (what the same stores give unobserved). None as for [`PmRegion::fork`].
    pub(crate) fn fork_image(&self, cfg: RegionConfig) -> Option<PmRegion> {
        let Backing::Anon(words) = &self.mem else {
            return None;
        };
        if self.crash.is_some() {
            return None;
        }
        // Only the words below the allocator's high-water mark are copied: every block ever
        // handed out, and the header, lie below it, and nothing above it is ever written (a
        // debug build checks), so the rest of the copy is left as zero pages.
        let used = (self.bump.max(HEADER_BYTES).div_ceil(8) as usize).min(words.len());
        debug_assert!(
            words[used..].iter().all(|&w| w == 0),
            "a word above the high-water mark {} was written",
            self.bump
        );
        let mut r = PmRegion {
            mem: Backing::Anon(ZeroPages::try_with_prefix(&words[..used], words.len())?),
            len: self.len,
            cfg,
            stats: self.stats,
            observer: None,
            core: self.core,
            in_alloc: self.in_alloc,
            in_resize: self.in_resize,
            unflushed: self.unflushed.clone(),
            crash: None,
            slow: false,
            repeats: Repeats::OFF,
            bump: self.bump,
            live_bytes: self.live_bytes,
        };
        r.update_slow();
        Some(r)
    }

    #[cfg(test)]
    pub(crate) fn has_observer(&self) -> bool {
        self.observer.is_some()
    }

    /// Bytes of the region's image.
    pub(crate) fn image_bytes(&self) -> u64 {
        self.len
    }

    /// An anonymous (DRAM-backed) region, formatted empty.
    pub fn anonymous(cfg: RegionConfig) -> PmResult<PmRegion> {
        let len = cfg.initial_bytes.max(HEADER_BYTES * 2);
        let words = host_words(len, "pm.initial_bytes")?;
        let mut r = PmRegion::with_backing(Backing::Anon(words), len, cfg)?;
        r.format()?;
        Ok(r)
    }

    /// A region over the file at `path` (created or truncated to `size_bytes` and mmap'd
    /// shared). On a DAX file system with `hardware_flush`, persists are real.
    pub fn create_file(path: &Path, size_bytes: u64, cfg: RegionConfig) -> PmResult<PmRegion> {
        let mut r = PmRegion::map_file(path, Some(size_bytes), cfg)?;
        r.format()?;
        Ok(r)
    }

    /// Open an existing region file (for recovery after a real crash).
    pub fn open_file(path: &Path, cfg: RegionConfig) -> PmResult<PmRegion> {
        let mut r = PmRegion::map_file(path, None, cfg)?;
        r.open_header()?;
        Ok(r)
    }

    /// An anonymous region holding `image` (a crash image), opened for recovery.
    pub(crate) fn from_image(image: &[u8], cfg: RegionConfig) -> PmResult<PmRegion> {
        let len = (image.len() as u64)
            .max(cfg.initial_bytes)
            .max(HEADER_BYTES * 2)
            .next_multiple_of(4096);
        let mut words = host_words(len, "the crash image's region")?;
        for (i, ch) in image.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..ch.len()].copy_from_slice(ch);
            words[i] = u64::from_ne_bytes(w);
        }
        let mut r = PmRegion::with_backing(Backing::Anon(words), len, cfg)?;
        r.open_header()?;
        Ok(r)
    }

    fn map_file(path: &Path, size: Option<u64>, cfg: RegionConfig) -> PmResult<PmRegion> {
        use std::os::fd::AsRawFd;
        let setup = |e: std::io::Error| PmError::Setup(format!("{}: {e}", path.display()));
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(size.is_some())
            .truncate(size.is_some())
            .open(path)
            .map_err(setup)?;
        if let Some(s) = size {
            f.set_len(s).map_err(setup)?;
        }
        let len = f.metadata().map_err(setup)?.len();
        if len < HEADER_BYTES * 2 {
            return Err(PmError::Setup(format!(
                "{}: {len} bytes is too small for a region (at least {})",
                path.display(),
                HEADER_BYTES * 2
            )));
        }
        // SAFETY: a fresh shared mapping of a file we opened read-write; checked below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(setup(std::io::Error::last_os_error()));
        }
        let mut cfg = cfg;
        cfg.max_bytes = len; // a file does not grow
        PmRegion::with_backing(
            Backing::Mapped {
                ptr: ptr as *mut u8,
                len: len as usize,
            },
            len,
            cfg,
        )
    }

    fn with_backing(mem: Backing, len: u64, cfg: RegionConfig) -> PmResult<PmRegion> {
        if cfg.hardware_flush {
            hwflush::check_supported(cfg.flush).map_err(PmError::Setup)?;
        }
        let slow = cfg_slow(&cfg);
        Ok(PmRegion {
            mem,
            len,
            cfg,
            stats: PmStats::default(),
            observer: None,
            core: 0,
            in_alloc: false,
            in_resize: false,
            unflushed: LineBits::default(),
            crash: None,
            slow,
            repeats: Repeats::OFF,
            bump: 0,
            live_bytes: 0,
        })
    }

    pub(crate) fn config(&self) -> &RegionConfig {
        &self.cfg
    }
    pub(crate) fn len(&self) -> u64 {
        self.len
    }
    pub fn stats(&self) -> PmStats {
        self.stats
    }
    /// The simulated thread whose events follow (its core in the cache model).
    pub(crate) fn set_thread(&mut self, core: usize) {
        self.core = core;
    }
    pub fn set_observer(&mut self, o: Option<Box<dyn PmObserver>>) -> Option<Box<dyn PmObserver>> {
        self.deliver_held();
        let old = std::mem::replace(&mut self.observer, o);
        self.update_slow();
        old
    }

    fn update_slow(&mut self) {
        self.slow = cfg_slow(&self.cfg) || self.observer.is_some() || self.crash.is_some();
        self.deliver_held();
        let on = self.crash.is_none() && self.observer.as_ref().is_some_and(|o| o.takes_repeats());
        self.repeats.set_on(on);
    }

    /// The observer, with every access so far delivered to it.
    pub fn observer_mut(&mut self) -> Option<&mut (dyn PmObserver + 'static)> {
        self.deliver_held();
        self.repeats.forget_line();
        self.observer.as_deref_mut()
    }

    /// Deliver the repeats held back, if any.
    fn deliver_held(&mut self) {
        if let Some(h) = self.repeats.take() {
            if let Some(o) = &mut self.observer {
                o.repeats(h);
            }
        }
    }
    /// Bytes in use (the allocator's high-water mark): what a crash image must hold.
    pub fn used_bytes(&self) -> u64 {
        self.bump
    }

    #[inline]
    fn base(&self) -> *mut u8 {
        match &self.mem {
            Backing::Anon(v) => v.as_ptr() as *mut u8,
            Backing::Mapped { ptr, .. } => *ptr,
        }
    }

    #[inline(always)]
    fn check(&self, off: POff, len: u64) {
        // One compare and a never-taken branch: kept in the fast path, so an index bug is a
        // panic, not a write outside the region.
        if off.wrapping_add(len) > self.len || off > self.len {
            out_of_range(off, len, self.len);
        }
    }

    /// Make room for offsets below `end` (anonymous regions double; files cannot grow).
    pub(super) fn ensure(&mut self, end: u64) -> PmResult<()> {
        if end <= self.len {
            return Ok(());
        }
        let mut new_len = self.len;
        while new_len < end {
            new_len *= 2;
        }
        if new_len > self.cfg.max_bytes || !matches!(self.mem, Backing::Anon(_)) {
            return Err(PmError::OutOfSpace {
                needed_bytes: end,
                limit_bytes: self.cfg.max_bytes.min(self.len.max(self.cfg.max_bytes)),
            });
        }
        if let Backing::Anon(v) = &mut self.mem {
            // All of the old words: an image being opened may lie above `bump`, not yet set.
            if !v.try_grow((new_len / 8) as usize) {
                return Err(no_host_memory(new_len, "growing the region (pm.max_bytes)"));
            }
        }
        if let Some(c) = &mut self.crash {
            c.durable.resize(new_len as usize, 0);
        }
        self.len = new_len;
        Ok(())
    }

    #[inline]
    fn emit(&mut self, e: PmEvent) {
        if let Some(o) = &mut self.observer {
            if let Some(h) = self.repeats.take() {
                o.repeats(h);
            }
            o.event(self.core, e);
            let access = match e {
                PmEvent::Load { off, len } | PmEvent::Store { off, len } => {
                    Some((off, u64::from(len)))
                }
                _ => None,
            };
            self.repeats.delivered(self.core, access);
        }
    }

    #[inline(always)]
    fn note_store(&mut self, off: POff, len: u64) {
        self.stats.stores += 1;
        self.stats.store_bytes += len;
        if self.slow {
            self.note_store_slow(off, len);
        }
    }

    /// The store's line tracking and event, out of line (the fast path never needs them).
    #[inline(never)]
    fn note_store_slow(&mut self, off: POff, len: u64) {
        if self.cfg.coalesce_flushes || self.crash.is_some() {
            for l in off / LINE..=(off + len.max(1) - 1) / LINE {
                if self.cfg.coalesce_flushes {
                    self.unflushed.insert(l);
                }
                if let Some(c) = &mut self.crash {
                    c.dirty.insert(l);
                }
            }
        }
        if self.repeats.absorb(self.core, off, len, true) {
            return;
        }
        self.emit(PmEvent::Store {
            off,
            len: len as u32,
        });
    }

    #[inline(always)]
    fn note_load(&mut self, off: POff, len: u64) {
        self.stats.loads += 1;
        self.stats.load_bytes += len;
        if self.slow && !self.repeats.absorb(self.core, off, len, false) {
            self.emit(PmEvent::Load {
                off,
                len: len as u32,
            });
        }
    }

    // ---- loads and stores ----

    #[inline(always)]
    pub(crate) fn read_u64(&mut self, off: POff) -> u64 {
        self.check(off, 8);
        self.note_load(off, 8);
        // SAFETY: in range (checked); unaligned reads allowed.
        unsafe { (self.base().add(off as usize) as *const u64).read_unaligned() }
    }

    #[inline(always)]
    pub(crate) fn write_u64(&mut self, off: POff, v: u64) {
        self.check(off, 8);
        // SAFETY: in range (checked).
        unsafe { (self.base().add(off as usize) as *mut u64).write_unaligned(v) }
        self.note_store(off, 8);
    }

    /// `out.len()` 8 B loads from `off` on, one after another: the same values, counts and
    /// events as `read_u64` word by word. The bounds check and counters are done once, and
    /// the words a run of repeats would hold one by one are held together, a line at a time.
    #[inline]
    pub(crate) fn read_words(&mut self, off: POff, out: &mut [u64]) {
        let n = out.len() as u64;
        self.check(off, 8 * n);
        // SAFETY: in range (checked); regions never overlap `out`; unaligned is fine (bytes).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.base().add(off as usize),
                out.as_mut_ptr() as *mut u8,
                8 * n as usize,
            )
        }
        self.stats.loads += n;
        self.stats.load_bytes += 8 * n;
        if !self.slow {
            return;
        }
        let (core, end) = (self.core, off + 8 * n);
        let mut a = off;
        while a < end {
            if !self.repeats.absorb(core, a, 8, false) {
                self.emit(PmEvent::Load { off: a, len: 8 });
            }
            // The whole words left in this word's line: each would be held if this one
            // leaves the run on the line (and none changes that), so all are, or none is.
            let line = a / LINE;
            a += 8;
            let rest = (((line + 1) * LINE).min(end)).saturating_sub(a) / 8;
            if rest > 0 && self.repeats.absorb_loads(core, line, rest) {
                a += 8 * rest;
            }
        }
    }

    /// Load `out.len()` bytes at `off` (one event).
    #[inline]
    pub(crate) fn read_bytes(&mut self, off: POff, out: &mut [u8]) {
        self.check(off, out.len() as u64);
        self.note_load(off, out.len() as u64);
        // SAFETY: in range (checked); regions never overlap `out`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.base().add(off as usize),
                out.as_mut_ptr(),
                out.len(),
            )
        }
    }

    /// Store `data` at `off` (one event).
    #[inline]
    pub(crate) fn write_bytes(&mut self, off: POff, data: &[u8]) {
        self.check(off, data.len() as u64);
        // SAFETY: in range (checked).
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.base().add(off as usize), data.len())
        }
        self.note_store(off, data.len() as u64);
    }

    /// Store zeros over `len` bytes at `off` (one event).
    pub(crate) fn zero(&mut self, off: POff, len: u64) {
        self.check(off, len);
        // SAFETY: in range (checked).
        unsafe { std::ptr::write_bytes(self.base().add(off as usize), 0, len as usize) }
        self.note_store(off, len);
    }

    /// Hint that the lines of `[off, off+len)` are read soon (`prefetcht0`). Native speed
    /// only: no access happens, so nothing is counted; the observer gets the same hint for
    /// its own host state ([`PmObserver::host_hint`]).
    #[inline]
    pub(crate) fn prefetch(&self, off: POff, len: u64) {
        if let Some(o) = &self.observer {
            o.host_hint(self.core, off, len.min(self.len.saturating_sub(off)));
        }
        let end = off.saturating_add(len).min(self.len);
        let mut line = off & !(LINE - 1);
        while line < end {
            crate::hostmem::prefetch(self.base().wrapping_add(line as usize));
            line += LINE;
        }
    }

    /// Uninstrumented read for checks and recovery scans that are not part of the measured
    /// workload (invariant checks, test oracles).
    pub(crate) fn peek_u64(&self, off: POff) -> u64 {
        self.check(off, 8);
        // SAFETY: in range (checked).
        unsafe { (self.base().add(off as usize) as *const u64).read_unaligned() }
    }

    pub(crate) fn peek_bytes(&self, off: POff, out: &mut [u8]) {
        self.check(off, out.len() as u64);
        // SAFETY: in range (checked).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.base().add(off as usize),
                out.as_mut_ptr(),
                out.len(),
            )
        }
    }

    // ---- persistence ----

    /// Non-temporal 8 B store: bypasses the caches, durable at the next fence.
    pub(crate) fn ntstore_u64(&mut self, off: POff, v: u64) {
        self.check(off, 8);
        let p = // SAFETY: in range (checked).
            unsafe { self.base().add(off as usize) };
        if self.cfg.hardware_flush && off.is_multiple_of(8) {
            // SAFETY: aligned, in range.
            unsafe { hwflush::ntstore_u64(p, v) }
        } else {
            // SAFETY: in range.
            unsafe { (p as *mut u64).write_unaligned(v) }
        }
        self.stats.ntstores += 1;
        self.stats.resize_ntstores += self.in_resize as u64;
        self.stats.store_bytes += 8;
        let line = off / LINE;
        self.unflushed.remove(line);
        if self.crash.is_some() {
            let snap = self.line_bytes(line);
            if let Some(c) = &mut self.crash {
                c.dirty.remove(&line);
                c.pending.push((line, snap));
            }
        }
        self.emit(PmEvent::NtStore { off, len: 8 });
    }

    /// Mark the index's persist operations from now on as resize / split work (true) or
    /// ordinary insert work (false); they count in `resize_*` besides their own counter.
    pub(crate) fn set_resizing(&mut self, on: bool) {
        self.in_resize = on;
    }

    /// Flush the line holding `off` with the configured instruction (no fence).
    pub(crate) fn flush(&mut self, off: POff) {
        self.check(off, 1);
        let line = off / LINE;
        if self.cfg.coalesce_flushes && !self.unflushed.remove(line) {
            self.stats.flushes_coalesced += 1;
            return;
        }
        if self.in_alloc {
            self.stats.alloc_flushes += 1;
        } else {
            self.stats.flushes += 1;
            self.stats.resize_flushes += self.in_resize as u64;
        }
        if self.cfg.hardware_flush {
            // SAFETY: in range; instruction support checked at creation.
            unsafe { hwflush::flush_line(self.base().add(off as usize), self.cfg.flush) }
        }
        if self.crash.is_some() {
            let snap = self.line_bytes(line);
            if let Some(c) = &mut self.crash {
                if c.dirty.remove(&line) {
                    c.pending.push((line, snap));
                }
            }
        }
        let kind = self.cfg.flush;
        self.emit(PmEvent::Flush { off, kind });
    }

    /// `sfence`: flushes and non-temporal stores issued so far become durable. Every fence
    /// is a persist point the crash harness can crash at.
    pub(crate) fn fence(&mut self) {
        if self.in_alloc {
            self.stats.alloc_fences += 1;
        } else {
            self.stats.fences += 1;
            self.stats.resize_fences += self.in_resize as u64;
        }
        if self.cfg.hardware_flush {
            hwflush::sfence();
        }
        if self.crash.is_some() {
            self.crash_point();
        }
        self.emit(PmEvent::Fence);
    }

    /// Flush every line of `[off, off+len)`, then fence.
    pub(crate) fn persist(&mut self, off: POff, len: u64) {
        self.flush_range(off, len);
        self.fence();
    }

    /// Flush every line of `[off, off+len)` (no fence).
    pub(crate) fn flush_range(&mut self, off: POff, len: u64) {
        let first = off / LINE;
        let last = (off + len.max(1) - 1) / LINE;
        for l in first..=last {
            self.flush((l * LINE).max(off));
        }
    }

    // ---- crash tracking ----

    /// Start tracking durability from now on: the current contents count as durable (call
    /// after creating the index, or from the start for a fresh region).
    pub(crate) fn track_crashes(&mut self, capture: Option<CrashCapture>, rng: SimRng) {
        let mut durable = vec![0u8; self.len as usize];
        // SAFETY: reading our own len bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(self.base(), durable.as_mut_ptr(), self.len as usize)
        }
        self.crash = Some(Box::new(CrashTrack {
            durable,
            dirty: FastSet::default(),
            pending: Vec::new(),
            capture,
            rng,
            images: Vec::new(),
        }));
        self.update_slow();
    }

    /// Images captured since the last call.
    pub(crate) fn take_crash_images(&mut self) -> Vec<CrashImage> {
        self.crash
            .as_mut()
            .map(|c| std::mem::take(&mut c.images))
            .unwrap_or_default()
    }

    /// The image a crash right now would leave (strict: only what was fenced).
    pub(crate) fn durable_image(&self) -> Option<Vec<u8>> {
        self.crash
            .as_ref()
            .map(|c| c.durable[..self.bump.max(HEADER_BYTES) as usize].to_vec())
    }

    /// Whether every stored line has been flushed and fenced (nothing volatile is left).
    #[cfg(test)]
    pub(crate) fn all_durable(&self) -> bool {
        self.crash
            .as_ref()
            .is_none_or(|c| c.dirty.is_empty() && c.pending.is_empty())
    }

    fn line_bytes(&self, line: u64) -> [u8; 64] {
        let mut b = [0u8; 64];
        let off = line * LINE;
        let n = (self.len - off).min(64) as usize;
        // SAFETY: in range.
        unsafe { std::ptr::copy_nonoverlapping(self.base().add(off as usize), b.as_mut_ptr(), n) }
        b
    }

    fn crash_point(&mut self) {
        let used = self.bump.max(HEADER_BYTES) as usize;
        let fences = self.stats.fences + self.stats.alloc_fences;
        // Capture before this fence completes: pending lines are not yet guaranteed durable.
        let mut c = self.crash.take().expect("tracking");
        if let Some(cap) = c.capture {
            if cap.probability >= 1.0 || c.rng.random::<f64>() < cap.probability {
                let mut bytes = c.durable[..used].to_vec();
                if cap.adversarial {
                    for &(line, data) in &c.pending {
                        if c.rng.random::<bool>() {
                            put_line(&mut bytes, line, &data);
                        }
                    }
                    let mut dirty: Vec<u64> = c.dirty.iter().copied().collect();
                    dirty.sort_unstable(); // determinism: FastSet order is not stable
                    for line in dirty {
                        if c.rng.random::<bool>() {
                            let data = self.line_bytes(line);
                            put_line(&mut bytes, line, &data);
                        }
                    }
                }
                c.images.push(CrashImage {
                    fence_index: fences - 1,
                    bytes,
                });
            }
        }
        for (line, data) in c.pending.drain(..) {
            put_line(&mut c.durable, line, &data);
        }
        self.crash = Some(c);
    }

    /// Format a fresh region (header + allocator), durable.
    fn format(&mut self) -> PmResult<()> {
        format(self)
    }

    fn open_header(&mut self) -> PmResult<()> {
        open(self)
    }
}

/// Whether the configuration alone needs the slow path (line tracking for coalescing).
fn cfg_slow(cfg: &RegionConfig) -> bool {
    cfg.coalesce_flushes
}

#[cold]
#[inline(never)]
fn out_of_range(off: POff, len: u64, region: u64) -> ! {
    panic!("PM access out of range: offset {off} + {len} bytes, region {region} bytes (index bug)")
}

/// Zero words for a region of `len` bytes, or the error naming `what` asked for them.
fn host_words(len: u64, what: &str) -> PmResult<ZeroPages> {
    usize::try_from(len / 8)
        .ok()
        .and_then(ZeroPages::try_zeroed)
        .ok_or_else(|| no_host_memory(len, what))
}

/// The host has no `len` bytes of memory to give a region (`what` asked for them).
fn no_host_memory(len: u64, what: &str) -> PmError {
    PmError::Setup(format!(
        "{what}: the host cannot map a region of {len} bytes ({}); use a smaller size",
        human_bytes(len)
    ))
}

fn put_line(bytes: &mut [u8], line: u64, data: &[u8; 64]) {
    let off = (line * LINE) as usize;
    if off < bytes.len() {
        let n = (bytes.len() - off).min(64);
        bytes[off..off + n].copy_from_slice(&data[..n]);
    }
}

fn format(r: &mut PmRegion) -> PmResult<()> {
    r.in_alloc = true;
    r.zero(8, HEADER_BYTES - 8);
    r.write_u64(OFF_RESERVED, HEADER_BYTES);
    r.persist(8, HEADER_BYTES - 8);
    // The magic goes last: a region is valid only once its header is durable.
    r.write_u64(OFF_MAGIC, MAGIC);
    r.persist(OFF_MAGIC, 8);
    r.in_alloc = false;
    r.bump = HEADER_BYTES;
    Ok(())
}

fn open(r: &mut PmRegion) -> PmResult<()> {
    if r.peek_u64(OFF_MAGIC) != MAGIC {
        return Err(PmError::Corrupt("region header has no valid magic".into()));
    }
    let top = r.peek_u64(OFF_RESERVED);
    if top < HEADER_BYTES || top > r.config().max_bytes {
        return Err(PmError::Corrupt(format!("reserved_top {top} out of range")));
    }
    r.ensure(top)?;
    r.bump = top;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::mem::{Instr, PmMem};
    use super::*;

    /// Logs events and held repeats, taking repeats.
    #[derive(Default)]
    struct RepeatLog {
        seen: Vec<String>,
    }

    impl PmObserver for RepeatLog {
        fn event(&mut self, core: usize, e: PmEvent) {
            self.seen.push(format!("{core} {e:?}"));
        }
        fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
            self
        }
        fn takes_repeats(&self) -> bool {
            true
        }
        fn repeats(&mut self, h: Held) {
            self.seen.push(format!("{h:?}"));
        }
        fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
            Some(self)
        }
    }

    fn seen_repeats(r: &mut PmRegion) -> Vec<String> {
        let o = r.observer_mut().and_then(|o| o.as_any_mut()).unwrap();
        std::mem::take(&mut o.downcast_mut::<RepeatLog>().unwrap().seen)
    }

    /// Every access reaches the observer once, as an event or in a count, each count before
    /// the event after it and before anyone looks at the observer.
    #[test]
    fn the_region_delivers_every_access_once_in_order() {
        let mut r = PmRegion::anonymous(RegionConfig::default()).unwrap();
        r.set_observer(Some(Box::new(RepeatLog::default())));
        let b = 4096;
        r.write_u64(b, 1);
        r.read_u64(b + 8);
        r.write_u64(b + 16, 2);
        r.read_u64(b);
        r.read_u64(b + 64); // another line: an event
        r.read_u64(b + 72);
        r.set_thread(1);
        r.read_u64(b + 80); // another core: an event
        assert_eq!(
            seen_repeats(&mut r),
            [
                format!("0 Store {{ off: {b}, len: 8 }}"),
                format!(
                    "{:?}",
                    Held {
                        core: 0,
                        line: b / 64,
                        loads: 2,
                        stores: 1,
                        store_bytes: 8
                    }
                ),
                format!("0 Load {{ off: {}, len: 8 }}", b + 64),
                format!(
                    "{:?}",
                    Held {
                        core: 0,
                        line: b / 64 + 1,
                        loads: 1,
                        stores: 0,
                        store_bytes: 0
                    }
                ),
                format!("1 Load {{ off: {}, len: 8 }}", b + 80),
            ]
        );
        // Looking ended the run: the next access is an event again.
        r.read_u64(b + 88);
        r.fence();
        r.read_u64(b + 88);
        r.read_u64(b + 88);
        let log = r.set_observer(None).unwrap().into_any();
        let log = log.downcast::<RepeatLog>().unwrap().seen;
        assert_eq!(log.len(), 4, "{log:?}");
        assert!(log[3].starts_with("Held"), "{log:?}");
        assert_eq!(r.stats().loads, 8);
    }

    /// A region at `4096 + start` (any alignment) after `before` (a load on core 0 at that
    /// offset, starting a run, or none) with the observer `kind` takes: 0 none, 1 every event,
    /// 2 repeats held.
    fn words_region(kind: u8, before: Option<u64>) -> PmRegion {
        let mut r = PmRegion::anonymous(RegionConfig::default()).unwrap();
        for i in 0..64u64 {
            r.write_u64(4096 + 8 * i, i * 0x0101_0101 + 7);
        }
        match kind {
            1 => drop(r.set_observer(Some(Box::new(EventLog::default())))),
            2 => drop(r.set_observer(Some(Box::new(RepeatLog::default())))),
            _ => {}
        }
        if let Some(b) = before {
            r.read_u64(4096 + b);
        }
        r
    }

    /// What the observer saw, then nothing held: a fence delivers any counts held.
    fn words_seen(mut r: PmRegion) -> (Vec<String>, PmStats) {
        let stats = r.stats();
        r.fence();
        let seen = match r.set_observer(None) {
            None => Vec::new(),
            Some(o) => {
                let o = o.into_any();
                match o.downcast::<RepeatLog>() {
                    Ok(l) => l.seen,
                    Err(o) => o
                        .downcast::<EventLog>()
                        .unwrap()
                        .0
                        .iter()
                        .map(|e| format!("{e:?}"))
                        .collect(),
                }
            }
        };
        (seen, stats)
    }

    proptest::proptest! {
        /// `read_words` is `read_u64` word by word: the same values, counters and events
        /// (held repeats included), from any offset, over line ends, after a run on the
        /// same or another line, on the same or another core.
        #[test]
        fn read_words_is_read_u64_word_by_word(
            start in 0u64..200,
            words in 0usize..40,
            kind in 0u8..3,
            before in proptest::option::of(0u64..256),
            other_core: bool,
        ) {
            let mut one = words_region(kind, before);
            let mut all = words_region(kind, before);
            if other_core {
                one.set_thread(1);
                all.set_thread(1);
            }
            let want: Vec<u64> = (0..words as u64).map(|i| one.read_u64(4096 + start + 8 * i)).collect();
            let mut got = vec![0u64; words];
            all.read_words(4096 + start, &mut got);
            proptest::prop_assert_eq!(got, want);
            let (a, b) = (words_seen(one), words_seen(all));
            proptest::prop_assert_eq!(a.0, b.0);
            proptest::prop_assert_eq!(a.1.loads, b.1.loads);
            proptest::prop_assert_eq!(a.1.load_bytes, b.1.load_bytes);
        }
    }

    #[test]
    fn only_flushed_and_fenced_lines_are_durable_and_events_are_exact() {
        let mut r = PmRegion::anonymous(RegionConfig::default()).unwrap();
        let a = r.alloc(256, 256).unwrap();
        r.track_crashes(
            Some(CrashCapture {
                probability: 1.0,
                adversarial: false,
            }),
            crate::rng::stream(1, "t"),
        );
        r.set_observer(Some(Box::new(EventLog::default())));
        let base = r.stats();
        r.write_u64(a, 11); // persisted below
        r.write_u64(a + 64, 22); // never flushed
        r.flush(a);
        r.fence();
        r.ntstore_u64(a + 128, 33);
        r.fence();
        let imgs = r.take_crash_images();
        assert_eq!(imgs.len(), 2);
        let word = |img: &[u8], off: u64| {
            u64::from_ne_bytes(img[off as usize..off as usize + 8].try_into().unwrap())
        };
        // Crash before the first fence completes: nothing is durable yet.
        assert_eq!(word(&imgs[0].bytes, a), 0);
        assert_eq!(word(&imgs[1].bytes, a), 11);
        assert_eq!(word(&imgs[1].bytes, a + 128), 0);
        let img = r.durable_image().unwrap();
        assert_eq!(
            (word(&img, a), word(&img, a + 64), word(&img, a + 128)),
            (11, 0, 33)
        );
        assert!(!r.all_durable());
        let log = r.set_observer(None).unwrap().into_any();
        let log = log.downcast::<EventLog>().unwrap();
        assert_eq!(
            log.0.iter().map(|(_, e)| *e).collect::<Vec<_>>(),
            vec![
                PmEvent::Store { off: a, len: 8 },
                PmEvent::Store {
                    off: a + 64,
                    len: 8
                },
                PmEvent::Flush {
                    off: a,
                    kind: FlushKind::Clwb
                },
                PmEvent::Fence,
                PmEvent::NtStore {
                    off: a + 128,
                    len: 8
                },
                PmEvent::Fence,
            ]
        );
        let s = r.stats().minus(&base);
        assert_eq!((s.flushes, s.fences, s.ntstores, s.stores), (1, 2, 1, 2));
    }

    /// Growing a region moves its words into a new (huge-page) allocation: every word
    /// written before a doubling reads back after it, and a copy of the region (which copies
    /// the words below the allocator's high-water mark and leaves the rest zero) reads the
    /// same at every word, the last one written just below that mark.
    #[test]
    fn growth_and_copies_keep_every_word() {
        let cfg = RegionConfig {
            initial_bytes: 64 << 10,
            ..RegionConfig::default()
        };
        let mut r = PmRegion::anonymous(cfg).unwrap();
        let mut written = Vec::new();
        // Blocks of 64 KiB, past four doublings and the size that takes huge pages.
        for i in 0..400u64 {
            let a = r.alloc(64 << 10, 64).unwrap();
            r.write_u64(a, i * 0x9e37_79b9 + 1);
            r.write_u64(a + (64 << 10) - 8, !i);
            written.push(a);
        }
        assert!(r.len() >= 400 * (64 << 10));
        let copy = r.fork_image(r.cfg.clone()).unwrap();
        for (i, &a) in written.iter().enumerate() {
            let i = i as u64;
            for reg in [&r, &copy] {
                assert_eq!(reg.peek_u64(a), i * 0x9e37_79b9 + 1);
                assert_eq!(reg.peek_u64(a + (64 << 10) - 8), !i);
            }
        }
        assert_eq!(r.used_bytes(), written[399] + (64 << 10));
        assert_eq!(copy.len(), r.len());
        assert!((0..r.len())
            .step_by(8)
            .all(|o| copy.peek_u64(o) == r.peek_u64(o)));
    }

    #[test]
    fn coalescing_drops_flushes_of_unchanged_lines() {
        let cfg = RegionConfig {
            coalesce_flushes: true,
            ..RegionConfig::default()
        };
        let mut r = PmRegion::anonymous(cfg).unwrap();
        let a = r.alloc(64, 64).unwrap();
        r.write_u64(a, 1);
        r.write_u64(a + 8, 2);
        r.flush(a);
        r.flush(a + 8);
        r.fence();
        assert_eq!((r.stats().flushes, r.stats().flushes_coalesced), (1, 1));
    }

    #[test]
    fn file_regions_persist_across_reopen() {
        let dir = std::env::temp_dir().join(format!("hmsim-pm-{}", std::process::id()));
        let path = dir.with_extension("pm");
        let cfg = RegionConfig::default();
        let a = {
            let mut r = PmRegion::create_file(&path, 1 << 20, cfg.clone()).unwrap();
            let a = r.alloc(64, 64).unwrap();
            r.write_u64(a, 99);
            r.persist(a, 8);
            Instr::new(&mut r).set_root(0, a);
            a
        };
        let mut r = PmRegion::open_file(&path, cfg).unwrap();
        assert_eq!(Instr::new(&mut r).root(0), a);
        assert_eq!(r.read_u64(a), 99);
        assert!(matches!(
            r.alloc(2 << 20, 64),
            Err(PmError::OutOfSpace { .. })
        ));
        drop(r);
        std::fs::remove_file(&path).unwrap();
    }
}
