//! Text writers: the inverse of the text parsers, for `convert` to a text format.
//!
//! Fields the target lacks are dropped (a Ramulator 2 trace has no sizes); records the
//! target cannot express (a page free in lackey) are an error, never silently skipped.
//! Where a format needs a field the record lacks, the documented stand-in is written:
//! instruction address 0 (lackey `I` lines, pinatrace ip), time/device 0. Two fields have no
//! harmless stand-in and refuse instead: DRAMsim3's cycle (every request at cycle 0 is a
//! different experiment; synthetic cycles only on request) and a block request's sectors
//! (a 64 B memory access is 0 sectors of 512 B).

use std::io::{self, Write};

use super::kmem::gfp;
use super::record::{Kind, TraceRecord};
use super::Format;

/// Text formats `convert` can write.
pub const TEXT_TARGETS: [Format; 10] = [
    Format::Lackey,
    Format::RamulatorCpu,
    Format::Pinatrace,
    Format::Dramsim,
    Format::RamulatorDram,
    Format::Ramulator2,
    Format::Vans,
    Format::Mqsim,
    Format::Disksim,
    Format::Kmem,
];

/// A lackey instruction as written: the instruction address is not kept.
pub(super) const LACKEY_INSTR_LINE: &[u8] = b"I  00000000,0\n";

/// Why a record could not be written.
pub(super) enum WriteError {
    Io(io::Error),
    Inexpressible(String),
}

impl From<io::Error> for WriteError {
    fn from(e: io::Error) -> Self {
        WriteError::Io(e)
    }
}

pub(super) struct TextWriter {
    format: Format,
    last_cycle: u64,
    /// Whether an instruction gap of 0 means "same instruction" (the source counts
    /// instructions) rather than "unknown".
    zero_gap_same_instr: bool,
    /// Ramulator cpu mode: the line being built (bubbles, read, writeback), and
    /// instructions carried to the next read.
    cpu_line: Option<(u64, u64, Option<u64>)>,
    carry: u64,
    /// DRAMsim3: cycles between requests for records without a cycle (asked for
    /// explicitly); `None` refuses such records.
    pub synthetic_cycle_step: Option<u64>,
}

impl TextWriter {
    /// `None` when `format` is not a text target. `from` is the source format.
    pub(super) fn new(format: Format, from: Format) -> Option<Self> {
        TEXT_TARGETS.contains(&format).then_some(TextWriter {
            format,
            last_cycle: 0,
            zero_gap_same_instr: from.has_instructions() || from == Format::Native,
            cpu_line: None,
            carry: 0,
            synthetic_cycle_step: None,
        })
    }

    /// Ramulator cpu mode: each line is one read instruction after some non-memory ones,
    /// optionally with a writeback. Stores exist only as that writeback.
    fn ramulator_cpu(&mut self, r: &TraceRecord, w: &mut dyn Write) -> Result<(), WriteError> {
        let (read, write) = match r.kind {
            Kind::Load => (true, false),
            Kind::Store => (false, true),
            Kind::Modify => (true, true),
            Kind::Instr => {
                self.carry += r.inst_gap;
                return Ok(());
            }
            k => {
                let m = format!("ramulator-cpu cannot express a '{}' record", k.name());
                return Err(WriteError::Inexpressible(m));
            }
        };
        if read {
            if r.inst_gap == 0 && self.zero_gap_same_instr && self.cpu_line.is_some() {
                let m = "ramulator-cpu has one read per instruction";
                return Err(WriteError::Inexpressible(m.into()));
            }
            self.flush_cpu_line(w)?;
            let bubbles = self.carry + r.inst_gap.saturating_sub(1);
            self.carry = 0;
            self.cpu_line = Some((bubbles, r.address, None));
        }
        if write {
            match &mut self.cpu_line {
                Some((_, _, wb @ None)) if read || r.inst_gap == 0 => *wb = Some(r.address),
                _ => {
                    let m = "ramulator-cpu has no stores, only one writeback after a read: \
                         filter the trace through a cache first";
                    return Err(WriteError::Inexpressible(m.into()));
                }
            }
        }
        Ok(())
    }

    fn flush_cpu_line(&mut self, w: &mut dyn Write) -> io::Result<()> {
        match self.cpu_line.take() {
            Some((bubbles, read, Some(wb))) => writeln!(w, "{bubbles} {read} {wb}"),
            Some((bubbles, read, None)) => writeln!(w, "{bubbles} {read}"),
            None => Ok(()),
        }
    }

