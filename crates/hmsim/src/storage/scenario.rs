//! The `storage` scenario: one device, one job, optionally a thermal run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::config::{parse_toml, Validate, Validator};
use crate::device::thermal::{simulate, ThermalRun};
use crate::device::{BlockDevice, Catalog, DeviceKind, DeviceSpec};
use crate::error::ConfigError;
use crate::registry::RunOutput;
use crate::rng;

use super::job::{run_job, JobSpec};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorageScenario {
    pub module: String,
    #[serde(default)]
    pub seed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub device: DeviceRef,
    pub job: JobSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thermal: Option<ThermalConfig>,
}

/// A catalog device by `name`, or a device file (relative to the scenario).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

crate::params! {
    /// The optional thermal run after the job (see docs/storage.md).
    #[derive(Debug, Clone)]
    pub struct ThermalConfig {
        pub fan: bool = false => any, "", "A fan blows over the device (forced convection).";
        pub ambient_c: f64 = 25.0 => range(-40.0, 125.0), "°C", "Ambient air temperature.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub initial_c: Option<f64> = None => range(-40.0, 150.0), "°C",
            "Device temperature when the workload starts; default: ambient.";
        pub duration_s: f64 = 900.0 => range(1e-3, 1e7), "s", "Simulated time of the run.";
        pub step_s: f64 = 1.0 => range(1e-3, 60.0), "s", "Time step of the simulation.";
    }
}

impl Validate for StorageScenario {
    fn validate(&self, v: &mut Validator) {
        match (&self.device.name, &self.device.file) {
            (Some(_), Some(_)) | (None, None) => v.fail(
                "device",
                "give exactly one of device.name (a catalog device) or device.file (a device TOML)",
            ),
            _ => {}
        }
        v.nested("job", &self.job);
        if let Some(t) = &self.thermal {
            v.nested("thermal", t);
        }
    }
}

fn resolve_device(
    sc: &StorageScenario,
    file: &str,
    catalog: &Catalog,
) -> Result<DeviceSpec, ConfigError> {
    let spec = if let Some(name) = &sc.device.name {
        catalog.require(name, file, "device.name")?.clone()
    } else {
        let rel = sc.device.file.as_deref().unwrap_or_default();
        let base: PathBuf = Path::new(file)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let path = base.join(rel);
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(&path).map_err(|e| {
            ConfigError::new(file, "device.file", format!("cannot read '{shown}': {e}"))
        })?;
        catalog.parse_device_file(&shown, &text)?
    };
    if spec.kind != DeviceKind::Block {
        return Err(ConfigError::new(
            file,
            "device.name",
            format!(
                "'{}' is a memory device; the storage module needs a block device",
                spec.name
            ),
        ));
    }
    Ok(spec)
}

/// Run a storage scenario given as TOML text (overrides already applied).
pub fn run(text: &str, file: &str, catalog: &Catalog) -> Result<RunOutput, ConfigError> {
    let sc: StorageScenario = parse_toml(text, file)?;
    Validator::check(file, text, &sc)?;
    let device = resolve_device(&sc, file, catalog)?;
    if let Some(r) = sc.job.region_bytes {
        if r > device.capacity_bytes {
            return Err(ConfigError::new(
                file,
                "job.region_bytes",
                format!(
                    "{r} exceeds the device capacity; allowed up to {}",
                    device.capacity_bytes
                ),
            ));
        }
    }
    let power = device
        .power
        .clone()
        .expect("validated: block devices have [power]");
    let mut job_rng = rng::stream(sc.seed, "storage.job");
    let res = run_job(
        BlockDevice::new(&device),
        &power,
        &sc.job,
        device.capacity_bytes,
        &mut job_rng,
    );

    let op = serde_json::to_value(sc.job.op).unwrap_or(Value::Null);
    let pattern = serde_json::to_value(sc.job.pattern).unwrap_or(Value::Null);
    let mut row = Map::new();
    for (k, v) in [
        ("device", json!(device.name)),
        ("technology", json!(device.technology)),
        ("op", op),
        ("pattern", pattern),
        ("queue_depth", json!(sc.job.queue_depth)),
        ("block_size_bytes", json!(sc.job.block_size_bytes)),
        ("requests", json!(res.requests)),
        ("bytes", json!(res.bytes)),
        ("elapsed_s", json!(res.elapsed_s)),
        ("bandwidth_mib_s", json!(res.bandwidth_mib_s)),
        ("bandwidth_gb_s", json!(res.bandwidth_gb_s)),
        ("iops", json!(res.iops)),
        ("latency_mean_us", json!(res.latency.mean_us)),
        ("latency_p50_us", json!(res.latency.p50_us)),
        ("latency_p99_us", json!(res.latency.p99_us)),
        ("latency_p999_us", json!(res.latency.p999_us)),
        ("latency_max_us", json!(res.latency.max_us)),
        ("utilization", json!(res.energy.utilization)),
        ("avg_power_w", json!(res.energy.avg_power_w)),
        ("energy_j", json!(res.energy.energy_j)),
        ("energy_above_idle_j", json!(res.energy.energy_above_idle_j)),
        ("efficiency_mib_per_j", json!(res.efficiency_mib_per_j)),
        ("bandwidth_per_watt", json!(res.bandwidth_per_watt)),
    ] {
        row.insert(k.to_string(), v);
    }
    let mut headline = Map::new();
    for k in [
        "bandwidth_mib_s",
        "iops",
        "latency_mean_us",
        "latency_p99_us",
        "energy_j",
        "efficiency_mib_per_j",
    ] {
        headline.insert(k.to_string(), row[k].clone());
    }

    let mut out = RunOutput::new(
        "storage",
        sc.seed,
        serde_json::to_value(&sc).unwrap_or(Value::Null),
    );
    if let Some(tc) = &sc.thermal {
        let Some(tspec) = device.thermal.as_ref() else {
            return Err(ConfigError::new(
                file,
                "thermal",
                format!("device '{}' has no [thermal] parameters", device.name),
            ));
        };
        let run = ThermalRun {
            ambient_c: tc.ambient_c,
            initial_c: tc.initial_c.unwrap_or(tc.ambient_c),
            fan: tc.fan,
            duration_s: tc.duration_s,
            step_s: tc.step_s,
            idle_w: power.idle_w,
            active_w: res.energy.avg_power_w,
        };
        let th = simulate(tspec, &run);
        let rows = th
            .samples
            .iter()
            .map(|s| {
                let mut m = Map::new();
                m.insert("device".into(), json!(device.name));
                m.insert("fan".into(), json!(tc.fan));
                m.insert("ambient_c".into(), json!(tc.ambient_c));
                m.insert("time_s".into(), json!(s.time_s));
                m.insert("temperature_c".into(), json!(s.temperature_c));
                m.insert(
                    "bandwidth_mib_s".into(),
                    json!(res.bandwidth_mib_s * s.bandwidth_fraction),
                );
                m.insert("power_w".into(), json!(s.power_w));
                m
            })
            .collect();
        out.tables.insert("thermal".into(), rows);
        row.insert("fan".into(), json!(tc.fan));
        row.insert("ambient_c".into(), json!(tc.ambient_c));
        row.insert("stop_time_s".into(), json!(th.stop_time_s));
        row.insert("max_temperature_c".into(), json!(th.max_temperature_c));
        row.insert("steady_state_c".into(), json!(th.steady_state_c));
        headline.insert("stop_time_s".into(), json!(th.stop_time_s));
        headline.insert("max_temperature_c".into(), json!(th.max_temperature_c));
    }
    out.rows.push(row);
    out.headline = headline;
    Ok(out)
}
