//! LEB128 varints and zigzag, for the native format. Decoding is bounds-checked and
//! returns `None` on truncated or over-long input instead of panicking.

#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[inline]
pub fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`, advancing it.
#[inline(always)]
pub fn get(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let b = *buf.get(*pos)?;
    *pos += 1;
    if b < 0x80 {
        return Some(b as u64);
    }
    get_slow(buf, pos, b)
}

#[cold]
fn get_slow(buf: &[u8], pos: &mut usize, first: u8) -> Option<u64> {
    let mut v = (first & 0x7f) as u64;
    let mut shift = 7;
    loop {
        let b = *buf.get(*pos)?;
        *pos += 1;
        if shift == 63 && b > 1 {
            return None; // more than 64 bits
        }
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_varint_roundtrip_edges() {
        for v in [
            0u64,
            1,
            127,
            128,
            300,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put(&mut b, v);
            let mut p = 0;
            assert_eq!(get(&b, &mut p), Some(v));
            assert_eq!(p, b.len());
            // Any truncation is an error, not a panic.
            let mut p = 0;
            assert!(b.len() == 1 || get(&b[..b.len() - 1], &mut p).is_none());
        }
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        let mut p = 0;
        assert_eq!(get(&[0xff; 11], &mut p), None);
    }
}
