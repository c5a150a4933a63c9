//! The `[trace]` mode of a `pmem` scenario, behind `hmsim lifetime --trace`: replay any
//! memory trace through caches and the PMem path and report the media writes, amplification
//! per layer and lifetime it costs. Without flushes in the trace, lines reach PMem by
//! eviction (as in Memory Mode or un-flushed code); dirty lines left in the caches at the
//! end are written back (a finished program's data lands).

use serde_json::Value;

use super::config::PmemConfig;
use super::driver::{DimmSpec, Machine, Persist};
use super::lifetime;
use super::rows::{lifetime_output, ratio, LifetimeCols, LifetimeRow};
use super::system::{PmemCounters, PmemSystem};
use super::wear_table::LineTally;
use super::XPLINE_BYTES;
use crate::cache::{CacheConfig, FlushKind};
use crate::config::human_bytes;
use crate::device::DeviceSpec;
use crate::error::ConfigError;
use crate::hash::FastMap;
use crate::scenario::Output;
use crate::stats::{bins_from_repeats, poisson_tail};
use crate::trace::{Kind, TraceKind, TraceReader, NO_ID};

crate::params! {
    #[params(required)]
    /// A trace replayed through the caches and the PMem path for the media writes and
    /// lifetime it costs (the scenario's `[pmem]`, `[cache]` and `top_n` apply).
    #[derive(Debug, Clone)]
    pub struct TraceReplay {
        pub path: String => any, "",
            "The trace file, relative to the scenario (formats: docs/traces.md).";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub format: Option<String> = None => any, "",
            "Its format (docs/traces.md); default: sniffed from the file.";
        pub cores: usize = 1 => range(1, 4096), "", "Cores the trace's CPU ids are folded onto.";
        pub ns_per_instruction: f64 = 1.0 / 3.0 => range(0.0, 1e6), "ns",
            "Time per instruction between memory accesses (1 IPC at 3 GHz by default).";
        pub flush: FlushKind = FlushKind::Clwb => any, "", "What a trace's flush records execute.";
        pub drain: bool = true => any, "", "Write back dirty cached lines at the end of the trace.";
    }
}

/// Where errors in the replay options point.
const OPTIONS: &str = "<options>";

/// The `pmem` scenario of `hmsim lifetime`: `trace` (a path, absolute or relative to the
/// working directory) in `format` on `device`, with the replay options the Python side
/// passes as a JSON object: `pmem` and `cache` tables, `top_n` and `seed`, and the keys of
/// [`TraceReplay`] (`cores`, `ns_per_instruction`, `flush`, `drain`). Any other key lands
/// in `[trace]`, where reading the scenario refuses it by name.
pub fn lifetime_scenario(
    trace: &str,
    device: &str,
    options_json: &str,
    format: Option<&str>,
) -> Result<String, ConfigError> {
    let bad = |m: String| ConfigError::new(OPTIONS, "", format!("invalid replay options: {m}"));
    let v: Value = serde_json::from_str(options_json).map_err(|e| bad(e.to_string()))?;
    let Value::Object(options) = v else {
        return Err(bad("expected an object of options".into()));
    };
    let toml_of = |k: &str, v: Value| {
        toml::Value::try_from(v).map_err(|e| ConfigError::new(OPTIONS, k, e.to_string()))
    };
    let mut doc = toml::Table::new();
    doc.insert("module".into(), "pmem".into());
    let mut replay = toml::Table::new();
    replay.insert("path".into(), trace.into());
    if let Some(f) = format {
        replay.insert("format".into(), f.into());
    }
    for (k, v) in options {
        match k.as_str() {
            "pmem" | "cache" | "top_n" | "seed" => doc.insert(k.clone(), toml_of(&k, v)?),
            _ => replay.insert(k.clone(), toml_of(&k, v)?),
        };
    }
    let pmem = doc
        .entry("pmem")
        .or_insert_with(|| toml::Table::new().into());
    let Some(pmem) = pmem.as_table_mut() else {
        return Err(ConfigError::new(
            OPTIONS,
            "pmem",
            "expected a table of options",
        ));
    };
    pmem.insert("device".into(), device.into());
    doc.insert("trace".into(), replay.into());
    toml::to_string(&doc).map_err(|e| bad(e.to_string()))
}

