//! Keys: 8 B integers or 24 B strings (YCSB's two key types). An index is created for one
//! key type. Integer keys order numerically, string keys lexicographically.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Int(u64),
    Str([u8; 24]),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum KeyType {
    Int,
    #[serde(rename = "string", alias = "str")]
    Str,
}

impl KeyType {
    /// Bytes a key of this type occupies.
    pub(crate) fn bytes(self) -> u64 {
        match self {
            KeyType::Int => 8,
            KeyType::Str => 24,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            KeyType::Int => "int",
            KeyType::Str => "string",
        }
    }
}

impl Key {
    /// The string key YCSB would use for integer `n`: "user" + zero-padded decimal, 24 B.
    pub(crate) fn string_of(n: u64) -> Key {
        let mut b = [b'0'; 24];
        b[..4].copy_from_slice(b"user");
        let mut x = n;
        for i in (4..24).rev() {
            b[i] = b'0' + (x % 10) as u8;
            x /= 10;
        }
        Key::Str(b)
    }

    /// YCSB's own key name for key number `n` as a C string: "user" + the decimal digits
    /// without padding, then NUL bytes to 24 B (what RECIPE's driver stores, its length
    /// counting the terminator; `n` < 2^63 has at most 19 digits).
    pub(crate) fn ycsb_string_of(n: u64) -> Key {
        let mut b = [0u8; 24];
        b[..4].copy_from_slice(b"user");
        let digits = n.to_string();
        let d = digits.as_bytes();
        let len = d.len().min(19);
        b[4..4 + len].copy_from_slice(&d[..len]);
        Key::Str(b)
    }

    /// Key number `n` of type `t`.
    pub(crate) fn of(t: KeyType, n: u64) -> Key {
        match t {
            KeyType::Int => Key::Int(n),
            KeyType::Str => Key::string_of(n),
        }
    }

    /// The key's bytes, big-endian for integers so byte order equals numeric order.
    pub(crate) fn bytes(&self) -> ([u8; 24], usize) {
        match self {
            Key::Int(v) => {
                let mut b = [0u8; 24];
                b[..8].copy_from_slice(&v.to_be_bytes());
                (b, 8)
            }
            Key::Str(s) => (*s, 24),
        }
    }

    /// Rebuild a key of type `t` from its bytes (as written by [`Key::bytes`]).
    pub(crate) fn from_bytes(t: KeyType, b: &[u8]) -> Key {
        match t {
            KeyType::Int => Key::Int(u64::from_be_bytes(b[..8].try_into().expect("8 bytes"))),
            KeyType::Str => Key::Str(b[..24].try_into().expect("24 bytes")),
        }
    }

    /// A well-mixed 64-bit hash (stable across runs and platforms).
    pub(crate) fn hash64(&self) -> u64 {
        match self {
            Key::Int(v) => mix(*v),
            Key::Str(s) => {
                let mut h = 0x243f_6a88_85a3_08d3u64;
                for c in s.chunks(8) {
                    h = mix(h ^ u64::from_le_bytes(c.try_into().expect("8 bytes")));
                }
                h
            }
        }
    }
}

/// murmur3's 64-bit finalizer.
#[inline]
pub fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_keys_order_like_their_numbers_and_round_trip() {
        assert!(Key::string_of(9) < Key::string_of(10));
        let k = Key::string_of(12345);
        let (b, n) = k.bytes();
        assert_eq!(n, 24);
        assert_eq!(&b[..4], b"user");
        assert_eq!(Key::from_bytes(KeyType::Str, &b), k);
        let (b, _) = Key::Int(77).bytes();
        assert_eq!(Key::from_bytes(KeyType::Int, &b), Key::Int(77));
        assert_ne!(Key::Int(1).hash64(), Key::Int(2).hash64());
    }
}
