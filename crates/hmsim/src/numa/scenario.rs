//! The `numa` scenario: one allocation (by one or more tasks) under each listed
//! policy on one topology, its cost, where it landed, and an application run over it.

use serde_json::json;

use super::app::{self, AppKind, AppSpec, Mix};
use super::capacity::metadata_pages;
use super::cost::{alloc_time, AllocCost, AllocTime, SwapSpec};
use super::mmcache::MemoryModeSpec;
use super::placer::{Placement, Placer, Task};
use super::policies::{parse_policy, policy_names, LinuxDefault};
use super::policy::PlacementPolicy;
use super::pool::{Pool, PoolNode};
use super::topology::{self, NodeKind, NumaMachine, Topology};
use crate::config::{Validate, Validator};
use crate::error::RunError;
use crate::result_row;
use crate::scenario::{Column, Ctx, Experiment, Output, ResultRow, Scenario, Step};

/// The `numa` module.
pub struct Numa;

/// The placement policies a scenario runs when it lists none.
pub(super) const DEFAULT_POLICIES: &[&str] = &[
    "linux-default",
    "kmem-dax",
    "kmem-dax-all",
    "kmem-dax-preferred",
    "interleave-all",
    "memory-mode",
    "aliusm",
];

crate::params! {
    #[params(check)]
    /// A `numa` scenario: a machine, the policies to compare, the allocation and the
    /// application run over it.
    #[derive(Debug, Clone)]
    pub struct NumaConfig {
        #[serde(skip_serializing_if = "Option::is_none")]
        pub topology_preset: Option<String> = None => any, "",
            "A built-in preset (`aliusm-2s`, `cxl-box`) or a topology TOML file relative to the scenario; default `aliusm-2s`.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub topology: Option<Topology> = None => any, "",
            "An inline machine topology instead of a preset (docs/parameters/numa-topology.md).";
        pub policies: Vec<String> = DEFAULT_POLICIES.iter().map(|s| s.to_string()).collect() => any, "",
            "Placement policies to run, each once (docs/numa-pmem.md).";
        pub allocation: AllocationSpec = AllocationSpec::default() => nested, "",
            "The allocation.";
        pub app: AppSpec = AppSpec::default() => nested, "",
            "The application run over the allocation.";
        pub cost: AllocCost = AllocCost::default() => nested, "",
            "Kernel cost of the allocation.";
        pub swap: SwapSpec = SwapSpec::default() => nested, "",
            "Swap space behind the nodes.";
        // Checked once the topology's page size is known.
        pub memory_mode: MemoryModeSpec = MemoryModeSpec::default() => table, "",
            "The Memory Mode cache.";
    }
}

crate::params! {
    #[params(check)]
    /// One bulk allocation by one or more tasks.
    #[derive(Debug, Clone)]
    pub struct AllocationSpec {
        pub size_bytes: u64 = 100 << 30 => range(1, 1 << 60), "", "Bytes to allocate.";
        pub tasks: u32 = 1 => range(1, 1 << 20), "tasks",
            "Tasks that allocate in turn, `chunk_bytes` at a time, until `size_bytes` is placed.";
        pub core: u32 = 0 => any, "", "Core of task 0.";
        pub core_stride: u32 = 1 => any, "", "Task i runs on core `core + i × core_stride`.";
        #[serde(skip_serializing_if = "Option::is_none")]
        pub chunk_bytes: Option<u64> = None => range(4096, 1 << 60), "",
            "Bytes per allocation call, at most 10 million of them; default `size_bytes / tasks` (one vmalloc per task).";
    }
}

impl AllocationSpec {
    fn check(&self, v: &mut Validator) {
        if let Some(c) = self.chunk_bytes {
            if self.size_bytes / c > 10_000_000 {
                v.fail(
                    "chunk_bytes",
                    "more than 10 million chunks; use larger chunks",
                );
            }
        }
    }
}

impl NumaConfig {
    fn check(&self, v: &mut Validator) {
        if self.policies.is_empty() {
            v.fail(
                "policies",
                format!("empty; allowed: {}", policy_names().join(", ")),
            );
        }
        v.distinct("policies", &self.policies);
    }
}

struct MM<'a>(&'a MemoryModeSpec, u64);

impl Validate for MM<'_> {
    fn validate(&self, v: &mut Validator) {
        self.0.validate_for(v, self.1);
    }
}

