//! Decoding blocks into records.

use std::io::{self, ErrorKind, Read};

use super::super::error::{Location, TraceError};
use super::super::record::{Kind, TraceRecord, NO_CYCLE, NO_ID, NO_MIGRATETYPE, NO_TIME};
use super::super::varint::{self, unzigzag};
use super::super::{Format, TraceReader};
use super::*;

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

/// Smallest and largest page size a header may state (a power of two between them).
pub(super) const MIN_PAGE_SIZE: u32 = 512;
pub(super) const MAX_PAGE_SIZE: u32 = 1 << 30;

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
        if !page_size.is_power_of_two() || !(MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&page_size) {
            return Err(err(
                12,
                format!(
                    "page size {page_size} bytes; expected a power of two from \
                     {MIN_PAGE_SIZE} B to 1 GiB"
                ),
            ));
        }
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
