//! Format sniffing from the first bytes of the (decompressed) stream.
//!
//! Every text parser is run over the sample lines and scored by the lines it accepts; the
//! format is the best-scoring one, provided it accepts at least half of them. A malformed
//! line inside the sample therefore does not hide the format: the reader then stops at that
//! line and names it. When two formats score the same and would read the lines the same way
//! (Ramulator dram mode is a subset of VANS) the narrower one is taken; when they would read
//! them differently (MQSim ns vs DiskSim ms) sniffing refuses to guess.
//!
//! Binary input (any NUL byte) is ChampSim only if its records pass the ChampSim checks;
//! text with a few stray NUL bytes is sniffed as text, so the reader reports the NUL's line.

use super::block::{Disksim, Mqsim};
use super::champsim::sniff_records;
use super::kmem::Kmem;
use super::lackey::Lackey;
use super::memctrl::{Dramsim, Ramulator2, RamulatorCpu, RamulatorDram, Vans};
use super::native::MAGIC;
use super::pin::Pinatrace;
use super::text::score;
use super::Format;

/// Bytes of the decompressed stream looked at.
pub(super) const SNIFF_BYTES: usize = 64 * 1024;
/// Data lines looked at.
const SNIFF_LINES: usize = 400;

/// Picks the format of a trace from its first bytes. `complete` says `head` is the whole
/// stream (so its last line is whole). The error says why and asks for `--format`.
pub fn sniff(head: &[u8], complete: bool) -> Result<Format, String> {
    if head.starts_with(MAGIC) {
        return Ok(Format::Native);
    }
    if head.is_empty() {
        return Err("the trace is empty".into());
    }
    if head.contains(&0) {
        // Text traces never hold NUL bytes; ChampSim records always do (in the padding
        // of small register numbers and of addresses under 2^56).
        match sniff_records(head, complete) {
            Ok(()) => return Ok(Format::Champsim),
            Err(why) if !text_with_stray_nuls(head) => {
                return Err(format!(
                "binary data that is not a ChampSim trace ({why}); pass --format if it is a trace"
            ))
            }
            Err(_) => {}
        }
    }
    let mut lines: Vec<&[u8]> = head.split(|&c| c == b'\n').collect();
    if !complete && lines.len() > 1 {
        lines.pop(); // cut mid-line
    }
    let lines: Vec<&[u8]> = lines
        .into_iter()
        .filter(|l| {
            !matches!(
                l.iter().find(|c| !c.is_ascii_whitespace()),
                None | Some(b'#')
            )
        })
        .take(SNIFF_LINES)
        .collect();
    if lines.is_empty() {
        return Err(
            "no records in the first bytes of the trace: cannot tell its format; pass --format"
                .into(),
        );
    }
    let scores = [
        (Format::Lackey, score::<Lackey>(&lines)),
        (Format::Pinatrace, score::<Pinatrace>(&lines)),
        (Format::Dramsim, score::<Dramsim>(&lines)),
        (Format::RamulatorDram, score::<RamulatorDram>(&lines)),
        (Format::RamulatorCpu, score::<RamulatorCpu>(&lines)),
        (Format::Ramulator2, score::<Ramulator2>(&lines)),
        (Format::Vans, score::<Vans>(&lines)),
        (Format::Mqsim, score::<Mqsim>(&lines)),
        (Format::Disksim, score::<Disksim>(&lines)),
        (Format::Kmem, score::<Kmem>(&lines)),
    ];
    let best = scores.iter().map(|&(_, n)| n).max().unwrap_or(0);
    // At least half the sample: a format that reads one line in three is a coincidence.
    let candidates: Vec<Format> = if best == 0 || 2 * best < lines.len() {
        Vec::new()
    } else {
        scores
            .iter()
            .filter_map(|&(f, n)| (n == best).then_some(f))
            .collect()
    };
    match candidates.as_slice() {
        [one] => Ok(*one),
        [Format::RamulatorDram, Format::Vans] => Ok(Format::RamulatorDram),
        [Format::Mqsim, Format::Disksim] => Err(
            "block trace with integer times: MQSim (ns) or DiskSim (ms)? pass --format mqsim or --format disksim"
                .into(),
        ),
        [] => {
            let first = String::from_utf8_lossy(&lines[0][..lines[0].len().min(80)]).into_owned();
            Err(format!(
                "unrecognised trace format (first record line '{}'); pass --format, one of: {}",
                first.trim_end(),
                Format::ALL.map(|f| f.name()).join(", ")
            ))
        }
        many => {
            let names: Vec<&str> = many.iter().map(|f| f.name()).collect();
            Err(format!("ambiguous trace format (could be {}); pass --format", names.join(" or ")))
        }
    }
}

