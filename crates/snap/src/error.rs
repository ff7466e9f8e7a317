//! The one error type of `rcop-snap`.

use rcop_proto::kvrpcpb::LockInfo;
use rcop_sst::FileId;
use rcop_units::log::Redacted;

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a snapshot operation failed.
///
/// Variants group into what a caller does with them: [`Locked`](Error::Locked) and
/// [`WriteConflict`](Error::WriteConflict) become `coprocessor.Response` fields;
/// [`RangeOutOfShard`](Error::RangeOutOfShard) and [`InvalidRange`](Error::InvalidRange)
/// are request errors; [`MemData`](Error::MemData), [`ChangeSet`](Error::ChangeSet),
/// [`MemRow`](Error::MemRow) and [`LockRecord`](Error::LockRecord) mean corrupt input from the
/// other side; [`Sst`](Error::Sst) carries object-store and file errors (see
/// [`Error::is_retryable`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A lock blocks the read at the request's timestamp (→ `Response.locked`).
    #[error("key is locked by transaction {}", .0.lock_version)]
    Locked(Box<LockInfo>),
    /// Read-committed-check-ts isolation met a lock (→ a write conflict, as TiKV reports it).
    #[error("write conflict: key locked by transaction {lock_ts} (RCCheckTS read at {read_ts})")]
    WriteConflict {
        /// The locked outer key.
        key: Vec<u8>,
        /// The lock's transaction start ts.
        lock_ts: u64,
        /// The read ts.
        read_ts: u64,
    },
    /// A request range reaches outside the shard's range `[outer_start, outer_end)`.
    #[error(
        "request range [{}, {}) is outside the shard range [{}, {})",
        Redacted(start),
        Redacted(end),
        Redacted(shard_start),
        Redacted(shard_end)
    )]
    RangeOutOfShard {
        /// Request range start.
        start: Vec<u8>,
        /// Request range end (empty = unbounded).
        end: Vec<u8>,
        /// Shard range start.
        shard_start: Vec<u8>,
        /// Shard range end (empty = unbounded).
        shard_end: Vec<u8>,
    },
    /// A range whose start is after its end, or a shard range that cannot be one.
    #[error("invalid range [{}, {}): {reason}", Redacted(start), Redacted(end))]
    InvalidRange {
        /// Range start.
        start: Vec<u8>,
        /// Range end.
        end: Vec<u8>,
        /// Why it is invalid.
        reason: &'static str,
    },
    /// The mem-data bytes did not decode.
    #[error("malformed mem-data: {0}")]
    MemData(#[from] rcop_wire::Error),
    /// A mem-data row that decodes but cannot belong to the snapshot.
    #[error("mem-data row {index}: {reason}")]
    MemRow {
        /// Index of the row.
        index: usize,
        /// What is wrong (out of order, outside the shard, bad prefix).
        reason: &'static str,
    },
    /// The change set is malformed or inconsistent.
    #[error("invalid change set: {reason}{}", .file_id.map(|f| format!(" (file {f})")).unwrap_or_default())]
    ChangeSet {
        /// The file concerned, if any.
        file_id: Option<FileId>,
        /// What is wrong.
        reason: &'static str,
    },
    /// A file's contents disagree with what the change set says about it.
    #[error("file {file_id} does not match the change set: {reason}")]
    FileMismatch {
        /// The file.
        file_id: FileId,
        /// What differs.
        reason: &'static str,
    },
    /// A lock record (lock CF value) did not decode.
    #[error("malformed lock record at offset {offset}: {reason}")]
    LockRecord {
        /// Offset in the record.
        offset: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// An SST file or object-store operation failed.
    #[error("sst: {0}")]
    Sst(#[from] rcop_sst::Error),
    /// An argument the caller controls is out of bounds.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// Input this crate does not handle.
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// A transaction-file reference of mem-data v2, or one of its chunks, is inconsistent.
    #[error("txn file{}: {reason}", .chunk_id.map(|c| format!(" (chunk {c})")).unwrap_or_default())]
    TxnFile {
        /// The chunk concerned, if any.
        chunk_id: Option<u64>,
        /// What is wrong.
        reason: &'static str,
    },
}

impl Error {
    /// True when retrying the same operation later may succeed (object-store trouble).
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Sst(e) if e.is_retryable())
    }

    /// True when the error means the input from the other side is corrupt or inconsistent.
    pub fn is_corrupt_input(&self) -> bool {
        matches!(
            self,
            Error::MemData(_)
                | Error::MemRow { .. }
                | Error::ChangeSet { .. }
                | Error::FileMismatch { .. }
                | Error::LockRecord { .. }
                | Error::TxnFile { .. }
        ) || matches!(self, Error::Sst(e) if e.corrupt_kind().is_some())
    }

    #[cfg(feature = "store")]
    pub(crate) fn change_set(reason: &'static str) -> Self {
        Error::ChangeSet { file_id: None, reason }
    }

    #[cfg(feature = "store")]
    pub(crate) fn change_set_file(file_id: u64, reason: &'static str) -> Self {
        Error::ChangeSet { file_id: Some(FileId(file_id)), reason }
    }
}
