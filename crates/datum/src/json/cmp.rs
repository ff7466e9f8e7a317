//! Comparison as TiKV does it (`comparison.rs`, after TiDB's `CompareBinaryJSON`).
//!
//! Values of different kinds order by precedence:
//! `null < number < string < object < array < boolean < date < time < datetime/timestamp
//! < opaque`. Within a kind:
//! - numbers compare across int64/uint64/double: two integers exactly, anything with a double
//!   as doubles, equal when they differ by less than `f64::EPSILON`;
//! - strings and opaque values by bytes; objects by their encoded bodies (TiKV defines only
//!   equality on objects and compares the bytes); arrays element by element, then by length;
//! - booleans `false < true`; dates and times by value.

use std::cmp::Ordering;

use super::{JsonRef, JsonType};
use crate::error::{Error, Result};

fn precedence(j: &JsonRef<'_>) -> i32 {
    match j.tp {
        JsonType::Object => -9,
        JsonType::Array => -8,
        JsonType::Literal => match j.as_literal() {
            Some(Some(_)) => -7,
            _ => -12,
        },
        JsonType::I64 | JsonType::U64 | JsonType::Double => -11,
        JsonType::String => -10,
        JsonType::Opaque => -3,
        JsonType::Date => -6,
        JsonType::Datetime | JsonType::Timestamp => -4,
        JsonType::Time => -5,
    }
}

fn number_f64(j: &JsonRef<'_>) -> f64 {
    match j.tp {
        JsonType::I64 => j.as_i64().unwrap_or(0) as f64,
        JsonType::U64 => j.as_u64().unwrap_or(0) as f64,
        _ => j.as_f64().unwrap_or(0.0),
    }
}

fn cmp_f64(x: f64, y: f64) -> Result<Ordering> {
    if (x - y).abs() < f64::EPSILON {
        return Ok(Ordering::Equal);
    }
    x.partial_cmp(&y).ok_or(Error::Invalid { what: "json", reason: "NaN is not comparable" })
}

fn cmp_i64_u64(x: i64, y: u64) -> Ordering {
    if x < 0 { Ordering::Less } else { (x as u64).cmp(&y) }
}

impl JsonRef<'_> {
    /// Compares two values as TiKV does (see the module documentation).
    ///
    /// Errors: [`Error::Invalid`] for a NaN double or date/time bits that are not a valid time,
    /// where TiKV has no order (and would panic).
    pub fn compare(&self, other: &JsonRef<'_>) -> Result<Ordering> {
        let (pa, pb) = (precedence(self), precedence(other));
        if pa != pb {
            return Ok(pa.cmp(&pb));
        }
        Ok(match self.tp {
            JsonType::Literal => self.as_literal().cmp(&other.as_literal()),
            JsonType::I64 | JsonType::U64 | JsonType::Double => match (self.tp, other.tp) {
                (JsonType::I64, JsonType::I64) => self.as_i64().cmp(&other.as_i64()),
                (JsonType::U64, JsonType::U64) => self.as_u64().cmp(&other.as_u64()),
                (JsonType::I64, JsonType::U64) => {
                    cmp_i64_u64(self.as_i64().unwrap_or(0), other.as_u64().unwrap_or(0))
                }
                (JsonType::U64, JsonType::I64) => {
                    cmp_i64_u64(other.as_i64().unwrap_or(0), self.as_u64().unwrap_or(0)).reverse()
                }
                _ => cmp_f64(number_f64(self), number_f64(other))?,
            },
            JsonType::String => self.as_str_bytes().cmp(&other.as_str_bytes()),
            JsonType::Opaque => {
                self.as_opaque().map(|(_, b)| b).cmp(&other.as_opaque().map(|(_, b)| b))
            }
            JsonType::Object => self.body.cmp(other.body),
            JsonType::Array => {
                let (n, m) = (self.elem_count(), other.elem_count());
                for i in 0..n.min(m) {
                    match self.array_get(i)?.compare(&other.array_get(i)?)? {
                        Ordering::Equal => {}
                        o => return Ok(o),
                    }
                }
                n.cmp(&m)
            }
            JsonType::Date | JsonType::Datetime | JsonType::Timestamp => {
                let bad = || Error::Invalid { what: "json time", reason: "not a time" };
                let a = self.as_time().ok_or_else(bad)??;
                let b = other.as_time().ok_or_else(bad)??;
                a.to_packed_u64().cmp(&b.to_packed_u64())
            }
            JsonType::Time => {
                let bad = || Error::Invalid { what: "json time", reason: "not a duration" };
                let a = self.as_duration().ok_or_else(bad)??;
                let b = other.as_duration().ok_or_else(bad)??;
                a.nanos().cmp(&b.nanos())
            }
        })
    }
}
