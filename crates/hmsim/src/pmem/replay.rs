//! `hmsim lifetime --trace`: replay any memory trace through caches and the PMem path and
//! report the media writes, amplification per layer and lifetime it costs. Without flushes
//! in the trace, lines reach PMem by eviction (as in Memory Mode or un-flushed code); dirty
//! lines left in the caches at the end are written back (a finished program's data lands).

use serde_json::{json, Map, Value};

use super::config::PmemConfig;
use super::driver::{DimmSpec, Machine, Persist};
use super::lifetime;
use crate::cache::{CacheConfig, FlushKind};
use crate::config::Validator;
use crate::device::{Catalog, DeviceKind};
use crate::error::ConfigError;
use crate::registry::RunOutput;
use crate::trace::{Kind, TraceKind, TraceReader, NO_ID};

crate::params! {
    /// Options of a trace replay (everything but the trace and the device).
    #[derive(Debug, Clone)]
    pub struct ReplayOptions {
        pub pmem: PmemConfig = PmemConfig::default() => nested, "", "The PMem socket.";
        pub cache: CacheConfig = CacheConfig::default() => nested, "", "The cache hierarchy.";
        pub cores: usize = 1 => range(1, 4096), "", "Cores the trace's CPU ids are folded onto.";
        pub ns_per_instruction: f64 = 1.0 / 3.0 => range(0.0, 1e6), "ns",
            "Time per instruction between memory accesses (1 IPC at 3 GHz by default).";
        pub flush: FlushKind = FlushKind::Clwb => any, "", "What a trace's flush records execute.";
        pub drain: bool = true => any, "", "Write back dirty cached lines at the end of the trace.";
        pub top_n: usize = 10 => range(0, 100_000), "", "How many hottest 4 KiB ranges to report.";
        pub seed: u64 = 0 => any, "", "Seed of the random streams.";
    }
}

