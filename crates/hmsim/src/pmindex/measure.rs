//! What the `pm-index` scenario measures: the cost of a workload on an index through the
//! cache + PMem model, and its throughput on this machine (one thread, or OS threads sharing
//! a `SharedIndex`).

use std::time::Instant;

use super::config::PmIndexConfig;
use super::index::{IndexOptions, IndexSpec, PmIndex};
use super::loaded::{self, Loaded};
use super::ops::Op;
use super::region::{PmRegion, PmStats, RegionConfig};
use super::rows::{CostRow, RealThreadsRow};
use super::shared::{run_threads, SharedIndex, ThreadRun};
use super::sim::ModelObserver;
use super::ycsb::{YcsbSpec, YcsbWorkload};
use crate::columns::Derived;
use crate::pmem::{DimmSpec, PmemCounters};

/// Per-phase measurement through the model.
pub(crate) struct Measured {
    pub ops: u64,
    pub inserts: u64,
    pub pm: PmStats,
    pub counters: PmemCounters,
    pub llc_misses: u64,
    pub sim_ns: f64,
}

fn run_phase(
    idx: &mut dyn PmIndex,
    pm: &mut PmRegion,
    ops: &[Op],
    threads: usize,
) -> Result<(), String> {
    for (i, op) in ops.iter().enumerate() {
        pm.set_thread(i % threads);
        op.apply(idx, pm).map_err(|e| format!("{op:?}: {e}"))?;
    }
    Ok(())
}

/// The region as the model run uses it: `hardware_flush` off (the model run is about
/// counts, not wall time; the instructions change no byte of the region).
fn model_region(sc: &PmIndexConfig) -> RegionConfig {
    let mut cfg = sc.pm.clone();
    cfg.hardware_flush = false;
    cfg
}

/// What a loaded region's bytes and an index's volatile state depend on besides the load's
/// operations: the index, its options and the region's settings (`hardware_flush` aside).
fn image_key(sc: &PmIndexConfig, spec: &IndexSpec) -> String {
    format!("{}|{:?}|{:?}", spec.name, model_region(sc), options(sc))
}

fn options(sc: &PmIndexConfig) -> IndexOptions {
    let mut o = IndexOptions::new(sc.index.key_type);
    o.capacity_hint = sc.index.capacity_hint;
    o.opts = sc.index.tonic;
    o
}

/// The phase a run measures: the load itself for a Load, else the YCSB run after it.
pub(crate) fn measured_phase<'a>(sc: &PmIndexConfig, load: &'a [Op], run: &'a [Op]) -> &'a [Op] {
    if sc.workload.kind == YcsbWorkload::Load {
        load
    } else {
        run
    }
}

/// Run the measured phase of `sc` through the model; (load ops, measured ops).
pub(crate) fn measure(
    sc: &PmIndexConfig,
    seed: u64,
    spec: &IndexSpec,
    dimm: DimmSpec,
    load: &[Op],
    run: &[Op],
) -> Result<Measured, String> {
    let threads = sc.workload.threads as usize;
    let is_load = sc.workload.kind == YcsbWorkload::Load;
    // Everything the load phase reads besides its operations (see `loaded`).
    let image = image_key(sc, spec);
    let model = format!("{:?}|{threads}|{dimm:?}|{seed}", sc.model);
    let kept = if is_load {
        loaded::release_other(&image, &model, load);
        None
    } else {
        loaded::reuse(&image, &model, load)
    };
    let (mut pm, mut idx) = match kept {
        Some(l) => (l.pm, l.idx),
        None => {
            let mut pm = PmRegion::anonymous(model_region(sc)).map_err(|e| e.to_string())?;
            let idx = (spec.create)(&mut pm, &options(sc)).map_err(|e| e.to_string())?;
            pm.set_observer(Some(Box::new(ModelObserver::new(
                &sc.model.pmem,
                &sc.model.cache,
                threads,
                dimm,
                seed,
            ))));
            let mut l = Loaded { pm, idx };
            if !is_load {
                run_phase(l.idx.as_mut(), &mut l.pm, load, threads)?;
                // The load's dirty lines are written back before the run phase is measured.
                observer_as_model(l.pm.observer_mut().expect("model attached"))
                    .m
                    .drain();
                loaded::keep(image.clone(), model.clone(), load, &l);
            }
            (l.pm, l.idx)
        }
    };
    let snap = |pm: &mut PmRegion| {
        let s = pm.stats();
        let o = pm.observer_mut().expect("model attached");
        let m = observer_as_model(o);
        (s, m.m.sys.counters(), m.llc_misses(), m.m.elapsed_ns())
    };
    let measured = measured_phase(sc, load, run);
    let (s0, c0, l0, t0) = snap(&mut pm);
    run_phase(idx.as_mut(), &mut pm, measured, threads)?;
    // A finished program's dirty lines land in PMem (they cost media writes too).
    {
        let m = observer_as_model(pm.observer_mut().expect("model attached"));
        m.m.drain();
    }
    let (s1, c1, l1, t1) = snap(&mut pm);
    if is_load {
        // A Load's measured phase is the others' load: the same operations on a fresh region
        // and model, then the drain (the snapshots only read counters). Kept, it serves the
        // workloads run after it on this thread.
        loaded::keep_owned(image, model, load, Loaded { pm, idx });
    }
    Ok(Measured {
        ops: measured.len() as u64,
        inserts: measured
            .iter()
            .filter(|o| matches!(o, Op::Insert(..)))
            .count() as u64,
        pm: s1.minus(&s0),
        counters: c1.since(&c0),
        llc_misses: l1 - l0,
        sim_ns: t1 - t0,
    })
}

