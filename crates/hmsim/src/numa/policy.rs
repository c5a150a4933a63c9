//! The placement-policy trait: a policy is a list of stages the kernel walks page by page.
//! A `Fill` stage takes the first node of its list with a free page (Linux zonelist
//! fallback); a `RoundRobin` stage takes the next node with a free page after the task's
//! cursor (interleave). The policies are in [`super::policies`], registered by name there.

use std::fmt::Debug;

use super::pool::Pool;

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

/// Where a task's pages go.
pub trait PlacementPolicy: Debug + Send + Sync {
    /// The policy runs on the Memory Mode pool (DRAM as a direct-mapped cache in front of
    /// the far memory) instead of the flat one.
    fn memory_mode(&self) -> bool {
        false
    }

    /// The stages for a task whose home node is `home` on `socket`; `flagged`: an earlier
    /// placement of this task made [`Self::flags_task`] true (per-task state the placer
    /// keeps for the policy).
    fn stages(&self, pool: &Pool, socket: usize, home: usize, flagged: bool) -> Vec<Stage>;

    /// Whether a placement of `pages` (per pool node) flags its task for later placements.
    fn flags_task(&self, _pool: &Pool, _pages: &[u64]) -> bool {
        false
    }
}

impl<P: PlacementPolicy + ?Sized> PlacementPolicy for Box<P> {
    fn memory_mode(&self) -> bool {
        (**self).memory_mode()
    }
    fn stages(&self, pool: &Pool, socket: usize, home: usize, flagged: bool) -> Vec<Stage> {
        (**self).stages(pool, socket, home, flagged)
    }
    fn flags_task(&self, pool: &Pool, pages: &[u64]) -> bool {
        (**self).flags_task(pool, pages)
    }
}
