//! TiDB's binary JSON, as TiKV reads, writes, compares and prints it.
//!
//! A value is one type byte followed by a body (TiKV `components/tidb_query_datatype/src/codec/
//! mysql/json/`, TiDB `pkg/types/json_binary.go`):
//!
//! | code | type | body |
//! |---|---|---|
//! | `01` | object | `u32 count, u32 size, (u32 key offset, u16 key len)*, value entry*, keys, values` |
//! | `03` | array | `u32 count, u32 size, value entry*, values` |
//! | `04` | literal | `00` null, `01` true, `02` false |
//! | `09` / `0A` / `0B` | int64 / uint64 / double | 8 bytes little-endian |
//! | `0C` | string | varint length, UTF-8 bytes |
//! | `0D` | opaque | MySQL type byte, varint length, bytes |
//! | `0E` / `0F` / `10` | date / datetime / timestamp | `CoreTime` bits, u64 LE |
//! | `11` | time | i64 LE nanoseconds, u32 LE fsp |
//!
//! A value entry is a type byte and a u32: a literal is stored inline there, every other value
//! by its offset from the start of the container's body. `size` counts the whole body, header
//! included. Keys are sorted by bytes.
//!
//! [`JsonRef::decode`] checks the whole structure before anything reads it: every offset and
//! length against the buffer, before any allocation, and nesting up to [`MAX_DEPTH`]. The
//! accessors then never fail on structure; they still use checked reads.
//!
//! ```
//! use rcop_datum::json::Json;
//! let j = Json::parse(r#"{"b": [1, 2.5, "x"], "a": null}"#).unwrap();
//! assert_eq!(j.as_ref().to_text().unwrap(), r#"{"a": null, "b": [1, 2.5, "x"]}"#);
//! let back = rcop_datum::json::JsonRef::decode(j.as_bytes()).unwrap();
//! assert_eq!(back.compare(&j.as_ref()).unwrap(), std::cmp::Ordering::Equal);
//! ```

mod binary;
mod cmp;
mod text;

use crate::duration::Duration;
use crate::error::{Error, Result};
use crate::time::{MAX_FSP, Time};

pub use text::write_mysql_f64;

/// The deepest nesting of arrays and objects a decoded value may have.
///
/// TiDB refuses to build documents deeper than 100 and TiKV's parser stops at 128; the decoder
/// allows a margin above both and no more, so that recursion stays bounded on untrusted bytes.
pub const MAX_DEPTH: usize = 200;

/// Literal body byte: JSON `null`.
pub const LITERAL_NULL: u8 = 0x00;
/// Literal body byte: JSON `true`.
pub const LITERAL_TRUE: u8 = 0x01;
/// Literal body byte: JSON `false`.
pub const LITERAL_FALSE: u8 = 0x02;

/// The type byte of a binary JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// An object.
    Object,
    /// An array.
    Array,
    /// `null`, `true` or `false`.
    Literal,
    /// A signed 64-bit integer.
    I64,
    /// An unsigned 64-bit integer.
    U64,
    /// A double.
    Double,
    /// A string.
    String,
    /// Bytes tagged with a MySQL type.
    Opaque,
    /// A `DATE`.
    Date,
    /// A `DATETIME`.
    Datetime,
    /// A `TIMESTAMP`.
    Timestamp,
    /// A `TIME` (duration).
    Time,
}

impl JsonType {
    /// The type of a type byte. Errors for a byte TiKV does not know (including MySQL's small
    /// object/array and 16/32-bit integer codes, which TiDB never writes).
    pub fn from_code(code: u8) -> Result<JsonType> {
        Ok(match code {
            0x01 => JsonType::Object,
            0x03 => JsonType::Array,
            0x04 => JsonType::Literal,
            0x09 => JsonType::I64,
            0x0a => JsonType::U64,
            0x0b => JsonType::Double,
            0x0c => JsonType::String,
            0x0d => JsonType::Opaque,
            0x0e => JsonType::Date,
            0x0f => JsonType::Datetime,
            0x10 => JsonType::Timestamp,
            0x11 => JsonType::Time,
            _ => return Err(Error::Invalid { what: "json", reason: "unknown type code" }),
        })
    }

