//! Thin PyO3 bindings: strings and JSON across the boundary, no models here.

use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    hmsim,
    ConfigError,
    PyException,
    "Bad input: file, line, key path and what is allowed."
);

fn config_err(e: hmsim::ConfigError) -> PyErr {
    let err = ConfigError::new_err(e.to_string());
    Python::attach(|py| {
        let v = err.value(py);
        let _ = v.setattr("file", e.file.clone());
        let _ = v.setattr("line", e.line);
        let _ = v.setattr("key", e.key.clone());
        let _ = v.setattr("detail", e.message.clone());
    });
    err
}

fn paths(device_paths: Vec<String>) -> Vec<PathBuf> {
    device_paths.into_iter().map(PathBuf::from).collect()
}

/// Run one scenario; returns the run output as JSON text.
#[pyfunction]
#[pyo3(signature = (text, file, overrides=Vec::new(), device_paths=Vec::new()))]
fn run_scenario(
    py: Python<'_>,
    text: String,
    file: String,
    overrides: Vec<(String, String)>,
    device_paths: Vec<String>,
) -> PyResult<String> {
    let dirs = paths(device_paths);
    let out = py
        .detach(move || hmsim::run_scenario(&text, &file, &overrides, &dirs))
        .map_err(config_err)?;
    serde_json::to_string(&out).map_err(|e| PyException::new_err(e.to_string()))
}

/// The device catalog as JSON: a list of {"device": spec, "file": source}.
#[pyfunction]
#[pyo3(signature = (device_paths=Vec::new()))]
fn devices(device_paths: Vec<String>) -> PyResult<String> {
    let catalog = hmsim::device::Catalog::load(&paths(device_paths)).map_err(config_err)?;
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
    let res = py.detach(move || hmsim::bench::run(module.as_deref(), scale));
    serde_json::to_string(&res).map_err(|e| PyException::new_err(e.to_string()))
}

/// Names of the modules a scenario can name in `module = "..."`.
#[pyfunction]
fn module_names() -> Vec<&'static str> {
    hmsim::registry::module_names()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", hmsim::VERSION)?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(module_names, m)?)?;
    Ok(())
}
