use serde::{Deserialize, Serialize};

use crate::config::{Validate, Validator};

/// Byte-addressable media on a memory controller, or an NVMe block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Memory,
    Block,
}

/// One device of the catalog. Memory media and block devices share this schema; sections that
/// only one family has are optional and checked by [`Validate`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    /// Catalog name, lower-case with dashes (`intel-optane-900p`).
    pub name: String,
    pub kind: DeviceKind,
    /// Name of a catalog device this one inherits from (its keys are overridden by ours).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    pub description: String,
    /// Media technology: `stt-mram`, `3d-xpoint`, `nand-tlc`, `nand-mlc`, `dram`, `pcm`, ...
    pub technology: String,
    pub capacity_bytes: u64,
    /// Capacity software can use, where the module keeps some for itself (an Optane DIMM's
    /// 256 GB shows as 252 GiB); default `capacity_bytes`. NUMA modules default to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usable_capacity_bytes: Option<u64>,
    /// Bytes per media access for memory media (64 for a cache line); unused for block devices.
    #[serde(default = "default_access_bytes")]
    pub access_bytes: u64,
    pub read: DirectionSpec,
    pub write: DirectionSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<InterfaceSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<ParallelismSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<CacheSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endurance: Option<EnduranceSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thermal: Option<ThermalSpec>,
}

fn default_access_bytes() -> u64 {
    64
}

/// Read or write characteristics.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionSpec {
    /// Unloaded media access latency (block: per stripe access inside the device, occupying
    /// the unit; memory: load-to-use or store latency).
    pub latency_ns: f64,
    /// Saturated bandwidth of the media for large requests, GB/s (10^9 B/s).
    #[serde(rename = "bandwidth_gb_s", alias = "bandwidth_gbps")]
    pub bandwidth_gbps: f64,
    /// Command-rate cap for small (4 KiB) requests; block devices only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iops: Option<f64>,
    /// Dynamic energy per access of `access_bytes` (memory media, cell level), nJ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_nj_per_access: Option<f64>,
}

/// Host interface of a block device.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterfaceSpec {
    /// Bus name, e.g. `pcie3-x4` (informational).
    pub bus: String,
    /// Usable link bandwidth per direction, GB/s.
    #[serde(rename = "link_gb_s", alias = "link_gbps")]
    pub link_gbps: f64,
}

/// Internal parallelism of a block device: `units` independent media units (channels x dies,
/// or controller engines); requests are cut into `stripe_bytes` pieces striped over them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParallelismSpec {
    pub units: u32,
    pub stripe_bytes: u64,
}

/// A write cache in front of slower media (the SLC cache of a TLC SSD): writes run at the
/// device's `write` figures until `capacity_bytes` have been written, then at these.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSpec {
    pub capacity_bytes: u64,
    pub after_latency_ns: f64,
    #[serde(rename = "after_bandwidth_gb_s", alias = "after_bandwidth_gbps")]
    pub after_bandwidth_gbps: f64,
}

/// Device power: idle, and active (at full media utilisation) per direction, W.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerSpec {
    pub idle_w: f64,
    pub read_active_w: f64,
    pub write_active_w: f64,
}

/// Endurance, in whichever terms the source gives it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnduranceSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cycles: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tbw_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dwpd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warranty_years: Option<f64>,
}

/// First-order (optionally two-node) RC thermal model parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThermalSpec {
    /// Thermal resistance device→ambient without airflow, K/W.
    pub r_passive_k_per_w: f64,
    /// Thermal resistance device→ambient with a fan, K/W.
    pub r_fan_k_per_w: f64,
    /// Heat capacity of the device (or of its heatsink node in the two-node model), J/K.
    pub c_j_per_k: f64,
    /// Two-node model: die→heatsink resistance, K/W, and die heat capacity, J/K.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r_die_k_per_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_die_j_per_k: Option<f64>,
    /// Throttle thresholds (NVMe TMT1, TMT2 style), °C, ascending, each with the bandwidth
    /// fraction allowed above it.
    #[serde(default)]
    pub throttle_c: Vec<f64>,
    #[serde(default)]
    pub throttle_bandwidth_fraction: Vec<f64>,
    /// A throttle level is left when the temperature falls this far below its threshold, K.
    #[serde(default = "default_hysteresis")]
    pub hysteresis_k: f64,
    /// Temperature at which the device stops working (shutdown / failure), °C.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_c: Option<f64>,
}

fn default_hysteresis() -> f64 {
    2.0
}

impl Validate for DirectionSpec {
    fn validate(&self, v: &mut Validator) {
        v.positive("latency_ns", self.latency_ns, "ns");
        v.positive("bandwidth_gb_s", self.bandwidth_gbps, "GB/s");
        if let Some(iops) = self.max_iops {
            v.positive("max_iops", iops, "requests/s");
        }
        if let Some(e) = self.energy_nj_per_access {
            v.non_negative("energy_nj_per_access", e, "nJ");
        }
    }
}

impl Validate for ThermalSpec {
    fn validate(&self, v: &mut Validator) {
        v.positive("r_passive_k_per_w", self.r_passive_k_per_w, "K/W");
        v.positive("r_fan_k_per_w", self.r_fan_k_per_w, "K/W");
        v.positive("c_j_per_k", self.c_j_per_k, "J/K");
        match (self.r_die_k_per_w, self.c_die_j_per_k) {
            (Some(r), Some(c)) => {
                v.positive("r_die_k_per_w", r, "K/W");
                v.positive("c_die_j_per_k", c, "J/K");
            }
            (None, None) => {}
            _ => v.fail(
                "r_die_k_per_w",
                "the two-node model needs both r_die_k_per_w and c_die_j_per_k",
            ),
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
        v.non_negative("hysteresis_k", self.hysteresis_k, "K");
    }
}

impl Validate for DeviceSpec {
    fn validate(&self, v: &mut Validator) {
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
        v.range("access_bytes", self.access_bytes, 1, 1 << 30, "bytes");
        v.nested("read", &self.read);
        v.nested("write", &self.write);
        if let Some(t) = &self.thermal {
            v.nested("thermal", t);
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
                v.positive("interface.link_gb_s", i.link_gbps, "GB/s");
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
                    let budget_ns = p.units as f64 * p.stripe_bytes as f64 / d.bandwidth_gbps;
                    if d.latency_ns >= budget_ns {
                        v.fail(
                            &format!("{key}.latency_ns"),
                            format!(
                                "{} ns is too long to reach {} GB/s with {} units of {} B stripes; allowed below {:.0} ns",
                                d.latency_ns, d.bandwidth_gbps, p.units, p.stripe_bytes, budget_ns
                            ),
                        );
                    }
                }
            }
            if let Some(c) = &self.write_cache {
                v.positive("write_cache.after_latency_ns", c.after_latency_ns, "ns");
                v.positive(
                    "write_cache.after_bandwidth_gb_s",
                    c.after_bandwidth_gbps,
                    "GB/s",
                );
            }
        }
    }
}
