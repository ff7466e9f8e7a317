//! `LOCATE` (2 and 3 arguments) and `INSTR`, in bytes and in UTF-8 characters under the
//! call's collation; `FIND_IN_SET`, `FIELD` (int, real, string), `STRCMP`, and `GREATEST` /
//! `LEAST` over strings, compared as strings or as dates and times.
//!
//! A search under a collation whose equality is byte equality (`binary`, `utf8mb4_bin`)
//! compares bytes; under any other (the `_ci` collations) it compares each window of as
//! many characters as the needle with [`Collation::compare`], as TiKV does.

use std::cmp::Ordering;

use rcop_datum::{Time, TimeType};

use super::{
    Sig, add, add_meta, build_bytes, bytes_args, char_at, char_count, char_offset, collation,
    collation_meta, find_bytes, int_arg,
};
use crate::column::{BytesT, Elem, IntT, RealT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::Collation;
use crate::types::EvalType::{Bytes, Int, Real};

pub(super) fn register(r: &mut Registry) {
    add(r, Sig::Locate2Args, &[Bytes, Bytes], Int, locate2);
    add(r, Sig::Locate3Args, &[Bytes, Bytes, Int], Int, locate3);
    add(r, Sig::Instr, &[Bytes, Bytes], Int, instr);
    let m = collation_meta;
    add_meta(r, Sig::Locate2ArgsUtf8, Args::fixed(&[Bytes, Bytes]), Int, locate2_utf8, m);
    add_meta(r, Sig::Locate3ArgsUtf8, Args::fixed(&[Bytes, Bytes, Int]), Int, locate3_utf8, m);
    add_meta(r, Sig::InstrUtf8, Args::fixed(&[Bytes, Bytes]), Int, instr_utf8, m);
    add_meta(r, Sig::FindInSet, Args::fixed(&[Bytes, Bytes]), Int, find_in_set, m);
    add_meta(r, Sig::Strcmp, Args::fixed(&[Bytes, Bytes]), Int, strcmp, m);
    r.add(Sig::FieldInt as i32, Args::Variadic(Int), Int, field_int);
    r.add(Sig::FieldReal as i32, Args::Variadic(Real), Int, field_real);
    add_meta(r, Sig::FieldString, Args::Variadic(Bytes), Int, field_string, m);
    add_meta(r, Sig::GreatestString, Args::Variadic(Bytes), Bytes, greatest_string, m);
    add_meta(r, Sig::LeastString, Args::Variadic(Bytes), Bytes, least_string, m);
    r.add(Sig::GreatestCmpStringAsTime as i32, Args::Variadic(Bytes), Bytes, greatest_as_time);
    r.add(Sig::LeastCmpStringAsTime as i32, Args::Variadic(Bytes), Bytes, least_as_time);
    r.add(Sig::GreatestCmpStringAsDate as i32, Args::Variadic(Bytes), Bytes, greatest_as_date);
    r.add(Sig::LeastCmpStringAsDate as i32, Args::Variadic(Bytes), Bytes, least_as_date);
}

/// The 0-based character index of the first match of `needle` in `hay` at or after
/// character `from`, under `coll`.
pub(super) fn find_chars(coll: Collation, hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let start = char_offset(hay, from);
    if super::is_bytewise(coll) {
        let at = find_bytes(hay, needle, start)?;
        return Some(from + char_count(hay.get(start..at).unwrap_or_default()));
    }
    let width = char_count(needle);
    let (mut at, mut k) = (start, from);
    loop {
        let end = at + char_offset(hay.get(at..).unwrap_or_default(), width);
        let window = hay.get(at..end).unwrap_or_default();
        if char_count(window) == width && coll.compare(window, needle) == Ordering::Equal {
            return Some(k);
        }
        if at >= hay.len() {
            return None;
        }
        at += char_at(hay, at);
        k += 1;
    }
}

fn search2(
    c: &Call<'_, '_>,
    needle_first: bool,
    f: impl Fn(&[u8], &[u8]) -> i64,
) -> Result<VecCol> {
    let (x, y) = (c.typed::<BytesT>(0)?, c.typed::<BytesT>(1)?);
    let (needle, hay) = if needle_first { (x, y) } else { (y, x) };
    let mut out = VecCol::new(Int, c.n);
    for i in 0..c.n {
        let v = match (needle.get(i), hay.get(i)) {
            (Some(n), Some(h)) => Some(f(n, h)),
            _ => None,
        };
        IntT::push(&mut out, v);
    }
    Ok(out)
}

fn search3(c: &Call<'_, '_>, f: impl Fn(&[u8], &[u8], i64) -> i64) -> Result<VecCol> {
    let (needle, hay, pos) = (c.typed::<BytesT>(0)?, c.typed::<BytesT>(1)?, c.typed::<IntT>(2)?);
    let unsigned = c.arg_ft(2).is_unsigned();
    let mut out = VecCol::new(Int, c.n);
    for i in 0..c.n {
        let v = match (needle.get(i), hay.get(i), pos.get(i)) {
            (Some(n), Some(h), Some(p)) => Some(f(n, h, int_arg(p, unsigned))),
            _ => None,
        };
        IntT::push(&mut out, v);
    }
    Ok(out)
}

fn locate_bytes(needle: &[u8], hay: &[u8], pos: i64) -> i64 {
    if pos < 1 || pos as u64 > hay.len() as u64 + 1 {
        return 0;
    }
    find_bytes(hay, needle, (pos - 1) as usize).map_or(0, |k| k as i64 + 1)
}

/// `LOCATE(needle, hay, pos)` in characters: 1-based, 0 when absent or `pos` is out of range.
fn locate_chars(coll: Collation, needle: &[u8], hay: &[u8], pos: i64) -> i64 {
    if pos < 1 || (pos > 1 && pos as u64 > char_count(hay) as u64 + 1) {
        return 0;
    }
    find_chars(coll, hay, needle, (pos - 1) as usize).map_or(0, |k| k as i64 + 1)
}

fn locate2(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    search2(c, true, |n, h| locate_bytes(n, h, 1))
}

fn locate3(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    search3(c, locate_bytes)
}

fn instr(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    search2(c, false, |n, h| locate_bytes(n, h, 1))
}

fn locate2_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let coll = collation(c);
    search2(c, true, |n, h| locate_chars(coll, n, h, 1))
}

