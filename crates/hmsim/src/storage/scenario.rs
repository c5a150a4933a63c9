//! The `storage` scenario: one device, one job, optionally a thermal run.

use serde_json::json;

use crate::config::{human_bytes, Validator};
use crate::device::thermal::{simulate, ThermalRun};
use crate::device::{BlockDevice, DeviceKind, DeviceSpec, PowerSpec};
use crate::error::RunError;
use crate::result_row;
use crate::scenario::{Column, Ctx, Experiment, Output, ResultRow, Scenario, Step};

use super::job::{run_job, JobResult, JobSpec, OpMix, Pattern};

/// The `storage` module.
pub struct Storage;

crate::params! {
    #[params(required, check)]
    /// A storage scenario: the device, the job, and optionally a thermal run.
    #[derive(Debug, Clone)]
    pub struct StorageConfig {
        pub device: DeviceRef => nested, "", "The device: a catalog `name` or a device `file`.";
        pub job: JobSpec => nested, "", "The I/O job.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub thermal: Option<ThermalConfig> = None => nested, "",
            "A thermal run after the job; needs a device with [thermal] parameters.";
    }
}

crate::params! {
    /// A catalog device by `name`, or a device file (relative to the scenario).
    #[derive(Debug, Clone)]
    pub struct DeviceRef {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub name: Option<String> = None => any, "", "A catalog device (`hmsim devices` lists them).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub file: Option<String> = None => any, "",
            "A device TOML file, relative to the scenario (docs/devices.md; it may start from a catalog device with `base = ...`). Give `name` or `file`.";
    }
}

crate::params! {
    /// The optional thermal run after the job (see docs/storage.md).
    #[derive(Debug, Clone)]
    pub struct ThermalConfig {
        pub fan: bool = false => any, "", "A fan blows over the device (forced convection): the device's `r_fan_k_per_w` applies, else `r_passive_k_per_w`.";
        pub ambient_c: f64 = 25.0 => range(-40.0, 125.0), "", "Ambient air temperature.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub initial_c: Option<f64> = None => range(-40.0, 150.0), "",
            "Device temperature when the workload starts; default: ambient.";
        pub duration_s: f64 = 900.0 => range(1e-3, 1e7), "", "Simulated time of the run.";
        pub step_s: f64 = 1.0 => range(1e-3, 60.0), "", "Time step of the simulation.";
    }
}

impl StorageConfig {
    /// Exactly one way of naming the device.
    fn check(&self, v: &mut Validator) {
        match (&self.device.name, &self.device.file) {
            (Some(_), Some(_)) | (None, None) => v.fail(
                "device",
                "give exactly one of device.name (a catalog device) or device.file (a device TOML)",
            ),
            _ => {}
        }
    }
}

result_row! {
    /// One job on one device (`results.csv`).
    pub struct StorageRow {
        device: String ["", "catalog device name"],
        technology: String ["", "media technology"],
        op: OpMix ["", "read, write or mix"],
        pattern: Pattern ["", "sequential or random"],
        queue_depth: u32 ["requests", "requests outstanding"],
        block_size_bytes: u64 ["", "request size"],
        requests: u64 ["requests", "requests completed"],
        bytes: u64 ["", "bytes moved"],
        elapsed_s: f64 ["", "simulated time of the job"],
        bandwidth_mib_s: f64 ["", "achieved bandwidth"],
        bandwidth_gb_s: f64 ["", "achieved bandwidth"],
        iops: f64 ["1/s", "requests per second"],
        latency_mean_us: f64 ["", "mean request latency"],
        latency_p50_us: f64 ["", "median request latency"],
        latency_p99_us: f64 ["", "99th percentile latency"],
        latency_p999_us: f64 ["", "99.9th percentile latency"],
        latency_max_us: f64 ["", "largest request latency"],
        utilization: f64 ["", "share of time the device was busy"],
        avg_power_w: f64 ["", "mean device power"],
        energy_j: f64 ["", "device energy"],
        energy_above_idle_j: f64 ["", "energy above idle power"],
        efficiency_mib_per_j: f64 ["", "MiB moved per joule above idle"],
        bandwidth_per_watt: f64 ["MiB/s/W", "bandwidth per watt of device power"],
        #[serde(skip_serializing_if = "Option::is_none")]
        write_cache_full_s: Option<Option<f64>> ["", "when the device's write cache (SLC) filled and writes slowed to its after-cache figures (empty: never; devices with a [write_cache])"],
        #[serde(skip_serializing_if = "Option::is_none")]
        fan: Option<bool> ["", "the thermal run has a fan"],
        #[serde(skip_serializing_if = "Option::is_none")]
        ambient_c: Option<f64> ["", "ambient temperature of the thermal run"],
        #[serde(skip_serializing_if = "Option::is_none")]
        stop_time_s: Option<Option<f64>> ["", "when throttling stopped the device (empty: never)"],
        #[serde(skip_serializing_if = "Option::is_none")]
        max_temperature_c: Option<f64> ["", "highest temperature reached"],
        #[serde(skip_serializing_if = "Option::is_none")]
        steady_state_c: Option<f64> ["", "temperature the device settles at"],
    }
}

