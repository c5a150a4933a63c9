//! Block-device (NVMe SSD) timing model.
//!
//! A request passes three resources, each a FIFO server keeping its next-free time:
//! the controller (one command every `1 / max_iops`), the host link (per direction,
//! `link_gbps`), and `units` media units. A request is cut into `stripe_bytes` pieces striped
//! round-robin over the units starting at `(offset / stripe) mod units`; a unit is occupied
//! per piece for `latency_ns + bytes / unit_gbps`, where `unit_gbps` is derived so that all
//! units busy with full stripes deliver exactly `bandwidth_gb_s`. Writes cross the link before
//! the media, reads after. Resources serve requests in submission order (one NVMe queue).

use super::spec::{DeviceSpec, DirectionSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockOp {
    Read,
    Write,
}

/// Per-direction timing derived from the device's catalog entry.
#[derive(Debug, Clone, Copy)]
struct Timing {
    access_ns: f64,
    ns_per_byte: f64,
    command_ns: f64,
}

impl Timing {
    fn new(
        d: &DirectionSpec,
        latency_ns: f64,
        bandwidth_gb_s: f64,
        units: u32,
        stripe: u64,
    ) -> Timing {
        let full_stripe_ns = units as f64 * stripe as f64 / bandwidth_gb_s;
        Timing {
            access_ns: latency_ns,
            ns_per_byte: (full_stripe_ns - latency_ns) / stripe as f64,
            command_ns: d.max_iops.map_or(0.0, |iops| 1e9 / iops),
        }
    }
}

/// Runtime state of one block device.
#[derive(Debug, Clone)]
pub struct BlockDevice {
    units: Vec<f64>,
    stripe_bytes: u64,
    controller_free_ns: f64,
    link_up_free_ns: f64,
    link_down_free_ns: f64,
    link_ns_per_byte: f64,
    read: Timing,
    write: Timing,
    write_after_cache: Option<Timing>,
    cache_left_bytes: u64,
    /// Sum of unit occupancy by direction, ns (for utilisation and energy).
    pub read_busy_ns: f64,
    pub write_busy_ns: f64,
    /// Bytes of the writes submitted.
    pub written_bytes: u64,
    /// When the write cache first could not take a write (`None`: no cache, or never full).
    pub write_cache_full_ns: Option<f64>,
}

impl BlockDevice {
    /// Build from a validated block-device spec.
    pub fn new(spec: &DeviceSpec) -> BlockDevice {
        let par = spec
            .parallelism
            .as_ref()
            .expect("validated: block devices have [parallelism]");
        let link = spec
            .interface
            .as_ref()
            .expect("validated: block devices have [interface]");
        let (u, s) = (par.units, par.stripe_bytes);
        let read = Timing::new(
            &spec.read,
            spec.read.latency_ns,
            spec.read.bandwidth_gb_s,
            u,
            s,
        );
        let write = Timing::new(
            &spec.write,
            spec.write.latency_ns,
            spec.write.bandwidth_gb_s,
            u,
            s,
        );
        let write_after_cache = spec.write_cache.as_ref().map(|c| {
            Timing::new(
                &spec.write,
                c.after_latency_ns,
                c.after_bandwidth_gb_s,
                u,
                s,
            )
        });
        BlockDevice {
            units: vec![0.0; u as usize],
            stripe_bytes: s,
            controller_free_ns: 0.0,
            link_up_free_ns: 0.0,
            link_down_free_ns: 0.0,
            link_ns_per_byte: 1.0 / link.link_gb_s,
            read,
            write,
            write_after_cache,
            cache_left_bytes: spec
                .write_cache
                .as_ref()
                .map_or(u64::MAX, |c| c.capacity_bytes),
            read_busy_ns: 0.0,
            write_busy_ns: 0.0,
            written_bytes: 0,
            write_cache_full_ns: None,
        }
    }

    pub fn units(&self) -> usize {
        self.units.len()
    }

    /// Submit a request at `now_ns`; returns its completion time in ns.
    #[inline]
    pub fn submit(&mut self, op: BlockOp, offset: u64, bytes: u64, now_ns: f64) -> f64 {
        let timing = match op {
            BlockOp::Read => self.read,
            BlockOp::Write => {
                self.written_bytes += bytes;
                if self.cache_left_bytes >= bytes {
                    self.cache_left_bytes = self.cache_left_bytes.saturating_sub(bytes);
                    self.write
                } else {
                    // Reached only with a cache (without one `cache_left_bytes` is u64::MAX).
                    self.cache_left_bytes = 0;
                    self.write_cache_full_ns.get_or_insert(now_ns);
                    self.write_after_cache.unwrap_or(self.write)
                }
            }
        };
        let mut t = now_ns.max(self.controller_free_ns) + timing.command_ns;
        self.controller_free_ns = t;
        let xfer_ns = bytes as f64 * self.link_ns_per_byte;
        if op == BlockOp::Write {
            t = t.max(self.link_up_free_ns) + xfer_ns;
            self.link_up_free_ns = t;
        }
        let (media_done, busy) = self.media(timing, offset, bytes, t);
        match op {
            BlockOp::Read => self.read_busy_ns += busy,
            BlockOp::Write => self.write_busy_ns += busy,
        }
        if op == BlockOp::Read {
            let done = media_done.max(self.link_down_free_ns) + xfer_ns;
            self.link_down_free_ns = done;
            done
        } else {
            media_done
        }
    }

    /// Reserve the media units for a request ready at `ready_ns`; (done time, busy ns).
    #[inline]
    fn media(&mut self, timing: Timing, offset: u64, bytes: u64, ready_ns: f64) -> (f64, f64) {
        let n_units = self.units.len() as u64;
        let stripe = self.stripe_bytes;
        let first = offset / stripe;
        let full = bytes / stripe;
        let rem = bytes % stripe;
        let pieces = full + (rem > 0) as u64;
        let full_ns = timing.access_ns + stripe as f64 * timing.ns_per_byte;
        let mut done = ready_ns;
        let mut busy = 0.0;
        for r in 0..pieces.min(n_units) {
            // Pieces r, r + U, r + 2U, ... of this request land on the same unit.
            let n_full = full / n_units + (r < full % n_units) as u64;
            let mut occupancy = n_full as f64 * full_ns;
            if rem > 0 && r == full % n_units {
                occupancy += timing.access_ns + rem as f64 * timing.ns_per_byte;
            }
            let u = ((first + r) % n_units) as usize;
            let end = self.units[u].max(ready_ns) + occupancy;
            self.units[u] = end;
            busy += occupancy;
            done = done.max(end);
        }
        (done, busy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Catalog;

    fn dev(name: &str) -> (DeviceSpec, BlockDevice) {
        let spec = Catalog::builtin().get(name).unwrap().clone();
        let b = BlockDevice::new(&spec);
        (spec, b)
    }

    #[test]
    fn unloaded_read_latency_is_the_sum_of_stages() {
        let (spec, mut d) = dev("intel-optane-900p");
        let done = d.submit(BlockOp::Read, 0, 4096, 0.0);
        let units = spec.parallelism.as_ref().unwrap().units as f64;
        let expect = 1e9 / spec.read.max_iops.unwrap()
            + units * 4096.0 / spec.read.bandwidth_gb_s
            + 4096.0 / spec.interface.as_ref().unwrap().link_gb_s;
        assert!((done - expect).abs() < 1e-6, "{done} vs {expect}");
    }

    #[test]
    fn full_stripes_on_all_units_deliver_the_stated_bandwidth() {
        let (spec, mut d) = dev("stt-mram-ssd");
        let units = spec.parallelism.as_ref().unwrap().units as u64;
        let bytes = units * 4096 * 1000;
        // One huge request: media time = bytes / bandwidth + per-stripe access is inside.
        let start = 1e6;
        let t_media = d.media(d.write, 0, bytes, start).0 - start;
        let expect = bytes as f64 / spec.write.bandwidth_gb_s;
        assert!((t_media - expect).abs() / expect < 1e-9);
    }
}
