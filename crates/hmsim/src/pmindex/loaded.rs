//! The state after a load phase, kept for the next run on this thread that starts from the
//! same one. A study's YCSB points load the same records into the same index through the same
//! model, then each runs its own operations; and a point's timed repeats each load the index
//! again before timing their run phase. Loading is half of such a point's host time at a
//! million records, and the same every time: the first run keeps the loaded state (a Load
//! point its own once measured, a YCSB point a copy, since it runs on from it) and the next
//! one starts from a copy of that (the copy is exact, so every result is the one a fresh load
//! gives).
//!
//! One state is kept per thread, the latest loaded through the model, and only when its
//! region is at most [`KEEP_MAX_BYTES`]. A native repeat (no model) starts from a copy of
//! its region and index without the model: what an index writes does not depend on who
//! watches. What makes two loads the same is everything the load reads: the region and index
//! settings (the `image` key; the region's `hardware_flush` aside, it changes no byte), the
//! model, its simulated threads, the DIMM and the seed (the `model` key) and the load's
//! operations themselves.

use std::cell::RefCell;

use super::index::PmIndex;
use super::ops::Op;
use super::region::{PmRegion, RegionConfig};

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

struct Kept {
    image: String,
    model: String,
    load: Vec<Op>,
    loaded: Loaded,
}

impl Kept {
    fn is(&self, image: &str, model: Option<&str>, load: &[Op]) -> bool {
        self.image == image && model.is_none_or(|m| self.model == m) && self.load == load
    }
}

thread_local! {
    static KEPT: RefCell<Option<Kept>> = const { RefCell::new(None) };
    static REUSED: RefCell<u64> = const { RefCell::new(0) };
}

/// `f` on the kept state if it was loaded with `image`, `model` (any model if None) and
/// `load`; a kept state of another load is dropped (it is only memory until replaced).
fn with_kept<T>(
    image: &str,
    model: Option<&str>,
    load: &[Op],
    f: impl FnOnce(&Kept) -> Option<T>,
) -> Option<T> {
    let got = KEPT.with(|k| {
        let mut k = k.borrow_mut();
        if !k.as_ref().is_some_and(|kept| kept.is(image, model, load)) {
            *k = None;
        }
        k.as_ref().and_then(f)
    });
    if got.is_some() {
        REUSED.with(|r| *r.borrow_mut() += 1);
    }
    got
}

/// A copy of the kept state (model included) if it was loaded with `image`, `model` and
/// `load`.
pub(crate) fn reuse(image: &str, model: &str, load: &[Op]) -> Option<Loaded> {
    with_kept(image, Some(model), load, |kept| kept.loaded.fork())
}

/// A copy of the kept state's region (with `cfg`, no observer) and index if it was loaded
/// with `image` and `load`, through any model.
pub(crate) fn reuse_native(image: &str, load: &[Op], cfg: &RegionConfig) -> Option<Loaded> {
    with_kept(image, None, load, |kept| {
        Some(Loaded {
            pm: kept.loaded.pm.fork_image(cfg.clone())?,
            idx: kept.loaded.idx.fork()?,
        })
    })
}

/// Drop the kept state unless it was loaded with `image`, `model` and `load` (a run that
/// does not start from a kept state, e.g. one measuring its load, holds no other).
pub(crate) fn release_other(image: &str, model: &str, load: &[Op]) {
    with_kept(image, Some(model), load, |_| None::<()>);
}

/// Keep a copy of `loaded` (the state right after loading `load` with `image` and `model`)
/// in place of the kept state, if it can be copied and is not too large.
pub(crate) fn keep(image: String, model: String, load: &[Op], loaded: &Loaded) {
    store(image, model, load, loaded.pm.image_bytes(), || {
        loaded.fork()
    });
}

/// [`keep`] for a state its caller is done with (a Load point's, once its counters are
/// read): the state itself is kept, not a copy. A copy cost a Load at a million records
/// its region's worth of fresh pages, zeroed and written, and most Loads' states (other
/// simulated thread counts, Tonic switches, string keys) are never run from. A state that
/// cannot be copied is kept too, and a run from it starts from a fresh load (`reuse` finds
/// no copy): the same results, only memory held.
pub(crate) fn keep_owned(image: String, model: String, load: &[Op], loaded: Loaded) {
    store(image, model, load, loaded.pm.image_bytes(), || Some(loaded));
}

