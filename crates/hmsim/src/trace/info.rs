//! `trace info`: what a trace holds, in one streaming pass.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet};
use std::fs::File;
use std::path::Path;

use serde::Serialize;

use super::pages::PageCounter;
use super::record::{Kind, TraceRecord};
use super::{
    open_reader_with_compression, Compression, Format, Location, TraceError, TraceKind, TraceReader,
};

pub const DEFAULT_TOP_PAGES: usize = 10;
const PAGE_4K_SHIFT: u32 = 12;
const PAGE_2M_SHIFT: u32 = 21;

/// Summary of a trace. Serialises to the JSON that `hmsim trace info --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceInfo {
    pub file: String,
    pub format: Format,
    /// Outer compression of the file.
    pub compression: Compression,
    /// Access, page-event or block trace (from the header for native traces).
    pub kind: TraceKind,
    /// Where a native trace came from (its header's source); `None` for other formats.
    pub source: Option<String>,
    pub records: u64,
    /// Records that read memory (loads and modifies; block reads).
    pub reads: u64,
    /// Records that write memory (stores and modifies; block writes).
    pub writes: u64,
    /// Records per kind (`load`, `store`, …); kinds that do not occur are left out.
    pub by_kind: BTreeMap<&'static str, u64>,
    /// Distinct 4 KB pages touched by any record except `instr`.
    pub distinct_pages_4k: u64,
    /// Distinct 2 MB pages touched.
    pub distinct_pages_2m: u64,
    /// `distinct_pages_4k * 4096`.
    pub footprint_bytes: u64,
    /// Sum of instruction gaps; `None` when the format carries no instructions.
    pub instructions: Option<u64>,
    pub first_timestamp_ns: Option<u64>,
    pub last_timestamp_ns: Option<u64>,
    /// Most-touched 4 KB pages, most first (ties: lower address first).
    pub top_pages: Vec<PageCount>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PageCount {
    /// Byte address of the page start.
    pub page_address: u64,
    pub records: u64,
}

/// Summarises the trace at `path` (`format` overrides sniffing), listing `top_n` pages.
pub fn trace_info(
    path: &Path,
    format: Option<Format>,
    top_n: usize,
) -> Result<TraceInfo, TraceError> {
    let name = path.display().to_string();
    let file = File::open(path)
        .map_err(|e| TraceError::new(&name, Location::File, format!("cannot open: {e}")))?;
    let (mut reader, compression) = open_reader_with_compression(Box::new(file), &name, format)?;
    let mut info = summarise(reader.as_mut(), &name, top_n)?;
    info.compression = compression;
    Ok(info)
}

/// Summarises any reader.
pub fn summarise(
    reader: &mut dyn TraceReader,
    file: &str,
    top_n: usize,
) -> Result<TraceInfo, TraceError> {
    let mut acc = Accumulator::default();
    let mut batch = Vec::with_capacity(BATCH);
    while reader.read_batch(&mut batch, BATCH)? > 0 {
        acc.add(&batch);
    }
    let mut info = acc.finish(file, reader.format(), top_n);
    if let Some(h) = reader.native_header() {
        info.kind = h.kind;
        info.source = Some(h.source.clone());
    }
    Ok(info)
}

const BATCH: usize = 8192;

#[derive(Default)]
struct Accumulator {
    records: u64,
    kinds: [u64; Kind::ALL.len()],
    instructions: u64,
    first_ts: Option<u64>,
    last_ts: Option<u64>,
    pages: PageCounter,
    // Consecutive records mostly hit the same page: count runs, touch the map per run.
    run_page: u64,
    run_len: u64,
}

impl Accumulator {
    #[inline]
    fn add(&mut self, batch: &[TraceRecord]) {
        self.records += batch.len() as u64;
        for r in batch {
            self.kinds[r.kind as usize] += 1;
            self.instructions = self.instructions.wrapping_add(r.inst_gap);
            if r.kind == Kind::Instr {
                continue;
            }
            let page = r.address >> PAGE_4K_SHIFT;
            if page == self.run_page && self.run_len > 0 {
                self.run_len += 1;
            } else {
                self.flush_run();
                self.run_page = page;
                self.run_len = 1;
            }
            if let Some(t) = r.timestamp() {
                self.first_ts.get_or_insert(t);
                self.last_ts = Some(t);
            }
        }
    }

    fn flush_run(&mut self) {
        if self.run_len > 0 {
            self.pages.add(self.run_page, self.run_len);
        }
    }