/// The replay's setting: the PMem system, caches, trace options and device of a scenario.
pub(crate) struct ReplaySetup<'a> {
    pub pmem: &'a PmemConfig,
    pub cache: &'a CacheConfig,
    pub trace: &'a TraceReplay,
    pub top_n: usize,
    pub seed: u64,
    pub device: &'a DeviceSpec,
    /// The device's rated bytes written.
    pub rated: f64,
}

/// Replay `reader` (named `trace_name`) as `setup` says.
pub(crate) fn replay_trace(
    reader: &mut dyn TraceReader,
    trace_name: &str,
    setup: &ReplaySetup,
) -> Result<Output<LifetimeRow>, ConfigError> {
    let (opts, dev, rated) = (setup.trace, setup.device, setup.rated);
    refuse_non_access(reader, trace_name)?;
    let page_level = crate::trace::is_page_level(reader);
    let pmem = setup.pmem;
    let mut m = Machine::new(
        pmem,
        setup.cache,
        opts.cores,
        DimmSpec::from_rating(dev.capacity_bytes, rated),
        setup.seed,
    );
    // The replay reports no operation latencies: skip the histograms (outputs only).
    m.record_latency = false;
    let mut batch = Vec::with_capacity(4096);
    let (mut records, mut instructions) = (0u64, 0u64);
    // Stores whose size the format does not give (pinatrace, ChampSim): replayed as one
    // byte of their line, but per-byte figures are then unknown, not computed from 1.
    let mut unsized_writes = 0u64;
    // Stores per XPLine of the program's addresses, before the caches filter their repeats,
    // for a sample of the lines: how many lines the writes come from (`long_run`).
    // (A map of its own: a second caller of the wear table's update would stop its inlining
    // into the media path, which cost that path ≈ 45 %.)
    let mut stored_lines: FastMap<u64, u32> = FastMap::default();
    let mut count_store = |address: u64| {
        let line = address / XPLINE_BYTES;
        if in_store_sample(line) {
            *stored_lines.entry(line).or_insert(0) += 1;
        }
    };
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
                    count_store(r.address);
                    m.write_op(core, r.address, size, Persist::None, false);
                }
                Kind::Modify => {
                    count_store(r.address);
                    m.read_op(core, r.address, size);
                    m.write_op(core, r.address, size, Persist::None, false);
                }
                Kind::Flush => m.flush_op(core, r.address, opts.flush),
                Kind::Instr | Kind::Alloc | Kind::Free => {}
            }
        }
        records += n as u64;
    }
    let before_drain = m.sys.counters();
    if opts.drain {
        m.drain();
    }
    let elapsed_s = m.elapsed_ns() * 1e-9;
    let c = m.sys.counters();
    let mut trust = Trust::of(&before_drain, &c, pmem, elapsed_s);
    let life = lifetime::of_run(
        &m.sys,
        elapsed_s,
        rated,
        dev.capacity_bytes as f64,
        pmem.dimms,
        setup.top_n,
    );
    trust.warnings.extend(lucky_hottest_line(
        &m.sys,
        &stored_lines
            .values()
            .fold(LineTally::default(), |t, &n| t.count(n)),
        elapsed_s,
        life.line_endurance_writes,
    ));
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
        drain_media_share: trust.drain_share,
        wl_windows: trust.wl_windows,
        lifetime_basis: trust.basis.to_string(),
        counters: c,
        lifetime: LifetimeCols::from(&life),
    };
    let mut output = lifetime_output(
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
    output.warnings = trust.warnings;
    // The device's figures the PMem write path does not use: warned of by the scenario.
    if page_level {
        output.warnings.push(format!(
            "{trace_name} is a page-level trace (recorded with --page-level: one record per run of accesses to a page): the caches see only each run's first access, so the lines stored and the media writes are undercounted; replay a line-level trace (hmsim trace record --kind lackey, without --page-level)"
        ));
    }
    Ok(output)
}

