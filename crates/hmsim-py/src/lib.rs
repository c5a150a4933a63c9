//! Thin PyO3 bindings: strings and JSON across the boundary, no models here.

mod progress;

use std::path::{Path, PathBuf};
use std::str::FromStr;

use hmsim::error::{ErrorKind, RunError};
use hmsim::scenario::{NoProgress, Progress};
use hmsim::trace::{self, Format};

use pyo3::exceptions::PyException;
use pyo3::prelude::*;

/// The Python exception for a core error: `hmsim.errors.from_kind` picks the class by the
/// error's kind (`ConfigError`, `InputDataError`, `SimulationError`, all `HmsimError`s), so
/// the classes are defined once, on the Python side.
fn run_err(e: RunError) -> PyErr {
    Python::attach(|py| {
        let made = py
            .import("hmsim.errors")
            .and_then(|m| m.getattr("from_kind"))
            .and_then(|f| f.call1((e.kind.name(), &e.file, &e.message, &e.key, e.line)));
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(err) => err,
        }
    })
}

/// A trace that cannot be read: an input-data error.
fn input_err(e: trace::TraceError) -> PyErr {
    run_err(e.into())
}

/// An error of a conversion to `dst`: about the output (it exists as a folder, the target
/// format cannot express the records) a configuration error, else about the input trace.
fn convert_err(dst: &str) -> impl Fn(trace::TraceError) -> PyErr + '_ {
    move |e| {
        if e.file() == dst {
            run_err(RunError::from(e).with_kind(ErrorKind::Config))
        } else {
            input_err(e)
        }
    }
}

/// The receiver of long work's progress: a Python `hmsim.progress.CoreProgress`, or nobody.
fn receiver(progress: Option<Py<PyAny>>) -> Box<dyn Progress + Send> {
    match progress {
        Some(p) => Box::new(progress::PyProgress::new(p)),
        None => Box::new(NoProgress),
    }
}

fn paths(device_paths: Vec<String>) -> Vec<PathBuf> {
    device_paths.into_iter().map(PathBuf::from).collect()
}

/// Run one scenario; returns the run output as JSON text and the host CPU seconds the run
/// took (`hmsim::cputime`: this thread's and its helper threads').
#[pyfunction]
#[pyo3(signature = (text, file, overrides=Vec::new(), device_paths=Vec::new(), progress=None))]
fn run_scenario(
    py: Python<'_>,
    text: String,
    file: String,
    overrides: Vec<(String, String)>,
    device_paths: Vec<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, f64)> {
    let dirs = paths(device_paths);
    let progress = receiver(progress);
    // The output is written as JSON without the GIL too: a tiering run's timeline is
    // ≈ 0.9 MB of text, which other threads' Python need not wait for.
    let (json, cpu_s) = py
        .detach(move || {
            hmsim::registry::run_scenario_timed(&text, &file, &overrides, &dirs, progress.as_ref())
                .map(|run| (serde_json::to_string(&run.output), run.cpu_s))
        })
        .map_err(run_err)?;
    let text = json.map_err(|e| PyException::new_err(e.to_string()))?;
    Ok((text, cpu_s))
}

/// The configuration the run of each (text, file, overrides) would use (`resolved_config`),
/// as JSON text, worked out without running it (the device catalog read once); None for a
/// scenario the core refuses (its run reports why).
#[pyfunction]
#[pyo3(signature = (scenarios, device_paths=Vec::new()))]
fn resolve_scenarios(
    py: Python<'_>,
    scenarios: Vec<hmsim::registry::ScenarioSpelling>,
    device_paths: Vec<String>,
) -> PyResult<Vec<Option<String>>> {
    let dirs = paths(device_paths);
    let resolved = py
        .detach(move || hmsim::registry::resolve_scenarios(&scenarios, &dirs))
        .map_err(run_err)?;
    Ok(resolved
        .into_iter()
        .map(|r| r.ok().map(|v| v.to_string()))
        .collect())
}

