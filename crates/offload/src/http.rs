//! The default [`Transport`]: hyper-util's pooled HTTP/1.1 client on Tokio, with rustls on
//! ring for `https://` workers when the `tls` feature is on.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::Uri;
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rcop_wire::{CONTENT_TYPE_OCTET_STREAM, CONTENT_TYPE_PROTOBUF};

use crate::config::Config;
use crate::error::Error;
use crate::transport::{BoxFuture, Post, Transport, TransportError, TransportReply};

#[cfg(feature = "tls")]
type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(not(feature = "tls"))]
type Connector = HttpConnector;

/// POSTs over pooled HTTP/1.1 connections (hyper-util's pool: `remote-coprocessor-pool-*`),
/// so repeated requests to a worker reuse one TCP (and TLS) connection. Requires a Tokio
/// runtime with I/O and time enabled on the thread that polls its futures.
///
/// A [`Post::server_name`] (an address found by worker discovery) is the name its `https://`
/// connection verifies the certificate against and sends as SNI: the transport remembers it
/// per address, and its connector asks that table first.
#[derive(Clone, Debug)]
pub struct HyperTransport {
    http: Client<Connector, Full<Bytes>>,
    #[cfg(feature = "tls")]
    server_names: std::sync::Arc<server_names::ServerNames>,
}

impl HyperTransport {
    /// A transport with `config`'s connect timeout and pool settings, trusting the Mozilla
    /// root certificates for `https://` workers (rustls on the ring provider).
    ///
    /// # Errors
    ///
    /// [`Error::Tls`] when the TLS configuration cannot be built.
    pub fn new(config: &Config) -> Result<HyperTransport, Error> {
        #[cfg(feature = "tls")]
        {
            use hyper_rustls::ConfigBuilderExt;
            let provider = rustls::crypto::ring::default_provider();
            let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(provider))
                .with_safe_default_protocol_versions()?
                .with_webpki_roots()
                .with_no_client_auth();
            Ok(HyperTransport::with_tls(config, tls))
        }
        #[cfg(not(feature = "tls"))]
        {
            Ok(HyperTransport::from_connector(config, http_connector(config)))
        }
    }

    /// A transport with the caller's TLS configuration (private CAs, client certificates).
    /// Its ALPN list is replaced by the transport's own (HTTP/1.1).
    #[cfg(feature = "tls")]
    pub fn with_tls(config: &Config, mut tls: rustls::ClientConfig) -> HyperTransport {
        // hyper-rustls sets ALPN itself and panics on a configuration that already has one.
        tls.alpn_protocols.clear();
        let server_names = std::sync::Arc::new(server_names::ServerNames::default());
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .with_server_name_resolver(server_names::Resolve(server_names.clone()))
            .enable_http1()
            .wrap_connector(http_connector(config));
        HyperTransport { http: client(config, connector), server_names }
    }

    #[cfg(not(feature = "tls"))]
    fn from_connector(config: &Config, connector: Connector) -> HyperTransport {
        HyperTransport { http: client(config, connector) }
    }
}

fn client(config: &Config, connector: Connector) -> Client<Connector, Full<Bytes>> {
    Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(config.remote_coprocessor_pool_idle_timeout.as_duration())
        .pool_max_idle_per_host(config.remote_coprocessor_pool_max_idle_per_host)
        .build(connector)
}

fn http_connector(config: &Config) -> HttpConnector {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(config.remote_coprocessor_connect_timeout.as_duration()));
    http
}

impl Transport for HyperTransport {
    fn post<'a>(&'a self, post: Post<'a>) -> BoxFuture<'a, Result<TransportReply, TransportError>> {
        Box::pin(async move {
            let uri: Uri = post
                .url
                .parse()
                .map_err(|e| TransportError::BadRequest(format!("{}: {e}", post.url)))?;
            #[cfg(feature = "tls")]
            if let Some(name) = post.server_name
                && uri.scheme() == Some(&hyper::http::uri::Scheme::HTTPS)
            {
                self.server_names.remember(&uri, name).map_err(|e| {
                    TransportError::BadRequest(format!("TLS server name {name:?}: {e}"))
                })?;
            }
            let mut builder = hyper::Request::post(uri)
                .header(CONTENT_TYPE, CONTENT_TYPE_OCTET_STREAM)
                .header(ACCEPT, CONTENT_TYPE_PROTOBUF);
            for (name, value) in post.headers {
                // A caller's own name may be malformed: an error, never from_static's panic.
                let name = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| TransportError::BadRequest(format!("header {name:?}: {e}")))?;
                let value = HeaderValue::from_str(value)
                    .map_err(|e| TransportError::BadRequest(format!("header {name}: {e}")))?;
                builder = builder.header(name, value);
            }
            let request = builder
                .body(Full::new(post.body))
                .map_err(|e| TransportError::BadRequest(e.to_string()))?;
            let limit = post.max_response_bytes;
            let exchange = async {
                let response = self.http.request(request).await.map_err(TransportError::network)?;
                let status = response.status().as_u16();
                let content_type = response
                    .headers()
                    .get(CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let cap = usize::try_from(limit).unwrap_or(usize::MAX);
                let body = match Limited::new(response.into_body(), cap).collect().await {
                    Ok(collected) => collected.to_bytes(),
                    Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                        return Err(TransportError::TooLarge { limit });
                    }
                    Err(e) => return Err(TransportError::Network(e)),
                };
                Ok(TransportReply::new(status, content_type, body))
            };
            let deadline = tokio::time::Instant::from_std(post.deadline);
            tokio::time::timeout_at(deadline, exchange)
                .await
                .map_err(|_| TransportError::Timeout)?
        })
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// The TLS server names of addresses found by worker discovery, for the connector.
#[cfg(feature = "tls")]
mod server_names {
    use std::collections::HashMap;
    use std::sync::{Arc, RwLock};