/// Drop the kept state, then keep `make()`'s state, the load's of `image_bytes`, if the
/// region is at most [`KEEP_MAX_BYTES`].
fn store(
    image: String,
    model: String,
    load: &[Op],
    image_bytes: u64,
    make: impl FnOnce() -> Option<Loaded>,
) {
    KEPT.with(|k| {
        let mut k = k.borrow_mut();
        // Drop the old state first: at most one is held beside the live one.
        *k = None;
        if image_bytes > KEEP_MAX_BYTES {
            return;
        }
        *k = make().map(|loaded| Kept {
            image,
            model,
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

/// Whether this thread keeps a state.
#[cfg(test)]
pub(crate) fn kept() -> bool {
    KEPT.with(|k| k.borrow().is_some())
}

/// Drop the kept state of this thread.
#[cfg(test)]
pub(crate) fn forget() {
    KEPT.with(|k| *k.borrow_mut() = None);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pmindex::registry::{find, registry};
    use crate::registry::run_scenario;

    fn run(index: &str, kind: &str, seed: u64) -> Vec<(String, serde_json::Value)> {
        // Each repeat runs (and reuses the kept state), none is taken from another point.
        crate::pmindex::timings::off_on_this_thread();
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
                // The model's load was kept; both repeats started from its image.
                assert_eq!(reused() - before, 2, "{} {kind}", spec.name);
                let again = run(spec.name, kind, 5);
                assert_eq!(
                    reused() - before,
                    5,
                    "{} {kind}: model and both repeats",
                    spec.name
                );
                assert_eq!(fresh, again, "{} {kind}", spec.name);
                // A Load's measured phase is the others' load: a run after it starts from
                // its state.
                forget();
                run(spec.name, "load", 5);
                let before = reused();
                assert_eq!(run(spec.name, kind, 5), fresh, "{} {kind}", spec.name);
                assert_eq!(reused() - before, 3, "{} {kind} after a Load", spec.name);
                assert!(
                    fresh
                        .iter()
                        .any(|(k, v)| k == "media_writes_64b" && v.as_f64().unwrap() > 0.0)
                        || *kind == "c"
                );
            }
        }
    }

    /// A native repeat's copy is what loading without the model gives: the same region
    /// bytes, counters and entries, for every index.
    #[test]
    fn the_image_of_a_model_load_is_a_native_load() {
        use crate::cache::CacheConfig;
        use crate::pmem::DimmSpec;
        use crate::pmem::PmemConfig;
        use crate::pmindex::index::IndexOptions;
        use crate::pmindex::sim::ModelObserver;
        use crate::pmindex::ycsb::Distribution;
        use crate::pmindex::ycsb::{load_ops, YcsbSpec, YcsbWorkload};
        let cfg = RegionConfig::default();
        let mut specs = registry();
        specs.push(find("fast-fair-recipe").unwrap());
        for spec in specs {
            let y = YcsbSpec {
                workload: YcsbWorkload::A,
                key_type: crate::pmindex::key::KeyType::Int,
                distribution: Distribution::Uniform,
                zipf_theta: 0.99,
                records: 4000,
                operations: 10,
                scan_max: 100,
            };
            let ops = load_ops(&y, 9);
            let o = IndexOptions::new(y.key_type);
            let load = |observe: bool| {
                let mut pm = PmRegion::anonymous(cfg.clone()).unwrap();
                let mut idx = (spec.create)(&mut pm, &o).unwrap();
                if observe {
                    let dimm = DimmSpec::from_rating(128 << 30, 1e15);
                    let (p, c) = (PmemConfig::default(), CacheConfig::default());
                    let m = ModelObserver::new(&p, &c, 1, dimm, 9);
                    pm.set_observer(Some(Box::new(m)));
                }
                for op in &ops {
                    op.apply(idx.as_mut(), &mut pm).unwrap();
                }
                Loaded { pm, idx }
            };
            let (model, native) = (load(true), load(false));
            let copy = Loaded {
                pm: model.pm.fork_image(cfg.clone()).unwrap(),
                idx: model.idx.fork().unwrap(),
            };
            assert!(!copy.pm.has_observer());
            assert_eq!(
                copy.pm.image_bytes(),
                native.pm.image_bytes(),
                "{}",
                spec.name
            );
            for off in (0..native.pm.image_bytes()).step_by(8) {
                assert_eq!(
                    copy.pm.peek_u64(off),
                    native.pm.peek_u64(off),
                    "{} +{off}",
                    spec.name
                );
            }
            assert_eq!(
                format!("{:?}", copy.pm.stats()),
                format!("{:?}", native.pm.stats())
            );
            let sorted = |l: &Loaded| {
                let mut e = l.idx.entries(&l.pm);
                e.sort();
                e
            };
            assert_eq!(sorted(&copy), sorted(&native), "{}", spec.name);
            assert_eq!(sorted(&native).len(), 4000);
        }
    }

    #[test]
    fn another_load_is_not_taken_for_the_kept_one() {
        forget();
        let first = run("p-clht", "a", 5);
        let before = reused();
        // Another seed loads other keys (and seeds the model otherwise).
        let other = run("p-clht", "a", 6);
        assert_eq!(
            reused(),
            before + 2,
            "only the repeats reuse (the new model's load)"
        );
        assert_ne!(first, other);
        // A Load measures its load phase: it never starts from a kept state.
        let before = reused();
        run("p-clht", "load", 6);
        assert_eq!(reused(), before);
        // The scenario's own switches are part of the load: Tonic's xpline_nodes changes it.
        forget();
        run("fast-fair", "a", 5);
        let before = reused();
        let text = "module = \"pm-index\"\nseed = 5\n[index]\nname = \"fast-fair\"\n\
                    [index.tonic]\nxpline_nodes = true\n\
                    [workload]\nkind = \"a\"\nrecords = 3000\noperations = 1500\n\
                    [throughput]\nmeasure = false\n";
        run_scenario(text, "s.toml", &[], &[]).unwrap();
        assert_eq!(reused(), before);
        // A Load drops the kept state of another load (it is only memory) and keeps its own.
        run("fast-fair", "a", 5);
        assert!(kept());
        run("p-clht", "load", 5);
        assert!(kept());
        let before = reused();
        run("fast-fair", "a", 5);
        assert_eq!(
            reused(),
            before + 2,
            "the fast-fair load is gone: only the repeats reuse the model's new load"
        );
    }
}
