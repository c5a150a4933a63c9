//! `trace convert`: any readable trace to native or to a text format that can express it.
//!
//! The output is written to a temporary file beside the target and renamed when complete,
//! so an interrupted conversion never leaves a half trace that looks whole.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::champsim::ChampsimWriter;
use super::error::{Location, TraceError};
use super::native::{NativeHeader, NativeWriter};
use super::writers::{TextWriter, WriteError, TEXT_TARGETS};
use super::{open_trace_watched, Compression, Format, TraceReader};
use crate::scenario::{NoProgress, Progress};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConvertReport {
    pub from: Format,
    pub to: Format,
    pub records: u64,
}

/// What a conversion may make up, only when asked (docs/trace-format.md, "Converting").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConvertOptions {
    /// A record without a cycle gets the previous request's cycle plus this many, in a
    /// target that needs cycles (DRAMsim3). `None`: such a record stops the conversion.
    pub synthetic_cycle_step: Option<u64>,
}

/// Converts `input` (format sniffed unless `from` is given) to `output` in format `to`.
/// Text output is compressed when `output` ends in `.gz`, `.xz`, `.zst` or `.bz2`.
pub fn convert(
    input: &Path,
    output: &Path,
    to: Format,
    from: Option<Format>,
) -> Result<ConvertReport, TraceError> {
    convert_with(input, output, to, from, ConvertOptions::default())
}

/// [`convert`] with `options`.
pub fn convert_with(
    input: &Path,
    output: &Path,
    to: Format,
    from: Option<Format>,
    options: ConvertOptions,
) -> Result<ConvertReport, TraceError> {
    convert_watched(input, output, to, from, options, &NoProgress)
}

/// [`convert_with`], reporting progress through the input file to `progress`.
pub fn convert_watched(
    input: &Path,
    output: &Path,
    to: Format,
    from: Option<Format>,
    options: ConvertOptions,
    progress: &dyn Progress,
) -> Result<ConvertReport, TraceError> {
    check_target(output, to)?;
    let mut reader = open_trace_watched(input, from, progress)?;
    let source = format!("{}: {}", reader.format(), input.display());
    convert_reader_with(&mut reader, output, to, &source, options)
}

/// Writes everything `reader` yields to `output` in format `to`: the streaming half of
/// [`convert`], for traces arriving on a pipe (`trace record`). `source` goes into a
/// native header.
pub fn convert_reader(
    reader: &mut dyn TraceReader,
    output: &Path,
    to: Format,
    source: &str,
) -> Result<ConvertReport, TraceError> {
    convert_reader_with(reader, output, to, source, ConvertOptions::default())
}

fn convert_reader_with(
    reader: &mut dyn TraceReader,
    output: &Path,
    to: Format,
    source: &str,
    options: ConvertOptions,
) -> Result<ConvertReport, TraceError> {
    check_target(output, to)?;
    let out_name = output.display().to_string();
    let out_err =
        |e: io::Error| TraceError::new(&out_name, Location::File, format!("cannot write: {e}"));
    let from = reader.format();
    let tmp = temp_path(output);
    let result = (|| {
        let file = BufWriter::with_capacity(1 << 20, File::create(&tmp).map_err(out_err)?);
        let records = match to {
            Format::Native => {
                let header = NativeHeader {
                    kind: reader.native_header().map_or(from.trace_kind(), |h| h.kind),
                    source: source.to_string(),
                    ..NativeHeader::default()
                };
                write_native(reader, file, &header, &out_name)?
            }
            _ => {
                let mut enc = Compression::from_extension(output)
                    .encoder(file)
                    .map_err(out_err)?;
                let n = if to == Format::Champsim {
                    // Zero gaps mean "same instruction" only where the source counts them.
                    let merge = from.has_instructions() || from == Format::Native;
                    write_champsim(reader, merge, &mut enc, &out_name)?
                } else {
                    write_text(reader, to, &mut enc, &out_name, options)?
                };
                enc.finish().map_err(out_err)?;
                n
            }
        };
        fs::rename(&tmp, output).map_err(out_err)?;
        Ok(records)
    })();
    match result {
        Ok(records) => Ok(ConvertReport { from, to, records }),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

fn check_target(output: &Path, to: Format) -> Result<(), TraceError> {
    // The output is written beside and renamed into place: over a device (`/dev/null`) or
    // a folder that rename would replace the node itself, so refuse them up front.
    if let Ok(meta) = fs::metadata(output) {
        if !meta.is_file() {
            return Err(TraceError::new(
                &output.display().to_string(),
                Location::File,
                "exists and is not a regular file (a device or a folder); convert writes a new file",
            ));
        }
    }
    if matches!(to, Format::Native | Format::Champsim) || TEXT_TARGETS.contains(&to) {
        return Ok(());
    }
    let names: Vec<&str> = TEXT_TARGETS.iter().map(|f| f.name()).collect();
    let m = format!(
        "cannot convert to {to}: the targets are native, champsim, {}",
        names.join(", ")
    );
    Err(TraceError::new(
        &output.display().to_string(),
        Location::File,
        m,
    ))
}

fn temp_path(output: &Path) -> PathBuf {
    let mut name = output
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".tmp-{}", std::process::id()));
    output.with_file_name(name)
}

