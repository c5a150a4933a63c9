//! Linux kmem tracepoints as ftrace text (`/sys/kernel/tracing/trace`, `trace-cmd report`):
//!
//! ```text
//!   bash-1234  [003] d..1.  1234.567890: mm_page_alloc: page=0xffffea0004a1b2c0 pfn=0x1286cb order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_ZERO
//!   bash-1234  [003] d..1.  1234.567901: mm_page_free: page=0xffffea0004a1b2c0 pfn=0x1286cb order=0
//! ```
//!
//! `mm_page_alloc` becomes `Alloc`, `mm_page_free` and `mm_page_free_batched` become
//! `Free`, with the CPU, the timestamp (seconds → ns; a counter trace clock such as
//! `x86-tsc` is read as seconds too, so record with the default `local`/`global` clock),
//! `pfn * 4096` as address, `4096 << order` as size, migratetype and GFP flags. Other events
//! are skipped, and so are failed allocations (`pfn=0xffffffffffffffff`, no page) and the
//! `cpus=N` header of `trace-cmd report`. A `CPU:N [LOST M EVENTS]` line is an error:
//! allocations and frees went missing, and alloc/free pairing would silently be wrong.

use super::parse::{dec, fields, find, fixed_to_ns, num, value_of};
use super::record::{Kind, TraceRecord, KMEM_PAGE_BYTES};
use super::text::{Expected, LineParser};
use super::Format;

/// GFP flags as hmsim's own stable bits: the kernel's bit values change between versions,
/// the names printed by ftrace do not.
pub mod gfp {
    pub const KERNEL: u32 = 1 << 0;
    pub const USER: u32 = 1 << 1;
    pub const HIGHUSER: u32 = 1 << 2;
    pub const HIGHUSER_MOVABLE: u32 = 1 << 3;
    pub const ATOMIC: u32 = 1 << 4;
    pub const NOWAIT: u32 = 1 << 5;
    pub const NOIO: u32 = 1 << 6;
    pub const NOFS: u32 = 1 << 7;
    pub const DMA: u32 = 1 << 8;
    pub const DMA32: u32 = 1 << 9;
    pub const TRANSHUGE: u32 = 1 << 10;
    pub const TRANSHUGE_LIGHT: u32 = 1 << 11;
    pub const ZERO: u32 = 1 << 12;
    pub const MOVABLE: u32 = 1 << 13;
    pub const RECLAIMABLE: u32 = 1 << 14;
    pub const COMP: u32 = 1 << 15;
    pub const NOWARN: u32 = 1 << 16;
    pub const HIGHMEM: u32 = 1 << 17;
    pub const ACCOUNT: u32 = 1 << 18;
    pub const THISNODE: u32 = 1 << 19;
    pub const NORETRY: u32 = 1 << 20;
    pub const RETRY_MAYFAIL: u32 = 1 << 21;
    pub const NOFAIL: u32 = 1 << 22;
    pub const NOMEMALLOC: u32 = 1 << 23;
    pub const HARDWALL: u32 = 1 << 24;
    pub const NOLOCKDEP: u32 = 1 << 25;
    /// Any flag not listed above (or a numeric, version-specific mask).
    pub const OTHER: u32 = 1 << 31;

    pub const NAMES: [(&str, u32); 26] = [
        ("GFP_KERNEL", KERNEL),
        ("GFP_USER", USER),
        ("GFP_HIGHUSER", HIGHUSER),
        ("GFP_HIGHUSER_MOVABLE", HIGHUSER_MOVABLE),
        ("GFP_ATOMIC", ATOMIC),
        ("GFP_NOWAIT", NOWAIT),
        ("GFP_NOIO", NOIO),
        ("GFP_NOFS", NOFS),
        ("GFP_DMA", DMA),
        ("GFP_DMA32", DMA32),
        ("GFP_TRANSHUGE", TRANSHUGE),
        ("GFP_TRANSHUGE_LIGHT", TRANSHUGE_LIGHT),
        ("__GFP_ZERO", ZERO),
        ("__GFP_MOVABLE", MOVABLE),
        ("__GFP_RECLAIMABLE", RECLAIMABLE),
        ("__GFP_COMP", COMP),
        ("__GFP_NOWARN", NOWARN),
        ("__GFP_HIGHMEM", HIGHMEM),
        ("__GFP_ACCOUNT", ACCOUNT),
        ("__GFP_THISNODE", THISNODE),
        ("__GFP_NORETRY", NORETRY),
        ("__GFP_RETRY_MAYFAIL", RETRY_MAYFAIL),
        ("__GFP_NOFAIL", NOFAIL),
        ("__GFP_NOMEMALLOC", NOMEMALLOC),
        ("__GFP_HARDWALL", HARDWALL),
        ("__GFP_NOLOCKDEP", NOLOCKDEP),
    ];

