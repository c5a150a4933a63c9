//! Corrupted traces in every format: a bad line at several positions inside and after the
//! sniff window, a cut-off last line, stray NUL bytes, byte flips and truncation. Each case
//! must end in an error naming the file and the line (or byte) — or read cleanly — and never
//! panic or hang. docs/reliability.md describes the campaign these cases come from.

use std::io::Cursor;

#[cfg(unix)]
use std::os::unix::fs::FileTypeExt;

use hmsim::trace::{encode_champsim_instr, open_reader, Format, Location, TraceError};
use proptest::prelude::*;

const NAME: &str = "t.trace";
/// Data lines per sample: past the 400-line sniff window.
const LINES: usize = 600;

/// One valid line of `format`, number `i`.
fn line(format: Format, i: usize) -> String {
    let a = 0x10_0000 + 64 * i as u64;
    match format {
        Format::Lackey => match i % 3 {
            0 => format!("I  {:08x},3", 0x40_0000 + i),
            1 => format!(" L {a:x},8"),
            _ => format!(" S {a:x},4"),
        },
        Format::Pinatrace => format!("0x{:x}: {} 0x{a:x}", 0x40_0000 + i, ["R", "W"][i % 2]),
        Format::Dramsim => format!("0x{a:x} {} {}", ["READ", "WRITE"][i % 2], 10 * i),
        Format::RamulatorDram => format!("0x{a:x} {}", ["R", "W"][i % 2]),
        Format::RamulatorCpu => format!("{} {a}", i % 7),
        Format::Ramulator2 => format!("{} 0x{a:x}", ["LD", "ST"][i % 2]),
        Format::Vans => format!("0x{a:x} {}", ["R", "W", "C:10"][i % 3]),
        Format::Mqsim | Format::Disksim => {
            format!("{}.5 0 {} 8 {}", i, 1024 + 8 * i, i % 2)
        }
        Format::Kmem => format!(
            "  bash-1  [003] d..1.  {}.000001: mm_page_{}: page=0x1 pfn=0x{:x} order=0",
            100 + i,
            ["alloc", "free"][i % 2],
            0x1000 + i
        ),
        Format::Champsim | Format::Native => unreachable!(),
    }
}

const TEXT: [Format; 9] = [
    Format::Lackey,
    Format::Pinatrace,
    Format::Dramsim,
    Format::RamulatorDram,
    Format::RamulatorCpu,
    Format::Ramulator2,
    Format::Vans,
    Format::Disksim,
    Format::Kmem,
];

fn sample(format: Format, bad_at: Option<(usize, &str)>) -> Vec<u8> {
    let mut s = String::new();
    for n in 1..=LINES {
        match bad_at {
            Some((at, text)) if at == n => s += text,
            _ => s += &line(format, n),
        }
        s.push('\n');
    }
    if format == Format::Pinatrace {
        s += "#eof\n";
    }
    s.into_bytes()
}

/// Every record, or the first error (opening included).
fn read(bytes: &[u8], format: Option<Format>) -> Result<usize, TraceError> {
    let r = open_reader(Box::new(Cursor::new(bytes.to_vec())), NAME, format)?;
    let mut n = 0;
    for rec in r {
        rec?;
        n += 1;
    }
    Ok(n)
}

#[test]
fn reliab_every_text_sample_reads_cleanly_when_sniffed() {
    for f in TEXT {
        let n = read(&sample(f, None), None).unwrap_or_else(|e| panic!("{f}: {e}"));
        // Lackey folds its `I` lines into the next access.
        assert!(n >= LINES * 2 / 3, "{f}: {n} records");
    }
}

#[test]
fn reliab_bad_line_is_named_inside_and_after_the_sniff_window() {
    for f in TEXT {
        for at in [1, 3, 200, 399, 400, 401, 450, LINES] {
            let bytes = sample(f, Some((at, "this is not a record")));
            let e = read(&bytes, None).expect_err("a bad line must fail");
            assert_eq!(
                e.location(),
                Location::Line(at as u64),
                "{f}, bad line {at}: {e}"
            );
            let shown = e.to_string();
            assert!(
                shown.starts_with(&format!("{NAME}:{at}: ")) && shown.contains("expected"),
                "{f}: {shown}"
            );
            assert!(!shown.contains('\n'), "one line: {shown}");
        }
    }
}

#[test]
fn reliab_cut_off_last_line_says_so() {
    for f in TEXT {
        let mut bytes = sample(f, None);
        if f == Format::Pinatrace {
            bytes.truncate(bytes.len() - "#eof\n".len());
        }
        // Cut the last line in the middle of its first field.
        bytes.pop();
        let last = bytes.iter().rposition(|&c| c == b'\n').unwrap() + 1;
        let keep = last + 2;
        bytes.truncate(keep);
        match read(&bytes, None) {
            Ok(_) => {} // a prefix of a record can be a record ("LD 0x1" of "LD 0x1000")
            Err(e) => assert!(
                e.message().contains("cut off") || f == Format::Pinatrace,
                "{f}: {e}"
            ),
        }
    }
    let e = read(b" L 1000,8\n S 2000,8\n L 30", None).unwrap_err();
    assert_eq!(e.location(), Location::Line(3));
    assert!(e.message().contains("cut off"), "{e}");
}

#[test]
fn reliab_stray_nul_is_reported_at_its_line() {
    for f in TEXT {
        let mut bytes = sample(f, None);
        // A NUL as the last character of line 5 (inside a field every format reads).
        let end = bytes
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c == b'\n')
            .nth(4)
            .unwrap()
            .0;
        bytes[end - 1] = 0;
        let e = read(&bytes, None).expect_err("NUL");
        assert_eq!(e.location(), Location::Line(5), "{f}: {e}");
        assert!(e.message().contains("NUL byte"), "{f}: {e}");
        assert!(!e.message().contains("ChampSim"), "{f}: {e}");
    }
}

