//! How fast this host runs right now: two fixed pieces of host work, timed.
//!
//! A benchmark's wall time is a fact about the host as much as about hmsim, and a virtual
//! machine's speed moves: on the 2-core Intel Xeon machine the same build ran one benchmark
//! 1.5–2× slower from one hour to the next, with the load average unchanged. `hmsim bench`
//! times this gauge beside every pass, so a slow benchmark says whether the host was slow
//! at the time. The work is the same on every run (a fixed random stream), so two gauges
//! from one kind of machine compare; gauges of different processors do not (the compute
//! part counts instructions' latency, the memory part the host's caches and DRAM).

use std::hint::black_box;
use std::time::Instant;

use rand::{Rng, RngCore};
use serde::Serialize;

/// Steps of the compute chain (one draw, a rotate, a xor and a multiply each, every step
/// waiting on the last): ≈ 40 ms here.
const COMPUTE_STEPS: u64 = 16_000_000;
/// Entries of the memory chain (4 B each: 32 MiB, well past a core's L2, 8,192 pages).
const CHAIN_ENTRIES: usize = 1 << 23;
/// Dependent reads along the chain (each waits on the last, so each pays a miss).
const CHAIN_READS: u64 = 1_000_000;

/// One gauge: millions of units per wall second.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HostGauge {
    /// Compute chain steps per second, millions.
    pub compute_m_per_s: f64,
    /// Dependent random reads over 32 MiB per second, millions.
    pub memory_m_per_s: f64,
}

/// Time both chains once (≈ 0.2 s, most of it building the memory chain, which is not
/// timed).
pub fn measure() -> HostGauge {
    measure_with(COMPUTE_STEPS, CHAIN_ENTRIES, CHAIN_READS)
}

fn measure_with(steps: u64, entries: usize, reads: u64) -> HostGauge {
    let mut rng = crate::rng::stream(0, "host-gauge");
    let t = Instant::now();
    let mut acc = 0u64;
    for _ in 0..steps {
        acc = (acc.rotate_left(5) ^ rng.next_u64()).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    black_box(acc);
    let compute_s = t.elapsed().as_secs_f64();
    let chain = single_cycle(entries, &mut rng);
    let t = Instant::now();
    let mut at = 0u32;
    for _ in 0..reads {
        at = chain[at as usize];
    }
    black_box(at);
    let memory_s = t.elapsed().as_secs_f64();
    HostGauge {
        compute_m_per_s: steps as f64 / compute_s.max(1e-9) / 1e6,
        memory_m_per_s: reads as f64 / memory_s.max(1e-9) / 1e6,
    }
}

/// `next[i]` of one cycle through all `n` entries in random order (Sattolo's shuffle), so a
/// walk from any entry reads every entry before it repeats and the host cannot guess the
/// next address.
fn single_cycle(n: usize, rng: &mut impl Rng) -> Vec<u32> {
    assert!(n > 0 && n <= u32::MAX as usize);
    let mut next: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = rng.random_range(0..i);
        next.swap(i, j);
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_visits_every_entry_once_per_cycle() {
        for n in [1, 2, 3, 17, 1000] {
            let next = single_cycle(n, &mut crate::rng::stream(3, "t"));
            let mut seen = vec![false; n];
            let mut at = 0usize;
            for _ in 0..n {
                assert!(!seen[at], "n = {n}: entry {at} read twice in one cycle");
                seen[at] = true;
                at = next[at] as usize;
            }
            assert_eq!(
                at, 0,
                "n = {n}: the walk is back at its start after n reads"
            );
        }
    }

    #[test]
    fn a_gauge_is_a_positive_finite_rate() {
        let g = measure_with(10_000, 4096, 10_000);
        for r in [g.compute_m_per_s, g.memory_m_per_s] {
            assert!(r.is_finite() && r > 0.0, "{g:?}");
        }
    }
}
