//! Datums: one flag byte, then a value, as TiDB writes them in keys, old rows and responses.
//!
//! Three modes write the same logical value differently:
//!
//! | value | key (comparable) | value (old rows, defaults) | response (TypeDefault) |
//! |---|---|---|---|
//! | NULL | `00` | `00` | `00` |
//! | signed int | `03` + comparable i64 | `08` + zigzag varint | `03` + comparable i64 |
//! | unsigned int | `04` + BE u64 | `09` + varint | `04` + BE u64 |
//! | float | `05` + comparable f64 | same | same |
//! | bytes | `01` + memcomparable | `02` + compact | `02` + compact |
//! | decimal | `06` + prec, frac, binary | same | same |
//! | time | `04` + BE packed u64 | same | same |
//! | duration | `07` + comparable i64 ns | same | same |
//! | json | `0A` + binary json | same | same |
//!
//! Decoders accept every variant a writer may have used for one logical type (formats
//! reference, pitfall 7): Int and VarInt, Uint and VarUint, Bytes and CompactBytes, Duration
//! and VarInt.

use crate::codec::{self, Reader};
use crate::decimal::Decimal;
use crate::duration::Duration;
use crate::error::{Error, Result};
use crate::time::{Time, TimeType};

/// Datum flag bytes.
pub mod flag {
    /// NULL.
    pub const NIL: u8 = 0;
    /// Memcomparable bytes.
    pub const BYTES: u8 = 1;
    /// Compact bytes (varint length + bytes).
    pub const COMPACT_BYTES: u8 = 2;
    /// Comparable i64.
    pub const INT: u8 = 3;
    /// Big-endian u64.
    pub const UINT: u8 = 4;
    /// Comparable f64.
    pub const FLOAT: u8 = 5;
    /// Decimal: precision, fraction, MySQL binary.
    pub const DECIMAL: u8 = 6;
    /// Duration as comparable i64 nanoseconds.
    pub const DURATION: u8 = 7;
    /// Zigzag varint i64.
    pub const VAR_INT: u8 = 8;
    /// Varint u64.
    pub const VAR_UINT: u8 = 9;
    /// Binary JSON.
    pub const JSON: u8 = 10;
    /// A float32 vector.
    pub const VECTOR_FLOAT32: u8 = 20;
    /// Greater than every other datum.
    pub const MAX: u8 = 250;
}

/// How a datum is written. See the module documentation for the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Comparable: index keys and common handles.
    Key,
    /// Non-comparable: old (v1) rows and column default values.
    Value,
    /// TiKV's TypeDefault response rows.
    Response,
}

/// One TiDB value.
///
/// `Time` is written as the packed u64 with the `UINT` flag, so decoding gives back
/// [`Datum::Uint`]; convert it with [`Datum::to_time`] knowing the column type.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// NULL.
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    Uint(u64),
    /// A double (floats are widened).
    Float(f64),
    /// A string or binary value.
    Bytes(Vec<u8>),
    /// A decimal.
    Decimal(Decimal),
    /// A date, datetime or timestamp (timestamps in UTC).
    Time(Time),
    /// A duration.
    Duration(Duration),
    /// Binary JSON (type byte then value).
    Json(Vec<u8>),
    /// Sorts before every non-NULL value in keys (TiDB's MinNotNull).
    MinNotNull,
    /// Sorts after every value in keys.
    Max,
}

