//! `hmsim lifetime --trace`: replay any memory trace through caches and the PMem path and
//! report the media writes, amplification per layer and lifetime it costs. Without flushes
//! in the trace, lines reach PMem by eviction (as in Memory Mode or un-flushed code); dirty
//! lines left in the caches at the end are written back (a finished program's data lands).

use serde_json::Value;

use super::config::PmemConfig;
use super::driver::{DimmSpec, Machine, Persist};
use super::lifetime;
use super::rows::{lifetime_output, ratio, LifetimeCols, LifetimeRow};
use crate::cache::{CacheConfig, FlushKind};
use crate::config::{parse_toml, Validator};
use crate::device::Catalog;
use crate::error::ConfigError;
use crate::scenario::RunOutput;
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

/// Where errors in the replay options point.
const OPTIONS: &str = "<options>";

/// The replay options as TOML text, from the JSON object the Python side passes, so they are
/// read like a scenario: key paths and "unknown key" in errors, the same sanity checks.
fn options_text(options_json: &str) -> Result<String, ConfigError> {
    let bad = |m: String| ConfigError::new(OPTIONS, "", format!("invalid replay options: {m}"));
    let v: Value = serde_json::from_str(options_json).map_err(|e| bad(e.to_string()))?;
    if !v.is_object() {
        return Err(bad("expected an object of options".into()));
    }
    toml::to_string(&v).map_err(|e| bad(e.to_string()))
}

/// The replay options, parsed and validated as a scenario's configuration is.
pub fn parse_options(options_json: &str) -> Result<ReplayOptions, ConfigError> {
    let text = options_text(options_json)?;
    // Lines of the generated text mean nothing to the caller: errors name the key only.
    let no_line = |mut e: ConfigError| {
        e.line = None;
        e
    };
    let opts: ReplayOptions = parse_toml(&text, OPTIONS).map_err(no_line)?;
    Validator::check(OPTIONS, &text, &opts).map_err(no_line)?;
    Ok(opts)
}

/// Replay `reader` on `device` (a catalog memory device with a rated endurance).
pub fn lifetime_trace(
    reader: &mut dyn TraceReader,
    trace_name: &str,
    device: &str,
    options_json: &str,
    catalog: &Catalog,
) -> Result<RunOutput, ConfigError> {
    let opts = parse_options(options_json)?;
    let (dev, rated) = catalog.memory_with_rated_writes(device, "--device", "device")?;
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
    let life = lifetime::of_run(
        &m.sys,
        elapsed_s,
        rated,
        dev.capacity_bytes as f64,
        pmem.dimms,
        opts.top_n,
    );
    let stored_known = unsized_writes == 0;
    let stored = if stored_known {
        m.stored_bytes as f64
    } else {
        0.0
    };
    let row = LifetimeRow {
        trace: trace_name.to_string(),
        device: dev.name.clone(),
        records,
        instructions,
        program_seconds: elapsed_s,
        stored_bytes: stored_known.then_some(m.stored_bytes),
        unsized_writes,
        flushed_lines: m.h.flushed_lines,
        wa_stores_to_wpq: ratio(c.wpq_inserts as f64 * 64.0, stored),
        write_amplification: ratio(c.media_writes_64b as f64, c.write_requests as f64),
        wa_end_to_end: ratio(c.media_writes_64b as f64 * 64.0, stored),
        media_bytes_per_hour: life.media_write_rate_bytes_per_s * 3600.0,
        counters: c,
        lifetime: LifetimeCols::from(&life),
    };
    let output = lifetime_output(
        row,
        &[
            "wa_end_to_end",
            "wa_stores_to_wpq",
            "write_amplification",
            "rated_fraction_per_hour",
            "lifetime_years_no_wl",
            "lifetime_years_ideal_wl",
        ],
        &life,
    );
    let resolved = serde_json::to_value(&opts).unwrap_or(Value::Null);
    Ok(RunOutput::from_output(
        "lifetime", opts.seed, resolved, output,
    ))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_read_like_a_scenario() {
        let o = parse_options(r#"{"cores": 4, "pmem": {"dimms": 2}, "flush": "clflush"}"#).unwrap();
        assert_eq!((o.cores, o.pmem.dimms, o.flush), (4, 2, FlushKind::Clflush));
        assert!(o.drain && o.top_n == 10);
        for (json, key) in [
            (r#"{"cores": 0}"#, "cores"),
            (r#"{"coress": 2}"#, "coress"),
            (r#"{"pmem": {"dimmz": 3}}"#, "pmem.dimmz"),
            (r#"{"flush": "sfence"}"#, "flush"),
        ] {
            let e = parse_options(json).unwrap_err();
            assert_eq!(
                (e.file.as_str(), e.key.as_str(), e.line),
                (OPTIONS, key, None)
            );
        }
        assert!(parse_options("[1]").unwrap_err().message.contains("object"));
        assert!(parse_options("{").is_err());
    }
}