fn locate3_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let coll = collation(c);
    search3(c, |n, h, p| locate_chars(coll, n, h, p))
}

fn instr_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let coll = collation(c);
    search2(c, false, |n, h| locate_chars(coll, n, h, 1))
}

/// `FIND_IN_SET(s, list)`: the 1-based position of `s` among the comma-separated items of
/// `list`; 0 when absent, when `list` is empty or when `s` holds a comma.
fn find_in_set(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let coll = collation(c);
    search2(c, true, |s, list| {
        if list.is_empty() || s.contains(&b',') {
            return 0;
        }
        list.split(|&b| b == b',')
            .position(|item| coll.compare(item, s) == Ordering::Equal)
            .map_or(0, |k| k as i64 + 1)
    })
}

fn strcmp(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let coll = collation(c);
    search2(c, true, |a, b| match coll.compare(a, b) {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    })
}

/// `FIELD(x, a, b, …)`: the 1-based position of the first argument equal to `x`; 0 when
/// none is or `x` is NULL (never NULL).
fn field_with<E: Elem>(
    c: &Call<'_, '_>,
    eq: impl Fn(E::R<'_>, E::R<'_>) -> bool,
) -> Result<VecCol> {
    let args = (0..c.args.len()).map(|i| c.typed::<E>(i)).collect::<Result<Vec<_>>>()?;
    let Some((x, rest)) = args.split_first() else {
        return Err(Error::invalid("FIELD without arguments"));
    };
    let mut out = VecCol::new(Int, c.n);
    for i in 0..c.n {
        let k = match x.get(i) {
            None => 0,
            Some(v) => rest
                .iter()
                .position(|a| a.get(i).is_some_and(|w| eq(v, w)))
                .map_or(0, |k| k as i64 + 1),
        };
        IntT::push(&mut out, Some(k));
    }
    Ok(out)
}

fn field_int(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    field_with::<IntT>(c, |a, b| a == b)
}

fn field_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    field_with::<RealT>(c, |a, b| a == b)
}

fn field_string(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let coll = collation(c);
    field_with::<BytesT>(c, |a, b| coll.compare(a, b) == Ordering::Equal)
}

/// The greatest (`want` = Greater) or least argument under `cmp`, NULL if any is NULL; the
/// first of equal ones.
fn extreme(
    c: &Call<'_, '_>,
    ctx: &mut EvalContext,
    want: Ordering,
    mut norm: impl FnMut(&[u8], &mut Vec<u8>, &mut EvalContext) -> Result<()>,
    cmp: impl Fn(&[u8], &[u8]) -> Ordering,
) -> Result<VecCol> {
    let args = bytes_args(c)?;
    let mut scratch = Vec::new();
    build_bytes(c.n, |i, best| {
        let mut first = true;
        for a in &args {
            let Some(v) = a.get(i) else { return Ok(false) };
            scratch.clear();
            norm(v, &mut scratch, ctx)?;
            if first || cmp(&scratch, best) == want {
                std::mem::swap(best, &mut scratch);
                first = false;
            }
        }
        Ok(!first)
    })
}

