//! The state after a load phase, kept for the next run on this thread that starts from the
//! same one. A study's YCSB points load the same records into the same index through the same
//! model, then each runs its own operations; and a point's timed repeats each load the index
//! again before timing their run phase. Loading is half of such a point's host time at a
//! million records, and the same every time: the first run keeps a copy of the loaded state
//! and the next one starts from a copy of that (the copy is exact, so every result is the
//! one a fresh load gives).
//!
//! One state is kept per thread and per kind (through the model, or native), the latest; it
//! is kept only when its region is at most [`KEEP_MAX_BYTES`]. What makes two loads the same
//! is everything the load reads: the region, index and model settings, the simulated
//! threads, the DIMM, the seed (the `key`) and the load's operations themselves.

use std::cell::RefCell;

use super::index::PmIndex;
use super::ops::Op;
use super::region::PmRegion;

/// The largest region kept (twice this in host memory while a copy is taken).
pub(crate) const KEEP_MAX_BYTES: u64 = 512 << 20;

/// An index and its region.
pub(crate) struct Loaded {
    pub pm: PmRegion,
    pub idx: Box<dyn PmIndex>,
}

impl Loaded {
    /// An independent copy; None if the region or the index cannot be copied.
    fn fork(&self) -> Option<Loaded> {
        Some(Loaded {
            pm: self.pm.fork()?,
            idx: self.idx.fork()?,
        })
    }
}

/// Which state: loaded through the cache + PMem model, or natively (no observer).
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Model = 0,
    Native = 1,
}

struct Kept {
    key: String,
    load: Vec<Op>,
    loaded: Loaded,
}

thread_local! {
    static KEPT: RefCell<[Option<Kept>; 2]> = const { RefCell::new([None, None]) };
    static REUSED: RefCell<u64> = const { RefCell::new(0) };
}

/// A copy of the kept state of `kind` if it was loaded with `key` and `load`; a kept state
/// of another load is dropped (this run would replace it, and meanwhile it is only memory).
pub(crate) fn reuse(kind: Kind, key: &str, load: &[Op]) -> Option<Loaded> {
    let copy = KEPT.with(|k| {
        let mut k = k.borrow_mut();
        let slot = &mut k[kind as usize];
        if !slot
            .as_ref()
            .is_some_and(|kept| kept.key == key && kept.load == load)
        {
            *slot = None;
        }
        slot.as_ref().and_then(|kept| kept.loaded.fork())
    });
    if copy.is_some() {
        REUSED.with(|r| *r.borrow_mut() += 1);
    }
    copy
}

/// Drop the kept state of `kind` unless it was loaded with `key` and `load` (a run that
/// does not start from a kept state, e.g. one measuring its load, holds no other).
pub(crate) fn release_other(kind: Kind, key: &str, load: &[Op]) {
    KEPT.with(|k| {
        let mut k = k.borrow_mut();
        let slot = &mut k[kind as usize];
        if !slot
            .as_ref()
            .is_some_and(|kept| kept.key == key && kept.load == load)
        {
            *slot = None;
        }
    });
}

/// Keep a copy of `loaded` (the state right after loading `load` with `key`) in place of
/// the kept state of `kind`, if it can be copied and is not too large.
pub(crate) fn keep(kind: Kind, key: String, load: &[Op], loaded: &Loaded) {
    KEPT.with(|k| {
        let mut k = k.borrow_mut();
        // Drop the old state first: at most one is held beside the live one.
        k[kind as usize] = None;
        if loaded.pm.image_bytes() > KEEP_MAX_BYTES {
            return;
        }
        k[kind as usize] = loaded.fork().map(|loaded| Kept {
            key,
            load: load.to_vec(),
            loaded,
        });
    });
}

/// Runs on this thread that started from a kept state so far.
#[cfg(test)]
pub(crate) fn reused() -> u64 {
    REUSED.with(|r| *r.borrow())
}

/// Which kinds (model, native) this thread keeps a state of.
#[cfg(test)]
pub(crate) fn kept() -> [bool; 2] {
    KEPT.with(|k| {
        let k = k.borrow();
        [k[0].is_some(), k[1].is_some()]
    })
}

/// Drop the kept states of this thread.
#[cfg(test)]
pub(crate) fn forget() {
    KEPT.with(|k| *k.borrow_mut() = [None, None]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pmindex::registry::{find, registry};
    use crate::registry::run_scenario;

    fn run(index: &str, kind: &str, seed: u64) -> Vec<(String, serde_json::Value)> {
        let text = format!(
            "module = \"pm-index\"\nseed = {seed}\n[index]\nname = \"{index}\"\n\
             [workload]\nkind = \"{kind}\"\nrecords = 3000\noperations = 1500\n\
             [throughput]\nrepeats = 2\n"
        );
        let out = run_scenario(&text, "s.toml", &[], &[]).unwrap();
        // Everything but the host-timed throughput.
        let row = out.rows[0].clone();
        row.into_iter()
            .filter(|(k, _)| !k.contains("throughput"))
            .collect()
    }

    #[test]
    fn a_run_from_a_kept_load_equals_one_from_a_fresh_load() {
        let mut specs = registry();
        specs.extend(
            ["cceh-recipe", "level-hashing-recipe", "fast-fair-recipe"].map(|n| find(n).unwrap()),
        );
        for spec in specs {
            let kinds: &[&str] = if spec.family == "ordered" {
                &["a", "e"]
            } else {
                &["a", "c"]
            };
            for kind in kinds {
                forget();
                let before = reused();
                let fresh = run(spec.name, kind, 5);
                // The model's load and the first repeat's were kept; the second repeat
                // started from the kept native one.
                assert_eq!(reused() - before, 1, "{} {kind}", spec.name);
                let again = run(spec.name, kind, 5);
                assert_eq!(
                    reused() - before,
                    4,
                    "{} {kind}: model and both repeats",
                    spec.name
                );
                assert_eq!(fresh, again, "{} {kind}", spec.name);
                assert!(
                    fresh
                        .iter()
                        .any(|(k, v)| k == "media_writes_64b" && v.as_f64().unwrap() > 0.0)
                        || *kind == "c"
                );
            }
        }
    }

    #[test]
    fn another_load_is_not_taken_for_the_kept_one() {
        forget();
        let first = run("p-clht", "a", 5);
        let before = reused();
        // Another seed loads other keys (and seeds the model otherwise).
        let other = run("p-clht", "a", 6);
        assert_eq!(reused(), before + 1, "only the second repeat reuses");
        assert_ne!(first, other);
        // A Load measures its load phase: it never starts from a kept state.
        let before = reused();
        run("p-clht", "load", 6);
        assert_eq!(reused(), before);
        // The scenario's own switches are part of the load: Tonic's evict_volatile changes it.
        forget();
        run("fast-fair", "a", 5);
        let before = reused();
        let text = "module = \"pm-index\"\nseed = 5\n[index]\nname = \"fast-fair\"\n\
                    [index.tonic]\nxpline_nodes = true\n\
                    [workload]\nkind = \"a\"\nrecords = 3000\noperations = 1500\n\
                    [throughput]\nmeasure = false\n";
        run_scenario(text, "s.toml", &[], &[]).unwrap();
        assert_eq!(reused(), before);
        // A run that cannot start from the kept state drops it: it is only memory.
        run("fast-fair", "a", 5);
        assert_eq!(kept(), [true, true]);
        run("p-clht", "load", 5);
        assert_eq!(kept(), [false, false]);
    }
}
