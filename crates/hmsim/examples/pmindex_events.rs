//! Event-stream fingerprint of an index: `cargo run --release --example pmindex_events -- INDEX N`
//! (INDEX: a registered name, or `cceh-recipe` / `level-hashing-recipe`).
//! Per key type and phase (load of N keys, N lookups, N/2 updates, N/2 deletes, N reinserts):
//! the region counters and a hash of every store / nt-store / flush / fence event (offset,
//! length) in order, so a change to an index's code can be checked to persist the same way.
use hmsim::pmindex::ycsb::key_of;
use hmsim::pmindex::{
    find, IndexOptions, KeyType, Op, PmEvent, PmObserver, PmRegion, RegionConfig,
};

#[derive(Default)]
struct Fingerprint {
    writes: u64,
    loads: u64,
}

impl PmObserver for Fingerprint {
    fn event(&mut self, _core: usize, e: PmEvent) {
        let word = match e {
            PmEvent::Load { .. } => {
                self.loads += 1;
                return;
            }
            PmEvent::Store { off, len } => off ^ (len as u64) << 56 ^ 1 << 60,
            PmEvent::NtStore { off, len } => off ^ (len as u64) << 56 ^ 2 << 60,
            PmEvent::Flush { off, .. } => off ^ 3 << 60,
            PmEvent::Fence => 4 << 60,
        };
        self.writes = hmsim::pmindex::mix(self.writes ^ word);
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let index = a.get(1).map(String::as_str).unwrap_or("p-hot");
    let n: u64 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    // The original's variants of CCEH and Level hashing are not registered.
    let spec = match index {
        "cceh-recipe" => &hmsim::pmindex::hash::cceh::SPEC_RECIPE,
        "level-hashing-recipe" => &hmsim::pmindex::hash::level::SPEC_RECIPE,
        _ => find(index).expect("a registered index"),
    };
    for kt in [KeyType::Int, KeyType::Str] {
        let mut pm = PmRegion::anonymous(RegionConfig::default()).expect("region");
        let mut idx = (spec.create)(&mut pm, &IndexOptions::new(kt)).expect("create");
        pm.set_observer(Some(Box::new(Fingerprint::default())));
        let k = |i: u64| key_of(kt, i);
        let phases: [(&str, Vec<Op>); 5] = [
            ("load", (0..n).map(|i| Op::Insert(k(i), i)).collect()),
            ("lookup", (0..n).map(|i| Op::Lookup(k(i))).collect()),
            (
                "update",
                (0..n / 2).map(|i| Op::Update(k(3 * i % n), i)).collect(),
            ),
            ("delete", (0..n / 2).map(|i| Op::Delete(k(2 * i))).collect()),
            (
                "reinsert",
                (0..n).map(|i| Op::Insert(k(i), i + 1)).collect(),
            ),
        ];
        for (name, ops) in phases {
            let s0 = pm.stats();
            for op in &ops {
                op.apply(idx.as_mut(), &mut pm).expect("op");
            }
            let d = pm.stats().minus(&s0);
            let used = pm.used_bytes();
            let f = pm
                .observer_mut()
                .and_then(|o| o.as_any_mut())
                .and_then(|a| a.downcast_mut::<Fingerprint>())
                .expect("fingerprint");
            println!(
                "{index} {kt:?} {name:8} flushes {} fences {} ntstores {} stores {} alloc_flushes {} alloc_fences {} loads {} writes-hash {:016x} used-bytes {}",
                d.flushes, d.fences, d.ntstores, d.stores, d.alloc_flushes, d.alloc_fences, d.loads, f.writes, used
            );
            f.loads = 0;
        }
        idx.check_invariants(&pm).expect("invariants");
    }
}
