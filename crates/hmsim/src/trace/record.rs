//! One trace event as plain data.
//!
//! Every format maps onto the same small `Copy` struct so consumers never branch on the
//! source format. Optional fields use sentinels rather than `Option`: an `Option<u64>` is
//! 16 bytes, and with six optional fields the struct would double in size and slow every
//! hot loop that copies records. The accessors (`timestamp()`, `cpu()`, …) give the
//! `Option` view.

use serde::Serialize;

/// What a record does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Kind {
    /// A data read (also a block-device read).
    #[default]
    Load = 0,
    /// A data write (also a block-device write).
    Store = 1,
    /// Read-modify-write of one location (lackey `M`): one load and one store.
    Modify = 2,
    /// Instructions only, no data access: carries an instruction count in `inst_gap`
    /// (e.g. the instructions after the last access of a trace).
    Instr = 3,
    /// Cache-line flush / write-back request (VANS `C`).
    Flush = 4,
    /// Physical page allocation (kmem `mm_page_alloc`).
    Alloc = 5,
    /// Physical page free (kmem `mm_page_free`).
    Free = 6,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Load,
        Kind::Store,
        Kind::Modify,
        Kind::Instr,
        Kind::Flush,
        Kind::Alloc,
        Kind::Free,
    ];

    /// Decodes the numeric value used by the native format.
    #[inline]
    pub fn from_u8(v: u8) -> Option<Kind> {
        Kind::ALL.get(v as usize).copied()
    }

    /// Whether the record reads memory (a `Modify` both reads and writes).
    #[inline]
    pub fn is_read(self) -> bool {
        matches!(self, Kind::Load | Kind::Modify)
    }

    /// Whether the record writes memory.
    #[inline]
    pub fn is_write(self) -> bool {
        matches!(self, Kind::Store | Kind::Modify)
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Load => "load",
            Kind::Store => "store",
            Kind::Modify => "modify",
            Kind::Instr => "instr",
            Kind::Flush => "flush",
            Kind::Alloc => "alloc",
            Kind::Free => "free",
        }
    }
}

/// One trace event. 48 bytes, `Copy`.
///
/// Units: `address` and `size` in bytes (block traces: `lba * 512` and `sectors * 512`;
/// kmem events: `pfn * 4096` and `4096 << order`), `timestamp_ns` in ns, `cycle` in the
/// source's memory-controller clock. `size == 0` means the format does not say.
///
/// `inst_gap` counts the instructions retired since the previous record, including the
/// one that made this access (0 for a second access by the same instruction, and for
/// formats that carry no instruction information). The sum over a trace is its
/// instruction count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TraceRecord {
    pub address: u64,
    /// [`NO_TIME`] when absent.
    pub timestamp_ns: u64,
    /// [`NO_CYCLE`] when absent. DRAMsim: issue cycle; VANS: running total of the idle
    /// clocks stated up to and including this line.
    pub cycle: u64,
    pub inst_gap: u64,
    pub size: u32,
    /// kmem GFP flags as hmsim's own stable bits ([`crate::trace::gfp`]); 0 otherwise.
    pub gfp: u32,
    /// CPU or thread id; [`NO_ID`] when absent.
    pub cpu: u16,
    /// Block device number; [`NO_ID`] when absent.
    pub device: u16,
    pub kind: Kind,
    /// kmem allocation order (2^order pages); 0 otherwise.
    pub order: u8,
    /// kmem migratetype; [`NO_MIGRATETYPE`] when absent.
    pub migratetype: u8,
}

pub const NO_TIME: u64 = u64::MAX;
pub const NO_CYCLE: u64 = u64::MAX;
pub const NO_ID: u16 = u16::MAX;
pub const NO_MIGRATETYPE: u8 = u8::MAX;

/// Bytes per block-device sector in block traces.
pub const SECTOR_BYTES: u64 = 512;
/// Bytes per base page in kmem traces.
pub const KMEM_PAGE_BYTES: u64 = 4096;

impl TraceRecord {
    /// A record with every optional field absent.
    #[inline]
    pub const fn new(kind: Kind, address: u64, size: u32) -> Self {
        TraceRecord {
            address,
            timestamp_ns: NO_TIME,
            cycle: NO_CYCLE,
            inst_gap: 0,
            size,
            gfp: 0,
            cpu: NO_ID,
            device: NO_ID,
            kind,
            order: 0,
            migratetype: NO_MIGRATETYPE,
        }
    }

    pub fn timestamp(&self) -> Option<u64> {
        (self.timestamp_ns != NO_TIME).then_some(self.timestamp_ns)
    }

    pub fn cycle(&self) -> Option<u64> {
        (self.cycle != NO_CYCLE).then_some(self.cycle)
    }

    pub fn cpu(&self) -> Option<u16> {
        (self.cpu != NO_ID).then_some(self.cpu)
    }

    pub fn device(&self) -> Option<u16> {
        (self.device != NO_ID).then_some(self.device)
    }

    pub fn migratetype(&self) -> Option<u8> {
        (self.migratetype != NO_MIGRATETYPE).then_some(self.migratetype)
    }

    /// Page frame number of a kmem event.
    pub fn pfn(&self) -> u64 {
        self.address / KMEM_PAGE_BYTES
    }

    /// Logical block address of a block-trace record.
    pub fn lba(&self) -> u64 {
        self.address / SECTOR_BYTES
    }

    /// Sectors of a block-trace record.
    pub fn sectors(&self) -> u64 {
        self.size as u64 / SECTOR_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_record_stays_small() {
        assert_eq!(std::mem::size_of::<TraceRecord>(), 48);
    }

    #[test]
    fn trace_kind_roundtrips_through_u8() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_u8(k as u8), Some(k));
        }
        assert_eq!(Kind::from_u8(7), None);
    }
}
