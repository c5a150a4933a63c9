//! `trace convert`: any readable trace to native or to a text format that can express it.
//!
//! The output is written to a temporary file beside the target and renamed when complete,
//! so an interrupted conversion never leaves a half trace that looks whole.
//!
//! Lackey and ChampSim spell out every instruction (a lackey `I` line, a 64 B ChampSim
//! record), so an instruction gap expands: one record of a Ramulator cpu trace with
//! 4294967296 bubbles is 60 GB of lackey. The output is therefore bounded
//! ([`ConvertOptions::max_output_bytes`]): a record whose expansion would pass the limit is
//! refused before it is written. A conversion also stops, removing its temporary file, when
//! its [`Cancel`] is set (the Python side sets it on SIGINT/SIGTERM).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::Serialize;

use super::champsim::ChampsimWriter;
use super::error::{Location, TraceError};
use super::native::{NativeHeader, NativeWriter};
use super::writers::{TextWriter, WriteError, TEXT_TARGETS};
use super::{open_trace_watched, Compression, Format, TraceReader, TraceRecord};
use crate::progress::{NoProgress, Progress};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConvertReport {
    pub from: Format,
    pub to: Format,
    pub records: u64,
}

/// The output limit when none is given: this many times the input file's size...
pub const DEFAULT_OUTPUT_PER_INPUT_BYTE: u64 = 1000;
/// ... and at least this (1 GiB).
pub const MIN_DEFAULT_OUTPUT_BYTES: u64 = 1 << 30;

/// What a conversion may make up, only when asked (docs/trace-format.md, "Converting"),
/// how much it may write, and how to stop it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConvertOptions {
    /// A record without a cycle gets the previous request's cycle plus this many, in a
    /// target that needs cycles (DRAMsim3). `None`: such a record stops the conversion.
    pub synthetic_cycle_step: Option<u64>,
    /// Most bytes a text or ChampSim output may have (before compression). `None`: the
    /// default, [`DEFAULT_OUTPUT_PER_INPUT_BYTE`] times the input file's size and at least
    /// [`MIN_DEFAULT_OUTPUT_BYTES`]; `Some(0)`: no limit.
    pub max_output_bytes: Option<u64>,
    /// Set from another thread to stop the conversion (within one batch of records).
    pub cancel: Cancel,
}

/// A flag another thread sets to stop long work; clones share the flag.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Asks the work to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Two cancels are equal when they share the flag.
impl PartialEq for Cancel {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Cancel {}

const INTERRUPTED: &str = "conversion interrupted; the partial output was removed";

fn interrupted(out_name: &str) -> TraceError {
    TraceError::new(out_name, Location::File, INTERRUPTED)
}

/// The limit a conversion works to: `u64::MAX` for none.
fn output_limit(options: &ConvertOptions, input_bytes: Option<u64>) -> (u64, String) {
    match options.max_output_bytes {
        Some(0) => (u64::MAX, String::new()),
        Some(n) => (n, format!("{n} bytes (--max-output-bytes)")),
        None => {
            let n = input_bytes
                .unwrap_or(0)
                .saturating_mul(DEFAULT_OUTPUT_PER_INPUT_BYTE)
                .max(MIN_DEFAULT_OUTPUT_BYTES);
            (
                n,
                format!("{n} bytes (the default: {DEFAULT_OUTPUT_PER_INPUT_BYTE} times the input's size, at least 1 GiB)"),
            )
        }
    }
}

/// The output of a text or ChampSim conversion: counts what is written, refuses to pass
/// the limit and stops when cancelled (checked on every write, so a record that expands
/// into many lines stops too).
struct Guarded<'a> {
    inner: &'a mut dyn Write,
    written: u64,
    limit: u64,
    cancel: &'a Cancel,
    /// Why the last write failed, when it was the guard's doing.
    stopped: Option<Stop>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancelled,
    Limit,
}

