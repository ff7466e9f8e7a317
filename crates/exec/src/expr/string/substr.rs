//! `SUBSTRING` (2 and 3 arguments), `LEFT`, `RIGHT` and `INSERT`, each in bytes and in UTF-8
//! characters, and `SUBSTRING_INDEX` and `REPLACE` (bytes, case-sensitive as in MySQL).

use super::{Sig, add, build_bytes, char_count, char_offset, find_bytes, fits_packet, int_arg};
use crate::column::{Arg, BytesT, Elem, IntT, VecCol};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::registry::{Call, Registry};
use crate::types::EvalType::{self, Bytes, Int};

pub(super) fn register(r: &mut Registry) {
    add(r, Sig::Left, &[Bytes, Int], Bytes, left);
    add(r, Sig::LeftUtf8, &[Bytes, Int], Bytes, left_utf8);
    add(r, Sig::Right, &[Bytes, Int], Bytes, right);
    add(r, Sig::RightUtf8, &[Bytes, Int], Bytes, right_utf8);
    add(r, Sig::Substring2Args, &[Bytes, Int], Bytes, substring2);
    add(r, Sig::Substring3Args, &[Bytes, Int, Int], Bytes, substring3);
    add(r, Sig::Substring2ArgsUtf8, &[Bytes, Int], Bytes, substring2_utf8);
    add(r, Sig::Substring3ArgsUtf8, &[Bytes, Int, Int], Bytes, substring3_utf8);
    add(r, Sig::SubstringIndex, &[Bytes, Bytes, Int], Bytes, substring_index);
    add(r, Sig::Insert, &[Bytes, Int, Int, Bytes], Bytes, insert);
    add(r, Sig::InsertUtf8, &[Bytes, Int, Int, Bytes], Bytes, insert_utf8);
    add(r, Sig::Replace, &[Bytes, Bytes, Bytes], Bytes, replace);
}

/// The unit range `[start, end)` of `SUBSTRING(s, pos[, len])` over `total` units (bytes
/// or characters): `pos` counts from 1, or from the end when negative; 0 is empty.
fn substr_units(total: usize, pos: i64, len: Option<i64>) -> (usize, usize) {
    let total = total as i128;
    let start = match pos {
        0 => return (0, 0),
        p if p > 0 => i128::from(p) - 1,
        p => total + i128::from(p),
    };
    if start < 0 || start >= total {
        return (0, 0);
    }
    let end = match len {
        None => total,
        Some(l) if l <= 0 => return (0, 0),
        Some(l) => (start + i128::from(l)).min(total),
    };
    (start as usize, end as usize)
}

fn substr_bytes(s: &[u8], pos: i64, len: Option<i64>) -> &[u8] {
    let (a, b) = substr_units(s.len(), pos, len);
    s.get(a..b).unwrap_or_default()
}

/// `SUBSTRING` in characters.
pub(super) fn substr_chars(s: &[u8], pos: i64, len: Option<i64>) -> &[u8] {
    if s.is_ascii() {
        return substr_bytes(s, pos, len);
    }
    let (start, take) = if pos < 0 {
        let (a, b) = substr_units(char_count(s), pos, len);
        (a, b - a)
    } else {
        // From the start, no character count is needed.
        let (a, b) = substr_units(usize::MAX >> 1, pos, len);
        (a, b - a)
    };
    let from = char_offset(s, start);
    let rest = s.get(from..).unwrap_or_default();
    rest.get(..char_offset(rest, take)).unwrap_or_default()
}

/// A `(string, int[, int])` function whose value is a part of the string.
fn slice2<'a>(c: &Call<'a, '_>, f: impl Fn(&'a [u8], i64) -> &'a [u8]) -> Result<VecCol> {
    let (a, k) = (c.typed::<BytesT>(0)?, c.typed::<IntT>(1)?);
    let unsigned = c.arg_ft(1).is_unsigned();
    let mut out = VecCol::new(EvalType::Bytes, c.n);
    for i in 0..c.n {
        let v = match (a.get(i), k.get(i)) {
            (Some(s), Some(k)) => Some(f(s, int_arg(k, unsigned))),
            _ => None,
        };
        BytesT::push(&mut out, v);
    }
    Ok(out)
}

fn left(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    slice2(c, |s, k| s.get(..(k.max(0) as u64).min(s.len() as u64) as usize).unwrap_or_default())
}