/// Placement, cost and pool of one policy's run.
pub struct NumaOutcome {
    pub pool: Pool,
    pub placement: Placement,
    pub time: AllocTime,
    pub socket: usize,
    /// Pages of page tables and vmalloc page array placed for the allocation.
    pub metadata_pages: u64,
    /// Why the allocation failed (empty when it succeeded).
    pub oom_reason: String,
}

/// Allocate `a` under `policy` on `m`: tasks in turn, a chunk at a time.
pub fn allocate(
    m: &NumaMachine,
    policy: &dyn PlacementPolicy,
    a: &AllocationSpec,
    cost: &AllocCost,
    swap: &SwapSpec,
) -> NumaOutcome {
    let pool = Pool::for_policy(m, policy);
    let pb = m.spec.page_bytes;
    let mut placer = Placer::new(&pool, swap.bytes / pb);
    let mut total = Placement {
        pages: vec![0; pool.nodes.len()],
        ..Placement::default()
    };
    let mut time = AllocTime::default();
    let pages = a.size_bytes.div_ceil(pb);
    let chunk = a
        .chunk_bytes
        .map_or(pages.div_ceil(a.tasks as u64), |c| c.div_ceil(pb))
        .max(1);
    let tasks: Vec<Task> = (0..a.tasks)
        .map(|i| {
            let (socket, home) = m.home_of_core(a.core + i * a.core_stride);
            Task {
                id: i,
                socket,
                home: pool.home(home),
            }
        })
        .collect();
    let mut left = pages;
    let mut i = 0usize;
    let (mut meta_total, mut oom_reason) = (0u64, String::new());
    while left > 0 {
        let t = tasks[i % tasks.len()];
        let n = chunk.min(left);
        // The allocation's page tables and page array first: kernel memory (GFP_KERNEL,
        // local node first by distance, never swapped).
        let meta = metadata_pages(n, pb);
        let swap_free = std::mem::replace(&mut placer.swap_free, 0);
        let mp = placer.place(&pool, &LinuxDefault, t, meta);
        placer.swap_free = swap_free;
        meta_total += meta - mp.failed_pages;
        if !mp.ok() {
            total.failed_pages = left;
            total.exhausted = (0..pool.nodes.len()).map(|p| pool.nodes[p].topo).collect();
            oom_reason = format!(
                "no room for the allocation's {:.2} GiB of page tables and page array",
                meta as f64 * pb as f64 / GIB
            );
            break;
        }
        let before = total.pages.clone();
        let pl = placer.place(&pool, policy, t, n);
        let dt = alloc_time(m, &pool, &pl, &before, t.socket, cost, swap);
        time.kernel_ns += dt.kernel_ns;
        time.zero_ns += dt.zero_ns;
        time.remote_ns += dt.remote_ns;
        time.swap_ns += dt.swap_ns;
        for (x, y) in total.pages.iter_mut().zip(&pl.pages) {
            *x += y;
        }
        total.swap_pages += pl.swap_pages;
        left -= n;
        if !pl.ok() {
            total.failed_pages = pl.failed_pages + left;
            total.exhausted = pl.exhausted.iter().map(|&p| pool.nodes[p].topo).collect();
            oom_reason = oom_reason_for(&pool, &pl.exhausted, a.size_bytes, meta_total, pb);
            break;
        }
        i += 1;
    }
    NumaOutcome {
        pool,
        placement: total,
        time,
        socket: tasks[0].socket,
        metadata_pages: meta_total,
        oom_reason,
    }
}

const GIB: f64 = (1u64 << 30) as f64;

/// What the policy's nodes could give and what the kernel took from them.
fn oom_reason_for(pool: &Pool, nodes: &[usize], size_bytes: u64, meta: u64, pb: u64) -> String {
    let sum = |f: &dyn Fn(&PoolNode) -> u64| -> f64 {
        nodes.iter().map(|&i| f(&pool.nodes[i])).sum::<u64>() as f64 / GIB
    };
    format!(
        "requested {:.2} GiB + {:.2} GiB page tables and page array; the policy's nodes hold \
         {:.2} GiB usable = {:.2} GiB managed - {:.2} GiB struct page - {:.2} GiB reserves \
         (all full), then swap (full)",
        size_bytes as f64 / GIB,
        meta as f64 * pb as f64 / GIB,
        sum(&|n| n.capacity_pages * pb),
        sum(&|n| n.budget.managed_bytes),
        sum(&|n| n.budget.struct_page_bytes),
        sum(&|n| n.budget.reserve_bytes),
    )
}