fn copy(v: &[u8], out: &mut Vec<u8>, _: &mut EvalContext) -> Result<()> {
    out.extend_from_slice(v);
    Ok(())
}

fn greatest_string(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let coll = collation(c);
    extreme(c, ctx, Ordering::Greater, copy, |a, b| coll.compare(a, b))
}

fn least_string(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let coll = collation(c);
    extreme(c, ctx, Ordering::Less, copy, |a, b| coll.compare(a, b))
}

/// A string read as a DATETIME (or DATE) and written back in its canonical form, which
/// orders as the time does; one that is not a time stays as it is, after a truncation
/// warning (TiDB's `GreatestCmpStringAsTime`).
fn as_time(v: &[u8], out: &mut Vec<u8>, ctx: &mut EvalContext, tp: TimeType) -> Result<()> {
    let s = String::from_utf8_lossy(v);
    let s = s.trim();
    let fsp = if tp == TimeType::Date { 0 } else { frac_digits(s) };
    match Time::parse(s, tp, fsp) {
        Ok(t) => out.extend_from_slice(t.to_string().as_bytes()),
        Err(_) => {
            let what = if tp == TimeType::Date { "date" } else { "datetime" };
            ctx.truncated(Error::Truncated { what, value: s.chars().take(64).collect() })?;
            out.extend_from_slice(v);
        }
    }
    Ok(())
}

/// The number of fraction digits a time string has (at most 6), as TiDB's `GetFsp`.
fn frac_digits(s: &str) -> u8 {
    match s.rfind('.') {
        Some(p) => s
            .get(p + 1..)
            .map_or(0, |f| f.bytes().take_while(u8::is_ascii_digit).count().min(6) as u8),
        None => 0,
    }
}

fn greatest_as_time(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let norm =
        |v: &[u8], o: &mut Vec<u8>, ctx: &mut EvalContext| as_time(v, o, ctx, TimeType::DateTime);
    extreme(c, ctx, Ordering::Greater, norm, <[u8]>::cmp)
}

fn least_as_time(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let norm =
        |v: &[u8], o: &mut Vec<u8>, ctx: &mut EvalContext| as_time(v, o, ctx, TimeType::DateTime);
    extreme(c, ctx, Ordering::Less, norm, <[u8]>::cmp)
}

fn greatest_as_date(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let norm =
        |v: &[u8], o: &mut Vec<u8>, ctx: &mut EvalContext| as_time(v, o, ctx, TimeType::Date);
    extreme(c, ctx, Ordering::Greater, norm, <[u8]>::cmp)
}

fn least_as_date(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let norm =
        |v: &[u8], o: &mut Vec<u8>, ctx: &mut EvalContext| as_time(v, o, ctx, TimeType::Date);
    extreme(c, ctx, Ordering::Less, norm, <[u8]>::cmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_in_characters() {
        let c = Collation::PadSpaceBin;
        assert_eq!(locate_chars(c, "b".as_bytes(), "ñbñb".as_bytes(), 1), 2);
        assert_eq!(locate_chars(c, "b".as_bytes(), "ñbñb".as_bytes(), 3), 4);
        assert_eq!(locate_chars(c, b"", "ñb".as_bytes(), 3), 3);
        assert_eq!(locate_chars(c, b"", "ñb".as_bytes(), 4), 0);
        assert_eq!(locate_chars(c, b"x", "ñb".as_bytes(), 0), 0);
        assert_eq!(locate_bytes(b"b", "ñb".as_bytes(), 1), 3);
        assert_eq!(locate_bytes(b"", b"ab", 3), 3);
        assert_eq!(locate_bytes(b"", b"ab", 4), 0);
    }

    #[test]
    fn as_time_normalises_or_keeps() {
        let mut ctx = EvalContext::new(crate::ctx::EvalConfig {
            flags: crate::ctx::FLAG_TRUNCATE_AS_WARNING,
            ..Default::default()
        });
        let mut o = Vec::new();
        as_time(b"2020-1-2 3:4:5.5", &mut o, &mut ctx, TimeType::DateTime).unwrap();
        assert_eq!(o, b"2020-01-02 03:04:05.5");
        o.clear();
        as_time(b"nope", &mut o, &mut ctx, TimeType::Date).unwrap();
        assert_eq!(o, b"nope");
        assert_eq!(ctx.take_warnings().1, 1);
    }
}