    /// Parses `GFP_KERNEL|__GFP_ZERO`, `none` or a number.
    pub fn parse(s: &[u8]) -> u32 {
        if s == b"none" || s == b"0" || s == b"0x0" {
            return 0;
        }
        let mut bits = 0;
        for name in s.split(|&c| c == b'|') {
            bits |= NAMES
                .iter()
                .find(|(n, _)| n.as_bytes() == name)
                .map_or(OTHER, |(_, b)| *b);
        }
        bits
    }
}

#[derive(Default)]
pub(super) struct Kmem;

const EXPECTED: &str =
    "expected an ftrace line '<task>-<pid> [<cpu>] <flags> <seconds>: <event>: <fields>'";

impl LineParser for Kmem {
    const FORMAT: Format = Format::Kmem;

    fn parse(&mut self, line: &[u8]) -> Result<Option<TraceRecord>, Expected> {
        let trimmed = super::parse::trim(line);
        if trimmed.starts_with(b"cpus=") {
            return Ok(None); // `trace-cmd report` header
        }
        if trimmed.starts_with(b"CPU:") && find(trimmed, b"LOST").is_some() {
            // Allocations and frees are missing from here on; pairing them would be wrong.
            return Err(
                "no lost events: the ftrace buffer overflowed; record again with a larger \
                 buffer_size_kb"
                    .into(),
            );
        }
        let (cpu, rest) = cpu_field(line).ok_or(EXPECTED)?;
        if line[..line.len() - rest.len()].contains(&0) {
            // Reported by the line loop as a NUL byte at its column.
            return Err("a task name without NUL bytes".into());
        }
        // After the CPU: optional irq/preempt flags, then `<seconds>:`, then `<event>:`.
        let mut f = fields(rest);
        let mut ts = None;
        for tok in f.by_ref().take(2) {
            if let Some(t) = tok.strip_suffix(b":") {
                ts = Some(fixed_to_ns(t, 1_000_000_000).ok_or(EXPECTED)?);
                break;
            }
        }
        let ts = ts.ok_or(EXPECTED)?;
        let event = f
            .next()
            .and_then(|e| e.strip_suffix(b":"))
            .ok_or(EXPECTED)?;
        let kind = match event {
            b"mm_page_alloc" => Kind::Alloc,
            b"mm_page_free" | b"mm_page_free_batched" => Kind::Free,
            _ => return Ok(None),
        };
        let body = &rest[find(rest, event).unwrap_or(0)..];
        const EF: &str = "expected 'pfn=<number>' and 'order=<0..63>' in a kmem page event";
        let pfn = value_of(body, b"pfn=").and_then(num).ok_or(EF)?;
        if pfn == u64::MAX {
            return Ok(None); // failed allocation: no page
        }
        let order = match value_of(body, b"order=") {
            Some(o) => dec(o).filter(|&o| o < 64).ok_or(EF)? as u8,
            None if event == b"mm_page_free_batched" => 0,
            None => return Err(EF.into()),
        };
        let address = pfn.checked_mul(KMEM_PAGE_BYTES).ok_or(EF)?;
        let size = u32::try_from(KMEM_PAGE_BYTES << order.min(40)).unwrap_or(u32::MAX);
        let mut r = TraceRecord::new(kind, address, size);
        r.order = order;
        r.cpu = cpu;
        r.timestamp_ns = ts.min(u64::MAX - 1);
        if let Some(m) = value_of(body, b"migratetype=") {
            r.migratetype = dec(m)
                .and_then(|m| u8::try_from(m).ok())
                .filter(|&m| m != u8::MAX)
                .ok_or(Expected::Borrowed(
                    "expected 'migratetype=<0..254>' in mm_page_alloc",
                ))?;
        }
        if let Some(g) = value_of(body, b"gfp_flags=") {
            r.gfp = gfp::parse(g);
        }
        Ok(Some(r))
    }
}

