//! The crate's one error type.

use std::fmt;
use std::sync::Arc;

use crate::types::FileId;

/// A shared, cloneable source error (errors travel through single-flight caches, so they clone).
pub type SharedSource = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while writing, reading, fetching or caching SST files.
///
/// Every variant that concerns one file names it; corruption also names the byte offset
/// of the structure that failed to decode. The variants are chosen by what a caller does
/// next: retry ([`Error::Retryable`]), report data loss ([`Error::Corrupt`],
/// [`Error::NotFound`]), fix configuration or credentials ([`Error::Config`],
/// [`Error::Permission`]), fix its own call ([`Error::InvalidInput`],
/// [`Error::NotPrefetched`]), or hand the file to a build with more features
/// ([`Error::Unsupported`]).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The object for this file does not exist in the store.
    #[error("file {file_id}: object {} not found", rcop_units::log::RedactedStr(path))]
    NotFound {
        /// The file that was asked for.
        file_id: FileId,
        /// The object key that was looked up.
        path: String,
    },
    /// A transient failure (5xx, timeout, connection reset) that persisted through the
    /// retry budget. Trying again later, or on another worker, may succeed.
    #[error("file {file_id}: transient storage failure after retries: {source}")]
    Retryable {
        /// The file being read or written.
        file_id: FileId,
        /// The last underlying error.
        source: SharedSource,
    },
    /// The store refused the credentials or the operation (401/403).
    #[error("file {file_id}: permission denied: {source}")]
    Permission {
        /// The file being read or written.
        file_id: FileId,
        /// The underlying error.
        source: SharedSource,
    },
    /// The store rejected the request for a reason that retrying will not fix
    /// (for example a 400 from a misconfigured bucket or region).
    #[error("file {file_id}: storage request rejected: {source}")]
    Rejected {
        /// The file being read or written.
        file_id: FileId,
        /// The underlying error.
        source: SharedSource,
    },
    /// The bytes of a file do not decode: truncated, wrong magic, checksum mismatch,
    /// offset or length out of bounds, corrupt compressed payload.
    #[error("file {file_id}: corrupt at offset {offset}: {reason}")]
    Corrupt {
        /// The file whose bytes are bad.
        file_id: FileId,
        /// Byte offset (from the start of the file) of the structure that failed.
        offset: u64,
        /// What was wrong.
        reason: CorruptReason,
    },
    /// The store configuration is unusable (missing bucket, bad URL, …).
    #[error("invalid storage configuration: {reason}")]
    Config {
        /// What is wrong.
        reason: String,
    },
    /// A caller broke a contract of a builder or reader (keys out of order, key too long,
    /// file larger than the format can address).
    #[error("invalid input: {reason}")]
    InvalidInput {
        /// What is wrong.
        reason: String,
    },
    /// A read needed a block that the prefetched set does not hold: the scan went
    /// outside the key ranges it prefetched.
    #[error("file {file_id}: block at offset {offset} was not prefetched")]
    NotPrefetched {
        /// The file of the block.
        file_id: FileId,
        /// File offset of the block.
        offset: u64,
    },
    /// The operation needs a Cargo feature of this crate that this build was compiled
    /// without (a Zstd block without the `zstd` feature). The bytes are not corrupt: a build
    /// with the feature reads or writes them.
    #[error(
        "file {file_id}: {what} needs the `{feature}` feature of rcop-sst, which this build lacks"
    )]
    Unsupported {
        /// The file being written or read.
        file_id: FileId,
        /// What was asked for (for example "zstd compression").
        what: &'static str,
        /// The missing Cargo feature.
        feature: &'static str,
    },
    /// A prefetch's budget refused the memory a block decompresses to (the request's memory
    /// reservation is full).
    #[error("file {file_id}: no memory budget for {bytes} more bytes of decompressed blocks")]
    OverBudget {
        /// The file being read.
        file_id: FileId,
        /// The bytes refused.
        bytes: u64,
    },
    /// A blocking decode task was cancelled or panicked (the runtime is shutting down).
    #[error("file {file_id}: background decode task failed: {reason}")]
    TaskFailed {
        /// The file being decoded.
        file_id: FileId,
        /// What the runtime reported.
        reason: String,
    },
}

/// Why bytes failed to decode. Kept as a small enum plus detail so tests can match on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorruptReason {
    /// The kind of corruption.
    pub kind: CorruptKind,
    /// Free-form detail (which field, which bound).
    pub detail: &'static str,
}

/// The kind of corruption found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CorruptKind {
    /// The file or a structure is shorter than its header says.
    Truncated,
    /// The footer's magic number is not one of ours.
    BadMagic,
    /// An unknown format version, compression, checksum or filter type.
    Unsupported,
    /// A stored checksum does not match the bytes.
    ChecksumMismatch,
    /// An offset or length points outside its file, section or block.
    OutOfBounds,
    /// A compressed payload does not decompress, or decompresses to the wrong size.
    Decompress,
    /// Values that decode but contradict each other (offsets not increasing, …).
    Inconsistent,
}

impl fmt::Display for CorruptReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.detail)
    }
}

impl Error {
    /// Builds an [`Error::Corrupt`].
    pub(crate) fn corrupt(
        file_id: FileId,
        offset: u64,
        kind: CorruptKind,
        detail: &'static str,
    ) -> Self {
        Error::Corrupt { file_id, offset, reason: CorruptReason { kind, detail } }
    }

    /// True when retrying the same operation later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Retryable { .. } | Error::TaskFailed { .. })
    }

    /// The kind of corruption, if this is [`Error::Corrupt`].
    pub fn corrupt_kind(&self) -> Option<CorruptKind> {
        match self {
            Error::Corrupt { reason, .. } => Some(reason.kind),
            _ => None,
        }
    }
}
