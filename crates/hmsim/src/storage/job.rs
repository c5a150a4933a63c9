//! A closed-loop I/O job: `queue_depth` requests outstanding; each completion issues the next
//! request at once (libaio with iodepth, O_DIRECT). Stops issuing when the simulated duration
//! or the byte count is reached; statistics cover every completed request.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::config::Validator;
use crate::device::{BlockDevice, BlockOp, EnergyReport, PowerSpec};
use crate::rng::SimRng;
use crate::stats::{LatencyHistogram, Summary};
use crate::units::{gbps, mib_per_s};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Sequential,
    Random,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpMix {
    Read,
    Write,
    Mix,
}

crate::params! {
    #[params(required, check)]
    /// One job, as fio would describe it.
    #[derive(Debug, Clone)]
    pub struct JobSpec {
        pub pattern: Pattern = Pattern::Sequential => any, "",
            "Address pattern: `sequential` or `random` (uniform over the region, block-aligned).";
        pub op: OpMix => any, "", "Operation: `read`, `write` or `mix`.";
        pub read_fraction: f64 = 0.5 => fraction, "", "Share of reads for `op = \"mix\"`.";
        pub queue_depth: u32 => range(1, 64), "", "Requests outstanding (closed loop).";
        pub block_size_bytes: u64 => range(4096, 16 << 20), "",
            "Size of each request; a multiple of 512.";
        pub duration_s: f64 = 1.0 => range(1e-6, 1e5), "",
            "Simulated run time (used unless `total_bytes` is given).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub total_bytes: Option<u64> = None => any, "",
            "Stop after this many bytes (at least one block) instead of after `duration_s`.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub region_bytes: Option<u64> = None => any, "",
            "Span of device addresses the job touches (at least one block, at most the capacity); default: the whole device.";
    }
}

impl JobSpec {
    /// Checks across fields: block alignment and byte counts of at least one block.
    fn check(&self, v: &mut Validator) {
        if self.block_size_bytes >= 4096 {
            v.multiple_of("block_size_bytes", self.block_size_bytes, 512);
        }
        if let Some(b) = self.total_bytes {
            if b < self.block_size_bytes {
                v.fail(
                    "total_bytes",
                    format!(
                        "{b} is less than one block; allowed at least block_size_bytes ({})",
                        self.block_size_bytes
                    ),
                );
            }
        }
        if let Some(r) = self.region_bytes {
            if r < self.block_size_bytes {
                v.fail(
                    "region_bytes",
                    format!(
                        "{r} is less than one block; allowed at least block_size_bytes ({})",
                        self.block_size_bytes
                    ),
                );
            }
        }
    }
}

/// What a job measured.
#[derive(Debug, Clone, Serialize)]
pub struct JobResult {
    pub requests: u64,
    pub bytes: u64,
    pub elapsed_s: f64,
    pub bandwidth_gb_s: f64,
    pub bandwidth_mib_s: f64,
    pub iops: f64,
    pub latency: Summary,
    pub energy: EnergyReport,
    /// MiB moved per joule above idle (the study's way of measuring energy).
    pub efficiency_mib_per_j: f64,
    /// MiB/s per W of device power.
    pub bandwidth_per_watt: f64,
    /// Bytes the job wrote, and when the device's write cache filled (`None`: no cache,
    /// or never full).
    pub written_bytes: u64,
    pub write_cache_full_s: Option<f64>,
}

/// Run `job` on `device` (fresh state) with power model `power`.
pub fn run_job(
    mut device: BlockDevice,
    power: &PowerSpec,
    job: &JobSpec,
    capacity_bytes: u64,
    rng: &mut SimRng,
) -> JobResult {
    let bs = job.block_size_bytes;
    let region = job
        .region_bytes
        .unwrap_or(capacity_bytes)
        .min(capacity_bytes)
        .max(bs);
    let blocks = region / bs;
    let stop_ns = job.duration_s * 1e9;
    let max_requests = job.total_bytes.map_or(u64::MAX, |b| b.div_ceil(bs));
    let mut hist = LatencyHistogram::default();
    // Completion times of the outstanding requests; positive f64 bits order like the floats.
    let mut outstanding: BinaryHeap<Reverse<u64>> =
        BinaryHeap::with_capacity(job.queue_depth as usize);
    let mut next_block = 0u64;
    let (mut issued, mut bytes, mut completed, mut end_ns) = (0u64, 0u64, 0u64, 0.0f64);

    let mut issue = |now: f64, device: &mut BlockDevice, hist: &mut LatencyHistogram| -> f64 {
        let block = match job.pattern {
            Pattern::Sequential => {
                let b = next_block;
                next_block = if next_block + 1 >= blocks {
                    0
                } else {
                    next_block + 1
                };
                b
            }
            Pattern::Random => rng.random_range(0..blocks),
        };
        let op = match job.op {
            OpMix::Read => BlockOp::Read,
            OpMix::Write => BlockOp::Write,
            OpMix::Mix => {
                if rng.random::<f64>() < job.read_fraction {
                    BlockOp::Read
                } else {
                    BlockOp::Write
                }
            }
        };
        let done = device.submit(op, block * bs, bs, now);
        hist.record_ns(done - now);
        done
    };

    for _ in 0..job
        .queue_depth
        .min(max_requests.min(u32::MAX as u64) as u32)
    {
        let done = issue(0.0, &mut device, &mut hist);
        issued += 1;
        outstanding.push(Reverse(done.to_bits()));
    }
    while let Some(Reverse(bits)) = outstanding.pop() {
        let now = f64::from_bits(bits);
        completed += 1;
        bytes += bs;
        end_ns = now;
        if issued < max_requests && (job.total_bytes.is_some() || now < stop_ns) {
            let done = issue(now, &mut device, &mut hist);
            issued += 1;
            outstanding.push(Reverse(done.to_bits()));
        }
    }
    let energy = EnergyReport::compute(
        power,
        end_ns,
        device.read_busy_ns,
        device.write_busy_ns,
        device.units(),
    );
    let mib = bytes as f64 / (1u64 << 20) as f64;
    JobResult {
        requests: completed,
        bytes,
        elapsed_s: end_ns * 1e-9,
        bandwidth_gb_s: gbps(bytes as f64, end_ns),
        bandwidth_mib_s: mib_per_s(bytes as f64, end_ns),
        iops: if end_ns > 0.0 {
            completed as f64 / (end_ns * 1e-9)
        } else {
            0.0
        },
        latency: hist.summary(),
        energy,
        efficiency_mib_per_j: if energy.energy_above_idle_j > 0.0 {
            mib / energy.energy_above_idle_j
        } else {
            0.0
        },
        bandwidth_per_watt: if energy.avg_power_w > 0.0 {
            mib_per_s(bytes as f64, end_ns) / energy.avg_power_w
        } else {
            0.0
        },
        written_bytes: device.written_bytes,
        write_cache_full_s: device.write_cache_full_ns.map(|ns| ns * 1e-9),
    }
}

impl crate::scenario::ColumnType for Pattern {
    const DTYPE: crate::scenario::Dtype = crate::scenario::Dtype::Str;
}

impl crate::scenario::ColumnType for OpMix {
    const DTYPE: crate::scenario::Dtype = crate::scenario::Dtype::Str;
}
