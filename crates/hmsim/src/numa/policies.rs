//! The placement policies of docs/numa-pmem.md and their registry: Linux's default
//! zonelist, the three KMEM_DAX variants, interleave, Memory Mode, aliusM, and `bind:` /
//! `interleave:` over listed nodes.

use super::policy::{PlacementPolicy, Stage};
use super::pool::{Pool, PoolNode};
use crate::named::{Entry, Registry};

/// Pool nodes matching `pred`, nearest to `home` first (ties by id).
fn by_distance(pool: &Pool, home: usize, pred: &dyn Fn(&PoolNode) -> bool) -> Vec<usize> {
    let mut v: Vec<usize> = (0..pool.nodes.len())
        .filter(|&i| pred(&pool.nodes[i]))
        .collect();
    v.sort_by_key(|&i| (pool.distance(home, i), i));
    v
}

fn far(n: &PoolNode) -> bool {
    !n.cpu
}

fn dram(n: &PoolNode) -> bool {
    n.cpu
}

/// Every node by distance (Linux's zonelist).
#[derive(Debug)]
pub(super) struct LinuxDefault;

impl PlacementPolicy for LinuxDefault {
    fn stages(&self, pool: &Pool, _: usize, home: usize, _: bool) -> Vec<Stage> {
        vec![Stage::Fill(by_distance(pool, home, &|_| true))]
    }
}

/// The nearest far-memory nodes only (KMEM_DAX with a bind to them).
#[derive(Debug)]
pub(super) struct KmemDax;

impl PlacementPolicy for KmemDax {
    fn stages(&self, pool: &Pool, _: usize, home: usize, _: bool) -> Vec<Stage> {
        let all = by_distance(pool, home, &far);
        let d = all.first().map(|&i| pool.distance(home, i));
        vec![Stage::Fill(
            all.into_iter()
                .filter(|&i| Some(pool.distance(home, i)) == d)
                .collect(),
        )]
    }
}

/// Every far-memory node, nearest first.
#[derive(Debug)]
pub(super) struct KmemDaxAll;

impl PlacementPolicy for KmemDaxAll {
    fn stages(&self, pool: &Pool, _: usize, home: usize, _: bool) -> Vec<Stage> {
        vec![Stage::Fill(by_distance(pool, home, &far))]
    }
}

/// Nearest far memory, then nearest DRAM, then far far memory, then far DRAM.
#[derive(Debug)]
pub(super) struct KmemDaxPreferred;

impl PlacementPolicy for KmemDaxPreferred {
    fn stages(&self, pool: &Pool, socket: usize, home: usize, _: bool) -> Vec<Stage> {
        let f = by_distance(pool, home, &far);
        let d = f.first().map(|&i| pool.distance(home, i));
        let (near_f, far_f): (Vec<usize>, Vec<usize>) = f
            .into_iter()
            .partition(|&i| Some(pool.distance(home, i)) == d);
        let (near_d, far_d): (Vec<usize>, Vec<usize>) = by_distance(pool, home, &dram)
            .into_iter()
            .partition(|&i| pool.nodes[i].socket == socket);
        vec![Stage::Fill([near_f, near_d, far_f, far_d].concat())]
    }
}

/// Round-robin over every node.
#[derive(Debug)]
pub(super) struct InterleaveAll;

impl PlacementPolicy for InterleaveAll {
    fn stages(&self, pool: &Pool, _: usize, _: usize, _: bool) -> Vec<Stage> {
        vec![Stage::RoundRobin((0..pool.nodes.len()).collect())]
    }
}

/// Linux's default on the Memory Mode pool (far memory behind DRAM caches).
#[derive(Debug)]
pub(super) struct MemoryMode;

impl PlacementPolicy for MemoryMode {
    fn memory_mode(&self) -> bool {
        true
    }
    fn stages(&self, pool: &Pool, socket: usize, home: usize, flagged: bool) -> Vec<Stage> {
        LinuxDefault.stages(pool, socket, home, flagged)
    }
}

/// aliusM: DRAM first until a task's first far page, then round-robin over its socket's
/// far-memory modules (by id), then the other socket's.
#[derive(Debug)]
pub(super) struct AliusM;

impl PlacementPolicy for AliusM {
    fn stages(&self, pool: &Pool, socket: usize, home: usize, flagged: bool) -> Vec<Stage> {
        let (mut local, remote): (Vec<usize>, Vec<usize>) = by_distance(pool, home, &far)
            .into_iter()
            .partition(|&i| pool.nodes[i].socket == socket);
        local.sort_unstable();
        let mut s = Vec::new();
        if !flagged {
            s.push(Stage::Fill(by_distance(pool, home, &dram)));
        }
        s.push(Stage::RoundRobin(local));
        s.push(Stage::RoundRobin(remote));
        s
    }
    fn flags_task(&self, pool: &Pool, pages: &[u64]) -> bool {
        pool.nodes.iter().zip(pages).any(|(n, &p)| far(n) && p > 0)
    }
}

