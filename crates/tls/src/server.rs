//! A TLS server configuration that follows its certificate files, and the accept step that
//! enforces `cert-allowed-cn`.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use rustls::ServerConfig;
use rustls::server::WebPkiClientVerifier;
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::config::{ClientCertMode, SecurityConfig};
use crate::error::{Error, Result};
use crate::identity::PeerIdentity;
use crate::pem;

/// Default time a client has to finish its TLS handshake (a slow or silent client never
/// holds a connection longer than this before it is dropped).
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Size and modification time of each of the three files: a change of either reloads.
type Stamps = [Option<(u64, SystemTime)>; 3];

#[derive(Debug)]
struct State {
    config: Arc<ServerConfig>,
    stamps: Stamps,
    checked: Instant,
}

/// A TLS server: the rustls configuration of the moment (re-read when the certificate files
/// change, checked at most every `cert-reload-interval`), and the client allow-list.
/// Share one per listener (`Arc`).
#[derive(Debug)]
pub struct TlsServer {
    security: SecurityConfig,
    alpn: Vec<Vec<u8>>,
    state: Mutex<State>,
}

fn stamps(security: &SecurityConfig) -> Stamps {
    security.paths().map(|p| {
        let m = std::fs::metadata(p).ok()?;
        Some((m.len(), m.modified().ok()?))
    })
}

fn build(security: &SecurityConfig, alpn: &[Vec<u8>]) -> Result<ServerConfig> {
    let provider = pem::provider();
    let roots = Arc::new(pem::roots(&security.ca_path)?);
    let verifier = WebPkiClientVerifier::builder_with_provider(roots, Arc::clone(&provider));
    let verifier = match security.client_cert {
        ClientCertMode::Required => verifier,
        ClientCertMode::Optional => verifier.allow_unauthenticated(),
    }
    .build()
    .map_err(|e| Error::Verifier(e.to_string()))?;
    let certs = pem::certs(&security.cert_path)?;
    let key = pem::key(&security.key_path)?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)?;
    config.alpn_protocols = alpn.to_vec();
    Ok(config)
}

impl TlsServer {
    pub(crate) fn new(security: &SecurityConfig, alpn: &[&[u8]]) -> Result<TlsServer> {
        let alpn: Vec<Vec<u8>> = alpn.iter().map(|p| p.to_vec()).collect();
        let stamps = stamps(security);
        let config = Arc::new(build(security, &alpn)?);
        Ok(TlsServer {
            security: security.clone(),
            alpn,
            state: Mutex::new(State { config, stamps, checked: Instant::now() }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The configuration for a new connection: the current one, re-read first when the
    /// reload interval has passed and a file changed. A changed file that does not load
    /// (half written, mismatched key) keeps the previous configuration and is logged.
    pub fn config(&self) -> Arc<ServerConfig> {
        let mut state = self.lock();
        if state.checked.elapsed() >= self.security.cert_reload_interval.0 {
            state.checked = Instant::now();
            let now = stamps(&self.security);
            if now != state.stamps {
                match build(&self.security, &self.alpn) {
                    Ok(c) => {
                        tracing::info!(cert = %self.security.cert_path.display(), "TLS certificates reloaded");
                        state.config = Arc::new(c);
                        state.stamps = now;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "TLS certificate files changed but do not load; keeping the previous ones");
                    }
                }
            }
        }
        Arc::clone(&state.config)
    }

    /// The client identities accepted (`cert-allowed-cn`).
    pub fn allowed(&self) -> &[String] {
        &self.security.cert_allowed_cn
    }

    /// Checks a client's certificate chain (as the handshake left it) against
    /// `cert-allowed-cn`: the identity of its end-entity certificate, `None` for a client
    /// without one (allowed only with an empty list).
    ///
    /// # Errors
    ///
    /// [`Error::NotAllowed`].
    pub fn check_peer(
        &self,
        chain: Option<&[rustls::pki_types::CertificateDer<'_>]>,
    ) -> Result<Option<PeerIdentity>> {
        let allowed = self.allowed();
        let peer = chain.and_then(<[_]>::first).and_then(|c| PeerIdentity::from_der(c));
        match &peer {
            Some(p) if !p.is_allowed(allowed) => Err(Error::NotAllowed(p.to_string())),
            None if !allowed.is_empty() => Err(Error::NotAllowed("(no certificate)".into())),
            _ => Ok(peer),
        }
    }

    /// Runs the server side of the handshake on `tcp` within `timeout`, then checks the
    /// client against `cert-allowed-cn`.
    ///
    /// # Errors
    ///
    /// [`Error::Handshake`], [`Error::HandshakeTimeout`], [`Error::NotAllowed`].
    pub async fn accept(
        &self,
        tcp: TcpStream,
        timeout: Duration,
    ) -> Result<(TlsStream<TcpStream>, Option<PeerIdentity>)> {
        let acceptor = TlsAcceptor::from(self.config());
        let stream = tokio::time::timeout(timeout, acceptor.accept(tcp))
            .await
            .map_err(|_| Error::HandshakeTimeout(timeout))?
            .map_err(Error::Handshake)?;
        let peer = self.check_peer(stream.get_ref().1.peer_certificates())?;
        Ok((stream, peer))
    }
}
