//! The pooled HTTP(S) client that POSTs envelopes to workers, with retries, backoff, worker
//! failover and upstream's response classification.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use hyper::{StatusCode, Uri};
use hyper_rustls::{ConfigBuilderExt, HttpsConnector};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use prost::Message;
use rcop_proto::coprocessor::Response;
use rcop_wire::{CONTENT_TYPE_OCTET_STREAM, CONTENT_TYPE_PROTOBUF, HEADER_DFS_REMOTE_CACHE_ADDR};
use tokio::time::Instant;

use crate::backoff::Backoff;
use crate::config::Config;
use crate::error::{Error, RemoteError};
use crate::metrics::Metrics;
use crate::routing::{RoutingKey, rendezvous_order};

/// Bytes of a non-protobuf error body kept in an error message.
const ERROR_BODY_LIMIT: usize = 1024;

/// A worker answer: the response (which may carry `region_error` / `locked` /
/// `other_error` relayed from the worker), who gave it and after how many attempts.
#[derive(Clone, Debug)]
pub struct Reply {
    /// The `coprocessor.Response`.
    pub response: Response,
    /// The URL of the worker that answered.
    pub worker: Arc<str>,
    /// Attempts made, this one included.
    pub attempts: u32,
}

#[derive(Debug)]
struct Worker {
    uri: Uri,
    name: Arc<str>,
}

/// Sends envelopes to workers over pooled HTTP/1.1 (or HTTPS) connections.
///
/// A request tries the workers in [`rendezvous_order`] of its [`RoutingKey`]. A retryable
/// failure (network error, or 503 without a protobuf body) moves on to the next worker at
/// once; when every worker failed in a round, the client sleeps an equal-jitter backoff step
/// and starts another round from the first worker. Everything is bounded by the request's
/// deadline. With `fallback-to-local` on, one failed round ends the call instead
/// ([`RemoteError::AllWorkersFailed`]).
///
/// Connections are kept in hyper-util's pool (`remote-coprocessor-pool-*`), so repeated
/// requests to a worker reuse one TCP (and TLS) connection.
#[derive(Clone, Debug)]
pub struct RemoteClient {
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    workers: Arc<[Worker]>,
    names: Arc<[Arc<str>]>,
    dfs_remote_cache_addr: Option<HeaderValue>,
    backoff_base: Duration,
    backoff_max: Duration,
    max_response_size: u64,
    single_round: bool,
    metrics: Option<Metrics>,
}

impl RemoteClient {
    /// A client for the workers of `config`, trusting the Mozilla root certificates for
    /// `https://` workers (rustls on the ring provider).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for bad worker URLs; [`Error::Tls`].
    pub fn new(config: &Config) -> Result<RemoteClient, Error> {
        let provider = rustls::crypto::ring::default_provider();
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
            .with_safe_default_protocol_versions()?
            .with_webpki_roots()
            .with_no_client_auth();
        RemoteClient::with_tls(config, tls)
    }

