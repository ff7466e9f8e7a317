//! Memtable rows: upstream's bincode 1.x encoding of `Vec<Row>`.
//!
//! ```text
//! u64 LE count
//! count × ( u64 LE key_len | key | u64 LE start_ts | u64 LE commit_ts | u64 LE value_len | value )
//! ```

use std::iter::FusedIterator;

use bytes::Bytes;

use crate::consts::MIN_ROW_LEN;
use crate::error::{Error, Field, Result};
use crate::read::{Reader, patch_u64};

/// One memtable row, borrowed from a decoded buffer (or from the caller, when encoding).
///
/// `key` is the full (outer) key, keyspace prefix included. An empty `value` is an MVCC delete
/// record, which the storage node ships like any other version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RowRef<'a> {
    /// The outer key.
    pub key: &'a [u8],
    /// Start timestamp of the transaction that wrote the row.
    pub start_ts: u64,
    /// Commit timestamp of that transaction (the row's MVCC version).
    pub commit_ts: u64,
    /// The value; empty for an MVCC delete.
    pub value: &'a [u8],
}

impl<'a> RowRef<'a> {
    /// Whether this row is an MVCC delete record (empty value).
    pub fn is_delete(&self) -> bool {
        self.value.is_empty()
    }

    /// Encoded size of the row: [`MIN_ROW_LEN`] plus the key and value lengths.
    pub fn encoded_len(&self) -> usize {
        MIN_ROW_LEN.saturating_add(self.key.len()).saturating_add(self.value.len())
    }
}

/// One memtable row whose key and value share the decoded buffer (see [`Rows::iter_bytes`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Row {
    /// The outer key.
    pub key: Bytes,
    /// Start timestamp of the transaction that wrote the row.
    pub start_ts: u64,
    /// Commit timestamp of that transaction (the row's MVCC version).
    pub commit_ts: u64,
    /// The value; empty for an MVCC delete.
    pub value: Bytes,
}

impl Row {
    /// Borrows the row.
    pub fn as_row_ref(&self) -> RowRef<'_> {
        RowRef {
            key: &self.key,
            start_ts: self.start_ts,
            commit_ts: self.commit_ts,
            value: &self.value,
        }
    }

    /// Whether this row is an MVCC delete record (empty value).
    pub fn is_delete(&self) -> bool {
        self.value.is_empty()
    }
}

/// Validated memtable rows over a shared buffer.
///
/// Validation is **eager**: [`Rows::decode`] walks every row once, checking each length against
/// the bytes that remain, and fails unless the rows fill the buffer exactly. Iterating
/// afterwards therefore cannot fail, and the row count, key bytes and value bytes are known
/// before the caller allocates anything for the rows. Neither decoding nor iteration allocates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    /// The whole encoding, count included; empty for [`Rows::default`].
    data: Bytes,
    len: usize,
    key_bytes: usize,
    value_bytes: usize,
}

impl Rows {
    /// Decodes and validates rows that fill `bytes` exactly.
    ///
    /// # Errors
    ///
    /// [`Error::Truncated`] or [`Error::BadLength`] when a field runs past the end,
    /// [`Error::BadRowCount`] when the count cannot fit in the bytes (checked before the rows
    /// are walked), [`Error::TrailingBytes`] when bytes remain after the last row.
    pub fn decode(bytes: Bytes) -> Result<Rows> {
        Rows::decode_at(bytes, 0)
    }

    /// As [`Rows::decode`], reporting offsets shifted by `base`.
    pub(crate) fn decode_at(data: Bytes, base: usize) -> Result<Rows> {
        let mut r = Reader::new(&data, base);
        let count_offset = r.offset();
        let count = r.u64(Field::RowCount)?;
        let have = r.remaining();
        let len = match usize::try_from(count) {
            Ok(n) if n <= have / MIN_ROW_LEN => n,
            _ => return Err(Error::BadRowCount { offset: count_offset, count, have }),
        };
        let mut key_bytes = 0usize;
        let mut value_bytes = 0usize;
        for _ in 0..len {
            let key = r.u64_prefixed(Field::KeyLen, Field::Key)?;
            r.u64(Field::StartTs)?;
            r.u64(Field::CommitTs)?;
            let value = r.u64_prefixed(Field::ValueLen, Field::Value)?;
            // Both sums are bounded by `data.len()`, so they cannot overflow.
            key_bytes += key.len();
            value_bytes += value.len();
        }
        if r.remaining() != 0 {
            return Err(Error::TrailingBytes {
                what: Field::Rows,
                offset: r.offset(),
                len: r.remaining(),
            });
        }
        Ok(Rows { data, len, key_bytes, value_bytes })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sum of the key lengths of all rows.
    pub fn key_bytes(&self) -> usize {
        self.key_bytes
    }

    /// Sum of the value lengths of all rows.
    pub fn value_bytes(&self) -> usize {
        self.value_bytes
    }

    /// The encoded rows, count included, exactly as received (empty for [`Rows::default`]).
    pub fn as_bytes(&self) -> &Bytes {
        &self.data
    }

    /// Iterates the rows as slices of the buffer; no allocation, no reference counting.
    pub fn iter(&self) -> RowsIter<'_> {
        RowsIter { rest: self.data.get(8..).unwrap_or_default(), remaining: self.len }
    }

