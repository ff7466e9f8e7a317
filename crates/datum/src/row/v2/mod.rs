//! Row format v2 (TiDB `rowcodec`).
//!
//! ```text
//! [128][flag][u16 LE non_null_cnt][u16 LE null_cnt]
//! [non-null col ids ascending][null col ids ascending]
//! [end offset of each non-null value][values ...]
//! [checksum trailer, when flag has WITH_CHECKSUM]
//! ```
//! Small rows use 1-byte ids and u16 offsets; big rows (flag bit 0) use u32 for both.

use crate::codec::{self, Reader};
use crate::datum::flag;
use crate::decimal::{Decimal, Res};
use crate::duration::Duration;
use crate::error::{Error, Result};
use crate::time::{MAX_FSP, Time, TimeType};

mod encode;
mod projection;
mod value;

pub use encode::RowEncoder;
pub use projection::{Projection, RowShape, ShapedRow};
pub use value::{
    ValueKind, decode_v2_f64, decode_v2_i64, decode_v2_u64, encode_v2_i64, encode_v2_u64,
    v2_value_to_datum,
};

/// First byte of every v2 row.
pub const CODEC_VER: u8 = 128;
/// Flag bit: 4-byte ids and offsets.
pub const FLAG_BIG: u8 = 1;
/// Flag bit: a checksum trailer follows the values.
pub const FLAG_CHECKSUM: u8 = 2;
/// Checksum header bit: an extra u32 checksum follows the first.
pub const CHECKSUM_EXTRA: u8 = 0x08;

/// A parsed v2 row borrowing its bytes. Column lookups never allocate.
#[derive(Debug, Clone, Copy)]
pub struct RowSlice<'a> {
    big: bool,
    non_null_ids: &'a [u8],
    null_ids: &'a [u8],
    offsets: &'a [u8],
    values: &'a [u8],
    checksum: Option<Checksum>,
}

/// The checksum trailer of a v2 row, as stored (not verified here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checksum {
    /// The trailer's header byte.
    pub header: u8,
    /// The first CRC32.
    pub crc: u32,
    /// The optional second checksum.
    pub extra: Option<u32>,
}

impl<'a> RowSlice<'a> {
    /// Parses the header and locates the id, offset and value areas. Checks every area's length
    /// and that offsets ascend and stay within the values, so later lookups cannot fail on
    /// lengths.
    pub fn parse(data: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(data);
        let ver = r.read_u8("row v2 header")?;
        if ver != CODEC_VER {
            return Err(Error::Invalid { what: "row v2", reason: "codec version is not 128" });
        }
        let fl = r.read_u8("row v2 header")?;
        let non_null = usize::from(r.read_u16_le("row v2 header")?);
        let null = usize::from(r.read_u16_le("row v2 header")?);
        let big = fl & FLAG_BIG != 0;
        let w = if big { 4 } else { 1 };
        let ow = if big { 4 } else { 2 };
        let non_null_ids = r.read_bytes(non_null * w, "row v2 column ids")?;
        let null_ids = r.read_bytes(null * w, "row v2 null column ids")?;
        let offsets = r.read_bytes(non_null * ow, "row v2 offsets")?;
        let rest = r.rest();
        let mut row =
            RowSlice { big, non_null_ids, null_ids, offsets, values: &[], checksum: None };
        // Lookups binary-search the id lists: they must be strictly ascending, and no id may
        // be both NULL and non-NULL.
        let ascending =
            |ids: &[u8], n: usize| (1..n).all(|i| row.id_at(ids, i - 1) < row.id_at(ids, i));
        if !ascending(non_null_ids, non_null) || !ascending(null_ids, null) {
            return Err(Error::Invalid {
                what: "row v2",
                reason: "column ids not strictly ascending",
            });
        }
        if (0..null).any(|i| {
            row.search(non_null_ids, non_null, i64::from(row.id_at(null_ids, i))).is_some()
        }) {
            return Err(Error::Invalid { what: "row v2", reason: "column both NULL and non-NULL" });
        }
        let mut prev = 0usize;
        for i in 0..non_null {
            let end = row.offset_at(i);
            if end < prev {
                return Err(Error::Invalid { what: "row v2", reason: "offsets not ascending" });
            }
            prev = end;
        }
        if prev > rest.len() {
            return Err(Error::Eof { what: "row v2 values", need: prev, have: rest.len() });
        }
        let (values, trailer) = rest.split_at(prev);
        row.values = values;
        if fl & FLAG_CHECKSUM != 0 {
            let mut t = Reader::new(trailer);
            let header = t.read_u8("row v2 checksum")?;
            let crc = t.read_u32_le("row v2 checksum")?;
            let extra = if header & CHECKSUM_EXTRA != 0 {
                Some(t.read_u32_le("row v2 checksum")?)
            } else {
                None
            };
            row.checksum = Some(Checksum { header, crc, extra });
        }
        Ok(row)
    }

