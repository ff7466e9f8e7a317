//! String functions, one file per family: [`case`] (`UPPER`, `LOWER`, `REVERSE`),
//! [`measure`] (`LENGTH`, `CHAR_LENGTH`, `ASCII`, `ORD`, …), [`trim_pad`] (`TRIM`, `LPAD`,
//! `REPEAT`, `SPACE`, …), [`substr`] (`SUBSTRING`, `LEFT`, `INSERT`, `REPLACE`, …),
//! [`search`] (`LOCATE`, `INSTR`, `FIELD`, `FIND_IN_SET`, `STRCMP`, `GREATEST`/`LEAST`),
//! [`encode`] (`HEX`, `BIN`, `OCT`, `TO_BASE64`, `QUOTE`, …) and [`concat`] (`CONCAT`,
//! `CONCAT_WS`, `ELT`, `MAKE_SET`); `LIKE` is here.
//!
//! As in TiDB, a function has a byte form (chosen for binary strings) and a `…UTF8` form
//! (chosen for character strings) where the two differ: the `UTF8` forms count characters.
//! Characters are stepped by their UTF-8 lead byte ([`char_len`]), so bytes that are not valid
//! UTF-8 still split somewhere, and no kernel fails or panics on them. Comparisons inside
//! functions (`FIELD`, `FIND_IN_SET`, `LOCATE`, `INSTR`, `STRCMP`, `GREATEST`) use the call's
//! collation ([`Collation::compare`]), as comparisons do. Results longer than
//! `max_allowed_packet` are NULL with a warning, as in MySQL ([`fits_packet`]).

mod case;
mod concat;
mod encode;
mod measure;
mod search;
mod substr;
mod trim_pad;

use crate::column::Scalar;
use crate::column::{Arg, BytesT, ColData, Elem, IntT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::build::{Meta, Node, NodeKind};
use crate::expr::kernel::{validity, zip_all};
use crate::expr::like::LikePattern;
use crate::expr::registry::{Args, Call, Kernel, MetaBuilder, Registry};
use crate::types::{Collation, EvalType, FieldType};

pub use rcop_proto::tipb::ScalarFuncSig as Sig;

/// `LikeSig`.
pub const LIKE: i32 = 4310;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes, Int};
    r.add(LIKE, Args::fixed(&[Bytes, Bytes, Int]), Int, like_kernel).with_meta(like_meta);
    case::register(r);
    measure::register(r);
    trim_pad::register(r);
    substr::register(r);
    search::register(r);
    encode::register(r);
    concat::register(r);
}

/// Registers `sig` with fixed arguments.
fn add(r: &mut Registry, sig: Sig, args: &[EvalType], ret: EvalType, k: Kernel) {
    r.add(sig as i32, Args::fixed(args), ret, k);
}

/// Registers `sig` with fixed arguments and a metadata builder.
fn add_meta(r: &mut Registry, sig: Sig, args: Args, ret: EvalType, k: Kernel, meta: MetaBuilder) {
    r.add(sig as i32, args, ret, k).with_meta(meta);
}

/// The collation string comparisons inside a function use: the call's own (as TiKV), checked
/// when the call is built.
fn collation_meta(ft: &FieldType, children: &[Node]) -> Result<Meta> {
    super::compare::collation_meta(ft, children)
}

/// The call's collation (from [`collation_meta`]).
fn collation(c: &Call<'_, '_>) -> Collation {
    match c.meta() {
        Meta::Collation(x) => *x,
        _ => Collation::Binary,
    }
}

/// True when equality under `coll` is byte equality for strings of the same number of
/// characters, so a substring search can compare bytes.
fn is_bytewise(coll: Collation) -> bool {
    matches!(coll, Collation::Binary | Collation::PadSpaceBin)
}

/// True when a collation id is `binary` (a string of bytes, not characters).
fn is_binary_collation(id: i32) -> bool {
    id == 63 || id == -63
}

/// The byte length of the UTF-8 character whose first byte is `b` (1 for a byte that cannot
/// start one).
#[inline]
pub(crate) fn char_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// The byte length of the character at `i` of `s`, clamped to the end of `s` (0 at the end).
#[inline]
fn char_at(s: &[u8], i: usize) -> usize {
    match s.get(i) {
        Some(&b) => char_len(b).min(s.len() - i),
        None => 0,
    }
}

/// The number of characters of `s`.
#[inline]
pub(crate) fn char_count(s: &[u8]) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    let (mut i, mut n) = (0, 0);
    while i < s.len() {
        i += char_at(s, i);
        n += 1;
    }
    n
}

/// The byte offset of character `k` of `s` (`s.len()` when `s` has at most `k` characters).
#[inline]
fn char_offset(s: &[u8], k: usize) -> usize {
    if s.is_ascii() {
        return k.min(s.len());
    }
    let mut i = 0;
    for _ in 0..k {
        if i >= s.len() {
            break;
        }
        i += char_at(s, i);
    }
    i
}

/// The first occurrence of `needle` in `hay` at or after byte `from` (`from` itself for an
/// empty needle within `hay`).
#[inline]
fn find_bytes(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let rest = hay.get(from..)?;
    let Some((&first, tail)) = needle.split_first() else { return Some(from) };
    let mut i = 0;
    while let Some(p) = rest.get(i..).and_then(|r| r.iter().position(|&b| b == first)) {
        let at = i + p;
        if rest.get(at + 1..at + needle.len()) == Some(tail) {
            return Some(from + at);
        }
        i = at + 1;
    }
    None
}

