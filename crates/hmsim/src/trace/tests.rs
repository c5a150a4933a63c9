//! Cross-cutting trace tests: compression, sniffing through `open_trace`, error lines for
//! every text format, and arbitrary bytes through every parser.

use std::fs;
use std::io::{Cursor, Write};

use proptest::prelude::*;

use super::tests_util::{read_all, read_err, reader, temp_file};
use super::*;

const LACKEY: &str = "==1== Lackey\nI  04010aa0,3\n S 1ffefffb48,8\nI  04010aa3,5\n L 04a2b1c0,4\n";

/// One valid sample per text format, with its number of lines.
fn text_samples() -> Vec<(Format, &'static str)> {
    vec![
        (Format::Lackey, LACKEY),
        (Format::Dramsim, "0x12345680 READ 10\n0x12345690 WRITE 12\n"),
        (Format::RamulatorDram, "0x12345680 R\n0x12345690 W\n"),
        (Format::RamulatorCpu, "3 20734016\n0 20734080 20734144\n"),
        (Format::Ramulator2, "LD 0x1000\nST 0x2000\n"),
        (Format::Vans, "0x1000 R\n0x2000 C:10\n"),
        (Format::Mqsim, "0 0 1024 8 1\n1500 1 2048 16 0\n"),
        (Format::Disksim, "0.5 0 1024 8 1\n1.25 0 2048 16 0\n"),
        (
            Format::Kmem,
            "# tracer: nop\n  bash-1  [003] d..1.  1.5: mm_page_free: page=0x1 pfn=0x10 order=0\n",
        ),
    ]
}

fn compress(c: Compression, bytes: &[u8]) -> Vec<u8> {
    let path = temp_file("compress.tmp", b"");
    let mut enc = c.encoder(fs::File::create(&path).unwrap()).unwrap();
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap();
    let out = fs::read(&path).unwrap();
    fs::remove_file(path).unwrap();
    out
}

const COMPRESSIONS: [Compression; 4] = [
    Compression::Gzip,
    Compression::Xz,
    Compression::Zstd,
    Compression::Bzip2,
];

#[test]
fn trace_compressed_files_read_like_plain() {
    let plain = read_all(LACKEY.as_bytes(), None);
    for c in COMPRESSIONS {
        let path = temp_file(
            &format!("lackey.{}", c.name()),
            &compress(c, LACKEY.as_bytes()),
        );
        let r = open_trace(&path, None).unwrap();
        assert_eq!(r.format(), Format::Lackey, "{c:?}");
        assert_eq!(r.collect::<Result<Vec<_>, _>>().unwrap(), plain, "{c:?}");
        fs::remove_file(path).unwrap();
    }
}

#[test]
fn trace_native_inside_outer_compression_reads() {
    let mut w = NativeWriter::new(Vec::new(), &NativeHeader::default()).unwrap();
    for r in read_all(LACKEY.as_bytes(), None) {
        w.write(&r).unwrap();
    }
    let native = w.finish().unwrap();
    for c in COMPRESSIONS {
        let recs = read_all(&compress(c, &native), None);
        assert_eq!(recs, read_all(LACKEY.as_bytes(), None), "{c:?}");
    }
}

#[test]
fn trace_truncated_compressed_file_says_so() {
    let big: String = (0..200_000)
        .map(|i| format!(" L {:08x},8\n", i * 64))
        .collect();
    for c in COMPRESSIONS {
        let mut z = compress(c, big.as_bytes());
        z.truncate(z.len() / 2);
        let e = read_err(&z, None);
        assert!(
            e.message().contains("truncated") || e.message().contains("corrupt"),
            "{c:?}: {e}"
        );
    }
}

#[test]
fn trace_open_sniffs_every_sample() {
    for (format, text) in text_samples() {
        if format == Format::Mqsim {
            continue; // integer times are ambiguous with DiskSim: needs --format
        }
        let path = temp_file("sniff.txt", text.as_bytes());
        assert_eq!(open_trace(&path, None).unwrap().format(), format, "{text}");
        fs::remove_file(path).unwrap();
    }
    let champsim = encode_champsim_instr(0x400000, [0, 0], [0x1000, 0, 0, 0]);
    assert_eq!(reader(&champsim, None).format(), Format::Champsim);
    let pin = b"0x7f3c4a5b2c30: W 0x7ffd5d0c1e48\n#eof\n";
    assert_eq!(reader(pin, None).format(), Format::Pinatrace);
}