    /// True for big rows (4-byte ids and offsets).
    pub fn is_big(&self) -> bool {
        self.big
    }

    /// The checksum trailer, if the row has one.
    pub fn checksum(&self) -> Option<Checksum> {
        self.checksum
    }

    /// Number of non-NULL columns.
    pub fn non_null_count(&self) -> usize {
        self.offsets.len() / if self.big { 4 } else { 2 }
    }

    /// Number of NULL columns.
    pub fn null_count(&self) -> usize {
        self.null_ids.len() / if self.big { 4 } else { 1 }
    }

    #[inline]
    fn id_at(&self, ids: &[u8], i: usize) -> u32 {
        if self.big {
            let b = ids.get(i * 4..i * 4 + 4).unwrap_or(&[0; 4]);
            u32::from_le_bytes([b[0], b[1], b[2], b[3]])
        } else {
            u32::from(ids.get(i).copied().unwrap_or(0))
        }
    }

    #[inline]
    fn offset_at(&self, i: usize) -> usize {
        if self.big {
            let b = self.offsets.get(i * 4..i * 4 + 4).unwrap_or(&[0; 4]);
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
        } else {
            let b = self.offsets.get(i * 2..i * 2 + 2).unwrap_or(&[0; 2]);
            usize::from(u16::from_le_bytes([b[0], b[1]]))
        }
    }

    fn search(&self, ids: &[u8], n: usize, id: i64) -> Option<usize> {
        let id = u32::try_from(id).ok()?;
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.id_at(ids, mid).cmp(&id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Finds column `id` among the non-NULL columns and returns its value bytes.
    #[inline]
    pub fn search_in_non_null_ids(&self, id: i64) -> Option<&'a [u8]> {
        let i = self.search(self.non_null_ids, self.non_null_count(), id)?;
        let start = if i == 0 { 0 } else { self.offset_at(i - 1) };
        self.values.get(start..self.offset_at(i))
    }

    /// True when column `id` is stored as NULL.
    #[inline]
    pub fn search_in_null_ids(&self, id: i64) -> bool {
        self.search(self.null_ids, self.null_count(), id).is_some()
    }

    /// Looks a column up: its value bytes, NULL, or missing.
    #[inline]
    pub fn get(&self, id: i64) -> Lookup<'a> {
        if let Some(v) = self.search_in_non_null_ids(id) {
            Lookup::Value(v)
        } else if self.search_in_null_ids(id) {
            Lookup::Null
        } else {
            Lookup::Missing
        }
    }

    /// Iterates the non-NULL columns as `(id, value bytes)` in id order.
    pub fn non_null_columns(&self) -> impl Iterator<Item = (u32, &'a [u8])> + '_ {
        (0..self.non_null_count()).map(move |i| {
            let start = if i == 0 { 0 } else { self.offset_at(i - 1) };
            (
                self.id_at(self.non_null_ids, i),
                self.values.get(start..self.offset_at(i)).unwrap_or(&[]),
            )
        })
    }

    /// Iterates the ids of the NULL columns in id order.
    pub fn null_columns(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.null_count()).map(move |i| self.id_at(self.null_ids, i))
    }
}