/// Media writes of the hottest line up to which it may be only the luckiest of many lines.
const FEW_HOTTEST_WRITES: u32 = 10;
/// How far above the average written line's count such a line must stand to be flagged,
/// and the fewest writes it must have: a stream writes each line once, and an XPLine it
/// leaves half-written in the XPBuffer now and then takes two media writes — the same lines
/// on every pass, not luck.
const LUCKY_OVER_MEAN: f64 = 2.0;
const LUCKY_WRITES_MIN: u32 = 3;

/// The warning for a no-WL lifetime resting on a hottest line with a handful of writes, well
/// above the average written line's: the luckiest of many lines that random writes spread
/// over, whose count — and so the lifetime — is set by the trace's length, not by a line the
/// program keeps writing. None otherwise (a line written once per pass, as a stream writes
/// each, is the trace's rate repeated).
fn lucky_hottest_line(
    sys: &PmemSystem,
    stored: &LineTally,
    span_s: f64,
    line_endurance: f64,
) -> Option<String> {
    let (_, hottest) = sys.max_line_wear();
    let t = sys.logical_tally();
    if !(LUCKY_WRITES_MIN..=FEW_HOTTEST_WRITES).contains(&hottest) || t.lines == 0 {
        return None;
    }
    let mean = t.writes as f64 / t.lines as f64;
    if (hottest as f64) <= LUCKY_OVER_MEAN * mean {
        return None;
    }
    Some(format!(
        "lifetime_years_no_wl rests on the hottest line's {hottest} media writes in a {} run, \
         {:.1}× the {mean:.2} of an average written line ({} lines): a line so lightly \
         written is the luckiest of many that the writes spread over, not one the program \
         keeps writing, so the figure holds for this exact trace repeated and grows with the \
         trace's length (a program whose writes land elsewhere each run wears its hottest line \
         more slowly). {}",
        crate::units::human_seconds(span_s),
        hottest as f64 / mean,
        t.lines,
        long_run(stored, t.writes, span_s, line_endurance)
    ))
}

/// One XPLine in this many is in the sample of lines whose stores `long_run` counts: a map
/// update per store (a host-cache miss over a large footprint) for a sixteenth of them, and
/// the sample keeps ≈ 1/16 of the repeats (a 2 M-write replay over 16 GiB: ≈ 1 900, the
/// footprint within ≈ 2 %).
const STORE_SAMPLE: u64 = 16;

/// Whether XPLine `line` is in the sample: a Fibonacci hash's top bits, so a strided
/// pattern is sampled like a random one.
#[inline(always)]
fn in_store_sample(line: u64) -> bool {
    line.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 60 == 0
}