    fn finish(mut self, file: &str, format: Format, top_n: usize) -> TraceInfo {
        self.flush_run();
        let count = |k: Kind| self.kinds[k as usize];
        let reads = Kind::ALL
            .iter()
            .filter(|k| k.is_read())
            .map(|&k| count(k))
            .sum();
        let writes = Kind::ALL
            .iter()
            .filter(|k| k.is_write())
            .map(|&k| count(k))
            .sum();
        let by_kind = Kind::ALL
            .iter()
            .filter(|&&k| count(k) > 0)
            .map(|&k| (k.name(), count(k)))
            .collect();
        // One pass over the pages: distinct counts, 2 MB regions, and a bounded heap of
        // the top pages (never a list of every page: a trace may touch millions).
        let mut distinct = 0u64;
        let mut huge = HashSet::new();
        // Min-heap of the best so far; its top is the worst of them (fewest records, then
        // highest address).
        let mut heap: BinaryHeap<Reverse<(u64, Reverse<u64>)>> =
            BinaryHeap::with_capacity(top_n + 1);
        for (page, n) in self.pages.iter() {
            distinct += 1;
            huge.insert(page >> (PAGE_2M_SHIFT - PAGE_4K_SHIFT));
            if top_n > 0 {
                heap.push(Reverse((n, Reverse(page))));
                if heap.len() > top_n {
                    heap.pop();
                }
            }
        }
        let top: Vec<(u64, u64)> = heap
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse((n, Reverse(page)))| (page, n))
            .collect();
        TraceInfo {
            file: file.to_string(),
            format,
            compression: Compression::None,
            kind: format.trace_kind(),
            source: None,
            records: self.records,
            reads,
            writes,
            by_kind,
            distinct_pages_4k: distinct,
            distinct_pages_2m: huge.len() as u64,
            footprint_bytes: distinct << PAGE_4K_SHIFT,
            instructions: (format.has_instructions() || self.instructions > 0)
                .then_some(self.instructions),
            first_timestamp_ns: self.first_ts,
            last_timestamp_ns: self.last_ts,
            top_pages: top
                .into_iter()
                .map(|(p, n)| PageCount {
                    page_address: p << PAGE_4K_SHIFT,
                    records: n,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_util::reader;
    use super::*;

    #[test]
    fn trace_info_counts_pages_mix_and_instructions() {
        let text = "I  00400000,4\n L 00001000,8\n S 00001008,8\n I  00400004,4\n I  00400008,4\n M 00201000,4\n L 00001010,8\n";
        let mut r = reader(text.as_bytes(), None);
        let info = summarise(r.as_mut(), "t", 2).unwrap();
        assert_eq!(info.format, Format::Lackey);
        assert_eq!(info.records, 4);
        assert_eq!((info.reads, info.writes), (3, 2));
        assert_eq!(info.by_kind.get("modify"), Some(&1));
        assert_eq!((info.distinct_pages_4k, info.distinct_pages_2m), (2, 2));
        assert_eq!(info.footprint_bytes, 8192);
        assert_eq!(info.instructions, Some(3));
        assert_eq!(
            info.top_pages,
            vec![
                PageCount {
                    page_address: 0x1000,
                    records: 3
                },
                PageCount {
                    page_address: 0x201000,
                    records: 1
                }
            ]
        );
        let json = serde_json::to_string(&info).unwrap();
        assert!(json.contains("\"format\":\"lackey\""), "{json}");
    }

    #[test]
    fn trace_info_of_native_reports_header() {
        use super::super::{NativeHeader, NativeWriter};
        let header = NativeHeader {
            kind: TraceKind::PageEvents,
            source: "kmem: t.txt".into(),
            ..NativeHeader::default()
        };
        let mut w = NativeWriter::new(Vec::new(), &header).unwrap();
        w.write(&TraceRecord::new(Kind::Alloc, 0x2000, 4096))
            .unwrap();
        let bytes = w.finish().unwrap();
        let mut r = reader(&bytes, None);
        let info = summarise(r.as_mut(), "t", 10).unwrap();
        assert_eq!(
            (info.format, info.kind),
            (Format::Native, TraceKind::PageEvents)
        );
        assert_eq!(info.source.as_deref(), Some("kmem: t.txt"));
        assert_eq!(info.by_kind.get("alloc"), Some(&1));
    }

    #[test]
    fn trace_info_without_instructions_says_none() {
        let mut r = reader(b"LD 0x1000\nST 0x1000\n", None);
        let info = summarise(r.as_mut(), "t", 10).unwrap();
        assert_eq!(info.instructions, None);
        assert_eq!(info.top_pages.len(), 1);
    }
}