#[test]
fn trace_stated_format_overrides_sniffing() {
    // Sniffing refuses integer-time block traces; stating the format reads them.
    let text = b"0 0 1024 8 1\n";
    assert!(open_reader(Box::new(Cursor::new(text.to_vec())), "t", None).is_err());
    assert_eq!(
        read_all(text, Some(Format::Disksim))[0].timestamp(),
        Some(0)
    );
    // A lackey file stated as Ramulator 2 fails on its first record line.
    let e = read_err(LACKEY.as_bytes(), Some(Format::Ramulator2));
    assert_eq!(e.line(), Some(1));
}

#[test]
fn trace_malformed_line_gives_its_number_in_every_text_format() {
    for (format, text) in text_samples() {
        let lines = text.lines().count() as u64;
        let bad = format!("{text}this is not a record\n");
        let e = read_err(bad.as_bytes(), Some(format));
        assert_eq!(e.line(), Some(lines + 1), "{format}: {e}");
        assert!(e.message().contains("expected"), "{format}: {e}");
        let c: crate::ConfigError = e.into();
        assert_eq!(
            (c.file.as_str(), c.line),
            ("<test>", Some(lines as usize + 1))
        );
    }
}

#[test]
fn trace_open_missing_file_is_an_error() {
    let e = open_trace(std::path::Path::new("/nonexistent/trace.txt"), None)
        .err()
        .unwrap();
    assert!(e.message().contains("cannot open"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn trace_parsers_never_panic_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        for format in Format::ALL.into_iter().map(Some).chain([None]) {
            if let Ok(r) = open_reader(Box::new(Cursor::new(bytes.clone())), "fuzz", format) {
                for item in r.take(1000) {
                    if item.is_err() {
                        break;
                    }
                }
            }
        }
    }

    #[test]
    fn trace_parsers_never_panic_on_near_valid_lines(
        sample in 0usize..9,
        pos in 0usize..64,
        byte in prop_oneof![Just(b' '), Just(b'\n'), Just(b':'), Just(b','), Just(b'0'), Just(b'x'), any::<u8>()],
    ) {
        let (format, text) = text_samples()[sample];
        let mut bytes = text.as_bytes().to_vec();
        let i = pos % bytes.len();
        bytes[i] = byte;
        if let Ok(r) = open_reader(Box::new(Cursor::new(bytes)), "fuzz", Some(format)) {
            let _ = r.count();
        }
    }
}

#[test]
fn trace_every_text_format_roundtrips_through_native() {
    let mut samples = text_samples();
    samples.push((
        Format::Pinatrace,
        "0x7f3c4a5b2c30: W 0x7ffd5d0c1e48\n0x1: R 0x10\n#eof\n",
    ));
    for (format, text) in samples {
        if !TEXT_TARGETS.contains(&format) {
            continue;
        }
        let src = temp_file("rt-src.txt", text.as_bytes());
        let native = temp_file("rt.hmt", b"");
        let back = temp_file("rt-back.txt", b"");
        convert(&src, &native, Format::Native, Some(format)).unwrap();
        let rep = convert(&native, &back, format, None).unwrap();
        assert_eq!(rep.from, Format::Native);
        let want = read_all(text.as_bytes(), Some(format));
        let got: Vec<_> = open_trace(&back, Some(format))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            got,
            want,
            "{format}: {}",
            fs::read_to_string(&back).unwrap()
        );
        for p in [src, native, back] {
            fs::remove_file(p).unwrap();
        }
    }
}

#[test]
fn trace_champsim_roundtrips_through_native_and_xz() {
    let mut bytes = Vec::new();
    bytes.extend(encode_champsim_instr(
        0x400000,
        [0, 0],
        [0x7000, 0, 0x7008, 0],
    ));
    bytes.extend(encode_champsim_instr(0x400004, [0, 0], [0; 4]));
    bytes.extend(encode_champsim_instr(
        0x400008,
        [0x8000, 0],
        [0x9000, 0, 0, 0],
    ));
    bytes.extend(encode_champsim_instr(0x40000c, [0, 0], [0; 4]));
    let src = temp_file("cs.champsimtrace.xz", &compress(Compression::Xz, &bytes));
    let native = temp_file("cs.hmt", b"");
    let back = temp_file("cs-back.champsimtrace.xz", b"");
    convert(&src, &native, Format::Native, None).unwrap();
    convert(&native, &back, Format::Champsim, None).unwrap();
    let want = read_all(&bytes, None);
    let got: Vec<_> = open_trace(&back, None)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(got, want);
    for p in [src, native, back] {
        fs::remove_file(p).unwrap();
    }
}