impl Write for Guarded<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.cancel.is_cancelled() {
            self.stopped = Some(Stop::Cancelled);
            return Err(io::Error::other(INTERRUPTED));
        }
        if self.written.saturating_add(buf.len() as u64) > self.limit {
            self.stopped = Some(Stop::Limit);
            return Err(io::Error::other("output limit reached"));
        }
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl Guarded<'_> {
    /// The error for a failed write of record `n`: the guard's reason, or the I/O error.
    fn error(
        &self,
        e: io::Error,
        n: u64,
        to: Format,
        limit_text: &str,
        out_name: &str,
    ) -> TraceError {
        match self.stopped {
            Some(Stop::Cancelled) => interrupted(out_name),
            Some(Stop::Limit) => TraceError::new(
                out_name,
                Location::File,
                format!(
                    "record {n}: the {to} output would pass the limit of {limit_text}; \
                     pass --max-output-bytes N to raise it (0: no limit)"
                ),
            ),
            None => TraceError::new(out_name, Location::File, format!("cannot write: {e}")),
        }
    }

    /// Refuses up front a record whose instruction gap `to` spells out past the limit.
    fn check_expansion(
        &self,
        r: &TraceRecord,
        n: u64,
        to: Format,
        limit_text: &str,
        out_name: &str,
    ) -> Result<(), TraceError> {
        let (per_instr, what) = match to {
            Format::Lackey => (LACKEY_INSTR_LINE_BYTES, "lackey 'I' line"),
            Format::Champsim => (
                super::champsim::RECORD_BYTES as u64,
                "64-byte ChampSim record",
            ),
            _ => return Ok(()),
        };
        let bytes = r.inst_gap.saturating_mul(per_instr);
        if self.written.saturating_add(bytes) <= self.limit {
            return Ok(());
        }
        Err(TraceError::new(
            out_name,
            Location::File,
            format!(
                "record {n} has an instruction gap of {}, one {what} per instruction \
                 ({bytes} bytes): the output would pass the limit of {limit_text}; \
                 pass --max-output-bytes N to raise it (0: no limit)",
                r.inst_gap
            ),
        ))
    }
}

/// Bytes of one lackey `I` line as the writer spells it (`I  00000000,0\n`).
const LACKEY_INSTR_LINE_BYTES: u64 = super::writers::LACKEY_INSTR_LINE.len() as u64;

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
    let input_bytes = fs::metadata(input).ok().map(|m| m.len());
    convert_reader_with(&mut reader, output, to, &source, &options, input_bytes)
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
    convert_reader_with(reader, output, to, source, &ConvertOptions::default(), None)
}