/// What a sparse run's repeats say about the long run: how many XPLines the program's stores
/// (`t`, counted before the caches, which absorb repeats close in time, on the sample of
/// lines) come from (the occupancy estimate from how often lines repeat, scaled by the
/// sample), whether they repeat as uniform stores over that many lines would (the sampled
/// lines stored to three or more times against the Poisson tail), and if so the lifetime
/// without wear leveling when the run's `media_writes` spread evenly over those lines, as
/// uniform writes make them in the long run.
fn long_run(t: &LineTally, media_writes: u64, span_s: f64, line_endurance: f64) -> String {
    let Some(sampled) = bins_from_repeats(t.lines, t.writes) else {
        return "No line was stored to twice, so how many lines the writes come from is not \
                known: replay a longer trace"
            .into();
    };
    let lines = sampled * STORE_SAMPLE as f64;
    let bytes = human_bytes((lines * XPLINE_BYTES as f64) as u64);
    let expected = sampled * poisson_tail(t.writes as f64 / sampled, 3);
    if t.lines_3plus as f64 > expected + 3.0 * expected.sqrt() + 3.0 {
        return format!(
            "{} sampled lines (one in {STORE_SAMPLE}) were stored to 3 or more times, against \
             ≈ {expected:.0} for uniform stores over the ≈ {lines:.3e} lines ({bytes}) their \
             repeats imply: some lines are written more than chance, and a longer trace shows \
             how much",
            t.lines_3plus
        );
    }
    let years = lifetime::years(line_endurance, media_writes as f64 / lines, span_s);
    format!(
        "The program's stores repeat as uniform stores over ≈ {lines:.3e} lines ({bytes}) would \
         ({} sampled lines, one in {STORE_SAMPLE}, stored to 3 or more times, ≈ {expected:.0} \
         expected): if its writes are \
         uniform over those lines, each is written at the average rate in the long run, and the \
         lifetime without wear leveling is ≈ {years:.3} years",
        t.lines_3plus
    )
}

/// Drain shares above this make a lifetime "drain-dominated".
const DRAIN_DOMINATED_SHARE: f64 = 0.5;

/// How far a replay's lifetime can be trusted: how much of its wear came from the final
/// write-back of the caches (a one-off event the lifetime would otherwise extrapolate as
/// steady wear) and whether the run outlasted one wear-leveling window.
struct Trust {
    drain_share: Option<f64>,
    wl_windows: f64,
    basis: &'static str,
    warnings: Vec<String>,
}

impl Trust {
    fn of(
        before_drain: &PmemCounters,
        all: &PmemCounters,
        pmem: &PmemConfig,
        span_s: f64,
    ) -> Trust {
        let media = all.media_writes_64b;
        let drained = media - before_drain.media_writes_64b;
        let drain_share = ratio(drained as f64, media as f64);
        // Media writes are counted in 64 B units; the AIT's window counts 256 B writes.
        let per_dimm = media as f64 / 4.0 / pmem.dimms.max(1) as f64;
        let wl_windows = per_dimm / pmem.ait.window_media_writes.max(1) as f64;
        let mut warnings = Vec::new();
        let span = crate::units::human_seconds(span_s);
        let basis = if media == 0 {
            "no-media-writes"
        } else if drain_share.unwrap_or(0.0) > DRAIN_DOMINATED_SHARE {
            warnings.push(format!(
                "lifetime rests on the final drain: {:.0} % of the media writes came from writing back the caches' dirty lines at the end of a {span} run, not from the program's steady traffic, and the lifetime extrapolates them as if they recurred; replay a longer trace (compare with --no-drain, which leaves them out) before trusting it",
                100.0 * drain_share.unwrap_or(0.0)
            ));
            "drain-dominated"
        } else if pmem.ait.wear_leveling && wl_windows < 1.0 {
            warnings.push(format!(
                "the run wrote {per_dimm:.0} media writes per DIMM, less than one wear-leveling window ({} writes, pmem.ait.window_media_writes): the simulated-WL lifetime has not seen the AIT level any wear; replay a longer trace",
                pmem.ait.window_media_writes
            ));
            "shorter-than-wl-window"
        } else {
            "steady-wear"
        };
        Trust {
            drain_share,
            wl_windows,
            basis,
            warnings,
        }
    }
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
    use crate::registry::run_scenario;
    use crate::scenario::RunOutput;

