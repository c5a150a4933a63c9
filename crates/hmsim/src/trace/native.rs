//! The hmsim native trace format: a small header, then zstd-compressed blocks of
//! delta-encoded records. Byte layout in `docs/trace-format.md`; keep the two in step.
//!
//! Deltas restart at every block so a block decodes on its own (and a corrupt block cannot
//! poison the rest). Records are decoded straight from the decompressed block buffer: no
//! allocation per record or per block once the buffers have grown.

use std::io::{self, ErrorKind, Read, Write};

use super::error::{Location, TraceError};
use super::format::TraceKind;
use super::record::{Kind, TraceRecord, NO_CYCLE, NO_ID, NO_MIGRATETYPE, NO_TIME};
use super::varint::{self, unzigzag, zigzag};
use super::{Format, TraceReader};

pub const MAGIC: &[u8; 8] = b"HMSIMTRC";
pub const VERSION: u16 = 1;
const FIXED_HEADER: usize = 18;
const BLOCK_HEADER: usize = 12;
/// Writers flush a block once its raw bytes reach this; about 100k records.
pub const BLOCK_TARGET: usize = 512 * 1024;
/// Zero bytes after each decompressed block.
const PAD: usize = 32;
/// Readers refuse larger blocks: a corrupt length must not allocate gigabytes.
pub const MAX_BLOCK: usize = 64 * 1024 * 1024;

// Tag byte: bits 0-3 kind, then which optional parts follow.
const F_SIZE: u8 = 1 << 4;
const F_GAP: u8 = 1 << 5;
const F_EXTRA: u8 = 1 << 6;
const F_RESERVED: u8 = 1 << 7;
// Extra byte: which rarely-present fields follow, in this order.
const X_TIME: u8 = 1 << 0;
const X_CYCLE: u8 = 1 << 1;
const X_CPU: u8 = 1 << 2;
const X_DEVICE: u8 = 1 << 3;
const X_ORDER: u8 = 1 << 4;
const X_MIGRATE: u8 = 1 << 5;
const X_GFP: u8 = 1 << 6;
const X_RESERVED: u8 = 1 << 7;

/// The native file header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeHeader {
    pub kind: TraceKind,
    /// Significant address bits (informational: 48 for x86-64 virtual addresses).
    pub address_bits: u8,
    pub page_size: u32,
    /// Where the trace came from (tool, command line, original file).
    pub source: String,
}

impl Default for NativeHeader {
    fn default() -> Self {
        NativeHeader {
            kind: TraceKind::Access,
            address_bits: 64,
            page_size: 4096,
            source: String::new(),
        }
    }
}

/// Delta state, reset at each block.
#[derive(Default, Clone, Copy)]
struct Delta {
    addr: u64,
    size: u32,
    time: u64,
    cycle: u64,
}

/// Writes a native trace. Call [`NativeWriter::finish`]: without it the file has no end
/// marker and readers report it as truncated.
pub struct NativeWriter<W: Write> {
    w: W,
    raw: Vec<u8>,
    comp: Vec<u8>,
    n: u32,
    delta: Delta,
    cx: zstd::bulk::Compressor<'static>,
    records: u64,
}

impl<W: Write> NativeWriter<W> {
    pub fn new(mut w: W, header: &NativeHeader) -> io::Result<Self> {
        // Cut an over-long source at a character boundary so it stays valid UTF-8.
        let mut cut = header.source.len().min(u16::MAX as usize);
        while !header.source.is_char_boundary(cut) {
            cut -= 1;
        }
        let source = &header.source.as_bytes()[..cut];
        let mut h = Vec::with_capacity(FIXED_HEADER + source.len());
        h.extend_from_slice(MAGIC);
        h.extend_from_slice(&VERSION.to_le_bytes());
        h.push(header.kind as u8);
        h.push(header.address_bits);
        h.extend_from_slice(&header.page_size.to_le_bytes());
        h.extend_from_slice(&(source.len() as u16).to_le_bytes());
        h.extend_from_slice(source);
        w.write_all(&h)?;
        Ok(NativeWriter {
            w,
            raw: Vec::with_capacity(BLOCK_TARGET + 128),
            comp: Vec::new(),
            n: 0,
            delta: Delta::default(),
            cx: {
                let mut cx = zstd::bulk::Compressor::new(3)?;
                // A checksum per block turns silent corruption into an error.
                cx.include_checksum(true)?;
                cx
            },
            records: 0,
        })
    }