/// Finds `[NNN]` (digits only: a task name may contain brackets too) and returns the CPU
/// and what follows it.
fn cpu_field(line: &[u8]) -> Option<(u16, &[u8])> {
    let mut from = 0;
    while let Some(p) = line[from..].iter().position(|&c| c == b'[') {
        let open = from + p;
        let rest = &line[open + 1..];
        if let Some(close) = rest.iter().position(|&c| c == b']') {
            if let Some(cpu) = dec(&rest[..close]).and_then(|c| u16::try_from(c).ok()) {
                if cpu != u16::MAX {
                    return Some((cpu, &rest[close + 1..]));
                }
            }
        }
        from = open + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::tests_util::{read_all, read_err};
    use super::*;

    const SAMPLE: &str = "# tracer: nop\n#\n\
        #           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n\
        \x20          bash-1234  [003] d..1.  1234.567890: mm_page_alloc: page=0xffffea0004a1b2c0 pfn=0x1286cb order=2 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_ZERO\n\
        \x20  Web Content-99  [001] .....  1234.567901: mm_page_free: page=0xffffea0004a1b2c0 pfn=0x1286cb order=0\n\
        \x20          bash-1234  [003] .....  1234.6: sched_switch: prev_comm=bash\n\
        \x20          bash-1234  [000] 1234.700000: mm_page_free_batched: page=0xffffea0004a1b2c0 pfn=1000\n";

    #[test]
    fn trace_kmem_alloc_and_free() {
        let recs = read_all(SAMPLE.as_bytes(), Some(Format::Kmem));
        assert_eq!(recs.len(), 3);
        let a = recs[0];
        assert_eq!(
            (a.kind, a.pfn(), a.order, a.size),
            (Kind::Alloc, 0x1286cb, 2, 16384)
        );
        assert_eq!(
            (a.cpu(), a.timestamp(), a.migratetype()),
            (Some(3), Some(1_234_567_890_000), Some(1))
        );
        assert_eq!(a.gfp, gfp::HIGHUSER_MOVABLE | gfp::ZERO);
        let f = recs[1];
        assert_eq!(
            (f.kind, f.pfn(), f.cpu(), f.migratetype()),
            (Kind::Free, 0x1286cb, Some(1), None)
        );
        assert_eq!(
            (recs[2].kind, recs[2].pfn(), recs[2].cpu()),
            (Kind::Free, 1000, Some(0))
        );
    }

    #[test]
    fn trace_kmem_errors_name_line() {
        let bad = "  bash-1 [000] .... 1.0: mm_page_alloc: page=0x0 order=0\n";
        let e = read_err(format!("{SAMPLE}{bad}").as_bytes(), Some(Format::Kmem));
        assert_eq!(e.line(), Some(8));
        assert!(e.message().contains("pfn="), "{e}");
        assert_eq!(
            read_err(b"hello world\n", Some(Format::Kmem)).line(),
            Some(1)
        );
    }

    /// A NUL byte in a task name is corruption, not a name.
    #[test]
    fn trace_kmem_nul_in_task_name_is_refused_at_its_line() {
        let text = "  a-1 [000] 1.0: mm_page_free: page=0x1 pfn=0x2 order=0\n  b\0d-2 [000] 1.1: mm_page_free: page=0x1 pfn=0x3 order=0\n";
        let e = read_err(text.as_bytes(), Some(Format::Kmem));
        assert_eq!(e.line(), Some(2));
        assert!(e.message().contains("NUL byte at column 4"), "{e}");
    }

    #[test]
    fn trace_kmem_trace_cmd_header_skipped_lost_events_refused() {
        let text = "cpus=4\n  a-1 [000] 1.0: mm_page_free: page=0x1 pfn=0x2 order=0\n";
        assert_eq!(read_all(text.as_bytes(), Some(Format::Kmem)).len(), 1);
        let e = read_err(
            format!("{text}CPU:2 [LOST 17 EVENTS]\n").as_bytes(),
            Some(Format::Kmem),
        );
        assert_eq!(e.line(), Some(3));
        assert!(e.message().contains("buffer_size_kb"), "{e}");
    }

    #[test]
    fn trace_kmem_gfp_names() {
        assert_eq!(
            gfp::parse(b"GFP_KERNEL|__GFP_COMP|__GFP_SOMETHING_NEW"),
            gfp::KERNEL | gfp::COMP | gfp::OTHER
        );
        assert_eq!(gfp::parse(b"none"), 0);
    }
}
