//! `UPPER`, `LOWER` and `REVERSE`, in their byte and `UTF8` forms.
//!
//! As in MySQL, `UPPER` and `LOWER` leave binary strings as they are (TiDB picks `Upper` /
//! `Lower` for them), and map a character string one character at a time: a character whose
//! case mapping is several characters (`ß` → `SS`) keeps MySQL's single-character mapping
//! (`ß` stays, `İ` lowers to `i`). Bytes that are not UTF-8 are copied as they are.

use super::{Sig, add, build_bytes, char_at, map_slice};
use crate::column::{BytesT, VecCol};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::registry::{Call, Registry};
use crate::types::EvalType::Bytes;

pub(super) fn register(r: &mut Registry) {
    add(r, Sig::Upper, &[Bytes], Bytes, identity);
    add(r, Sig::Lower, &[Bytes], Bytes, identity);
    add(r, Sig::UpperUtf8, &[Bytes], Bytes, upper_utf8);
    add(r, Sig::LowerUtf8, &[Bytes], Bytes, lower_utf8);
    add(r, Sig::Reverse, &[Bytes], Bytes, reverse);
    add(r, Sig::ReverseUtf8, &[Bytes], Bytes, reverse_utf8);
}

/// `UPPER`/`LOWER` of a binary string: the string.
fn identity(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(map_slice(c.n, c.typed(0)?, |s| s))
}

fn upper_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else { return Ok(false) };
        map_case(s, buf, true);
        Ok(true)
    })
}

fn lower_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else { return Ok(false) };
        map_case(s, buf, false);
        Ok(true)
    })
}

/// Appends `s` upper- or lower-cased to `out`.
pub(super) fn map_case(s: &[u8], out: &mut Vec<u8>, upper: bool) {
    if s.is_ascii() {
        if upper {
            out.extend(s.iter().map(u8::to_ascii_uppercase));
        } else {
            out.extend(s.iter().map(u8::to_ascii_lowercase));
        }
        return;
    }
    // ASCII bytes map directly; each other character is decoded, mapped and re-encoded,
    // and a byte that does not start a valid character is copied.
    let mut tmp = [0u8; 4];
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        if b < 0x80 {
            out.push(if upper { b.to_ascii_uppercase() } else { b.to_ascii_lowercase() });
            i += 1;
            continue;
        }
        let l = char_at(s, i);
        let ch = s
            .get(i..i + l)
            .and_then(|c| std::str::from_utf8(c).ok())
            .and_then(|c| c.chars().next());
        match ch {
            Some(ch) => {
                let m = if upper { upper_char(ch) } else { lower_char(ch) };
                out.extend_from_slice(m.encode_utf8(&mut tmp).as_bytes());
                i += l;
            }
            None => {
                out.push(b);
                i += 1;
            }
        }
    }
}

/// The single-character upper case of `ch` (itself when Unicode maps it to several).
fn upper_char(ch: char) -> char {
    let mut u = ch.to_uppercase();
    match (u.next(), u.next()) {
        (Some(x), None) => x,
        _ => ch,
    }
}

/// The single-character lower case of `ch` (the first of several: `İ` → `i`).
fn lower_char(ch: char) -> char {
    ch.to_lowercase().next().unwrap_or(ch)
}

fn reverse(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else { return Ok(false) };
        buf.extend(s.iter().rev());
        Ok(true)
    })
}

fn reverse_utf8(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else { return Ok(false) };
        // Each character's bytes go, in order, to the mirrored position.
        buf.resize(s.len(), 0);
        let mut at = 0;
        while at < s.len() {
            let l = char_at(s, at);
            let end = s.len() - at;
            if let (Some(dst), Some(src)) = (buf.get_mut(end - l..end), s.get(at..at + l)) {
                dst.copy_from_slice(src);
            }
            at += l;
        }
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(s: &str) -> String {
        let mut v = Vec::new();
        map_case(s.as_bytes(), &mut v, true);
        String::from_utf8(v).unwrap()
    }

    fn low(s: &str) -> String {
        let mut v = Vec::new();
        map_case(s.as_bytes(), &mut v, false);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn case_maps_one_character_at_a_time() {
        assert_eq!(up("abcÉé"), "ABCÉÉ");
        assert_eq!(up("straße"), "STRAßE");
        assert_eq!(low("İI"), "ii");
        assert_eq!(low("ÀÉ"), "àé");
        let mut v = Vec::new();
        map_case(b"a\xFFb", &mut v, true);
        assert_eq!(v, b"A\xFFB");
    }
}
