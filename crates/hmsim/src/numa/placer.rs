//! Run-length placement over a [`Pool`]: free pages per node, one cursor per (task,
//! interleave stage).

use std::collections::{BTreeMap, BTreeSet};

use super::policy::{PlacementPolicy, Stage};
use super::pool::Pool;
use super::topology::NumaMachine;

impl Pool {
    pub fn for_policy(m: &NumaMachine, p: &dyn PlacementPolicy) -> Pool {
        if p.memory_mode() {
            Pool::memory_mode(m)
        } else {
            Pool::flat(m)
        }
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
