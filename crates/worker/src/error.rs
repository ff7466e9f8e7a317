//! The crate's error type: start-up errors and the request errors that become HTTP statuses.

use std::time::Duration;

/// Errors of `rcop-worker`.
///
/// Start-up errors ([`Error::Config`], [`Error::Store`], [`Error::Limiter`], [`Error::Metrics`],
/// [`Error::Io`]) come from building or binding a worker. The request errors map to an HTTP
/// status with [`Error::status`]: 413 for an oversized body, 400 for a body that does not
/// decode or a snapshot that does not fit together, 503 for everything a retry may cure
/// (admission, memory, deadline, object-store trouble), 500 otherwise.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value is invalid.
    #[error("invalid config `{key}`: {reason}")]
    Config {
        /// The key (`dfs.bucket`), or `(file)` for a syntax error.
        key: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The object store could not be set up.
    #[error("object store: {0}")]
    Store(#[source] rcop_sst::Error),
    /// Admission refused the request (busy, memory), or the limiter could not be built.
    #[error("{0}")]
    Limiter(#[from] rcop_limiter::Error),
    /// Registering a metric failed.
    #[error("metrics: {0}")]
    Metrics(#[from] prometheus::Error),
    /// Binding or accepting failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The request body is larger than `max-request-size`.
    #[error("request body exceeds {limit} bytes")]
    BodyTooLarge {
        /// The cap in bytes.
        limit: u64,
    },
    /// The request body could not be read from the connection.
    #[error("failed to read request body: {0}")]
    Body(String),
    /// The request is well-formed protobuf but not a request a worker serves: bytes after
    /// the envelope, unsorted or overlapping key ranges (400).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The request is not signed with the shared secret (401), or its signature is refused
    /// (403).
    #[error("unauthenticated: {0}")]
    Unauthenticated(rcop_tls::AuthError),
    /// The request needs more memory than the whole reservation capacity (its body, its
    /// snapshot and `what`): it can never run here (413; a storage node runs it locally).
    #[error(
        "memory limit exceeded: with {what} the request needs {needed} bytes, more than the capacity of {capacity}"
    )]
    NeverFits {
        /// What pushed it past: its decompressed blocks, its execution.
        what: &'static str,
        /// Bytes the request would have needed.
        needed: u64,
        /// `memory-upper-threshold` in bytes.
        capacity: u64,
    },
    /// The engine's state outgrew what the memory reservation can give now (503: another
    /// worker, or this one later, may have room).
    #[error(
        "memory limit exceeded: the request's execution holds {held} bytes and {requested} more are not free"
    )]
    OverBudget {
        /// Bytes the engine asked for.
        requested: u64,
        /// Bytes it held.
        held: u64,
    },
    /// The engine stopped the request (cancelled).
    #[error("request stopped: {0}")]
    Aborted(String),
    /// The body did not arrive within `body-read-timeout` (408).
    #[error("request body not received within {0:?}")]
    BodyTimeout(Duration),
    /// The envelope or one of its parts does not decode.
    #[error("failed to decode cop request: {0}")]
    Decode(#[from] rcop_wire::Error),
    /// The snapshot could not be rebuilt from the request.
    #[error("failed to construct snapshot: {0}")]
    Snapshot(#[from] rcop_snap::Error),
    /// The snapshot was not rebuilt before the request's deadline.
    #[error("construct snapshot timeout after {0:?}")]
    SnapshotTimeout(Duration),
    /// The compute pool is shut down.
    #[error("compute pool is shut down")]
    PoolClosed,
    /// Executing the request panicked (a bug); the worker keeps serving.
    #[error("request execution panicked")]
    ExecutionPanicked,
    /// The storage node's delegate did not decode (delegate path).
    #[error("delegate: {0}")]
    Delegate(String),
    /// The gRPC server failed (delegate path).
    #[error("gRPC server: {0}")]
    Grpc(String),
    /// `[security]`: a certificate or key file cannot be used.
    #[error("TLS: {0}")]
    Tls(#[from] rcop_tls::Error),
}

impl Error {
    pub(crate) fn config(key: &'static str, reason: impl Into<String>) -> Self {
        Error::Config { key, reason: reason.into() }
    }

    /// The HTTP status a request failing with this error gets.
    pub fn status(&self) -> u16 {
        match self {
            Error::BodyTooLarge { .. } | Error::NeverFits { .. } => 413,
            Error::BodyTimeout(_) => 408,
            Error::Unauthenticated(e) => e.status(),
            Error::Body(_) | Error::Decode(_) | Error::InvalidRequest(_) => 400,
            Error::Snapshot(e) if e.is_retryable() => 503,
            // The reservation could not grow to the decompressed blocks: busy, as a
            // reservation that does not fit.
            Error::Snapshot(rcop_snap::Error::Sst(rcop_sst::Error::OverBudget { .. })) => 503,
            Error::Snapshot(e) if is_bad_request(e) => 400,
            Error::Limiter(e) if e.is_retryable() => 503,
            Error::OverBudget { .. } => 503,
            // More memory than this worker has at all: not retryable; a storage node runs a
            // 413 locally instead of re-sending it until the deadline.
            Error::Limiter(e) if e.never_fits() => 413,
            Error::SnapshotTimeout(_) => 503,
            _ => 500,
        }
    }

    /// The `type` label of `tikv_worker_remote_cop_failed_requests_counter` for this error.
    pub fn failure_label(&self) -> &'static str {
        match self {
            Error::BodyTooLarge { .. } => "body_too_large",
            Error::Body(_) => "body_read",
            Error::BodyTimeout(_) => "body_timeout",
            Error::Unauthenticated(_) => "unauthenticated",
            Error::NeverFits { .. } | Error::OverBudget { .. } => "memory_limit_exceeded",
            Error::InvalidRequest(_) => "invalid_request",
            Error::Decode(_) | Error::Delegate(_) => "decode",
            Error::Snapshot(_) => "snapshot",
            Error::SnapshotTimeout(_) => "snapshot_timeout",
            Error::Limiter(e) => e.rejection_label().unwrap_or("limiter"),
            _ => "internal",
        }
    }
}

/// Snapshot errors caused by the request itself (corrupt or inconsistent input, bad ranges).
fn is_bad_request(e: &rcop_snap::Error) -> bool {
    e.is_corrupt_input()
        || matches!(
            e,
            rcop_snap::Error::RangeOutOfShard { .. }
                | rcop_snap::Error::InvalidRange { .. }
                | rcop_snap::Error::Unsupported(_)
                // A file this build cannot read (encrypted): the storage node runs it.
                | rcop_snap::Error::Sst(rcop_sst::Error::Unsupported { .. })
        )
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
