//! Parameters of the PMem path, with defaults calibrated from Yang et al., USENIX FAST 2020 and
//! VANS (sources in docs/pmem.md).

use serde::{Deserialize, Serialize};

use crate::config::{Validate, Validator};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PmemConfig {
    /// Catalog memory device of one DIMM (capacity, endurance).
    #[serde(default = "default_device")]
    pub device: String,
    /// DIMMs interleaved on the socket.
    #[serde(default = "six")]
    pub dimms: u32,
    /// DIMMs behind one iMC (one WPQ counter each).
    #[serde(default = "three")]
    pub dimms_per_imc: u32,
    #[serde(default = "four_k")]
    pub interleave_bytes: u64,
    /// `adr`: the WPQ is the persistence domain; `eadr`: the caches are too.
    #[serde(default = "adr")]
    pub persistence: String,
    #[serde(default)]
    pub xpbuffer: XpBufferConfig,
    #[serde(default)]
    pub ait: AitConfig,
    #[serde(default)]
    pub timing: PmemTiming,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XpBufferConfig {
    /// XPLines held (64 x 256 B = 16 KiB).
    #[serde(default = "sixty_four")]
    pub entries: u32,
    /// Write a fully written XPLine to media as soon as it is complete (write combining);
    /// false: only on eviction.
    #[serde(default = "yes")]
    pub eager_full_writeback: bool,
    /// XPLines left to assemble incoming writes while the DIMM's media write queue is full
    /// (the other entries hold lines waiting for the media). With more interleaved write
    /// streams than this, partly written XPLines are written back early (RMW). Calibrated
    /// to FAST'20's one-DIMM curves: write bandwidth flat (2.2 GB/s) up to 4 threads needs
    /// at least 4; the 8-thread write amplification of 1.4-1.6x wants as few as possible
    /// (with queued writes patched, `merge_queued_writes`, 1.28 at 4, 1.31 at 2).
    #[serde(default = "four_u32")]
    pub backlog_write_entries: u32,
    /// A write to an XPLine whose media write is queued and not yet started merges into that
    /// write (VANS's RMW buffer patches pending writes so); a read of the XPLine is ordered
    /// after the queued write and ends the merging. Writes beyond the queue's room (entries
    /// less `backlog_write_entries`) wait for a WPQ credit. False: every completed or
    /// evicted XPLine is a media write of its own, and writers never wait for the media.
    #[serde(default = "yes")]
    pub merge_queued_writes: bool,
    /// Victim when a new XPLine needs an entry: `lru` (the published descriptions' and VANS's) or
    /// `random` (the controller's policy is not public; random gives the softer knee of FAST'20's
    /// buffer-size probe, docs/pmem.md).
    #[serde(default = "lru")]
    pub replacement: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AitConfig {
    #[serde(default = "yes")]
    pub wear_leveling: bool,
    /// Media writes to one 4 KiB block within a window that trigger its migration (VANS: 896).
    #[serde(default = "threshold")]
    pub migration_threshold_writes: u32,
    /// Per-DIMM media writes after which block write counters restart (hot-block window).
    #[serde(default = "window")]
    pub window_media_writes: u64,
    /// Stall of the DIMM during a migration, ns (VANS: 256 x 270 cycles at 0.75 ns).
    #[serde(default = "stall")]
    pub migration_stall_ns: f64,
    /// Media writes after which a physical line fails and its block is remapped to a spare;
    /// default: the device's rated bytes / capacity (full-module writes it endures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_endurance_writes: Option<u32>,
    /// 4 KiB blocks whose translation the on-DIMM AIT buffer holds (VANS: 4096, 16 MiB of
    /// address space), 16-way set-associative, LRU.
    #[serde(default = "ait_buffer")]
    pub buffer_blocks: u32,
}

/// Latencies (unloaded) and media bandwidth per DIMM; every key defaults.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PmemTiming {
    pub l1_hit_ns: f64,
    pub l2_hit_ns: f64,
    pub llc_hit_ns: f64,
    /// PMem read served by the XPBuffer / from media (with the translation in the AIT buffer).
    pub read_buffer_hit_ns: f64,
    pub read_media_ns: f64,
    /// Extra latency of a media read whose block translation misses the AIT buffer (the
    /// table entry fetched from media; VANS: 100 media cycles at 0.75 ns).
    pub ait_miss_ns: f64,
    /// store + clwb/clflushopt/clflush + sfence, completing at the WPQ.
    pub persist_ns: f64,
    /// ntstore + sfence.
    pub ntstore_persist_ns: f64,
    /// Lines of one operation whose flushes / loads overlap before the fence.
    pub overlap_lines: f64,
    /// Independent operations one thread keeps in flight (loads, unfenced stores).
    pub mlp: f64,
    /// Media bandwidth of one DIMM in 256 B units, GB/s.
    #[serde(rename = "media_read_gb_s", alias = "media_read_gbps")]
    pub media_read_gbps: f64,
    #[serde(rename = "media_write_gb_s", alias = "media_write_gbps")]
    pub media_write_gbps: f64,
}

impl Default for PmemTiming {
    fn default() -> Self {
        PmemTiming {
            l1_hit_ns: 1.3,
            l2_hit_ns: 4.5,
            llc_hit_ns: 20.0,
            read_buffer_hit_ns: 147.1,
            read_media_ns: 230.0,
            ait_miss_ns: 75.0,
            persist_ns: 62.0,
            ntstore_persist_ns: 90.0,
            overlap_lines: 4.0,
            mlp: 4.0,
            media_read_gbps: 6.5,
            media_write_gbps: 2.2,
        }
    }
}

fn default_device() -> String {
    "optane-pmem".into()
}
fn six() -> u32 {
    6
}
fn lru() -> String {
    "lru".into()
}
fn four_u32() -> u32 {
    4
}
fn three() -> u32 {
    3
}
fn four_k() -> u64 {
    4096
}
fn adr() -> String {
    "adr".into()
}
fn sixty_four() -> u32 {
    64
}
fn yes() -> bool {
    true
}
fn threshold() -> u32 {
    896
}
fn window() -> u64 {
    4096
}
fn ait_buffer() -> u32 {
    4096
}
fn stall() -> f64 {
    256.0 * 270.0 * 0.75
}

impl Default for XpBufferConfig {
    fn default() -> Self {
        XpBufferConfig {
            entries: sixty_four(),
            eager_full_writeback: true,
            backlog_write_entries: four_u32(),
            merge_queued_writes: true,
            replacement: lru(),
        }
    }
}
impl Default for AitConfig {
    fn default() -> Self {
        AitConfig {
            wear_leveling: true,
            migration_threshold_writes: threshold(),
            window_media_writes: window(),
            migration_stall_ns: stall(),
            line_endurance_writes: None,
            buffer_blocks: ait_buffer(),
        }
    }
}
impl Default for PmemConfig {
    fn default() -> Self {
        PmemConfig {
            device: default_device(),
            dimms: six(),
            dimms_per_imc: three(),
            interleave_bytes: four_k(),
            persistence: adr(),
            xpbuffer: XpBufferConfig::default(),
            ait: AitConfig::default(),
            timing: PmemTiming::default(),
        }
    }
}

impl Validate for PmemConfig {
    fn validate(&self, v: &mut Validator) {
        v.range("dimms", self.dimms, 1, 64, "");
        v.range("dimms_per_imc", self.dimms_per_imc, 1, 64, "");
        v.range(
            "interleave_bytes",
            self.interleave_bytes,
            256,
            1 << 30,
            "bytes",
        );
        if !self.interleave_bytes.is_power_of_two() {
            v.fail(
                "interleave_bytes",
                format!("{} is not a power of two", self.interleave_bytes),
            );
        }
        v.one_of("persistence", &self.persistence, &["adr", "eadr"]);
        v.one_of(
            "xpbuffer.replacement",
            &self.xpbuffer.replacement,
            &["lru", "random"],
        );
        v.range(
            "xpbuffer.entries",
            self.xpbuffer.entries,
            1,
            1 << 20,
            "XPLines",
        );
        v.range(
            "xpbuffer.backlog_write_entries",
            self.xpbuffer.backlog_write_entries,
            1,
            1 << 20,
            "XPLines",
        );
        v.range(
            "ait.migration_threshold_writes",
            self.ait.migration_threshold_writes,
            1,
            u32::MAX,
            "writes",
        );
        v.range(
            "ait.window_media_writes",
            self.ait.window_media_writes,
            1,
            u64::MAX,
            "writes",
        );
        v.range(
            "ait.buffer_blocks",
            self.ait.buffer_blocks,
            16,
            1 << 24,
            "blocks",
        );
        v.non_negative("ait.migration_stall_ns", self.ait.migration_stall_ns, "ns");
        let t = &self.timing;
        for (k, x) in [
            ("timing.l1_hit_ns", t.l1_hit_ns),
            ("timing.l2_hit_ns", t.l2_hit_ns),
            ("timing.llc_hit_ns", t.llc_hit_ns),
            ("timing.read_buffer_hit_ns", t.read_buffer_hit_ns),
            ("timing.read_media_ns", t.read_media_ns),
            ("timing.ait_miss_ns", t.ait_miss_ns),
            ("timing.persist_ns", t.persist_ns),
            ("timing.ntstore_persist_ns", t.ntstore_persist_ns),
        ] {
            v.non_negative(k, x, "ns");
        }
        v.range(
            "timing.overlap_lines",
            t.overlap_lines,
            1.0,
            1024.0,
            "lines",
        );
        v.range("timing.mlp", t.mlp, 1.0, 1024.0, "operations");
        v.positive("timing.media_read_gb_s", t.media_read_gbps, "GB/s");
        v.positive("timing.media_write_gb_s", t.media_write_gbps, "GB/s");
    }
}
