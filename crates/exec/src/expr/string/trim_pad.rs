//! `LTRIM`, `RTRIM`, `TRIM` (1, 2 and 3 arguments), `LPAD`/`RPAD` (bytes and UTF-8),
//! `REPEAT` and `SPACE`.

use super::{Sig, add, build_bytes, char_count, char_offset, fits_packet, int_arg, map_slice};
use crate::column::{BytesT, IntT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::registry::{Call, Registry};
use crate::types::EvalType::{Bytes, Int};

/// The most bytes a character of any supported character set takes (utf8mb4): `LPAD`/`RPAD`
/// of characters check `length * 4` against `max_allowed_packet`, as MySQL and TiDB.
const MAX_BYTES_OF_CHAR: u64 = 4;

pub(super) fn register(r: &mut Registry) {
    add(r, Sig::LTrim, &[Bytes], Bytes, ltrim);
    add(r, Sig::RTrim, &[Bytes], Bytes, rtrim);
    add(r, Sig::Trim1Arg, &[Bytes], Bytes, trim1);
    add(r, Sig::Trim2Args, &[Bytes, Bytes], Bytes, trim2);
    add(r, Sig::Trim3Args, &[Bytes, Bytes, Int], Bytes, trim3);
    add(r, Sig::Lpad, &[Bytes, Int, Bytes], Bytes, lpad);
    add(r, Sig::Rpad, &[Bytes, Int, Bytes], Bytes, rpad);
    add(r, Sig::LpadUtf8, &[Bytes, Int, Bytes], Bytes, lpad_utf8);
    add(r, Sig::RpadUtf8, &[Bytes, Int, Bytes], Bytes, rpad_utf8);
    add(r, Sig::Repeat, &[Bytes, Int], Bytes, repeat);
    add(r, Sig::Space, &[Int], Bytes, space);
}

fn trim_start_spaces(s: &[u8]) -> &[u8] {
    let k = s.iter().take_while(|&&b| b == b' ').count();
    s.get(k..).unwrap_or_default()
}

fn trim_end_spaces(s: &[u8]) -> &[u8] {
    let k = s.iter().rev().take_while(|&&b| b == b' ').count();
    s.get(..s.len() - k).unwrap_or_default()
}

fn ltrim(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(map_slice(c.n, c.typed(0)?, trim_start_spaces))
}

fn rtrim(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(map_slice(c.n, c.typed(0)?, trim_end_spaces))
}

fn trim1(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(map_slice(c.n, c.typed(0)?, |s| trim_end_spaces(trim_start_spaces(s))))
}

/// `s` without every leading repetition of `rem` (`rem` empty: `s`).
pub(super) fn trim_leading<'a>(mut s: &'a [u8], rem: &[u8]) -> &'a [u8] {
    if rem.is_empty() {
        return s;
    }
    while let Some(rest) = s.strip_prefix(rem) {
        s = rest;
    }
    s
}

/// `s` without every trailing repetition of `rem` (`rem` empty: `s`).
pub(super) fn trim_trailing<'a>(mut s: &'a [u8], rem: &[u8]) -> &'a [u8] {
    if rem.is_empty() {
        return s;
    }
    while let Some(rest) = s.strip_suffix(rem) {
        s = rest;
    }
    s
}

fn trim2(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let (a, rem) = (c.typed::<BytesT>(0)?, c.typed::<BytesT>(1)?);
    let mut out = VecCol::new(crate::types::EvalType::Bytes, c.n);
    for i in 0..c.n {
        let v = match (a.get(i), rem.get(i)) {
            (Some(s), Some(r)) => Some(trim_trailing(trim_leading(s, r), r)),
            _ => None,
        };
        <BytesT as crate::column::Elem>::push(&mut out, v);
    }
    Ok(out)
}

/// `TRIM([BOTH | LEADING | TRAILING] rem FROM s)`: TiDB's direction codes 0 (default, both),
/// 1 (both), 2 (leading), 3 (trailing).
fn trim3(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let (a, rem, dir) = (c.typed::<BytesT>(0)?, c.typed::<BytesT>(1)?, c.typed::<IntT>(2)?);
    let mut out = VecCol::new(crate::types::EvalType::Bytes, c.n);
    for i in 0..c.n {
        let v = match (a.get(i), rem.get(i), dir.get(i)) {
            (Some(s), Some(r), Some(d)) => Some(match d {
                0 | 1 => trim_trailing(trim_leading(s, r), r),
                2 => trim_leading(s, r),
                3 => trim_trailing(s, r),
                _ => return Err(Error::invalid(format!("TRIM direction {d}"))),
            }),
            _ => None,
        };
        <BytesT as crate::column::Elem>::push(&mut out, v);
    }
    Ok(out)
}