    /// Runs the lifetime scenario of the trace `bytes` (file name `name`) with `options`.
    fn run_trace(name: &str, bytes: &[u8], options: &str) -> Result<RunOutput, ConfigError> {
        let dir = std::env::temp_dir().join(format!(
            "hmsim-replay-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let text = lifetime_scenario(&path.display().to_string(), "optane-pmem", options, None)?;
        let out = run_scenario(&text, "<lifetime>", &[], &[]);
        std::fs::remove_dir_all(&dir).unwrap();
        out
    }

    /// Replays VANS `text` on one DIMM of the catalog's Optane PMem.
    fn replay(text: String, options: &str) -> RunOutput {
        run_trace("t.vans", text.as_bytes(), options).unwrap()
    }

    fn basis(out: &RunOutput) -> (String, Option<f64>) {
        let row = &out.rows[0];
        (
            row["lifetime_basis"].as_str().unwrap().to_string(),
            row["drain_media_share"].as_f64(),
        )
    }

    #[test]
    fn a_page_level_trace_is_flagged() {
        let lifetime = |source: &str| {
            let mut buf = Vec::new();
            let header = crate::trace::NativeHeader {
                source: source.into(),
                ..Default::default()
            };
            let mut w = crate::trace::NativeWriter::new(&mut buf, &header).unwrap();
            for i in 0..64u64 {
                w.write(&crate::trace::TraceRecord::new(Kind::Store, i * 4096, 8))
                    .unwrap();
            }
            w.finish().unwrap();
            run_trace("t.hmt", &buf, "{}").unwrap()
        };
        let page_level = |out: &RunOutput| out.warnings.iter().any(|w| w.contains("page-level"));
        assert!(page_level(&lifetime("lackey: sort (page level)")));
        assert!(!page_level(&lifetime("lackey: sort")));
    }

    #[test]
    fn a_lifetime_resting_on_the_final_drain_is_flagged() {
        // 256 KiB stored once, which the caches hold: every media write is the drain's.
        let small: String = (0..4096).map(|i| format!("{:#x} W\n", i * 64)).collect();
        let out = replay(small.clone(), r#"{"pmem": {"dimms": 1}}"#);
        assert_eq!(basis(&out), ("drain-dominated".into(), Some(1.0)));
        assert!(
            out.warnings[0].contains("final drain"),
            "{:?}",
            out.warnings
        );
        // Without the drain nothing reaches the media, and nothing is extrapolated.
        let out = replay(small, r#"{"pmem": {"dimms": 1}, "drain": false}"#);
        assert_eq!(basis(&out), ("no-media-writes".into(), None));
        assert!(out.warnings.is_empty());
    }

    #[test]
    fn a_long_streaming_replay_rests_on_steady_wear() {
        // 512 MiB written once, sequentially: the caches hold a small part of it.
        let text: String = (0..(512u64 << 20) / 64)
            .map(|i| format!("{:#x} W\n", i * 64))
            .collect();
        let out = replay(text, r#"{"pmem": {"dimms": 1}}"#);
        let (b, share) = basis(&out);
        assert_eq!(b, "steady-wear");
        assert!(share.unwrap() < 0.2, "drain share {share:?}");
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    }

    /// Random 64 B writes over 1 GiB through 8 KiB caches: nearly every line is written once,
    /// and the hottest's few writes are luck, which the run says. A 64 KiB region (more than
    /// the caches) written in turn on every fourth store among them is hot, which it does not
    /// say.
    #[test]
    fn a_hottest_line_of_a_few_random_writes_is_flagged_as_luck() {
        let mut rng = crate::rng::stream(3, "test");
        let addrs: Vec<u64> = (0..200_000)
            .map(|_| rand::Rng::random_range(&mut rng, 0..(1u64 << 30) / 64) * 64)
            .collect();
        let tiny = r#"{"size_bytes": 8192, "ways": 2}"#;
        let opts = format!(
            r#"{{"pmem": {{"dimms": 1}}, "cache": {{"l1": {tiny}, "l2": {tiny}, "llc": {tiny}}}}}"#
        );
        let lucky = |out: &RunOutput| out.warnings.iter().any(|w| w.contains("luckiest"));
        let random: String = addrs.iter().map(|a| format!("{a:#x} W\n")).collect();
        let out = replay(random, &opts);
        assert!(lucky(&out), "{:?}", out.warnings);
        // The lines the writes come from, from how often they repeat: 1 GiB of XPLines.
        let w = out
            .warnings
            .iter()
            .find(|w| w.contains("luckiest"))
            .unwrap();
        let lines: f64 = w
            .split("uniform stores over ≈ ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{w}"));
        assert!(
            (lines / ((1u64 << 30) / 256) as f64 - 1.0).abs() < 0.05,
            "{w}"
        );
        assert!(w.contains("lifetime without wear leveling is ≈"), "{w}");
        // A warm set among them, each of its 8192 lines written 5 times over the trace:
        // still a lucky hottest line, but the lines written 3 or more times are far more
        // than uniform writes give, so no long-run figure.
        let warm: String = addrs
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let warm = (1u64 << 29) + (i as u64 * 7919 % 8192) * 256;
                format!("{:#x} W\n", if i % 5 == 0 { warm } else { a })
            })
            .collect();
        let out = replay(warm, &opts);
        let w = out.warnings.iter().find(|w| w.contains("luckiest"));
        let w = w.unwrap_or_else(|| panic!("{:?}", out.warnings));
        assert!(w.contains("some lines are written more than chance"), "{w}");
        let hot: String = addrs
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let hot = (1u64 << 20) + (i as u64 / 4 % 1024) * 64;
                format!("{:#x} W\n", if i % 4 == 0 { hot } else { a })
            })
            .collect();
        let out = replay(hot, &opts);
        assert!(!lucky(&out), "{:?}", out.warnings);
    }

