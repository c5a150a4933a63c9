//! The nodes the OS allocates from (flat: every topology node; Memory Mode: one node per
//! controller whose capacity is its PMem and whose DRAM is a cache), and run-length
//! placement over them: free pages per node, one cursor per (task, interleave stage).

use std::collections::{BTreeMap, BTreeSet};

use super::capacity::{min_free_bytes, struct_page_bytes, NodeBudget};
use super::policy::{PlacementPolicy, Stage};
use super::topology::{NodeKind, NumaMachine};

#[derive(Debug, Clone, PartialEq)]
pub struct PoolNode {
    /// Topology node whose distances and (DRAM) path this node uses.
    pub topo: usize,
    pub socket: usize,
    /// Has CPUs (a DRAM node, or a Memory Mode node).
    pub cpu: bool,
    /// Pages an allocation can get: the budget's free bytes in pages.
    pub capacity_pages: u64,
    /// What the kernel holds on this node.
    pub budget: NodeBudget,
    /// Memory Mode: bytes of the controller's DRAM cache and its far modules (topology ids).
    pub cache_bytes: u64,
    pub backing: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Pool {
    pub nodes: Vec<PoolNode>,
    dist: Vec<Vec<u32>>,
    /// Topology node id → pool node id.
    topo_to_pool: BTreeMap<usize, usize>,
    pub page_bytes: u64,
}

fn node(topo: usize, socket: usize, cpu: bool, managed: u64) -> PoolNode {
    PoolNode {
        topo,
        socket,
        cpu,
        capacity_pages: 0,
        budget: NodeBudget {
            managed_bytes: managed,
            ..NodeBudget::default()
        },
        cache_bytes: 0,
        backing: vec![topo],
    }
}

impl Pool {
    /// Flat mode (App Direct + KMEM_DAX, or CXL): every topology node is a NUMA node; a
    /// module's usable capacity is what it adds.
    pub fn flat(m: &NumaMachine) -> Pool {
        let nodes = m
            .nodes
            .iter()
            .map(|n| node(n.id, n.socket, n.kind == NodeKind::Dram, n.capacity_bytes))
            .collect();
        Pool::with(m, nodes)
    }

    /// Memory Mode: a controller's DRAM caches its cacheable far modules, whose usable
    /// capacity (the same as in App Direct) becomes the node; other far modules stay
    /// CPU-less nodes.
    pub fn memory_mode(m: &NumaMachine) -> Pool {
        let mut nodes = Vec::new();
        for d in m.nodes.iter().filter(|n| n.kind == NodeKind::Dram) {
            let backing: Vec<usize> = m
                .nodes
                .iter()
                .filter(|f| {
                    f.kind == NodeKind::Far && f.controller == d.controller && f.media.cacheable
                })
                .map(|f| f.id)
                .collect();
            let mut n = node(d.id, d.socket, true, d.capacity_bytes);
            if !backing.is_empty() {
                n.budget.managed_bytes = backing.iter().map(|&f| m.nodes[f].capacity_bytes).sum();
                n.cache_bytes = d.capacity_bytes;
                n.backing = backing;
            }
            nodes.push(n);
        }
        for f in m.nodes.iter().filter(|n| {
            n.kind == NodeKind::Far
                && !(n.media.cacheable
                    && m.nodes
                        .iter()
                        .any(|d| d.kind == NodeKind::Dram && d.controller == n.controller))
        }) {
            nodes.push(node(f.id, f.socket, false, f.capacity_bytes));
        }
        Pool::with(m, nodes)
    }

    /// Charge the kernel's share on every node, then size the nodes: each node's own
    /// `struct page` array lives on it, except a CPU-less node's, which Linux 5.4 allocates
    /// when it hot-adds the module, on the nearest node with memory (the same controller's
    /// DRAM first; memmap_on_memory came in 5.13); boot reserves on CPU nodes; the min
    /// watermark split by size.
    fn charge(m: &NumaMachine, nodes: &mut [PoolNode]) {
        let total: u64 = nodes.iter().map(|n| n.budget.managed_bytes).sum();
        let wm = min_free_bytes(total) as f64;
        for i in 0..nodes.len() {
            let memmap = struct_page_bytes(nodes[i].budget.managed_bytes);
            let host = if nodes[i].cpu {
                i
            } else {
                let t = nodes[i].topo;
                (0..nodes.len())
                    .filter(|&j| nodes[j].cpu)
                    .min_by_key(|&j| {
                        let same = m.nodes[nodes[j].topo].controller == m.nodes[t].controller;
                        (!same, m.distance(t, nodes[j].topo), j)
                    })
                    .unwrap_or(i)
            };
            nodes[host].budget.struct_page_bytes += memmap;
            let n = &mut nodes[i];
            n.budget.reserve_bytes +=
                (wm * n.budget.managed_bytes as f64 / total.max(1) as f64) as u64;
            if n.cpu {
                n.budget.reserve_bytes += m.spec.kernel_reserved_bytes;
            }
        }
        for n in nodes.iter_mut() {
            n.capacity_pages = n.budget.free_bytes() / m.spec.page_bytes;
        }
    }

    fn with(m: &NumaMachine, mut nodes: Vec<PoolNode>) -> Pool {
        Pool::charge(m, &mut nodes);
        let dist = nodes
            .iter()
            .map(|a| nodes.iter().map(|b| m.distance(a.topo, b.topo)).collect())
            .collect();
        let topo_to_pool = nodes.iter().enumerate().map(|(i, n)| (n.topo, i)).collect();
        Pool {
            nodes,
            dist,
            topo_to_pool,
            page_bytes: m.spec.page_bytes,
        }
    }