fn write_native<W: Write>(
    reader: &mut dyn TraceReader,
    w: W,
    header: &NativeHeader,
    out_name: &str,
) -> Result<u64, TraceError> {
    let out_err =
        |e: io::Error| TraceError::new(out_name, Location::File, format!("cannot write: {e}"));
    let mut writer = NativeWriter::new(w, header).map_err(out_err)?;
    let mut batch = Vec::with_capacity(8192);
    while reader.read_batch(&mut batch, 8192)? > 0 {
        for r in &batch {
            writer.write(r).map_err(out_err)?;
        }
    }
    let n = writer.records();
    writer.finish().map_err(out_err)?;
    Ok(n)
}

/// Writes records as ChampSim binary; returns the records read.
pub fn write_champsim(
    reader: &mut dyn TraceReader,
    merge_zero_gaps: bool,
    w: &mut dyn Write,
    out_name: &str,
) -> Result<u64, TraceError> {
    let out_err =
        |e: io::Error| TraceError::new(out_name, Location::File, format!("cannot write: {e}"));
    let mut writer = ChampsimWriter::new(merge_zero_gaps);
    let mut n = 0;
    for r in reader {
        let r = r?;
        n += 1;
        match writer.write(&r, w) {
            Ok(io) => io.map_err(out_err)?,
            Err(m) => {
                let m = format!("{m} (record {n})");
                return Err(TraceError::new(out_name, Location::File, m));
            }
        }
    }
    writer.flush(w).map_err(out_err)?;
    Ok(n)
}

