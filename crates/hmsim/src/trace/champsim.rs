//! ChampSim binary traces: a stream of 64-byte `input_instr` records, little-endian,
//!
//! ```text
//! u64 ip; u8 is_branch; u8 branch_taken; u8 dst_regs[2]; u8 src_regs[4];
//! u64 dst_mem[2]; u64 src_mem[4];
//! ```
//!
//! Each non-zero `src_mem` is a load and each non-zero `dst_mem` a store (loads first, as
//! the instruction reads before it writes). The first access of an instruction carries the
//! instructions since the previous access in `inst_gap`; instructions after the last access
//! become one trailing `Instr` record.
//!
//! The format has no magic number, so each record is checked for what a real one holds
//! (`is_branch` and `branch_taken` are 0 or 1) and a long run of
//! all-zero records is refused: random bytes or `/dev/zero` are reported, not replayed.

use std::io::{self, ErrorKind, Read, Write};

use super::error::{Location, TraceError};
use super::record::{Kind, TraceRecord};
use super::{Format, TraceReader};

pub const RECORD_BYTES: usize = 64;

/// All-zero records (no ip, no access) in a row before the input is taken for zeros rather
/// than a trace: our own writer emits ip-0 empty instructions for gaps, so the bound is
/// far above any gap between two accesses of a real program (2^24 instructions).
const MAX_ZERO_RUN: u64 = 1 << 24;

/// Why `rec` cannot be a ChampSim `input_instr`, if it cannot.
pub(super) fn record_problem(rec: &[u8]) -> Option<String> {
    let (is_branch, taken) = (rec[8], rec[9]);
    if is_branch > 1 || taken > 1 {
        return Some(format!(
            "not a ChampSim record (is_branch = {is_branch}, branch_taken = {taken}; both must be 0 or 1)"
        ));
    }
    None
}

/// Whether `head` (the first bytes of a stream; `complete` when it is the whole stream)
/// reads as ChampSim records; `Err` says why not.
pub(super) fn sniff_records(head: &[u8], complete: bool) -> Result<(), String> {
    if complete && !head.len().is_multiple_of(RECORD_BYTES) {
        return Err(format!(
            "its size ({} bytes) is not a multiple of the {RECORD_BYTES}-byte ChampSim record",
            head.len()
        ));
    }
    let mut any = false;
    for (i, rec) in head.chunks_exact(RECORD_BYTES).enumerate() {
        if let Some(why) = record_problem(rec) {
            return Err(format!("at byte {}: {why}", i * RECORD_BYTES));
        }
        any |= rec.iter().any(|&b| b != 0);
    }
    if !any {
        return Err("it holds only zero bytes".into());
    }
    Ok(())
}

pub(super) struct ChampsimReader {
    src: Box<dyn Read + Send>,
    file: String,
    offset: u64,
    since_access: u64,
    last_ip: u64,
    zero_run: u64,
    pending: [TraceRecord; 6],
    pending_len: usize,
    pending_pos: usize,
    done: bool,
}

impl ChampsimReader {
    pub(super) fn new(src: Box<dyn Read + Send>, file: &str) -> Self {
        ChampsimReader {
            src,
            file: file.to_string(),
            offset: 0,
            since_access: 0,
            last_ip: 0,
            zero_run: 0,
            pending: [TraceRecord::default(); 6],
            pending_len: 0,
            pending_pos: 0,
            done: false,
        }
    }

    /// Reads one record; `Ok(false)` at a clean end of input.
    fn read_record(&mut self, buf: &mut [u8; RECORD_BYTES]) -> Result<bool, TraceError> {
        let mut got = 0;
        while got < RECORD_BYTES {
            match self.src.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    let msg = format!("cannot read (truncated or corrupt compressed data?): {e}");
                    return Err(TraceError::new(
                        &self.file,
                        Location::Byte(self.offset + got as u64),
                        msg,
                    ));
                }
            }
        }
        if got == 0 {
            return Ok(false);
        }
        if got < RECORD_BYTES {
            let msg = format!(
                "truncated ChampSim trace: the last record has {got} of its {RECORD_BYTES} bytes"
            );
            return Err(TraceError::new(
                &self.file,
                Location::Byte(self.offset),
                msg,
            ));
        }
        if let Some(why) = record_problem(buf) {
            return Err(TraceError::new(
                &self.file,
                Location::Byte(self.offset),
                why,
            ));
        }
        if buf.iter().all(|&b| b == 0) {
            self.zero_run += 1;
            if self.zero_run > MAX_ZERO_RUN {
                let msg = format!(
                    "{MAX_ZERO_RUN} all-zero records in a row: zeros, not a ChampSim trace"
                );
                return Err(TraceError::new(
                    &self.file,
                    Location::Byte(self.offset),
                    msg,
                ));
            }
        } else {
            self.zero_run = 0;
        }
        self.offset += RECORD_BYTES as u64;
        Ok(true)
    }

    fn decode(&mut self, buf: &[u8; RECORD_BYTES]) {
        let word = |i: usize| u64::from_le_bytes(buf[i..i + 8].try_into().unwrap());
        self.last_ip = word(0);
        self.since_access += 1;
        self.pending_len = 0;
        self.pending_pos = 0;
        // src_mem at 32..64, dst_mem at 16..32.
        let loads = (0..4).map(|i| (Kind::Load, word(32 + 8 * i)));
        let stores = (0..2).map(|i| (Kind::Store, word(16 + 8 * i)));
        for (kind, addr) in loads.chain(stores) {
            if addr != 0 {
                let mut r = TraceRecord::new(kind, addr, 0);
                r.inst_gap = std::mem::take(&mut self.since_access);
                self.pending[self.pending_len] = r;
                self.pending_len += 1;
            }
        }
    }
}

