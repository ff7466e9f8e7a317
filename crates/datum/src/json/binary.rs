//! Binary layout: lengths, validation, reading entries and writing containers.

use super::{JsonRef, JsonType, LITERAL_FALSE, LITERAL_NULL, LITERAL_TRUE, MAX_DEPTH};
use crate::codec::{self, Reader};
use crate::error::{Error, Result};

/// `u32 count` + `u32 size`.
pub(super) const HEADER_LEN: usize = 8;
/// `u32 key offset` + `u16 key length`.
pub(super) const KEY_ENTRY_LEN: usize = 6;
/// Type byte + `u32 offset or inlined literal`.
pub(super) const VALUE_ENTRY_LEN: usize = 5;

/// The first 8 bytes of `b` (zeros past its end; validated bodies always have them).
#[inline]
pub(super) fn le8(b: &[u8]) -> [u8; 8] {
    let mut a = [0u8; 8];
    if let Some(src) = b.get(..8) {
        a.copy_from_slice(src);
    }
    a
}

/// The u32 LE at `off`, as usize.
#[inline]
pub(super) fn u32_at(b: &[u8], off: usize) -> Result<usize> {
    let end = off.checked_add(4).ok_or(Error::Overflow { what: "json offset" })?;
    match b.get(off..end) {
        Some(&[x0, x1, x2, x3]) => Ok(u32::from_le_bytes([x0, x1, x2, x3]) as usize),
        _ => Err(Error::Eof { what: "json u32", need: end, have: b.len() }),
    }
}

/// The u16 LE at `off`, as usize.
#[inline]
fn u16_at(b: &[u8], off: usize) -> Result<usize> {
    match b.get(off..off.saturating_add(2)) {
        Some(&[x0, x1]) => Ok(usize::from(u16::from_le_bytes([x0, x1]))),
        _ => Err(Error::Eof { what: "json u16", need: off.saturating_add(2), have: b.len() }),
    }
}

/// A varint length at `off` and the bytes it counts: `(bytes, total length from off)`.
pub(super) fn var_bytes(b: &[u8], off: usize) -> Result<(&[u8], usize)> {
    let rest = b.get(off..).ok_or(Error::Eof { what: "json length", need: off, have: b.len() })?;
    let mut r = Reader::new(rest);
    let n = codec::decode_var_u64(&mut r)?;
    let n = usize::try_from(n).map_err(|_| Error::BadLength { what: "json string", len: -1 })?;
    let data = r.read_bytes(n, "json string")?;
    Ok((data, r.pos()))
}

/// Length of the body of a value of type `tp` starting at `b[0]`, checked against `b`.
pub(super) fn body_len(tp: JsonType, b: &[u8]) -> Result<usize> {
    let n = match tp {
        JsonType::Object | JsonType::Array => {
            let size = u32_at(b, 4)?;
            if size < HEADER_LEN {
                return Err(Error::BadLength { what: "json container", len: size as i64 });
            }
            size
        }
        JsonType::Literal => 1,
        JsonType::I64
        | JsonType::U64
        | JsonType::Double
        | JsonType::Date
        | JsonType::Datetime
        | JsonType::Timestamp => 8,
        JsonType::Time => 12,
        JsonType::String => var_bytes(b, 0)?.1,
        JsonType::Opaque => 1 + var_bytes(b, 1)?.1,
    };
    if n > b.len() {
        return Err(Error::Eof { what: "json", need: n, have: b.len() });
    }
    Ok(n)
}

/// Checks a body of exactly the right length (as `body_len` gave) all the way down.
pub(super) fn validate(tp: JsonType, body: &[u8], depth: usize) -> Result<()> {
    match tp {
        JsonType::Literal => match body.first() {
            Some(&(LITERAL_NULL | LITERAL_TRUE | LITERAL_FALSE)) => Ok(()),
            _ => Err(Error::Invalid { what: "json", reason: "unknown literal" }),
        },
        JsonType::Object | JsonType::Array => {
            if depth >= MAX_DEPTH {
                return Err(Error::Invalid { what: "json", reason: "nesting too deep" });
            }
            let count = u32_at(body, 0)?;
            let key_entries = if tp == JsonType::Object { KEY_ENTRY_LEN } else { 0 };
            let entries_end = count
                .checked_mul(key_entries + VALUE_ENTRY_LEN)
                .and_then(|n| n.checked_add(HEADER_LEN))
                .filter(|&n| n <= body.len())
                .ok_or(Error::BadLength { what: "json element count", len: count as i64 })?;
            // Values must follow the entries in entry order without overlapping, as every TiDB
            // and TiKV writer lays them out. Shared or overlapping values would let a small
            // buffer describe an exponentially large document.
            let mut next_free = entries_end;
            for i in 0..count {
                if tp == JsonType::Object {
                    key_entry(body, i)?;
                }
                let entry = HEADER_LEN + count * key_entries + i * VALUE_ENTRY_LEN;
                let v = value_entry(body, entry)?;
                if v.tp != JsonType::Literal {
                    let off = u32_at(body, entry + 1)?;
                    if off < next_free {
                        return Err(Error::Invalid { what: "json", reason: "overlapping values" });
                    }
                    next_free = off + v.body.len();
                }
                validate(v.tp, v.body, depth + 1)?;
            }
            Ok(())
        }
        // Fixed sizes and string/opaque lengths were checked by `body_len`; times and
        // durations are checked where they are read.
        _ => Ok(()),
    }
}