/// `LPAD`/`RPAD`: `len` characters (bytes when `!utf8`) of `s`, or `s` padded with
/// repetitions of `pad` up to `len` characters. NULL for a negative `len`, for an empty `pad`
/// when padding is needed, and (with a warning) past `max_allowed_packet`.
fn pad(c: &Call<'_, '_>, ctx: &mut EvalContext, left: bool, utf8: bool) -> Result<VecCol> {
    let (a, len, p) = (c.typed::<BytesT>(0)?, c.typed::<IntT>(1)?, c.typed::<BytesT>(2)?);
    let unsigned = c.arg_ft(1).is_unsigned();
    let func = if left { "lpad" } else { "rpad" };
    build_bytes(c.n, |i, buf| {
        let (Some(s), Some(l), Some(p)) = (a.get(i), len.get(i), p.get(i)) else {
            return Ok(false);
        };
        let l = int_arg(l, unsigned);
        if l < 0 {
            return Ok(false);
        }
        let target = l as u64;
        let have = if utf8 { char_count(s) } else { s.len() } as u64;
        if target <= have {
            let end = if utf8 { char_offset(s, target as usize) } else { target as usize };
            buf.extend_from_slice(s.get(..end).unwrap_or(s));
            return Ok(true);
        }
        let per_char = if utf8 { MAX_BYTES_OF_CHAR } else { 1 };
        if !fits_packet(ctx, func, target.saturating_mul(per_char)) || p.is_empty() {
            return Ok(false);
        }
        // `need` < `target` <= max_allowed_packet / per_char: a bounded count.
        let need = (target - have) as usize;
        if !left {
            buf.extend_from_slice(s);
        }
        if utf8 {
            let pad_chars = char_count(p);
            let (whole, part) = (need / pad_chars, need % pad_chars);
            for _ in 0..whole {
                buf.extend_from_slice(p);
            }
            buf.extend_from_slice(p.get(..char_offset(p, part)).unwrap_or_default());
        } else {
            let (whole, part) = (need / p.len(), need % p.len());
            for _ in 0..whole {
                buf.extend_from_slice(p);
            }
            buf.extend_from_slice(p.get(..part).unwrap_or_default());
        }
        if left {
            buf.extend_from_slice(s);
        }
        Ok(true)
    })
}

fn lpad(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    pad(c, ctx, true, false)
}

fn rpad(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    pad(c, ctx, false, false)
}

fn lpad_utf8(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    pad(c, ctx, true, true)
}

fn rpad_utf8(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    pad(c, ctx, false, true)
}

/// `REPEAT(s, n)`: empty for `n < 1` or an empty `s`; NULL with a warning past
/// `max_allowed_packet`.
fn repeat(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let (a, count) = (c.typed::<BytesT>(0)?, c.typed::<IntT>(1)?);
    let unsigned = c.arg_ft(1).is_unsigned();
    build_bytes(c.n, |i, buf| {
        let (Some(s), Some(k)) = (a.get(i), count.get(i)) else { return Ok(false) };
        let k = int_arg(k, unsigned);
        if k < 1 || s.is_empty() {
            return Ok(true);
        }
        if !fits_packet(ctx, "repeat", (s.len() as u64).saturating_mul(k as u64)) {
            return Ok(false);
        }
        for _ in 0..k {
            buf.extend_from_slice(s);
        }
        Ok(true)
    })
}

/// `SPACE(n)`: empty for `n < 1`; NULL with a warning past `max_allowed_packet`.
fn space(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let count = c.typed::<IntT>(0)?;
    let unsigned = c.arg_ft(0).is_unsigned();
    build_bytes(c.n, |i, buf| {
        let Some(k) = count.get(i) else { return Ok(false) };
        let k = int_arg(k, unsigned);
        if k < 1 {
            return Ok(true);
        }
        if !fits_packet(ctx, "space", k as u64) {
            return Ok(false);
        }
        buf.resize(k as usize, b' ');
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_repeat_the_remainder() {
        assert_eq!(trim_leading(b"xyxyaxy", b"xy"), b"axy");
        assert_eq!(trim_trailing(b"xyxyaxyxy", b"xy"), b"xyxya");
        assert_eq!(trim_leading(b"aaa", b""), b"aaa");
        assert_eq!(trim_end_spaces(b"  a  "), b"  a");
        assert_eq!(trim_start_spaces(b"   "), b"");
    }
}
