//! Mem-data: the storage node's memtable rows (and, in v2, transaction-file references).
//!
//! ```text
//! (empty)                                                    no memtable
//! u32 LE 1 | rows                                            v1: rows run to the end
//! u32 LE 2 | u64 LE rows_len | rows | u32 LE len | TxnFileRefs   v2
//! ```

use bytes::Bytes;
use rcop_proto::enginepb::TxnFileRefs;

use crate::consts::{MEM_DATA_V1, MEM_DATA_V2};
use crate::error::{Error, Field, Result};
use crate::pb::{decode_message, put_u32_prefixed_message};
use crate::read::{Reader, patch_u64};
use crate::rows::{RowRef, Rows, RowsWriter};

/// The two mem-data formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemDataFormat {
    /// [`MEM_DATA_V1`]: rows only.
    V1,
    /// [`MEM_DATA_V2`]: rows and transaction-file references.
    V2,
}

impl MemDataFormat {
    /// The `u32` written on the wire.
    pub const fn number(self) -> u32 {
        match self {
            MemDataFormat::V1 => MEM_DATA_V1,
            MemDataFormat::V2 => MEM_DATA_V2,
        }
    }

    /// The format with wire number `number`, if known.
    pub const fn from_number(number: u32) -> Option<Self> {
        match number {
            MEM_DATA_V1 => Some(MemDataFormat::V1),
            MEM_DATA_V2 => Some(MemDataFormat::V2),
            _ => None,
        }
    }
}

/// Decoded mem-data: validated rows plus the (still serialized) transaction-file references.
///
/// Decoding is strict inside the mem-data, which is itself length-delimited by the envelope:
/// v1 rows must run exactly to its end, v2 rows must fill `rows_len` exactly, and no bytes may
/// follow the v2 `TxnFileRefs` ([`Error::TrailingBytes`]). Upstream senders never write such
/// bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemData {
    format: Option<MemDataFormat>,
    rows: Rows,
    txn_file_refs: Bytes,
    txn_file_refs_offset: usize,
}

impl MemData {
    /// Decodes and validates mem-data; see [`Rows`] for what validation guarantees.
    ///
    /// Empty input is valid and means "no memtable".
    ///
    /// # Errors
    ///
    /// [`Error::BadFormat`] for a format other than 1 or 2; the errors of [`Rows::decode`];
    /// [`Error::Truncated`] / [`Error::BadLength`] for the v2 length fields;
    /// [`Error::TrailingBytes`] as described on [`MemData`]. Offsets count from the start of
    /// `bytes`.
    pub fn decode(bytes: Bytes) -> Result<MemData> {
        MemData::decode_at(bytes, 0)
    }

    pub(crate) fn decode_at(bytes: Bytes, base: usize) -> Result<MemData> {
        if bytes.is_empty() {
            return Ok(MemData::default());
        }
        let mut r = Reader::new(&bytes, base);
        let format_offset = r.offset();
        let number = r.u32(Field::MemDataFormat)?;
        match MemDataFormat::from_number(number) {
            Some(MemDataFormat::V1) => {
                let start = r.pos();
                let rows = Rows::decode_at(bytes.slice(start..), base.saturating_add(start))?;
                Ok(MemData {
                    format: Some(MemDataFormat::V1),
                    rows,
                    txn_file_refs: Bytes::new(),
                    txn_file_refs_offset: base.saturating_add(bytes.len()),
                })
            }
            Some(MemDataFormat::V2) => {
                let rows_range = r.u64_prefixed(Field::RowsLen, Field::Rows)?;
                let rows_offset = base.saturating_add(rows_range.start);
                let rows = Rows::decode_at(bytes.slice(rows_range), rows_offset)?;
                let refs_range = r.u32_prefixed(Field::TxnFileRefsLen, Field::TxnFileRefs)?;
                let txn_file_refs_offset = base.saturating_add(refs_range.start);
                if r.remaining() != 0 {
                    return Err(Error::TrailingBytes {
                        what: Field::MemData,
                        offset: r.offset(),
                        len: r.remaining(),
                    });
                }
                Ok(MemData {
                    format: Some(MemDataFormat::V2),
                    rows,
                    txn_file_refs: bytes.slice(refs_range),
                    txn_file_refs_offset,
                })
            }
            None => Err(Error::BadFormat {
                what: Field::MemDataFormat,
                offset: format_offset,
                value: number,
            }),
        }
    }

    /// The format, or `None` for empty mem-data (no memtable).
    pub fn format(&self) -> Option<MemDataFormat> {
        self.format
    }

    /// Whether the sender shipped a memtable at all (mem-data was not empty).
    pub fn has_memtable(&self) -> bool {
        self.format.is_some()
    }

    /// The rows; empty when there is no memtable.
    pub fn rows(&self) -> &Rows {
        &self.rows
    }

    /// The serialized `enginepb.TxnFileRefs`; empty for v1 and for no memtable.
    pub fn txn_file_refs_bytes(&self) -> &Bytes {
        &self.txn_file_refs
    }

