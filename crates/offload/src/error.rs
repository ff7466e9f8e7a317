//! The crate's errors: [`Error`] for building an [`Offloader`](crate::Offloader),
//! [`SourceError`] for what a [`SnapshotSource`](crate::SnapshotSource) reports, and
//! [`RemoteError`] for how a remote call failed.

use std::sync::Arc;

use rcop_proto::coprocessor::Response;
use rcop_proto::errorpb;
use rcop_proto::kvrpcpb::LockInfo;

/// Errors of configuring and building an [`Offloader`](crate::Offloader).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The TOML did not parse or a value had the wrong shape; the message quotes the line.
    #[error("invalid offload configuration: {0}")]
    ConfigParse(#[source] Box<toml::de::Error>),
    /// A value parsed but is not acceptable.
    #[error("invalid offload configuration: `{key}` {reason}")]
    Config {
        /// The kebab-case key.
        key: &'static str,
        /// Why the value was rejected.
        reason: String,
    },
    /// The TLS configuration could not be built.
    #[cfg(feature = "tls")]
    #[error("TLS setup failed: {0}")]
    Tls(#[from] rustls::Error),
    /// Built without the `http-client` feature and without a
    /// [`Transport`](crate::Transport).
    #[error("no transport: give the builder one, or enable the `http-client` feature")]
    NoTransport,
    /// Worker discovery needs a Tokio runtime for its task: build the
    /// [`Offloader`](crate::Offloader) on one, give it one
    /// (`Builder::runtime`), or set
    /// `remote-coprocessor-resolve-interval = "0s"`.
    #[error(
        "`remote-coprocessor-addr` names a DNS name to resolve and there is no Tokio runtime \
         to resolve it on (build on a runtime, or set remote-coprocessor-resolve-interval = \"0s\")"
    )]
    NoRuntime,
    /// A worker name did not resolve, or resolved to no address; its previous addresses
    /// are still used.
    #[error("resolving worker name {name:?} failed: {source}")]
    Resolve {
        /// The DNS name.
        name: String,
        /// The resolver's error (`TimedOut` for no answer in time, `NotFound` for an empty
        /// one).
        #[source]
        source: std::io::Error,
    },
    /// A metric could not be registered (usually: already registered on that registry).
    #[error("registering offload metrics failed: {0}")]
    Metrics(#[from] prometheus::Error),
}

/// What a [`SnapshotSource`](crate::SnapshotSource) reports instead of an estimate or an
/// export. Each variant becomes a field of the `coprocessor.Response` sent back to the client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// A lock blocks the read at `start_ts` (→ `Response.locked`).
    #[error("key is locked (primary {}, lock ts {})", rcop_units::log::Redacted(&.0.primary_lock), .0.lock_version)]
    Locked(Box<LockInfo>),
    /// The request does not fit this shard (→ `Response.region_error`), e.g. a range
    /// outside the shard or a stale epoch.
    #[error("region error: {}", .0.message)]
    Region(Box<errorpb::Error>),
    /// The storage failed (→ `Response.other_error`).
    #[error("storage error: {0}")]
    Storage(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl SourceError {
    /// Wraps any storage error.
    pub fn storage(e: impl std::error::Error + Send + Sync + 'static) -> SourceError {
        SourceError::Storage(Box::new(e))
    }

    /// The response that reports this error to the client.
    pub fn to_response(&self) -> Response {
        match self {
            SourceError::Locked(lock) => {
                Response { locked: Some(LockInfo::clone(lock)), ..Response::default() }
            }
            SourceError::Region(e) => {
                Response { region_error: Some(errorpb::Error::clone(e)), ..Response::default() }
            }
            SourceError::Storage(_) => {
                Response { other_error: self.to_string(), ..Response::default() }
            }
        }
    }

    /// The `rcop_offload_request_error_total` reason label.
    pub fn reason(&self) -> &'static str {
        match self {
            SourceError::Locked(_) => "lock",
            SourceError::Region(_) => "region",
            SourceError::Storage(_) => "other",
        }
    }
}

