//! The storage benchmark: fio / fair-lio-like jobs against a block-device model, with
//! energy and an RC thermal timeline. Study: `storage` (spec 01-devices.md).

mod job;
mod scenario;

pub use job::{run_job, JobResult, JobSpec, OpMix, Pattern};
pub use scenario::{Storage, StorageConfig, StorageRow, ThermalRow};
