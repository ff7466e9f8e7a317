//! `[security]`: the certificate files and who may connect.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rcop_units::ReadableDuration;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::pem;
use crate::server::TlsServer;

/// Default `cert-reload-interval`: certificate files are checked for changes at most every
/// 10 seconds (upstream reloads on a change of mtime; it gives no interval).
pub const DEFAULT_CERT_RELOAD_INTERVAL: Duration = Duration::from_secs(10);

/// Whether a TLS server asks clients for a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientCertMode {
    /// Every client presents a certificate signed by the CA (mutual TLS).
    #[default]
    Required,
    /// A client may connect without a certificate; one it presents must be signed by the CA.
    /// A non-empty `cert-allowed-cn` still refuses clients without a certificate.
    Optional,
}

/// `[security]`, upstream's keys and two of ours.
///
/// ```toml
/// [security]
/// ca-path = "/etc/rcop/ca.pem"       # the CA that signs every party's certificate
/// cert-path = "/etc/rcop/worker.pem" # this process's certificate chain (PEM)
/// key-path = "/etc/rcop/worker.key"  # its private key (PKCS#8, PKCS#1 or SEC1 PEM)
/// cert-allowed-cn = ["storage-node"] # client identities (CN or SAN DNS) a server accepts
/// client-cert = "required"           # or "optional"
/// cert-reload-interval = "10s"
/// shared-secret-path = "/etc/rcop/secret" # HMAC key of offload requests (≥ 16 bytes)
/// auth-max-skew = "5m"                    # how old a signed request may be
/// redact-info-log = true                  # no keys, values or paths in errors and logs
/// ```
///
/// All three paths or none: with none, TLS is off. `shared-secret-path` works with or
/// without TLS: a worker with a secret refuses unsigned offload requests, a storage node
/// with one signs every request it sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct SecurityConfig {
    /// PEM file of the CA certificate(s) that verify peers.
    pub ca_path: PathBuf,
    /// PEM file of this process's certificate chain.
    pub cert_path: PathBuf,
    /// PEM file of this process's private key.
    pub key_path: PathBuf,
    /// Client identities a server accepts (a certificate's subject CN or a SAN DNS name);
    /// empty accepts every certificate the CA signed.
    pub cert_allowed_cn: Vec<String>,
    /// Whether a server requires client certificates.
    pub client_cert: ClientCertMode,
    /// How often a server checks its certificate files for changes.
    pub cert_reload_interval: ReadableDuration,
    /// File holding the secret that signs offload requests (empty: no signing).
    pub shared_secret_path: PathBuf,
    /// Largest distance between a signed request's timestamp and the receiver's clock.
    pub auth_max_skew: ReadableDuration,
    /// Whether errors and logs hide keys, values and object paths (TiKV's key; default true
    /// here: set false only to debug).
    pub redact_info_log: bool,
}

impl Default for SecurityConfig {
    fn default() -> Self {
        SecurityConfig {
            ca_path: PathBuf::new(),
            cert_path: PathBuf::new(),
            key_path: PathBuf::new(),
            cert_allowed_cn: Vec::new(),
            client_cert: ClientCertMode::Required,
            cert_reload_interval: ReadableDuration(DEFAULT_CERT_RELOAD_INTERVAL),
            shared_secret_path: PathBuf::new(),
            auth_max_skew: ReadableDuration(crate::auth::DEFAULT_AUTH_MAX_SKEW),
            redact_info_log: true,
        }
    }
}

impl SecurityConfig {
    /// TLS with these three files, every other key at its default.
    pub fn from_paths(
        ca: impl Into<PathBuf>,
        cert: impl Into<PathBuf>,
        key: impl Into<PathBuf>,
    ) -> Self {
        SecurityConfig {
            ca_path: ca.into(),
            cert_path: cert.into(),
            key_path: key.into(),
            ..SecurityConfig::default()
        }
    }

