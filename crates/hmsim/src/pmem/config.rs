//! Parameters of the PMem path, with defaults calibrated from Yang et al., USENIX FAST 2020 and
//! VANS (sources in docs/pmem.md).

use crate::config::Validator;

crate::params! {
    #[params(check)]
    /// One socket's Optane DC PMem: DIMMs, interleaving, persistence domain, and the
    /// XPBuffer, AIT and timing of each DIMM.
    #[derive(Debug, Clone)]
    pub struct PmemConfig {
        pub device: String = "optane-pmem".into() => any, "",
            "Catalog memory device of one DIMM (capacity, endurance).";
        pub dimms: u32 = 6 => range(1, 64), "", "DIMMs interleaved on the socket.";
        pub dimms_per_imc: u32 = 3 => range(1, 64), "",
            "DIMMs behind one iMC (one WPQ counter each).";
        pub interleave_bytes: u64 = 4096 => range(256, 1 << 30), "",
            "Interleaving granularity across the DIMMs; a power of two.";
        pub persistence: String = "adr".into() => any, "",
            "`adr`: the WPQ is the persistence domain; `eadr`: the caches are too.";
        pub xpbuffer: XpBufferConfig = XpBufferConfig::default() => nested, "",
            "The on-DIMM XPBuffer.";
        pub ait: AitConfig = AitConfig::default() => nested, "",
            "The on-DIMM address indirection table and wear leveling.";
        pub timing: PmemTiming = PmemTiming::default() => nested, "",
            "Unloaded latencies and media bandwidth per DIMM.";
    }
}

crate::params! {
    #[params(check)]
    /// The XPBuffer: write-combining buffer of 256 B XPLines on each DIMM.
    #[derive(Debug, Clone)]
    pub struct XpBufferConfig {
        pub entries: u32 = 64 => range(1, 1 << 20), "XPLines",
            "XPLines held (64 x 256 B = 16 KiB).";
        pub eager_full_writeback: bool = true => any, "",
            "Write a fully written XPLine to media as soon as it is complete (write combining); false: only on eviction.";
        pub backlog_write_entries: u32 = 4 => range(1, 1 << 20), "XPLines",
            "XPLines left to assemble incoming writes while the DIMM's media write queue is full (the other entries hold lines waiting for the media); with more interleaved write streams than this, partly written XPLines are written back early (RMW). Calibrated to FAST'20's one-DIMM curves (docs/pmem.md).";
        pub merge_queued_writes: bool = true => any, "",
            "A write to an XPLine whose media write is queued and not yet started merges into that write (as VANS's RMW buffer patches pending writes); a read of the XPLine ends the merging. False: every completed or evicted XPLine is a media write of its own.";
        pub in_order_requests: bool = false => any, "",
            "The DIMM takes requests in arrival order (VANS's load-store queue): a request waiting for its XPLine's queued media write (a write that cannot merge into it, a read ordered after it) holds up every later request to the DIMM. False: only the waiting request waits.";
        pub replacement: String = "lru".into() => any, "",
            "Victim when a new XPLine needs an entry: `lru` (the spec's and VANS's) or `random` (softer knee of FAST'20's buffer-size probe, docs/pmem.md).";
    }
}

