//! The best case of the Colloid study: a static placement with a chosen share of the hot set in the
//! default tier (the rest of that tier filled with cold pages); the scenario sweeps the
//! share 0–100 % in 10 % steps and keeps the best. It knows the hot set — an oracle, the
//! study's yardstick, not a policy a system could run.

use super::policy::{Migration, Observation, TieringPolicy, DEFAULT_TIER};
use super::workload::Gups;

pub struct OracleStatic {
    hot_start: u64,
    hot_in_default: u64,
    hot_end: u64,
    cold_in_default: u64,
}

impl OracleStatic {
    /// `share` of the hot set in the default tier of `default_pages` pages.
    pub fn new(gups: &Gups, default_pages: u64, share: f64) -> Self {
        let k = ((share * gups.hot_pages as f64).round() as u64).min(default_pages);
        OracleStatic {
            hot_start: gups.hot_start,
            hot_in_default: k,
            hot_end: gups.hot_start + gups.hot_pages,
            cold_in_default: default_pages - k,
        }
    }
}

impl TieringPolicy for OracleStatic {
    fn name(&self) -> &'static str {
        "best"
    }
    fn quantum(&mut self, _obs: &Observation) -> Vec<Migration> {
        Vec::new()
    }
    fn initial_tier(&self, page: u64) -> Option<usize> {
        let hot = page >= self.hot_start && page < self.hot_end;
        let in_default = if hot {
            page - self.hot_start < self.hot_in_default
        } else {
            // Cold pages in page order, skipping the hot range.
            let idx = if page < self.hot_start {
                page
            } else {
                page - (self.hot_end - self.hot_start)
            };
            idx < self.cold_in_default
        };
        Some(if in_default { DEFAULT_TIER } else { 1 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tier::{GupsSpec, PageTable};

    #[test]
    fn places_the_chosen_share_of_the_hot_set() {
        let spec = GupsSpec {
            working_set_bytes: 100 << 21,
            hot_set_bytes: 20 << 21,
            ..Default::default()
        };
        let g = Gups::new(&spec, 2 << 20);
        let o = OracleStatic::new(&g, 30, 0.5);
        let pt = PageTable::place(g.pages, 2 << 20, &[30 << 21, 200 << 21], |p| {
            o.initial_tier(p)
        })
        .unwrap();
        assert_eq!(pt.used_pages(0), 30);
        assert_eq!(g.hot_per_tier(&pt), vec![10, 10]);
    }
}