    use hyper::Uri;
    use hyper_rustls::{DefaultServerNameResolver, ResolveServerName};
    use rustls::pki_types::ServerName;

    /// Entries per generation. A worker set changes by whole pods, so this bounds the table
    /// of a node whose workers' addresses churn for months, not a working set: an entry
    /// used since the last rotation is in one of the two generations.
    const GENERATION: usize = 4096;

    type Key = (String, u16);

    /// Address (host, port) → server name, in two generations: when the current one is
    /// full it becomes the previous one and the one before is dropped; a lookup that finds
    /// an entry only in the previous one is re-remembered by its next post.
    #[derive(Debug, Default)]
    pub(super) struct ServerNames {
        generations: RwLock<[HashMap<Key, ServerName<'static>>; 2]>,
    }

    fn key(uri: &Uri) -> Option<Key> {
        let host = uri.host()?.to_ascii_lowercase();
        Some((host, uri.port_u16().unwrap_or(443)))
    }

    impl ServerNames {
        /// Connections to `uri`'s address verify `name` from now on.
        pub(super) fn remember(
            &self,
            uri: &Uri,
            name: &str,
        ) -> Result<(), rustls::pki_types::InvalidDnsNameError> {
            let Some(key) = key(uri) else { return Ok(()) };
            let known = |g: &[HashMap<Key, ServerName<'static>>; 2]| {
                g[0].get(&key).is_some_and(|n| n.to_str() == name)
            };
            if known(&self.generations.read().unwrap_or_else(|p| p.into_inner())) {
                return Ok(());
            }
            let server_name = ServerName::try_from(name.to_owned())?;
            let mut g = self.generations.write().unwrap_or_else(|p| p.into_inner());
            if g[0].len() >= GENERATION && !g[0].contains_key(&key) {
                g[1] = std::mem::take(&mut g[0]);
            }
            g[0].insert(key, server_name);
            Ok(())
        }

        fn lookup(&self, uri: &Uri) -> Option<ServerName<'static>> {
            let key = key(uri)?;
            let g = self.generations.read().unwrap_or_else(|p| p.into_inner());
            g[0].get(&key).or_else(|| g[1].get(&key)).cloned()
        }

        #[cfg(test)]
        fn len(&self) -> usize {
            let g = self.generations.read().unwrap_or_else(|p| p.into_inner());
            g[0].len() + g[1].len()
        }
    }

    /// The connector's server name: the remembered one, else the URI's host.
    pub(super) struct Resolve(pub(super) Arc<ServerNames>);

    impl ResolveServerName for Resolve {
        fn resolve(
            &self,
            uri: &Uri,
        ) -> Result<ServerName<'static>, Box<dyn std::error::Error + Sync + Send>> {
            match self.0.lookup(uri) {
                Some(name) => Ok(name),
                None => DefaultServerNameResolver::default().resolve(uri),
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn uri(s: &str) -> Uri {
            s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
        }

        fn resolved(names: &Arc<ServerNames>, s: &str) -> String {
            let name = Resolve(names.clone()).resolve(&uri(s)).unwrap_or_else(|e| panic!("{e}"));
            name.to_str().into_owned()
        }

        #[test]
        fn remembered_names_override_the_host_per_address() {
            let names = Arc::new(ServerNames::default());
            assert_eq!(resolved(&names, "https://10.0.0.5:19000/x"), "10.0.0.5");
            names
                .remember(&uri("https://10.0.0.5:19000/coprocessor"), "w.svc")
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(resolved(&names, "https://10.0.0.5:19000"), "w.svc");
            // Another port or address is another worker.
            assert_eq!(resolved(&names, "https://10.0.0.5:19001"), "10.0.0.5");
            assert_eq!(resolved(&names, "https://[fd00::5]:19000"), "fd00::5");
            names
                .remember(&uri("https://[FD00::5]:19000/"), "v6.svc")
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(resolved(&names, "https://[fd00::5]:19000"), "v6.svc");
            assert!(names.remember(&uri("https://10.0.0.6:1/"), "not a name").is_err());
        }

        #[test]
        fn two_generations_bound_the_table_and_keep_recent_entries() {
            let names = ServerNames::default();
            let at = |i: usize| {
                uri(&format!("https://10.{}.{}.{}:1/", i >> 16, (i >> 8) & 255, i & 255))
            };
            names.remember(&at(0), "first.svc").unwrap_or_else(|e| panic!("{e}"));
            for i in 1..=GENERATION {
                names.remember(&at(i), "w.svc").unwrap_or_else(|e| panic!("{e}"));
            }
            // The first entry moved to the previous generation: still found.
            assert_eq!(
                names.lookup(&at(0)).map(|n| n.to_str().into_owned()).as_deref(),
                Some("first.svc")
            );
            for i in GENERATION + 1..=2 * GENERATION {
                names.remember(&at(i), "w.svc").unwrap_or_else(|e| panic!("{e}"));
            }
            assert!(names.lookup(&at(0)).is_none(), "two rotations dropped the unused entry");
            assert!(names.len() <= 2 * GENERATION);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_without_a_runtime() {
        assert!(HyperTransport::new(&Config::default()).is_ok());
    }

    #[test]
    fn the_crates_header_names_are_valid() {
        assert!(HeaderName::from_bytes(rcop_wire::HEADER_DFS_REMOTE_CACHE_ADDR.as_bytes()).is_ok());
    }
}