impl Iterator for ChampsimReader {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut buf = [0u8; RECORD_BYTES];
        loop {
            if self.pending_pos < self.pending_len {
                self.pending_pos += 1;
                return Some(Ok(self.pending[self.pending_pos - 1]));
            }
            if self.done {
                return None;
            }
            match self.read_record(&mut buf) {
                Ok(true) => self.decode(&buf),
                Ok(false) => {
                    self.done = true;
                    if self.since_access == 0 {
                        return None;
                    }
                    let mut r = TraceRecord::new(Kind::Instr, self.last_ip, 0);
                    r.inst_gap = std::mem::take(&mut self.since_access);
                    return Some(Ok(r));
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl TraceReader for ChampsimReader {
    fn format(&self) -> Format {
        Format::Champsim
    }
}

/// Encodes one `input_instr` (for tests and samples).
pub fn encode_instr(ip: u64, dst_mem: [u64; 2], src_mem: [u64; 4]) -> [u8; RECORD_BYTES] {
    let mut b = [0u8; RECORD_BYTES];
    b[..8].copy_from_slice(&ip.to_le_bytes());
    for (i, a) in dst_mem.iter().enumerate() {
        b[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
    }
    for (i, a) in src_mem.iter().enumerate() {
        b[32 + 8 * i..40 + 8 * i].copy_from_slice(&a.to_le_bytes());
    }
    b
}

/// Writes records as ChampSim `input_instr`s (ip 0: the records carry no ip).
///
/// A record with `inst_gap` g starts a new instruction after g − 1 instructions without
/// memory accesses; with `inst_gap` 0 it joins the previous instruction when
/// `merge_zero_gaps` (the source counts instructions) and the instruction has room (4
/// loads, then 2 stores, in that order), and is an error otherwise. A `modify` is a load
/// and a store of one instruction; an `instr` record becomes `inst_gap` empty instructions
/// with its address as ip.
pub(super) struct ChampsimWriter {
    merge_zero_gaps: bool,
    cur: Option<([u64; 2], [u64; 4], usize, usize)>,
}

impl ChampsimWriter {
    pub(super) fn new(merge_zero_gaps: bool) -> Self {
        ChampsimWriter {
            merge_zero_gaps,
            cur: None,
        }
    }

    /// `Err(message)` for a record ChampSim cannot express; I/O errors as `Ok(Err(_))`.
    pub(super) fn write(
        &mut self,
        r: &TraceRecord,
        w: &mut dyn Write,
    ) -> Result<io::Result<()>, String> {
        let (loads, stores) = match r.kind {
            Kind::Load => (1, 0),
            Kind::Store => (0, 1),
            Kind::Modify => (1, 1),
            Kind::Instr => return Ok(self.flush(w).and_then(|_| empty(w, r.address, r.inst_gap))),
            k => return Err(format!("champsim cannot express a '{}' record", k.name())),
        };
        if r.address == 0 {
            return Err(
                "champsim cannot express an access to address 0 (0 means 'no access')".into(),
            );
        }
        if r.inst_gap == 0 && self.merge_zero_gaps {
            if let Some((dst, src, nd, ns)) = &mut self.cur {
                // Loads must precede stores within an instruction to keep the order.
                if *ns + loads > 4 || *nd + stores > 2 || (loads > 0 && *nd > 0) {
                    return Err("champsim cannot express this many (or these ordered) accesses in one instruction".into());
                }
                if loads > 0 {
                    src[*ns] = r.address;
                    *ns += 1;
                }
                if stores > 0 {
                    dst[*nd] = r.address;
                    *nd += 1;
                }
                return Ok(Ok(()));
            }
        }
        let io = self
            .flush(w)
            .and_then(|_| empty(w, 0, r.inst_gap.saturating_sub(1)));
        let mut src = [0; 4];
        let mut dst = [0; 2];
        src[0] = if loads > 0 { r.address } else { 0 };
        dst[0] = if stores > 0 { r.address } else { 0 };
        self.cur = Some((dst, src, stores, loads));
        Ok(io)
    }

    /// Writes the pending instruction.
    pub(super) fn flush(&mut self, w: &mut dyn Write) -> io::Result<()> {
        match self.cur.take() {
            Some((dst, src, _, _)) => w.write_all(&encode_instr(0, dst, src)),
            None => Ok(()),
        }
    }
}

/// `n` instructions without memory accesses.
fn empty(w: &mut dyn Write, ip: u64, n: u64) -> io::Result<()> {
    let rec = encode_instr(ip, [0; 2], [0; 4]);
    for _ in 0..n {
        w.write_all(&rec)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests_util::{read_all, read_err};
    use super::*;

    fn sample() -> Vec<u8> {
        let mut v = Vec::new();
        v.extend(encode_instr(0x400000, [0, 0], [0x7000, 0, 0x7008, 0]));
        v.extend(encode_instr(0x400004, [0, 0], [0; 4]));
        v.extend(encode_instr(0x400008, [0x8000, 0], [0x9000, 0, 0, 0]));
        v.extend(encode_instr(0x40000c, [0, 0], [0; 4]));
        v
    }

    #[test]
    fn trace_champsim_loads_stores_and_gaps() {
        let recs = read_all(&sample(), Some(Format::Champsim));
        let got: Vec<_> = recs
            .iter()
            .map(|r| (r.kind, r.address, r.inst_gap))
            .collect();
        assert_eq!(
            got,
            vec![
                (Kind::Load, 0x7000, 1),
                (Kind::Load, 0x7008, 0),
                (Kind::Load, 0x9000, 2),
                (Kind::Store, 0x8000, 0),
                (Kind::Instr, 0x40000c, 1),
            ]
        );
    }

    #[test]
    fn trace_champsim_writer_roundtrips_its_own_records() {
        let recs = read_all(&sample(), Some(Format::Champsim));
        let mut out = Vec::new();
        let mut w = ChampsimWriter::new(true);
        for r in &recs {
            w.write(r, &mut out).unwrap().unwrap();
        }
        w.flush(&mut out).unwrap();
        assert_eq!(out.len(), sample().len());
        assert_eq!(read_all(&out, Some(Format::Champsim)), recs);
    }

    #[test]
    fn trace_champsim_writer_refuses_what_it_cannot_say() {
        let mut w = ChampsimWriter::new(true);
        let mut out = Vec::new();
        assert!(w
            .write(&TraceRecord::new(Kind::Free, 0x1000, 0), &mut out)
            .is_err());
        assert!(w
            .write(&TraceRecord::new(Kind::Load, 0, 0), &mut out)
            .is_err());
        let mut first = TraceRecord::new(Kind::Store, 0x10, 8);
        first.inst_gap = 1;
        w.write(&first, &mut out).unwrap().unwrap();
        // A load after a store in the same instruction would be reordered on reading.
        assert!(w
            .write(&TraceRecord::new(Kind::Load, 0x20, 8), &mut out)
            .is_err());
    }

    #[test]
    fn trace_champsim_truncated_record_gives_byte_offset() {
        let mut s = sample();
        s.truncate(64 * 2 + 10);
        let e = read_err(&s, Some(Format::Champsim));
        assert_eq!(e.location(), Location::Byte(128));
        assert!(e.message().contains("truncated"));
    }

    #[test]
    fn trace_champsim_refuses_records_no_tracer_writes() {
        let mut s = sample();
        s[64 + 8] = 7; // is_branch of the second record
        let e = read_err(&s, Some(Format::Champsim));
        assert_eq!(e.location(), Location::Byte(64));
        assert!(e.message().contains("is_branch = 7"), "{}", e.message());
        assert!(sniff_records(&s, true).unwrap_err().contains("at byte 64"));
        assert!(sniff_records(&sample()[..100], true)
            .unwrap_err()
            .contains("multiple"));
        assert!(sniff_records(&[0; 256], true).unwrap_err().contains("zero"));
        assert_eq!(sniff_records(&sample(), true), Ok(()));
    }
}
