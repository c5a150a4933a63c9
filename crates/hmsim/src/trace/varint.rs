//! LEB128 varints and zigzag, for the native format. Decoding is bounds-checked and
//! returns `None` on truncated or over-long input instead of panicking.

#[inline]
pub(super) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
pub(super) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[inline]
pub(super) fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`, advancing it.
#[inline(always)]
pub(super) fn get(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let (v, n) = peek(buf, *pos)?;
    *pos += n;
    Some(v)
}

/// The varint at `pos` and its length in bytes.
///
/// Fast path: one unaligned 8-byte load, the length from the first byte with a clear top
/// bit, and a branch-free gather of the 7-bit groups. Varint lengths in a trace are data
/// dependent, so a per-byte loop mispredicts on most records.
#[inline(always)]
pub(super) fn peek(buf: &[u8], pos: usize) -> Option<(u64, usize)> {
    if let Some(chunk) = buf.get(pos..pos + 8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap());
        if w & 0x80 == 0 {
            return Some((w & 0x7f, 1));
        }
        let stop = !w & 0x8080_8080_8080_8080;
        if stop != 0 {
            let bits = stop.trailing_zeros() + 1; // 8, 16, …, 64
            let w = if bits == 64 {
                w
            } else {
                w & ((1u64 << bits) - 1)
            };
            return Some((gather7(w), (bits / 8) as usize));
        }
    }
    let mut q = pos;
    let v = get_slow(buf, &mut q)?;
    Some((v, q - pos))
}

/// Packs the low 7 bits of each byte of `w` together, lowest byte first.
#[inline(always)]
fn gather7(w: u64) -> u64 {
    let w = w & 0x7f7f_7f7f_7f7f_7f7f;
    let w = (w & 0x007f_007f_007f_007f) | ((w & 0x7f00_7f00_7f00_7f00) >> 1);
    let w = (w & 0x0000_3fff_0000_3fff) | ((w & 0x3fff_0000_3fff_0000) >> 2);
    (w & 0x0000_0000_0fff_ffff) | ((w & 0x0fff_ffff_0000_0000) >> 4)
}

/// Byte-at-a-time decoding: near the end of a buffer and for varints over 8 bytes.
#[cold]
fn get_slow(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
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
        // Fast and slow paths agree, with and without bytes after the varint.
        for v in (0..64)
            .map(|s| 1u64 << s)
            .chain((0..64).map(|s| (1u64 << s) - 1))
        {
            let mut b = Vec::new();
            put(&mut b, v);
            let n = b.len();
            b.extend_from_slice(&[0xaa; 12]);
            let (mut p1, mut p2) = (0, 0);
            assert_eq!(get(&b, &mut p1), Some(v));
            assert_eq!(get_slow(&b, &mut p2), Some(v));
            assert_eq!((p1, p2), (n, n));
        }
    }
}