result_row! {
    /// One policy's allocation and application run (`results.csv`).
    pub struct NumaRow {
        experiment: String ["", "the scenario's name"],
        policy: String ["", "placement policy"],
        topology: String ["", "machine topology"],
        size_gib: f64 ["", "allocation size"],
        size_gb: f64 ["", "allocation size"],
        size_bytes: u64 ["", "allocation size"],
        tasks: u32 ["tasks", "tasks allocating in turn"],
        ok: bool ["", "the allocation succeeded"],
        oom_nodes: String ["", "nodes full when it failed, then swap (empty: succeeded)"],
        oom_reason: String ["", "why it failed (empty: succeeded)"],
        usable_gib: f64 ["", "usable capacity of the pool's nodes"],
        struct_page_gib: f64 ["", "memory the kernel's struct page takes"],
        reserve_gib: f64 ["", "kernel reserves (min_free)"],
        metadata_gib: f64 ["", "page tables and page array of the allocation"],
        placed_gib: f64 ["", "memory placed, swap included"],
        swap_gib: f64 ["", "memory placed in swap"],
        alloc_time_s: f64 ["", "allocation time"],
        alloc_zero_s: f64 ["", "of which zeroing pages"],
        alloc_remote_s: f64 ["", "of which remote-node overhead"],
        alloc_swap_s: f64 ["", "of which swapping out"],
        dram_share: f64 ["", "share of placed pages in DRAM"],
        pmem_share: f64 ["", "share of placed pages in far memory"],
        swap_share: f64 ["", "share of placed pages in swap"],
        remote_share: f64 ["", "share of placed pages on the other socket"],
        app: String ["", "application kind (none: allocation only)"],
        threads: u32 ["threads", "application threads"],
        runtime_s: Option<f64> ["", "application runtime"],
        bandwidth_gb_s: Option<f64> ["", "application memory bandwidth"],
        latency_ns: Option<f64> ["", "mean loaded memory latency"],
        idle_latency_ns: Option<f64> ["", "mean idle random-read latency over the placement"],
        idle_seq_latency_ns: Option<f64> ["", "mean idle sequential-read latency over the placement"],
        cache_hit_ratio: Option<f64> ["", "Memory Mode DRAM cache hit ratio"],
        pmem_read_gib: Option<f64> ["", "far-memory reads"],
        pmem_write_gib: Option<f64> ["", "far-memory writes"],
        swap_fault_s: Option<f64> ["", "time in swap faults"],
    }
}

result_row! {
    /// Pages of one policy's allocation on one node (`nodes.csv`).
    pub struct NodeRow {
        policy: String ["", "placement policy"],
        node: usize ["", "topology node id"],
        kind: &'static str ["", "dram, far or memory-mode"],
        socket: usize ["", "socket of the node"],
        pages: u64 ["pages", "pages placed on the node"],
        gib: f64 ["", "memory placed on the node"],
        capacity_gib: f64 ["", "usable capacity of the node"],
    }
}

impl Scenario for Numa {
    const MODULE: &'static str = "numa";
    const ABOUT: &'static str = "NUMA machines with DRAM, CXL and PMem nodes; Memory Mode";
    type Config = NumaConfig;
    type Row = NumaRow;
    const DOCS: &'static str = "numa-pmem.md";
    const STUDY: &'static str = "numa-pmem";
    const SWEEP_METRICS: &'static [&'static str] = &["runtime_s", "alloc_time_s", "dram_share"];
    const TABLES: &'static [(&'static str, &'static [Column])] = &[("nodes", NodeRow::COLUMNS)];

    type Experiment<'a> = NumaRun<'a>;

    fn build<'a>(sc: &'a NumaConfig, ctx: &Ctx<'a>) -> Result<NumaRun<'a>, RunError> {
        build_numa(sc, ctx)
    }
}

