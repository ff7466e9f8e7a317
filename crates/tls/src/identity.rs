//! Who a peer certificate names: its subject CN and SAN DNS names.

use x509_parser::extensions::GeneralName;
use x509_parser::prelude::FromDer;

/// The identities of a client certificate, as `cert-allowed-cn` matches them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PeerIdentity {
    /// The subject's common names.
    pub common_names: Vec<String>,
    /// The subject alternative names of type DNS.
    pub dns_names: Vec<String>,
}

impl PeerIdentity {
    /// The identities of a DER certificate; `None` when it does not parse (after a
    /// successful handshake it always does).
    pub fn from_der(der: &[u8]) -> Option<PeerIdentity> {
        let (_, cert) = x509_parser::certificate::X509Certificate::from_der(der).ok()?;
        let common_names = cert
            .subject()
            .iter_common_name()
            .filter_map(|cn| cn.as_str().ok().map(str::to_owned))
            .collect();
        let dns_names = cert
            .subject_alternative_name()
            .ok()
            .flatten()
            .map(|san| {
                san.value
                    .general_names
                    .iter()
                    .filter_map(|n| match n {
                        GeneralName::DNSName(d) => Some((*d).to_owned()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(PeerIdentity { common_names, dns_names })
    }

    /// True when `allowed` is empty or names one of these identities (exact, as upstream's
    /// `cert-allowed-cn`).
    pub fn is_allowed(&self, allowed: &[String]) -> bool {
        allowed.is_empty()
            || self.common_names.iter().chain(&self.dns_names).any(|n| allowed.contains(n))
    }
}

impl std::fmt::Display for PeerIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CN {:?}, DNS {:?}", self.common_names, self.dns_names)
    }
}
