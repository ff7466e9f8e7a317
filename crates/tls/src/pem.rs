//! Reading PEM files into rustls types.

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::{Error, Result};

/// Largest certificate or key file read (a chain of a few certificates is a few KiB).
const MAX_PEM_FILE: u64 = 1 << 20;

/// The ring provider every configuration uses.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn read(path: &Path) -> Result<Vec<u8>> {
    let err = |source| Error::Read { path: path.to_owned(), source };
    let len = std::fs::metadata(path).map_err(err)?.len();
    if len > MAX_PEM_FILE {
        return Err(Error::Pem {
            path: path.to_owned(),
            reason: format!("{len} bytes: larger than {MAX_PEM_FILE}"),
        });
    }
    std::fs::read(path).map_err(err)
}

/// Every certificate of a PEM file (at least one).
pub(crate) fn certs(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let bytes = read(path)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::Pem { path: path.to_owned(), reason: e.to_string() })?;
    if certs.is_empty() {
        return Err(Error::Pem { path: path.to_owned(), reason: "no CERTIFICATE block".into() });
    }
    Ok(certs)
}

/// The private key of a PEM file (PKCS#8, PKCS#1 or SEC1).
pub(crate) fn key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    let bytes = read(path)?;
    PrivateKeyDer::from_pem_slice(&bytes)
        .map_err(|e| Error::Pem { path: path.to_owned(), reason: format!("no private key: {e}") })
}

/// The CA certificates of a PEM file as a root store.
pub(crate) fn roots(path: &Path) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    for c in certs(path)? {
        roots.add(c).map_err(|e| Error::Pem { path: path.to_owned(), reason: e.to_string() })?;
    }
    Ok(roots)
}
