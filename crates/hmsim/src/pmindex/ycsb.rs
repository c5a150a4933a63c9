//! YCSB workloads as RECIPE runs them: a Load phase of N inserts, then a run phase of
//! A (50 % read / 50 % update), B (95 % / 5 %), C (100 % read) or E (95 % scan of ≤ 100 keys /
//! 5 % insert), with request keys drawn uniformly or from YCSB's scrambled zipfian (θ 0.99);
//! integer or 24 B string keys. Key streams are deterministic from the seed.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::key::{mix, Key, KeyType};
use super::ops::Op;
use crate::rng::{self, SimRng};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum YcsbWorkload {
    Load,
    A,
    B,
    C,
    E,
}

impl YcsbWorkload {
    pub(crate) fn name(self) -> &'static str {
        match self {
            YcsbWorkload::Load => "load",
            YcsbWorkload::A => "a",
            YcsbWorkload::B => "b",
            YcsbWorkload::C => "c",
            YcsbWorkload::E => "e",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Distribution {
    Uniform,
    Zipfian,
}

/// Key number `i` of the key space as YCSB's load names it (`CoreWorkload` with hashed
/// insert order): the sequence number hashed by [`fnv_hash64`], so inserts arrive in a
/// scattered order. Integer keys are that hash (RECIPE's integer workloads keep the digits of
/// "user" + hash), string keys the name itself, "user" + unpadded digits. Both matter to the
/// tries: the hash is below 2^63, so an integer key's first byte is below 128 (P-ART's root
/// has at most 128 children), and the names differ in length. Never a reserved key.
pub fn key_of(t: KeyType, i: u64) -> Key {
    let h = fnv_hash64(i);
    match t {
        KeyType::Int => Key::Int(h.clamp(1, u64::MAX - 1)),
        KeyType::Str => Key::ycsb_string_of(h),
    }
}

/// YCSB's `Utils.FNVhash64`: FNV-1a over the 8 bytes of `n` (low byte first), as a
/// non-negative Java long.
pub(crate) fn fnv_hash64(mut n: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for _ in 0..8 {
        h ^= n & 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
        n >>= 8;
    }
    (h as i64).unsigned_abs()
}

/// YCSB's zipfian generator (Gray et al.'s method, as in YCSB's `ZipfianGenerator`) over
/// `0..n`, scrambled by hashing the rank (YCSB's `ScrambledZipfianGenerator`) so hot keys
/// are spread over the key space.
pub(crate) struct Zipf {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

impl Zipf {
    pub(crate) fn new(n: u64, theta: f64) -> Zipf {
        let zeta = |n: u64| (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum::<f64>();
        let zetan = zeta(n);
        let zeta2 = zeta(2.min(n));
        Zipf {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
        }
    }

    /// A rank in `0..n` (0 most popular).
    pub(crate) fn rank(&self, r: &mut SimRng) -> u64 {
        let u: f64 = r.random();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1.min(self.n - 1);
        }
        ((self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64).min(self.n - 1)
    }

    /// A scrambled item in `0..n`.
    pub(crate) fn item(&self, r: &mut SimRng) -> u64 {
        mix(self.rank(r)) % self.n
    }
}

/// The operations of one phase.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct YcsbSpec {
    pub workload: YcsbWorkload,
    pub key_type: KeyType,
    pub distribution: Distribution,
    pub zipf_theta: f64,
    /// Keys inserted by the load phase.
    pub records: u64,
    /// Operations of the run phase (ignored for `load`).
    pub operations: u64,
    pub scan_max: usize,
}

/// The load phase: `records` inserts.
pub(crate) fn load_ops(s: &YcsbSpec, seed: u64) -> Vec<Op> {
    let mut r = rng::stream(seed, "pmindex.ycsb.load.values");
    (0..s.records)
        .map(|i| Op::Insert(key_of(s.key_type, i), r.random()))
        .collect()
}

/// The run phase of `s.workload` after a load of `s.records` keys.
pub(crate) fn run_ops(s: &YcsbSpec, seed: u64) -> Vec<Op> {
    let mut r = rng::stream(seed, &format!("pmindex.ycsb.{}", s.workload.name()));
    let zipf =
        (s.distribution == Distribution::Zipfian).then(|| Zipf::new(s.records, s.zipf_theta));
    let mut next_insert = s.records;
    let pick = |r: &mut SimRng| match &zipf {
        Some(z) => z.item(r),
        None => r.random_range(0..s.records),
    };
    (0..s.operations)
        .map(|_| {
            let x: f64 = r.random();
            let k = key_of(s.key_type, pick(&mut r));
            match s.workload {
                YcsbWorkload::Load => {
                    let op = Op::Insert(key_of(s.key_type, next_insert), r.random());
                    next_insert += 1;
                    op
                }
                YcsbWorkload::A if x < 0.5 => Op::Update(k, r.random()),
                YcsbWorkload::B if x < 0.05 => Op::Update(k, r.random()),
                YcsbWorkload::A | YcsbWorkload::B | YcsbWorkload::C => Op::Lookup(k),
                YcsbWorkload::E if x < 0.05 => {
                    let op = Op::Insert(key_of(s.key_type, next_insert), r.random());
                    next_insert += 1;
                    op
                }
                YcsbWorkload::E => Op::Scan(k, r.random_range(1..=s.scan_max.max(1))),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(w: YcsbWorkload, d: Distribution) -> YcsbSpec {
        YcsbSpec {
            workload: w,
            key_type: KeyType::Int,
            distribution: d,
            zipf_theta: 0.99,
            records: 1000,
            operations: 20_000,
            scan_max: 100,
        }
    }

    #[test]
    fn mixes_match_the_workload_definitions_and_are_deterministic() {
        for (w, updates) in [
            (YcsbWorkload::A, 0.5),
            (YcsbWorkload::B, 0.05),
            (YcsbWorkload::C, 0.0),
        ] {
            let ops = run_ops(&spec(w, Distribution::Uniform), 3);
            let u = ops.iter().filter(|o| matches!(o, Op::Update(..))).count() as f64;
            assert!((u / 20_000.0 - updates).abs() < 0.02, "{w:?}");
            assert_eq!(ops, run_ops(&spec(w, Distribution::Uniform), 3));
        }
        let e = run_ops(&spec(YcsbWorkload::E, Distribution::Uniform), 3);
        assert!(e.iter().all(|o| match o {
            Op::Scan(_, n) => (1..=100).contains(n),
            Op::Insert(..) => true,
            _ => false,
        }));
        let load = load_ops(&spec(YcsbWorkload::Load, Distribution::Uniform), 1);
        let distinct: std::collections::HashSet<_> = load.iter().map(|o| o.key()).collect();
        assert_eq!(distinct.len(), 1000);
    }

    #[test]
    fn keys_are_ycsbs_hashed_key_names() {
        // The first keys of YCSB's load (Utils.FNVhash64 of 0, 1, 2; as RECIPE's workload
        // files list them).
        assert_eq!(fnv_hash64(0), 6_284_781_860_667_377_211);
        assert_eq!(fnv_hash64(1), 8_517_097_267_634_966_620);
        assert_eq!(fnv_hash64(2), 1_820_151_046_732_198_393);
        assert_eq!(key_of(KeyType::Int, 1), Key::Int(8_517_097_267_634_966_620));
        let Key::Str(s) = key_of(KeyType::Str, 0) else {
            panic!("string key")
        };
        assert_eq!(&s[..23], b"user6284781860667377211");
        assert_eq!(s[23], 0);
        // Top bit clear for every key: a non-negative Java long.
        assert!((0..10_000).all(|i| fnv_hash64(i) < 1 << 63));
        let Key::Str(short) = Key::ycsb_string_of(42) else {
            panic!("string key")
        };
        assert_eq!(&short[..7], b"user42\0");
    }

    #[test]
    fn zipfian_rank_zero_gets_its_closed_form_share() {
        // P(rank 0) = 1 / zeta(n, θ).
        let z = Zipf::new(1000, 0.99);
        let mut r = rng::stream(5, "z");
        let n = 200_000;
        let hits = (0..n).filter(|_| z.rank(&mut r) == 0).count() as f64 / n as f64;
        let want = 1.0 / z.zetan;
        assert!((hits - want).abs() < 0.01, "{hits} vs {want}");
        assert!((0..1000).all(|_| z.item(&mut r) < 1000));
    }
}
