//! The hmsim native trace format: a small header, then zstd-compressed blocks of
//! delta-encoded records. Byte layout in `docs/trace-format.md`; keep the two in step.
//!
//! Deltas restart at every block so a block decodes on its own (and a corrupt block cannot
//! poison the rest). Records are decoded straight from the decompressed block buffer: no
//! allocation per record or per block once the buffers have grown.

mod reader;
mod writer;

#[cfg(test)]
mod tests;

pub use reader::NativeReader;
pub use writer::NativeWriter;

use super::format::TraceKind;

pub(super) const MAGIC: &[u8; 8] = b"HMSIMTRC";
pub(super) const VERSION: u16 = 1;
const FIXED_HEADER: usize = 18;
const BLOCK_HEADER: usize = 12;
/// Writers flush a block once its raw bytes reach this; about 100k records.
pub(super) const BLOCK_TARGET: usize = 512 * 1024;
/// Zero bytes after each decompressed block.
const PAD: usize = 32;
/// Readers refuse larger blocks: a corrupt length must not allocate gigabytes.
pub(super) const MAX_BLOCK: usize = 64 * 1024 * 1024;

// Tag byte: bits 0-3 kind, then which optional parts follow.
const F_SIZE: u8 = 1 << 4;
const F_GAP: u8 = 1 << 5;
const F_EXTRA: u8 = 1 << 6;
const F_RESERVED: u8 = 1 << 7;
// Extra byte: which rarely-present fields follow, in this order.
const X_TIME: u8 = 1 << 0;
const X_CYCLE: u8 = 1 << 1;
const X_CPU: u8 = 1 << 2;
const X_DEVICE: u8 = 1 << 3;
const X_ORDER: u8 = 1 << 4;
const X_MIGRATE: u8 = 1 << 5;
const X_GFP: u8 = 1 << 6;
const X_RESERVED: u8 = 1 << 7;

/// The native file header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeHeader {
    pub kind: TraceKind,
    /// Significant address bits (informational: 48 for x86-64 virtual addresses).
    pub address_bits: u8,
    pub page_size: u32,
    /// Where the trace came from (tool, command line, original file).
    pub source: String,
}

impl Default for NativeHeader {
    fn default() -> Self {
        NativeHeader {
            kind: TraceKind::Access,
            address_bits: 64,
            page_size: 4096,
            source: String::new(),
        }
    }
}

/// Delta state, reset at each block.
#[derive(Default, Clone, Copy)]
struct Delta {
    addr: u64,
    size: u32,
    time: u64,
    cycle: u64,
}