    /// Iterates the rows as [`Row`]s whose key and value are [`Bytes`] sharing this buffer
    /// (no copy; two reference-count increments per non-empty key/value).
    pub fn iter_bytes(&self) -> RowsBytesIter<'_> {
        RowsBytesIter { data: &self.data, inner: self.iter() }
    }
}

impl<'a> IntoIterator for &'a Rows {
    type Item = RowRef<'a>;
    type IntoIter = RowsIter<'a>;

    fn into_iter(self) -> RowsIter<'a> {
        self.iter()
    }
}

/// Iterator over validated [`Rows`], yielding [`RowRef`]s.
#[derive(Clone, Debug)]
pub struct RowsIter<'a> {
    rest: &'a [u8],
    remaining: usize,
}

fn split_u64(buf: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = buf.split_first_chunk::<8>()?;
    Some((u64::from_le_bytes(*head), rest))
}

fn split_len_prefixed(buf: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = split_u64(buf)?;
    rest.split_at_checked(usize::try_from(len).ok()?)
}

/// Parses one row at the start of `buf`; `None` if it does not fit (impossible once
/// [`Rows::decode_at`] validated the buffer).
#[inline]
fn parse_row(buf: &[u8]) -> Option<(RowRef<'_>, &[u8])> {
    let (key, buf) = split_len_prefixed(buf)?;
    let (start_ts, buf) = split_u64(buf)?;
    let (commit_ts, buf) = split_u64(buf)?;
    let (value, buf) = split_len_prefixed(buf)?;
    Some((RowRef { key, start_ts, commit_ts, value }, buf))
}

impl<'a> Iterator for RowsIter<'a> {
    type Item = RowRef<'a>;

    #[inline]
    fn next(&mut self) -> Option<RowRef<'a>> {
        if self.remaining == 0 {
            return None;
        }
        match parse_row(self.rest) {
            Some((row, rest)) => {
                self.rest = rest;
                self.remaining -= 1;
                Some(row)
            }
            None => {
                self.remaining = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for RowsIter<'_> {}
impl FusedIterator for RowsIter<'_> {}

/// Iterator over validated [`Rows`], yielding [`Row`]s that share the buffer.
#[derive(Clone, Debug)]
pub struct RowsBytesIter<'a> {
    data: &'a Bytes,
    inner: RowsIter<'a>,
}

impl Iterator for RowsBytesIter<'_> {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        let row = self.inner.next()?;
        // `row.key` and `row.value` are sub-slices of `self.data` (the iterator walks it).
        Some(Row {
            key: self.data.slice_ref(row.key),
            start_ts: row.start_ts,
            commit_ts: row.commit_ts,
            value: self.data.slice_ref(row.value),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl ExactSizeIterator for RowsBytesIter<'_> {}
impl FusedIterator for RowsBytesIter<'_> {}

/// Appends one encoded row to `buf`.
#[inline]
pub(crate) fn put_row(buf: &mut Vec<u8>, row: RowRef<'_>) {
    buf.reserve(row.encoded_len());
    buf.extend_from_slice(&(row.key.len() as u64).to_le_bytes());
    buf.extend_from_slice(row.key);
    buf.extend_from_slice(&row.start_ts.to_le_bytes());
    buf.extend_from_slice(&row.commit_ts.to_le_bytes());
    buf.extend_from_slice(&(row.value.len() as u64).to_le_bytes());
    buf.extend_from_slice(row.value);
}

/// Appends rows to a caller's buffer one by one, then patches the count.
///
/// The count is written as a placeholder by [`RowsWriter::new`] and filled in by
/// [`RowsWriter::finish`]. Dropping the writer without finishing removes everything it wrote.
///
/// ```
/// use bytes::Bytes;
/// use rcop_wire::{Rows, RowsWriter};
///
/// let mut buf = Vec::new();
/// let mut w = RowsWriter::new(&mut buf);
/// w.push(b"k1", 5, 6, b"v1");
/// w.push(b"k2", 7, 8, b""); // an MVCC delete
/// assert_eq!(w.finish(), 2);
///
/// let rows = Rows::decode(Bytes::from(buf))?;
/// assert_eq!(rows.len(), 2);
/// assert!(rows.iter().nth(1).unwrap().is_delete());
/// # Ok::<(), rcop_wire::Error>(())
/// ```
#[derive(Debug)]
pub struct RowsWriter<'a> {
    pub(crate) buf: &'a mut Vec<u8>,
    start: usize,
    count: u64,
    finished: bool,
}

impl<'a> RowsWriter<'a> {
    /// Starts rows at the end of `buf`, writing a placeholder count.
    pub fn new(buf: &'a mut Vec<u8>) -> Self {
        let start = buf.len();
        buf.extend_from_slice(&0u64.to_le_bytes());
        RowsWriter { buf, start, count: 0, finished: false }
    }

    /// Appends one row.
    #[inline]
    pub fn push(&mut self, key: &[u8], start_ts: u64, commit_ts: u64, value: &[u8]) {
        self.push_row(RowRef { key, start_ts, commit_ts, value });
    }

    /// Appends one row.
    #[inline]
    pub fn push_row(&mut self, row: RowRef<'_>) {
        put_row(self.buf, row);
        self.count += 1;
    }

    /// Rows appended so far.
    pub fn row_count(&self) -> u64 {
        self.count
    }

    /// Bytes written so far, count included.
    pub fn encoded_len(&self) -> usize {
        self.buf.len().saturating_sub(self.start)
    }

    /// Patches the count and returns it.
    pub fn finish(mut self) -> u64 {
        self.finish_in_place()
    }

    pub(crate) fn finish_in_place(&mut self) -> u64 {
        patch_u64(self.buf, self.start, self.count);
        self.finished = true;
        self.count
    }
}

impl Drop for RowsWriter<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.buf.truncate(self.start);
        }
    }
}

