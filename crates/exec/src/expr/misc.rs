//! Miscellaneous functions: `ANY_VALUE`, `INET_ATON`/`INET_NTOA`, `INET6_ATON`/`INET6_NTOA`,
//! `IS_IPV4`, `IS_IPV4_COMPAT`, `IS_IPV4_MAPPED`, `IS_IPV6`, `UUID`.
//!
//! The address parsers and printer follow MySQL's (`item_inetfunc.cc`), not the standard
//! library's: MySQL accepts leading zeros in IPv4 groups, reads `INET_ATON`'s short forms
//! (`127.1`), and prints a lone zero group as `::`.

use crate::column::{Bitmap, BytesT, ColData, Elem, IntT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::kernel::map1_infallible;
use crate::expr::registry::{Args, Call, Registry};
use crate::expr::value::Value;
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes as B, DateTime, Decimal, Duration, Int as I, Real};
    r.add(4554, Args::same(Decimal, 1), Decimal, any_value);
    r.add(4555, Args::same(Duration, 1), Duration, any_value);
    r.add(4556, Args::same(I, 1), I, any_value);
    r.add(4557, Args::same(EvalType::Json, 1), EvalType::Json, any_value);
    r.add(4558, Args::same(Real, 1), Real, any_value);
    r.add(4559, Args::same(B, 1), B, any_value);
    r.add(4560, Args::same(DateTime, 1), DateTime, any_value);
    r.add(4561, Args::same(B, 1), I, inet_aton);
    r.add(4562, Args::same(I, 1), B, inet_ntoa);
    r.add(4563, Args::same(B, 1), B, inet6_aton);
    r.add(4564, Args::same(B, 1), B, inet6_ntoa);
    r.add(4565, Args::same(B, 1), I, is_ipv4);
    r.add(4566, Args::same(B, 1), I, is_ipv4_compat);
    r.add(4567, Args::same(B, 1), I, is_ipv4_mapped);
    r.add(4568, Args::same(B, 1), I, is_ipv6);
    r.add(4569, Args::fixed(&[]), B, uuid);
}

fn any_value(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(match c.arg(0)? {
        Value::Scalar(s) => VecCol::broadcast(c.et, s, c.n),
        Value::Owned(col) => col.clone(),
        Value::Ref(col) => (*col).clone(),
    })
}

/// `INET_ATON(str)`, as MySQL: dot-separated decimal bytes, the last part filling the low
/// bytes (`127.1` is 127.0.0.1); NULL for any other character, a part above 255, a trailing
/// dot or the empty string.
pub fn inet_aton_one(s: &[u8]) -> Option<i64> {
    let (mut result, mut byte, mut dots, mut last) = (0u64, 0u64, 0u32, b'.');
    for &c in s {
        last = c;
        if c.is_ascii_digit() {
            byte = byte * 10 + u64::from(c - b'0');
            if byte > 255 {
                return None;
            }
        } else if c == b'.' {
            dots += 1;
            result = (result << 8).wrapping_add(byte);
            byte = 0;
        } else {
            return None;
        }
    }
    if last == b'.' {
        return None;
    }
    match dots {
        1 => result <<= 16,
        2 => result <<= 8,
        _ => {}
    }
    Some((result << 8).wrapping_add(byte) as i64)
}

fn inet_aton(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<BytesT, IntT>(c.n, c.typed(0)?, inet_aton_one)
}

fn ipv4_text(b: [u8; 4]) -> Vec<u8> {
    format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3]).into_bytes()
}

fn inet_ntoa(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let unsigned = c.arg_ft(0).is_unsigned();
    map1_infallible::<IntT, BytesT>(c.n, c.typed(0)?, |v| {
        if v < 0 && !unsigned {
            return None;
        }
        u32::try_from(v as u64).ok().map(|x| ipv4_text(x.to_be_bytes()))
    })
}

/// MySQL's `str_to_ipv4`: exactly four groups of one to three digits, each at most 255.
/// A NUL byte ends the text.
pub fn parse_ipv4(s: &[u8]) -> Option<[u8; 4]> {
    if !(7..=15).contains(&s.len()) {
        return None;
    }
    let mut out = [0u8; 4];
    let (mut value, mut chars, mut dots, mut last) = (0u32, 0, 0usize, 0u8);
    for &c in s.iter().take_while(|c| **c != 0) {
        last = c;
        if c.is_ascii_digit() {
            chars += 1;
            value = value * 10 + u32::from(c - b'0');
            if chars > 3 || value > 255 {
                return None;
            }
        } else if c == b'.' {
            if chars == 0 {
                return None;
            }
            *out.get_mut(dots)? = value as u8;
            dots += 1;
            if dots > 3 {
                return None;
            }
            value = 0;
            chars = 0;
        } else {
            return None;
        }
    }
    if last == b'.' || dots != 3 {
        return None;
    }
    out[3] = value as u8;
    Some(out)
}