impl Datum {
    /// Appends this datum, flag included, in `mode`.
    pub fn encode(&self, mode: Mode, out: &mut Vec<u8>) -> Result<()> {
        match self {
            Datum::Null => out.push(flag::NIL),
            Datum::Int(v) => match mode {
                Mode::Value => {
                    out.push(flag::VAR_INT);
                    codec::encode_var_i64(out, *v);
                }
                Mode::Key | Mode::Response => {
                    out.push(flag::INT);
                    codec::encode_i64(out, *v);
                }
            },
            Datum::Uint(v) => match mode {
                Mode::Value => {
                    out.push(flag::VAR_UINT);
                    codec::encode_var_u64(out, *v);
                }
                Mode::Key | Mode::Response => {
                    out.push(flag::UINT);
                    codec::encode_u64(out, *v);
                }
            },
            Datum::Float(v) => {
                out.push(flag::FLOAT);
                codec::encode_f64(out, *v);
            }
            Datum::Bytes(b) => match mode {
                Mode::Key => {
                    out.push(flag::BYTES);
                    codec::encode_bytes(out, b);
                }
                Mode::Value | Mode::Response => {
                    out.push(flag::COMPACT_BYTES);
                    codec::encode_compact_bytes(out, b);
                }
            },
            Datum::Decimal(d) => {
                out.push(flag::DECIMAL);
                let (prec, frac) = d.prec_and_frac();
                d.write_bin(prec, frac, out)?.into_result()?;
            }
            Datum::Time(t) => {
                out.push(flag::UINT);
                codec::encode_u64(out, t.to_packed_u64());
            }
            Datum::Duration(d) => {
                out.push(flag::DURATION);
                codec::encode_i64(out, d.nanos());
            }
            Datum::Json(j) => {
                if json_len(j)? != j.len() {
                    return Err(Error::Invalid { what: "json", reason: "bytes after the value" });
                }
                out.push(flag::JSON);
                out.extend_from_slice(j);
            }
            Datum::MinNotNull => out.push(flag::BYTES),
            Datum::Max => out.push(flag::MAX),
        }
        Ok(())
    }

    /// Reads one datum of any flag. Time values come back as [`Datum::Uint`].
    pub fn decode(r: &mut Reader<'_>) -> Result<Datum> {
        let offset = r.pos();
        let f = r.read_u8("datum flag")?;
        Ok(match f {
            flag::NIL => Datum::Null,
            flag::INT => Datum::Int(codec::decode_i64(r)?),
            flag::VAR_INT => Datum::Int(codec::decode_var_i64(r)?),
            flag::UINT => Datum::Uint(codec::decode_u64(r)?),
            flag::VAR_UINT => Datum::Uint(codec::decode_var_u64(r)?),
            flag::FLOAT => Datum::Float(codec::decode_f64(r)?),
            flag::BYTES => Datum::Bytes(codec::decode_bytes(r)?),
            flag::COMPACT_BYTES => Datum::Bytes(codec::decode_compact_bytes(r)?.to_vec()),
            flag::DECIMAL => Datum::Decimal(Decimal::decode_bin(r)?.0),
            flag::DURATION => {
                Datum::Duration(Duration::from_nanos(codec::decode_i64(r)?, crate::time::MAX_FSP)?)
            }
            flag::JSON => {
                let n = json_len(r.rest())?;
                Datum::Json(r.read_bytes(n, "json")?.to_vec())
            }
            flag::MAX => Datum::Max,
            _ => return Err(Error::BadFlag { flag: f, offset }),
        })
    }

    /// Reads every datum in `data`.
    pub fn decode_all(data: &[u8]) -> Result<Vec<Datum>> {
        let mut r = Reader::new(data);
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(Datum::decode(&mut r)?);
        }
        Ok(out)
    }

    /// Interprets an integer datum (as stored for a time column) as a packed time.
    pub fn to_time(&self, tp: TimeType, fsp: u8) -> Result<Option<Time>> {
        match *self {
            Datum::Null => Ok(None),
            Datum::Uint(p) => Time::from_packed_u64(p, tp, fsp).map(Some),
            Datum::Int(p) if p >= 0 => Time::from_packed_u64(p as u64, tp, fsp).map(Some),
            Datum::Time(t) => Ok(Some(t)),
            _ => Err(Error::Invalid { what: "time datum", reason: "not an unsigned integer" }),
        }
    }
}