/// The result of looking a column up in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// Stored, non-NULL: the encoded value.
    Value(&'a [u8]),
    /// Stored as NULL.
    Null,
    /// Not in the row (take the column's default).
    Missing,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_encode_unsigned() {
        let mut enc = RowEncoder::new();
        enc.uint(1, u64::MAX).int(2, -1);
        let mut out = Vec::new();
        enc.finish(&mut out).unwrap();
        assert_eq!(hex::encode(&out), "800002000000010208000900ffffffffffffffffff");
        let row = RowSlice::parse(&out).unwrap();
        assert_eq!(decode_v2_u64(row.search_in_non_null_ids(1).unwrap()).unwrap(), u64::MAX);
        assert_eq!(decode_v2_i64(row.search_in_non_null_ids(2).unwrap()).unwrap(), -1);
    }

    #[test]
    fn upstream_encode_big() {
        let mut enc = RowEncoder::new();
        enc.int(1, 1000).int(12, 2).null(335).int(3, 3).int(8, 32767);
        let mut out = Vec::new();
        enc.finish(&mut out).unwrap();
        let want = concat!(
            "800104000100",
            "01000000",
            "03000000",
            "08000000",
            "0c000000",
            "4f010000",
            "02000000",
            "03000000",
            "05000000",
            "06000000",
            "e80303ff7f02"
        );
        assert_eq!(hex::encode(&out), want);
        let row = RowSlice::parse(&out).unwrap();
        assert!(row.is_big());
        assert_eq!(row.get(335), Lookup::Null);
        assert_eq!(row.get(4), Lookup::Missing);
        assert_eq!(decode_v2_i64(row.search_in_non_null_ids(8).unwrap()).unwrap(), 32767);
        assert_eq!(decode_v2_i64(row.search_in_non_null_ids(12).unwrap()).unwrap(), 2);
        assert_eq!(row.non_null_columns().map(|c| c.0).collect::<Vec<_>>(), [1, 3, 8, 12]);
        assert_eq!(row.null_columns().collect::<Vec<_>>(), [335]);
    }

    #[test]
    fn checksum_trailer_accepted() {
        let mut enc = RowEncoder::new();
        enc.int(1, 7);
        let mut row = Vec::new();
        enc.finish(&mut row).unwrap();
        row[1] |= FLAG_CHECKSUM;
        row.push(CHECKSUM_EXTRA | 1);
        row.extend_from_slice(&0xDEADBEEFu32.to_le_bytes());
        row.extend_from_slice(&7u32.to_le_bytes());
        let r = RowSlice::parse(&row).unwrap();
        assert_eq!(r.checksum(), Some(Checksum { header: 9, crc: 0xDEADBEEF, extra: Some(7) }));
        assert_eq!(r.get(1), Lookup::Value(&[7]));
        // A checksum flag without its trailer is an error.
        assert!(RowSlice::parse(&row[..row.len() - 4]).is_err());
    }

    #[test]
    fn malformed_rows() {
        assert!(RowSlice::parse(&[]).is_err());
        assert!(RowSlice::parse(&[0x81, 0, 0, 0, 0, 0]).is_err());
        assert!(RowSlice::parse(&[0x80, 0, 1, 0, 0]).is_err());
        // one column whose end offset points past the values
        assert!(RowSlice::parse(&[0x80, 0, 1, 0, 0, 0, 1, 5, 0, 1]).is_err());
        // descending offsets
        assert!(RowSlice::parse(&[0x80, 0, 2, 0, 0, 0, 1, 2, 2, 0, 1, 0, 9, 9]).is_err());
        // ids out of order, repeated, or both NULL and non-NULL
        assert!(RowSlice::parse(&[0x80, 0, 2, 0, 0, 0, 5, 1, 1, 0, 2, 0, 0xAA, 0xBB]).is_err());
        assert!(RowSlice::parse(&[0x80, 0, 2, 0, 0, 0, 1, 1, 1, 0, 2, 0, 0xAA, 0xBB]).is_err());
        assert!(RowSlice::parse(&[0x80, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0xAA]).is_err());
        assert!(decode_v2_i64(&[1, 2, 3]).is_err());
        assert!(decode_v2_f64(&[1, 2, 3]).is_err());
        let mut out = Vec::new();
        assert!(v2_value_to_datum(&[1, 2, 3], ValueKind::Uint, &mut out).is_err());
        assert!(v2_value_to_datum(&[0x04, 0x01, 0x00], ValueKind::Json, &mut out).is_err());
    }

    #[test]
    fn encoder_rejects_bad_ids() {
        let mut out = Vec::new();
        assert!(RowEncoder::new().int(-1, 1).finish(&mut out).is_err());
        assert!(RowEncoder::new().int(1, 1).null(1).finish(&mut out).is_err());
        assert!(RowEncoder::new().int(1, 1).int(1, 2).finish(&mut out).is_err());
        // After an error the encoder is reset and usable.
        let mut enc = RowEncoder::new();
        assert!(enc.int(1, 1).int(1, 2).finish(&mut out).is_err());
        out.clear();
        enc.int(1, 1).finish(&mut out).unwrap();
        assert_eq!(out, [0x80, 0, 1, 0, 0, 0, 1, 1, 0, 1]);
    }
}
