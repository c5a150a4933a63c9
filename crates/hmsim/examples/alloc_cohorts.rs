//! Cohort lifetimes of the committed kmem traces, and how often frees coalesce in a buddy
//! replay of each trace against the synthetic stream fitted to it, with and without cohorts
//! (docs/allocators.md, *Cohort lifetimes*):
//! `cargo run --release --example alloc_cohorts > validation/alloc_cohorts.md`.
use std::path::Path;

use hmsim::alloc::cohort::{coalescing, measure};
use hmsim::alloc::shapes::fit;
use hmsim::alloc::workload::{from_trace, from_trace_as, Kernel};

/// Frames of the replay buddy: 1 GiB, room for every trace's live pages.
const FRAMES: u64 = 1 << 18;
/// Synthetic streams per trace (seeds 1..=SEEDS), averaged.
const SEEDS: u64 = 5;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/traces");
    let traces = ["gcc", "lmbench", "stream", "unixbench", "dbench", "tbench"];
    println!("# Cohort lifetimes measured on the committed kmem traces\n");
    println!("Made by `cargo run --release --example alloc_cohorts` (`alloc::cohort::measure`,");
    println!("`alloc::cohort::coalescing`); traces replayed as recorded; bursts are a CPU's");
    println!("allocations with gaps under 100 µs; times in µs.\n");
    println!("| trace | allocs | bursts | allocs/burst | pages/burst | freed in trace | cohort fraction | freed together | gap between a cohort's frees | cohort span | bursts per free run | median life | median cohort life | hand-offs | hand-off gap |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    for t in traces {
        let path = dir.join(format!("{t}.kmem.hmt"));
        let w = from_trace(&path, "trace", t).expect("trace");
        let m = measure(&w);
        println!(
            "| {t} | {} | {} | {:.1} | {:.1} | {:.3} | {:.3} | {:.3} | {:.2} | {:.1} | {:.2} | {:.0} | {:.0} | {:.3} | {:.1} |",
            m.allocs,
            m.bursts,
            m.burst_allocs_mean,
            m.burst_pages_mean,
            m.freed_fraction,
            m.cohort_fraction,
            m.freed_together_fraction,
            m.cohort_free_gap_ns / 1e3,
            m.cohort_span_ns / 1e3,
            m.cohort_bursts_mean,
            m.median_life_ns / 1e3,
            m.median_cohort_life_ns / 1e3,
            m.handoff_fraction,
            m.handoff_gap_ns / 1e3,
        );
        let replay = coalescing(&w, FRAMES, u64::MAX);
        let old = from_trace_as(&path, "trace", t, Kernel::Linux2632).expect("trace");
        let replay_2632 = coalescing(&old, FRAMES, u64::MAX);
        let mut synth = Vec::new();
        for (cohorts, handoffs) in [(false, false), (true, false), (true, true)] {
            let mut s = fit(&w);
            s.cohorts = cohorts;
            if !handoffs {
                s.handoff_fraction = 0.0;
            }
            let (mut frac, mut merges) = (0.0, 0.0);
            for seed in 1..=SEEDS {
                // Up to the trace's duration: the trace ends with blocks still live.
                let c = coalescing(&s.generate(seed, t), FRAMES, w.duration_ns);
                frac += c.coalescing_free_fraction / SEEDS as f64;
                merges += c.merges_per_free / SEEDS as f64;
            }
            synth.push((frac, merges));
        }
        rows.push((t, replay, replay_2632, synth));
    }
    println!("\n## Frees that coalesce in a buddy replay\n");
    println!(
        "A LIFO buddy of 2^18 frames; the synthetic stream is `shapes::fit` of the trace (its"
    );
    println!("CPUs and allocations), cut at the trace's duration, mean of seeds 1–{SEEDS}. Cells:");
    println!("fraction of frees that merge at least once / merges per free. The synthetic streams");
    println!(
        "are fitted to the trace as recorded, so they compare with the replay as recorded; the"
    );
    println!("replay with `kernel = \"2.6.32\"` (page-frag and folio requests as single pages) is");
    println!(
        "beside it. Cohorts without hand-offs: the generator before hand-offs were measured.\n"
    );
    println!("| trace | replay | replay, 2.6.32 | synthetic, independent lifetimes | synthetic, cohorts, no hand-offs | synthetic, cohorts and hand-offs |");
    println!("|---|---|---|---|---|---|");
    for (t, r, r2, s) in rows {
        println!(
            "| {t} | {:.3} / {:.3} | {:.3} / {:.3} | {:.3} / {:.3} | {:.3} / {:.3} | {:.3} / {:.3} |",
            r.coalescing_free_fraction,
            r.merges_per_free,
            r2.coalescing_free_fraction,
            r2.merges_per_free,
            s[0].0,
            s[0].1,
            s[1].0,
            s[1].1,
            s[2].0,
            s[2].1
        );
    }
}
