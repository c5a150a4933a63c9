use serde::{Deserialize, Serialize};

use crate::config::Validator;

/// Byte-addressable media on a memory controller, or an NVMe block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Memory,
    Block,
}

/// Physical bounds of a device's figures (docs/devices.md): latencies from 0.1 ns (below any
/// memory, a few gate delays) to 10 s; bandwidths from 1 kB/s to 10 TB/s (above any memory
/// device, HBM stacks included); command rates up to 10^9 per second.
pub(super) const MIN_LATENCY_NS: f64 = 0.1;
pub(super) const MAX_LATENCY_NS: f64 = 1e10;
pub(super) const MIN_BANDWIDTH_GB_S: f64 = 1e-6;
pub(super) const MAX_BANDWIDTH_GB_S: f64 = 1e4;
pub(super) const MAX_IOPS: f64 = 1e9;

crate::params! {
    #[params(required, check)]
    /// One device of the catalog. Memory media and block devices share this schema; sections
    /// that only one family has are optional and checked by [`Validate`].
    #[derive(Debug, Clone)]
    pub struct DeviceSpec {
        pub name: String => any, "",
            "Catalog name, lower-case with dashes (`intel-optane-900p`).";
        pub kind: DeviceKind => any, "", "`memory` (byte-addressable media) or `block` (NVMe).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub base: Option<String> = None => any, "",
            "Name of a catalog device this one inherits from (its keys are overridden by ours).";
        pub description: String => any, "", "One line for tables and docs.";
        pub technology: String => any, "",
            "Media technology: `stt-mram`, `3d-xpoint`, `nand-tlc`, `nand-mlc`, `dram`, `pcm`, ...";
        pub capacity_bytes: u64 => any, "", "Raw capacity; above zero.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub usable_capacity_bytes: Option<u64> = None => any, "",
            "Capacity software can use, where the module keeps some for itself (an Optane DIMM's 256 GB shows as 252 GiB); default `capacity_bytes`, at most it.";
        pub access_bytes: u64 = 64 => range(1, 1 << 30), "",
            "Bytes per media access for memory media (64 for a cache line); unused for block devices.";
        pub read: DirectionSpec => nested, "", "Read characteristics.";
        pub write: DirectionSpec => nested, "", "Write characteristics.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub interface: Option<InterfaceSpec> = None => table, "",
            "Host interface; block devices only (required there).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub link: Option<LinkSpec> = None => table, "",
            "The link between the CPU and the media (a CXL expander's PCIe lanes); memory devices only: a tier of the tiering module takes it as its `path` (docs/devices.md, *Devices in a scenario*).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub parallelism: Option<ParallelismSpec> = None => table, "",
            "Internal parallelism; block devices only (required there).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub write_cache: Option<CacheSpec> = None => table, "",
            "Write cache in front of slower media; block devices only.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub power: Option<PowerSpec> = None => table, "", "Device power; required for block devices.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub endurance: Option<EnduranceSpec> = None => table, "", "Endurance rating.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub thermal: Option<ThermalSpec> = None => nested, "", "Thermal model parameters.";
    }
}

crate::params! {
    #[params(required)]
    /// Read or write characteristics.
    #[derive(Debug, Clone)]
    pub struct DirectionSpec {
        pub latency_ns: f64 => range(MIN_LATENCY_NS, MAX_LATENCY_NS), "",
            "Unloaded media access latency (block: per stripe access inside the device, occupying the unit; memory: load-to-use or store latency).";
        pub bandwidth_gb_s: f64 => range(MIN_BANDWIDTH_GB_S, MAX_BANDWIDTH_GB_S), "",
            "Saturated bandwidth of the media for large requests (10^9 B/s).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub max_iops: Option<f64> = None => range(1.0, MAX_IOPS), "requests/s",
            "Command-rate cap for small (4 KiB) requests; block devices only.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub energy_nj_per_access: Option<f64> = None => non_negative, "nJ",
            "Dynamic energy per access of `access_bytes` (memory media, cell level).";
    }
}

crate::params! {
    #[params(required)]
    /// Host interface of a block device.
    #[derive(Debug, Clone)]
    pub struct InterfaceSpec {
        pub bus: String => any, "", "Bus name, e.g. `pcie3-x4` (informational).";
        pub link_gb_s: f64 => any, "", "Usable link bandwidth per direction, 1e-6 to 1e4 GB/s.";
    }
}

crate::params! {
    #[params(required)]
    /// The link in front of a memory device's media (a CXL expander's PCIe 5.0 x8 lanes), as a
    /// resource of a tier's path: bandwidth per direction, or shared by both, or any mix; the
    /// media figures (`read`, `write`) stay those of the media behind it.
    #[derive(Debug, Clone)]
    pub struct LinkSpec {
        pub name: String => any, "", "Name of the link in results (`<tier>_bottleneck`), e.g. `cxl-x8`.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub read_gb_s: Option<f64> = None => any, "",
            "Bandwidth toward the CPU (carrying read data), 1e-6 to 1e4 GB/s.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub write_gb_s: Option<f64> = None => any, "",
            "Bandwidth toward the device (carrying writes), 1e-6 to 1e4 GB/s.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub total_gb_s: Option<f64> = None => any, "",
            "Bandwidth shared by both directions (a half-duplex bus), 1e-6 to 1e4 GB/s.";
    }
}

