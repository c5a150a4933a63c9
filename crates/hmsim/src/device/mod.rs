//! Devices: the catalog (data files with a source for every number) and the schema that
//! memory media and block devices share.

mod catalog;
mod slot;
mod spec;

pub use catalog::{builtin_files, Catalog};
pub use slot::{
    blame_slot, explain_unknown_key, fill_slots, unused_figures, Refusal, Slot, SlotKey,
    MEMORY_TIER, PMEM_UNUSED,
};
pub use spec::{
    CacheSpec, DeviceKind, DeviceSpec, DirectionSpec, EnduranceSpec, InterfaceSpec, LinkSpec,
    ParallelismSpec, PowerSpec, ThermalSpec,
};

mod block;
mod energy;
pub(crate) mod thermal;

pub use block::{BlockDevice, BlockOp};
pub use energy::EnergyReport;