/// [`convert_reader`] with `options`; `input_bytes` (the input file's size, when known)
/// sets the default output limit.
pub fn convert_reader_with(
    reader: &mut dyn TraceReader,
    output: &Path,
    to: Format,
    source: &str,
    options: &ConvertOptions,
    input_bytes: Option<u64>,
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
                write_native(reader, file, &header, &out_name, &options.cancel)?
            }
            _ => {
                let mut enc = Compression::from_extension(output)
                    .encoder(file)
                    .map_err(out_err)?;
                let n = if to == Format::Champsim {
                    // Zero gaps mean "same instruction" only where the source counts them.
                    let merge = from.has_instructions() || from == Format::Native;
                    write_champsim(reader, merge, &mut enc, &out_name, options, input_bytes)?
                } else {
                    write_text(reader, to, &mut enc, &out_name, options, input_bytes)?
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
    cancel: &Cancel,
) -> Result<u64, TraceError> {
    let out_err =
        |e: io::Error| TraceError::new(out_name, Location::File, format!("cannot write: {e}"));
    let mut writer = NativeWriter::new(w, header).map_err(out_err)?;
    let mut batch = Vec::with_capacity(8192);
    while reader.read_batch(&mut batch, 8192)? > 0 {
        if cancel.is_cancelled() {
            return Err(interrupted(out_name));
        }
        for r in &batch {
            writer.write(r).map_err(out_err)?;
        }
    }
    let n = writer.records();
    writer.finish().map_err(out_err)?;
    Ok(n)
}

/// Writes records as ChampSim binary; returns the records read.
pub(super) fn write_champsim(
    reader: &mut dyn TraceReader,
    merge_zero_gaps: bool,
    w: &mut dyn Write,
    out_name: &str,
    options: &ConvertOptions,
    input_bytes: Option<u64>,
) -> Result<u64, TraceError> {
    let (limit, limit_text) = output_limit(options, input_bytes);
    let mut w = Guarded {
        inner: w,
        written: 0,
        limit,
        cancel: &options.cancel,
        stopped: None,
    };
    let to = Format::Champsim;
    let mut writer = ChampsimWriter::new(merge_zero_gaps);
    let mut n = 0;
    for r in reader {
        let r = r?;
        n += 1;
        if options.cancel.is_cancelled() {
            return Err(interrupted(out_name)); // also when records write nothing
        }
        w.check_expansion(&r, n, to, &limit_text, out_name)?;
        match writer.write(&r, &mut w) {
            Ok(io) => io.map_err(|e| w.error(e, n, to, &limit_text, out_name))?,
            Err(m) => {
                let m = format!("{m} (record {n})");
                return Err(TraceError::new(out_name, Location::File, m));
            }
        }
    }
    writer
        .flush(&mut w)
        .map_err(|e| w.error(e, n, to, &limit_text, out_name))?;
    Ok(n)
}

/// Writes records as text in `format` (one of [`super::writers::TEXT_TARGETS`]); returns
/// the records read.
pub fn write_text(
    reader: &mut dyn TraceReader,
    format: Format,
    w: &mut dyn Write,
    out_name: &str,
    options: &ConvertOptions,
    input_bytes: Option<u64>,
) -> Result<u64, TraceError> {
    let (limit, limit_text) = output_limit(options, input_bytes);
    let mut w = Guarded {
        inner: w,
        written: 0,
        limit,
        cancel: &options.cancel,
        stopped: None,
    };
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
        if options.cancel.is_cancelled() {
            return Err(interrupted(out_name)); // also when records write nothing
        }
        w.check_expansion(&r, n, format, &limit_text, out_name)?;
        writer.write(&r, &mut w).map_err(|e| match e {
            WriteError::Io(e) => w.error(e, n, format, &limit_text, out_name),
            WriteError::Inexpressible(m) => {
                TraceError::new(out_name, Location::File, format!("{m} (record {n})"))
            }
        })?;
    }
    writer
        .finish(&mut w)
        .map_err(|e| w.error(e, n, format, &limit_text, out_name))?;
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
            ..ConvertOptions::default()
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

    /// No leftover `NAME.tmp-PID` beside `out`.
    fn no_temp(out: &Path) -> bool {
        !temp_path(out).exists()
    }

    /// One Ramulator cpu line of 2^32 bubbles (16 bytes) would be 60 GB of lackey `I`
    /// lines or 275 GB of ChampSim: refused before anything is written, naming the record
    /// and the flag.
    #[test]
    fn trace_convert_refuses_a_gap_that_expands_past_the_output_limit() {
        let src = temp_file("conv-gap.txt", b"4294967296 4096\n");
        for (name, to) in [
            ("conv-gap.lackey", Format::Lackey),
            ("conv-gap.lackey.zst", Format::Lackey),
            ("conv-gap.champsim", Format::Champsim),
        ] {
            let out = temp_file(name, b"");
            let _ = fs::remove_file(&out);
            let t = std::time::Instant::now();
            let e = convert(&src, &out, to, None).unwrap_err();
            assert!(t.elapsed().as_secs() < 5, "refused up front");
            assert_eq!(e.file(), out.display().to_string());
            let m = e.message();
            assert!(
                m.contains("record 1 has an instruction gap of 4294967297"),
                "{m}"
            );
            assert!(m.contains("--max-output-bytes"), "{m}");
            assert!(m.contains("1073741824 bytes"), "{m}");
            assert!(!out.exists() && no_temp(&out), "{name}");
        }
        // A stated limit holds for every record, not only for one big gap.
        let lines: String = (0..1000).map(|i| format!("3 {}\n", i * 64)).collect();
        let many = temp_file("conv-gap-many.txt", lines.as_bytes());
        let out = temp_file("conv-gap-many.lackey", b"");
        let _ = fs::remove_file(&out);
        let options = ConvertOptions {
            max_output_bytes: Some(10_000),
            ..ConvertOptions::default()
        };
        let e = convert_with(&many, &out, Format::Lackey, None, options).unwrap_err();
        assert!(e.message().contains("limit of 10000 bytes"), "{e}");
        assert!(!out.exists() && no_temp(&out));
        // Within the limit, or with the limit lifted, it converts.
        let options = ConvertOptions {
            max_output_bytes: Some(0),
            ..ConvertOptions::default()
        };
        convert_with(&many, &out, Format::Lackey, None, options).unwrap();
        // 4 `I` lines (3 bubbles and the load's own instruction) and ` L 0000xxxx,64`.
        assert_eq!(fs::read(&out).unwrap().len(), 1000 * (4 * 14 + 15));
        for f in [src, many, out] {
            let _ = fs::remove_file(f);
        }
    }

    /// A conversion told to stop does so at once, even inside one record's gap, and
    /// removes its temporary file.
    #[test]
    fn trace_convert_stops_when_cancelled_and_removes_its_temp_file() {
        let src = temp_file("conv-cancel.txt", b"4294967296 4096\n");
        let out = temp_file("conv-cancel.lackey.zst", b"");
        let _ = fs::remove_file(&out);
        let options = ConvertOptions {
            max_output_bytes: Some(0),
            ..ConvertOptions::default()
        };
        let cancel = options.cancel.clone();
        let t = std::time::Instant::now();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            cancel.cancel();
        });
        let e = convert_with(&src, &out, Format::Lackey, None, options).unwrap_err();
        stopper.join().unwrap();
        assert!(t.elapsed().as_secs() < 10, "stopped promptly");
        assert!(e.message().contains("interrupted"), "{e}");
        assert!(!out.exists() && no_temp(&out));
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
