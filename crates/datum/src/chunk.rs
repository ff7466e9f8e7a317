//! TiDB's columnar chunk layout (the `rows_data` of a TypeChunk response).
//!
//! Each column: `u32 LE length | u32 LE null_count | null bitmap (only if null_count > 0;
//! bit = 1 means NOT null, LSB first) | (length + 1) i64 LE offsets (variable-size types only)
//! | data`. Fixed-size NULL slots are zero-filled; a variable-size NULL repeats the previous
//! offset.

use crate::codec::Reader;
use crate::error::{Error, Result};

/// MySQL column type codes (`FieldType.tp`).
pub mod mysql_type {
    #![allow(missing_docs)]
    pub const UNSPECIFIED: u8 = 0;
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const NULL: u8 = 6;
    pub const TIMESTAMP: u8 = 7;
    pub const LONG_LONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const DURATION: u8 = 11;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
    pub const NEW_DATE: u8 = 14;
    pub const VARCHAR: u8 = 15;
    pub const BIT: u8 = 16;
    pub const TIDB_VECTOR_FLOAT32: u8 = 0xE1;
    pub const JSON: u8 = 0xF5;
    pub const NEW_DECIMAL: u8 = 0xF6;
    pub const ENUM: u8 = 0xF7;
    pub const SET: u8 = 0xF8;
    pub const TINY_BLOB: u8 = 0xF9;
    pub const MEDIUM_BLOB: u8 = 0xFA;
    pub const LONG_BLOB: u8 = 0xFB;
    pub const BLOB: u8 = 0xFC;
    pub const VAR_STRING: u8 = 0xFD;
    pub const STRING: u8 = 0xFE;
    pub const GEOMETRY: u8 = 0xFF;
}

/// Element size of a fixed-size chunk column of MySQL type `tp`, or `None` for variable-size
/// types.
pub fn fixed_size_of(tp: u8) -> Option<usize> {
    use mysql_type::*;
    match tp {
        TINY | SHORT | INT24 | LONG | LONG_LONG | YEAR | DOUBLE | DURATION | DATE | DATETIME
        | TIMESTAMP | NEW_DATE => Some(8),
        FLOAT => Some(4),
        NEW_DECIMAL => Some(crate::decimal::CHUNK_SIZE),
        _ => None,
    }
}

/// Builds one chunk column. Reuse it across batches with [`ChunkColumn::clear`].
#[derive(Debug, Clone)]
pub struct ChunkColumn {
    elem: Option<usize>,
    len: usize,
    null_count: usize,
    bitmap: Vec<u8>,
    offsets: Vec<i64>,
    data: Vec<u8>,
}

impl ChunkColumn {
    /// A column of fixed-size elements of `size` bytes.
    pub fn fixed(size: usize) -> Self {
        ChunkColumn {
            elem: Some(size),
            len: 0,
            null_count: 0,
            bitmap: Vec::new(),
            offsets: Vec::new(),
            data: Vec::new(),
        }
    }

    /// A column of variable-size elements.
    pub fn var() -> Self {
        ChunkColumn {
            elem: None,
            len: 0,
            null_count: 0,
            bitmap: Vec::new(),
            offsets: vec![0],
            data: Vec::new(),
        }
    }