/// `text` with `--set`-style overrides applied (the same rules as a run's).
#[pyfunction]
fn apply_overrides(
    text: String,
    file: String,
    overrides: Vec<(String, String)>,
) -> PyResult<String> {
    hmsim::registry::apply_overrides(&text, &file, &overrides).map_err(run_err)
}

/// The device catalog as JSON: a list of {"device": <resolved device>, "file": <its file>}.
#[pyfunction]
#[pyo3(signature = (device_paths=Vec::new()))]
fn devices(device_paths: Vec<String>) -> PyResult<String> {
    let catalog = hmsim::device::Catalog::load(&paths(device_paths)).map_err(run_err)?;
    let list: Vec<serde_json::Value> = catalog
        .iter()
        .map(|(d, f)| serde_json::json!({"device": d, "file": f}))
        .collect();
    serde_json::to_string(&list).map_err(|e| PyException::new_err(e.to_string()))
}

/// Simulation-speed benchmarks as JSON.
#[pyfunction]
#[pyo3(name = "bench", signature = (module=None, scale=1.0))]
fn run_bench(py: Python<'_>, module: Option<String>, scale: f64) -> PyResult<String> {
    let res = py
        .detach(move || hmsim::registry::run_benchmarks(module.as_deref(), scale))
        .map_err(run_err)?;
    to_json(&res)
}

/// The host-speed gauge (`hmsim::host_gauge`) as JSON, timed with the GIL released.
#[pyfunction]
fn host_gauge(py: Python<'_>) -> PyResult<String> {
    to_json(&py.detach(hmsim::host_gauge::measure))
}

fn format_arg(name: Option<String>, flag: &str) -> PyResult<Option<Format>> {
    name.map(|n| Format::from_str(&n).map_err(|m| run_err(RunError::new(flag, "", m))))
        .transpose()
}

fn to_json<T: serde::Serialize>(v: &T) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| PyException::new_err(e.to_string()))
}

/// `trace info`: a summary of the trace at `path` as JSON.
#[pyfunction]
#[pyo3(signature = (path, format=None, top=10))]
fn trace_info(
    py: Python<'_>,
    path: String,
    format: Option<String>,
    top: usize,
) -> PyResult<String> {
    let fmt = format_arg(format, "--format")?;
    let info = py
        .detach(move || trace::trace_info(Path::new(&path), fmt, top))
        .map_err(input_err)?;
    to_json(&info)
}

/// A flag that stops a running conversion (`cancel()`), for the thread that sees a signal.
#[pyclass(name = "Cancel", frozen)]
struct PyCancel(trace::Cancel);

#[pymethods]
impl PyCancel {
    #[new]
    fn new() -> Self {
        PyCancel(trace::Cancel::default())
    }

    fn cancel(&self) {
        self.0.cancel();
    }
}

/// `trace convert`: `src` to `dst` in format `to`. `max_output_bytes`: `None` the default
/// limit, 0 none.
#[pyfunction]
#[pyo3(signature = (src, dst, to="native".to_string(), format=None, synthetic_cycles=None, progress=None, max_output_bytes=None, cancel=None))]
#[allow(clippy::too_many_arguments)]
fn trace_convert(
    py: Python<'_>,
    src: String,
    dst: String,
    to: String,
    format: Option<String>,
    synthetic_cycles: Option<u64>,
    progress: Option<Py<PyAny>>,
    max_output_bytes: Option<u64>,
    cancel: Option<PyRef<'_, PyCancel>>,
) -> PyResult<String> {
    let from = format_arg(format, "--from")?;
    let to = format_arg(Some(to), "--to")?.expect("given");
    let options = trace::ConvertOptions {
        synthetic_cycle_step: synthetic_cycles,
        max_output_bytes,
        cancel: cancel.map(|c| c.0.clone()).unwrap_or_default(),
    };
    let progress = receiver(progress);
    let out = dst.clone();
    let rep = py
        .detach(move || {
            let (src, dst) = (Path::new(&src), Path::new(&dst));
            trace::convert_watched(src, dst, to, from, options, progress.as_ref())
        })
        .map_err(convert_err(&out))?;
    to_json(&rep)
}