    pub fn for_policy(m: &NumaMachine, p: &dyn PlacementPolicy) -> Pool {
        if p.memory_mode() {
            Pool::memory_mode(m)
        } else {
            Pool::flat(m)
        }
    }

    pub fn distance(&self, a: usize, b: usize) -> u32 {
        self.dist[a][b]
    }

    /// Pool ids of topology nodes (those the pool has).
    pub fn map_nodes(&self, topo: &[usize]) -> Vec<usize> {
        topo.iter()
            .filter_map(|t| self.topo_to_pool.get(t).copied())
            .collect()
    }

    /// Pool node holding a task's home topology node.
    pub fn home(&self, topo_home: usize) -> usize {
        self.topo_to_pool.get(&topo_home).copied().unwrap_or(0)
    }
}

/// A task allocating memory: its id (for per-task state), socket and home pool node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    pub id: u32,
    pub socket: usize,
    pub home: usize,
}

/// Where one allocation's pages went.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Placement {
    /// Pages per pool node.
    pub pages: Vec<u64>,
    pub swap_pages: u64,
    /// Pages that found no room (out of memory) — 0 when the allocation succeeded.
    pub failed_pages: u64,
    /// The nodes the policy could use, all full when it ran out (pool ids).
    pub exhausted: Vec<usize>,
    /// Of `pages`, those placed by round-robin stages (consecutive pages on different nodes).
    pub interleaved: Vec<u64>,
}

impl Placement {
    pub fn ok(&self) -> bool {
        self.failed_pages == 0
    }
}

/// Free pages per node, swap, and per-task policy state; placement in runs of pages.
#[derive(Debug, Clone)]
pub struct Placer {
    pub free: Vec<u64>,
    pub swap_free: u64,
    cursors: BTreeMap<(u32, Vec<usize>), usize>,
    flagged: BTreeSet<u32>,
}

impl Placer {
    pub fn new(pool: &Pool, swap_pages: u64) -> Placer {
        Placer {
            free: pool.nodes.iter().map(|n| n.capacity_pages).collect(),
            swap_free: swap_pages,
            cursors: BTreeMap::new(),
            flagged: BTreeSet::new(),
        }
    }

    /// Place `pages` pages for `task` under `policy`, as the kernel would page by page, in
    /// O(stages × nodes²) time whatever the page count.
    pub fn place(
        &mut self,
        pool: &Pool,
        policy: &dyn PlacementPolicy,
        task: Task,
        pages: u64,
    ) -> Placement {
        let stages = policy.stages(
            pool,
            task.socket,
            task.home,
            self.flagged.contains(&task.id),
        );
        let mut out = Placement {
            pages: vec![0; pool.nodes.len()],
            interleaved: vec![0; pool.nodes.len()],
            ..Placement::default()
        };
        let mut left = pages;
        for st in &stages {
            if left == 0 {
                break;
            }
            match st {
                Stage::Fill(list) => {
                    for &n in list {
                        let take = self.free[n].min(left);
                        self.free[n] -= take;
                        out.pages[n] += take;
                        left -= take;
                        if left == 0 {
                            break;
                        }
                    }
                }
                Stage::RoundRobin(list) => {
                    let cursor = self.cursors.entry((task.id, list.clone())).or_insert(0);
                    let before = left;
                    let mut got = vec![0; pool.nodes.len()];
                    left = round_robin(list, &mut self.free, &mut got, cursor, left);
                    if before > left {
                        for (i, g) in got.into_iter().enumerate() {
                            out.pages[i] += g;
                            out.interleaved[i] += g;
                        }
                    }
                }
            }
        }
        if policy.flags_task(pool, &out.pages) {
            self.flagged.insert(task.id);
        }
        let swapped = self.swap_free.min(left);
        self.swap_free -= swapped;
        out.swap_pages = swapped;
        out.failed_pages = left - swapped;
        if out.failed_pages > 0 {
            let mut ex: Vec<usize> = stages
                .iter()
                .flat_map(|s| s.nodes().iter().copied())
                .collect();
            ex.sort_unstable();
            ex.dedup();
            out.exhausted = ex;
        }
        out
    }
}

/// Interleave `left` pages over `list` starting at `*cursor`, skipping full nodes; whole
/// rounds at once. Returns the pages that found no room.
fn round_robin(
    list: &[usize],
    free: &mut [u64],
    got: &mut [u64],
    cursor: &mut usize,
    mut left: u64,
) -> u64 {
    let len = list.len();
    if len == 0 {
        return left;
    }
    while left > 0 {
        // Active positions in cyclic order from the cursor.
        let active: Vec<usize> = (0..len)
            .map(|k| (*cursor + k) % len)
            .filter(|&i| free[list[i]] > 0)
            .collect();
        if active.is_empty() {
            break;
        }
        let k = active.len() as u64;
        let m = active
            .iter()
            .map(|&i| free[list[i]])
            .min()
            .unwrap_or(0)
            .min(left / k);
        if m > 0 {
            // Whole rounds: every active node gets m pages; the cursor ends where it began.
            for &i in &active {
                free[list[i]] -= m;
                got[list[i]] += m;
            }
            left -= m * k;
        } else {
            // Fewer pages than active nodes: one each from the cursor on.
            for &i in active.iter().take(left as usize) {
                free[list[i]] -= 1;
                got[list[i]] += 1;
                *cursor = (i + 1) % len;
            }
            left = 0;
        }
    }
    left
}
