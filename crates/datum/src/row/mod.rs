//! Row values: format v1 (datum pairs) and v2 (TiDB `rowcodec`).
//!
//! [`Row::parse`] tells them apart by the first byte: 128 is v2, anything else v1.

pub mod v1;
pub mod v2;

use crate::error::Result;

pub use v1::{RowV1, encode_row_v1};
pub use v2::{Lookup, Projection, RowEncoder, RowSlice, ValueKind};

/// A row value in either format.
#[derive(Debug, Clone, Copy)]
pub enum Row<'a> {
    /// Format v1.
    V1(RowV1<'a>),
    /// Format v2.
    V2(RowSlice<'a>),
}

/// One column as found in a row of either format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column<'a> {
    /// A v1 datum (flag included).
    Datum(&'a [u8]),
    /// A v2 value, to be read with the column's [`ValueKind`].
    V2(&'a [u8]),
    /// Stored as NULL.
    Null,
    /// Not in the row.
    Missing,
}

impl<'a> From<Lookup<'a>> for Column<'a> {
    /// A v2 lookup as a column: values stay v2 values.
    fn from(l: Lookup<'a>) -> Self {
        match l {
            Lookup::Value(v) => Column::V2(v),
            Lookup::Null => Column::Null,
            Lookup::Missing => Column::Missing,
        }
    }
}

impl<'a> Row<'a> {
    /// Detects the format and parses the header (v2) or wraps the bytes (v1).
    pub fn parse(data: &'a [u8]) -> Result<Self> {
        if data.first() == Some(&v2::CODEC_VER) {
            RowSlice::parse(data).map(Row::V2)
        } else {
            Ok(Row::V1(RowV1::new(data)))
        }
    }

    /// Looks column `id` up.
    pub fn get(&self, id: i64) -> Result<Column<'a>> {
        Ok(match self {
            Row::V2(r) => match r.get(id) {
                Lookup::Value(v) => Column::V2(v),
                Lookup::Null => Column::Null,
                Lookup::Missing => Column::Missing,
            },
            Row::V1(r) => match r.get(id)? {
                Some([crate::datum::flag::NIL]) => Column::Null,
                Some(d) => Column::Datum(d),
                None => Column::Missing,
            },
        })
    }
}