/// MySQL's `str_to_ipv6`: up to eight groups of one to four hex digits, at most one `::`
/// standing for at least one zero group, an optional IPv4 tail.
pub fn parse_ipv6(s: &[u8]) -> Option<[u8; 16]> {
    if !(2..=39).contains(&s.len()) {
        return None;
    }
    let s = &s[..s.iter().position(|c| *c == 0).unwrap_or(s.len())];
    let mut out = [0u8; 16];
    let mut dst = 0usize;
    let mut gap: Option<usize> = None;
    let mut p = 0usize;
    if s.first() == Some(&b':') {
        if s.get(1) != Some(&b':') {
            return None;
        }
        p = 1;
    }
    let mut group_start = p;
    let (mut chars, mut value) = (0u32, 0u16);
    while let Some(&c) = s.get(p) {
        p += 1;
        if c == b':' {
            group_start = p;
            if chars == 0 {
                if gap.is_some() {
                    return None;
                }
                gap = Some(dst);
                continue;
            }
            if p >= s.len() || dst + 2 > 16 {
                return None;
            }
            out.get_mut(dst..dst + 2)?.copy_from_slice(&value.to_be_bytes());
            dst += 2;
            chars = 0;
            value = 0;
        } else if c == b'.' {
            if dst + 4 > 16 {
                return None;
            }
            let v4 = parse_ipv4(s.get(group_start..)?)?;
            out.get_mut(dst..dst + 4)?.copy_from_slice(&v4);
            dst += 4;
            chars = 0;
            break;
        } else {
            let d = char::from(c).to_digit(16)?;
            if chars >= 4 {
                return None;
            }
            value = (value << 4) | d as u16;
            chars += 1;
        }
    }
    if chars > 0 {
        if dst + 2 > 16 {
            return None;
        }
        out.get_mut(dst..dst + 2)?.copy_from_slice(&value.to_be_bytes());
        dst += 2;
    }
    match gap {
        Some(g) => {
            if dst == 16 {
                return None;
            }
            // Move the groups after the gap to the end.
            let tail: Vec<u8> = out.get(g..dst)?.to_vec();
            out.get_mut(g..dst)?.fill(0);
            out.get_mut(16 - tail.len()..)?.copy_from_slice(&tail);
        }
        None if dst < 16 => return None,
        None => {}
    }
    Some(out)
}

/// MySQL's `ipv6_to_str`: the longest run of zero groups (the first of equal runs, even a
/// single group) is `::`; IPv4-compatible and IPv4-mapped addresses end in dotted form.
pub fn ipv6_text(b: &[u8; 16]) -> Vec<u8> {
    let words: Vec<u16> = b.chunks_exact(2).map(|w| u16::from_be_bytes([w[0], w[1]])).collect();
    let (mut gap_pos, mut gap_len) = (usize::MAX, 0usize);
    let mut i = 0;
    while i < 8 {
        if words[i] == 0 {
            let start = i;
            while i < 8 && words[i] == 0 {
                i += 1;
            }
            if i - start > gap_len {
                (gap_pos, gap_len) = (start, i - start);
            }
        } else {
            i += 1;
        }
    }
    let mut out = Vec::with_capacity(40);
    let mut i = 0;
    while i < 8 {
        if i == gap_pos {
            if i == 0 {
                out.push(b':');
            }
            out.push(b':');
            i += gap_len;
            continue;
        }
        if i == 6 && gap_pos == 0 && (gap_len == 6 || (gap_len == 5 && words[5] == 0xffff)) {
            out.extend(ipv4_text([b[12], b[13], b[14], b[15]]));
            return out;
        }
        out.extend(format!("{:x}", words[i]).bytes());
        if i != 7 {
            out.push(b':');
        }
        i += 1;
    }
    out
}

fn inet6_aton(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<BytesT, BytesT>(c.n, c.typed(0)?, |s| {
        if let Some(v4) = parse_ipv4(s) {
            return Some(v4.to_vec());
        }
        parse_ipv6(s).map(|v6| v6.to_vec())
    })
}