    pub fn write(&mut self, r: &TraceRecord) -> io::Result<()> {
        let d = &mut self.delta;
        let out = &mut self.raw;
        let mut extra = 0u8;
        if r.timestamp_ns != NO_TIME {
            extra |= X_TIME;
        }
        if r.cycle != NO_CYCLE {
            extra |= X_CYCLE;
        }
        if r.cpu != NO_ID {
            extra |= X_CPU;
        }
        if r.device != NO_ID {
            extra |= X_DEVICE;
        }
        if r.order != 0 {
            extra |= X_ORDER;
        }
        if r.migratetype != NO_MIGRATETYPE {
            extra |= X_MIGRATE;
        }
        if r.gfp != 0 {
            extra |= X_GFP;
        }
        let mut tag = r.kind as u8;
        if r.size != d.size {
            tag |= F_SIZE;
        }
        if r.inst_gap != 0 {
            tag |= F_GAP;
        }
        if extra != 0 {
            tag |= F_EXTRA;
        }
        out.push(tag);
        varint::put(out, zigzag(r.address.wrapping_sub(d.addr) as i64));
        d.addr = r.address;
        if tag & F_SIZE != 0 {
            varint::put(out, r.size as u64);
            d.size = r.size;
        }
        if tag & F_GAP != 0 {
            varint::put(out, r.inst_gap);
        }
        if extra != 0 {
            out.push(extra);
            if extra & X_TIME != 0 {
                varint::put(out, zigzag(r.timestamp_ns.wrapping_sub(d.time) as i64));
                d.time = r.timestamp_ns;
            }
            if extra & X_CYCLE != 0 {
                varint::put(out, zigzag(r.cycle.wrapping_sub(d.cycle) as i64));
                d.cycle = r.cycle;
            }
            if extra & X_CPU != 0 {
                varint::put(out, r.cpu as u64);
            }
            if extra & X_DEVICE != 0 {
                varint::put(out, r.device as u64);
            }
            if extra & X_ORDER != 0 {
                out.push(r.order);
            }
            if extra & X_MIGRATE != 0 {
                out.push(r.migratetype);
            }
            if extra & X_GFP != 0 {
                varint::put(out, r.gfp as u64);
            }
        }
        self.n += 1;
        self.records += 1;
        if self.raw.len() >= BLOCK_TARGET || self.n == u32::MAX {
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> io::Result<()> {
        if self.n == 0 {
            return Ok(());
        }
        self.comp.clear();
        self.comp
            .reserve(zstd::zstd_safe::compress_bound(self.raw.len()));
        self.cx.compress_to_buffer(&self.raw, &mut self.comp)?;
        let mut h = [0u8; BLOCK_HEADER];
        h[0..4].copy_from_slice(&(self.raw.len() as u32).to_le_bytes());
        h[4..8].copy_from_slice(&(self.comp.len() as u32).to_le_bytes());
        h[8..12].copy_from_slice(&self.n.to_le_bytes());
        self.w.write_all(&h)?;
        self.w.write_all(&self.comp)?;
        self.raw.clear();
        self.n = 0;
        self.delta = Delta::default();
        Ok(())
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Writes the last block and the end marker; returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_block()?;
        self.w.write_all(&[0u8; BLOCK_HEADER])?;
        self.w.flush()?;
        Ok(self.w)
    }
}

/// Reads a native trace.
pub struct NativeReader {
    src: Box<dyn Read + Send>,
    file: String,
    header: NativeHeader,
    comp: Vec<u8>,
    /// Decompressed block plus [`PAD`] zero bytes, so the decoder can load 8 bytes at any
    /// record position without a bounds branch per field.
    raw: Vec<u8>,
    raw_len: usize,
    pos: usize,
    left: u32,
    delta: Delta,
    dx: zstd::bulk::Decompressor<'static>,
    /// File offset of the current block's header, for error messages.
    block_offset: u64,
    next_offset: u64,
    done: bool,
}

impl NativeReader {
    /// Reads and checks the header.
    pub fn new(mut src: Box<dyn Read + Send>, file: &str) -> Result<Self, TraceError> {
        let err = |at: u64, m: String| TraceError::new(file, Location::Byte(at), m);
        let mut fixed = [0u8; FIXED_HEADER];
        read_full(&mut src, &mut fixed).map_err(|e| err(0, header_read_error(e)))?;
        if &fixed[0..8] != MAGIC {
            return Err(err(
                0,
                "not an hmsim native trace: expected magic 'HMSIMTRC'".into(),
            ));
        }
        let version = u16::from_le_bytes([fixed[8], fixed[9]]);
        if version != VERSION {
            return Err(err(
                8,
                format!("native trace version {version}; this hmsim reads version {VERSION}"),
            ));
        }
        let kind = TraceKind::from_u8(fixed[10]).ok_or_else(|| {
            err(
                10,
                format!("unknown trace kind {}; expected 0, 1 or 2", fixed[10]),
            )
        })?;
        let address_bits = fixed[11];
        if !(1..=64).contains(&address_bits) {
            return Err(err(
                11,
                format!("address width {address_bits} bits; expected 1..=64"),
            ));
        }
        let page_size = u32::from_le_bytes(fixed[12..16].try_into().unwrap());
        let source_len = u16::from_le_bytes([fixed[16], fixed[17]]) as usize;
        let mut source = vec![0u8; source_len];
        read_full(&mut src, &mut source)
            .map_err(|e| err(FIXED_HEADER as u64, header_read_error(e)))?;
        let source =
            String::from_utf8(source).map_err(|_| err(18, "header source is not UTF-8".into()))?;
        let header = NativeHeader {
            kind,
            address_bits,
            page_size,
            source,
        };
        let start = (FIXED_HEADER + source_len) as u64;
        Ok(NativeReader {
            src,
            file: file.to_string(),
            header,
            comp: Vec::new(),
            raw: Vec::new(),
            raw_len: 0,
            pos: 0,
            left: 0,
            delta: Delta::default(),
            dx: zstd::bulk::Decompressor::new().map_err(|e| err(0, e.to_string()))?,
            block_offset: start,
            next_offset: start,
            done: false,
        })
    }

    pub fn header(&self) -> &NativeHeader {
        &self.header
    }

    fn err(&self, at: u64, m: impl Into<String>) -> TraceError {
        TraceError::new(&self.file, Location::Byte(at), m)
    }

    /// Loads the next block; `Ok(false)` at the end marker.
    fn load_block(&mut self) -> Result<bool, TraceError> {
        if self.pos != self.raw_len {
            return Err(self.err(
                self.block_offset,
                "corrupt block: bytes left after its last record",
            ));
        }
        self.block_offset = self.next_offset;
        let at = self.block_offset;
        let mut h = [0u8; BLOCK_HEADER];
        read_full(&mut self.src, &mut h).map_err(|e| {
            let m = if e.kind() == ErrorKind::UnexpectedEof {
                "truncated native trace: the file ends before its end marker".to_string()
            } else {
                format!("cannot read: {e}")
            };
            self.err(at, m)
        })?;
        let raw_len = u32::from_le_bytes(h[0..4].try_into().unwrap()) as usize;
        let comp_len = u32::from_le_bytes(h[4..8].try_into().unwrap()) as usize;
        let n = u32::from_le_bytes(h[8..12].try_into().unwrap());
        if raw_len == 0 && comp_len == 0 && n == 0 {
            return Ok(false);
        }
        if raw_len > MAX_BLOCK
            || comp_len > MAX_BLOCK + MAX_BLOCK / 64
            || n == 0
            || n as usize > raw_len
        {
            let m = format!(
                "corrupt block header ({raw_len} raw bytes, {comp_len} compressed, {n} records)"
            );
            return Err(self.err(at, m));
        }
        self.comp.resize(comp_len, 0);
        read_full(&mut self.src, &mut self.comp)
            .map_err(|_| self.err(at, "truncated native trace: the last block is cut short"))?;
        self.raw.clear();
        self.raw.reserve(raw_len + PAD);
        match self.dx.decompress_to_buffer(&self.comp, &mut self.raw) {
            Ok(got) if got == raw_len => {}
            Ok(got) => {
                return Err(self.err(
                    at,
                    format!("corrupt block: {got} bytes decompressed, header says {raw_len}"),
                ))
            }
            Err(e) => return Err(self.err(at, format!("corrupt block: {e}"))),
        }
        self.raw.extend_from_slice(&[0; PAD]);
        self.raw_len = raw_len;
        self.next_offset = at + (BLOCK_HEADER + comp_len) as u64;
        self.pos = 0;
        self.left = n;
        self.delta = Delta::default();
        Ok(true)
    }

    /// Reports a corrupt record and ends the stream.
    fn bad_record(&mut self) -> TraceError {
        let at = self.pos;
        self.done = true;
        self.left = 0;
        self.pos = self.raw_len;
        self.err(
            self.block_offset,
            format!(
                "corrupt record at byte {} of the block's decompressed data",
                at
            ),
        )
    }

    /// Decodes one record from the current block.
    #[inline(always)]
    fn decode(&mut self) -> Option<TraceRecord> {
        let mut r = TraceRecord::default();
        self.decode_into(&mut r).map(|_| r)
    }

    /// Decodes one record into `r`, writing every field. Filling the destination in place
    /// (rather than returning a record to be copied) avoids a store-forwarding stall per
    /// record on the batch path.
    #[inline(always)]
    fn decode_into(&mut self, r: &mut TraceRecord) -> Option<()> {
        let buf = &self.raw[..];
        let d = &mut self.delta;
        let mut p = self.pos;
        let tag = *buf.get(p)?;
        p += 1;
        if tag & F_RESERVED != 0 {
            return None;
        }
        r.kind = Kind::from_u8(tag & 0x0f)?;
        let (delta, n) = varint::peek(buf, p)?;
        p += n;
        d.addr = d.addr.wrapping_add(unzigzag(delta) as u64);
        r.address = d.addr;
        if tag & F_SIZE != 0 {
            let (size, n) = varint::peek(buf, p)?;
            p += n;
            d.size = u32::try_from(size).ok()?;
        }
        r.size = d.size;
        // Branch-free: gaps come and go at random. Without a gap, `p` is at the next tag,
        // the extra byte or the padding, all below 0x80, so the peek cannot fail.
        let (gap, n) = varint::peek(buf, p)?;
        let has_gap = ((tag & F_GAP) >> 5) as u64;
        r.inst_gap = gap & has_gap.wrapping_neg();
        p += n & (has_gap as usize).wrapping_neg();
        r.timestamp_ns = NO_TIME;
        r.cycle = NO_CYCLE;
        r.gfp = 0;
        r.cpu = NO_ID;
        r.device = NO_ID;
        r.order = 0;
        r.migratetype = NO_MIGRATETYPE;
        if tag & F_EXTRA != 0 {
            decode_extra(buf, &mut p, d, r)?;
        }
        if p > self.raw_len {
            return None; // ran into the padding
        }
        self.pos = p;
        Some(())
    }

    /// Advances to a block with records left; `Ok(false)` at the end.
    #[inline]
    fn ensure_block(&mut self) -> Result<bool, TraceError> {
        while self.left == 0 {
            if self.done || !self.load_block()? {
                self.done = true;
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[inline(never)]
fn decode_extra(buf: &[u8], pos: &mut usize, d: &mut Delta, r: &mut TraceRecord) -> Option<()> {
    let x = *buf.get(*pos)?;
    *pos += 1;
    if x & X_RESERVED != 0 {
        return None;
    }
    if x & X_TIME != 0 {
        d.time = d.time.wrapping_add(unzigzag(varint::get(buf, pos)?) as u64);
        r.timestamp_ns = d.time;
    }
    if x & X_CYCLE != 0 {
        d.cycle = d
            .cycle
            .wrapping_add(unzigzag(varint::get(buf, pos)?) as u64);
        r.cycle = d.cycle;
    }
    if x & X_CPU != 0 {
        r.cpu = u16::try_from(varint::get(buf, pos)?).ok()?;
    }
    if x & X_DEVICE != 0 {
        r.device = u16::try_from(varint::get(buf, pos)?).ok()?;
    }
    if x & X_ORDER != 0 {
        r.order = *buf.get(*pos)?;
        *pos += 1;
    }
    if x & X_MIGRATE != 0 {
        r.migratetype = *buf.get(*pos)?;
        *pos += 1;
    }
    if x & X_GFP != 0 {
        r.gfp = u32::try_from(varint::get(buf, pos)?).ok()?;
    }
    Some(())
}

impl Iterator for NativeReader {
    type Item = Result<TraceRecord, TraceError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            match self.ensure_block() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        self.left -= 1;
        match self.decode() {
            Some(r) => Some(Ok(r)),
            None => Some(Err(self.bad_record())),
        }
    }
}

impl TraceReader for NativeReader {
    fn format(&self) -> Format {
        Format::Native
    }

    fn native_header(&self) -> Option<&NativeHeader> {
        Some(&self.header)
    }

    fn read_batch(&mut self, out: &mut Vec<TraceRecord>, max: usize) -> Result<usize, TraceError> {
        // Decode into initialised slots; after a full batch the length is already `max`,
        // so steady state does no resizing.
        if out.len() != max {
            out.resize(max, TraceRecord::default());
        }
        let mut n = 0;
        while n < max {
            if self.left == 0 && !self.ensure_block()? {
                break;
            }
            let take = (self.left as usize).min(max - n);
            for slot in &mut out[n..n + take] {
                if self.decode_into(slot).is_none() {
                    out.clear();
                    return Err(self.bad_record());
                }
            }
            n += take;
            self.left -= take as u32;
        }
        out.truncate(n);
        Ok(n)
    }
}

fn header_read_error(e: io::Error) -> String {
    if e.kind() == ErrorKind::UnexpectedEof {
        "truncated native trace: the file ends inside its header".into()
    } else {
        format!("cannot read the native header: {e}")
    }
}

/// Like `read_exact`, but retries interrupted reads and reports a short read as
/// `UnexpectedEof` consistently across decoders.
fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => {
                return Err(io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "unexpected end of file",
                ))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn write(records: &[TraceRecord]) -> Vec<u8> {
        let header = NativeHeader {
            source: "test".into(),
            ..Default::default()
        };
        let mut w = NativeWriter::new(Vec::new(), &header).unwrap();
        for r in records {
            w.write(r).unwrap();
        }
        w.finish().unwrap()
    }

    fn read(bytes: Vec<u8>) -> Result<Vec<TraceRecord>, TraceError> {
        NativeReader::new(Box::new(io::Cursor::new(bytes)), "t.hmt")?.collect()
    }

    fn sample() -> Vec<TraceRecord> {
        let mut v = Vec::new();
        for i in 0..300_000u64 {
            let mut r = TraceRecord::new(
                if i % 3 == 0 { Kind::Store } else { Kind::Load },
                0x7fff_0000 + (i * 64) % 8192,
                8,
            );
            r.inst_gap = i % 5;
            if i % 1000 == 0 {
                r.timestamp_ns = i * 10;
                r.cpu = (i % 4) as u16;
            }
            v.push(r);
        }
        v
    }

    #[test]
    fn trace_native_roundtrip_multi_block() {
        let recs = sample();
        let bytes = write(&recs);
        assert!(
            bytes.len() < recs.len(),
            "{} bytes for {} records",
            bytes.len(),
            recs.len()
        );
        let r = NativeReader::new(Box::new(io::Cursor::new(bytes.clone())), "t.hmt").unwrap();
        assert_eq!(r.header().source, "test");
        assert_eq!(read(bytes.clone()).unwrap(), recs);
        // Batches give the same records.
        let mut r = NativeReader::new(Box::new(io::Cursor::new(bytes)), "t.hmt").unwrap();
        let (mut all, mut batch) = (Vec::new(), Vec::new());
        while r.read_batch(&mut batch, 4096).unwrap() > 0 {
            all.extend_from_slice(&batch);
        }
        assert_eq!(all, recs);
    }

    #[test]
    fn trace_native_truncation_is_reported() {
        let bytes = write(&sample());
        for cut in [10, FIXED_HEADER + 4 + 3, bytes.len() / 2, bytes.len() - 1] {
            let e = read(bytes[..cut].to_vec()).unwrap_err();
            assert!(e.message().contains("truncated"), "cut {cut}: {e}");
            assert!(matches!(e.location(), Location::Byte(_)));
        }
    }

    #[test]
    fn trace_native_rejects_foreign_header() {
        let e = read(b"I  0400,3\n".repeat(3)).unwrap_err();
        assert!(e.message().contains("magic"), "{e}");
    }

    fn arb_record() -> impl Strategy<Value = TraceRecord> {
        (
            (
                0u8..7,
                any::<u64>(),
                any::<u32>(),
                prop_oneof![Just(0u64), any::<u64>()],
            ),
            (
                proptest::option::of(0..u64::MAX),
                proptest::option::of(0..u64::MAX),
            ),
            (
                proptest::option::of(0..u16::MAX),
                proptest::option::of(0..u16::MAX),
            ),
            (any::<u8>(), proptest::option::of(0..u8::MAX), any::<u32>()),
        )
            .prop_map(|((k, a, s, g), (t, c), (cpu, dev), (order, mt, gfp))| {
                let mut r = TraceRecord::new(Kind::from_u8(k).unwrap(), a, s);
                r.inst_gap = g;
                r.timestamp_ns = t.unwrap_or(NO_TIME);
                r.cycle = c.unwrap_or(NO_CYCLE);
                r.cpu = cpu.unwrap_or(NO_ID);
                r.device = dev.unwrap_or(NO_ID);
                r.order = order;
                r.migratetype = mt.unwrap_or(NO_MIGRATETYPE);
                r.gfp = gfp;
                r
            })
    }

    proptest! {
        #[test]
        fn trace_native_roundtrips_any_records(recs in proptest::collection::vec(arb_record(), 0..200)) {
            prop_assert_eq!(read(write(&recs)).unwrap(), recs);
        }

        #[test]
        fn trace_native_never_panics_on_corruption(flip in 0usize..4096, byte in any::<u8>()) {
            let mut bytes = write(&sample()[..2000]);
            let i = flip % bytes.len();
            bytes[i] = byte;
            let _ = read(bytes);
        }
    }
}
