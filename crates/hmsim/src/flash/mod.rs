//! NAND flash behind a page-mapping FTL (docs/hybrid.md): blocks and pages on
//! channels and dies, over-provisioning, a free-block pool, garbage collection behind the
//! [`GcPolicy`] trait (greedy, cost-benefit, randomized greedy), write amplification and
//! erase counts. Reusable as the inside of an SSD; the `hybrid` module puts it under a
//! DRAM cache.
//!
//! The FTL is functional (which page lives where) and emits the [`FlashOp`]s each request
//! needs; [`Units`] turns an op list into time on busy dies and channels.

mod ftl;
mod gc;
mod nand;
mod timing;

#[cfg(test)]
mod tests;

pub use ftl::{Ftl, FtlStats, Geometry, NONE};
pub use gc::{build_gc, GcPolicy, GC_POLICIES};
pub use nand::{preset, NandTiming, NAND_PRESETS};
pub use timing::{FlashOp, OpKind, Units};
