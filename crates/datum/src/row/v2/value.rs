//! v2 values: how each column type is stored, and their conversion to datums.

use super::*;

/// How a v2 value is stored, by the column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Signed integer, 1/2/4/8 bytes LE.
    Int,
    /// Unsigned integer (also enum, set, bit, year is signed), 1/2/4/8 bytes LE.
    Uint,
    /// Float or double: 8-byte comparable f64.
    Float,
    /// String or binary: raw bytes.
    Bytes,
    /// `[prec][frac]` + MySQL binary.
    Decimal,
    /// Packed u64, LE, minimal width.
    Time,
    /// Nanoseconds, LE signed, minimal width.
    Duration,
    /// `[type][binary json]`.
    Json,
}

/// Reads a signed int stored in 1, 2, 4 or 8 bytes LE.
#[inline]
pub fn decode_v2_i64(v: &[u8]) -> Result<i64> {
    Ok(match *v {
        [a] => i64::from(a as i8),
        [a, b] => i64::from(i16::from_le_bytes([a, b])),
        [a, b, c, d] => i64::from(i32::from_le_bytes([a, b, c, d])),
        [a, b, c, d, e, f, g, h] => i64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => return Err(Error::BadLength { what: "row v2 int", len: v.len() as i64 }),
    })
}

/// Reads an unsigned int stored in 1, 2, 4 or 8 bytes LE.
#[inline]
pub fn decode_v2_u64(v: &[u8]) -> Result<u64> {
    Ok(match *v {
        [a] => u64::from(a),
        [a, b] => u64::from(u16::from_le_bytes([a, b])),
        [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
        [a, b, c, d, e, f, g, h] => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => return Err(Error::BadLength { what: "row v2 uint", len: v.len() as i64 }),
    })
}

/// Reads an 8-byte comparable f64.
#[inline]
pub fn decode_v2_f64(v: &[u8]) -> Result<f64> {
    match *v {
        [a, b, c, d, e, f, g, h] => {
            Ok(codec::comparable_to_f64(u64::from_be_bytes([a, b, c, d, e, f, g, h])))
        }
        _ => Err(Error::BadLength { what: "row v2 float", len: v.len() as i64 }),
    }
}

/// Appends `v` as the smallest LE signed int that holds it.
#[inline]
pub fn encode_v2_i64(out: &mut Vec<u8>, v: i64) {
    if let Ok(x) = i8::try_from(v) {
        out.push(x as u8);
    } else if let Ok(x) = i16::try_from(v) {
        out.extend_from_slice(&x.to_le_bytes());
    } else if let Ok(x) = i32::try_from(v) {
        out.extend_from_slice(&x.to_le_bytes());
    } else {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends `v` as the smallest LE unsigned int that holds it.
#[inline]
pub fn encode_v2_u64(out: &mut Vec<u8>, v: u64) {
    if let Ok(x) = u8::try_from(v) {
        out.push(x);
    } else if let Ok(x) = u16::try_from(v) {
        out.extend_from_slice(&x.to_le_bytes());
    } else if let Ok(x) = u32::try_from(v) {
        out.extend_from_slice(&x.to_le_bytes());
    } else {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Rewrites one v2 value as the datum TiKV evaluates (TypeDefault response encoding):
/// int `03`+i64, uint `04`+u64, float `05`, bytes `02`+compact, decimal `06`, time `04`+packed,
/// duration `07`, json `0A`. Checks the value's length against its kind, and that times,
/// durations, decimals and JSON are in range and well formed, so the datum written always
/// decodes.
pub fn v2_value_to_datum(v: &[u8], kind: ValueKind, out: &mut Vec<u8>) -> Result<()> {
    match kind {
        ValueKind::Int => {
            out.push(flag::INT);
            codec::encode_i64(out, decode_v2_i64(v)?);
        }
        ValueKind::Uint => {
            out.push(flag::UINT);
            codec::encode_u64(out, decode_v2_u64(v)?);
        }
        ValueKind::Time => {
            let packed = decode_v2_u64(v)?;
            Time::from_packed_u64(packed, TimeType::DateTime, MAX_FSP)?;
            out.push(flag::UINT);
            codec::encode_u64(out, packed);
        }
        ValueKind::Float => {
            out.push(flag::FLOAT);
            codec::encode_f64(out, decode_v2_f64(v)?);
        }
        ValueKind::Bytes => {
            out.push(flag::COMPACT_BYTES);
            codec::encode_compact_bytes(out, v);
        }
        ValueKind::Decimal => {
            let mut r = Reader::new(v);
            Decimal::decode_bin(&mut r)?;
            if !r.is_empty() {
                return Err(Error::Invalid { what: "row v2 decimal", reason: "trailing bytes" });
            }
            out.push(flag::DECIMAL);
            out.extend_from_slice(v);
        }
        ValueKind::Duration => {
            let nanos = decode_v2_i64(v)?;
            Duration::from_nanos(nanos, MAX_FSP)?;
            out.push(flag::DURATION);
            codec::encode_i64(out, nanos);
        }
        ValueKind::Json => {
            let n = crate::datum::json_len(v)?;
            if n != v.len() {
                return Err(Error::Invalid { what: "row v2 json", reason: "trailing bytes" });
            }
            out.push(flag::JSON);
            out.extend_from_slice(v);
        }
    }
    Ok(())
}