result_row! {
    /// One step of the thermal timeline (`thermal.csv`).
    pub struct ThermalRow {
        device: String ["", "catalog device name"],
        fan: bool ["", "the device has a fan"],
        ambient_c: f64 ["", "ambient temperature"],
        time_s: f64 ["", "time since the workload started"],
        temperature_c: f64 ["", "device temperature"],
        bandwidth_mib_s: f64 ["", "bandwidth after throttling"],
        power_w: f64 ["", "device power"],
    }
}

fn resolve_device(cfg: &StorageConfig, ctx: &Ctx) -> Result<DeviceSpec, RunError> {
    let spec = if let Some(name) = &cfg.device.name {
        ctx.device(name, "device.name")?.clone()
    } else {
        let path = ctx.path(cfg.device.file.as_deref().unwrap_or_default());
        let shown = path.display().to_string();
        let text = crate::config::read_config_text(&path).map_err(|e| {
            RunError::config(
                ctx.file(),
                "device.file",
                format!("cannot read '{shown}': {e}"),
            )
        })?;
        ctx.catalog().parse_device_file(&shown, &text)?
    };
    if spec.kind != DeviceKind::Block {
        return Err(RunError::config(
            ctx.file(),
            "device.name",
            format!(
                "'{}' is a memory device; the storage module needs a block device",
                spec.name
            ),
        ));
    }
    Ok(spec)
}

impl Scenario for Storage {
    const MODULE: &'static str = "storage";
    const ABOUT: &'static str =
        "block devices under fio-like jobs: bandwidth, latency, energy, heat";
    type Config = StorageConfig;
    type Row = StorageRow;
    const DOCS: &'static str = "storage.md";
    const STUDY: &'static str = "storage";
    const SWEEP_METRICS: &'static [&'static str] =
        &["bandwidth_mib_s", "latency_p99_us", "avg_power_w"];
    const TABLES: &'static [(&'static str, &'static [Column])] =
        &[("thermal", ThermalRow::COLUMNS)];

    type Experiment<'a> = StorageRun<'a>;

    fn build<'a>(cfg: &'a StorageConfig, ctx: &Ctx<'a>) -> Result<StorageRun<'a>, RunError> {
        let device = resolve_device(cfg, ctx)?;
        if let Some(r) = cfg.job.region_bytes {
            if r > device.capacity_bytes {
                return Err(RunError::config(
                    ctx.file(),
                    "job.region_bytes",
                    format!(
                        "{r} exceeds the device capacity; allowed up to {}",
                        device.capacity_bytes
                    ),
                ));
            }
        }
        let Some(power) = device.power.clone() else {
            return Err(ctx.error(
                "device",
                format!("device '{}' has no [power] parameters", device.name),
            ));
        };
        if cfg.thermal.is_some() && device.thermal.is_none() {
            return Err(RunError::config(
                ctx.file(),
                "thermal",
                format!("device '{}' has no [thermal] parameters", device.name),
            ));
        }
        Ok(StorageRun {
            cfg,
            device,
            power,
            job: None,
            headline: serde_json::Map::new(),
        })
    }
}