    /// The type byte.
    pub fn code(self) -> u8 {
        match self {
            JsonType::Object => 0x01,
            JsonType::Array => 0x03,
            JsonType::Literal => 0x04,
            JsonType::I64 => 0x09,
            JsonType::U64 => 0x0a,
            JsonType::Double => 0x0b,
            JsonType::String => 0x0c,
            JsonType::Opaque => 0x0d,
            JsonType::Date => 0x0e,
            JsonType::Datetime => 0x0f,
            JsonType::Timestamp => 0x10,
            JsonType::Time => 0x11,
        }
    }
}

/// A validated binary JSON value borrowing its bytes.
#[derive(Debug, Clone, Copy)]
pub struct JsonRef<'a> {
    tp: JsonType,
    body: &'a [u8],
}

impl JsonRef<'static> {
    /// JSON `null`.
    pub const NULL: JsonRef<'static> = JsonRef { tp: JsonType::Literal, body: &[LITERAL_NULL] };
}

impl<'a> JsonRef<'a> {
    /// Reads bytes that already passed [`JsonRef::decode`] (values a column stores): checks the
    /// type byte and the outer length, not the nested structure.
    pub fn from_validated(data: &'a [u8]) -> Result<JsonRef<'a>> {
        let (&code, rest) =
            data.split_first().ok_or(Error::Eof { what: "json type", need: 1, have: 0 })?;
        let tp = JsonType::from_code(code)?;
        if binary::body_len(tp, rest)? != rest.len() {
            return Err(Error::Invalid { what: "json", reason: "bytes after the value" });
        }
        Ok(JsonRef { tp, body: rest })
    }

    /// Reads a whole buffer as one value (type byte, then body), validating everything.
    ///
    /// Errors: [`Error::Eof`] / [`Error::BadLength`] for an offset or length outside the
    /// buffer, [`Error::Invalid`] for an unknown type or literal, bytes after the value, or
    /// nesting deeper than [`MAX_DEPTH`].
    pub fn decode(data: &'a [u8]) -> Result<JsonRef<'a>> {
        let (j, n) = Self::decode_prefix(data)?;
        if n != data.len() {
            return Err(Error::Invalid { what: "json", reason: "bytes after the value" });
        }
        Ok(j)
    }

    /// Reads the value at the start of `data`, returning it and the bytes it used.
    pub fn decode_prefix(data: &'a [u8]) -> Result<(JsonRef<'a>, usize)> {
        let (&code, rest) =
            data.split_first().ok_or(Error::Eof { what: "json type", need: 1, have: 0 })?;
        let tp = JsonType::from_code(code)?;
        let len = binary::body_len(tp, rest)?;
        let body =
            rest.get(..len).ok_or(Error::Eof { what: "json", need: len, have: rest.len() })?;
        binary::validate(tp, body, 0)?;
        Ok((JsonRef { tp, body }, 1 + len))
    }

    /// The value's type.
    #[inline]
    pub fn json_type(&self) -> JsonType {
        self.tp
    }

    /// The body (everything after the type byte).
    #[inline]
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// Length of the binary form, type byte included.
    #[inline]
    pub fn binary_len(&self) -> usize {
        1 + self.body.len()
    }

    /// Appends the binary form (type byte and body).
    pub fn write_binary(&self, out: &mut Vec<u8>) {
        out.push(self.tp.code());
        out.extend_from_slice(self.body);
    }

    /// An owned copy.
    pub fn to_owned(&self) -> Json {
        let mut bytes = Vec::with_capacity(self.binary_len());
        self.write_binary(&mut bytes);
        Json { bytes }
    }

    /// `Some(None)` for `null`, `Some(Some(b))` for a boolean, `None` for other types.
    pub fn as_literal(&self) -> Option<Option<bool>> {
        match (self.tp, self.body.first()) {
            (JsonType::Literal, Some(&LITERAL_TRUE)) => Some(Some(true)),
            (JsonType::Literal, Some(&LITERAL_FALSE)) => Some(Some(false)),
            (JsonType::Literal, _) => Some(None),
            _ => None,
        }
    }

    /// The integer of an `I64` value.
    pub fn as_i64(&self) -> Option<i64> {
        (self.tp == JsonType::I64).then(|| i64::from_le_bytes(binary::le8(self.body)))
    }

    /// The integer of a `U64` value.
    pub fn as_u64(&self) -> Option<u64> {
        (self.tp == JsonType::U64).then(|| u64::from_le_bytes(binary::le8(self.body)))
    }

    /// The double of a `Double` value.
    pub fn as_f64(&self) -> Option<f64> {
        (self.tp == JsonType::Double).then(|| f64::from_le_bytes(binary::le8(self.body)))
    }

    /// The bytes of a `String` value (UTF-8 unless the value was written by a broken writer).
    pub fn as_str_bytes(&self) -> Option<&'a [u8]> {
        if self.tp != JsonType::String {
            return None;
        }
        binary::var_bytes(self.body, 0).ok().map(|(b, _)| b)
    }

    /// The MySQL type byte and data of an `Opaque` value.
    pub fn as_opaque(&self) -> Option<(u8, &'a [u8])> {
        if self.tp != JsonType::Opaque {
            return None;
        }
        let (&t, _) = self.body.split_first()?;
        binary::var_bytes(self.body, 1).ok().map(|(b, _)| (t, b))
    }

    /// The time of a `Date`, `Datetime` or `Timestamp` value (its `CoreTime` bits validated).
    pub fn as_time(&self) -> Option<Result<Time>> {
        match self.tp {
            JsonType::Date | JsonType::Datetime | JsonType::Timestamp => {
                Some(Time::from_chunk_u64(u64::from_le_bytes(binary::le8(self.body))))
            }
            _ => None,
        }
    }

    /// The duration of a `Time` value.
    pub fn as_duration(&self) -> Option<Result<Duration>> {
        if self.tp != JsonType::Time {
            return None;
        }
        let nanos = i64::from_le_bytes(binary::le8(self.body));
        let fsp = self.body.get(8..12).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes);
        let fsp = fsp.and_then(|f| u8::try_from(f).ok()).filter(|&f| f <= MAX_FSP);
        Some(match fsp {
            Some(fsp) => Duration::from_nanos(nanos, fsp),
            None => Err(Error::Invalid { what: "json time", reason: "fsp out of range" }),
        })
    }