    /// Decodes the transaction-file references (an empty message for v1 and no memtable).
    ///
    /// # Errors
    ///
    /// [`Error::Protobuf`] with the offset of the serialized message.
    pub fn decode_txn_file_refs(&self) -> Result<TxnFileRefs> {
        decode_message(&self.txn_file_refs, Field::TxnFileRefs, self.txn_file_refs_offset)
    }
}

/// Appends mem-data to a caller's buffer row by row, then patches the count and lengths.
///
/// Rows stream straight into the buffer; nothing is materialised on the side. Dropping the
/// writer without finishing removes everything it wrote.
///
/// ```
/// use bytes::Bytes;
/// use rcop_wire::{MemData, MemDataFormat, MemDataWriter};
///
/// let mut buf = Vec::new();
/// let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
/// w.push(b"x\0\0\x01t_1", 10, 11, b"value");
/// w.finish()?; // v2 with no txn file refs
///
/// let mem = MemData::decode(Bytes::from(buf))?;
/// assert_eq!(mem.format(), Some(MemDataFormat::V2));
/// assert_eq!(mem.rows().len(), 1);
/// # Ok::<(), rcop_wire::Error>(())
/// ```
#[derive(Debug)]
pub struct MemDataWriter<'a> {
    // Its own `Drop` runs after ours and is then a no-op (ours truncates further back).
    rows: RowsWriter<'a>,
    start: usize,
    format: MemDataFormat,
    finished: bool,
}

impl<'a> MemDataWriter<'a> {
    /// Starts mem-data of `format` at the end of `buf`.
    pub fn new(buf: &'a mut Vec<u8>, format: MemDataFormat) -> Self {
        let start = buf.len();
        buf.extend_from_slice(&format.number().to_le_bytes());
        if format == MemDataFormat::V2 {
            // rows_len placeholder, patched by `finish`.
            buf.extend_from_slice(&0u64.to_le_bytes());
        }
        MemDataWriter { rows: RowsWriter::new(buf), start, format, finished: false }
    }

    /// Appends one row.
    #[inline]
    pub fn push(&mut self, key: &[u8], start_ts: u64, commit_ts: u64, value: &[u8]) {
        self.rows.push(key, start_ts, commit_ts, value);
    }

    /// Appends one row.
    #[inline]
    pub fn push_row(&mut self, row: RowRef<'_>) {
        self.rows.push_row(row);
    }

    /// Rows appended so far.
    pub fn row_count(&self) -> u64 {
        self.rows.row_count()
    }

    /// The format being written.
    pub fn format(&self) -> MemDataFormat {
        self.format
    }

    /// Finishes without transaction-file references (v2 gets an empty `TxnFileRefs`); returns
    /// the mem-data's encoded length.
    ///
    /// # Errors
    ///
    /// None in practice; the signature matches
    /// [`finish_with_txn_file_refs`](Self::finish_with_txn_file_refs).
    pub fn finish(self) -> Result<usize> {
        self.finish_with(None)
    }

    /// Finishes with transaction-file references; returns the mem-data's encoded length.
    ///
    /// # Errors
    ///
    /// [`Error::TxnFileRefsNeedV2`] when writing v1 and `refs` is not empty;
    /// [`Error::TooLarge`] when the serialized refs exceed `u32::MAX` bytes. On error the
    /// buffer is restored to its length before [`MemDataWriter::new`].
    pub fn finish_with_txn_file_refs(self, refs: &TxnFileRefs) -> Result<usize> {
        self.finish_with(Some(refs))
    }

    fn finish_with(mut self, refs: Option<&TxnFileRefs>) -> Result<usize> {
        let has_refs = refs.is_some_and(|r| *r != TxnFileRefs::default());
        if self.format == MemDataFormat::V1 && has_refs {
            return Err(Error::TxnFileRefsNeedV2);
        }
        self.rows.finish_in_place();
        if self.format == MemDataFormat::V2 {
            let rows_len_at = self.start.saturating_add(4);
            let rows_len = self.rows.buf.len().saturating_sub(rows_len_at.saturating_add(8));
            patch_u64(self.rows.buf, rows_len_at, rows_len as u64);
            let empty = TxnFileRefs::default();
            put_u32_prefixed_message(self.rows.buf, Field::TxnFileRefs, refs.unwrap_or(&empty))?;
        }
        self.finished = true;
        Ok(self.rows.buf.len().saturating_sub(self.start))
    }
}

impl Drop for MemDataWriter<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.rows.buf.truncate(self.start);
        }
    }
}

/// Appends mem-data of `format` holding `rows` (and, for v2, `refs`) to `buf`; returns its
/// encoded length. See [`MemDataWriter`] to stream rows instead.
///
/// # Errors
///
/// As [`MemDataWriter::finish_with_txn_file_refs`].
pub fn encode_mem_data_into<'r>(
    format: MemDataFormat,
    rows: impl IntoIterator<Item = RowRef<'r>>,
    refs: &TxnFileRefs,
    buf: &mut Vec<u8>,
) -> Result<usize> {
    let mut w = MemDataWriter::new(buf, format);
    for row in rows {
        w.push_row(row);
    }
    w.finish_with_txn_file_refs(refs)
}
