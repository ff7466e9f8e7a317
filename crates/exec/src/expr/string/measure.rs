//! `LENGTH`, `BIT_LENGTH`, `CHAR_LENGTH` (bytes and UTF-8), `ASCII` and `ORD`.

use super::{Sig, add, char_count, char_len, is_binary_collation, map_int};
use crate::column::VecCol;
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::registry::{Call, Registry};
use crate::types::EvalType::{Bytes, Int};

pub(super) fn register(r: &mut Registry) {
    add(r, Sig::Length, &[Bytes], Int, length);
    add(r, Sig::BitLength, &[Bytes], Int, bit_length);
    // `CharLength` is TiDB's choice for binary strings: one character per byte.
    add(r, Sig::CharLength, &[Bytes], Int, length);
    add(r, Sig::CharLengthUtf8, &[Bytes], Int, char_length_utf8);
    add(r, Sig::Ascii, &[Bytes], Int, ascii);
    add(r, Sig::Ord, &[Bytes], Int, ord);
}

fn length(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(map_int(c.n, c.typed(0)?, |s| s.len() as i64))
}

fn bit_length(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(map_int(c.n, c.typed(0)?, |s| (s.len() as i64).saturating_mul(8)))
}

fn char_length_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(map_int(c.n, c.typed(0)?, |s| char_count(s) as i64))
}

/// The first byte (0 for the empty string).
fn ascii(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(map_int(c.n, c.typed(0)?, |s| s.first().map_or(0, |&b| i64::from(b))))
}

/// The first character's bytes as a big-endian number (its first byte under `binary`).
fn ord(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let binary = is_binary_collation(c.ft.collate);
    Ok(map_int(c.n, c.typed(0)?, |s| {
        let Some(&b) = s.first() else { return 0 };
        let l = if binary { 1 } else { char_len(b).min(s.len()) };
        s.iter().take(l).fold(0i64, |acc, &x| (acc << 8) | i64::from(x))
    }))
}
