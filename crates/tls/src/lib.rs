//! TLS for both halves of the remote coprocessor, from one `[security]` section.
//!
//! A worker serves its HTTP endpoint and its gRPC `cop-addr` with a [`TlsServer`]; a storage
//! node calls workers, and a worker calls storage nodes, with the
//! [`client_config`](SecurityConfig::client_config) of its own section. The keys are
//! upstream's (`ca-path`, `cert-path`, `key-path`, `cert-allowed-cn`), plus two of ours:
//!
//! - `client-cert`: `"required"` (the default) or `"optional"` — whether a server asks every
//!   client for a certificate signed by the CA, or accepts clients without one (an
//!   allow-list still turns those away);
//! - `cert-reload-interval`: a server re-reads the three files when their size or mtime
//!   changed, checked at most this often (new connections get the new certificate; a file
//!   that does not parse keeps the previous one and is logged).
//!
//! Everything runs on rustls with the ring provider. Peer identities (the certificate's
//! subject CN and SAN DNS names) are read with `x509-parser` after the handshake, and a
//! non-empty `cert-allowed-cn` refuses any client whose identity is not listed.
//!
//! ```no_run
//! use rcop_tls::SecurityConfig;
//!
//! # fn demo() -> Result<(), rcop_tls::Error> {
//! let security = SecurityConfig::from_paths("ca.pem", "worker.pem", "worker.key")
//!     .with_allowed_cn(["storage-node"]);
//! security.validate()?;
//! let server = security.server(&[b"h2", b"http/1.1"])?;
//! let client = security.client_config(&[b"http/1.1"])?;
//! # let _ = (server, client);
//! # Ok(())
//! # }
//! ```
//!
//! With the `tonic` feature (default): [`incoming`], a TLS incoming stream for
//! `tonic::transport::Server::serve_with_incoming`, and [`GrpcConnector`], a connector for
//! `tonic::transport::Endpoint::connect_with_connector`. With `test-pki`: `TestPki`, a CA
//! made at run time that issues certificates into a directory, for hosts' tests.

mod auth;
mod config;
mod error;
#[cfg(feature = "tonic")]
mod grpc;
mod identity;
mod pem;
mod server;
#[cfg(feature = "test-pki")]
mod testing;

pub use auth::{
    AuthError, DEFAULT_AUTH_MAX_SKEW, HEADER_AUTH_SIGNATURE, HEADER_AUTH_TIMESTAMP, MIN_SECRET_LEN,
    SharedSecret, unix_ms,
};
pub use config::{ClientCertMode, DEFAULT_CERT_RELOAD_INTERVAL, SecurityConfig};
pub use error::{Error, Result};
#[cfg(feature = "tonic")]
pub use grpc::{
    GrpcConnector, PlainConn, TlsConn, TlsConnectInfo, incoming, incoming_limited,
    plain_incoming_limited,
};
pub use identity::PeerIdentity;
/// rustls's configurations, as [`SecurityConfig`] builds them.
pub use rustls::{ClientConfig, ServerConfig};
pub use server::{DEFAULT_HANDSHAKE_TIMEOUT, TlsServer};
#[cfg(feature = "test-pki")]
pub use testing::TestPki;
