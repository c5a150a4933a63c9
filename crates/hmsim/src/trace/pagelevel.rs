//! Page-level reduction (`trace record --page-level`): one record per run of accesses to
//! the same page, with the instructions between runs.
//!
//! A raw lackey log of a real program is tens of GB; what page-placement studies need is
//! which page is touched when. A run of consecutive loads/stores/modifies to one page
//! becomes one record: the address of the run's first access, kind `load` if the run only
//! read, `store` if it only wrote, `modify` if both, and as `inst_gap` the instructions
//! since the previous emitted record up to that first access. Instructions inside a run
//! carry over to the next record, so the total instruction count is unchanged. Other
//! kinds (alloc, free, flush) end the run and pass through.

use super::record::{Kind, TraceRecord};
use super::{Format, TraceError, TraceReader};

/// What `trace record --page-level` appends to a native trace's source (hmsim-py's
/// `trace_record_stream` writes `"<source> (page level)"`).
pub(super) const PAGE_LEVEL_MARK: &str = "(page level)";

/// Whether `reader` reads a trace reduced to pages (`trace record --page-level`): its records
/// are the first access of each run of accesses to a page, not every line the program
/// touched, so they cannot go through CPU caches as the program's accesses.
pub fn is_page_level(reader: &dyn TraceReader) -> bool {
    reader
        .native_header()
        .is_some_and(|h| h.source.contains(PAGE_LEVEL_MARK))
}

pub struct PageLevel<R> {
    inner: R,
    page_shift: u32,
    run: Option<(TraceRecord, bool, bool)>,
    /// Instructions not yet attributed to an emitted record.
    carry: u64,
    /// A record that ended a run, to emit after it.
    held: Option<TraceRecord>,
    done: bool,
}

impl<R: TraceReader> PageLevel<R> {
    /// `page_bytes` must be a power of two.
    pub fn new(inner: R, page_bytes: u64) -> Self {
        assert!(
            page_bytes.is_power_of_two(),
            "page size must be a power of two"
        );
        PageLevel {
            inner,
            page_shift: page_bytes.trailing_zeros(),
            run: None,
            carry: 0,
            held: None,
            done: false,
        }
    }

    fn close_run(&mut self) -> Option<TraceRecord> {
        let (mut first, read, write) = self.run.take()?;
        first.kind = match (read, write) {
            (true, true) => Kind::Modify,
            (false, true) => Kind::Store,
            _ => Kind::Load,
        };
        Some(first)
    }
}

impl<R: TraceReader> Iterator for PageLevel<R> {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(r) = self.held.take() {
            return Some(Ok(r));
        }
        loop {
            if self.done {
                return None;
            }
            let r = match self.inner.next() {
                Some(Ok(r)) => r,
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                None => {
                    self.done = true;
                    let run = self.close_run();
                    if self.carry > 0 {
                        let mut tail = TraceRecord::new(Kind::Instr, 0, 0);
                        tail.inst_gap = std::mem::take(&mut self.carry);
                        if run.is_none() {
                            return Some(Ok(tail));
                        }
                        self.held = Some(tail);
                    }
                    return run.map(Ok);
                }
            };
            self.carry += r.inst_gap;
            match r.kind {
                Kind::Load | Kind::Store | Kind::Modify => {
                    let page = r.address >> self.page_shift;
                    if let Some((first, read, write)) = &mut self.run {
                        if first.address >> self.page_shift == page {
                            *read |= r.kind.is_read();
                            *write |= r.kind.is_write();
                            continue;
                        }
                    }
                    let done = self.close_run();
                    let mut first = r;
                    first.inst_gap = std::mem::take(&mut self.carry);
                    self.run = Some((first, r.kind.is_read(), r.kind.is_write()));
                    if let Some(d) = done {
                        return Some(Ok(d));
                    }
                }
                Kind::Instr => {}
                _ => {
                    let mut pass = r;
                    pass.inst_gap = std::mem::take(&mut self.carry);
                    match self.close_run() {
                        Some(d) => {
                            self.held = Some(pass);
                            return Some(Ok(d));
                        }
                        None => return Some(Ok(pass)),
                    }
                }
            }
        }
    }
}

impl<R: TraceReader> TraceReader for PageLevel<R> {
    fn format(&self) -> Format {
        self.inner.format()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_util::reader;
    use super::*;

    #[test]
    fn trace_page_level_merges_runs_and_keeps_instructions() {
        let text = "I  00400000,4\n L 00001000,8\n I  00400004,4\n S 00001008,8\n\
                    I  00400008,4\n I  0040000c,4\n L 00002000,8\n L 00002010,8\n\
                    S 00001000,8\n I  00400010,4\n";
        let full: Vec<_> = reader(text.as_bytes(), None).map(Result::unwrap).collect();
        let pl: Vec<_> = PageLevel::new(reader(text.as_bytes(), None), 4096)
            .map(Result::unwrap)
            .collect();
        let got: Vec<_> = pl.iter().map(|r| (r.kind, r.address, r.inst_gap)).collect();
        assert_eq!(
            got,
            vec![
                (Kind::Modify, 0x1000, 1),
                (Kind::Load, 0x2000, 3),
                (Kind::Store, 0x1000, 0),
                (Kind::Instr, 0, 1),
            ]
        );
        let sum = |v: &[TraceRecord]| v.iter().map(|r| r.inst_gap).sum::<u64>();
        assert_eq!(sum(&pl), sum(&full));
    }
}
