//! Sends envelopes to workers through a [`Transport`]: worker order, retries with backoff,
//! failover and upstream's classification of the answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use prost::Message;
use rcop_proto::coprocessor::Response;
use rcop_wire::HEADER_DFS_REMOTE_CACHE_ADDR;

use crate::backoff::Backoff;
use crate::config::Config;
use crate::error::{Error, RemoteError};
use crate::metrics::Metrics;
use crate::routing::{RoutingKey, rendezvous_order};
use crate::swap::Swap;
use crate::transport::{Post, RequestSigner, Transport, TransportError};

/// Bytes of a non-protobuf error body kept in an error message.
const ERROR_BODY_LIMIT: usize = 1024;

/// A worker answer: the response (which may carry `region_error` / `locked` /
/// `other_error` relayed from the worker), its bytes as received, who gave it and after
/// how many attempts.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Reply {
    /// The decoded `coprocessor.Response` (its `bytes` fields share [`raw`](Self::raw)).
    pub response: Response,
    /// The response body exactly as the worker sent it.
    pub raw: Bytes,
    /// The URL of the worker that answered.
    pub worker: Arc<str>,
    /// Attempts made, this one included.
    pub attempts: u32,
}

/// The knobs of the retry loop, replaceable at run time.
#[derive(Clone, Debug)]
struct Settings {
    workers: Arc<[Arc<str>]>,
    headers: Arc<[(&'static str, String)]>,
    backoff_base: Duration,
    backoff_max: Duration,
    max_response_size: u64,
    single_round: bool,
}

impl Settings {
    fn from_config(config: &Config) -> Result<Settings, Error> {
        config.validate()?;
        let workers = config.worker_urls()?.into_iter().map(Arc::from).collect();
        let headers = if config.dfs_remote_cache_addr.is_empty() {
            Vec::new()
        } else {
            vec![(HEADER_DFS_REMOTE_CACHE_ADDR, config.dfs_remote_cache_addr.clone())]
        };
        Ok(Settings {
            workers,
            headers: headers.into(),
            backoff_base: config.remote_coprocessor_backoff_base.as_duration(),
            backoff_max: config.remote_coprocessor_backoff_max.as_duration(),
            max_response_size: config.remote_coprocessor_max_response_size.as_u64(),
            single_round: config.fallback_to_local,
        })
    }
}

/// Sends envelopes to workers through a [`Transport`] (by default the pooled hyper client,
/// [`HyperTransport`](crate::HyperTransport)).
///
/// A request tries the workers in [`rendezvous_order`] of its [`RoutingKey`]. A retryable
/// failure (network error, or 503 without a protobuf body) moves on to the next worker at
/// once; when every worker failed in a round, the client waits an equal-jitter backoff step
/// (on the transport's timer) and starts another round from the first worker. Everything is
/// bounded by the request's deadline. With `fallback-to-local` on, one failed round ends the
/// call instead ([`RemoteError::AllWorkersFailed`]).
///
/// The client needs no async runtime of its own: the transport does the I/O and the waits.
/// [`update`](Self::update) replaces the worker list and the retry knobs at run time; the
/// transport, and with it every pooled connection, stays.
#[derive(Debug)]
pub struct RemoteClient {
    transport: Arc<dyn Transport>,
    settings: Swap<Settings>,
    metrics: Option<Metrics>,
    signer: Option<Arc<dyn RequestSigner>>,
}

impl RemoteClient {
    /// A client for the workers of `config` over `transport`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for bad worker URLs or other invalid values.
    pub fn new(config: &Config, transport: Arc<dyn Transport>) -> Result<RemoteClient, Error> {
        let settings = Settings::from_config(config)?;
        Ok(RemoteClient { transport, settings: Swap::new(settings), metrics: None, signer: None })
    }

    /// Authenticates every attempt with `signer`'s headers.
    pub fn set_signer(&mut self, signer: Arc<dyn RequestSigner>) {
        self.signer = Some(signer);
    }

    /// Counts failed attempts in `metrics.request_error`.
    pub fn set_metrics(&mut self, metrics: Metrics) {
        self.metrics = Some(metrics);
    }

    /// Applies `config`'s worker list, backoff, response cap, extra headers and
    /// `fallback-to-local` to the requests that start from now on.
    ///
    /// # Errors
    ///
    /// [`Error::Config`]; the old settings stay.
    pub fn update(&self, config: &Config) -> Result<(), Error> {
        let settings = Settings::from_config(config)?;
        self.settings.store(settings);
        Ok(())
    }

    fn settings(&self) -> Arc<Settings> {
        self.settings.load()
    }

    /// The worker URLs, in configuration order.
    pub fn workers(&self) -> Arc<[Arc<str>]> {
        self.settings().workers.clone()
    }

    /// Worker indices (into [`workers`](Self::workers)) in the order a request with `key`
    /// tries them.
    pub fn order(&self, key: RoutingKey) -> Vec<usize> {
        rendezvous_order(&self.settings().workers, key)
    }

    /// The transport.
    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.transport
    }

    /// POSTs `envelope` until a worker answers, a non-retryable failure, or `deadline`.
    ///
    /// # Errors
    ///
    /// [`RemoteError::NoWorker`]; [`RemoteError::DeadlineExceeded`] (with the last
    /// retryable failure); [`RemoteError::AllWorkersFailed`] (fallback mode);
    /// [`RemoteError::Status`], [`RemoteError::MalformedResponse`],
    /// [`RemoteError::ResponseTooLarge`], [`RemoteError::Request`] (not retried).
    pub async fn send(
        &self,
        envelope: Bytes,
        key: RoutingKey,
        deadline: Instant,
    ) -> Result<Reply, RemoteError> {
        let settings = self.settings();
        if settings.workers.is_empty() {
            return Err(RemoteError::NoWorker);
        }
        let order = rendezvous_order(&settings.workers, key);
        let mut attempts = 0u32;
        let mut last: Option<RemoteError> = None;
        let mut backoff = Backoff::new(settings.backoff_base, settings.backoff_max);
        let deadline_exceeded = |attempts, last: Option<RemoteError>| {
            RemoteError::DeadlineExceeded { attempts, last: last.map(Box::new) }
        };
        loop {
            for &i in &order {
                let Some(worker) = settings.workers.get(i) else { continue };
                if Instant::now() >= deadline {
                    return Err(deadline_exceeded(attempts, last));
                }
                attempts = attempts.saturating_add(1);
                match self.attempt(&settings, worker, envelope.clone(), deadline).await {
                    Ok((response, raw)) => {
                        return Ok(Reply { response, raw, worker: worker.clone(), attempts });
                    }
                    Err(Attempt::Timeout) => return Err(deadline_exceeded(attempts, last)),
                    Err(Attempt::Failed(e)) if e.is_retryable() => {
                        self.count_error(e.reason());
                        tracing::warn!(
                            worker = %worker,
                            attempt = attempts,
                            error = %e,
                            "remote coprocessor attempt failed"
                        );
                        last = Some(e);
                    }
                    Err(Attempt::Failed(e)) => return Err(e),
                }
            }
            if settings.single_round {
                return Err(RemoteError::AllWorkersFailed {
                    attempts,
                    last: Box::new(last.unwrap_or(RemoteError::NoWorker)),
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let step = backoff.next_delay();
            if left <= step {
                // Sleeping past the deadline would only delay the answer.
                self.transport.sleep(left).await;
                return Err(deadline_exceeded(attempts, last));
            }
            self.transport.sleep(step).await;
        }
    }

    fn count_error(&self, reason: &str) {
        if let Some(m) = &self.metrics {
            m.request_error.with_label_values(&[reason]).inc();
        }
    }

    /// One POST to one worker, classified as upstream (reference §2.7).
    async fn attempt(
        &self,
        settings: &Settings,
        worker: &Arc<str>,
        envelope: Bytes,
        deadline: Instant,
    ) -> Result<(Response, Bytes), Attempt> {
        // The body names its envelope format first; a checksummed one is announced, so the
        // worker refuses it if a flipped format number would skip the checksums.
        let mut headers = settings.headers.to_vec();
        if envelope.get(..4) == Some(&rcop_wire::ENVELOPE_FORMAT_V2.to_le_bytes()[..]) {
            headers.push((rcop_wire::HEADER_ENVELOPE, "2".to_owned()));
        }
        if let Some(signer) = &self.signer {
            headers.extend(signer.sign(rcop_wire::COPROCESSOR_PATH, &envelope));
        }
        let post = Post::new(worker, envelope, deadline, settings.max_response_size)
            .with_headers(&headers);
        let fail = |e| Err(Attempt::Failed(e));
        let reply = match self.transport.post(post).await {
            Ok(reply) => reply,
            Err(TransportError::Timeout) => return Err(Attempt::Timeout),
            Err(TransportError::Network(source)) => {
                return fail(RemoteError::Network { worker: worker.clone(), source });
            }
            Err(TransportError::TooLarge { limit }) => {
                return fail(RemoteError::ResponseTooLarge { worker: worker.clone(), limit });
            }
            Err(TransportError::BadRequest(reason)) => {
                return fail(RemoteError::Request { worker: worker.clone(), reason });
            }
        };
        if (200..300).contains(&reply.status) || reply.is_protobuf() {
            return match Response::decode(reply.body.clone()) {
                Ok(response) => Ok((response, reply.body)),
                Err(source) => {
                    fail(RemoteError::MalformedResponse { worker: worker.clone(), source })
                }
            };
        }
        let body = body_text(&reply.body);
        if reply.status == 503 {
            return fail(RemoteError::ServiceUnavailable { worker: worker.clone(), body });
        }
        fail(RemoteError::Status { worker: worker.clone(), status: reply.status, body })
    }
}

/// How one attempt ended without an answer.
enum Attempt {
    /// The deadline passed.
    Timeout,
    /// Classified.
    Failed(RemoteError),
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
    fn error_bodies_are_truncated_lossily() {
        assert_eq!(body_text(b"  busy \n"), "busy");
        assert_eq!(body_text(b"bad \xff utf8"), "bad \u{fffd} utf8");
        let long = vec![b'a'; ERROR_BODY_LIMIT + 10];
        let text = body_text(&long);
        assert_eq!(text.chars().count(), ERROR_BODY_LIMIT + 1);
        assert!(text.ends_with('…'));
    }
}
