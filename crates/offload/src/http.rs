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
#[derive(Clone, Debug)]
pub struct HyperTransport {
    http: Client<Connector, Full<Bytes>>,
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
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http_connector(config));
        HyperTransport::from_connector(config, connector)
    }

    fn from_connector(config: &Config, connector: Connector) -> HyperTransport {
        let http = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(config.remote_coprocessor_pool_idle_timeout.as_duration())
            .pool_max_idle_per_host(config.remote_coprocessor_pool_max_idle_per_host)
            .build(connector);
        HyperTransport { http }
    }
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
