//! Memory-controller simulator traces: one request per line.
//!
//! ```text
//! 0x12345680 READ 10          DRAMsim2/3: hex address, op, issue cycle
//! 0x12345680 R                Ramulator 1, dram mode (address parsed base 16, as Ramulator does)
//! 3 20734016 20734080         Ramulator 1, cpu mode: non-memory instructions, read, optional writeback
//! LD 0x12345680               Ramulator 2 LoadStoreTrace (0x → hex, else decimal)
//! 0x12345680 C:100            VANS: R, W or C (flush), optional idle clocks
//! ```

use super::parse::{dec, fields, hex, num};
use super::record::{Kind, TraceRecord};
use super::text::{Expected, LineParser};
use super::Format;

/// Splits a line into exactly `N` fields (`M` ≤ count ≤ `N`), or `None`.
#[inline]
fn split<const N: usize>(line: &[u8], min: usize) -> Option<([&[u8]; N], usize)> {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut n = 0;
    for f in fields(line) {
        if n == N {
            return None;
        }
        out[n] = f;
        n += 1;
    }
    (n >= min).then_some((out, n))
}

#[derive(Default)]
pub(super) struct Dramsim;

impl LineParser for Dramsim {
    const FORMAT: Format = Format::Dramsim;

    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, Expected> {
        const E: &str = "expected a DRAMsim line '0x<addr> READ|WRITE <cycle>'";
        let ([a, op, c], _) = split::<3>(line, 3).ok_or(E)?;
        let kind = match op {
            b"READ" => Kind::Load,
            b"WRITE" => Kind::Store,
            _ => return Err(E.into()),
        };
        let mut r = TraceRecord::new(kind, hex(a).ok_or(E)?, 0);
        r.cycle = dec(c).filter(|&c| c != u64::MAX).ok_or(E)?;
        Ok(Some(r))
    }
}

#[derive(Default)]
pub(super) struct RamulatorDram;

impl LineParser for RamulatorDram {
    const FORMAT: Format = Format::RamulatorDram;

    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, Expected> {
        const E: &str =
            "expected a Ramulator dram-mode line '0x<addr> R|W' (a VANS trace? use --format vans)";
        let ([a, op], _) = split::<2>(line, 2).ok_or(E)?;
        let kind = match op {
            b"R" => Kind::Load,
            b"W" => Kind::Store,
            _ => return Err(E.into()),
        };
        Ok(Some(TraceRecord::new(kind, hex(a).ok_or(E)?, 0)))
    }
}

#[derive(Default)]
pub(super) struct RamulatorCpu {
    writeback: Option<TraceRecord>,
}

impl LineParser for RamulatorCpu {
    const FORMAT: Format = Format::RamulatorCpu;

    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, Expected> {
        const E: &str =
            "expected a Ramulator cpu-mode line '<n-inst> <read-addr> [<writeback-addr>]'";
        let ([n, a, wb], count) = split::<3>(line, 2).ok_or(E)?;
        let bubbles = dec(n).ok_or(E)?;
        let mut r = TraceRecord::new(Kind::Load, num(a).ok_or(E)?, 0);
        // The bubbles plus the memory instruction itself.
        r.inst_gap = bubbles.checked_add(1).ok_or(E)?;
        if count == 3 {
            self.writeback = Some(TraceRecord::new(Kind::Store, num(wb).ok_or(E)?, 0));
        }
        Ok(Some(r))
    }

    fn take_pending(&mut self) -> Option<TraceRecord> {
        self.writeback.take()
    }
}

#[derive(Default)]
pub(super) struct Ramulator2;

impl LineParser for Ramulator2 {
    const FORMAT: Format = Format::Ramulator2;

    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, Expected> {
        const E: &str = "expected a Ramulator 2 LoadStoreTrace line 'LD|ST <addr>'";
        let ([op, a], _) = split::<2>(line, 2).ok_or(E)?;
        let kind = match op {
            b"LD" => Kind::Load,
            b"ST" => Kind::Store,
            _ => return Err(E.into()),
        };
        Ok(Some(TraceRecord::new(kind, num(a).ok_or(E)?, 0)))
    }
}

#[derive(Default)]
pub(super) struct Vans {
    clock: u64,
}

