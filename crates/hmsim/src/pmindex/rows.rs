//! The result rows of the `pm-index` module: the cost of one workload on one index
//! ([`CostRow`]) or, for a crash-consistency run, one row per image mode ([`CrashRow`]);
//! `results.csv` holds one kind or the other ([`PmIndexRow`]). The `real_threads` table
//! ([`RealThreadsRow`]) holds host-measured throughput on OS threads.

use serde::Serialize;

use super::crash::CrashReport;
use super::ycsb::Distribution;
use crate::cache::FlushKind;
use crate::columns::{union, union_len, PerOp};
use crate::pmem::PmemCounters;
use crate::result_row;
use crate::scenario::{Column, ColumnType, Dtype, ResultRow};

impl ColumnType for Distribution {
    const DTYPE: Dtype = Dtype::Str;
}

impl ColumnType for FlushKind {
    const DTYPE: Dtype = Dtype::Str;
}

result_row! {
    /// Per-operation cost of the measured phase through the cache + PMem model.
    pub(crate) struct CostRow {
        index: String ["", "index name"],
        family: String ["", "hash or ordered"],
        workload: String ["", "YCSB workload (load, a, b, c, e)"],
        distribution: Distribution ["", "key popularity"],
        key_type: String ["", "int or string keys"],
        threads: u32 ["threads", "simulated threads"],
        records: u64 ["keys", "keys inserted by the load phase"],
        ops: u64 ["operations", "operations in the measured phase"],
        flush: FlushKind ["", "flush instruction"],
        no_bloat: bool ["", "Tonic switch: all-zero lines not flushed"],
        coalesce_flushes: bool ["", "Tonic switch: flushes of unchanged lines dropped"],
        evict_volatile: bool ["", "Tonic switch: volatile fields kept off PM lines"],
        xpline_nodes: bool ["", "Tonic switch: 256 B XPLine-sized nodes"],
        flushes_per_op: f64 ["1/op", "index flushes per operation"],
        fences_per_op: f64 ["1/op", "index fences per operation"],
        ntstores_per_op: f64 ["1/op", "non-temporal stores per operation"],
        alloc_flushes_per_op: f64 ["1/op", "persistent allocator flushes per operation"],
        alloc_fences_per_op: f64 ["1/op", "persistent allocator fences per operation"],
        resize_flushes_per_op: f64 ["1/op", "flushes issued while resizing or splitting"],
        resize_fences_per_op: f64 ["1/op", "fences issued while resizing or splitting"],
        resize_ntstores_per_op: f64 ["1/op", "non-temporal stores while resizing or splitting"],
        flushes_coalesced_per_op: f64 ["1/op", "flushes dropped by coalesce_flushes"],
        loads_per_op: f64 ["1/op", "instrumented loads per operation"],
        stores_per_op: f64 ["1/op", "instrumented stores per operation"],
        llc_misses_per_op: f64 ["1/op", "LLC misses per operation"],
        wpq_inserts_per_op: [PerOp(PmemCounters::wpq_inserts)],
        write_requests_per_op: [PerOp(PmemCounters::write_requests)],
        read_requests_per_op: [PerOp(PmemCounters::read_requests)],
        media_writes_64b_per_op: [PerOp(PmemCounters::media_writes_64b)],
        media_writes_256b_per_op: f64 ["256 B/op", "media writes per operation, 256 B units"],
        write_amplification: Option<f64> ["", "media writes per write request (empty: no requests)"],
        media_bytes_per_op: f64 ["B/op", "media bytes written per operation"],
        media_bytes_per_insert: Option<f64> ["B", "media bytes written per insert (empty: no inserts)"],
        inserts_per_module: Option<f64> ["inserts", "inserts until the module's rated bytes are written (ideal wear leveling)"],
        lifetime_inserts_per_s: Option<f64> ["", "insert rate the lifetime is stated for (lifetime.inserts_per_s, or the simulated insert rate)"],
        lifetime_years: Option<f64> ["", "years until lifetime.modules modules reach their rated bytes at that rate (ideal wear leveling; empty: no media writes or inserts)"],
        sim_throughput_mops: f64 ["", "simulated throughput"],
        throughput_mops: Option<f64> ["", "throughput on this machine without the model (empty: not measured)", measured],
        timed_ops: Option<u64> ["operations", "operations that throughput_mops timed: the measured phase's first ones (throughput.timed_ops; empty: not measured)"],
        counters: PmemCounters [flatten],
    }
}

