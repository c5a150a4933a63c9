//! The nodes the OS allocates from (flat: every topology node; Memory Mode: one node per
//! controller whose capacity is its PMem and whose DRAM is a cache); placement over them
//! is in [`super::placer`].

use std::collections::BTreeMap;

use super::capacity::{min_free_bytes, struct_page_bytes, NodeBudget};
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