/// Text with some NUL bytes (a corrupt text trace, or one zero-filled after a crash): lines,
/// every other byte printable ASCII or whitespace, and NULs under half the bytes. ChampSim
/// records are far from that (their addresses have bytes above 0x7f).
fn text_with_stray_nuls(head: &[u8]) -> bool {
    let nuls = head.iter().filter(|&&c| c == 0).count();
    2 * nuls < head.len()
        && head.contains(&b'\n')
        && head
            .iter()
            .all(|&c| c == 0 || c.is_ascii_graphic() || c.is_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_sniff_picks_each_text_format() {
        let cases: [(&str, Format); 10] = [
            ("==1== Lackey\nI  04010aa0,3\n L 1ffefffb48,8\n", Format::Lackey),
            ("0x7f3c4a5b2c30: W 0x7ffd5d0c1e48\n#eof\n", Format::Pinatrace),
            ("0x12345680 READ 10\n0x12345690 WRITE 12\n", Format::Dramsim),
            ("0x12345680 R\n0x12345690 W\n", Format::RamulatorDram),
            ("3 20734016\n0 20734080 20734144\n", Format::RamulatorCpu),
            ("LD 0x1000\nST 0x2000\n", Format::Ramulator2),
            ("0x1000 R\n0x2000 C:10\n", Format::Vans),
            ("0.5 0 1024 8 1\n1.25 0 2048 16 0\n", Format::Disksim),
            (
                "# tracer: nop\n  bash-1  [003] d..1.  1.5: mm_page_free: page=0x1 pfn=0x10 order=0\n",
                Format::Kmem,
            ),
            ("HMSIMTRC\x01\x00", Format::Native),
        ];
        for (text, want) in cases {
            assert_eq!(sniff(text.as_bytes(), true), Ok(want), "{text}");
        }
        let champsim = super::super::encode_champsim_instr(0x400000, [0, 0], [0x1000, 0, 0, 0]);
        assert_eq!(sniff(&champsim, true), Ok(Format::Champsim));
    }

    #[test]
    fn trace_sniff_sees_the_format_past_a_bad_line() {
        let mut text = String::new();
        for i in 0..500 {
            text += &if i == 2 {
                "garbage line\n".to_string()
            } else {
                format!(" L {:x},8\n", 0x1000 + 8 * i)
            };
        }
        assert_eq!(sniff(text.as_bytes(), true), Ok(Format::Lackey));
        // Two bad lines in three is not a lackey trace.
        let e = sniff(b" L 1000,8\nfoo\nbar\n", true).unwrap_err();
        assert!(e.contains("unrecognised"), "{e}");
    }

    #[test]
    fn trace_sniff_refuses_binary_that_is_not_champsim() {
        let e = sniff(&[0u8; 4096], true).unwrap_err();
        assert!(e.contains("not a ChampSim") && e.contains("zero"), "{e}");
        // Pseudo-random bytes: is_branch/branch_taken outside 0/1 almost at once.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8 | 1
            })
            .chain([0])
            .collect();
        assert!(sniff(&noise, true).unwrap_err().contains("not a ChampSim"));
        // A text trace with a stray NUL is text: the reader names the line.
        assert_eq!(
            sniff(b"LD 0x1000\nST 0x20\0\nLD 0x3000\n", true),
            Ok(Format::Ramulator2)
        );
    }

    #[test]
    fn trace_sniff_refuses_to_guess() {
        let e = sniff(b"0 0 1024 8 1\n", true).unwrap_err();
        assert!(e.contains("--format mqsim"), "{e}");
        let e = sniff(b"hello world\n", true).unwrap_err();
        assert!(
            e.contains("unrecognised") && e.contains("hello world"),
            "{e}"
        );
        assert!(sniff(b"", true).unwrap_err().contains("empty"));
        assert!(sniff(b"# only a comment\n", true)
            .unwrap_err()
            .contains("--format"));
    }

    #[test]
    fn trace_sniff_ignores_a_cut_last_line() {
        assert_eq!(sniff(b"LD 0x1000\nST 0x2", false), Ok(Format::Ramulator2));
        assert_eq!(sniff(b"LD 0x1000\nST 0x", false), Ok(Format::Ramulator2));
    }
}
