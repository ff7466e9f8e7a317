//! The crate's error type.

use std::fmt;

/// A part of the wire format, named in errors.
///
/// Integer fields (`…Len`, formats, the row count, timestamps) appear in
/// [`Error::Truncated`] when fewer bytes remain than the field needs; the length-prefixed
/// parts they describe appear in [`Error::BadLength`], [`Error::Protobuf`],
/// [`Error::TrailingBytes`] and [`Error::TooLarge`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field {
    /// The envelope's leading `u32` format number.
    EnvelopeFormat,
    /// The `u32` length of the serialized `coprocessor.Request`.
    RequestLen,
    /// The serialized `coprocessor.Request`.
    Request,
    /// The `u32` length of the mem-data.
    MemDataLen,
    /// The mem-data (the memtable rows and transaction-file references).
    MemData,
    /// The `u32` length of the serialized `enginepb.ChangeSet`.
    ChangeSetLen,
    /// The serialized `enginepb.ChangeSet` (the shard snapshot).
    ChangeSet,
    /// The mem-data's leading `u32` format number.
    MemDataFormat,
    /// The `u64` length of the rows in mem-data v2.
    RowsLen,
    /// The rows (a bincode `Vec<Row>`).
    Rows,
    /// The `u64` row count at the start of the rows.
    RowCount,
    /// The `u64` length of a row's key.
    KeyLen,
    /// A row's key.
    Key,
    /// A row's `u64` start timestamp.
    StartTs,
    /// A row's `u64` commit timestamp.
    CommitTs,
    /// The `u64` length of a row's value.
    ValueLen,
    /// A row's value.
    Value,
    /// The `u32` length of the serialized `enginepb.TxnFileRefs` in mem-data v2.
    TxnFileRefsLen,
    /// The serialized `enginepb.TxnFileRefs`.
    TxnFileRefs,
    /// The three `u32` crc32c checksums that end an envelope v2.
    Checksums,
}

