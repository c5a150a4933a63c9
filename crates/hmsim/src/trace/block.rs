//! Block-device request traces in the DiskSim ASCII layout:
//!
//! ```text
//! 0 0 1024 8 1              MQSim: time in ns (integer), device, LBA, sectors, 1 = read / 0 = write
//! 12.500000 0 1024 8 1      DiskSim: time in ms (decimal), device, block, sectors, flags (bit 0 = read)
//! ```
//!
//! The two share a layout but not a time unit; mixing them up is off by 10^6, so they are
//! separate formats and sniffing refuses to guess between them when times are integers.
//! Addresses and sizes are stored in bytes (512-byte sectors).

use super::parse::{dec, fields, fixed_to_ns};
use super::record::{Kind, TraceRecord, SECTOR_BYTES};
use super::text::{Expected, LineParser};
use super::Format;

fn parse_block(
    line: &[u8],
    time_unit_ns: Option<u64>,
    e: &'static str,
) -> Result<TraceRecord, Expected> {
    let mut f = fields(line);
    let (t, dev, lba, sectors, op) =
        match (f.next(), f.next(), f.next(), f.next(), f.next(), f.next()) {
            (Some(t), Some(d), Some(l), Some(s), Some(o), None) => (t, d, l, s, o),
            _ => return Err(e.into()),
        };
    let time_ns = match time_unit_ns {
        None => dec(t).ok_or(e)?,
        Some(unit) => fixed_to_ns(t, unit).ok_or(e)?,
    };
    let op = dec(op).ok_or(e)?;
    let kind = match (time_unit_ns, op) {
        (None, 1) => Kind::Load,
        (None, 0) => Kind::Store,
        (None, _) => return Err(e.into()),
        (Some(_), f) if f & 1 == 1 => Kind::Load,
        (Some(_), _) => Kind::Store,
    };
    let address = dec(lba)
        .and_then(|l| l.checked_mul(SECTOR_BYTES))
        .ok_or(e)?;
    let size = dec(sectors)
        .and_then(|s| s.checked_mul(SECTOR_BYTES))
        .and_then(|b| u32::try_from(b).ok())
        .ok_or(Expected::Borrowed(
            "a request of at most 8388607 sectors (4 GiB)",
        ))?;
    let mut r = TraceRecord::new(kind, address, size);
    r.timestamp_ns = time_ns.min(u64::MAX - 1);
    r.device = dec(dev)
        .and_then(|d| u16::try_from(d).ok())
        .filter(|&d| d != u16::MAX)
        .ok_or(e)?;
    Ok(r)
}

#[derive(Default)]
pub(super) struct Mqsim;

impl LineParser for Mqsim {
    const FORMAT: Format = Format::Mqsim;

    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, Expected> {
        const E: &str =
            "expected an MQSim line '<time ns> <device> <lba> <sectors> <0=write|1=read>' \
            (decimal times are DiskSim milliseconds: use --format disksim)";
        parse_block(line, None, E).map(Some)
    }
}

#[derive(Default)]
pub(super) struct Disksim;

impl LineParser for Disksim {
    const FORMAT: Format = Format::Disksim;

    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, Expected> {
        const E: &str = "expected a DiskSim line '<time ms> <device> <block> <sectors> <flags>'";
        parse_block(line, Some(1_000_000), E).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_util::{read_all, read_err};
    use super::*;

    #[test]
    fn trace_mqsim_lines() {
        let recs = read_all(b"0 0 1024 8 1\n1500 1 2048 16 0\n", Some(Format::Mqsim));
        assert_eq!(recs[0].kind, Kind::Load);
        assert_eq!(
            (recs[0].lba(), recs[0].sectors(), recs[0].device()),
            (1024, 8, Some(0))
        );
        assert_eq!(
            (recs[1].kind, recs[1].timestamp(), recs[1].address),
            (Kind::Store, Some(1500), 2048 * 512)
        );
        let e = read_err(b"0 0 1024 8 1\n0 0 1024 8 2\n", Some(Format::Mqsim));
        assert_eq!(e.line(), Some(2));
    }

    #[test]
    fn trace_disksim_times_are_milliseconds() {
        let recs = read_all(b"12.5 0 1024 8 1\n13 0 8 8 0\n", Some(Format::Disksim));
        assert_eq!(recs[0].timestamp(), Some(12_500_000));
        assert_eq!(recs[1].timestamp(), Some(13_000_000));
        assert_eq!(recs[1].kind, Kind::Store);
        assert_eq!(read_err(b"1 2 3\n", Some(Format::Disksim)).line(), Some(1));
    }
}
