//! Seeded, deterministic random streams. Every stream derives from the scenario seed and a
//! stream name, so adding a new consumer never shifts the numbers another consumer sees.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

pub type SimRng = Xoshiro256PlusPlus;

/// FNV-1a over the stream name: stable across versions and platforms (unlike `Hash`).
fn fnv1a(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64 finaliser, to spread seed bits before they reach xoshiro.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The random stream `name` of a scenario with seed `seed`.
pub fn stream(seed: u64, name: &str) -> SimRng {
    SimRng::seed_from_u64(splitmix(seed ^ splitmix(fnv1a(name))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn same_seed_and_name_give_same_numbers() {
        let a: Vec<u64> = (0..8)
            .map({
                let mut r = stream(7, "job");
                move |_| r.random()
            })
            .collect();
        let b: Vec<u64> = (0..8)
            .map({
                let mut r = stream(7, "job");
                move |_| r.random()
            })
            .collect();
        assert_eq!(a, b);
    }

    #[test]
    fn names_and_seeds_separate_streams() {
        let x: u64 = stream(7, "job").random();
        let y: u64 = stream(7, "thermal").random();
        let z: u64 = stream(8, "job").random();
        assert_ne!(x, y);
        assert_ne!(x, z);
    }
}