#[test]
fn trace_convert_refuses_records_the_target_cannot_express() {
    let src = temp_file("rt-src.txt", LACKEY.as_bytes());
    let out = temp_file("rt-out.bin", b"");
    let e = convert(&src, &out, Format::RamulatorCpu, None).unwrap_err();
    // Lackey's first access is a store: Ramulator cpu mode only has writebacks after reads.
    assert!(
        e.message().contains("filter the trace through a cache"),
        "{e}"
    );
    // Lackey has no flush: a VANS flush cannot go there.
    let vans = temp_file("rt-vans.txt", b"0x1000 C\n");
    let e = convert(&vans, &out, Format::Lackey, None).unwrap_err();
    assert!(
        e.message().contains("flush") && e.message().contains("record 1"),
        "{e}"
    );
    for p in [src, vans, out] {
        fs::remove_file(p).unwrap();
    }
}

fn real_trace(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/traces")
        .join(name)
}

#[test]
fn trace_real_lackey_counts_match_grep() {
    // Counts from tests/data/traces/README.md.
    let path = real_trace("true.lackey.xz");
    let info = trace_info(&path, None, 5).unwrap();
    assert_eq!(
        (info.format, info.compression),
        (Format::Lackey, Compression::Xz)
    );
    assert_eq!(info.by_kind.get("load"), Some(&27_886));
    assert_eq!(info.by_kind.get("store"), Some(&10_265));
    assert_eq!(info.by_kind.get("modify"), Some(&1_504));
    // The log ends with instructions after the last access: one trailing instr record.
    assert_eq!(info.by_kind.get("instr"), Some(&1));
    assert_eq!(info.records, 27_886 + 10_265 + 1_504 + 1);
    assert_eq!(info.instructions, Some(127_679));
    assert!(info.distinct_pages_4k > 10 && info.distinct_pages_2m <= info.distinct_pages_4k);
    assert_eq!(info.top_pages.len(), 5);

    let native = temp_file("true.hmt", b"");
    convert(&path, &native, Format::Native, None).unwrap();
    let a: Vec<_> = open_trace(&path, None)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let b: Vec<_> = open_trace(&native, None)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(a, b);
    let native_bytes = fs::metadata(&native).unwrap().len();
    assert!(
        native_bytes < fs::metadata(&path).unwrap().len(),
        "native {native_bytes} bytes"
    );
    fs::remove_file(native).unwrap();
}

#[test]
fn trace_live_lackey_recording_reads_back() {
    // Records a tiny trace when Valgrind is installed; says so and skips otherwise.
    let log = temp_file("live.lackey", b"");
    let status = std::process::Command::new("valgrind")
        .args(["--tool=lackey", "--trace-mem=yes"])
        .arg(format!("--log-file={}", log.display()))
        .arg("true")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => {
            let info = trace_info(&log, None, 3).unwrap();
            assert_eq!(info.format, Format::Lackey);
            assert!(
                info.records > 1000 && info.instructions.unwrap() > info.records,
                "{info:?}"
            );
            assert!(info.reads > 0 && info.writes > 0);
        }
        _ => eprintln!("skipped trace_live_lackey_recording_reads_back: valgrind not available"),
    }
    let _ = fs::remove_file(log);
}

#[test]
fn trace_page_level_stream_converts_real_trace_to_native() {
    // What `trace record --page-level` does with a pipe: reduce while converting.
    let path = real_trace("true.lackey.xz");
    let src = fs::File::open(&path).unwrap();
    let reader = open_reader(Box::new(src), "pipe", None).unwrap();
    let mut reduced = PageLevel::new(reader, 4096);
    let out = temp_file("true-pages.hmt", b"");
    let rep = convert_reader(
        &mut reduced,
        &out,
        Format::Native,
        "lackey (page level): /bin/true",
    )
    .unwrap();
    let info = trace_info(&out, None, 3).unwrap();
    assert_eq!(info.records, rep.records);
    assert!(info.records < 39_656 / 2, "{} records", info.records);
    assert_eq!(info.instructions, Some(127_679));
    assert_eq!(
        info.source.as_deref(),
        Some("lackey (page level): /bin/true")
    );
    fs::remove_file(out).unwrap();
}