/// Read a trace of `format` as it arrives on `src` (a FIFO from a running tracer) and write
/// it to `dst` in the native format, optionally reduced to page-level events.
#[pyfunction]
#[pyo3(signature = (src, dst, format, page_level=false, source=String::new(), progress=None))]
fn trace_record_stream(
    py: Python<'_>,
    src: String,
    dst: String,
    format: String,
    page_level: bool,
    source: String,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let fmt = format_arg(Some(format), "--kind")?;
    let progress = receiver(progress);
    let out_name = dst.clone();
    let rep = py
        .detach(move || -> Result<trace::ConvertReport, trace::TraceError> {
            let file = std::fs::File::open(&src).map_err(|e| {
                trace::TraceError::new(&src, trace::Location::File, format!("cannot open: {e}"))
            })?;
            // A FIFO's size is 0: the bar then counts bytes with no total.
            let total_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
            let mut reader = trace::open_reader_watched(
                Box::new(file),
                &source,
                fmt,
                total_bytes,
                progress.as_ref(),
            )?;
            let out = Path::new(&dst);
            if page_level {
                let mut reduced = trace::PageLevel::new(reader, 4096);
                trace::convert_reader(
                    &mut reduced,
                    out,
                    Format::Native,
                    &format!("{source} (page level)"),
                )
            } else {
                trace::convert_reader(&mut reader, out, Format::Native, &source)
            }
        })
        .map_err(convert_err(&out_name))?;
    to_json(&rep)
}

/// `hmsim lifetime`: the `pmem` scenario that replays `path` (in `format`) on `device` with
/// the replay `options` (a JSON object), as TOML text for `run_scenario`.
#[pyfunction]
#[pyo3(signature = (path, device, options="{}".to_string(), format=None))]
fn lifetime_scenario(
    path: String,
    device: String,
    options: String,
    format: Option<String>,
) -> PyResult<String> {
    hmsim::pmem::lifetime_scenario(&path, &device, &options, format.as_deref()).map_err(run_err)
}

/// The tiering study's reference tiers (local and remote socket) as JSON, for studies that
/// vary one parameter of them.
#[pyfunction]
fn tier_reference_tiers() -> PyResult<String> {
    to_json(&hmsim::tier::params::reference_tiers())
}

/// A tiering policy written in Python: called once per quantum (never per access) with the
/// quantum's samples and the page table as raw little-endian bytes (the Python side wraps
/// them as numpy views) and the tier counters; returns (page, tier) migrations.
struct HookPolicy {
    hook: Py<PyAny>,
    /// The first Python error, shared with the caller so it can be raised after the run.
    error: std::rc::Rc<std::cell::RefCell<Option<PyErr>>>,
}

impl hmsim::tier::TieringPolicy for HookPolicy {
    fn name(&self) -> &'static str {
        "python"
    }

    fn quantum(&mut self, obs: &hmsim::tier::Observation) -> Vec<hmsim::tier::Migration> {
        if self.error.borrow().is_some() {
            return Vec::new();
        }
        Python::attach(|py| {
            let pt = obs.pages;
            let samples: Vec<u8> = obs.samples.iter().flat_map(|s| s.to_le_bytes()).collect();
            let tiers: Vec<u8> = (0..pt.pages()).map(|p| pt.tier(p) as u8).collect();
            let latency: Vec<f64> = obs
                .latency_ns
                .iter()
                .map(|l| l.unwrap_or(f64::NAN))
                .collect();
            let free: Vec<u64> = (0..pt.tiers()).map(|t| pt.free_pages(t)).collect();
            let args = (
                obs.time_s,
                pyo3::types::PyBytes::new(py, &samples),
                pyo3::types::PyBytes::new(py, &tiers),
                latency,
                obs.app_arrivals_per_ns.to_vec(),
                free,
                obs.migrate_budget_bytes,
                pt.page_bytes,
            );
            match self
                .hook
                .bind(py)
                .call1(args)
                .and_then(|r| r.extract::<Vec<(u64, usize)>>())
            {
                Ok(v) => v
                    .into_iter()
                    .map(|(page, to)| hmsim::tier::Migration { page, to })
                    .collect(),
                Err(e) => {
                    *self.error.borrow_mut() = Some(e);
                    Vec::new()
                }
            }
        })
    }
}

