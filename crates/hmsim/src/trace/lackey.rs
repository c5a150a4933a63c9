//! Valgrind lackey (`valgrind --tool=lackey --trace-mem=yes`):
//!
//! ```text
//! ==1234== Lackey, an example Valgrind tool
//! I  04010aa0,3
//!  S 1ffefffb48,8
//!  L 04a2b1c0,4
//!  M 0421d4e8,4
//! ```
//!
//! Addresses are hex without `0x`; the number after the comma is the size in bytes.
//! `I` lines are folded into the next access's `inst_gap` (simulators want compute between
//! accesses, not a record per instruction); instructions after the last access become one
//! trailing `Instr` record so the instruction count is preserved. `==pid==` (and, with
//! `-v`, `--pid--`) lines are Valgrind's own messages, interleaved when lackey logs to
//! stderr.

use super::parse::{dec, hex};
use super::record::{Kind, TraceRecord};
use super::text::{Expected, LineParser};
use super::Format;

#[derive(Default)]
pub(super) struct Lackey {
    gap: u64,
    last_ip: u64,
}

const EXPECTED: &str =
    "expected a lackey line 'I  <hex addr>,<size>' or ' L|S|M <hex addr>,<size>'";

impl LineParser for Lackey {
    const FORMAT: Format = Format::Lackey;

    #[inline]
    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, Expected> {
        let mut i = 0;
        while i < line.len() && line[i] == b' ' {
            i += 1;
        }
        let rest = &line[i..];
        if rest.starts_with(b"==") || rest.starts_with(b"--") {
            return Ok(None); // Valgrind's own messages (`==pid==`, `--pid--` when verbose)
        }
        let kind = match rest.first() {
            Some(b'I') => Kind::Instr,
            Some(b'L') => Kind::Load,
            Some(b'S') => Kind::Store,
            Some(b'M') => Kind::Modify,
            _ => return Err(EXPECTED.into()),
        };
        let body = &rest[1..];
        if body.first() != Some(&b' ') {
            return Err(EXPECTED.into());
        }
        let body = trim_start(body);
        let comma = body
            .iter()
            .position(|&c| c == b',')
            .ok_or(Expected::from(EXPECTED))?;
        let address = hex(&body[..comma]).ok_or(Expected::from(EXPECTED))?;
        let size = dec(&body[comma + 1..])
            .and_then(|s| u32::try_from(s).ok())
            .ok_or(Expected::from(EXPECTED))?;
        if kind == Kind::Instr {
            self.gap += 1;
            self.last_ip = address;
            return Ok(None);
        }
        let mut r = TraceRecord::new(kind, address, size);
        r.inst_gap = std::mem::take(&mut self.gap);
        Ok(Some(r))
    }

    fn finish(&mut self) -> Result<Option<TraceRecord>, Expected> {
        if self.gap == 0 {
            return Ok(None);
        }
        let mut r = TraceRecord::new(Kind::Instr, self.last_ip, 0);
        r.inst_gap = std::mem::take(&mut self.gap);
        Ok(Some(r))
    }
}

#[inline]
fn trim_start(s: &[u8]) -> &[u8] {
    let i = s
        .iter()
        .position(|&c| c != b' ' && c != b'\t')
        .unwrap_or(s.len());
    &s[i..]
}

#[cfg(test)]
mod tests {
    use super::super::tests_util::{read_all, read_err};
    use super::*;

    const SAMPLE: &str = "==12345== Lackey, an example Valgrind tool\n\
        ==12345== Command: /bin/true\n\
        --12345-- Reading syms from /bin/true\n\
        I  04010aa0,3\n\
        \x20S 1ffefffb48,8\n\
        I  04010aa3,5\n\
        I  04010aa8,4\n\
        \x20L 04a2b1c0,4\n\
        \x20M 0421d4e8,4\n\
        I  04010aac,2\n\
        ==12345== \n";

    #[test]
    fn trace_lackey_folds_instructions_into_gaps() {
        let recs = read_all(SAMPLE.as_bytes(), Some(Format::Lackey));
        let got: Vec<_> = recs
            .iter()
            .map(|r| (r.kind, r.address, r.size, r.inst_gap))
            .collect();
        assert_eq!(
            got,
            vec![
                (Kind::Store, 0x1ffefffb48, 8, 1),
                (Kind::Load, 0x04a2b1c0, 4, 2),
                (Kind::Modify, 0x0421d4e8, 4, 0),
                (Kind::Instr, 0x04010aac, 0, 1),
            ]
        );
        assert_eq!(recs.iter().map(|r| r.inst_gap).sum::<u64>(), 4);
    }

    #[test]
    fn trace_lackey_bad_line_names_line() {
        let e = read_err(
            b"I  04010aa0,3\n L 04a2b1c0,4\n L zz,4\n",
            Some(Format::Lackey),
        );
        assert_eq!(e.line(), Some(3));
        assert!(e.message().contains("lackey"), "{e}");
        assert!(e.message().contains("L zz,4"), "{e}");
        let e = read_err(b" L 04a2b1c0\n", Some(Format::Lackey));
        assert_eq!(e.line(), Some(1));
    }
}
