//! `HEX` (of an integer or a string), `UNHEX`, `BIN`, `OCT` (of an integer or a string),
//! `TO_BASE64`, `FROM_BASE64`, `QUOTE`, and TiDB's internal `TO_BINARY` / `FROM_BINARY`
//! (a string to and from the bytes of its character set).
//!
//! Base64 is MySQL's own dialect (a newline after every 76 output characters, white space
//! ignored when decoding), which no crate reproduces exactly, so it is written here.

use std::io::Write as _;

use super::{Sig, add, add_meta, build_bytes, fits_packet, map_slice};
use crate::column::{BytesT, IntT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Feature, Result};
use crate::expr::build::{Meta, Node};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::EvalType::{Bytes, Int};
use crate::types::{FieldType, collation_name};

pub(super) fn register(r: &mut Registry) {
    add(r, Sig::HexIntArg, &[Int], Bytes, hex_int);
    add(r, Sig::HexStrArg, &[Bytes], Bytes, hex_str);
    add(r, Sig::UnHex, &[Bytes], Bytes, unhex);
    add(r, Sig::Bin, &[Int], Bytes, bin);
    add(r, Sig::OctInt, &[Int], Bytes, oct_int);
    add(r, Sig::OctString, &[Bytes], Bytes, oct_string);
    add(r, Sig::ToBase64, &[Bytes], Bytes, to_base64);
    add(r, Sig::FromBase64, &[Bytes], Bytes, from_base64);
    add(r, Sig::Quote, &[Bytes], Bytes, quote);
    add_meta(r, Sig::ToBinary, Args::fixed(&[Bytes]), Bytes, to_binary, to_binary_meta);
    add_meta(r, Sig::FromBinary, Args::fixed(&[Bytes]), Bytes, from_binary, from_binary_meta);
}

/// An integer written by `f` (its 64-bit pattern: negative numbers as two's complement).
fn int_text(c: &Call<'_, '_>, f: fn(u64, &mut Vec<u8>)) -> Result<VecCol> {
    let a = c.typed::<IntT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(v) = a.get(i) else { return Ok(false) };
        f(v as u64, buf);
        Ok(true)
    })
}

fn hex_int(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    int_text(c, |v, b| {
        let _ = write!(b, "{v:X}");
    })
}

fn bin(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    int_text(c, |v, b| {
        let _ = write!(b, "{v:b}");
    })
}

fn oct_int(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    int_text(c, |v, b| {
        let _ = write!(b, "{v:o}");
    })
}

const HEX_DIGITS: &[u8; 16] = b"0123456789ABCDEF";

fn hex_str(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else { return Ok(false) };
        for &b in s {
            buf.push(HEX_DIGITS[usize::from(b >> 4)]);
            buf.push(HEX_DIGITS[usize::from(b & 0xF)]);
        }
        Ok(true)
    })
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `UNHEX(s)`: the bytes of hex digits (an odd count has a leading 0 implied); NULL for a
/// non-hex character.
pub(super) fn unhex_into(s: &[u8], out: &mut Vec<u8>) -> bool {
    let (head, rest) = if s.len() % 2 == 1 { s.split_at(1) } else { (&[][..], s) };
    if let Some(&h) = head.first() {
        let Some(v) = hex_val(h) else { return false };
        out.push(v);
    }
    for pair in rest.chunks_exact(2) {
        match (hex_val(pair[0]), hex_val(pair[1])) {
            (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
            _ => return false,
        }
    }
    true
}

fn unhex(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| Ok(a.get(i).is_some_and(|s| unhex_into(s, buf))))
}

/// `OCT(s)` of a string: its leading decimal integer (after white space and a sign; 0 when
/// there is none) in octal, as `CONV(s, 10, 8)`. Past 64 bits the value saturates (whatever
/// its sign, as TiDB and MySQL); a negative value is its two's complement.
pub(super) fn oct_of_text(s: &[u8]) -> u64 {
    let mut it = s.iter().copied().skip_while(u8::is_ascii_whitespace).peekable();
    let negative = match it.peek() {
        Some(b'-') => {
            it.next();
            true
        }
        Some(b'+') => {
            it.next();
            false
        }
        _ => false,
    };
    let mut v: u64 = 0;
    let mut overflow = false;
    for b in it.take_while(u8::is_ascii_digit) {
        match v.checked_mul(10).and_then(|x| x.checked_add(u64::from(b - b'0'))) {
            Some(x) => v = x,
            None => overflow = true,
        }
    }
    match (negative, overflow) {
        (_, true) => u64::MAX,
        (false, false) => v,
        (true, false) => v.wrapping_neg(),
    }
}