    /// Sets [`cert_allowed_cn`](Self::cert_allowed_cn).
    #[must_use]
    pub fn with_allowed_cn<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.cert_allowed_cn = names.into_iter().map(Into::into).collect();
        self
    }

    /// Sets [`client_cert`](Self::client_cert).
    #[must_use]
    pub fn with_client_cert(mut self, mode: ClientCertMode) -> Self {
        self.client_cert = mode;
        self
    }

    /// Sets [`cert_reload_interval`](Self::cert_reload_interval).
    #[must_use]
    pub fn with_cert_reload_interval(mut self, interval: Duration) -> Self {
        self.cert_reload_interval = ReadableDuration(interval);
        self
    }

    /// True when the paths are set: TLS is on.
    pub fn enabled(&self) -> bool {
        !self.ca_path.as_os_str().is_empty()
    }

    /// Checks the keys without reading the files.
    ///
    /// # Errors
    ///
    /// [`Error::Config`]: some but not all of the three paths set, an empty allowed name,
    /// a zero reload interval, or an allow-list without TLS.
    pub fn validate(&self) -> Result<()> {
        let set = [&self.ca_path, &self.cert_path, &self.key_path]
            .iter()
            .filter(|p| !p.as_os_str().is_empty())
            .count();
        if set != 0 && set != 3 {
            return Err(Error::Config {
                key: "ca-path",
                reason: "ca-path, cert-path and key-path are set together or not at all".into(),
            });
        }
        if self.cert_allowed_cn.iter().any(|n| n.trim().is_empty()) {
            return Err(Error::Config { key: "cert-allowed-cn", reason: "an empty name".into() });
        }
        if set == 0 && !self.cert_allowed_cn.is_empty() {
            return Err(Error::Config {
                key: "cert-allowed-cn",
                reason: "needs TLS (ca-path, cert-path, key-path)".into(),
            });
        }
        if self.cert_reload_interval.is_zero() {
            return Err(Error::Config {
                key: "cert-reload-interval",
                reason: "must be greater than 0".into(),
            });
        }
        if self.auth_max_skew.is_zero() {
            return Err(Error::Config {
                key: "auth-max-skew",
                reason: "must be greater than 0".into(),
            });
        }
        Ok(())
    }

    /// The secret of `shared-secret-path`, read now; `None` when the key is not set.
    ///
    /// # Errors
    ///
    /// As [`SharedSecret::from_file`](crate::SharedSecret::from_file).
    pub fn shared_secret(&self) -> Result<Option<crate::SharedSecret>> {
        if self.shared_secret_path.as_os_str().is_empty() {
            return Ok(None);
        }
        crate::SharedSecret::from_file(&self.shared_secret_path).map(Some)
    }

    /// A server over these files that offers `alpn` (e.g. `[b"h2", b"http/1.1"]`), reads
    /// the files now and re-reads them when they change.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when TLS is off or the keys are invalid; the file and rustls errors
    /// of [`Error`].
    pub fn server(&self, alpn: &[&[u8]]) -> Result<TlsServer> {
        self.validate()?;
        if !self.enabled() {
            return Err(Error::Config { key: "ca-path", reason: "TLS is not configured".into() });
        }
        TlsServer::new(self, alpn)
    }

    /// A client configuration: peers are verified against the CA, and this process's
    /// certificate is presented when a server asks for one. `alpn` is offered in the
    /// handshake (`[b"h2"]` for gRPC, `[b"http/1.1"]` for the HTTP offload).
    ///
    /// # Errors
    ///
    /// As [`server`](Self::server).
    pub fn client_config(&self, alpn: &[&[u8]]) -> Result<Arc<rustls::ClientConfig>> {
        self.validate()?;
        if !self.enabled() {
            return Err(Error::Config { key: "ca-path", reason: "TLS is not configured".into() });
        }
        let roots = pem::roots(&self.ca_path)?;
        let certs = pem::certs(&self.cert_path)?;
        let key = pem::key(&self.key_path)?;
        let mut config = rustls::ClientConfig::builder_with_provider(pem::provider())
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_client_auth_cert(certs, key)?;
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(Arc::new(config))
    }

    pub(crate) fn paths(&self) -> [&Path; 3] {
        [&self.ca_path, &self.cert_path, &self.key_path]
    }
}
