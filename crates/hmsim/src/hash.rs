//! A fast, deterministic hasher for integer keys (addresses, block numbers) on hot paths,
//! where std's SipHash costs more than the model around it. Not DoS-resistant: keys come
//! from simulations, not from the network.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        // Fibonacci hashing, folded so the high bits reach the bucket index.
        let h = (self.0 ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 29);
    }
}

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<AddrHasher>>;
pub type FastSet<K> = HashSet<K, BuildHasherDefault<AddrHasher>>;