crate::params! {
    #[params(required)]
    /// Internal parallelism of a block device: `units` independent media units (channels x
    /// dies, or controller engines); requests are cut into `stripe_bytes` pieces striped over
    /// them.
    #[derive(Debug, Clone)]
    pub struct ParallelismSpec {
        pub units: u32 => any, "", "Independent media units, 1 to 4096.";
        pub stripe_bytes: u64 => any, "",
            "Stripe size, 512 B to 64 MiB, a multiple of 512 B.";
    }
}

crate::params! {
    #[params(required)]
    /// A write cache in front of slower media (the SLC cache of a TLC SSD): writes run at the
    /// device's `write` figures until `capacity_bytes` have been written, then at these.
    #[derive(Debug, Clone)]
    pub struct CacheSpec {
        pub capacity_bytes: u64 => any, "", "Bytes written at the `write` figures.";
        pub after_latency_ns: f64 => any, "", "Write latency once the cache is full, 0.1 ns to 10 s.";
        pub after_bandwidth_gb_s: f64 => any, "",
            "Write bandwidth once the cache is full, 1e-6 to 1e4 GB/s.";
    }
}

crate::params! {
    #[params(required)]
    /// Device power: idle, and active (at full media utilisation) per direction, W.
    #[derive(Debug, Clone)]
    pub struct PowerSpec {
        pub idle_w: f64 => any, "", "Idle power; zero or more.";
        pub read_active_w: f64 => any, "", "Power while reading at full utilisation; at least `idle_w`.";
        pub write_active_w: f64 => any, "", "Power while writing at full utilisation; at least `idle_w`.";
    }
}

crate::params! {
    /// Endurance, in whichever terms the source gives it.
    #[derive(Debug, Clone)]
    pub struct EnduranceSpec {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub write_cycles: Option<f64> = None => any, "", "Writes each cell endures.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub tbw_bytes: Option<f64> = None => any, "", "Total bytes written over the warranty.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub dwpd: Option<f64> = None => any, "", "Drive writes per day over the warranty.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub warranty_years: Option<f64> = None => any, "", "Warranty period.";
    }
}

crate::params! {
    #[params(required, check)]
    /// First-order (optionally two-node) RC thermal model parameters.
    #[derive(Debug, Clone)]
    pub struct ThermalSpec {
        pub r_passive_k_per_w: f64 => positive, "",
            "Thermal resistance device→ambient without airflow.";
        pub r_fan_k_per_w: f64 => positive, "", "Thermal resistance device→ambient with a fan.";
        pub c_j_per_k: f64 => positive, "",
            "Heat capacity of the device (or of its heatsink node in the two-node model).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub r_die_k_per_w: Option<f64> = None => positive, "",
            "Two-node model: die→heatsink resistance (give with `c_die_j_per_k`).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub c_die_j_per_k: Option<f64> = None => positive, "",
            "Two-node model: die heat capacity (give with `r_die_k_per_w`).";
        pub throttle_c: Vec<f64> = Vec::new() => any, "",
            "Throttle thresholds (NVMe TMT1, TMT2 style), strictly ascending.";
        pub throttle_bandwidth_fraction: Vec<f64> = Vec::new() => any, "",
            "Bandwidth fraction, in (0, 1], allowed above each threshold of `throttle_c`.";
        pub hysteresis_k: f64 = 2.0 => non_negative, "",
            "A throttle level is left when the temperature falls this far below its threshold.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub stop_c: Option<f64> = None => any, "",
            "Temperature at which the device stops working (shutdown / failure).";
    }
}

impl ThermalSpec {
    /// The two-node parameters come as a pair; throttle levels are consistent.
    fn check(&self, v: &mut Validator) {
        if self.r_die_k_per_w.is_some() != self.c_die_j_per_k.is_some() {
            v.fail(
                "r_die_k_per_w",
                "the two-node model needs both r_die_k_per_w and c_die_j_per_k",
            );
        }
        if self.throttle_c.len() != self.throttle_bandwidth_fraction.len() {
            v.fail(
                "throttle_bandwidth_fraction",
                "needs one fraction per entry of throttle_c",
            );
        }
        if self.throttle_c.windows(2).any(|w| w[1] <= w[0]) {
            v.fail("throttle_c", "thresholds must be strictly ascending");
        }
        for f in &self.throttle_bandwidth_fraction {
            if !(*f > 0.0 && *f <= 1.0) {
                v.fail(
                    "throttle_bandwidth_fraction",
                    format!("{f} is out of range; allowed (0, 1]"),
                );
            }
        }
    }
}