/// The listed topology nodes, in order.
#[derive(Debug)]
pub(super) struct Bind(pub Vec<usize>);

impl PlacementPolicy for Bind {
    fn stages(&self, pool: &Pool, _: usize, _: usize, _: bool) -> Vec<Stage> {
        vec![Stage::Fill(pool.map_nodes(&self.0))]
    }
}

/// Round-robin over the listed topology nodes.
#[derive(Debug)]
pub(super) struct Interleave(pub Vec<usize>);

impl PlacementPolicy for Interleave {
    fn stages(&self, pool: &Pool, _: usize, _: usize, _: bool) -> Vec<Stage> {
        vec![Stage::RoundRobin(pool.map_nodes(&self.0))]
    }
}

/// How a registered policy is made: by name alone, or from a list of topology nodes
/// (`name:N,M`).
pub enum MakePolicy {
    Plain(fn() -> PolicyResult),
    Nodes(fn(Vec<usize>) -> PolicyResult),
}

/// A made policy, or why not.
pub(super) type PolicyResult = Result<Box<dyn PlacementPolicy>, String>;

/// Every placement policy, by the name a scenario's `policies` lists.
pub static PLACEMENT_POLICIES: Registry<MakePolicy> = Registry::new(
    "policy",
    &[
        Entry {
            name: "linux-default",
            about: "every node by distance (zonelist fallback)",
            make: MakePolicy::Plain(|| Ok(Box::new(LinuxDefault))),
        },
        Entry {
            name: "kmem-dax",
            about: "the nearest far-memory nodes only",
            make: MakePolicy::Plain(|| Ok(Box::new(KmemDax))),
        },
        Entry {
            name: "kmem-dax-all",
            about: "every far-memory node, nearest first",
            make: MakePolicy::Plain(|| Ok(Box::new(KmemDaxAll))),
        },
        Entry {
            name: "kmem-dax-preferred",
            about: "nearest far memory, nearest DRAM, then the rest",
            make: MakePolicy::Plain(|| Ok(Box::new(KmemDaxPreferred))),
        },
        Entry {
            name: "interleave-all",
            about: "round-robin over every node",
            make: MakePolicy::Plain(|| Ok(Box::new(InterleaveAll))),
        },
        Entry {
            name: "memory-mode",
            about: "DRAM as a cache of far memory; Linux's default on the far nodes",
            make: MakePolicy::Plain(|| Ok(Box::new(MemoryMode))),
        },
        Entry {
            name: "aliusm",
            about: "DRAM first, then round-robin over the socket's far modules",
            make: MakePolicy::Plain(|| Ok(Box::new(AliusM))),
        },
        Entry {
            name: "bind",
            about: "bind:N,M: the listed nodes in order",
            make: MakePolicy::Nodes(|n| Ok(Box::new(Bind(n)))),
        },
        Entry {
            name: "interleave",
            about: "interleave:N,M: round-robin over the listed nodes",
            make: MakePolicy::Nodes(|n| Ok(Box::new(Interleave(n)))),
        },
    ],
);

/// Policy names as a scenario writes them (`bind:NODES` for those taking nodes).
pub fn policy_names() -> Vec<String> {
    PLACEMENT_POLICIES
        .iter()
        .map(|e| match e.make {
            MakePolicy::Plain(_) => e.name.to_string(),
            MakePolicy::Nodes(_) => format!("{}:NODES", e.name),
        })
        .collect()
}

/// The policy `s` (`name` or `name:N,M`); `nodes` is the number of topology nodes.
pub fn parse_policy(s: &str, nodes: usize) -> PolicyResult {
    let unknown = || {
        format!(
            "unknown policy '{s}'; allowed: {}",
            policy_names().join(", ")
        )
    };
    let (name, list) = match s.split_once(':') {
        Some((n, l)) => (n, Some(l)),
        None => (s, None),
    };
    match (PLACEMENT_POLICIES.get(name), list) {
        (Some(MakePolicy::Plain(make)), None) => make(),
        (Some(MakePolicy::Nodes(make)), Some(rest)) => {
            let v: Result<Vec<usize>, _> =
                rest.split(',').map(|x| x.trim().parse::<usize>()).collect();
            match v {
                Ok(v) if !v.is_empty() && v.iter().all(|&n| n < nodes) => make(v),
                _ => Err(format!(
                    "'{s}': expected comma-separated node ids 0 to {}",
                    nodes - 1
                )),
            }
        }
        _ => Err(unknown()),
    }
}