/// `OCT(s)`; NULL for the empty string (MySQL's `CONV` of no digits at all).
fn oct_string(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i).filter(|s| !s.is_empty()) else { return Ok(false) };
        let _ = write!(buf, "{:o}", oct_of_text(s));
        Ok(true)
    })
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The length of MySQL's base64 of `n` bytes: 4 characters per 3 bytes, and a newline
/// between lines of 76.
fn base64_len(n: u64) -> u64 {
    let chars = n.div_ceil(3) * 4;
    chars + chars.saturating_sub(1) / 76
}

/// MySQL's base64 of `s` appended to `out`.
pub(super) fn base64_encode(s: &[u8], out: &mut Vec<u8>) {
    for (k, g) in s.chunks(3).enumerate() {
        if k > 0 && k % 19 == 0 {
            out.push(b'\n');
        }
        let b = [g[0], g.get(1).copied().unwrap_or(0), g.get(2).copied().unwrap_or(0)];
        let v = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        out.push(B64[(v >> 18) as usize & 63]);
        out.push(B64[(v >> 12) as usize & 63]);
        out.push(if g.len() > 1 { B64[(v >> 6) as usize & 63] } else { b'=' });
        out.push(if g.len() > 2 { B64[v as usize & 63] } else { b'=' });
    }
}

fn b64_val(b: u8) -> Option<u32> {
    Some(u32::from(match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    }))
}

/// Decodes MySQL's base64 into `out`: white space anywhere is skipped; the characters come
/// in groups of four, the last one optionally ending in one or two `=`. The offset of the
/// first byte that breaks this when `s` is not such a text.
pub(super) fn base64_decode(s: &[u8], out: &mut Vec<u8>) -> Result<(), usize> {
    let mut group = [0u32; 4];
    let mut k = 0;
    let mut pad = 0;
    for (at, &b) in s.iter().enumerate() {
        if b.is_ascii_whitespace() || b == 0x0B {
            continue;
        }
        if b == b'=' {
            if k < 2 {
                return Err(at);
            }
            pad += 1;
            k += 1;
        } else if pad > 0 {
            return Err(at);
        } else {
            let Some(v) = b64_val(b) else { return Err(at) };
            group[k] = v;
            k += 1;
        }
        if k == 4 {
            let v = group[0] << 18 | group[1] << 12 | group[2] << 6 | group[3];
            out.push((v >> 16) as u8);
            if pad < 2 {
                out.push((v >> 8) as u8);
            }
            if pad < 1 {
                out.push(v as u8);
            }
            group = [0; 4];
            k = 0;
            if pad > 0 {
                // Only white space may follow the padding.
                pad = 3;
            }
        } else if pad == 3 {
            return Err(at);
        }
    }
    if k == 0 { Ok(()) } else { Err(s.len()) }
}

fn to_base64(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else { return Ok(false) };
        if !fits_packet(ctx, "to_base64", base64_len(s.len() as u64)) {
            return Ok(false);
        }
        base64_encode(s, buf);
        Ok(true)
    })
}

/// `FROM_BASE64(s)`: NULL with a warning when `s` is not base64, as MySQL.
fn from_base64(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else { return Ok(false) };
        match base64_decode(s, buf) {
            Ok(()) => Ok(true),
            Err(at) => {
                ctx.warn(&Error::BadBase64 { at });
                Ok(false)
            }
        }
    })
}

/// `QUOTE(s)`: `s` in single quotes with `\`, `'`, NUL and Ctrl-Z escaped; the word `NULL`
/// (unquoted, not NULL) for NULL.
fn quote(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else {
            buf.extend_from_slice(b"NULL");
            return Ok(true);
        };
        let escapes = s.iter().filter(|b| matches!(b, b'\\' | b'\'' | 0 | 0x1A)).count();
        if !fits_packet(ctx, "quote", (s.len() + escapes + 2) as u64) {
            return Ok(false);
        }
        buf.push(b'\'');
        for &b in s {
            match b {
                b'\\' | b'\'' => buf.extend_from_slice(&[b'\\', b]),
                0 => buf.extend_from_slice(b"\\0"),
                0x1A => buf.extend_from_slice(b"\\Z"),
                b => buf.push(b),
            }
        }
        buf.push(b'\'');
        Ok(true)
    })
}