/// Run a tiering scenario with a Python policy hook `hook(time_s, samples, page_tier,
/// latency_ns, app_arrivals_per_ns, free_pages, migrate_budget_bytes, page_bytes)`, devices
/// from the built-in catalog plus `device_paths` (as `run_scenario`); returns the run output
/// as JSON text. A Python error in the hook ends the run and is raised.
#[pyfunction]
#[pyo3(signature = (text, file, name, hook, device_paths=Vec::new()))]
fn tier_run_with_hook(
    text: String,
    file: String,
    name: String,
    hook: Py<PyAny>,
    device_paths: Vec<String>,
) -> PyResult<String> {
    let error = std::rc::Rc::new(std::cell::RefCell::new(None));
    let shared = error.clone();
    let external = hmsim::tier::ExternalPolicy {
        name,
        make: Box::new(move || -> Box<dyn hmsim::tier::TieringPolicy> {
            Box::new(HookPolicy {
                hook: Python::attach(|py| hook.clone_ref(py)),
                error: shared.clone(),
            })
        }),
    };
    // Through the registry like every run: a scenario of another module refuses the hook.
    let parts = hmsim::scenario::Parts::new().with(hmsim::tier::EXTERNAL_POLICY, external);
    let out = hmsim::registry::run_scenario_with_parts(
        &text,
        &file,
        &[],
        &paths(device_paths),
        &hmsim::scenario::NoProgress,
        &parts,
    )
    .map_err(run_err)?;
    if let Some(e) = error.borrow_mut().take() {
        return Err(e);
    }
    to_json(&out)
}

/// The declared result columns of `module`'s `results.csv` as JSON (a list of {name, unit,
/// dtype, nullable, measured, doc}), or `None` for a module that declares none.
#[pyfunction]
fn columns(py: Python<'_>, module: String) -> PyResult<Py<PyAny>> {
    match hmsim::registry::columns(&module) {
        Some(cols) => {
            let json = py.import("json")?;
            Ok(json.call_method1("loads", (to_json(&cols)?,))?.unbind())
        }
        None => Ok(py.None()),
    }
}

/// Every module's output tables (`results` first) with their declared columns, as JSON:
/// a list of {module, about, tables: [{name, columns: [{name, unit, dtype, nullable,
/// measured, doc}]}]}.
#[pyfunction]
fn schema() -> PyResult<String> {
    to_json(&hmsim::registry::schema())
}

/// The one vocabulary of units as JSON pairs `[suffix, unit]`: a key or column named
/// `..._<suffix>` is in that unit.
#[pyfunction]
fn unit_suffixes() -> PyResult<String> {
    to_json(&hmsim::units::UNIT_SUFFIXES)
}

/// Names of the modules a scenario can name in `module = "..."`.
#[pyfunction]
fn module_names() -> Vec<&'static str> {
    hmsim::registry::module_names()
}

/// (module, key) for each module whose runs along `key` are the starts of longer runs.
#[pyfunction]
fn prefix_keys() -> Vec<(&'static str, &'static str)> {
    hmsim::registry::MODULES
        .iter()
        .filter_map(|e| Some((e.name, e.make.prefix_key?)))
        .collect()
}

/// (module, keys) for each module with keys that only say where a run stops (a chain
/// groups its runs regardless of them).
#[pyfunction]
fn stop_keys() -> Vec<(&'static str, Vec<&'static str>)> {
    keys_by_module(|m| m.stop_keys)
}

/// (module, keys) for each module whose `keys_of` are not empty.
fn keys_by_module(
    keys_of: fn(&hmsim::registry::Module) -> &'static [&'static str],
) -> Vec<(&'static str, Vec<&'static str>)> {
    hmsim::registry::MODULES
        .iter()
        .filter(|e| !keys_of(&e.make).is_empty())
        .map(|e| (e.name, keys_of(&e.make).to_vec()))
        .collect()
}