    #[test]
    fn a_replay_shorter_than_a_wear_leveling_window_is_flagged() {
        // 2 MiB streamed through 8 KiB caches: 8192 media writes, a quarter of a
        // 32768-write window, and almost none of them from the drain.
        let text: String = (0..(2u64 << 20) / 64)
            .map(|i| format!("{:#x} W\n", i * 64))
            .collect();
        let tiny = r#"{"size_bytes": 8192, "ways": 2}"#;
        let opts = format!(
            r#"{{"pmem": {{"dimms": 1, "ait": {{"window_media_writes": 32768}}}}, "cache": {{"l1": {tiny}, "l2": {tiny}, "llc": {tiny}}}}}"#
        );
        let out = replay(text, &opts);
        assert_eq!(basis(&out).0, "shorter-than-wl-window");
        assert!(out.warnings[0].contains("wear-leveling window"));
    }

    #[test]
    fn options_are_read_like_a_scenario() {
        let text = lifetime_scenario(
            "t.vans",
            "optane-pmem",
            r#"{"cores": 4, "pmem": {"dimms": 2}, "flush": "clflush", "seed": 5}"#,
            Some("vans"),
        )
        .unwrap();
        let sc = crate::scenario::parse_config::<super::super::Pmem>(&text);
        let tr = sc.trace.unwrap();
        assert_eq!(
            (tr.cores, sc.pmem.dimms, tr.flush),
            (4, 2, FlushKind::Clflush)
        );
        assert_eq!(
            (tr.path.as_str(), tr.format.as_deref()),
            ("t.vans", Some("vans"))
        );
        assert!(tr.drain && sc.top_n == 10 && sc.workload.is_none());
        assert_eq!(sc.pmem.device, "optane-pmem");
        assert!(text.contains("seed = 5"), "{text}");
        for (json, key) in [
            (r#"{"cores": 0}"#, "trace.cores"),
            (r#"{"coress": 2}"#, "trace.coress"),
            (r#"{"pmem": {"dimmz": 3}}"#, "pmem.dimmz"),
            (r#"{"flush": "sfence"}"#, "trace.flush"),
        ] {
            let e = run_trace("t.vans", b"0x40 W\n", json).unwrap_err();
            assert_eq!(e.key, key, "{e}");
        }
        let e = lifetime_scenario("t", "optane-pmem", "[1]", None).unwrap_err();
        assert!(e.message.contains("object"), "{e}");
        assert!(lifetime_scenario("t", "optane-pmem", "{", None).is_err());
    }
}