/// Replay `reader` on `device` (a catalog memory device with a rated endurance).
pub fn lifetime_trace(
    reader: &mut dyn TraceReader,
    trace_name: &str,
    device: &str,
    options_json: &str,
    catalog: &Catalog,
) -> Result<RunOutput, ConfigError> {
    let opts: ReplayOptions = serde_json::from_str(options_json)
        .map_err(|e| ConfigError::new("<options>", "", format!("invalid replay options: {e}")))?;
    Validator::check("<options>", "", &opts)?;
    let dev = catalog.require(device, "--device", "device")?;
    if dev.kind != DeviceKind::Memory {
        return Err(ConfigError::new(
            "--device",
            "device",
            format!(
                "'{}' is a block device; expected a memory device such as optane-pmem",
                dev.name
            ),
        ));
    }
    let rated = dev
        .endurance
        .as_ref()
        .and_then(|e| e.tbw_bytes)
        .ok_or_else(|| {
            ConfigError::new(
                "--device",
                "device",
                format!(
                    "device '{}' has no endurance.tbw_bytes (rated bytes written)",
                    dev.name
                ),
            )
        })?;
    refuse_non_access(reader, trace_name)?;
    let mut pmem = opts.pmem.clone();
    pmem.device = dev.name.clone();
    let mut m = Machine::new(
        &pmem,
        &opts.cache,
        opts.cores,
        DimmSpec::from_rating(dev.capacity_bytes, rated),
        opts.seed,
    );
    let mut batch = Vec::with_capacity(4096);
    let (mut records, mut instructions) = (0u64, 0u64);
    // Stores whose size the format does not give (pinatrace, ChampSim): replayed as one
    // byte of their line, but per-byte figures are then unknown, not computed from 1.
    let mut unsized_writes = 0u64;
    loop {
        let n = reader.read_batch(&mut batch, 4096)?;
        if n == 0 {
            break;
        }
        for r in &batch {
            let core = if r.cpu == NO_ID {
                0
            } else {
                r.cpu as usize % opts.cores
            };
            instructions += r.inst_gap;
            m.compute(core, r.inst_gap as f64 * opts.ns_per_instruction);
            let size = (r.size as u64).max(1);
            if r.size == 0 && r.kind.is_write() {
                unsized_writes += 1;
            }
            match r.kind {
                Kind::Load => {
                    m.read_op(core, r.address, size);
                }
                Kind::Store => {
                    m.write_op(core, r.address, size, Persist::None, false);
                }
                Kind::Modify => {
                    m.read_op(core, r.address, size);
                    m.write_op(core, r.address, size, Persist::None, false);
                }
                Kind::Flush => m.flush_op(core, r.address, opts.flush),
                Kind::Instr | Kind::Alloc | Kind::Free => {}
            }
        }
        records += n as u64;
    }
    if opts.drain {
        m.drain();
    }
    let elapsed_s = m.elapsed_ns() * 1e-9;
    let c = m.sys.counters();
    let (pw, lw) = m.sys.max_line_wear();
    let life = lifetime::report(
        c.media_writes_64b,
        elapsed_s,
        rated,
        dev.capacity_bytes as f64,
        pmem.dimms,
        lw,
        pw,
        &m.sys.page_media_writes(),
        opts.top_n,
    );
    let ratio = |a: f64, b: f64| if b == 0.0 { Value::Null } else { json!(a / b) };
    let stored_known = unsized_writes == 0;
    let stored = if stored_known {
        m.stored_bytes as f64
    } else {
        0.0
    };
    let stored_bytes = if stored_known {
        json!(m.stored_bytes)
    } else {
        Value::Null
    };
    let mut row = Map::new();
    for (k, v) in [
        ("trace", json!(trace_name)),
        ("device", json!(dev.name)),
        ("records", json!(records)),
        ("instructions", json!(instructions)),
        ("program_seconds", json!(elapsed_s)),
        ("stored_bytes", stored_bytes),
        ("unsized_writes", json!(unsized_writes)),
        ("flushed_lines", json!(m.h.flushed_lines)),
        (
            "wa_stores_to_wpq",
            ratio(c.wpq_inserts as f64 * 64.0, stored),
        ),
        (
            "write_amplification",
            ratio(c.media_writes_64b as f64, c.write_requests as f64),
        ),
        (
            "wa_end_to_end",
            ratio(c.media_writes_64b as f64 * 64.0, stored),
        ),
        (
            "media_bytes_per_hour",
            json!(life.media_write_rate_bytes_per_s * 3600.0),
        ),
    ] {
        row.insert(k.to_string(), v);
    }
    for (k, v) in c.columns().into_iter().chain(life.columns()) {
        row.insert(k.to_string(), v);
    }
    let mut out = RunOutput::new(
        "lifetime",
        opts.seed,
        serde_json::to_value(&opts).unwrap_or(Value::Null),
    );
    for k in [
        "wa_end_to_end",
        "wa_stores_to_wpq",
        "write_amplification",
        "rated_fraction_per_hour",
        "lifetime_years_no_wl",
        "lifetime_years_ideal_wl",
    ] {
        out.headline.insert(k.to_string(), row[k].clone());
    }
    out.rows.push(row);
    out.tables
        .insert("hot_ranges".into(), life.hot_range_rows());
    Ok(out)
}

/// Lifetime replays CPU memory accesses: block-device requests and page events are refused
/// with what they are, rather than read as memory addresses.
fn refuse_non_access(reader: &dyn TraceReader, trace_name: &str) -> Result<(), ConfigError> {
    let kind = reader
        .native_header()
        .map_or(reader.format().trace_kind(), |h| h.kind);
    let what = match kind {
        TraceKind::Access => return Ok(()),
        TraceKind::Block => "block-device requests (sectors of a disk), not memory accesses",
        TraceKind::PageEvents => "page allocation events, not memory accesses",
    };
    Err(ConfigError::new(
        trace_name,
        "",
        format!(
            "a {} trace holds {what}; lifetime needs a memory access trace (lackey, pinatrace, ChampSim, a memory-controller trace or native access trace)",
            reader.format()
        ),
    ))
}