fn build_numa<'a>(sc: &'a NumaConfig, ctx: &Ctx<'a>) -> Result<NumaRun<'a>, RunError> {
    let (file, source) = (ctx.file(), ctx.source());
    let m = topology::load(
        sc.topology.as_ref(),
        sc.topology_preset.as_deref(),
        source,
        ctx.catalog(),
    )?;
    {
        let mut v = Validator::new(source);
        v.nested("memory_mode", &MM(&sc.memory_mode, m.spec.page_bytes));
        v.finish()?;
    }
    let mut policies = Vec::new();
    for (i, p) in sc.policies.iter().enumerate() {
        let mut v = Validator::new(source);
        match parse_policy(p, m.nodes.len()) {
            Ok(x) => policies.push((p.clone(), x)),
            Err(e) => v.fail(&format!("policies.{i}"), e),
        }
        v.finish()?;
    }
    let mut trace_filter = None;
    let mix: Option<Mix> = match sc.app.kind {
        AppKind::None => None,
        AppKind::Trace => {
            let rel = sc.app.trace.as_deref().unwrap_or_default();
            let (mut mx, f) = app::trace_mix(&ctx.path(rel), file)?;
            mx.passes = sc.app.passes.max(mx.passes);
            trace_filter = Some(f);
            Some(mx)
        }
        _ => Some(sc.app.mix()),
    };
    let experiment = ctx.header().name.clone().unwrap_or_else(|| "run".into());
    let prefix = if sc.topology.is_some() {
        "topology."
    } else {
        ""
    };
    let mut media_warnings = Vec::new();
    for (name, medium) in &m.spec.media {
        media_warnings.extend(crate::device::unused_figures(
            ctx.catalog(),
            &medium.device,
            &format!("{prefix}media.{name}.device"),
            "numa",
            topology::NUMA_UNUSED,
        ));
    }
    Ok(NumaRun {
        sc,
        m,
        policies,
        mix,
        trace_filter,
        experiment,
        node_rows: Vec::new(),
        media_warnings,
    })
}

/// The allocation (and the app, if any) under each placement policy of the scenario.
pub struct NumaRun<'a> {
    sc: &'a NumaConfig,
    m: NumaMachine,
    policies: Vec<(String, Box<dyn PlacementPolicy>)>,
    mix: Option<Mix>,
    trace_filter: Option<app::TraceFilter>,
    /// The scenario's name, the rows' `experiment`.
    experiment: String,
    node_rows: Vec<NodeRow>,
    /// Figures of the media's devices the model does not use.
    media_warnings: Vec<String>,
}

