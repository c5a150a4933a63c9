//! Every trace format hmsim reads, registered by name with its reader's constructor.

use std::io::{BufReader, Read};

use super::error::TraceError;
use super::native::NativeReader;
use super::text::{LineParser, TextReader};
use super::{block, champsim, kmem, lackey, memctrl, pin, TraceReader};
use crate::named::{Entry, Registry};

/// A decompressed stream, buffered.
pub(super) type Source = BufReader<Box<dyn Read + Send>>;

/// Opens a reader over a stream; the `&str` names it in errors.
pub(super) type OpenReader = fn(Source, &str) -> Result<Box<dyn TraceReader>, TraceError>;

fn text<P: LineParser + 'static>(
    src: Source,
    name: &str,
    parser: P,
) -> Result<Box<dyn TraceReader>, TraceError> {
    Ok(Box::new(TextReader::new(Box::new(src), name, parser)))
}

/// The readers, in the order of [`Format::ALL`](super::Format::ALL) (checked by a test).
pub static FORMATS: Registry<OpenReader> = Registry::new(
    "trace format",
    &[
        Entry {
            name: "lackey",
            about: "Valgrind lackey --trace-mem=yes",
            make: |src, name| text(src, name, lackey::Lackey::default()),
        },
        Entry {
            name: "pinatrace",
            about: "Intel Pin pinatrace",
            make: |src, name| text(src, name, pin::Pinatrace),
        },
        Entry {
            name: "dramsim",
            about: "DRAMsim2 / DRAMsim3 '0x<addr> READ|WRITE <cycle>'",
            make: |src, name| text(src, name, memctrl::Dramsim),
        },
        Entry {
            name: "ramulator-dram",
            about: "Ramulator 1 dram mode '0x<addr> R|W'",
            make: |src, name| text(src, name, memctrl::RamulatorDram),
        },
        Entry {
            name: "ramulator-cpu",
            about: "Ramulator 1 cpu mode '<n-inst> <read-addr> [<writeback-addr>]'",
            make: |src, name| text(src, name, memctrl::RamulatorCpu::default()),
        },
        Entry {
            name: "ramulator2",
            about: "Ramulator 2 LoadStoreTrace 'LD|ST <addr>'",
            make: |src, name| text(src, name, memctrl::Ramulator2),
        },
        Entry {
            name: "vans",
            about: "VANS '0x<addr> R|W|C[:<idle clk>]'",
            make: |src, name| text(src, name, memctrl::Vans::default()),
        },
        Entry {
            name: "mqsim",
            about: "MQSim ASCII block trace",
            make: |src, name| text(src, name, block::Mqsim),
        },
        Entry {
            name: "disksim",
            about: "DiskSim ASCII block trace",
            make: |src, name| text(src, name, block::Disksim),
        },
        Entry {
            name: "kmem",
            about: "Linux kmem page allocation tracepoints as ftrace text",
            make: |src, name| text(src, name, kmem::Kmem),
        },
        Entry {
            name: "champsim",
            about: "ChampSim binary input_instr records",
            make: |src, name| Ok(Box::new(champsim::ChampsimReader::new(Box::new(src), name))),
        },
        Entry {
            name: "native",
            about: "hmsim native binary format",
            make: |src, name| Ok(Box::new(NativeReader::new(Box::new(src), name)?)),
        },
    ],
);

#[cfg(test)]
mod tests {
    use super::super::Format;
    use super::*;

    #[test]
    fn every_format_has_one_reader_in_order() {
        assert!(FORMATS.duplicates().is_empty());
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(FORMATS.names(), names);
    }
}