fn observer_as_model(o: &mut dyn super::region::PmObserver) -> &mut ModelObserver {
    o.as_any_mut()
        .and_then(|a| a.downcast_mut::<ModelObserver>())
        .expect("the model observer")
}

/// What a native run (`real_throughput`) depends on: the index and its options, the
/// region's settings and the operations (the phase's settings and the seed that make them). Not the
/// simulated threads or anything of the model's.
pub(crate) fn native_key(sc: &PmIndexConfig, spec: &IndexSpec, y: &YcsbSpec, seed: u64) -> String {
    let timed = sc.throughput.timed_ops;
    format!(
        "{}|{:?}|{:?}|{y:?}|{seed}|{timed}",
        spec.name,
        sc.pm,
        options(sc)
    )
}

/// The operations `real_throughput` times: the whole measured phase, or the run phase's
/// first `throughput.timed_ops` (a Load is always timed whole; the config refuses the cut).
pub(crate) fn timed_phase<'a>(sc: &PmIndexConfig, load: &'a [Op], run: &'a [Op]) -> &'a [Op] {
    let phase = measured_phase(sc, load, run);
    &phase[..timed_len(sc, phase.len() as u64) as usize]
}

/// How many of a measured phase's `ops` operations are timed (see [`timed_phase`]).
fn timed_len(sc: &PmIndexConfig, ops: u64) -> u64 {
    match sc.throughput.timed_ops {
        n if n > 0 && sc.workload.kind != YcsbWorkload::Load => ops.min(n),
        _ => ops,
    }
}

/// Wall-clock ops/s of the measured phase on this machine, without the model.
pub(crate) fn real_throughput(
    sc: &PmIndexConfig,
    spec: &IndexSpec,
    load: &[Op],
    run: &[Op],
) -> Result<f64, String> {
    let fresh = || -> Result<Loaded, String> {
        let mut pm = PmRegion::anonymous(sc.pm.clone()).map_err(|e| e.to_string())?;
        let idx = (spec.create)(&mut pm, &options(sc)).map_err(|e| e.to_string())?;
        Ok(Loaded { pm, idx })
    };
    let (Loaded { mut pm, mut idx }, measured) = if sc.workload.kind == YcsbWorkload::Load {
        (fresh()?, load)
    } else {
        // The model's run of this workload kept its loaded state (see `loaded`).
        let l = match loaded::reuse_native(&image_key(sc, spec), load, &sc.pm) {
            Some(l) => l,
            None => {
                let mut l = fresh()?;
                run_phase(l.idx.as_mut(), &mut l.pm, load, 1)?;
                l
            }
        };
        (l, timed_phase(sc, load, run))
    };
    let t = Instant::now();
    run_phase(idx.as_mut(), &mut pm, measured, 1)?;
    Ok(measured.len() as f64 / t.elapsed().as_secs_f64().max(1e-9))
}

/// Wall-clock ops/s of the measured phase on `threads` OS threads sharing a [`SharedIndex`]
/// (best of `throughput.repeats`, each on a fresh index; before A–E the load runs untimed
/// on the same threads). YCSB inserts are of new keys, so a false one is a lost insert.
pub(crate) fn real_threads_throughput(
    sc: &PmIndexConfig,
    spec: &'static IndexSpec,
    load: &[Op],
    run: &[Op],
    threads: usize,
) -> Result<ThreadRun, String> {
    let mut best: Option<ThreadRun> = None;
    for _ in 0..sc.throughput.repeats.max(1) {
        let idx = SharedIndex::create(spec, &options(sc), &sc.pm, sc.throughput.shards)
            .map_err(|e| e.to_string())?;
        let measured = if sc.workload.kind == YcsbWorkload::Load {
            load
        } else {
            run_threads(&idx, load, threads)?;
            timed_phase(sc, load, run)
        };
        let r = run_threads(&idx, measured, threads)?;
        if r.failed_inserts > 0 {
            return Err(format!(
                "{} inserts of new keys returned false on {threads} threads",
                r.failed_inserts
            ));
        }
        if best.is_none_or(|b| r.wall_s < b.wall_s) {
            best = Some(r);
        }
    }
    Ok(best.expect("at least one repeat"))
}