/// How a remote call failed. Only [`Network`](Self::Network) and
/// [`ServiceUnavailable`](Self::ServiceUnavailable) are retried.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// No worker URL is configured.
    #[error("no remote coprocessor worker is configured")]
    NoWorker,
    /// The request body could not be assembled.
    #[error("assembling the offload request failed: {0}")]
    Envelope(#[from] rcop_wire::Error),
    /// The HTTP request could not be built (not retried; cannot happen with a validated
    /// configuration).
    #[error("building the HTTP request for {worker} failed: {reason}")]
    Request {
        /// The worker URL.
        worker: Arc<str>,
        /// The transport's reason.
        reason: String,
    },
    /// Connecting, sending or reading the response failed (retryable).
    #[error("network error talking to {worker}: {source}")]
    Network {
        /// The worker URL.
        worker: Arc<str>,
        /// The transport error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The worker answered 503 without a protobuf body (retryable).
    #[error("worker {worker} is unavailable (503): {body}")]
    ServiceUnavailable {
        /// The worker URL.
        worker: Arc<str>,
        /// The response body as text (truncated).
        body: String,
    },
    /// The worker answered another non-2xx status without a protobuf body.
    #[error("worker {worker} answered {status}: {body}")]
    Status {
        /// The worker URL.
        worker: Arc<str>,
        /// The HTTP status code.
        status: u16,
        /// The response body as text (truncated).
        body: String,
    },
    /// The body was not a `coprocessor.Response`.
    #[error("malformed response from {worker}: {source}")]
    MalformedResponse {
        /// The worker URL.
        worker: Arc<str>,
        /// The decode error.
        #[source]
        source: prost::DecodeError,
    },
    /// The response body exceeded `remote-coprocessor-max-response-size`.
    #[error("response from {worker} exceeds {limit} bytes")]
    ResponseTooLarge {
        /// The worker URL.
        worker: Arc<str>,
        /// The configured limit.
        limit: u64,
    },
    /// The request deadline passed before a worker answered.
    #[error("deadline exceeded after {attempts} attempt(s){}", last_error_suffix(.last))]
    DeadlineExceeded {
        /// Attempts started before the deadline.
        attempts: u32,
        /// The last retryable failure, if any attempt finished.
        last: Option<Box<RemoteError>>,
    },
    /// The worker answered that it cannot run the DAG (an older worker than this node's
    /// capability check, or another implementation): the request runs locally.
    #[error("worker {worker} cannot run the request: {message}")]
    Unsupported {
        /// The worker URL.
        worker: Arc<str>,
        /// The worker's message.
        message: String,
    },
    /// The pages of a non-paging answer add up to more than
    /// `remote-coprocessor-max-whole-response-size`: the request runs locally.
    #[error("the whole answer exceeds {limit} bytes")]
    AnswerTooLarge {
        /// The configured limit.
        limit: u64,
    },
    /// A worker cut a non-paging answer at a point it cannot be resumed from exactly (a
    /// page range that does not advance, or a Limit under a filter): the request runs
    /// locally.
    #[error("cannot resume the answer of {worker}: {reason}")]
    Unresumable {
        /// The worker URL.
        worker: Arc<str>,
        /// Why.
        reason: String,
    },
    /// Every worker failed retryably once and `fallback-to-local` is on.
    #[error("all workers failed ({attempts} attempt(s)): {last}")]
    AllWorkersFailed {
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        last: Box<RemoteError>,
    },
}

fn last_error_suffix(last: &Option<Box<RemoteError>>) -> String {
    last.as_ref().map(|e| format!("; last error: {e}")).unwrap_or_default()
}

impl RemoteError {
    /// Whether another attempt (on this or another worker) may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, RemoteError::Network { .. } | RemoteError::ServiceUnavailable { .. })
    }

    /// Whether the remote path ended without an answer in a way `fallback-to-local` covers:
    /// a retryable failure, all workers failing, or the deadline.
    pub fn allows_fallback(&self) -> bool {
        self.is_retryable()
            || matches!(
                self,
                RemoteError::DeadlineExceeded { .. } | RemoteError::AllWorkersFailed { .. }
            )
    }

    /// Whether no worker can answer this request as sent, so that it must run on the
    /// storage node whatever `fallback-to-local` says: the worker cannot run the DAG, it
    /// refused the body as malformed (400) or too large (413), or a non-paging answer
    /// could not be assembled whole.
    pub fn requires_local(&self) -> bool {
        match self {
            RemoteError::Unsupported { .. }
            | RemoteError::AnswerTooLarge { .. }
            | RemoteError::Unresumable { .. } => true,
            RemoteError::Status { status, .. } => matches!(status, 400 | 413),
            _ => false,
        }
    }

    /// The `rcop_offload_request_error_total` reason label.
    pub fn reason(&self) -> &'static str {
        match self {
            RemoteError::NoWorker => "remote_no_worker",
            RemoteError::Unsupported { .. } => "remote_unsupported",
            RemoteError::AnswerTooLarge { .. } => "remote_answer_too_large",
            RemoteError::Unresumable { .. } => "remote_unresumable",
            RemoteError::Status { status: 400, .. } => "remote_bad_request",
            RemoteError::Status { status: 413, .. } => "remote_payload_too_large",
            RemoteError::Envelope(_) | RemoteError::Request { .. } => "remote_request",
            RemoteError::Network { .. } => "remote_network",
            RemoteError::ServiceUnavailable { .. } => "remote_service_unavailable",
            RemoteError::Status { .. } => "remote_status",
            RemoteError::MalformedResponse { .. } | RemoteError::ResponseTooLarge { .. } => {
                "remote_malformed_response"
            }
            RemoteError::DeadlineExceeded { .. } => "deadline",
            RemoteError::AllWorkersFailed { last, .. } => last.reason(),
        }
    }

    /// The response that reports this failure to the client, as upstream: the deadline
    /// becomes a `ServerIsBusy` region error "deadline exceeded" (the client backs off and
    /// retries), everything else an `other_error`.
    pub fn to_response(&self) -> Response {
        match self {
            RemoteError::DeadlineExceeded { .. } => Response {
                region_error: Some(errorpb::Error {
                    message: "deadline exceeded".to_owned(),
                    server_is_busy: Some(errorpb::ServerIsBusy {
                        reason: "deadline exceeded".to_owned(),
                        ..errorpb::ServerIsBusy::default()
                    }),
                    ..errorpb::Error::default()
                }),
                ..Response::default()
            },
            other => Response { other_error: other.to_string(), ..Response::default() },
        }
    }
}