    /// A column for MySQL type `tp`.
    pub fn for_type(tp: u8) -> Self {
        fixed_size_of(tp).map_or_else(Self::var, Self::fixed)
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Makes room for `rows` more rows (their bytes too, for a fixed-size column), so
    /// appending them does not grow the buffers one doubling at a time.
    pub fn reserve(&mut self, rows: usize) {
        self.bitmap.reserve(rows.div_ceil(8) + 1);
        match self.elem {
            Some(n) => self.data.reserve(rows.saturating_mul(n)),
            None => self.offsets.reserve(rows),
        }
    }

    /// Removes every row, keeping the buffers.
    pub fn clear(&mut self) {
        self.len = 0;
        self.null_count = 0;
        self.bitmap.clear();
        self.data.clear();
        self.offsets.clear();
        if self.elem.is_none() {
            self.offsets.push(0);
        }
    }

    #[inline]
    fn push_bit(&mut self, present: bool) {
        let i = self.len;
        if i.is_multiple_of(8) {
            self.bitmap.push(0);
        }
        if present {
            if let Some(b) = self.bitmap.last_mut() {
                *b |= 1 << (i % 8);
            }
        } else {
            self.null_count += 1;
        }
        self.len += 1;
    }

    /// Appends a NULL.
    pub fn push_null(&mut self) {
        self.push_bit(false);
        match self.elem {
            Some(n) => self.data.resize(self.data.len() + n, 0),
            None => self.offsets.push(self.data.len() as i64),
        }
    }

    /// Appends one fixed-size element. Errors when `v` is not the column's element size or the
    /// column is variable-size.
    pub fn push_fixed(&mut self, v: &[u8]) -> Result<()> {
        if self.elem != Some(v.len()) {
            return Err(Error::BadLength { what: "chunk element", len: v.len() as i64 });
        }
        self.push_bit(true);
        self.data.extend_from_slice(v);
        Ok(())
    }

    /// Appends an 8-byte integer (i64 or u64 as LE bytes) to a fixed 8-byte column.
    pub fn push_u64(&mut self, v: u64) -> Result<()> {
        self.push_fixed(&v.to_le_bytes())
    }

    /// Appends a variable-size element.
    pub fn push_var(&mut self, v: &[u8]) -> Result<()> {
        if self.elem.is_some() {
            return Err(Error::Invalid {
                what: "chunk column",
                reason: "variable element in a fixed column",
            });
        }
        self.push_bit(true);
        self.data.extend_from_slice(v);
        self.offsets.push(self.data.len() as i64);
        Ok(())
    }

    /// Appends the encoded column to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        let (Ok(len), Ok(nulls)) = (u32::try_from(self.len), u32::try_from(self.null_count)) else {
            return Err(Error::Overflow { what: "chunk column length" });
        };
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&nulls.to_le_bytes());
        if self.null_count > 0 {
            out.extend_from_slice(&self.bitmap);
        }
        if self.elem.is_none() {
            for o in &self.offsets {
                out.extend_from_slice(&o.to_le_bytes());
            }
        }
        out.extend_from_slice(&self.data);
        Ok(())
    }
}

/// A decoded chunk column borrowing its bytes.
#[derive(Debug, Clone, Copy)]
pub struct ChunkColumnRef<'a> {
    elem: Option<usize>,
    len: usize,
    bitmap: Option<&'a [u8]>,
    offsets: &'a [u8],
    data: &'a [u8],
}