    /// Members of an object or elements of an array; 0 for scalars.
    pub fn elem_count(&self) -> usize {
        match self.tp {
            JsonType::Object | JsonType::Array => binary::u32_at(self.body, 0).unwrap_or(0),
            _ => 0,
        }
    }

    /// Element `i` of an array.
    pub fn array_get(&self, i: usize) -> Result<JsonRef<'a>> {
        if self.tp != JsonType::Array || i >= self.elem_count() {
            return Err(Error::Invalid { what: "json", reason: "no such array element" });
        }
        binary::value_entry(self.body, binary::HEADER_LEN + i * binary::VALUE_ENTRY_LEN)
    }

    /// Key `i` of an object.
    pub fn object_key(&self, i: usize) -> Result<&'a [u8]> {
        if self.tp != JsonType::Object || i >= self.elem_count() {
            return Err(Error::Invalid { what: "json", reason: "no such object member" });
        }
        binary::key_entry(self.body, i)
    }

    /// Value `i` of an object.
    pub fn object_val(&self, i: usize) -> Result<JsonRef<'a>> {
        let n = self.elem_count();
        if self.tp != JsonType::Object || i >= n {
            return Err(Error::Invalid { what: "json", reason: "no such object member" });
        }
        let off = binary::HEADER_LEN + n * binary::KEY_ENTRY_LEN + i * binary::VALUE_ENTRY_LEN;
        binary::value_entry(self.body, off)
    }

    /// The value of `key` in an object (binary search: keys are sorted), if present.
    pub fn object_search(&self, key: &[u8]) -> Result<Option<JsonRef<'a>>> {
        let (mut lo, mut hi) = (0, self.elem_count());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.object_key(mid)?.cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.object_val(mid).map(Some),
            }
        }
        Ok(None)
    }
}

/// An owned, validated binary JSON value: the type byte followed by the body.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Json {
    bytes: Vec<u8>,
}

impl Json {
    /// Takes ownership of binary JSON, validating it as [`JsonRef::decode`] does.
    pub fn from_binary(bytes: Vec<u8>) -> Result<Json> {
        JsonRef::decode(&bytes)?;
        Ok(Json { bytes })
    }

