//! The one thing the offload path needs from an HTTP stack: POST a body to a worker URL
//! before a deadline and hand back the status and the bytes.
//!
//! Everything above it — worker order, retries, backoff, failover, classification of the
//! answer — is [`RemoteClient`](crate::RemoteClient)'s, so a host with its own HTTP client
//! (or a test with none) implements only [`Transport`]. The default implementation is the
//! pooled hyper client, [`HyperTransport`](crate::HyperTransport) (feature `http-client`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use bytes::Bytes;

/// A boxed future that can move between threads, as [`Transport`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One POST to one worker.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Post<'a> {
    /// The worker's URL (`http://host:port/coprocessor` or `https://…`).
    pub url: &'a str,
    /// The offload envelope.
    pub body: Bytes,
    /// Give up (with [`TransportError::Timeout`]) when this instant passes.
    pub deadline: Instant,
    /// Headers to send besides `Content-Type: application/octet-stream` and
    /// `Accept: application/protobuf`, which every POST carries.
    pub headers: &'a [(&'static str, String)],
    /// Refuse a response body longer than this ([`TransportError::TooLarge`]).
    pub max_response_bytes: u64,
    /// For an `https://` URL, the name to verify the worker's certificate against (and send
    /// as SNI) instead of the URL's host: set for an address found by worker discovery
    /// (`https://10.0.0.5:19000/…` resolved from `https://workers.ns.svc:19000`), whose
    /// certificate names the service, not the address. `None`: the URL's host.
    pub server_name: Option<&'a str>,
}

impl<'a> Post<'a> {
    /// A POST of `body` to `url` before `deadline`, no extra headers, answers up to
    /// `max_response_bytes`.
    pub fn new(url: &'a str, body: Bytes, deadline: Instant, max_response_bytes: u64) -> Self {
        Post { url, body, deadline, headers: &[], max_response_bytes, server_name: None }
    }

    /// With these extra headers.
    pub fn with_headers(mut self, headers: &'a [(&'static str, String)]) -> Self {
        self.headers = headers;
        self
    }

    /// With this TLS server name ([`server_name`](Self::server_name)).
    pub fn with_server_name(mut self, server_name: &'a str) -> Self {
        self.server_name = Some(server_name);
        self
    }
}

/// Adds authentication headers to each POST: called once per attempt, with the body about
/// to be sent, so a signature can cover the body and a fresh timestamp.
///
/// With the `tls` feature, `rcop_tls::SharedSecret` is one (the HMAC a worker with
/// `[security] shared-secret-path` checks).
pub trait RequestSigner: Send + Sync + fmt::Debug {
    /// The headers that authenticate `body` sent to the worker path `path`.
    fn sign(&self, path: &str, body: &[u8]) -> Vec<(&'static str, String)>;
}

#[cfg(feature = "tls")]
impl RequestSigner for rcop_tls::SharedSecret {
    fn sign(&self, path: &str, body: &[u8]) -> Vec<(&'static str, String)> {
        self.headers_now(path, body).into()
    }
}

/// What a worker answered: any status, with its body.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransportReply {
    /// The HTTP status code.
    pub status: u16,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The whole body.
    pub body: Bytes,
}

impl TransportReply {
    /// A reply of `status` with `body` and an optional content type.
    pub fn new(status: u16, content_type: Option<String>, body: Bytes) -> Self {
        TransportReply { status, content_type, body }
    }

    /// Whether the content type is `application/protobuf` (any case, parameters allowed).
    pub fn is_protobuf(&self) -> bool {
        self.content_type.as_deref().is_some_and(is_protobuf_content_type)
    }
}

/// `application/protobuf`, any case, optionally followed by parameters.
pub(crate) fn is_protobuf_content_type(value: &str) -> bool {
    let mime = value.split(';').next().unwrap_or_default().trim();
    mime.eq_ignore_ascii_case(rcop_wire::CONTENT_TYPE_PROTOBUF)
}

/// Why a POST produced no reply.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// Connecting, sending or reading failed; another attempt may succeed.
    #[error("{0}")]
    Network(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The deadline passed first.
    #[error("deadline reached")]
    Timeout,
    /// The response body exceeded [`Post::max_response_bytes`].
    #[error("response body exceeds {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// The request could not be formed (a bad URL or header); not retried.
    #[error("bad request: {0}")]
    BadRequest(String),
}

impl TransportError {
    /// Wraps any I/O or protocol error as [`TransportError::Network`].
    pub fn network(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        TransportError::Network(Box::new(e))
    }
}

/// Sends offload bodies to workers. Implementations must be cheap to share (`&self`) and
/// honour [`Post::deadline`] and [`Post::max_response_bytes`]; they never retry — the
/// [`RemoteClient`](crate::RemoteClient) above decides that.
pub trait Transport: Send + Sync + fmt::Debug {
    /// POSTs `post.body` to `post.url` with `Content-Type: application/octet-stream`,
    /// `Accept: application/protobuf` and `post.headers`, and returns whatever status the
    /// worker answered, with its whole body.
    fn post<'a>(&'a self, post: Post<'a>) -> BoxFuture<'a, Result<TransportReply, TransportError>>;

    /// Waits `duration` (the backoff between retry rounds), on whatever timer the host's
    /// executor has.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protobuf_content_types() {
        assert!(is_protobuf_content_type("application/protobuf"));
        assert!(is_protobuf_content_type(" Application/Protobuf ; charset=binary"));
        assert!(!is_protobuf_content_type("application/protobuf-x"));
        assert!(!is_protobuf_content_type("text/plain"));
        assert!(!is_protobuf_content_type(""));
    }
}
