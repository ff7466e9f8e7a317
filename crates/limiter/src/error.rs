//! The crate's one error type.

use std::fmt;
use std::path::PathBuf;

/// Why a request was turned away while the worker is busy.
///
/// Every reason is retryable: the service answers 503 and the storage node tries again
/// (on another worker where there is one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BusyReason {
    /// The process stayed above the cop-limiter's memory line until the request's deadline.
    MemoryPressure,
    /// The permit wait queue (global or the keyspace's) was full.
    QueueFull,
    /// No permit became free before the request's deadline.
    PermitWaitTimeout,
}

impl BusyReason {
    /// The `type` label of `tikv_worker_remote_cop_failed_requests_counter` for this reason.
    pub fn label(self) -> &'static str {
        match self {
            BusyReason::MemoryPressure => "memory_pressure",
            BusyReason::QueueFull => "queue_full",
            BusyReason::PermitWaitTimeout => "wait_timeout",
        }
    }
}

impl fmt::Display for BusyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BusyReason::MemoryPressure => "memory pressure is too high",
            BusyReason::QueueFull => "permit wait queue is full",
            BusyReason::PermitWaitTimeout => "wait permit timeout",
        })
    }
}

/// Errors of `rcop-limiter`.
///
/// Admission errors ([`Error::ServerBusy`], [`Error::MemoryLimitExceeded`]) are retryable and map
/// to HTTP 503 — except a reservation larger than the whole capacity, which no wait can satisfy
/// ([`Error::never_fits`]); the others come from configuration or start-up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request was not admitted now; retrying later (or elsewhere) may succeed.
    #[error("server is busy: {reason}")]
    ServerBusy {
        /// What turned the request away.
        reason: BusyReason,
    },
    /// A memory reservation asked for more bytes than are free.
    #[error(
        "memory limit exceeded: requested {requested} bytes, {available} of {capacity} available, \
         short by {shortfall}"
    )]
    MemoryLimitExceeded {
        /// Bytes asked for.
        requested: u64,
        /// Bytes free when the reservation was tried.
        available: u64,
        /// The limiter's capacity in bytes.
        capacity: u64,
        /// `requested - available`.
        shortfall: u64,
    },
    /// A configuration value is out of range or inconsistent with another one.
    #[error("invalid config `{key}`: {reason}")]
    InvalidConfig {
        /// The key, with its section (`cop-limiter.wait-max-duration`).
        key: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A size, duration or memory-threshold string did not parse (see
    /// [`ParseError`](crate::ParseError) for the grammar's own errors).
    #[error("invalid {what} {input:?}: {reason}")]
    Parse {
        /// `"duration"` or `"size"` (a memory threshold is a size or a percentage).
        what: &'static str,
        /// The text that failed.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Reading or parsing a `/proc` or cgroup file failed.
    #[error("memory probe: cannot read {}: {reason}", path.display())]
    MemoryProbe {
        /// The file.
        path: PathBuf,
        /// The I/O or parse failure.
        reason: String,
    },
    /// The memory sampler thread could not be started.
    #[error("cannot start the memory sampler thread: {0}")]
    SamplerThread(#[source] std::io::Error),
    /// Registering a metric failed (usually a name already registered in that registry).
    #[error("metrics registration: {0}")]
    Metrics(#[from] prometheus::Error),
}

impl Error {
    /// True for admission rejections that a client should retry (the service answers 503).
    /// A reservation larger than the whole capacity is not: it can never succeed here.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::ServerBusy { .. })
            || matches!(self, Error::MemoryLimitExceeded { .. } if !self.never_fits())
    }

    /// True for a memory reservation larger than the limiter's whole capacity: the request
    /// can never be admitted by this worker, whatever it waits for.
    pub fn never_fits(&self) -> bool {
        matches!(self, Error::MemoryLimitExceeded { requested, capacity, .. } if requested > capacity)
    }

    /// The `type` label of `tikv_worker_remote_cop_failed_requests_counter`, for admission
    /// rejections; `None` for the other errors.
    pub fn rejection_label(&self) -> Option<&'static str> {
        match self {
            Error::ServerBusy { reason } => Some(reason.label()),
            Error::MemoryLimitExceeded { .. } => Some(MEMORY_LIMIT_EXCEEDED_LABEL),
            _ => None,
        }
    }

    pub(crate) fn busy(reason: BusyReason) -> Self {
        Error::ServerBusy { reason }
    }

    pub(crate) fn config(key: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidConfig { key, reason: reason.into() }
    }
}

impl From<rcop_units::ParseError> for Error {
    fn from(e: rcop_units::ParseError) -> Self {
        Error::Parse { what: e.quantity(), input: e.input().to_owned(), reason: e.reason() }
    }
}

/// The rejection label for [`Error::MemoryLimitExceeded`].
pub(crate) const MEMORY_LIMIT_EXCEEDED_LABEL: &str = "memory_limit_exceeded";

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_errors_are_retryable_unless_they_never_fit_and_labelled() {
        for reason in
            [BusyReason::MemoryPressure, BusyReason::QueueFull, BusyReason::PermitWaitTimeout]
        {
            let e = Error::busy(reason);
            assert!(e.is_retryable());
            assert_eq!(e.rejection_label(), Some(reason.label()));
        }
        let e =
            Error::MemoryLimitExceeded { requested: 6, available: 4, capacity: 8, shortfall: 2 };
        assert!(e.is_retryable() && !e.never_fits(), "fits once others release theirs");
        let e =
            Error::MemoryLimitExceeded { requested: 10, available: 4, capacity: 8, shortfall: 6 };
        assert!(!e.is_retryable() && e.never_fits(), "larger than the whole capacity");
        assert_eq!(e.rejection_label(), Some("memory_limit_exceeded"));
        assert_eq!(
            e.to_string(),
            "memory limit exceeded: requested 10 bytes, 4 of 8 available, short by 6"
        );
        let e = Error::config("cop-limiter.high-mem-ratio", "must be in (0, 1)");
        assert!(!e.is_retryable());
        assert_eq!(e.rejection_label(), None);
        assert_eq!(e.to_string(), "invalid config `cop-limiter.high-mem-ratio`: must be in (0, 1)");
        assert_eq!(
            Error::busy(BusyReason::PermitWaitTimeout).to_string(),
            "server is busy: wait permit timeout"
        );
    }
}
