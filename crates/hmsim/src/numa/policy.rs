//! Placement policies: each is a list of stages the kernel walks page by page. A `Fill`
//! stage takes the first node of its list with a free page (Linux zonelist fallback); a
//! `RoundRobin` stage takes the next node with a free page after the task's cursor (interleave).

use super::pool::{Pool, PoolNode};

/// Policy names a scenario may list (`bind:N,M` and `interleave:N,M` name nodes).
pub const POLICIES: &[&str] = &[
    "linux-default",
    "kmem-dax",
    "kmem-dax-all",
    "kmem-dax-preferred",
    "interleave-all",
    "memory-mode",
    "aliusm",
    "bind:NODES",
    "interleave:NODES",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    Fill(Vec<usize>),
    RoundRobin(Vec<usize>),
}

impl Stage {
    pub fn nodes(&self) -> &[usize] {
        match self {
            Stage::Fill(n) | Stage::RoundRobin(n) => n,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    LinuxDefault,
    KmemDax,
    KmemDaxAll,
    KmemDaxPreferred,
    InterleaveAll,
    MemoryMode,
    AliusM,
    Bind(Vec<usize>),
    Interleave(Vec<usize>),
}

impl Policy {
    /// Parse a policy name; `nodes` is the number of topology nodes (for `bind:`/`interleave:`).
    pub fn parse(s: &str, nodes: usize) -> Result<Policy, String> {
        let list = |rest: &str| -> Result<Vec<usize>, String> {
            let v: Result<Vec<usize>, _> =
                rest.split(',').map(|x| x.trim().parse::<usize>()).collect();
            match v {
                Ok(v) if !v.is_empty() && v.iter().all(|&n| n < nodes) => Ok(v),
                _ => Err(format!(
                    "'{s}': expected comma-separated node ids 0 to {}",
                    nodes - 1
                )),
            }
        };
        Ok(match s {
            "linux-default" => Policy::LinuxDefault,
            "kmem-dax" => Policy::KmemDax,
            "kmem-dax-all" => Policy::KmemDaxAll,
            "kmem-dax-preferred" => Policy::KmemDaxPreferred,
            "interleave-all" => Policy::InterleaveAll,
            "memory-mode" => Policy::MemoryMode,
            "aliusm" => Policy::AliusM,
            _ => {
                if let Some(r) = s.strip_prefix("bind:") {
                    Policy::Bind(list(r)?)
                } else if let Some(r) = s.strip_prefix("interleave:") {
                    Policy::Interleave(list(r)?)
                } else {
                    return Err(format!(
                        "unknown policy '{s}'; allowed: {}",
                        POLICIES.join(", ")
                    ));
                }
            }
        })
    }

    pub fn memory_mode(&self) -> bool {
        *self == Policy::MemoryMode
    }

    /// The stages for a task whose home node is `home` on `socket`; `flagged` is aliusM's
    /// per-task flag (set once one of its pages landed on far memory).
    pub fn stages(&self, pool: &Pool, socket: usize, home: usize, flagged: bool) -> Vec<Stage> {
        let by_dist = |pred: &dyn Fn(&PoolNode) -> bool| -> Vec<usize> {
            let mut v: Vec<usize> = (0..pool.nodes.len())
                .filter(|&i| pred(&pool.nodes[i]))
                .collect();
            v.sort_by_key(|&i| (pool.distance(home, i), i));
            v
        };
        let far = |n: &PoolNode| !n.cpu;
        let dram = |n: &PoolNode| n.cpu;
        match self {
            Policy::LinuxDefault | Policy::MemoryMode => vec![Stage::Fill(by_dist(&|_| true))],
            Policy::KmemDax => {
                let all = by_dist(&far);
                let d = all.first().map(|&i| pool.distance(home, i));
                vec![Stage::Fill(
                    all.into_iter()
                        .filter(|&i| Some(pool.distance(home, i)) == d)
                        .collect(),
                )]
            }
            Policy::KmemDaxAll => vec![Stage::Fill(by_dist(&far))],
            Policy::KmemDaxPreferred => {
                // memkind's PREFERRED order: nearest PMem, then nearest DRAM, then far PMem, then
                // far DRAM.
                let f = by_dist(&far);
                let d = f.first().map(|&i| pool.distance(home, i));
                let (near_f, far_f): (Vec<usize>, Vec<usize>) = f
                    .into_iter()
                    .partition(|&i| Some(pool.distance(home, i)) == d);
                let (near_d, far_d): (Vec<usize>, Vec<usize>) = by_dist(&dram)
                    .into_iter()
                    .partition(|&i| pool.nodes[i].socket == socket);
                vec![Stage::Fill([near_f, near_d, far_f, far_d].concat())]
            }
            Policy::InterleaveAll => vec![Stage::RoundRobin((0..pool.nodes.len()).collect())],
            Policy::AliusM => {
                let (local, remote): (Vec<usize>, Vec<usize>) = by_dist(&far)
                    .into_iter()
                    .partition(|&i| pool.nodes[i].socket == socket);
                let mut local = local;
                local.sort_unstable();
                let mut s = Vec::new();
                if !flagged {
                    s.push(Stage::Fill(by_dist(&dram)));
                }
                s.push(Stage::RoundRobin(local));
                s.push(Stage::RoundRobin(remote));
                s
            }
            Policy::Bind(n) => vec![Stage::Fill(pool.map_nodes(n))],
            Policy::Interleave(n) => vec![Stage::RoundRobin(pool.map_nodes(n))],
        }
    }
}
