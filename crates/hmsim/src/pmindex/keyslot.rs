//! Keys in 8 B slots, as RECIPE's indexes keep them: an integer key inline, a 24 B string key
//! as the offset of a key record allocated and persisted *before* the slot is published (so
//! a visible slot never points at an unwritten key). Integer keys 0 and `u64::MAX` are
//! reserved as empty/sentinel markers, as in CLHT and ART.

use super::key::{Key, KeyType};
use super::mem::PmMem;
use super::region::PmResult;

/// Bytes of a string key record (24 B key, padded; one cache line when 64 B aligned).
pub(crate) const KEY_RECORD_BYTES: u64 = 24;

/// Whether `key` may be stored (not a reserved sentinel).
pub(crate) fn valid(key: Key) -> bool {
    !matches!(key, Key::Int(0) | Key::Int(u64::MAX))
}

/// The slot word for `key`; for strings, writes and persists the key record first.
pub(crate) fn make<M: PmMem>(pm: &mut M, key: Key) -> PmResult<u64> {
    match key {
        Key::Int(k) => Ok(k),
        Key::Str(s) => {
            let rec = pm.try_alloc(KEY_RECORD_BYTES, 64)?;
            pm.store_bytes(rec, &s);
            pm.persist(rec, KEY_RECORD_BYTES);
            Ok(rec)
        }
    }
}

/// Whether the (non-empty) slot word holds `key` (loads the record for strings).
pub(crate) fn matches<M: PmMem>(pm: &M, slot: u64, key: Key) -> bool {
    match key {
        Key::Int(k) => slot == k,
        Key::Str(s) => {
            if slot == 0 {
                return false;
            }
            let mut b = [0u8; 24];
            pm.load_bytes(slot, &mut b);
            b == s
        }
    }
}

/// The key a slot holds, loaded through the instrumented path (for ordered comparisons).
pub(crate) fn load<M: PmMem>(pm: &M, t: KeyType, slot: u64) -> Key {
    match t {
        KeyType::Int => Key::Int(slot),
        KeyType::Str => {
            let mut b = [0u8; 24];
            pm.load_bytes(slot, &mut b);
            Key::Str(b)
        }
    }
}

/// The key a slot holds, uninstrumented (recovery scans, checks): the record's three words
/// through [`PmMem::peek`].
pub(crate) fn peek<M: PmMem>(pm: &M, t: KeyType, slot: u64) -> Key {
    match t {
        KeyType::Int => Key::Int(slot),
        KeyType::Str => {
            let mut b = [0u8; 24];
            for (i, w) in b.chunks_mut(8).enumerate() {
                w.copy_from_slice(&pm.peek(slot + 8 * i as u64).to_le_bytes());
            }
            Key::Str(b)
        }
    }
}

/// Release a string key record after its slot was cleared durably.
pub(crate) fn release<M: PmMem>(pm: &mut M, t: KeyType, slot: u64) {
    if t == KeyType::Str && slot != 0 {
        pm.free(slot, KEY_RECORD_BYTES);
    }
}
