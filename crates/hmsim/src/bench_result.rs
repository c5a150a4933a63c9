//! What one simulation-speed benchmark measured: the shape every benchmark body returns,
//! apart from `bench.rs` (which lists the bodies of every module) so that a module's own
//! benchmarks can return it without importing the list.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    pub module: String,
    pub case: String,
    /// What is counted (`requests`, `accesses`, ...).
    pub unit: String,
    pub count: u64,
    pub wall_s: f64,
    pub per_wall_second: f64,
}
