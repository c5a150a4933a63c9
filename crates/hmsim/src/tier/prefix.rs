//! Runs that are the start of a longer run. The engine is causal: nothing in a quantum
//! depends on how many quanta follow, so a run of `d` seconds is, to the bit, the first `d`
//! seconds of a longer run of the same scenario. A caller with several durations of one
//! scenario (a study's points that differ only in `sim.duration_s`) runs the longest first,
//! handing it a [`PrefixShelf`] that keeps its results at the shorter durations; each shorter
//! run handed the same shelf then takes its result from it instead of simulating. The rows,
//! warnings and tables are made from that result by the same code as after a simulation.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::quantum::{quanta_of, SimResult};

/// Results kept by one run for the shorter runs after it (one caller's chain of runs).
#[derive(Clone, Default)]
pub struct PrefixShelf(Rc<RefCell<Shelf>>);

#[derive(Default)]
struct Shelf {
    /// Durations, s, at which a run keeps its results.
    keep_s: Vec<f64>,
    /// Kept results by the run they stand for ([`PrefixShelf::key`]).
    kept: HashMap<String, SimResult>,
    /// Results taken so far.
    taken: u64,
}

impl PrefixShelf {
    /// A shelf whose runs keep their results at `keep_s` seconds (those shorter than the
    /// run itself).
    pub fn new(keep_s: Vec<f64>) -> Self {
        PrefixShelf(Rc::new(RefCell::new(Shelf {
            keep_s,
            ..Default::default()
        })))
    }

    /// Runs that took their result from the shelf.
    pub fn taken(&self) -> u64 {
        self.0.borrow().taken
    }

    /// The key of a run of `quanta` quanta whose simulation is otherwise described by
    /// `what` (everything it depends on but its length).
    pub(super) fn key(what: &str, quanta: u64) -> String {
        format!("{what}|{quanta}")
    }

    /// The quantum counts below `quanta` at which a run of `quantum_s` quanta keeps its
    /// results.
    pub(super) fn keep_at(&self, quantum_s: f64, quanta: u64) -> Vec<u64> {
        let mut at: Vec<u64> = (self.0.borrow().keep_s.iter())
            .map(|&d| quanta_of(d, quantum_s))
            .filter(|&q| q < quanta)
            .collect();
        at.sort_unstable();
        at.dedup();
        at
    }

    /// Keep `r`'s prefixes, each under the key of its run.
    pub(super) fn put(&self, what: &str, r: &mut SimResult) {
        let mut shelf = self.0.borrow_mut();
        for (quanta, kept) in std::mem::take(&mut r.prefixes) {
            shelf.kept.insert(Self::key(what, quanta), kept);
        }
    }

    /// The kept result of the run `key`, taken off the shelf.
    pub(super) fn take(&self, key: &str) -> Option<SimResult> {
        let mut shelf = self.0.borrow_mut();
        let r = shelf.kept.remove(key);
        shelf.taken += u64::from(r.is_some());
        r
    }
}