    pub(super) fn write(&mut self, r: &TraceRecord, w: &mut dyn Write) -> Result<(), WriteError> {
        let a = r.address;
        let cannot = || {
            WriteError::Inexpressible(format!(
                "{} cannot express a '{}' record",
                self.format,
                r.kind.name()
            ))
        };
        match self.format {
            Format::RamulatorCpu => return self.ramulator_cpu(r, w),
            Format::Lackey => {
                for _ in 0..r.inst_gap {
                    w.write_all(LACKEY_INSTR_LINE)?;
                }
                let op = match r.kind {
                    Kind::Load => 'L',
                    Kind::Store => 'S',
                    Kind::Modify => 'M',
                    Kind::Instr => return Ok(()),
                    _ => return Err(cannot()),
                };
                writeln!(w, " {op} {a:08x},{}", r.size)?;
            }
            Format::Pinatrace => {
                for op in rw_ops(r.kind, ["R", "W"])
                    .ok_or_else(cannot)?
                    .iter()
                    .flatten()
                {
                    writeln!(w, "0x0: {op} 0x{a:x}")?;
                }
            }
            Format::Dramsim => {
                let cycle = match (r.cycle(), self.synthetic_cycle_step) {
                    (Some(c), _) => c,
                    (None, Some(step)) => self.last_cycle + step,
                    (None, None) => {
                        return Err(WriteError::Inexpressible(
                            "dramsim needs a cycle per request and this record has none; \
                             pass --synthetic-cycles N to space requests N cycles apart"
                                .into(),
                        ))
                    }
                };
                self.last_cycle = cycle;
                for op in rw_ops(r.kind, ["READ", "WRITE"])
                    .ok_or_else(cannot)?
                    .iter()
                    .flatten()
                {
                    writeln!(w, "0x{a:x} {op} {cycle}")?;
                }
            }
            Format::RamulatorDram => {
                for op in rw_ops(r.kind, ["R", "W"])
                    .ok_or_else(cannot)?
                    .iter()
                    .flatten()
                {
                    writeln!(w, "0x{a:x} {op}")?;
                }
            }
            Format::Ramulator2 => {
                for op in rw_ops(r.kind, ["LD", "ST"])
                    .ok_or_else(cannot)?
                    .iter()
                    .flatten()
                {
                    writeln!(w, "{op} 0x{a:x}")?;
                }
            }
            Format::Vans => {
                let ops = match r.kind {
                    Kind::Flush => [Some("C"), None],
                    k => rw_ops(k, ["R", "W"]).ok_or_else(cannot)?,
                };
                for op in ops.iter().flatten() {
                    let cycle = r.cycle().unwrap_or(self.last_cycle).max(self.last_cycle);
                    let idle = cycle - self.last_cycle;
                    self.last_cycle = cycle;
                    if idle > 0 {
                        writeln!(w, "0x{a:x} {op}:{idle}")?;
                    } else {
                        writeln!(w, "0x{a:x} {op}")?;
                    }
                }
            }
            Format::Mqsim | Format::Disksim => {
                let ops = rw_ops(r.kind, ["1", "0"]).ok_or_else(cannot)?;
                if r.size == 0 || !(r.size as u64).is_multiple_of(super::record::SECTOR_BYTES) {
                    return Err(WriteError::Inexpressible(format!(
                        "{} requests are whole 512 B sectors; a {} B access is not \
                         (convert a block trace, or a page-level trace of whole pages)",
                        self.format, r.size
                    )));
                }
                let t = r.timestamp().unwrap_or(0);
                let dev = r.device().unwrap_or(0);
                for op in ops.iter().flatten() {
                    if self.format == Format::Mqsim {
                        write!(w, "{t}")?;
                    } else {
                        write!(w, "{}.{:06}", t / 1_000_000, t % 1_000_000)?;
                    }
                    writeln!(w, " {dev} {} {} {op}", r.lba(), r.sectors())?;
                }
            }
            Format::Kmem => {
                let event = match r.kind {
                    Kind::Alloc => "mm_page_alloc",
                    Kind::Free => "mm_page_free",
                    _ => return Err(cannot()),
                };
                let t = r.timestamp().unwrap_or(0);
                write!(
                    w,
                    "hmsim-0 [{:03}] ..... {}.{:09}: {event}: page=0x0 pfn=0x{:x} order={}",
                    r.cpu().unwrap_or(0),
                    t / 1_000_000_000,
                    t % 1_000_000_000,
                    r.pfn(),
                    r.order
                )?;
                if r.kind == Kind::Alloc {
                    if let Some(m) = r.migratetype() {
                        write!(w, " migratetype={m}")?;
                    }
                    write!(w, " gfp_flags={}", gfp_names(r.gfp))?;
                }
                writeln!(w)?;
            }
            _ => return Err(cannot()),
        }
        Ok(())
    }

    /// Writes what ends the format (pinatrace's `#eof`, Ramulator's last line).
    /// Instructions after the last read cannot be said in Ramulator cpu mode and are dropped.
    pub(super) fn finish(&mut self, w: &mut dyn Write) -> io::Result<()> {
        self.flush_cpu_line(w)?;
        if self.format == Format::Pinatrace {
            w.write_all(b"#eof\n")?;
        }
        Ok(())
    }
}

/// The read and/or write operations of a record in a read/write-only format; `None` for
/// kinds such a format cannot express. An instruction-only record writes nothing.
fn rw_ops(kind: Kind, names: [&'static str; 2]) -> Option<[Option<&'static str>; 2]> {
    match kind {
        Kind::Load => Some([Some(names[0]), None]),
        Kind::Store => Some([Some(names[1]), None]),
        Kind::Modify => Some([Some(names[0]), Some(names[1])]),
        Kind::Instr => Some([None, None]),
        _ => None,
    }
}

fn gfp_names(bits: u32) -> String {
    if bits == 0 {
        return "none".into();
    }
    let mut names: Vec<&str> = gfp::NAMES
        .iter()
        .filter(|(_, b)| bits & b != 0)
        .map(|(n, _)| *n)
        .collect();
    if bits & gfp::OTHER != 0 {
        names.push("__GFP_OTHER");
    }
    names.join("|")
}
