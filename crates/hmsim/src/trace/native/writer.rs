//! Encoding records into blocks.

use std::io::{self, Write};

use super::super::record::{TraceRecord, NO_CYCLE, NO_ID, NO_MIGRATETYPE, NO_TIME};
use super::super::varint::{self, zigzag};
use super::*;

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