/// The character sets `TO_BINARY` / `FROM_BINARY` convert between bytes and strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Charset {
    /// Bytes as they are (`binary`, `latin1`, `ascii`: every byte is a character or kept).
    Bytes,
    /// UTF-8 (`utf8`, `utf8mb4`, and every other id of the old framework).
    Utf8,
}

/// The character set of a collation id; GBK and GB18030 are refused (their encoders are not
/// implemented).
fn charset_of(collate: i32) -> Result<Charset> {
    match collate.abs() {
        63 | 8 | 47 | 48 | 11 | 65 => Ok(Charset::Bytes),
        28 | 87 | 248 | 249 | 250 => Err(Error::unsupported(
            Feature::Collation,
            format!(
                "{} (collation id {collate}): no GBK/GB18030 conversion",
                collation_name(collate)
            ),
        )),
        _ => Ok(Charset::Utf8),
    }
}

/// `TO_BINARY(s)` converts from the argument's character set: checked when built.
fn to_binary_meta(_: &FieldType, children: &[Node]) -> Result<Meta> {
    if let Some(ch) = children.first() {
        charset_of(ch.ft.collate)?;
    }
    Ok(Meta::None)
}

/// `FROM_BINARY(s)` converts to the result's character set: checked when built.
fn from_binary_meta(ft: &FieldType, _: &[Node]) -> Result<Meta> {
    charset_of(ft.collate)?;
    Ok(Meta::None)
}

/// The bytes of a string in its (UTF-8 or single-byte) character set: the string.
fn to_binary(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(map_slice(c.n, c.typed(0)?, |s| s))
}

/// Bytes read as a string of the result's character set: as they are, except that bytes
/// which are not UTF-8 for a UTF-8 result are NULL after a truncation (a warning in a
/// SELECT, else the error).
fn from_binary(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let a = c.typed::<BytesT>(0)?;
    let cs = charset_of(c.ft.collate)?;
    build_bytes(c.n, |i, buf| {
        let Some(s) = a.get(i) else { return Ok(false) };
        if cs == Charset::Utf8 && std::str::from_utf8(s).is_err() {
            let value = s.iter().take(32).map(|b| format!("{b:02X}")).collect();
            ctx.truncated(Error::InvalidCharacters { charset: "utf8mb4", value })?;
            return Ok(false);
        }
        buf.extend_from_slice(s);
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        base64_encode(s, &mut v);
        v
    }

    fn unb64(s: &[u8]) -> Option<Vec<u8>> {
        let mut v = Vec::new();
        base64_decode(s, &mut v).ok().map(|()| v)
    }

    #[test]
    fn base64_round_trips_with_mysql_line_breaks() {
        assert_eq!(b64(b"abc"), b"YWJj");
        assert_eq!(b64(b"ab"), b"YWI=");
        assert_eq!(b64(b"a"), b"YQ==");
        let long = vec![b'x'; 58];
        let enc = b64(&long);
        assert_eq!(enc.len() as u64, base64_len(58));
        assert_eq!(enc.iter().position(|&b| b == b'\n'), Some(76));
        assert_eq!(unb64(&enc).unwrap(), long);
        assert_eq!(unb64(b"YW Jj").unwrap(), b"abc");
        assert_eq!(unb64(b"YQ==").unwrap(), b"a");
        assert!(unb64(b"YQ=").is_none());
        assert!(unb64(b"Y===").is_none());
        assert!(unb64(b"YQ==YQ==").is_none());
        assert!(unb64(b"Y!==").is_none());
        assert_eq!(base64_len(0), 0);
    }

    #[test]
    fn oct_of_text_reads_a_leading_integer() {
        assert_eq!(oct_of_text(b"  12abc"), 12);
        assert_eq!(oct_of_text(b"abc"), 0);
        assert_eq!(oct_of_text(b"-1"), u64::MAX);
        assert_eq!(oct_of_text(b"99999999999999999999"), u64::MAX);
        assert_eq!(oct_of_text(b"-99999999999999999999"), u64::MAX);
    }

    #[test]
    fn unhex_pads_odd_input() {
        let mut v = Vec::new();
        assert!(unhex_into(b"F41", &mut v));
        assert_eq!(v, [0x0F, 0x41]);
        assert!(!unhex_into(b"GG", &mut Vec::new()));
    }
}
