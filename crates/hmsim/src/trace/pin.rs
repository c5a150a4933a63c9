//! Intel Pin `pinatrace` tool output:
//!
//! ```text
//! 0x7f3c4a5b2c30: W 0x7ffd5d0c1e48
//! 0x7f3c4a5b2c34: R 0x7f3c4a7d1008
//! #eof
//! ```
//!
//! The instruction pointer is not kept (the record has no field for it) and the access size
//! is not in the format (`size` 0). Pin writes `#eof` last; a trace without it was cut
//! short, which is reported rather than silently accepted.

use super::parse::{fields, hex};
use super::record::{Kind, TraceRecord};
use super::text::{Expected, LineParser};
use super::Format;

#[derive(Default)]
pub(super) struct Pinatrace;

const EXPECTED: &str = "expected a pinatrace line '0x<ip>: R|W 0x<addr>'";

impl LineParser for Pinatrace {
    const FORMAT: Format = Format::Pinatrace;

    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, Expected> {
        let mut f = fields(line);
        let (ip, op, addr) = match (f.next(), f.next(), f.next(), f.next()) {
            (Some(ip), Some(op), Some(addr), None) => (ip, op, addr),
            _ => return Err(EXPECTED.into()),
        };
        let ip_ok = ip.len() > 1 && ip.ends_with(b":") && hex(&ip[..ip.len() - 1]).is_some();
        let kind = match op {
            b"R" => Kind::Load,
            b"W" => Kind::Store,
            _ => return Err(EXPECTED.into()),
        };
        match hex(addr) {
            Some(a) if ip_ok && addr.starts_with(b"0x") => Ok(Some(TraceRecord::new(kind, a, 0))),
            _ => Err(EXPECTED.into()),
        }
    }

    fn finish(&mut self) -> Result<Option<TraceRecord>, Expected> {
        Err("pinatrace ended without its '#eof' line: the trace is truncated".into())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_util::{read_all, read_err};
    use super::*;

    #[test]
    fn trace_pinatrace_reads_until_eof_marker() {
        let s = b"0x7f3c4a5b2c30: W 0x7ffd5d0c1e48\n0x7f3c4a5b2c34: R 0x7f3c4a7d1008\n#eof\n";
        let recs = read_all(s, Some(Format::Pinatrace));
        assert_eq!(recs.len(), 2);
        assert_eq!(
            (recs[0].kind, recs[0].address),
            (Kind::Store, 0x7ffd5d0c1e48)
        );
        assert_eq!(
            (recs[1].kind, recs[1].address),
            (Kind::Load, 0x7f3c4a7d1008)
        );
    }

    #[test]
    fn trace_pinatrace_errors() {
        let e = read_err(
            b"0x7f3c4a5b2c30: W 0x7ffd5d0c1e48\n",
            Some(Format::Pinatrace),
        );
        assert!(e.message().contains("truncated"), "{e}");
        let e = read_err(b"0x1: W 0x2\n0x1: X 0x2\n#eof\n", Some(Format::Pinatrace));
        assert_eq!(e.line(), Some(2));
    }
}