impl<'a> ChunkColumnRef<'a> {
    /// Reads one column; `elem` is the element size for fixed-size types, `None` otherwise.
    /// Checks every length, the null count against the bitmap, and that offsets start at 0,
    /// ascend and end within the data.
    pub fn decode(r: &mut Reader<'a>, elem: Option<usize>) -> Result<Self> {
        let len = r.read_u32_le("chunk column length")? as usize;
        let null_count = r.read_u32_le("chunk column null count")? as usize;
        if null_count > len {
            return Err(Error::Invalid {
                what: "chunk column",
                reason: "null count exceeds length",
            });
        }
        let bitmap = if null_count > 0 {
            let b = r.read_bytes(len.div_ceil(8), "chunk null bitmap")?;
            let present: usize = (0..len).filter(|i| b[i / 8] >> (i % 8) & 1 == 1).count();
            if len - present != null_count {
                return Err(Error::Invalid {
                    what: "chunk column",
                    reason: "null count disagrees with bitmap",
                });
            }
            Some(b)
        } else {
            None
        };
        match elem {
            Some(n) => {
                let size =
                    len.checked_mul(n).ok_or(Error::Overflow { what: "chunk column size" })?;
                let data = r.read_bytes(size, "chunk column data")?;
                Ok(ChunkColumnRef { elem, len, bitmap, offsets: &[], data })
            }
            None => {
                let n_off = len.checked_add(1).and_then(|n| n.checked_mul(8));
                let n_off = n_off.ok_or(Error::Overflow { what: "chunk column size" })?;
                let offsets = r.read_bytes(n_off, "chunk column offsets")?;
                let off = |i: usize| {
                    let b = &offsets[i * 8..i * 8 + 8];
                    i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
                };
                if off(0) != 0 {
                    return Err(Error::Invalid {
                        what: "chunk column",
                        reason: "first offset is not 0",
                    });
                }
                for i in 0..len {
                    if off(i + 1) < off(i) {
                        return Err(Error::Invalid {
                            what: "chunk column",
                            reason: "offsets not ascending",
                        });
                    }
                }
                let total = usize::try_from(off(len))
                    .map_err(|_| Error::BadLength { what: "chunk column data", len: off(len) })?;
                let data = r.read_bytes(total, "chunk column data")?;
                Ok(ChunkColumnRef { elem, len, bitmap, offsets, data })
            }
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when row `i` is NULL (or out of range).
    pub fn is_null(&self, i: usize) -> bool {
        if i >= self.len {
            return true;
        }
        self.bitmap.is_some_and(|b| b.get(i / 8).is_none_or(|byte| byte >> (i % 8) & 1 == 0))
    }

    /// The bytes of row `i`: the element for fixed-size columns, the value for variable ones.
    /// `None` when `i` is out of range.
    pub fn get(&self, i: usize) -> Option<&'a [u8]> {
        if i >= self.len {
            return None;
        }
        match self.elem {
            Some(n) => self.data.get(i * n..(i + 1) * n),
            None => {
                let at = |j: usize| {
                    let b = self.offsets.get(j * 8..j * 8 + 8)?;
                    usize::try_from(i64::from_le_bytes(b.try_into().ok()?)).ok()
                };
                self.data.get(at(i)?..at(i + 1)?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(c: &ChunkColumn) -> String {
        let mut out = Vec::new();
        c.encode(&mut out).unwrap();
        hex::encode(out)
    }

    #[test]
    fn derived_vectors() {
        let mut c = ChunkColumn::fixed(8);
        c.push_u64(1).unwrap();
        c.push_null();
        c.push_u64(3).unwrap();
        assert_eq!(
            encoded(&c),
            "030000000100000005010000000000000000000000000000000300000000000000"
        );
        let mut c = ChunkColumn::var();
        c.push_var(b"ab").unwrap();
        c.push_null();
        assert_eq!(
            encoded(&c),
            "0200000001000000010000000000000000020000000000000002000000000000006162"
        );
        let mut c = ChunkColumn::for_type(mysql_type::LONG_LONG);
        c.push_u64(7).unwrap();
        assert_eq!(encoded(&c), "01000000000000000700000000000000");
    }

    #[test]
    fn decode_round_trip_and_errors() {
        let mut c = ChunkColumn::var();
        for i in 0..20u8 {
            if i % 3 == 0 {
                c.push_null();
            } else {
                c.push_var(&vec![i; i as usize]).unwrap();
            }
        }
        let mut out = Vec::new();
        c.encode(&mut out).unwrap();
        let col = ChunkColumnRef::decode(&mut Reader::new(&out), None).unwrap();
        assert_eq!(col.len(), 20);
        for i in 0..20u8 {
            assert_eq!(col.is_null(i.into()), i % 3 == 0);
            if i % 3 != 0 {
                assert_eq!(col.get(i.into()).unwrap(), vec![i; i as usize]);
            }
        }
        for cut in 0..out.len() {
            assert!(ChunkColumnRef::decode(&mut Reader::new(&out[..cut]), None).is_err());
        }
        // null count larger than length
        let bad = [1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert!(ChunkColumnRef::decode(&mut Reader::new(&bad), Some(8)).is_err());
        // huge length
        let bad = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0];
        assert!(ChunkColumnRef::decode(&mut Reader::new(&bad), Some(40)).is_err());
        assert!(ChunkColumnRef::decode(&mut Reader::new(&bad), None).is_err());
    }
}
