//! The trace formats hmsim reads, by name.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

/// A trace format. Names (`Display`/`FromStr`) are what `--format` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Valgrind lackey `--trace-mem=yes`.
    Lackey,
    /// Intel Pin pinatrace.
    Pinatrace,
    /// DRAMsim2 / DRAMsim3 `0x<addr> READ|WRITE <cycle>`.
    Dramsim,
    /// Ramulator 1 dram mode `0x<addr> R|W`.
    RamulatorDram,
    /// Ramulator 1 cpu mode `<n-inst> <read-addr> [<writeback-addr>]`.
    RamulatorCpu,
    /// Ramulator 2 LoadStoreTrace `LD|ST <addr>`.
    Ramulator2,
    /// VANS `0x<addr> R|W|C[:<idle clk>]`.
    Vans,
    /// MQSim ASCII block trace: `<time ns> <dev> <lba> <sectors> <0=W|1=R>`.
    Mqsim,
    /// DiskSim ASCII block trace: `<time ms> <dev> <lba> <sectors> <flags, bit 0 = read>`.
    Disksim,
    /// Linux kmem tracepoints as ftrace text.
    Kmem,
    /// ChampSim binary `input_instr` records.
    Champsim,
    /// hmsim native binary format.
    Native,
}

/// What a trace describes; stored in the native header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum TraceKind {
    /// CPU memory accesses (virtual or physical addresses).
    Access = 0,
    /// Physical page allocation events.
    PageEvents = 1,
    /// Block-device requests.
    Block = 2,
}

impl TraceKind {
    pub fn from_u8(v: u8) -> Option<TraceKind> {
        match v {
            0 => Some(TraceKind::Access),
            1 => Some(TraceKind::PageEvents),
            2 => Some(TraceKind::Block),
            _ => None,
        }
    }
}

impl Format {
    pub const ALL: [Format; 12] = [
        Format::Lackey,
        Format::Pinatrace,
        Format::Dramsim,
        Format::RamulatorDram,
        Format::RamulatorCpu,
        Format::Ramulator2,
        Format::Vans,
        Format::Mqsim,
        Format::Disksim,
        Format::Kmem,
        Format::Champsim,
        Format::Native,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Lackey => "lackey",
            Format::Pinatrace => "pinatrace",
            Format::Dramsim => "dramsim",
            Format::RamulatorDram => "ramulator-dram",
            Format::RamulatorCpu => "ramulator-cpu",
            Format::Ramulator2 => "ramulator2",
            Format::Vans => "vans",
            Format::Mqsim => "mqsim",
            Format::Disksim => "disksim",
            Format::Kmem => "kmem",
            Format::Champsim => "champsim",
            Format::Native => "native",
        }
    }

    /// What kind of events the format carries.
    pub fn trace_kind(self) -> TraceKind {
        match self {
            Format::Kmem => TraceKind::PageEvents,
            Format::Mqsim | Format::Disksim => TraceKind::Block,
            _ => TraceKind::Access,
        }
    }

    /// Whether the format records instructions (so an instruction count is meaningful).
    pub fn has_instructions(self) -> bool {
        matches!(
            self,
            Format::Lackey | Format::RamulatorCpu | Format::Champsim
        )
    }

    /// Bytes of one request when the format has no size field but implies one: memory-
    /// controller traces carry one last-level-cache line per request (docs/trace-format.md).
    /// `None` when a record without a size says nothing about it (pinatrace, ChampSim).
    pub fn implied_request_bytes(self) -> Option<u32> {
        match self {
            Format::Dramsim
            | Format::RamulatorDram
            | Format::RamulatorCpu
            | Format::Ramulator2
            | Format::Vans => Some(64),
            _ => None,
        }
    }

    /// One line saying what a record of the format looks like, for error messages.
    pub fn shape(self) -> &'static str {
        match self {
            Format::Lackey => "'I  <hex>,<size>' or ' L|S|M <hex>,<size>'",
            Format::Pinatrace => "'0x<ip>: R|W 0x<addr>'",
            Format::Dramsim => "'0x<addr> READ|WRITE <cycle>'",
            Format::RamulatorDram => "'0x<addr> R|W'",
            Format::RamulatorCpu => "'<n-inst> <read-addr> [<writeback-addr>]'",
            Format::Ramulator2 => "'LD|ST <addr>'",
            Format::Vans => "'0x<addr> R|W|C[:<idle clk>]'",
            Format::Mqsim => "'<time ns> <dev> <lba> <sectors> <0=W|1=R>'",
            Format::Disksim => "'<time ms> <dev> <lba> <sectors> <flags>'",
            Format::Kmem => "'… [CPU] … TS: mm_page_alloc|mm_page_free: page=… pfn=… order=N …'",
            Format::Champsim => "64-byte input_instr records",
            Format::Native => "hmsim native records",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        let alias = match lower.as_str() {
            "pin" => "pinatrace",
            "dramsim2" | "dramsim3" => "dramsim",
            "ramulator" | "ramulator1" => "ramulator-dram",
            "vans-trace" => "vans",
            "hmsim" | "hmt" => "native",
            "ftrace" => "kmem",
            other => other,
        };
        Format::ALL
            .iter()
            .copied()
            .find(|f| f.name() == alias)
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown trace format '{s}'; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

impl Serialize for Format {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_format_names_roundtrip() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
        }
        assert_eq!("DRAMsim3".parse::<Format>().unwrap(), Format::Dramsim);
        assert!("nope".parse::<Format>().unwrap_err().contains("lackey"));
    }
}