/// The lengths (values of the module's prefix key) at which a run of the resolved scenario
/// `resolved` (JSON) may stop; empty when its module has none or the JSON does not say.
#[pyfunction]
fn stop_lengths(resolved: &str) -> Vec<f64> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(resolved) else {
        return Vec::new();
    };
    let module = v.get("module").and_then(|m| m.as_str()).unwrap_or_default();
    hmsim::registry::MODULES
        .iter()
        .find(|e| e.name == module)
        .map_or_else(Vec::new, |e| (e.make.stop_lengths)(&v))
}

/// (module, keys) for each module whose runs differing only in `keys` start the same (a
/// start the module keeps per thread).
#[pyfunction]
fn same_start_keys() -> Vec<(&'static str, Vec<&'static str>)> {
    keys_by_module(|m| m.same_start_keys)
}

/// Run `runs` ((text, file, overrides) each) in order, sharing kept results at `keep_s`
/// seconds (`hmsim::registry::run_scenario_chain`); returns each run's output as JSON
/// text with the host wall and CPU seconds it took.
#[pyfunction]
#[pyo3(signature = (runs, keep_s, device_paths=Vec::new()))]
fn run_scenario_chain(
    py: Python<'_>,
    runs: Vec<hmsim::registry::ScenarioSpelling>,
    keep_s: Vec<f64>,
    device_paths: Vec<String>,
) -> PyResult<Vec<(String, f64, f64)>> {
    let dirs = paths(device_paths);
    // As `run_scenario`: the outputs are written as JSON without the GIL.
    let outs = py
        .detach(move || {
            hmsim::registry::run_scenario_chain(&runs, &keep_s, &dirs).map(|outs| {
                outs.into_iter()
                    .map(|run| (serde_json::to_string(&run.output), run.wall_s, run.cpu_s))
                    .collect::<Vec<_>>()
            })
        })
        .map_err(run_err)?;
    outs.into_iter()
        .map(|(json, wall_s, cpu_s)| {
            let text = json.map_err(|e| PyException::new_err(e.to_string()))?;
            Ok((text, wall_s, cpu_s))
        })
        .collect()
}

/// The persistent indexes of `pm-index` as JSON: name, family, Tonic switches, key types.
#[pyfunction]
fn pm_indexes() -> PyResult<String> {
    let list: Vec<_> = hmsim::pmindex::registry()
        .into_iter()
        .map(|s| {
            serde_json::json!({
                "name": s.name,
                "family": s.family,
                "optimizations": s.optimizations,
                "key_types": s.key_types.iter().map(|k| k.name()).collect::<Vec<_>>(),
            })
        })
        .collect();
    to_json(&list)
}

/// How this extension was compiled: `profile-guided` when `scripts/build_core.sh` built it
/// with a training profile (it sets `HMSIM_BUILD`), else `plain`. Speed, never results,
/// depends on it, so timed outputs name it beside the host.
const BUILD: &str = match option_env!("HMSIM_BUILD") {
    Some(b) => b,
    None => "plain",
};

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", hmsim::VERSION)?;
    m.add("BUILD", BUILD)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario_chain, m)?)?;
    m.add_function(wrap_pyfunction!(prefix_keys, m)?)?;
    m.add_function(wrap_pyfunction!(same_start_keys, m)?)?;
    m.add_function(wrap_pyfunction!(stop_keys, m)?)?;
    m.add_function(wrap_pyfunction!(stop_lengths, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(apply_overrides, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(host_gauge, m)?)?;
    m.add_function(wrap_pyfunction!(module_names, m)?)?;
    m.add_function(wrap_pyfunction!(columns, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(unit_suffixes, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(trace_convert, m)?)?;
    m.add_class::<PyCancel>()?;
    m.add_function(wrap_pyfunction!(trace_record_stream, m)?)?;
    m.add_function(wrap_pyfunction!(lifetime_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(tier_reference_tiers, m)?)?;
    m.add_function(wrap_pyfunction!(pm_indexes, m)?)?;
    m.add_function(wrap_pyfunction!(tier_run_with_hook, m)?)?;
    Ok(())
}
