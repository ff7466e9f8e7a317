//! A throw-away public-key infrastructure for tests (feature `test-pki`): a CA made at
//! run time and certificates it issues, written as PEM files into a directory. Nothing is
//! committed; every test run has its own keys.

use std::io;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};

use crate::config::SecurityConfig;

fn other(e: rcgen::Error) -> io::Error {
    io::Error::other(e)
}

/// A CA (ECDSA P-256) and the certificates it issues, as files under one directory.
#[derive(Debug)]
pub struct TestPki {
    dir: PathBuf,
    ca: CertifiedIssuer<'static, KeyPair>,
}

impl TestPki {
    /// A new CA named `name`, written to `{dir}/ca.pem`.
    ///
    /// # Errors
    ///
    /// Key generation or file errors.
    pub fn new(dir: &Path, name: &str) -> io::Result<TestPki> {
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(other)?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        params.distinguished_name.push(DnType::CommonName, format!("{name} test CA"));
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().map_err(other)?)
            .map_err(other)?;
        std::fs::create_dir_all(dir)?;
        let pki = TestPki { dir: dir.to_owned(), ca };
        std::fs::write(pki.ca_path(), pki.ca.pem())?;
        Ok(pki)
    }

    /// The CA certificate's file.
    pub fn ca_path(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// Issues a certificate with subject CN `cn` and the subject alternative names `sans`
    /// (DNS names, or IP addresses such as `127.0.0.1`), valid for servers and clients,
    /// written to `{dir}/{cn}.pem` and `{dir}/{cn}.key` (replacing earlier files of that
    /// name); returns a `[security]` over them and this CA.
    ///
    /// # Errors
    ///
    /// Key generation or file errors.
    pub fn issue(&self, cn: &str, sans: &[&str]) -> io::Result<SecurityConfig> {
        let sans: Vec<String> = sans.iter().map(|s| (*s).to_owned()).collect();
        let mut params = CertificateParams::new(sans).map_err(other)?;
        params.distinguished_name.push(DnType::CommonName, cn);
        params.use_authority_key_identifier_extension = true;
        params.extended_key_usages = vec![
            rcgen::ExtendedKeyUsagePurpose::ServerAuth,
            rcgen::ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let key = KeyPair::generate().map_err(other)?;
        let cert = params.signed_by(&key, &self.ca).map_err(other)?;
        let (cert_path, key_path) =
            (self.dir.join(format!("{cn}.pem")), self.dir.join(format!("{cn}.key")));
        // Written beside, then renamed: a reloading server never reads half a file.
        for (path, text) in [(&key_path, key.serialize_pem()), (&cert_path, cert.pem())] {
            let tmp = path.with_extension("tmp");
            std::fs::write(&tmp, text)?;
            std::fs::rename(&tmp, path)?;
        }
        Ok(SecurityConfig::from_paths(self.ca_path(), cert_path, key_path))
    }
}