#[test]
fn reliab_random_binary_is_not_champsim() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for len in [64, 640, 4096, 100_000] {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let e = read(&bytes, None).expect_err("noise");
        assert!(
            e.to_string().starts_with(NAME) && !e.message().contains("truncated ChampSim"),
            "{e}"
        );
    }
    // Zeros (as from /dev/zero) are not a trace either.
    let e = read(&vec![0; 1 << 17], None).unwrap_err();
    assert!(e.message().contains("zero"), "{e}");
}

#[test]
fn reliab_champsim_size_not_a_record_multiple_is_refused_or_truncated() {
    let mut v = Vec::new();
    for i in 0..20u64 {
        v.extend(encode_champsim_instr(
            0x40_0000 + 4 * i,
            [0, 0],
            [0x1000 + 64 * i, 0, 0, 0],
        ));
    }
    assert_eq!(read(&v, None).unwrap(), 20);
    v.truncate(v.len() - 10);
    let e = read(&v, None).unwrap_err();
    assert!(e.message().contains("multiple of the 64-byte"), "{e}");
    let e = read(&v, Some(Format::Champsim)).unwrap_err();
    assert!(e.message().contains("truncated ChampSim"), "{e}");
}

#[cfg(unix)]
#[test]
fn reliab_devices_and_directories_are_refused_not_read_forever() {
    use std::path::Path;
    for p in ["/dev/zero", "/dev/urandom"] {
        if Path::new(p).exists() {
            let e = hmsim::trace::open_trace(Path::new(p), None)
                .err()
                .expect("a device is refused");
            assert!(e.message().contains("device"), "{e}");
            // Also when the format is stated.
            assert!(hmsim::trace::open_trace(Path::new(p), Some(Format::Champsim)).is_err());
        }
    }
    let e = hmsim::trace::open_trace(&std::env::temp_dir(), None)
        .err()
        .expect("a directory is refused");
    assert!(e.message().contains("directory"), "{e}");
}

#[cfg(unix)]
#[test]
fn reliab_convert_never_replaces_a_device_or_folder() {
    // A FIFO stands in for a device (as /dev/null would be): neither is a regular file.
    let dir = std::env::temp_dir().join(format!("hmsim-reliab-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("folder")).unwrap();
    let src = dir.join("t.lackey");
    std::fs::write(&src, sample(Format::Lackey, None)).unwrap();
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let mut targets = vec![dir.join("folder")];
    if made.is_ok_and(|s| s.success()) {
        targets.push(fifo.clone());
    }
    for dst in &targets {
        let e = hmsim::trace::convert(&src, dst, Format::Native, None).unwrap_err();
        assert!(e.message().contains("not a regular file"), "{e}");
    }
    if targets.len() == 2 {
        assert!(fifo.metadata().unwrap().file_type().is_fifo());
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn reliab_memory_controller_requests_are_one_cache_line() {
    for f in [
        Format::Dramsim,
        Format::RamulatorDram,
        Format::RamulatorCpu,
        Format::Ramulator2,
        Format::Vans,
    ] {
        let r = open_reader(Box::new(Cursor::new(sample(f, None))), NAME, Some(f)).unwrap();
        for rec in r {
            let rec = rec.unwrap();
            assert_eq!(rec.size, 64, "{f}: {rec:?}");
        }
        assert_eq!(f.implied_request_bytes(), Some(64));
    }
    assert_eq!(Format::Pinatrace.implied_request_bytes(), None);
    assert_eq!(Format::Champsim.implied_request_bytes(), None);
}

/// Each sample with its stated and its sniffed format.
fn corpus() -> Vec<(Vec<u8>, Option<Format>)> {
    let mut v: Vec<_> = TEXT.iter().map(|&f| (sample(f, None), Some(f))).collect();
    v.extend(TEXT.iter().map(|&f| (sample(f, None), None)));
    let mut c = Vec::new();
    for i in 0..40u64 {
        c.extend(encode_champsim_instr(
            0x40_0000 + 4 * i,
            [0x9000 * (i % 2), 0],
            [0x1000 + 64 * i, 0, 0, 0],
        ));
    }
    v.push((c.clone(), None));
    v.push((c, Some(Format::Champsim)));
    v
}

/// An error is one line naming the file, with a line or byte when the format has one.
fn well_formed(e: &TraceError) -> Result<(), TestCaseError> {
    let s = e.to_string();
    prop_assert!(s.starts_with(NAME), "{}", s);
    prop_assert!(!s.contains('\n'), "{}", s);
    prop_assert!(!e.message().is_empty());
    Ok(())
}

/// 96 cases per property in the default run; `make fuzz` sets `PROPTEST_CASES` higher.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn reliab_byte_flips_never_panic(which in 0usize..20, flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let corpus = corpus();
        let (bytes, format) = &corpus[which % corpus.len()];
        let mut b = bytes.clone();
        for (at, v) in flips {
            let i = at.index(b.len());
            b[i] = v;
        }
        if let Err(e) = read(&b, *format) {
            well_formed(&e)?;
        }
    }

    #[test]
    fn reliab_truncation_never_panics(which in 0usize..20, keep in any::<prop::sample::Index>()) {
        let corpus = corpus();
        let (bytes, format) = &corpus[which % corpus.len()];
        let b = &bytes[..keep.index(bytes.len())];
        if let Err(e) = read(b, *format) {
            well_formed(&e)?;
        }
    }
}
