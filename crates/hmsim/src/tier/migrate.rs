//! The migration queue: requests a policy made wait here until the copy rate limit lets
//! them through (a batch larger than one quantum's budget spreads over several quanta).

use std::collections::VecDeque;

use super::pages::PageTable;
use super::policy::{Migration, SPLIT_PAGE};

/// Migrations decided but not yet copied, and the bytes they will copy.
#[derive(Debug, Default)]
pub struct MigrationQueue {
    queue: VecDeque<Migration>,
    /// Copy bytes of the queued requests (what the policy's next budget is reduced by).
    queued_bytes: u64,
}

/// What draining the queue did this quantum.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Drained {
    /// Bytes copied this quantum.
    pub bytes: u64,
    pub migrations: u64,
    pub failed: u64,
}

/// Bytes a queued request will copy: its page's size, nothing for a split.
fn request_bytes(pt: &PageTable, m: &Migration) -> u64 {
    if m.to == SPLIT_PAGE {
        0
    } else {
        pt.page_size(m.page)
    }
}

impl MigrationQueue {
    /// Copy budget left for new requests out of `budget` bytes per quantum.
    pub fn budget_left(&self, budget: u64) -> u64 {
        budget.saturating_sub(self.queued_bytes)
    }

    /// Queues a policy's migrations behind those still waiting.
    pub fn push(&mut self, pt: &PageTable, migs: Vec<Migration>) {
        self.queued_bytes += migs.iter().map(|m| request_bytes(pt, m)).sum::<u64>();
        self.queue.extend(migs);
    }

    /// Copies queued migrations in order until this quantum's copy `budget` is spent (a
    /// request that does not fit waits for the next quantum); splits cost no copy. `moved`
    /// gets the bytes per tier (read on one, written on the other) and `on_move` sees each
    /// completed move as (page, from, to).
    pub fn drain(
        &mut self,
        pt: &mut PageTable,
        budget: u64,
        moved: &mut [u64],
        mut on_move: impl FnMut(&PageTable, u64, usize, usize),
    ) -> Drained {
        let mut d = Drained::default();
        while let Some(&m) = self.queue.front() {
            let size = request_bytes(pt, &m);
            if d.bytes + size > budget {
                break;
            }
            self.queue.pop_front();
            self.queued_bytes -= size;
            if m.to == SPLIT_PAGE {
                // A split changes only the page table (no copy).
                if pt.split(m.page).is_err() {
                    d.failed += 1;
                }
                continue;
            }
            let from = pt.try_tier(m.page).unwrap_or(0);
            match pt.migrate(m.page, m.to) {
                Ok(()) => {
                    d.bytes += size;
                    moved[from] += size;
                    moved[m.to] += size;
                    d.migrations += 1;
                    on_move(pt, m.page, from, m.to);
                }
                Err(_) => d.failed += 1,
            }
        }
        d
    }
}