impl LineParser for Vans {
    const FORMAT: Format = Format::Vans;

    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, Expected> {
        const E: &str = "expected a VANS line '0x<addr> R|W|C[:<idle clk>]'";
        let ([a, op], _) = split::<2>(line, 2).ok_or(E)?;
        let (op, idle) = match op.iter().position(|&c| c == b':') {
            Some(i) => (&op[..i], dec(&op[i + 1..]).ok_or(E)?),
            None => (op, 0),
        };
        let kind = match op {
            b"R" => Kind::Load,
            b"W" => Kind::Store,
            b"C" => Kind::Flush,
            _ => return Err(E.into()),
        };
        self.clock = self
            .clock
            .checked_add(idle)
            .filter(|&c| c != u64::MAX)
            .ok_or(E)?;
        let mut r = TraceRecord::new(kind, hex(a).ok_or(E)?, 0);
        r.cycle = self.clock;
        Ok(Some(r))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_util::{read_all, read_err};
    use super::*;

    fn kinds_addrs(recs: &[TraceRecord]) -> Vec<(Kind, u64)> {
        recs.iter().map(|r| (r.kind, r.address)).collect()
    }

    #[test]
    fn trace_dramsim_lines() {
        let recs = read_all(
            b"0x12345680 READ 10\n0x1234a000 WRITE 25\n",
            Some(Format::Dramsim),
        );
        assert_eq!(
            kinds_addrs(&recs),
            vec![(Kind::Load, 0x12345680), (Kind::Store, 0x1234a000)]
        );
        assert_eq!(recs[1].cycle(), Some(25));
        assert_eq!(
            read_err(b"0x1 READ\n", Some(Format::Dramsim)).line(),
            Some(1)
        );
    }

    #[test]
    fn trace_ramulator_dram_lines() {
        let recs = read_all(b"0x12345680 R\n12345a00 W\n", Some(Format::RamulatorDram));
        assert_eq!(
            kinds_addrs(&recs),
            vec![(Kind::Load, 0x12345680), (Kind::Store, 0x12345a00)]
        );
        let e = read_err(b"0x1 R\n0x2 C\n", Some(Format::RamulatorDram));
        assert_eq!(e.line(), Some(2));
        assert!(e.message().contains("--format vans"));
    }

    #[test]
    fn trace_ramulator_cpu_lines_with_writeback() {
        let recs = read_all(
            b"3 20734016\n0 0x100 20734080\n",
            Some(Format::RamulatorCpu),
        );
        assert_eq!(
            kinds_addrs(&recs),
            vec![
                (Kind::Load, 20734016),
                (Kind::Load, 0x100),
                (Kind::Store, 20734080)
            ]
        );
        assert_eq!(
            recs.iter().map(|r| r.inst_gap).collect::<Vec<_>>(),
            vec![4, 1, 0]
        );
        assert_eq!(
            read_err(b"1 2 3 4\n", Some(Format::RamulatorCpu)).line(),
            Some(1)
        );
    }

    #[test]
    fn trace_ramulator2_lines() {
        let recs = read_all(b"LD 0x1000\nST 4096\n", Some(Format::Ramulator2));
        assert_eq!(
            kinds_addrs(&recs),
            vec![(Kind::Load, 0x1000), (Kind::Store, 4096)]
        );
        assert_eq!(
            read_err(b"LD 0x1000\nXX 1\n", Some(Format::Ramulator2)).line(),
            Some(2)
        );
    }

    #[test]
    fn trace_vans_lines_accumulate_idle_clocks() {
        let recs = read_all(b"0x1000 R\n0x2000 W:10\n0x3000 C:5\n", Some(Format::Vans));
        assert_eq!(
            kinds_addrs(&recs),
            vec![
                (Kind::Load, 0x1000),
                (Kind::Store, 0x2000),
                (Kind::Flush, 0x3000)
            ]
        );
        assert_eq!(
            recs.iter().map(|r| r.cycle).collect::<Vec<_>>(),
            vec![0, 10, 15]
        );
        assert_eq!(
            read_err(b"0x1000 R:x\n", Some(Format::Vans)).line(),
            Some(1)
        );
    }
}
