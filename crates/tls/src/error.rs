//! Errors of TLS setup and of accepting a client.

use std::path::PathBuf;
use std::time::Duration;

/// What can go wrong building a TLS configuration or accepting a connection.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A `[security]` value is invalid; `key` names it.
    #[error("invalid config `security.{key}`: {reason}")]
    Config {
        /// The key, e.g. `ca-path`.
        key: &'static str,
        /// Why.
        reason: String,
    },
    /// A certificate or key file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file holds no usable PEM certificate or key.
    #[error("{}: {reason}", path.display())]
    Pem {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// rustls refused the configuration (e.g. a key that does not match the certificate).
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
    /// The client-certificate verifier cannot be built (e.g. an empty CA file).
    #[error("client certificate verifier: {0}")]
    Verifier(String),
    /// The TLS handshake failed (a bad certificate, a protocol error, a reset).
    #[error("TLS handshake: {0}")]
    Handshake(std::io::Error),
    /// The client did not finish its handshake in time.
    #[error("TLS handshake timed out after {0:?}")]
    HandshakeTimeout(Duration),
    /// The client's certificate names no identity of `cert-allowed-cn`.
    #[error("client identity {0} is not in cert-allowed-cn")]
    NotAllowed(String),
}

impl Error {
    /// A short label for metrics of refused connections: `handshake`, `timeout`,
    /// `not_allowed`, or `config` for setup errors.
    pub fn reason_label(&self) -> &'static str {
        match self {
            Error::Handshake(_) => "handshake",
            Error::HandshakeTimeout(_) => "timeout",
            Error::NotAllowed(_) => "not_allowed",
            _ => "config",
        }
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
