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

/// Time both chains once (≈ 0.2 s: the memory chain's reads most of it; building the chain
/// is not timed).
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
    let (chain, start) = walk_chain(entries, reads, &mut rng);
    let t = Instant::now();
    let mut at = start;
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

/// A chain over `n` entries (a power of two) and its first entry: a walk of `reads` steps
/// from it reads a different entry each step, in an order the host cannot guess, spread
/// over all `n` (then returns to the start: a cycle of `min(reads + 1, n)` entries). Only
/// the entries the walk reads are linked, at the places a random bijection of the entry
/// numbers puts them: 1 M writes, not a shuffle of all 8 M entries (16 M random accesses
/// for the same walk).
fn walk_chain(n: usize, reads: u64, rng: &mut impl Rng) -> (Vec<u32>, u32) {
    assert!(n.is_power_of_two() && n <= 1 << 31);
    let mask = n as u32 - 1;
    let bits = n.trailing_zeros();
    // Rounds of odd multiplies, xor-shifts and adds modulo n: each a bijection of 0..n.
    let rounds: Vec<(u32, u32)> = (0..4)
        .map(|_| (rng.random::<u32>() | 1, rng.random()))
        .collect();
    let place = |mut x: u32| {
        for &(m, a) in &rounds {
            x = x.wrapping_mul(m).wrapping_add(a) & mask;
            x ^= x >> (bits / 2 + 1);
        }
        x
    };
    let len = (reads.saturating_add(1)).min(n as u64) as u32;
    let mut next = vec![0u32; n];
    let start = place(0);
    let mut at = start;
    for k in 1..len {
        let to = place(k);
        next[at as usize] = to;
        at = to;
    }
    next[at as usize] = start;
    (next, start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_reads_a_new_entry_every_step() {
        for (n, reads) in [
            (1, 5),
            (2, 1),
            (4, 3),
            (1024, 100),
            (1024, 5000),
            (1 << 16, 4096),
        ] {
            let (next, start) = walk_chain(n, reads, &mut crate::rng::stream(3, "t"));
            let cycle = (reads + 1).min(n as u64) as usize;
            let mut seen = vec![false; n];
            let mut at = start as usize;
            for _ in 0..cycle {
                assert!(!seen[at], "n = {n}: entry {at} read twice in one cycle");
                seen[at] = true;
                at = next[at] as usize;
            }
            assert_eq!(
                at, start as usize,
                "n = {n}: back at the start after {cycle}"
            );
        }
        // Spread over the whole chain, not bunched: every eighth of it is read about as
        // often as the others.
        let (next, start) = walk_chain(1 << 20, 1 << 16, &mut crate::rng::stream(4, "t"));
        let mut per_eighth = [0u32; 8];
        let mut at = start as usize;
        for _ in 0..1 << 16 {
            per_eighth[at >> 17] += 1;
            at = next[at] as usize;
        }
        assert!(
            per_eighth.iter().all(|&c| (7000..9400).contains(&c)),
            "{per_eighth:?}"
        );
    }

    #[test]
    fn a_gauge_is_a_positive_finite_rate() {
        let g = measure_with(10_000, 4096, 10_000);
        for r in [g.compute_m_per_s, g.memory_m_per_s] {
            assert!(r.is_finite() && r > 0.0, "{g:?}");
        }
    }
}