    /// Parses JSON text as TiKV does (`CAST(… AS JSON)`): see [`Json::parse`].
    pub fn parse(text: &str) -> Result<Json> {
        text::parse(text)
    }

    /// A borrowed view.
    #[inline]
    pub fn as_ref(&self) -> JsonRef<'_> {
        // Validated on construction: type byte present and known, body well formed.
        let (code, body) = self.bytes.split_first().map_or((0x04, &[][..]), |(c, b)| (*c, b));
        JsonRef { tp: JsonType::from_code(code).unwrap_or(JsonType::Literal), body }
    }

    /// The binary form, type byte included.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The binary form, type byte included.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    fn scalar(tp: JsonType, body: &[u8]) -> Json {
        let mut bytes = Vec::with_capacity(1 + body.len());
        bytes.push(tp.code());
        bytes.extend_from_slice(body);
        Json { bytes }
    }

    /// JSON `null`.
    pub fn null() -> Json {
        Json::scalar(JsonType::Literal, &[LITERAL_NULL])
    }

    /// JSON `true` or `false`.
    pub fn from_bool(b: bool) -> Json {
        Json::scalar(JsonType::Literal, &[if b { LITERAL_TRUE } else { LITERAL_FALSE }])
    }

    /// A signed integer.
    pub fn from_i64(v: i64) -> Json {
        Json::scalar(JsonType::I64, &v.to_le_bytes())
    }

    /// An unsigned integer.
    pub fn from_u64(v: u64) -> Json {
        Json::scalar(JsonType::U64, &v.to_le_bytes())
    }

    /// A double.
    pub fn from_f64(v: f64) -> Json {
        Json::scalar(JsonType::Double, &v.to_le_bytes())
    }

    /// A string.
    pub fn from_string(s: &str) -> Json {
        let mut bytes = vec![JsonType::String.code()];
        binary::write_var_bytes(&mut bytes, s.as_bytes());
        Json { bytes }
    }

    /// Opaque bytes tagged with MySQL type `mysql_type` (as `CAST(binary AS JSON)` makes).
    pub fn from_opaque(mysql_type: u8, data: &[u8]) -> Json {
        let mut bytes = vec![JsonType::Opaque.code(), mysql_type];
        binary::write_var_bytes(&mut bytes, data);
        Json { bytes }
    }

    /// A date, datetime or timestamp, by the time's own type.
    pub fn from_time(t: Time) -> Json {
        let tp = match t.time_type() {
            crate::time::TimeType::Date => JsonType::Date,
            crate::time::TimeType::DateTime => JsonType::Datetime,
            crate::time::TimeType::Timestamp => JsonType::Timestamp,
        };
        Json::scalar(tp, &t.to_chunk_u64().to_le_bytes())
    }

    /// A `TIME` value, keeping its precision.
    pub fn from_duration(d: Duration) -> Json {
        let mut body = [0u8; 12];
        body[..8].copy_from_slice(&d.nanos().to_le_bytes());
        body[8..].copy_from_slice(&u32::from(d.fsp()).to_le_bytes());
        Json::scalar(JsonType::Time, &body)
    }

    /// An array of `elems`, in order.
    ///
    /// Errors: [`Error::Overflow`] when the array would exceed 4 GiB.
    pub fn array(elems: &[JsonRef<'_>]) -> Result<Json> {
        let mut bytes = vec![JsonType::Array.code()];
        binary::write_array(&mut bytes, elems)?;
        Ok(Json { bytes })
    }

    /// An object of `members`, sorted by key bytes; of equal keys the last one is kept.
    ///
    /// Errors: [`Error::Overflow`] for a key over 65535 bytes or an object over 4 GiB.
    pub fn object(members: Vec<(&[u8], JsonRef<'_>)>) -> Result<Json> {
        let mut bytes = vec![JsonType::Object.code()];
        binary::write_object(&mut bytes, members)?;
        Ok(Json { bytes })
    }
}

impl std::str::FromStr for Json {
    type Err = Error;
    fn from_str(s: &str) -> Result<Json> {
        Json::parse(s)
    }
}

#[cfg(test)]
mod tests;
