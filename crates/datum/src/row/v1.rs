//! Row format v1: pairs of (column id as a VarInt datum, value as a value-mode datum).
//!
//! An empty row is the single NULL datum `00`. The int handle column is not stored.

use crate::codec::Reader;
use crate::datum::{self, Datum, Mode};
use crate::error::{Error, Result};

/// A v1 row borrowing its bytes. Lookups scan the pairs and never allocate.
#[derive(Debug, Clone, Copy)]
pub struct RowV1<'a> {
    data: &'a [u8],
}

impl<'a> RowV1<'a> {
    /// Wraps a v1 row. Structure is checked lazily by [`RowV1::get`] and eagerly by
    /// [`RowV1::validate`].
    pub fn new(data: &'a [u8]) -> Self {
        // `00` alone is the empty row.
        let data = if data == [datum::flag::NIL] { &[][..] } else { data };
        RowV1 { data }
    }

    /// Checks that the row is a well-formed sequence of (id, datum) pairs.
    pub fn validate(&self) -> Result<()> {
        self.columns().try_for_each(|c| c.map(|_| ()))
    }

    /// Iterates `(column id, encoded datum)` pairs. A malformed pair yields one error and
    /// ends the iteration.
    pub fn columns(&self) -> impl Iterator<Item = Result<(i64, &'a [u8])>> + 'a {
        let mut r = Reader::new(self.data);
        let mut failed = false;
        std::iter::from_fn(move || {
            if failed || r.is_empty() {
                return None;
            }
            let res = (|| {
                let id = datum::decode_int_datum(&mut r)?
                    .ok_or(Error::Invalid { what: "row v1", reason: "NULL column id" })?;
                let rest = r.rest();
                let (value, _) = datum::split_datum(rest)?;
                r.read_bytes(value.len(), "row v1 value")?;
                Ok((id, value))
            })();
            failed = res.is_err();
            Some(res)
        })
    }

    /// The encoded datum of column `id`, or `None` when the row does not hold it. When an id
    /// repeats, the last pair wins, as in TiDB and TiKV (which build a map).
    pub fn get(&self, id: i64) -> Result<Option<&'a [u8]>> {
        let mut found = None;
        for c in self.columns() {
            let (cid, value) = c?;
            if cid == id {
                found = Some(value);
            }
        }
        Ok(found)
    }
}

/// Appends a v1 row of `(column id, value)` pairs. An empty list writes `00`.
pub fn encode_row_v1(cols: &[(i64, Datum)], out: &mut Vec<u8>) -> Result<()> {
    if cols.is_empty() {
        out.push(datum::flag::NIL);
        return Ok(());
    }
    for (id, value) in cols {
        Datum::Int(*id).encode(Mode::Value, out)?;
        value.encode(Mode::Value, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example() {
        let mut out = Vec::new();
        encode_row_v1(&[(1, Datum::Int(10)), (2, Datum::Bytes(b"ab".to_vec()))], &mut out).unwrap();
        assert_eq!(hex::encode(&out), "08020814080402046162");
        let row = RowV1::new(&out);
        assert_eq!(row.get(1).unwrap(), Some(&[8u8, 0x14][..]));
        assert_eq!(row.get(2).unwrap(), Some(&[2u8, 4, b'a', b'b'][..]));
        assert_eq!(row.get(3).unwrap(), None);
        row.validate().unwrap();
    }

    #[test]
    fn empty_and_malformed() {
        let mut out = Vec::new();
        encode_row_v1(&[], &mut out).unwrap();
        assert_eq!(out, [0]);
        assert_eq!(RowV1::new(&out).get(1).unwrap(), None);
        // id without a value
        assert!(RowV1::new(&[8, 2]).get(5).is_err());
        // NULL id
        assert!(RowV1::new(&[0, 8, 2]).validate().is_err());
        // value with a bad flag
        assert!(RowV1::new(&[8, 2, 0x77]).validate().is_err());
        assert_eq!(RowV1::new(&[8, 2, 0x77]).columns().count(), 1);
        // A repeated id: the last value wins.
        assert_eq!(RowV1::new(&[8, 2, 8, 2, 8, 2, 8, 4]).get(1).unwrap(), Some(&[8u8, 4][..]));
    }
}