/// Appends a decimal datum stored as DECIMAL(`prec`, `frac`): the form index keys use, where
/// every value of a column shares one `(prec, frac)` so that the bytes sort numerically.
/// Rounding to `frac` is reported as `Truncated`, a value too big for `prec` as `Overflow`.
pub fn encode_decimal_datum(
    out: &mut Vec<u8>,
    d: &Decimal,
    prec: u8,
    frac: u8,
) -> Result<crate::decimal::Res<()>> {
    let start = out.len();
    out.push(flag::DECIMAL);
    d.write_bin(prec, frac, out).inspect_err(|_| out.truncate(start))
}

/// Appends every datum of `values` in `mode`.
pub fn encode_datums(values: &[Datum], mode: Mode, out: &mut Vec<u8>) -> Result<()> {
    values.iter().try_for_each(|d| d.encode(mode, out))
}

/// Splits off the first datum of `data`, flag included, without decoding it.
///
/// Validates the value's length (and memcomparable structure) so that the returned slice is
/// exactly one datum. Accepts every flag [`Datum::decode`] accepts, in ascending key order.
pub fn split_datum(data: &[u8]) -> Result<(&[u8], &[u8])> {
    let mut r = Reader::new(data);
    skip_datum(&mut r)?;
    Ok(data.split_at(r.pos()))
}

