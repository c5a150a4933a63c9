//! NAND timing presets. Values are per page (read, program) and per block (erase); the
//! sources are datasheet-class numbers as used by widely cited simulators and papers.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandTiming {
    pub read_ns: u64,
    pub program_ns: u64,
    pub erase_ns: u64,
    /// Rated program/erase cycles per block (for wear reports).
    pub pe_cycles: u64,
}

/// (name, timing, source).
pub const NAND_PRESETS: &[(&str, NandTiming, &str)] = &[
    (
        "study",
        NandTiming { read_ns: 25_000, program_ns: 200_000, erase_ns: 1_500_000, pe_cycles: 100_000 },
        "Han & Shin (KIISE): read 25 us, program 200 us; erase 1.5 ms as FlashSim",
    ),
    (
        "slc",
        NandTiming { read_ns: 25_000, program_ns: 200_000, erase_ns: 1_500_000, pe_cycles: 100_000 },
        "Agrawal et al., USENIX ATC'08, Table 2 (Samsung SLC K9XXG08UXM datasheet)",
    ),
    (
        "mlc",
        NandTiming { read_ns: 50_000, program_ns: 600_000, erase_ns: 3_000_000, pe_cycles: 10_000 },
        "Grupp et al., MICRO'09 (measured MLC: read ~50 us, program 0.6-1.5 ms, erase ~3 ms); lower end",
    ),
    (
        "tlc",
        NandTiming { read_ns: 75_000, program_ns: 750_000, erase_ns: 3_800_000, pe_cycles: 3_000 },
        "MQSim default TLC configuration (Tavakkol et al., FAST'18)",
    ),
    (
        "qlc",
        NandTiming { read_ns: 140_000, program_ns: 3_000_000, erase_ns: 10_000_000, pe_cycles: 1_000 },
        "approximate: 1 Tb QLC dies of ISSCC'18 (tR ~0.1-0.17 ms, tPROG ~2-3 ms); erase assumed",
    ),
];

/// The preset named `name`.
pub fn preset(name: &str) -> Option<NandTiming> {
    NAND_PRESETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, t, _)| *t)
}