/// Writes records as text in `format` (one of [`super::writers::TEXT_TARGETS`]); returns
/// the records read.
pub fn write_text(
    reader: &mut dyn TraceReader,
    format: Format,
    w: &mut dyn Write,
    out_name: &str,
    options: ConvertOptions,
) -> Result<u64, TraceError> {
    let out_err =
        |e: io::Error| TraceError::new(out_name, Location::File, format!("cannot write: {e}"));
    let mut writer = TextWriter::new(format, reader.format()).ok_or_else(|| {
        TraceError::new(
            out_name,
            Location::File,
            format!("{format} is not a text format hmsim writes"),
        )
    })?;
    writer.synthetic_cycle_step = options.synthetic_cycle_step;
    let mut n = 0;
    for r in reader {
        let r = r?;
        n += 1;
        writer.write(&r, w).map_err(|e| match e {
            WriteError::Io(e) => out_err(e),
            WriteError::Inexpressible(m) => {
                TraceError::new(out_name, Location::File, format!("{m} (record {n})"))
            }
        })?;
    }
    writer.finish(w).map_err(out_err)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::super::open_trace;
    use super::super::tests_util::temp_file;
    use super::*;

    #[test]
    fn trace_convert_lackey_to_native_and_back() {
        let text = "I  04010aa0,3\n S 1ffefffb48,8\n I  04010aa3,5\n I  04010aa8,4\n L 04a2b1c0,4\n M 0421d4e8,4\n";
        let src = temp_file("conv-src.txt", text.as_bytes());
        let native = temp_file("conv.hmt", b"");
        let back = temp_file("conv-back.txt.gz", b"");
        let rep = convert(&src, &native, Format::Native, None).unwrap();
        assert_eq!((rep.from, rep.records), (Format::Lackey, 3));
        let orig: Vec<_> = open_trace(&src, None)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let conv: Vec<_> = open_trace(&native, None)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(orig, conv);
        convert(&native, &back, Format::Lackey, None).unwrap();
        let again: Vec<_> = open_trace(&back, None)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let key = |v: &[super::super::TraceRecord]| {
            v.iter()
                .map(|r| (r.kind, r.address, r.size, r.inst_gap))
                .collect::<Vec<_>>()
        };
        assert_eq!(key(&again), key(&orig));
        for p in [src, native, back] {
            let _ = fs::remove_file(p);
        }
    }

    #[test]
    fn trace_convert_refuses_zero_cycles_and_zero_sectors_unless_asked() {
        let src = temp_file("conv-nocycle.txt", b" L 04a2b1c0,8\n S 04a2b200,8\n");
        let out = temp_file("conv-nocycle.dramsim", b"");
        let _ = fs::remove_file(&out);
        let e = convert(&src, &out, Format::Dramsim, None).unwrap_err();
        assert!(e.message().contains("--synthetic-cycles"), "{e}");
        assert!(!out.exists(), "no half-written output");
        let options = ConvertOptions {
            synthetic_cycle_step: Some(10),
        };
        convert_with(&src, &out, Format::Dramsim, None, options).unwrap();
        assert_eq!(
            fs::read_to_string(&out).unwrap(),
            "0x4a2b1c0 READ 10\n0x4a2b200 WRITE 20\n"
        );
        let blocks = temp_file("conv-nocycle.mqsim", b"");
        let _ = fs::remove_file(&blocks);
        let e = convert(&src, &blocks, Format::Mqsim, None).unwrap_err();
        assert!(e.message().contains("512 B sectors"), "{e}");
        assert!(!blocks.exists());
        for f in [src, out] {
            let _ = fs::remove_file(f);
        }
    }

    #[test]
    fn trace_convert_multithreaded_zstd_and_xz_round_trip_and_repeat_bytes() {
        let text: String = (0..50_000)
            .map(|i| format!(" L {:08x},8\n", (i * 4160) % (1 << 28)))
            .collect();
        let src = temp_file("conv-mt.txt", text.as_bytes());
        let want: Vec<_> = open_trace(&src, None)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for ext in ["zst", "xz"] {
            let a = temp_file(&format!("conv-mt-a.lackey.{ext}"), b"");
            let b = temp_file(&format!("conv-mt-b.lackey.{ext}"), b"");
            convert(&src, &a, Format::Lackey, None).unwrap();
            convert(&src, &b, Format::Lackey, None).unwrap();
            assert_eq!(fs::read(&a).unwrap(), fs::read(&b).unwrap(), "{ext}");
            let got: Vec<_> = open_trace(&a, None).unwrap().map(Result::unwrap).collect();
            assert_eq!(got, want, "{ext}");
            for f in [a, b] {
                let _ = fs::remove_file(f);
            }
        }
        let _ = fs::remove_file(src);
    }

    #[test]
    fn trace_convert_refuses_what_lackey_cannot_say() {
        let src = temp_file(
            "conv-kmem.txt",
            b"  a-1  [000] .... 1.0: mm_page_free: page=0x1 pfn=0x2 order=0\n",
        );
        let out = temp_file("conv-kmem.lackey", b"");
        let _ = fs::remove_file(&out);
        let e = convert(&src, &out, Format::Lackey, None).unwrap_err();
        assert!(e.message().contains("free"), "{e}");
        assert!(!out.exists(), "no half-written output");
        let _ = fs::remove_file(src);
    }
}