impl Field {
    /// A short lowercase name, as used in error messages.
    pub const fn name(self) -> &'static str {
        match self {
            Field::EnvelopeFormat => "envelope format",
            Field::RequestLen => "request length",
            Field::Request => "request",
            Field::MemDataLen => "mem-data length",
            Field::MemData => "mem-data",
            Field::ChangeSetLen => "change set length",
            Field::ChangeSet => "change set",
            Field::MemDataFormat => "mem-data format",
            Field::RowsLen => "rows length",
            Field::Rows => "rows",
            Field::RowCount => "row count",
            Field::KeyLen => "key length",
            Field::Key => "key",
            Field::StartTs => "start ts",
            Field::CommitTs => "commit ts",
            Field::ValueLen => "value length",
            Field::Value => "value",
            Field::TxnFileRefsLen => "txn file refs length",
            Field::TxnFileRefs => "txn file refs",
            Field::Checksums => "checksums",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that can go wrong in this crate.
///
/// Decoding errors ([`Truncated`](Error::Truncated), [`BadFormat`](Error::BadFormat),
/// [`BadLength`](Error::BadLength), [`BadRowCount`](Error::BadRowCount),
/// [`TrailingBytes`](Error::TrailingBytes), [`Protobuf`](Error::Protobuf)) all mean the input is
/// corrupt or from an incompatible sender; retrying the same bytes cannot help. Each carries the
/// byte offset of the offending field, counted from the start of the buffer handed to the
/// decoder (for [`Envelope::decode_mem_data`](crate::Envelope::decode_mem_data), from the start
/// of the envelope body). Encoding errors ([`TooLarge`](Error::TooLarge),
/// [`TxnFileRefsNeedV2`](Error::TxnFileRefsNeedV2)) mean the caller asked for something the
/// format cannot express.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An export broke a rule of the export contract (see [`crate::ExportRows`] and
    /// [`crate::ChangeSetBuilder`]): a host bug caught on the storage node.
    #[error("export contract broken at row/file/range {row}: {rule}")]
    Contract {
        /// The rule, in words.
        rule: &'static str,
        /// Index of the offending row or range, or the id of the offending file.
        row: u64,
    },
    /// A fixed-width integer field runs past the end of the input.
    #[error("truncated {what} at offset {offset}: need {need} bytes, have {have}")]
    Truncated {
        /// The field being read.
        what: Field,
        /// Offset of the field.
        offset: usize,
        /// Bytes the field needs.
        need: usize,
        /// Bytes remaining at `offset`.
        have: usize,
    },
    /// A format number this crate does not know.
    #[error("unsupported {what} {value} at offset {offset}")]
    BadFormat {
        /// [`Field::EnvelopeFormat`] or [`Field::MemDataFormat`].
        what: Field,
        /// Offset of the format number.
        offset: usize,
        /// The format number found.
        value: u32,
    },
    /// A length prefix declares more bytes than remain (or more than `usize` can hold).
    #[error("{what} length {len} at offset {offset} exceeds the {have} bytes that follow it")]
    BadLength {
        /// The length-prefixed part.
        what: Field,
        /// Offset of the length prefix.
        offset: usize,
        /// The declared length.
        len: u64,
        /// Bytes remaining after the length prefix.
        have: usize,
    },
    /// The row count cannot be right: the remaining bytes cannot hold that many rows, each of
    /// which takes at least [`MIN_ROW_LEN`](crate::MIN_ROW_LEN) bytes.
    #[error("row count {count} at offset {offset} cannot fit in the {have} bytes that follow it")]
    BadRowCount {
        /// Offset of the row count.
        offset: usize,
        /// The declared row count.
        count: u64,
        /// Bytes remaining after the count.
        have: usize,
    },
    /// A length-delimited part holds bytes after its last element.
    #[error("{len} unexpected bytes after the {what} at offset {offset}")]
    TrailingBytes {
        /// [`Field::Rows`] or [`Field::MemData`].
        what: Field,
        /// Offset of the first unexpected byte.
        offset: usize,
        /// Number of unexpected bytes.
        len: usize,
    },
    /// A protobuf message did not decode.
    #[error("malformed {what} protobuf at offset {offset}")]
    Protobuf {
        /// [`Field::Request`], [`Field::ChangeSet`] or [`Field::TxnFileRefs`].
        what: Field,
        /// Offset of the message's first byte.
        offset: usize,
        /// What prost reported.
        #[source]
        source: prost::DecodeError,
    },
    /// A message holds more repeated entries than a worker decodes (each entry becomes a
    /// struct many times its encoded size, so they are counted first).
    #[error("{count} {what} in the message at offset {offset}, more than {max}")]
    TooMany {
        /// What is counted: `key ranges`, `change-set files`, …
        what: &'static str,
        /// Offset of the message.
        offset: usize,
        /// Entries found.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A part of an envelope v2 does not match its crc32c.
    #[error(
        "{what} at offset {offset} fails its crc32c: stored {stored:#010x}, computed {computed:#010x}"
    )]
    ChecksumMismatch {
        /// [`Field::Request`], [`Field::MemData`] or [`Field::ChangeSet`].
        what: Field,
        /// Offset of the part's first byte.
        offset: usize,
        /// The checksum the body carries.
        stored: u32,
        /// The checksum of the bytes received.
        computed: u32,
    },
    /// Encoding: a part is longer than its length prefix can describe.
    #[error("{what} of {len} bytes exceeds the format's limit of {max} bytes")]
    TooLarge {
        /// The part that is too long.
        what: Field,
        /// Its length.
        len: u64,
        /// The largest length the format accepts.
        max: u64,
    },
    /// Encoding: transaction-file references were given for mem-data v1, which cannot carry
    /// them.
    #[error("mem-data v1 cannot carry txn file refs; use v2")]
    TxnFileRefsNeedV2,
}

impl Error {
    /// The byte offset a decoding error refers to; `None` for encoding errors.
    pub fn offset(&self) -> Option<usize> {
        match self {
            Error::Truncated { offset, .. }
            | Error::BadFormat { offset, .. }
            | Error::BadLength { offset, .. }
            | Error::BadRowCount { offset, .. }
            | Error::TrailingBytes { offset, .. }
            | Error::ChecksumMismatch { offset, .. }
            | Error::TooMany { offset, .. }
            | Error::Protobuf { offset, .. } => Some(*offset),
            Error::TooLarge { .. } | Error::TxnFileRefsNeedV2 | Error::Contract { .. } => None,
        }
    }

    /// Whether the error comes from decoding malformed input (as opposed to an encoding limit).
    pub fn is_corrupt_input(&self) -> bool {
        self.offset().is_some()
    }
}

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