fn left_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    slice2(c, |s, k| {
        let k = (k.max(0) as u64).min(s.len() as u64) as usize;
        s.get(..char_offset(s, k)).unwrap_or_default()
    })
}

fn right(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    slice2(c, |s, k| {
        let k = (k.max(0) as u64).min(s.len() as u64) as usize;
        s.get(s.len() - k..).unwrap_or_default()
    })
}

fn right_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    slice2(c, |s, k| {
        let total = char_count(s);
        let k = (k.max(0) as u64).min(total as u64) as usize;
        s.get(char_offset(s, total - k)..).unwrap_or_default()
    })
}

fn substring2(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    slice2(c, |s, p| substr_bytes(s, p, None))
}

fn substring2_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    slice2(c, |s, p| substr_chars(s, p, None))
}

fn substring3_with<'a>(
    c: &Call<'a, '_>,
    f: impl Fn(&'a [u8], i64, Option<i64>) -> &'a [u8],
) -> Result<VecCol> {
    let (a, p, l) = (c.typed::<BytesT>(0)?, c.typed::<IntT>(1)?, c.typed::<IntT>(2)?);
    let (up, ul) = (c.arg_ft(1).is_unsigned(), c.arg_ft(2).is_unsigned());
    let mut out = VecCol::new(EvalType::Bytes, c.n);
    if let (Arg::Col { s: col, valid }, Arg::Const(Some(p)), Arg::Const(Some(l))) = (a, p, l) {
        // The common shape, `SUBSTRING(col, const, const)`: no per-row argument dispatch.
        let (p, l) = (int_arg(p, up), Some(int_arg(l, ul)));
        for i in 0..c.n {
            BytesT::push(&mut out, valid.get(i).then(|| f(BytesT::get(col, i), p, l)));
        }
        return Ok(out);
    }
    for i in 0..c.n {
        let v = match (a.get(i), p.get(i), l.get(i)) {
            (Some(s), Some(p), Some(l)) => Some(f(s, int_arg(p, up), Some(int_arg(l, ul)))),
            _ => None,
        };
        BytesT::push(&mut out, v);
    }
    Ok(out)
}

fn substring3(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    substring3_with(c, substr_bytes)
}

fn substring3_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    substring3_with(c, substr_chars)
}

/// `SUBSTRING_INDEX(s, delim, count)`: what precedes the `count`-th `delim` from the left,
/// or (negative `count`) what follows it from the right; all of `s` when there are fewer.
pub(super) fn substring_index_of<'a>(s: &'a [u8], delim: &[u8], count: i64) -> &'a [u8] {
    if delim.is_empty() || count == 0 {
        return &[];
    }
    if count > 0 {
        let mut at = 0;
        let mut seen = 0;
        while let Some(p) = find_bytes(s, delim, at) {
            seen += 1;
            if seen == count {
                return s.get(..p).unwrap_or_default();
            }
            at = p + delim.len();
        }
        s
    } else {
        // What follows the |count|-th delimiter from the right, the delimiters found left
        // to right (as TiDB's split): `SUBSTRING_INDEX('aaa', 'aa', -1)` is 'a'.
        let mut hits = Vec::new();
        let mut at = 0;
        while let Some(p) = find_bytes(s, delim, at) {
            hits.push(p);
            at = p + delim.len();
        }
        let k = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        match hits.len().checked_sub(k).and_then(|j| hits.get(j)) {
            Some(&p) => s.get(p + delim.len()..).unwrap_or_default(),
            None => s,
        }
    }
}

fn substring_index(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let (a, d, k) = (c.typed::<BytesT>(0)?, c.typed::<BytesT>(1)?, c.typed::<IntT>(2)?);
    let unsigned = c.arg_ft(2).is_unsigned();
    let mut out = VecCol::new(EvalType::Bytes, c.n);
    for i in 0..c.n {
        let v = match (a.get(i), d.get(i), k.get(i)) {
            (Some(s), Some(d), Some(k)) => Some(substring_index_of(s, d, int_arg(k, unsigned))),
            _ => None,
        };
        BytesT::push(&mut out, v);
    }
    Ok(out)
}