impl Experiment for NumaRun<'_> {
    /// The index of a policy in `policies`.
    type Point = usize;
    type Row = NumaRow;

    fn unit(&self) -> &'static str {
        "policies"
    }

    fn points(&self) -> Vec<usize> {
        (0..self.policies.len()).collect()
    }

    fn run_point(
        &mut self,
        i: usize,
        ctx: &Ctx,
        out: &mut Output<NumaRow>,
    ) -> Result<Step<usize>, RunError> {
        let (sc, m, mix, experiment) = (self.sc, &self.m, &self.mix, &self.experiment);
        let (label, policy) = &self.policies[i];
        let pb = m.spec.page_bytes as f64;
        let gib = (1u64 << 30) as f64;
        let o = allocate(m, policy.as_ref(), &sc.allocation, &sc.cost, &sc.swap);
        let pl = &o.placement;
        let placed: u64 = pl.pages.iter().sum::<u64>() + pl.swap_pages;
        let share = |pred: &dyn Fn(usize) -> bool| -> f64 {
            if placed == 0 {
                return 0.0;
            }
            pl.pages
                .iter()
                .enumerate()
                .filter(|(i, _)| pred(*i))
                .map(|(_, &p)| p)
                .sum::<u64>() as f64
                / placed as f64
        };
        let is_far = |i: usize| {
            let n = &o.pool.nodes[i];
            n.cache_bytes > 0 || m.nodes[n.topo].kind == NodeKind::Far
        };
        let usable: u64 = o.pool.nodes.iter().map(|n| n.capacity_pages).sum();
        let app_res = match (&mix, pl.ok()) {
            (Some(mx), true) => Some(app::run(
                m,
                &o.pool,
                pl,
                o.socket,
                *mx,
                &sc.app,
                &sc.memory_mode,
                &sc.swap,
                ctx.seed(),
            )),
            _ => None,
        };
        let a = app_res.unwrap_or_default();
        let opt = |x: f64| app_res.is_some().then_some(x);
        out.rows.push(NumaRow {
            experiment: experiment.clone(),
            policy: label.clone(),
            topology: m.spec.name.clone(),
            size_gib: sc.allocation.size_bytes as f64 / gib,
            size_gb: sc.allocation.size_bytes as f64 * 1e-9,
            size_bytes: sc.allocation.size_bytes,
            tasks: sc.allocation.tasks,
            ok: pl.ok(),
            oom_nodes: if pl.ok() {
                String::new()
            } else {
                let ids: Vec<String> = pl.exhausted.iter().map(|n| n.to_string()).collect();
                format!("{} + swap", ids.join(" "))
            },
            oom_reason: o.oom_reason.clone(),
            usable_gib: usable as f64 * pb / gib,
            struct_page_gib: o
                .pool
                .nodes
                .iter()
                .map(|n| n.budget.struct_page_bytes)
                .sum::<u64>() as f64
                / gib,
            reserve_gib: o
                .pool
                .nodes
                .iter()
                .map(|n| n.budget.reserve_bytes)
                .sum::<u64>() as f64
                / gib,
            metadata_gib: o.metadata_pages as f64 * pb / gib,
            placed_gib: placed as f64 * pb / gib,
            swap_gib: pl.swap_pages as f64 * pb / gib,
            alloc_time_s: o.time.total_ns() * 1e-9,
            alloc_zero_s: o.time.zero_ns * 1e-9,
            alloc_remote_s: o.time.remote_ns * 1e-9,
            alloc_swap_s: o.time.swap_ns * 1e-9,
            dram_share: share(&|i| !is_far(i)),
            pmem_share: share(&is_far),
            swap_share: if placed == 0 {
                0.0
            } else {
                pl.swap_pages as f64 / placed as f64
            },
            remote_share: share(&|i| o.pool.nodes[i].socket != o.socket),
            app: if mix.is_some() {
                format!("{:?}", sc.app.kind).to_lowercase()
            } else {
                "none".into()
            },
            threads: sc.app.threads,
            runtime_s: opt(a.runtime_ns * 1e-9),
            bandwidth_gb_s: opt(a.bandwidth_gb_s),
            latency_ns: opt(a.latency_ns),
            idle_latency_ns: opt(a.idle_latency_ns),
            idle_seq_latency_ns: opt(a.idle_seq_latency_ns),
            cache_hit_ratio: a.cache_hit_ratio,
            pmem_read_gib: opt(a.far_read_bytes / gib),
            pmem_write_gib: opt(a.far_write_bytes / gib),
            swap_fault_s: opt(a.swap_ns * 1e-9),
        });
        for (i, &p) in pl.pages.iter().enumerate() {
            let n = &o.pool.nodes[i];
            self.node_rows.push(NodeRow {
                policy: label.clone(),
                node: n.topo,
                kind: if n.cache_bytes > 0 {
                    "memory-mode"
                } else if m.nodes[n.topo].kind == NodeKind::Far {
                    "far"
                } else {
                    "dram"
                },
                socket: n.socket,
                pages: p,
                gib: p as f64 * pb / gib,
                capacity_gib: n.capacity_pages as f64 * pb / gib,
            });
        }
        Ok(Step::Done)
    }

    fn finish(self, mut out: Output<NumaRow>) -> Result<Output<NumaRow>, RunError> {
        let (sc, m) = (self.sc, &self.m);
        let gib = (1u64 << 30) as f64;
        let node_rows = self.node_rows;
        if let (Some(f), Some(rel)) = (self.trace_filter, sc.app.trace.as_deref()) {
            // The mix comes from the lines the CPU caches let through (docs/fidelity.md, *Which
            // traces go through the caches*); a trace they absorb says so.
            let per_access = f.memory_lines as f64 / f.accesses as f64;
            if f.footprint_bytes <= f.llc_bytes {
                out.warnings.push(format!(
                    "app.trace ({rel}): the trace's footprint ({} bytes of 4 KiB pages) fits in the \
                     {} byte LLC, so the caches absorb it ({per_access:.3} memory lines per access): \
                     its memory mix rests on few lines, and app.passes ({}) sets the traffic; give \
                     a trace of a run whose data outgrows the caches",
                    f.footprint_bytes, f.llc_bytes, sc.app.passes
                ));
            }
        }
        out.table("nodes", &node_rows);
        out.warnings.extend(self.media_warnings);
        let h = &mut out.headline;
        h.insert("topology".into(), json!(m.spec.name));
        h.insert("nodes".into(), json!(m.nodes.len()));
        h.insert("dram_gib".into(), json!(m.dram_bytes() as f64 / gib));
        h.insert("far_gib".into(), json!(m.far_bytes() as f64 / gib));
        let raw: u64 = m
            .nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Far)
            .map(|n| n.raw_bytes)
            .sum();
        h.insert("far_raw_gib".into(), json!(raw as f64 / gib));
        Ok(out)
    }
}