/// One `real_threads` row per thread count: labelled real, wall clock, this machine.
pub(crate) fn real_thread_rows(
    sc: &PmIndexConfig,
    spec: &'static IndexSpec,
    load: &[Op],
    run: &[Op],
    ops: u64,
) -> Result<Vec<RealThreadsRow>, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut rows = Vec::new();
    for &t in &sc.throughput.real_threads {
        let b = real_threads_throughput(sc, spec, load, run, t as usize)?;
        let wall = b.wall_s.max(1e-9);
        rows.push(RealThreadsRow {
            index: spec.name.into(),
            family: spec.family.into(),
            workload: sc.workload.kind.name().into(),
            distribution: sc.workload.distribution,
            key_type: sc.index.key_type.name().into(),
            records: sc.workload.records,
            ops,
            source: "real".into(),
            clock: "wall".into(),
            os_threads: t,
            shards: sc.throughput.shards,
            machine_cores: cores,
            oversubscribed: t as usize > cores,
            repeats: sc.throughput.repeats.max(1),
            throughput_mops: b.ops as f64 / wall / 1e6,
            wall_s: b.wall_s,
            // Operations that found their shard locked by another thread.
            lock_waits_per_op: b.lock_waits as f64 / b.ops.max(1) as f64,
            // Cores the threads actually got (2 threads on a loaded machine may get ~1).
            cores_used: b.cpu_s / wall,
            mops_per_cpu_s: b.ops as f64 / b.cpu_s.max(1e-9) / 1e6,
        });
    }
    Ok(rows)
}

pub(crate) fn cost_row(
    sc: &PmIndexConfig,
    spec: &IndexSpec,
    m: &Measured,
    tput: Option<f64>,
    rated: f64,
) -> CostRow {
    let n = m.ops.max(1) as f64;
    let per = |x: u64| x as f64 / n;
    let c = &m.counters;
    let media_bytes = c.media_writes_64b as f64 * 64.0;
    let per_insert = (m.inserts > 0).then(|| media_bytes / m.inserts as f64);
    let t = &sc.index.tonic;
    let inserts_per_module = per_insert.filter(|&b| b > 0.0).map(|b| rated / b);
    let sim_insert_rate =
        (m.sim_ns > 0.0 && m.inserts > 0).then(|| m.inserts as f64 / m.sim_ns * 1e9);
    let rate = sc.lifetime.inserts_per_s.or(sim_insert_rate);
    let lifetime_years = match (inserts_per_module, rate) {
        (Some(i), Some(r)) => {
            Some(i * sc.lifetime.modules as f64 / r / crate::units::SECONDS_PER_YEAR)
        }
        _ => None,
    };
    CostRow {
        index: spec.name.into(),
        family: spec.family.into(),
        workload: sc.workload.kind.name().into(),
        distribution: sc.workload.distribution,
        key_type: sc.index.key_type.name().into(),
        threads: sc.workload.threads,
        records: sc.workload.records,
        ops: m.ops,
        flush: sc.pm.flush,
        no_bloat: t.no_bloat,
        coalesce_flushes: sc.pm.coalesce_flushes,
        evict_volatile: t.evict_volatile,
        xpline_nodes: t.xpline_nodes,
        flushes_per_op: per(m.pm.flushes),
        fences_per_op: per(m.pm.fences),
        ntstores_per_op: per(m.pm.ntstores),
        alloc_flushes_per_op: per(m.pm.alloc_flushes),
        alloc_fences_per_op: per(m.pm.alloc_fences),
        resize_flushes_per_op: per(m.pm.resize_flushes),
        resize_fences_per_op: per(m.pm.resize_fences),
        resize_ntstores_per_op: per(m.pm.resize_ntstores),
        flushes_coalesced_per_op: per(m.pm.flushes_coalesced),
        loads_per_op: per(m.pm.loads),
        stores_per_op: per(m.pm.stores),
        llc_misses_per_op: per(m.llc_misses),
        // Each counter column's counter is the one its declaration in `CostRow` names.
        wpq_inserts_per_op: Derived::of(c, n),
        write_requests_per_op: Derived::of(c, n),
        read_requests_per_op: Derived::of(c, n),
        media_writes_64b_per_op: Derived::of(c, n),
        media_writes_256b_per_op: c.media_writes_64b as f64 / 4.0 / n,
        write_amplification: (c.write_requests != 0)
            .then(|| c.media_writes_64b as f64 / c.write_requests as f64),
        media_bytes_per_op: media_bytes / n,
        media_bytes_per_insert: per_insert,
        // Ideal wear leveling: the module's rated bytes over the media bytes per insert.
        inserts_per_module,
        lifetime_inserts_per_s: rate,
        lifetime_years,
        sim_throughput_mops: if m.sim_ns > 0.0 {
            n / m.sim_ns * 1e3
        } else {
            0.0
        },
        throughput_mops: tput.map(|t| t / 1e6),
        timed_ops: tput.map(|_| timed_len(sc, m.ops)),
        counters: *c,
    }
}