/// `INSERT(s, pos, len, new)`: `s` with `len` units from `pos` replaced by `new`; `s` when
/// `pos` is outside it; the rest of `s` when `len` is negative or runs past its end.
fn insert_with(c: &Call<'_, '_>, ctx: &mut EvalContext, utf8: bool) -> Result<VecCol> {
    let (a, p, l, new) =
        (c.typed::<BytesT>(0)?, c.typed::<IntT>(1)?, c.typed::<IntT>(2)?, c.typed::<BytesT>(3)?);
    let (up, ul) = (c.arg_ft(1).is_unsigned(), c.arg_ft(2).is_unsigned());
    build_bytes(c.n, |i, buf| {
        let (Some(s), Some(p), Some(l), Some(new)) = (a.get(i), p.get(i), l.get(i), new.get(i))
        else {
            return Ok(false);
        };
        let (p, l) = (int_arg(p, up), int_arg(l, ul));
        let total = if utf8 { char_count(s) } else { s.len() } as i64;
        if p < 1 || p > total {
            buf.extend_from_slice(s);
            return Ok(true);
        }
        let rest = total - (p - 1);
        let l = if l < 0 || l > rest { rest } else { l };
        let (from, to) = if utf8 {
            let from = char_offset(s, (p - 1) as usize);
            let tail = s.get(from..).unwrap_or_default();
            (from, from + char_offset(tail, l as usize))
        } else {
            ((p - 1) as usize, (p - 1 + l) as usize)
        };
        let len = (s.len() - (to - from)) as u64 + new.len() as u64;
        if !fits_packet(ctx, "insert", len) {
            return Ok(false);
        }
        buf.extend_from_slice(s.get(..from).unwrap_or_default());
        buf.extend_from_slice(new);
        buf.extend_from_slice(s.get(to..).unwrap_or_default());
        Ok(true)
    })
}

fn insert(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    insert_with(c, ctx, false)
}

fn insert_utf8(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    insert_with(c, ctx, true)
}

/// `REPLACE(s, from, to)`: every non-overlapping `from`, left to right, replaced by `to`.
fn replace(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let (a, f, t) = (c.typed::<BytesT>(0)?, c.typed::<BytesT>(1)?, c.typed::<BytesT>(2)?);
    build_bytes(c.n, |i, buf| {
        let (Some(s), Some(from), Some(to)) = (a.get(i), f.get(i), t.get(i)) else {
            return Ok(false);
        };
        if from.is_empty() {
            buf.extend_from_slice(s);
            return Ok(true);
        }
        let mut hits = 0u64;
        let mut at = 0;
        while let Some(p) = find_bytes(s, from, at) {
            hits += 1;
            at = p + from.len();
        }
        let len =
            (s.len() as u64 - hits * from.len() as u64).saturating_add(hits * to.len() as u64);
        if !fits_packet(ctx, "replace", len) {
            return Ok(false);
        }
        let mut at = 0;
        while let Some(p) = find_bytes(s, from, at) {
            buf.extend_from_slice(s.get(at..p).unwrap_or_default());
            buf.extend_from_slice(to);
            at = p + from.len();
        }
        buf.extend_from_slice(s.get(at..).unwrap_or_default());
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substring_ranges() {
        assert_eq!(substr_bytes(b"abcdef", 2, None), b"bcdef");
        assert_eq!(substr_bytes(b"abcdef", -2, None), b"ef");
        assert_eq!(substr_bytes(b"abcdef", -7, None), b"");
        assert_eq!(substr_bytes(b"abcdef", 0, None), b"");
        assert_eq!(substr_bytes(b"abcdef", 2, Some(2)), b"bc");
        assert_eq!(substr_bytes(b"abcdef", i64::MIN, Some(i64::MAX)), b"");
        assert_eq!(substr_chars("añb€c".as_bytes(), -3, Some(2)), "b€".as_bytes());
        assert_eq!(substr_chars("añb€c".as_bytes(), 2, Some(2)), "ñb".as_bytes());
    }

    #[test]
    fn substring_index_counts_from_either_end() {
        assert_eq!(substring_index_of(b"www.mysql.com", b".", 2), b"www.mysql");
        assert_eq!(substring_index_of(b"www.mysql.com", b".", -2), b"mysql.com");
        assert_eq!(substring_index_of(b"www.mysql.com", b".", 9), b"www.mysql.com");
        assert_eq!(substring_index_of(b"aaa", b"aa", -1), b"a");
        assert_eq!(substring_index_of(b"aaa", b"aa", 1), b"");
    }
}