fn inet6_ntoa(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<BytesT, BytesT>(c.n, c.typed(0)?, |b| match b {
        [a, b, c, d] => Some(ipv4_text([*a, *b, *c, *d])),
        _ => <[u8; 16]>::try_from(b).ok().map(|v6| ipv6_text(&v6)),
    })
}

/// An `IS_IPV*` test: NULL is 0 (MySQL's `Item_func_inet_bool_base`).
fn is_test(c: &Call<'_, '_>, f: impl Fn(&[u8]) -> bool) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    let data = (0..c.n).map(|i| i64::from(a.get(i).is_some_and(&f))).collect();
    Ok(VecCol { data: ColData::Int(data), valid: Bitmap::all_valid(c.n) })
}

fn is_ipv4(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    is_test(c, |s| parse_ipv4(s).is_some())
}

fn is_ipv6(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    is_test(c, |s| parse_ipv6(s).is_some())
}

/// `IS_IPV4_COMPAT`: 16 bytes, the first 12 zero and the last four above 0.0.0.1
/// (`IN6_IS_ADDR_V4COMPAT`).
fn is_ipv4_compat(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    is_test(c, |b| match b {
        [head @ .., w, x, y, z] if b.len() == 16 => {
            head.iter().all(|v| *v == 0) && u32::from_be_bytes([*w, *x, *y, *z]) > 1
        }
        _ => false,
    })
}

/// `IS_IPV4_MAPPED`: 16 bytes, ten zero bytes then `ff ff`.
fn is_ipv4_mapped(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    is_test(c, |b| {
        b.len() == 16
            && b.get(..10).is_some_and(|h| h.iter().all(|v| *v == 0))
            && b.get(10..12) == Some(&[0xff, 0xff][..])
    })
}

/// `UUID()`: a version 1 UUID as MySQL makes it — the time in 100 ns since 1582-10-15,
/// a random clock sequence and a random node (MySQL uses a MAC address when it has one).
fn uuid(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let mut out = VecCol::new(EvalType::Bytes, c.n);
    let mut seed = [0u8; 8];
    getrandom::fill(&mut seed)
        .map_err(|e| Error::eval(1105, format!("uuid: no random source: {e}")))?;
    let clock_seq = u16::from_le_bytes([seed[0], seed[1]]) & 0x3fff;
    let node = u64::from_le_bytes(seed) >> 16 | 1 << 40; // multicast bit: not a real MAC
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() / 100) as u64;
    // 1582-10-15 to 1970-01-01 in 100 ns ticks.
    let base = now.wrapping_add(0x01B2_1DD2_1381_4000);
    for i in 0..c.n {
        let t = base.wrapping_add(i as u64);
        let s = format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            t as u32,
            (t >> 32) as u16,
            ((t >> 48) as u16 & 0x0fff) | 0x1000,
            clock_seq | 0x8000,
            node & 0xffff_ffff_ffff
        );
        BytesT::push(&mut out, Some(s.as_bytes()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_as_mysql() {
        assert_eq!(inet_aton_one(b"127.1"), Some(0x7f00_0001));
        assert_eq!(inet_aton_one(b"10.0.5.9"), Some(167_773_449));
        assert_eq!(inet_aton_one(b"1.2.3."), None);
        assert_eq!(inet_aton_one(b""), None);
        assert_eq!(parse_ipv4(b"01.002.3.4"), Some([1, 2, 3, 4]));
        assert_eq!(parse_ipv4(b"1.2.3.256"), None);
        let v6 = parse_ipv6(b"fdfe::5a55:caff:fefa:9089").unwrap();
        assert_eq!(ipv6_text(&v6), b"fdfe::5a55:caff:fefa:9089");
        assert_eq!(ipv6_text(&parse_ipv6(b"::1.2.3.4").unwrap()), b"::1.2.3.4");
        assert_eq!(ipv6_text(&parse_ipv6(b"::ffff:1.2.3.4").unwrap()), b"::ffff:1.2.3.4");
        assert_eq!(ipv6_text(&parse_ipv6(b"1:0:2:3:4:5:6:7").unwrap()), b"1::2:3:4:5:6:7");
        assert_eq!(ipv6_text(&[0; 16]), b"::");
        assert!(parse_ipv6(b"1::2::3").is_none());
        assert!(parse_ipv6(b"1:2:3:4:5:6:7:8::").is_none());
        assert!(parse_ipv6(b"1:2:3:4:5:6:7").is_none());
    }
}