crate::params! {
    /// The address indirection table (AIT) and its wear leveling.
    #[derive(Debug, Clone)]
    pub struct AitConfig {
        pub wear_leveling: bool = true => any, "", "Migrate hot 4 KiB blocks (wear leveling).";
        pub migration_threshold_writes: u32 = 896 * 16 => range(1, u32::MAX), "writes",
            "256 B media writes to one 4 KiB block within a window that trigger its migration: VANS's 896 AIT requests, each of which carries 16 overwrites of 256 B in VANS's own overwrite validation (3.5 MiB written to the block; docs/pmem.md).";
        pub window_media_writes: u64 = 4096 * 16 => range(1, u64::MAX), "writes",
            "Per-DIMM 256 B media writes after which block write counters restart (hot-block window, 16 MiB): blocks of a hot region fewer than window / threshold per DIMM migrate.";
        pub migration_stall_ns: f64 = 256.0 * 270.0 * 0.75 => non_negative, "",
            "Stall of the DIMM during a migration (VANS: 256 x 270 cycles at 0.75 ns).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub line_endurance_writes: Option<u32> = None => any, "writes",
            "Media writes after which a physical line fails and its block is remapped to a spare; default: the device's rated bytes / capacity (full-module writes it endures).";
        pub buffer_blocks: u32 = 4096 => range(16, 1 << 24), "blocks",
            "4 KiB blocks whose translation the on-DIMM AIT buffer holds (VANS: 4096, 16 MiB of address space), 16-way set-associative, LRU.";
    }
}

crate::params! {
    #[params(check)]
    /// Latencies (unloaded) and media bandwidth per DIMM; every key defaults.
    #[derive(Debug, Clone)]
    pub struct PmemTiming {
        pub l1_hit_ns: f64 = 1.3 => non_negative, "", "L1 hit latency.";
        pub l2_hit_ns: f64 = 4.5 => non_negative, "", "L2 hit latency.";
        pub llc_hit_ns: f64 = 20.0 => non_negative, "", "LLC hit latency.";
        pub read_buffer_hit_ns: f64 = 147.1 => non_negative, "",
            "PMem read served by the XPBuffer (translation in the AIT buffer).";
        pub read_media_ns: f64 = 230.0 => non_negative, "",
            "PMem read from media (translation in the AIT buffer).";
        pub ait_miss_ns: f64 = 75.0 => non_negative, "",
            "Extra latency of a media read whose block translation misses the AIT buffer (VANS: 100 media cycles at 0.75 ns).";
        pub persist_ns: f64 = 62.0 => non_negative, "",
            "store + clwb/clflushopt/clflush + sfence, completing at the WPQ.";
        pub ntstore_persist_ns: f64 = 90.0 => non_negative, "", "ntstore + sfence.";
        pub overlap_lines: f64 = 4.0 => range(1.0, 1024.0), "lines",
            "Lines of one operation whose flushes / loads overlap before the fence.";
        pub mlp: f64 = 4.0 => range(1.0, 1024.0), "operations",
            "Independent operations one thread keeps in flight (loads, unfenced stores).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub media_write_latency_ns: Option<f64> = None => any, "",
            "Time a media write holds its XPLine after it starts (VANS: 300 cycles at 0.75 ns = 225): a later write to the XPLine waits until it has finished, a read until max(this, 256 B / media_write_gb_s). Default: a started write no longer holds its XPLine.";
        pub media_read_gb_s: f64 = 6.5 => positive, "",
            "Media read bandwidth of one DIMM in 256 B units.";
        pub media_write_gb_s: f64 = 2.2 => positive, "",
            "Media write bandwidth of one DIMM in 256 B units.";
    }
}

impl PmemConfig {
    /// Interleaving is a power of two; the persistence domain is a known one.
    fn check(&self, v: &mut Validator) {
        if !self.interleave_bytes.is_power_of_two() {
            v.fail(
                "interleave_bytes",
                format!("{} is not a power of two", self.interleave_bytes),
            );
        }
        v.one_of("persistence", &self.persistence, &["adr", "eadr"]);
    }
}

impl XpBufferConfig {
    fn check(&self, v: &mut Validator) {
        v.one_of("replacement", &self.replacement, &["lru", "random"]);
    }
}

impl PmemTiming {
    fn check(&self, v: &mut Validator) {
        if let Some(ns) = self.media_write_latency_ns {
            if !(ns.is_finite() && ns >= 0.0) {
                v.fail(
                    "media_write_latency_ns",
                    format!("{ns} is not a finite number of ns >= 0"),
                );
            }
        }
    }
}