/// Key `i` of an object body.
pub(super) fn key_entry(body: &[u8], i: usize) -> Result<&[u8]> {
    let at = HEADER_LEN + i * KEY_ENTRY_LEN;
    let off = u32_at(body, at)?;
    let len = u16_at(body, at + 4)?;
    body.get(off..off.saturating_add(len))
        .ok_or(Error::BadLength { what: "json key", len: off as i64 })
}

/// The value described by the value entry at `entry` of a container body.
pub(super) fn value_entry(body: &[u8], entry: usize) -> Result<JsonRef<'_>> {
    let code = *body.get(entry).ok_or(Error::Eof {
        what: "json value entry",
        need: entry + 1,
        have: 0,
    })?;
    let tp = JsonType::from_code(code)?;
    if tp == JsonType::Literal {
        let lit = body.get(entry + 1..entry + 2).ok_or(Error::Eof {
            what: "json literal",
            need: entry + 2,
            have: body.len(),
        })?;
        return Ok(JsonRef { tp, body: lit });
    }
    let off = u32_at(body, entry + 1)?;
    let rest = body.get(off..).ok_or(Error::BadLength { what: "json value", len: off as i64 })?;
    let len = body_len(tp, rest)?;
    Ok(JsonRef { tp, body: rest.get(..len).unwrap_or(rest) })
}

/// Appends a varint length and the bytes.
pub(super) fn write_var_bytes(out: &mut Vec<u8>, data: &[u8]) {
    codec::encode_var_u64(out, data.len() as u64);
    out.extend_from_slice(data);
}

fn to_u32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::Overflow { what: "json document size" })
}

/// Bytes a value adds to its container's value area (literals live in their entry).
#[inline]
fn stored_len(v: &JsonRef<'_>) -> usize {
    if v.tp == JsonType::Literal { 0 } else { v.body.len() }
}

fn write_value_entry(out: &mut Vec<u8>, v: &JsonRef<'_>, value_off: &mut usize) -> Result<()> {
    out.push(v.tp.code());
    if v.tp == JsonType::Literal {
        out.extend_from_slice(&[v.body.first().copied().unwrap_or(LITERAL_NULL), 0, 0, 0]);
    } else {
        out.extend_from_slice(&to_u32(*value_off)?.to_le_bytes());
        *value_off += v.body.len();
    }
    Ok(())
}

/// Appends an array body (TiDB `appendBinaryArray`).
pub(super) fn write_array(out: &mut Vec<u8>, elems: &[JsonRef<'_>]) -> Result<()> {
    let head = HEADER_LEN + elems.len() * VALUE_ENTRY_LEN;
    let size = head + elems.iter().map(stored_len).sum::<usize>();
    out.reserve(size);
    out.extend_from_slice(&to_u32(elems.len())?.to_le_bytes());
    out.extend_from_slice(&to_u32(size)?.to_le_bytes());
    let mut value_off = head;
    for v in elems {
        write_value_entry(out, v, &mut value_off)?;
    }
    for v in elems.iter().filter(|v| v.tp != JsonType::Literal) {
        out.extend_from_slice(v.body);
    }
    Ok(())
}

/// Appends an object body (TiDB `appendBinaryObject`): members sorted by key bytes, the last
/// of equal keys kept.
pub(super) fn write_object(
    out: &mut Vec<u8>,
    mut members: Vec<(&[u8], JsonRef<'_>)>,
) -> Result<()> {
    // A stable sort keeps equal keys in input order; keeping the last of each run is "last
    // wins", as TiKV's BTreeMap insertion does.
    members.sort_by(|a, b| a.0.cmp(b.0));
    let mut kept: Vec<(&[u8], JsonRef<'_>)> = Vec::with_capacity(members.len());
    for m in members {
        match kept.last_mut() {
            Some(last) if last.0 == m.0 => *last = m,
            _ => kept.push(m),
        }
    }
    let n = kept.len();
    let head = HEADER_LEN + n * (KEY_ENTRY_LEN + VALUE_ENTRY_LEN);
    let keys_len: usize = kept.iter().map(|(k, _)| k.len()).sum();
    let size = head + keys_len + kept.iter().map(|(_, v)| stored_len(v)).sum::<usize>();
    out.reserve(size);
    out.extend_from_slice(&to_u32(n)?.to_le_bytes());
    out.extend_from_slice(&to_u32(size)?.to_le_bytes());
    let mut key_off = head;
    for (k, _) in &kept {
        let len =
            u16::try_from(k.len()).map_err(|_| Error::Overflow { what: "json key length" })?;
        out.extend_from_slice(&to_u32(key_off)?.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        key_off += k.len();
    }
    let mut value_off = key_off;
    for (_, v) in &kept {
        write_value_entry(out, v, &mut value_off)?;
    }
    for (k, _) in &kept {
        out.extend_from_slice(k);
    }
    for (_, v) in kept.iter().filter(|(_, v)| v.tp != JsonType::Literal) {
        out.extend_from_slice(v.body);
    }
    Ok(())
}
