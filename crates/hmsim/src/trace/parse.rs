//! Allocation-free parsing of numbers and fields from byte slices (text traces are ASCII;
//! going through `str` would cost a UTF-8 check per line for nothing).

/// Hex number with an optional `0x`/`0X` prefix; `None` on empty, bad digit or overflow.
#[inline]
pub(super) fn hex(s: &[u8]) -> Option<u64> {
    let s = strip_0x(s);
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u64;
    }
    Some(v)
}

/// Unsigned decimal; `None` on empty, bad digit or overflow.
#[inline]
pub(super) fn dec(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

/// Hex when prefixed by `0x`, decimal otherwise (C's `strtoul(s, 0)` without octal).
#[inline]
pub(super) fn num(s: &[u8]) -> Option<u64> {
    if s.len() > 2 && s[0] == b'0' && (s[1] | 0x20) == b'x' {
        hex(s)
    } else {
        dec(s)
    }
}

#[inline]
fn strip_0x(s: &[u8]) -> &[u8] {
    if s.len() >= 2 && s[0] == b'0' && (s[1] | 0x20) == b'x' {
        &s[2..]
    } else {
        s
    }
}

/// Decimal with an optional fraction (`1234.567890`) in a unit of `unit_ns` nanoseconds,
/// converted exactly to integer nanoseconds (sub-ns digits are truncated).
pub(super) fn fixed_to_ns(s: &[u8], unit_ns: u64) -> Option<u64> {
    let (int, frac) = match s.iter().position(|&c| c == b'.') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &s[s.len()..]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let whole = if int.is_empty() { 0 } else { dec(int)? };
    let mut ns = whole.checked_mul(unit_ns)?;
    if !frac.is_empty() {
        // Digits past 18 are below any unit we use; drop them to avoid overflow.
        let digits = &frac[..frac.len().min(18)];
        if frac.iter().any(|c| !c.is_ascii_digit()) {
            return None;
        }
        let f = dec(digits)? as u128;
        let scale = 10u128.pow(digits.len() as u32);
        ns = ns.checked_add((f * unit_ns as u128 / scale) as u64)?;
    }
    Some(ns)
}

/// Whitespace-separated fields.
#[inline]
pub(super) fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|c| c.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
}

/// Strips leading and trailing ASCII whitespace (including `\r`).
#[inline]
pub(super) fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &s[start..end]
}

/// Value of `key=` in a `k=v k=v` list, e.g. `value_of(line, b"pfn=")`.
pub(super) fn value_of<'a>(line: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let mut i = 0;
    while let Some(p) = find(&line[i..], key) {
        let at = i + p;
        // Must start a field, so `order=` does not match inside `suborder=`.
        if at == 0 || line[at - 1].is_ascii_whitespace() {
            let rest = &line[at + key.len()..];
            let end = rest
                .iter()
                .position(|c| c.is_ascii_whitespace())
                .unwrap_or(rest.len());
            return Some(&rest[..end]);
        }
        i = at + 1;
    }
    None
}

/// First position of `needle` in `hay`.
pub(super) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_parse_numbers() {
        assert_eq!(hex(b"0x1f"), Some(31));
        assert_eq!(hex(b"1ffefffb48"), Some(0x1ffefffb48));
        assert_eq!(hex(b"0x"), None);
        assert_eq!(hex(b"ffffffffffffffff"), Some(u64::MAX));
        assert_eq!(hex(b"1ffffffffffffffff"), None);
        assert_eq!(dec(b"18446744073709551616"), None);
        assert_eq!(num(b"0x10"), Some(16));
        assert_eq!(num(b"10"), Some(10));
    }

    #[test]
    fn trace_parse_fixed_point_time() {
        assert_eq!(
            fixed_to_ns(b"1234.567890", 1_000_000_000),
            Some(1_234_567_890_000)
        );
        assert_eq!(fixed_to_ns(b"0.5", 1_000_000), Some(500_000));
        assert_eq!(fixed_to_ns(b"12", 1_000_000), Some(12_000_000));
        assert_eq!(fixed_to_ns(b".", 1), None);
        assert_eq!(fixed_to_ns(b"1.2x", 1), None);
    }

    #[test]
    fn trace_parse_key_values() {
        let l = b"page=0xffff pfn=0x1286cb order=0 migratetype=1";
        assert_eq!(value_of(l, b"pfn="), Some(&b"0x1286cb"[..]));
        assert_eq!(value_of(l, b"order="), Some(&b"0"[..]));
        assert_eq!(value_of(b"suborder=3", b"order="), None);
        assert_eq!(trim(b"  a b \r\n"), b"a b");
    }
}