/// What a job's writes owe to the device's write cache, when they do: all of them fit in
/// it (the job measured the cache, not the sustained rate), or it filled during the job
/// (the job's figures average two regimes). None without a cache or writes.
fn write_cache_warning(device: &DeviceSpec, res: &JobResult) -> Option<String> {
    let c = device.write_cache.as_ref()?;
    if res.written_bytes == 0 {
        return None;
    }
    let name = &device.name;
    let after = format!(
        "{} GB/s and {} µs a write (the device's [write_cache] after_ figures)",
        c.after_bandwidth_gb_s,
        c.after_latency_ns / 1e3
    );
    Some(match res.write_cache_full_s {
        None => format!(
            "device {name}: all {} the job wrote fit in its {} write cache (SLC), so its \
             write figures are the cache's; once the cache is full, writes run at {after}. \
             To measure sustained writes, write more than the cache: job.total_bytes > {}",
            human_bytes(res.written_bytes),
            human_bytes(c.capacity_bytes),
            c.capacity_bytes
        ),
        Some(t) => format!(
            "device {name}: its {} write cache (SLC) filled {t:.3} s into the {:.3} s job \
             (results.csv: write_cache_full_s), so the job's figures average writes at the \
             cache's speed and after it, at {after}; a job that writes less than the cache, \
             and one that writes far more, separate the two",
            human_bytes(c.capacity_bytes),
            res.elapsed_s
        ),
    })
}

/// Requests per queue slot a job completes at the least for its mean latency to be the
/// queue's steady one within ≈ 5 %: the first `queue_depth` requests go into an empty device
/// at once and wait 1, 2, …, `queue_depth` service times (a mean of half the steady wait),
/// so they pull the mean down by ≈ (queue_depth − 1) / (2 × requests).
const FILL_REQUESTS_PER_SLOT: u64 = 10;

/// The warning for a job too short for its queue: its mean latency is mostly the queue's
/// fill, or none.
fn queue_fill_warning(device: &DeviceSpec, job: &JobSpec, res: &JobResult) -> Option<String> {
    let qd = job.queue_depth as u64;
    let need = FILL_REQUESTS_PER_SLOT * qd;
    if qd <= 1 || res.requests >= need || res.iops <= 0.0 {
        return None;
    }
    let n = res.requests;
    let below = (qd.min(n) as f64 - 1.0) / (2.0 * n as f64) * 100.0;
    // Little's law: requests in the device ÷ their rate.
    let steady_us = qd as f64 / res.iops * 1e6;
    let need_s = need as f64 / res.iops;
    Some(format!(
        "device {}: the job at queue depth {qd} completed only {n} requests, the first {} issued at once into \
         the empty device, so latency_mean_us ({:.1} µs) is ≈ {below:.0} % below the full \
         queue's latency (≈ {steady_us:.1} µs: queue depth ÷ IOPS) and the job's other \
         figures lean on its start as well. To fix: run at least {need} requests \
         ({FILL_REQUESTS_PER_SLOT} per queue slot): job.duration_s ≥ {need_s:.3} or \
         job.total_bytes ≥ {}",
        device.name,
        qd.min(n),
        res.latency.mean,
        need * job.block_size_bytes
    ))
}

/// The points of a storage run: the job, then the thermal run if any.
pub enum StoragePoint {
    Job,
    Thermal,
}

/// The job on the scenario's device, and the thermal run that follows it.
pub struct StorageRun<'a> {
    cfg: &'a StorageConfig,
    device: DeviceSpec,
    power: PowerSpec,
    /// The job's result and row, once run.
    job: Option<(JobResult, StorageRow)>,
    headline: serde_json::Map<String, serde_json::Value>,
}

impl Experiment for StorageRun<'_> {
    type Point = StoragePoint;
    type Row = StorageRow;

    fn unit(&self) -> &'static str {
        "runs"
    }

    fn points(&self) -> Vec<StoragePoint> {
        let mut points = vec![StoragePoint::Job];
        if self.cfg.thermal.is_some() {
            points.push(StoragePoint::Thermal);
        }
        points
    }

    fn run_point(
        &mut self,
        point: StoragePoint,
        ctx: &Ctx,
        out: &mut Output<StorageRow>,
    ) -> Result<Step<StoragePoint>, RunError> {
        match point {
            StoragePoint::Job => self.run_job(ctx, out),
            StoragePoint::Thermal => self.run_thermal(out),
        }
        Ok(Step::Done)
    }

    fn finish(self, mut out: Output<StorageRow>) -> Result<Output<StorageRow>, RunError> {
        out.rows.extend(self.job.map(|(_, row)| row));
        out.headline = self.headline;
        Ok(out)
    }
}