impl DeviceSpec {
    /// Name spelling, capacities, power ordering and the block-device sections.
    fn check(&self, v: &mut Validator) {
        let name_ok = !self.name.is_empty()
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
        if !name_ok {
            v.fail(
                "name",
                format!(
                    "'{}' is not allowed; use lower-case letters, digits, '-' and '.'",
                    self.name
                ),
            );
        }
        if self.capacity_bytes == 0 {
            v.fail(
                "capacity_bytes",
                "0 is not allowed; expected a positive size in bytes",
            );
        }
        if let Some(u) = self.usable_capacity_bytes {
            v.range("usable_capacity_bytes", u, 1, self.capacity_bytes, "bytes");
        }
        if let Some(p) = &self.power {
            v.non_negative("power.idle_w", p.idle_w, "W");
            for (k, a) in [
                ("power.read_active_w", p.read_active_w),
                ("power.write_active_w", p.write_active_w),
            ] {
                if !(a.is_finite() && a >= p.idle_w) {
                    v.fail(
                        k,
                        format!(
                            "{a} is not allowed; expected at least idle_w ({})",
                            p.idle_w
                        ),
                    );
                }
            }
        }
        if let Some(l) = &self.link {
            if self.kind == DeviceKind::Block {
                v.fail(
                    "link",
                    "[link] describes the link in front of memory media; a block device's host link is [interface]",
                );
            }
            let given = [
                ("link.read_gb_s", l.read_gb_s),
                ("link.write_gb_s", l.write_gb_s),
                ("link.total_gb_s", l.total_gb_s),
            ];
            if given.iter().all(|(_, b)| b.is_none()) {
                v.fail("link", "a link needs read_gb_s, write_gb_s or total_gb_s");
            }
            for (k, b) in given {
                if let Some(b) = b {
                    v.range(k, b, MIN_BANDWIDTH_GB_S, MAX_BANDWIDTH_GB_S, "GB/s");
                }
            }
        }
        if self.kind == DeviceKind::Memory {
            // Sections and figures of the block-device model: no memory module reads them,
            // so a memory device that carries them would have them silently ignored.
            for (section, present) in [
                ("interface", self.interface.is_some()),
                ("parallelism", self.parallelism.is_some()),
                ("write_cache", self.write_cache.is_some()),
                ("read.max_iops", self.read.max_iops.is_some()),
                ("write.max_iops", self.write.max_iops.is_some()),
            ] {
                if present {
                    v.fail(
                        section,
                        format!(
                            "{section} is for block devices only; no memory model uses it (a memory device's link is [link])"
                        ),
                    );
                }
            }
        }
        if self.kind == DeviceKind::Block {
            for (section, present) in [
                ("interface", self.interface.is_some()),
                ("parallelism", self.parallelism.is_some()),
                ("power", self.power.is_some()),
            ] {
                if !present {
                    v.fail(
                        section,
                        format!("missing required section [{section}] for a block device"),
                    );
                }
            }
            if let Some(i) = &self.interface {
                v.range(
                    "interface.link_gb_s",
                    i.link_gb_s,
                    MIN_BANDWIDTH_GB_S,
                    MAX_BANDWIDTH_GB_S,
                    "GB/s",
                );
            }
            if let Some(p) = &self.parallelism {
                v.range("parallelism.units", p.units, 1, 4096, "");
                v.range(
                    "parallelism.stripe_bytes",
                    p.stripe_bytes,
                    512,
                    64 << 20,
                    "bytes",
                );
                if p.stripe_bytes > 0 {
                    v.multiple_of("parallelism.stripe_bytes", p.stripe_bytes, 512);
                }
                // The unit's occupancy per full stripe must exceed its access latency, or the
                // stated bandwidth cannot be reached with this many units.
                for (key, d) in [("read", &self.read), ("write", &self.write)] {
                    let budget_ns = p.units as f64 * p.stripe_bytes as f64 / d.bandwidth_gb_s;
                    if d.latency_ns >= budget_ns {
                        v.fail(
                            &format!("{key}.latency_ns"),
                            format!(
                                "{} ns is too long to reach {} GB/s with {} units of {} B stripes; allowed below {:.0} ns",
                                d.latency_ns, d.bandwidth_gb_s, p.units, p.stripe_bytes, budget_ns
                            ),
                        );
                    }
                }
            }
            if let Some(c) = &self.write_cache {
                v.range(
                    "write_cache.after_latency_ns",
                    c.after_latency_ns,
                    MIN_LATENCY_NS,
                    MAX_LATENCY_NS,
                    "ns",
                );
                v.range(
                    "write_cache.after_bandwidth_gb_s",
                    c.after_bandwidth_gb_s,
                    MIN_BANDWIDTH_GB_S,
                    MAX_BANDWIDTH_GB_S,
                    "GB/s",
                );
            }
        }
    }
}