/// Advances `r` past one datum, validating its length.
pub fn skip_datum(r: &mut Reader<'_>) -> Result<()> {
    let offset = r.pos();
    let f = r.read_u8("datum flag")?;
    match f {
        flag::NIL | flag::MAX => {}
        flag::INT | flag::UINT | flag::FLOAT | flag::DURATION => {
            r.read_bytes(8, "datum")?;
        }
        flag::VAR_INT | flag::VAR_UINT => {
            codec::decode_var_u64(r)?;
        }
        flag::BYTES => {
            codec::skip_bytes(r, false)?;
        }
        flag::COMPACT_BYTES => {
            codec::decode_compact_bytes(r)?;
        }
        flag::DECIMAL => {
            let [prec, frac] = r.read_array::<2>("decimal header")?;
            let n = Decimal::bin_size(prec, frac)?;
            r.read_bytes(n, "decimal")?;
        }
        flag::JSON => {
            let n = json_len(r.rest())?;
            r.read_bytes(n, "json")?;
        }
        flag::VECTOR_FLOAT32 => {
            let (_, n) = crate::vector::VectorRef::decode_prefix(r.rest())?;
            r.read_bytes(n, "vector")?;
        }
        _ => return Err(Error::BadFlag { flag: f, offset }),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Typed datum decoders: accept every encoding of one logical type.

/// Reads an integer datum: Int, VarInt, Uint or VarUint (unsigned values are reinterpreted),
/// or NULL.
pub fn decode_int_datum(r: &mut Reader<'_>) -> Result<Option<i64>> {
    let offset = r.pos();
    Ok(match r.read_u8("datum flag")? {
        flag::NIL => None,
        flag::INT => Some(codec::decode_i64(r)?),
        flag::VAR_INT => Some(codec::decode_var_i64(r)?),
        flag::UINT => Some(codec::decode_u64(r)? as i64),
        flag::VAR_UINT => Some(codec::decode_var_u64(r)? as i64),
        f => return Err(Error::BadFlag { flag: f, offset }),
    })
}

/// Reads a float datum (or NULL).
pub fn decode_float_datum(r: &mut Reader<'_>) -> Result<Option<f64>> {
    let offset = r.pos();
    Ok(match r.read_u8("datum flag")? {
        flag::NIL => None,
        flag::FLOAT => Some(codec::decode_f64(r)?),
        f => return Err(Error::BadFlag { flag: f, offset }),
    })
}

/// Reads a bytes datum, memcomparable or compact, appending the value to `out`.
/// Returns false for NULL.
pub fn decode_bytes_datum(r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<bool> {
    let offset = r.pos();
    match r.read_u8("datum flag")? {
        flag::NIL => Ok(false),
        flag::BYTES => codec::decode_bytes_into(r, out).map(|()| true),
        flag::COMPACT_BYTES => {
            out.extend_from_slice(codec::decode_compact_bytes(r)?);
            Ok(true)
        }
        f => Err(Error::BadFlag { flag: f, offset }),
    }
}

/// Reads a decimal datum (or NULL).
pub fn decode_decimal_datum(r: &mut Reader<'_>) -> Result<Option<Decimal>> {
    let offset = r.pos();
    match r.read_u8("datum flag")? {
        flag::NIL => Ok(None),
        flag::DECIMAL => Decimal::decode_bin(r).map(|(d, _, _)| Some(d)),
        f => Err(Error::BadFlag { flag: f, offset }),
    }
}

/// Reads a time datum: a packed u64 under Uint, VarUint or Int (or NULL).
pub fn decode_time_datum(r: &mut Reader<'_>, tp: TimeType, fsp: u8) -> Result<Option<Time>> {
    let offset = r.pos();
    let packed = match r.read_u8("datum flag")? {
        flag::NIL => return Ok(None),
        flag::UINT => codec::decode_u64(r)?,
        flag::VAR_UINT => codec::decode_var_u64(r)?,
        flag::INT => codec::decode_i64(r)? as u64,
        flag::VAR_INT => codec::decode_var_i64(r)? as u64,
        f => return Err(Error::BadFlag { flag: f, offset }),
    };
    Time::from_packed_u64(packed, tp, fsp).map(Some)
}

/// Reads a duration datum: Duration, Int or VarInt nanoseconds (or NULL).
pub fn decode_duration_datum(r: &mut Reader<'_>, fsp: u8) -> Result<Option<Duration>> {
    let offset = r.pos();
    let nanos = match r.read_u8("datum flag")? {
        flag::NIL => return Ok(None),
        flag::DURATION | flag::INT => codec::decode_i64(r)?,
        flag::VAR_INT => codec::decode_var_i64(r)?,
        f => return Err(Error::BadFlag { flag: f, offset }),
    };
    Duration::from_nanos(nanos, fsp).map(Some)
}

// ---------------------------------------------------------------------------------------------
// Binary JSON length

/// Length of the binary JSON value (type byte included) at the start of `data`.
///
/// The whole value is validated ([`crate::json::JsonRef::decode_prefix`]), so the bytes split
/// off are a well-formed document.
pub fn json_len(data: &[u8]) -> Result<usize> {
    crate::json::JsonRef::decode_prefix(data).map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(d: &Datum, mode: Mode) -> Vec<u8> {
        let mut v = Vec::new();
        d.encode(mode, &mut v).unwrap();
        v
    }

    #[test]
    fn response_row_example() {
        // (int 5, "ab", NULL) → 03 80..05 02 04 61 62 00
        let mut out = Vec::new();
        encode_datums(
            &[Datum::Int(5), Datum::Bytes(b"ab".to_vec()), Datum::Null],
            Mode::Response,
            &mut out,
        )
        .unwrap();
        assert_eq!(hex::encode(out), "0380000000000000050204616200");
    }

    #[test]
    fn value_mode() {
        assert_eq!(enc(&Datum::Int(10), Mode::Value), [8, 0x14]);
        assert_eq!(enc(&Datum::Uint(300), Mode::Value), [9, 0xAC, 0x02]);
        assert_eq!(enc(&Datum::Bytes(b"ab".to_vec()), Mode::Value), [2, 4, b'a', b'b']);
    }

    #[test]
    fn pitfall_7_variants() {
        // An int may come as Int, VarInt, Uint or VarUint.
        for bytes in [
            enc(&Datum::Int(42), Mode::Key),
            enc(&Datum::Int(42), Mode::Value),
            enc(&Datum::Uint(42), Mode::Key),
            enc(&Datum::Uint(42), Mode::Value),
        ] {
            assert_eq!(decode_int_datum(&mut Reader::new(&bytes)).unwrap(), Some(42));
        }
        for bytes in [
            enc(&Datum::Bytes(b"xyz".to_vec()), Mode::Key),
            enc(&Datum::Bytes(b"xyz".to_vec()), Mode::Value),
        ] {
            let mut out = Vec::new();
            assert!(decode_bytes_datum(&mut Reader::new(&bytes), &mut out).unwrap());
            assert_eq!(out, b"xyz");
        }
        let d = Duration::from_nanos(14_400_000_000_000, 0).unwrap();
        for bytes in [
            enc(&Datum::Duration(d), Mode::Key),
            enc(&Datum::Int(14_400_000_000_000), Mode::Key),
            enc(&Datum::Int(14_400_000_000_000), Mode::Value),
        ] {
            assert_eq!(decode_duration_datum(&mut Reader::new(&bytes), 0).unwrap(), Some(d));
        }
        assert_eq!(decode_int_datum(&mut Reader::new(&[0])).unwrap(), None);
        assert!(matches!(
            decode_int_datum(&mut Reader::new(&[5, 0, 0, 0, 0, 0, 0, 0, 0])),
            Err(Error::BadFlag { flag: 5, offset: 0 })
        ));
    }

    #[test]
    fn split_and_skip() {
        let mut buf = Vec::new();
        let values = [
            Datum::Int(-3),
            Datum::Bytes(b"12345678abc".to_vec()),
            Datum::Null,
            Datum::Float(1.5),
            Datum::Decimal("123.45".parse().unwrap()),
            Datum::Json(vec![0x04, 1]),
            Datum::Max,
        ];
        for mode in [Mode::Key, Mode::Value, Mode::Response] {
            buf.clear();
            encode_datums(&values, mode, &mut buf).unwrap();
            let mut rest = &buf[..];
            let mut n = 0;
            while !rest.is_empty() {
                let (one, tail) = split_datum(rest).unwrap();
                assert_eq!(Datum::decode_all(one).unwrap().len(), 1);
                rest = tail;
                n += 1;
            }
            assert_eq!(n, values.len());
            let decoded = Datum::decode_all(&buf).unwrap();
            assert_eq!(decoded.len(), values.len());
            assert_eq!(decoded[0], Datum::Int(-3));
            assert_eq!(decoded[1], Datum::Bytes(b"12345678abc".to_vec()));
        }
    }

    #[test]
    fn json_lengths() {
        assert_eq!(json_len(&[0x04, 1, 99]).unwrap(), 2);
        assert_eq!(json_len(&[0x0c, 3, b'a', b'b', b'c']).unwrap(), 5);
        assert!(json_len(&[0x0c, 4, b'a']).is_err());
        assert!(
            json_len(&[0x0c, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]).is_err()
        );
        // {"a": 1}: count 1, size 8 + 6 + 5 + 1 + 8
        let obj = crate::json::Json::parse(r#"{"a": 1}"#).unwrap().into_bytes();
        assert_eq!(obj.len(), 29);
        assert_eq!(json_len(&obj).unwrap(), 29);
        assert!(json_len(&obj[..28]).is_err());
        assert!(json_len(&[0x42]).is_err());
    }

    #[test]
    fn decimal_key_order_with_column_scale() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        let x: Decimal = "1.25".parse().unwrap();
        let y: Decimal = "9.5".parse().unwrap();
        encode_decimal_datum(&mut a, &x, 10, 2).unwrap().into_result().unwrap();
        encode_decimal_datum(&mut b, &y, 10, 2).unwrap().into_result().unwrap();
        assert!(a < b);
        assert_eq!(decode_decimal_datum(&mut Reader::new(&b)).unwrap(), Some(y));
        assert!(encode_decimal_datum(&mut a, &x, 0, 0).is_err());
        assert!(Datum::Json(vec![0x04, 1, 7]).encode(Mode::Value, &mut a).is_err());
    }

    #[test]
    fn bad_flags() {
        assert!(matches!(Datum::decode(&mut Reader::new(&[0x63])), Err(Error::BadFlag { .. })));
        assert!(split_datum(&[0x63]).is_err());
        assert!(split_datum(&[]).is_err());
        assert!(split_datum(&[flag::DECIMAL, 0, 0]).is_err());
        assert!(split_datum(&[flag::DECIMAL, 66, 0, 1, 2, 3]).is_err());
    }
}