/// An integer argument used as a count, length or position: an UNSIGNED value of 2^63 or
/// more (a negative bit pattern) is as large as it gets.
#[inline]
fn int_arg(v: i64, unsigned: bool) -> i64 {
    if unsigned && v < 0 { i64::MAX } else { v }
}

/// Whether a result of `len` bytes fits `max_allowed_packet`; when not, a warning naming
/// `func` is recorded (the caller returns NULL).
fn fits_packet(ctx: &mut EvalContext, func: &'static str, len: u64) -> bool {
    let limit = ctx.cfg.max_allowed_packet;
    if len <= limit {
        return true;
    }
    ctx.warn(&Error::PacketTooLarge { func, limit });
    false
}

/// Every argument of a call as bytes.
fn bytes_args<'c>(c: &Call<'c, '_>) -> Result<Vec<Arg<'c, BytesT>>> {
    (0..c.args.len()).map(|i| c.typed::<BytesT>(i)).collect()
}

/// Evaluates a bytes-valued function row by row: `f` writes row `i`'s value into the scratch
/// buffer and returns true, or returns false for NULL.
fn build_bytes(n: usize, mut f: impl FnMut(usize, &mut Vec<u8>) -> Result<bool>) -> Result<VecCol> {
    let mut out = VecCol::new(EvalType::Bytes, n);
    let mut buf = Vec::new();
    for i in 0..n {
        buf.clear();
        if f(i, &mut buf)? {
            BytesT::push(&mut out, Some(&buf));
        } else {
            out.push_null();
        }
    }
    Ok(out)
}

/// A null-propagating unary bytes → bytes function whose value is a part of its argument.
fn map_slice<'a>(n: usize, a: Arg<'a, BytesT>, mut f: impl FnMut(&'a [u8]) -> &'a [u8]) -> VecCol {
    let mut out = VecCol::new(EvalType::Bytes, n);
    for i in 0..n {
        BytesT::push(&mut out, a.get(i).map(&mut f));
    }
    out
}

/// A null-propagating unary bytes → int function, every slot computed.
fn map_int(n: usize, a: Arg<'_, BytesT>, f: impl Fn(&[u8]) -> i64) -> VecCol {
    let data = zip_all(n, a, Arg::<IntT>::Const(Some(0)), |s, _| f(s));
    VecCol { data: ColData::Int(data), valid: validity(&a, n) }
}

/// A constant pattern and escape compile once; otherwise the collation is kept.
fn like_meta(ft: &FieldType, children: &[Node]) -> Result<Meta> {
    let coll = ft.collation()?;
    let pattern = children.get(1).map(|c| &c.kind);
    let escape = children.get(2).map(|c| &c.kind);
    Ok(match (pattern, escape) {
        (Some(NodeKind::Const(Scalar::Bytes(p))), Some(NodeKind::Const(Scalar::Int(esc)))) => {
            Meta::Like(Box::new(LikePattern::compile(p, *esc, ft.collate)?))
        }
        _ => Meta::LikeDynamic(coll, ft.collate),
    })
}

fn like_kernel(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    like(c.func, c.n, c.typed(0)?, c.typed(1)?, c.typed(2)?, ctx)
}

fn like<'a>(
    f: &crate::expr::build::Func,
    n: usize,
    text: Arg<'a, BytesT>,
    pattern: Arg<'a, BytesT>,
    escape: Arg<'a, IntT>,
    ctx: &mut EvalContext,
) -> Result<VecCol> {
    let mut out = VecCol::new(EvalType::Int, n);
    // Long texts and patterns are work: the request's limits are checked as it goes.
    let mut check = |units| ctx.tick(units);
    match &f.meta {
        Meta::Like(p) => {
            let mut data = Vec::with_capacity(n);
            for i in 0..n {
                data.push(match text.get(i) {
                    Some(t) => i64::from(p.matches_with(t, &mut check)?),
                    None => 0,
                });
            }
            let valid = validity(&text, n);
            return Ok(VecCol { data: ColData::Int(data), valid });
        }
        Meta::LikeDynamic(_, collate) => {
            // A pattern compiles once per run of rows that repeat it (a pattern column often
            // holds one value, or a few).
            let mut last: Option<LikePattern> = None;
            for i in 0..n {
                match (text.get(i), pattern.get(i), escape.get(i)) {
                    (Some(t), Some(p), Some(e)) => {
                        let pat = match last.take() {
                            Some(q) if q.is(p, e) => q,
                            _ => {
                                check(p.len())?;
                                LikePattern::compile(p, e, *collate)?
                            }
                        };
                        IntT::push(&mut out, Some(i64::from(pat.matches_with(t, &mut check)?)));
                        last = Some(pat);
                    }
                    _ => out.push_null(),
                }
            }
        }
        _ => return Err(Error::invalid("LIKE without metadata")),
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_step_by_lead_byte_and_never_overrun() {
        let s = "aé€😀".as_bytes();
        assert_eq!(char_count(s), 4);
        assert_eq!(char_offset(s, 2), 3);
        assert_eq!(char_offset(s, 9), s.len());
        // A truncated lead byte is one character of what is left.
        assert_eq!(char_count(b"a\xF0\x9F"), 2);
        assert_eq!(char_count(b"\xF0\x9F"), 1);
        assert_eq!(char_count(b"\x80\x80"), 2);
    }
}