result_row! {
    /// One crash-consistency run (one image mode) of the crash harness.
    pub(crate) struct CrashRow {
        index: String ["", "index name"],
        key_type: String ["", "int or string keys"],
        adversarial: bool ["", "images add a random half of the unpersisted lines"],
        operations: u64 ["operations", "operations run"],
        persist_points: u64 ["fences", "persist points passed"],
        images_checked: u64 ["images", "crash images recovered and checked"],
        failures: u64 ["images", "images whose recovery broke a guarantee"],
        first_failures: String ["", "the first failures, described (separated by |)"],
    }
}

impl From<&CrashReport> for CrashRow {
    fn from(r: &CrashReport) -> CrashRow {
        CrashRow {
            index: r.index.clone(),
            key_type: r.key_type.clone(),
            adversarial: r.adversarial,
            operations: r.operations,
            persist_points: r.persist_points,
            images_checked: r.images_checked,
            failures: r.failures,
            first_failures: r.first_failures.join(" | "),
        }
    }
}

result_row! {
    /// The measured phase on OS threads sharing a `SharedIndex`: real, wall clock, this machine.
    pub(crate) struct RealThreadsRow {
        index: String ["", "index name"],
        family: String ["", "hash or ordered"],
        workload: String ["", "YCSB workload"],
        distribution: Distribution ["", "key popularity"],
        key_type: String ["", "int or string keys"],
        records: u64 ["keys", "keys inserted by the load phase"],
        ops: u64 ["operations", "operations in the measured phase"],
        source: String ["", "always real (not the model)"],
        clock: String ["", "always wall"],
        os_threads: u32 ["threads", "OS threads"],
        shards: usize ["shards", "independently locked shards"],
        machine_cores: usize ["cores", "cores of this machine", measured],
        oversubscribed: bool ["", "more threads than cores", measured],
        repeats: u32 ["runs", "timed runs; the best is reported"],
        throughput_mops: f64 ["", "operations per wall-clock second", measured],
        wall_s: f64 ["", "wall time of the best run", measured],
        lock_waits_per_op: f64 ["1/op", "operations that found their shard locked", measured],
        cores_used: f64 ["cores", "CPU time over wall time (cores the threads got)", measured],
        mops_per_cpu_s: f64 ["", "operations per CPU second", measured],
    }
}

/// A row of `results.csv`: a cost row, or a crash row in a crash-consistency run (a run
/// writes one kind only).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(crate) enum PmIndexRow {
    Cost(Box<CostRow>),
    Crash(CrashRow),
}

const UNION_LEN: usize = union_len(CostRow::COLUMNS, CrashRow::COLUMNS);
static UNION: [Column; UNION_LEN] = union(CostRow::COLUMNS, CrashRow::COLUMNS);

impl ResultRow for PmIndexRow {
    /// The cost columns, then the crash columns the cost row lacks.
    const COLUMNS: &'static [Column] = &UNION;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::columns::{counter_index, Derivation};

    #[test]
    fn the_counter_columns_per_op_are_the_pmem_counters_declarations() {
        let named = |cols: &[Column], name: &str| cols.iter().find(|c| c.name == name).copied();
        for k in [
            "wpq_inserts",
            "write_requests",
            "read_requests",
            "media_writes_64b",
        ] {
            let counter = PmemCounters::COLUMNS[counter_index(PmemCounters::COLUMNS, k)];
            let col = named(CostRow::COLUMNS, &format!("{k}{}", PerOp::NAME_SUFFIX)).unwrap();
            assert_eq!(col.unit, format!("{}{}", counter.unit, PerOp::UNIT_SUFFIX));
            assert_eq!(col.doc, format!("{}{}", counter.doc, PerOp::DOC_SUFFIX));
            assert_eq!(col.dtype, Dtype::Float);
        }
    }

    #[test]
    fn the_results_columns_are_both_rows_columns_once() {
        let names: Vec<_> = PmIndexRow::COLUMNS.iter().map(|c| c.name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        for c in CostRow::COLUMNS.iter().chain(CrashRow::COLUMNS) {
            assert!(names.contains(&c.name), "{}", c.name);
        }
        assert_eq!(
            names.len(),
            CostRow::COLUMNS.len() + CrashRow::COLUMNS.len() - 2
        );
    }
}