/// Appends the encoding of `rows` to `buf`; returns the number of rows.
pub fn encode_rows_into<'r>(rows: impl IntoIterator<Item = RowRef<'r>>, buf: &mut Vec<u8>) -> u64 {
    let mut w = RowsWriter::new(buf);
    for row in rows {
        w.push_row(row);
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_row() -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&1u64.to_le_bytes());
        v.extend_from_slice(&2u64.to_le_bytes());
        v.extend_from_slice(b"ab");
        v.extend_from_slice(&10u64.to_le_bytes());
        v.extend_from_slice(&11u64.to_le_bytes());
        v.extend_from_slice(&1u64.to_le_bytes());
        v.extend_from_slice(b"z");
        v
    }

    #[test]
    fn writer_matches_hand_built_bytes() {
        let mut buf = vec![0xEE];
        let n = encode_rows_into(
            [RowRef { key: b"ab", start_ts: 10, commit_ts: 11, value: b"z" }],
            &mut buf,
        );
        assert_eq!(n, 1);
        assert_eq!(buf[0], 0xEE);
        assert_eq!(&buf[1..], one_row().as_slice());
    }

    #[test]
    fn decode_counts_rows_and_bytes() {
        let rows = Rows::decode(Bytes::from(one_row())).unwrap();
        assert_eq!((rows.len(), rows.key_bytes(), rows.value_bytes()), (1, 2, 1));
        let all: Vec<_> = rows.iter().collect();
        assert_eq!(all, [RowRef { key: b"ab", start_ts: 10, commit_ts: 11, value: b"z" }]);
        let shared: Vec<_> = rows.iter_bytes().collect();
        assert_eq!(shared[0].as_row_ref(), all[0]);
        assert_eq!(rows.as_bytes().as_ref(), one_row().as_slice());
    }

    #[test]
    fn default_rows_are_empty() {
        let rows = Rows::default();
        assert!(rows.is_empty());
        assert_eq!(rows.iter().count(), 0);
        assert_eq!(rows.iter_bytes().count(), 0);
    }

    #[test]
    fn count_too_large_for_the_bytes_is_rejected_before_walking() {
        let mut v = one_row();
        v[..8].copy_from_slice(&2u64.to_le_bytes());
        // 35 bytes follow the count: room for one 32-byte row, not two.
        assert!(matches!(
            Rows::decode(Bytes::from(v)),
            Err(Error::BadRowCount { offset: 0, count: 2, have: 35 })
        ));
    }

    #[test]
    fn bytes_after_the_last_row_are_rejected() {
        let mut v = one_row();
        v.push(0);
        assert!(matches!(
            Rows::decode(Bytes::from(v)),
            Err(Error::TrailingBytes { what: Field::Rows, offset: 43, len: 1 })
        ));
    }

    #[test]
    fn dropped_writer_leaves_the_buffer_as_it_was() {
        let mut buf = vec![1, 2, 3];
        {
            let mut w = RowsWriter::new(&mut buf);
            w.push(b"k", 1, 2, b"v");
        }
        assert_eq!(buf, [1, 2, 3]);
    }
}