impl StorageRun<'_> {
    fn run_job(&mut self, ctx: &Ctx, out: &mut Output<StorageRow>) {
        let (cfg, device) = (self.cfg, &self.device);
        let mut job_rng = ctx.rng("storage.job");
        let res = run_job(
            BlockDevice::new(device),
            &self.power,
            &cfg.job,
            device.capacity_bytes,
            &mut job_rng,
        );
        let row = StorageRow {
            device: device.name.clone(),
            technology: device.technology.clone(),
            op: cfg.job.op,
            pattern: cfg.job.pattern,
            queue_depth: cfg.job.queue_depth,
            block_size_bytes: cfg.job.block_size_bytes,
            requests: res.requests,
            bytes: res.bytes,
            elapsed_s: res.elapsed_s,
            bandwidth_mib_s: res.bandwidth_mib_s,
            bandwidth_gb_s: res.bandwidth_gb_s,
            iops: res.iops,
            latency_mean_us: res.latency.mean,
            latency_p50_us: res.latency.p50,
            latency_p99_us: res.latency.p99,
            latency_p999_us: res.latency.p999,
            latency_max_us: res.latency.max,
            utilization: res.energy.utilization,
            avg_power_w: res.energy.avg_power_w,
            energy_j: res.energy.energy_j,
            energy_above_idle_j: res.energy.energy_above_idle_j,
            efficiency_mib_per_j: res.efficiency_mib_per_j,
            bandwidth_per_watt: res.bandwidth_per_watt,
            write_cache_full_s: device.write_cache.as_ref().map(|_| res.write_cache_full_s),
            fan: None,
            ambient_c: None,
            stop_time_s: None,
            max_temperature_c: None,
            steady_state_c: None,
        };
        for (k, v) in [
            ("bandwidth_mib_s", json!(row.bandwidth_mib_s)),
            ("iops", json!(row.iops)),
            ("latency_mean_us", json!(row.latency_mean_us)),
            ("latency_p99_us", json!(row.latency_p99_us)),
            ("energy_j", json!(row.energy_j)),
            ("efficiency_mib_per_j", json!(row.efficiency_mib_per_j)),
        ] {
            self.headline.insert(k.to_string(), v);
        }
        out.warnings.extend(write_cache_warning(device, &res));
        out.warnings
            .extend(queue_fill_warning(device, &cfg.job, &res));
        self.job = Some((res, row));
    }

    /// The thermal run at the job's power (`build` checked that the device has a thermal
    /// model).
    fn run_thermal(&mut self, out: &mut Output<StorageRow>) {
        let (Some(tc), Some(tspec), Some((res, row))) = (
            self.cfg.thermal.as_ref(),
            self.device.thermal.as_ref(),
            self.job.as_mut(),
        ) else {
            return;
        };
        let run = ThermalRun {
            ambient_c: tc.ambient_c,
            initial_c: tc.initial_c.unwrap_or(tc.ambient_c),
            fan: tc.fan,
            duration_s: tc.duration_s,
            step_s: tc.step_s,
            idle_w: self.power.idle_w,
            active_w: res.energy.avg_power_w,
        };
        let th = simulate(tspec, &run);
        let rows: Vec<ThermalRow> = th
            .samples
            .iter()
            .map(|s| ThermalRow {
                device: self.device.name.clone(),
                fan: tc.fan,
                ambient_c: tc.ambient_c,
                time_s: s.time_s,
                temperature_c: s.temperature_c,
                bandwidth_mib_s: res.bandwidth_mib_s * s.bandwidth_fraction,
                power_w: s.power_w,
            })
            .collect();
        out.table("thermal", &rows);
        row.fan = Some(tc.fan);
        row.ambient_c = Some(tc.ambient_c);
        row.stop_time_s = Some(th.stop_time_s);
        row.max_temperature_c = Some(th.max_temperature_c);
        row.steady_state_c = Some(th.steady_state_c);
        self.headline
            .insert("stop_time_s".into(), json!(th.stop_time_s));
        self.headline
            .insert("max_temperature_c".into(), json!(th.max_temperature_c));
    }
}