    /// A client with the caller's TLS configuration (private CAs, client certificates).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for bad worker URLs.
    pub fn with_tls(config: &Config, tls: rustls::ClientConfig) -> Result<RemoteClient, Error> {
        config.validate()?;
        let workers: Arc<[Worker]> = config
            .worker_urls()?
            .into_iter()
            .map(|uri| Worker { name: Arc::from(uri.to_string()), uri })
            .collect();
        let names = workers.iter().map(|w| w.name.clone()).collect();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(config.remote_coprocessor_connect_timeout.as_duration()));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let http = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(config.remote_coprocessor_pool_idle_timeout.as_duration())
            .pool_max_idle_per_host(config.remote_coprocessor_pool_max_idle_per_host)
            .build(connector);
        let dfs_remote_cache_addr = if config.dfs_remote_cache_addr.is_empty() {
            None
        } else {
            HeaderValue::from_str(&config.dfs_remote_cache_addr).ok()
        };
        Ok(RemoteClient {
            http,
            workers,
            names,
            dfs_remote_cache_addr,
            backoff_base: config.remote_coprocessor_backoff_base.as_duration(),
            backoff_max: config.remote_coprocessor_backoff_max.as_duration(),
            max_response_size: config.remote_coprocessor_max_response_size.as_u64(),
            single_round: config.fallback_to_local,
            metrics: None,
        })
    }

    /// Counts failed attempts in `metrics.request_error`.
    pub fn set_metrics(&mut self, metrics: Metrics) {
        self.metrics = Some(metrics);
    }

    /// The worker URLs, in configuration order.
    pub fn workers(&self) -> &[Arc<str>] {
        &self.names
    }

    /// Worker indices in the order a request with `key` tries them.
    pub fn order(&self, key: RoutingKey) -> Vec<usize> {
        rendezvous_order(&self.names, key)
    }

    /// POSTs `envelope` until a worker answers, a non-retryable failure, or `deadline`.
    ///
    /// # Errors
    ///
    /// [`RemoteError::NoWorker`]; [`RemoteError::DeadlineExceeded`] (with the last
    /// retryable failure); [`RemoteError::AllWorkersFailed`] (fallback mode);
    /// [`RemoteError::Status`], [`RemoteError::MalformedResponse`],
    /// [`RemoteError::ResponseTooLarge`] (not retried).
    pub async fn send(
        &self,
        envelope: Bytes,
        key: RoutingKey,
        deadline: Instant,
    ) -> Result<Reply, RemoteError> {
        if self.workers.is_empty() {
            return Err(RemoteError::NoWorker);
        }
        let order = self.order(key);
        let mut attempts = 0u32;
        let mut last: Option<RemoteError> = None;
        let rounds = async {
            let mut backoff = Backoff::new(self.backoff_base, self.backoff_max);
            loop {
                for &i in &order {
                    let Some(worker) = self.workers.get(i) else { continue };
                    attempts = attempts.saturating_add(1);
                    match self.attempt(worker, envelope.clone()).await {
                        Ok(response) => {
                            return Ok(Reply { response, worker: worker.name.clone(), attempts });
                        }
                        Err(e) if e.is_retryable() => {
                            self.count_error(e.reason());
                            tracing::warn!(
                                worker = %worker.name,
                                attempt = attempts,
                                error = %e,
                                "remote coprocessor attempt failed"
                            );
                            last = Some(e);
                        }
                        Err(e) => return Err(Some(e)),
                    }
                }
                if self.single_round {
                    return Err(None);
                }
                tokio::time::sleep(backoff.next_delay()).await;
            }
        };
        let outcome = tokio::time::timeout_at(deadline, rounds).await;
        match outcome {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(Some(fatal))) => Err(fatal),
            Ok(Err(None)) => Err(RemoteError::AllWorkersFailed {
                attempts,
                last: Box::new(last.unwrap_or(RemoteError::NoWorker)),
            }),
            Err(_elapsed) => {
                Err(RemoteError::DeadlineExceeded { attempts, last: last.map(Box::new) })
            }
        }
    }

    fn count_error(&self, reason: &str) {
        if let Some(m) = &self.metrics {
            m.request_error.with_label_values(&[reason]).inc();
        }
    }

    /// One POST to one worker, classified as upstream (reference §2.7).
    async fn attempt(&self, worker: &Worker, envelope: Bytes) -> Result<Response, RemoteError> {
        let network = |e: Box<dyn std::error::Error + Send + Sync>| RemoteError::Network {
            worker: worker.name.clone(),
            source: e,
        };
        let mut builder = hyper::Request::post(worker.uri.clone())
            .header(CONTENT_TYPE, CONTENT_TYPE_OCTET_STREAM)
            .header(ACCEPT, CONTENT_TYPE_PROTOBUF);
        if let Some(addr) = &self.dfs_remote_cache_addr {
            builder = builder.header(HEADER_DFS_REMOTE_CACHE_ADDR, addr.clone());
        }
        let request = builder
            .body(Full::new(envelope))
            .map_err(|source| RemoteError::Request { worker: worker.name.clone(), source })?;
        let response = self.http.request(request).await.map_err(|e| network(Box::new(e)))?;
        let status = response.status();
        let is_protobuf = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(is_protobuf_content_type);
        let limit = usize::try_from(self.max_response_size).unwrap_or(usize::MAX);
        let body = match Limited::new(response.into_body(), limit).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return Err(RemoteError::ResponseTooLarge {
                    worker: worker.name.clone(),
                    limit: self.max_response_size,
                });
            }
            Err(e) => return Err(network(e)),
        };
        if status.is_success() || is_protobuf {
            return Response::decode(body).map_err(|source| RemoteError::MalformedResponse {
                worker: worker.name.clone(),
                source,
            });
        }
        let text = body_text(&body);
        if status == StatusCode::SERVICE_UNAVAILABLE {
            return Err(RemoteError::ServiceUnavailable {
                worker: worker.name.clone(),
                body: text,
            });
        }
        Err(RemoteError::Status {
            worker: worker.name.clone(),
            status: status.as_u16(),
            body: text,
        })
    }
}

/// `application/protobuf`, any case, optionally followed by parameters.
fn is_protobuf_content_type(value: &str) -> bool {
    let mime = value.split(';').next().unwrap_or_default().trim();
    mime.eq_ignore_ascii_case(CONTENT_TYPE_PROTOBUF)
}

fn body_text(body: &[u8]) -> String {
    let cut = body.get(..ERROR_BODY_LIMIT).unwrap_or(body);
    let mut text = String::from_utf8_lossy(cut).trim().to_owned();
    if body.len() > ERROR_BODY_LIMIT {
        text.push('…');
    }
    text
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

    #[test]
    fn error_bodies_are_truncated_lossily() {
        assert_eq!(body_text(b"  busy \n"), "busy");
        assert_eq!(body_text(b"bad \xff utf8"), "bad \u{fffd} utf8");
        let long = vec![b'a'; ERROR_BODY_LIMIT + 10];
        let text = body_text(&long);
        assert_eq!(text.chars().count(), ERROR_BODY_LIMIT + 1);
        assert!(text.ends_with('…'));
    }
}
