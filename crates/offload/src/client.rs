//! Sends envelopes to workers through a [`Transport`]: worker order, retries with backoff,
//! failover and upstream's classification of the answer.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use prost::Message;
use rcop_proto::coprocessor::Response;
#[cfg(feature = "http-client")]
use rcop_units::log::RateLimited;
use rcop_wire::HEADER_DFS_REMOTE_CACHE_ADDR;

use crate::backoff::Backoff;
use crate::config::Config;
#[cfg(feature = "http-client")]
use crate::discovery::{Discovery, Failure, Resolver};
use crate::discovery::{Targets, WorkerSet};
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

/// The knobs of the retry loop and the worker set, replaceable at run time.
#[derive(Clone, Debug)]
struct Settings {
    workers: Arc<[Arc<str>]>,
    /// Per worker, the TLS server name when it is not the URL's host.
    server_names: Arc<[Option<Arc<str>>]>,
    headers: Arc<[(&'static str, String)]>,
    backoff_base: Duration,
    backoff_max: Duration,
    max_response_size: u64,
    single_round: bool,
}

impl Settings {
    fn from_config(config: &Config, workers: WorkerSet) -> Result<Settings, Error> {
        config.validate()?;
        let headers = if config.dfs_remote_cache_addr.is_empty() {
            Vec::new()
        } else {
            vec![(HEADER_DFS_REMOTE_CACHE_ADDR, config.dfs_remote_cache_addr.clone())]
        };
        Ok(Settings {
            workers: workers.urls,
            server_names: workers.server_names,
            headers: headers.into(),
            backoff_base: config.remote_coprocessor_backoff_base.as_duration(),
            backoff_max: config.remote_coprocessor_backoff_max.as_duration(),
            max_response_size: config.remote_coprocessor_max_response_size.as_u64(),
            single_round: config.fallback_to_local,
        })
    }
}

/// What a client shares with its discovery task: the settings requests read, and what the
/// worker set is made of.
#[derive(Debug)]
pub(crate) struct Shared {
    settings: Swap<Settings>,
    /// Held while the settings are replaced, so a config update and a discovery round
    /// never undo each other.
    targets: Mutex<Targets>,
    metrics: Swap<Option<Metrics>>,
    /// Repeated resolution failures are logged once a minute.
    #[cfg(feature = "http-client")]
    resolve_warnings: RateLimited,
}

impl Shared {
    fn targets(&self) -> MutexGuard<'_, Targets> {
        self.targets.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Replaces the settings; the worker gauge follows.
    fn store(&self, settings: Settings) {
        if let Some(m) = &*self.metrics.load() {
            m.workers.set(i64::try_from(settings.workers.len()).unwrap_or(i64::MAX));
        }
        self.settings.store(settings);
    }

    /// Replaces the worker set with what `targets` (locked by the caller) expand to, when
    /// that differs; the other settings stay.
    #[cfg(feature = "http-client")]
    fn swap_workers(&self, targets: &Targets) {
        let workers = targets.workers();
        let current = self.settings.load();
        if workers.urls == current.workers && workers.server_names == current.server_names {
            return;
        }
        let added = workers.urls.iter().filter(|w| !current.workers.contains(w)).count();
        let removed = current.workers.iter().filter(|w| !workers.urls.contains(w)).count();
        tracing::info!(
            workers = workers.urls.len(),
            added,
            removed,
            "remote coprocessor workers changed"
        );
        let mut next = Settings::clone(&current);
        next.workers = workers.urls;
        next.server_names = workers.server_names;
        self.store(next);
    }

    /// The pause between discovery rounds; `None` when there is nothing to resolve.
    #[cfg(feature = "http-client")]
    pub(crate) fn resolve_interval(&self) -> Option<Duration> {
        self.targets().interval()
    }

    /// Starts a discovery round: its number and the names to resolve.
    #[cfg(feature = "http-client")]
    pub(crate) fn begin_round(&self) -> Option<(u64, Vec<String>)> {
        self.targets().begin_round()
    }

    /// Applies a round's answers: good ones replace their name's addresses, failed or
    /// empty ones keep them (counted in `rcop_offload_worker_resolve_errors_total` and
    /// logged); requests that already started keep their snapshot.
    ///
    /// # Errors
    ///
    /// [`Error::Resolve`] for the first name whose answer was not used.
    #[cfg(feature = "http-client")]
    pub(crate) fn apply_round(
        &self,
        round: u64,
        answers: Vec<(String, Result<Vec<std::net::IpAddr>, Failure>)>,
    ) -> Result<(), Error> {
        let mut targets = self.targets();
        if !targets.finish_round(round) {
            return Ok(());
        }
        let mut first_failure = None;
        for (name, answer) in answers {
            match answer {
                Ok(ips) => {
                    targets.record(&name, ips);
                }
                Err(failure) => {
                    if let Some(m) = &*self.metrics.load() {
                        m.worker_resolve_errors.with_label_values(&[failure.reason()]).inc();
                    }
                    let error = failure.into_error(&name);
                    if let Some(suppressed) = self.resolve_warnings.allow() {
                        tracing::warn!(
                            %error,
                            suppressed,
                            "worker discovery keeps the last addresses (logged once a minute)"
                        );
                    }
                    first_failure.get_or_insert(error);
                }
            }
        }
        self.swap_workers(&targets);
        drop(targets);
        first_failure.map_or(Ok(()), Err)
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
///
/// With `enable_discovery` (feature `http-client`; what [`Offloader`](crate::Offloader)
/// does for its default transport), a worker URL whose host is a DNS name becomes one worker
/// per address the name resolves to, re-resolved every `remote-coprocessor-resolve-interval`
/// on a Tokio task — the one thing that needs a runtime; a request keeps the worker set it
/// started with.
#[derive(Debug)]
pub struct RemoteClient {
    transport: Arc<dyn Transport>,
    shared: Arc<Shared>,
    signer: Option<Arc<dyn RequestSigner>>,
    #[cfg(feature = "http-client")]
    discovery: Option<Discovery>,
}

impl RemoteClient {
    /// A client for the workers of `config` over `transport`. DNS names are workers as they
    /// are (the transport resolves them) until `enable_discovery`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for bad worker URLs or other invalid values.
    pub fn new(config: &Config, transport: Arc<dyn Transport>) -> Result<RemoteClient, Error> {
        let targets = Targets::new(config)?;
        let settings = Settings::from_config(config, targets.workers())?;
        let shared = Shared {
            settings: Swap::new(settings),
            targets: Mutex::new(targets),
            metrics: Swap::new(None),
            #[cfg(feature = "http-client")]
            resolve_warnings: RateLimited::new(Duration::from_secs(60)),
        };
        Ok(RemoteClient {
            transport,
            shared: Arc::new(shared),
            signer: None,
            #[cfg(feature = "http-client")]
            discovery: None,
        })
    }

    /// Authenticates every attempt with `signer`'s headers.
    pub fn set_signer(&mut self, signer: Arc<dyn RequestSigner>) {
        self.signer = Some(signer);
    }

    /// Counts failed attempts in `metrics.request_error`, the workers in `metrics.workers`
    /// and discovery's failures in `metrics.worker_resolve_errors`.
    pub fn set_metrics(&mut self, metrics: Metrics) {
        metrics.workers.set(i64::try_from(self.workers().len()).unwrap_or(i64::MAX));
        self.shared.metrics.store(Some(metrics));
    }

    /// Resolves the DNS names among the worker URLs through `resolver`, now and every
    /// `remote-coprocessor-resolve-interval`, on a task of `runtime` (default: the runtime
    /// this is called on) that stops when the client drops. Each address is one worker;
    /// a name's failed or empty answer keeps its last addresses, and until its first answer
    /// the name is a worker as it is. The task starts once the configuration names a DNS
    /// name with discovery on (here or in a later [`update`](Self::update)).
    ///
    /// # Errors
    ///
    /// [`Error::NoRuntime`] when a name needs resolving and there is no runtime; the client
    /// is left without discovery.
    #[cfg(feature = "http-client")]
    pub fn enable_discovery(
        &mut self,
        resolver: Arc<dyn Resolver>,
        runtime: Option<tokio::runtime::Handle>,
    ) -> Result<(), Error> {
        let runtime = runtime.or_else(|| tokio::runtime::Handle::try_current().ok());
        let discovery = Discovery::new(resolver, runtime);
        let mut targets = self.shared.targets();
        targets.set_enabled(true);
        if targets.interval().is_some()
            && let Err(e) = discovery.ensure_started(&self.shared)
        {
            targets.set_enabled(false);
            return Err(e);
        }
        self.shared.swap_workers(&targets);
        drop(targets);
        self.discovery = Some(discovery);
        Ok(())
    }

    /// Resolves the worker names now and applies the answers, as the discovery task does
    /// every interval (a host may await it once before serving). Without discovery, or
    /// with it off, does nothing.
    ///
    /// # Errors
    ///
    /// [`Error::Resolve`] for the first name whose answer failed or was empty (its last
    /// addresses stay; the other names' answers are applied).
    #[cfg(feature = "http-client")]
    pub async fn resolve_workers(&self) -> Result<(), Error> {
        match &self.discovery {
            Some(discovery) => discovery.resolve_now(&self.shared).await,
            None => Ok(()),
        }
    }

    /// Applies `config`'s worker list, backoff, response cap, extra headers,
    /// `fallback-to-local` and resolve interval to the requests that start from now on.
    /// Names configured before and now keep their resolved addresses; new names are
    /// resolved at once.
    ///
    /// # Errors
    ///
    /// [`Error::Config`]; [`Error::NoRuntime`] when discovery needs a task and has no
    /// runtime. The old settings stay.
    pub fn update(&self, config: &Config) -> Result<(), Error> {
        let mut targets = self.shared.targets();
        let next = targets.reconfigured(config)?;
        let settings = Settings::from_config(config, next.workers())?;
        #[cfg(feature = "http-client")]
        if let Some(discovery) = &self.discovery
            && next.interval().is_some()
        {
            discovery.ensure_started(&self.shared)?;
        }
        *targets = next;
        self.shared.store(settings);
        drop(targets);
        #[cfg(feature = "http-client")]
        if let Some(discovery) = &self.discovery {
            discovery.wake();
        }
        Ok(())
    }

    fn settings(&self) -> Arc<Settings> {
        self.shared.settings.load()
    }

    /// The current workers: the configured URLs in order, a DNS name replaced (with
    /// discovery) by one URL per address it resolved to, each URL once.
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
                let server_name = settings.server_names.get(i).and_then(Option::as_deref);
                if Instant::now() >= deadline {
                    return Err(deadline_exceeded(attempts, last));
                }
                attempts = attempts.saturating_add(1);
                match self.attempt(&settings, worker, server_name, envelope.clone(), deadline).await
                {
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
        if let Some(m) = &*self.shared.metrics.load() {
            m.request_error.with_label_values(&[reason]).inc();
        }
    }

    /// One POST to one worker, classified as upstream (reference §2.7).
    async fn attempt(
        &self,
        settings: &Settings,
        worker: &Arc<str>,
        server_name: Option<&str>,
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
        let mut post = Post::new(worker, envelope, deadline, settings.max_response_size)
            .with_headers(&headers);
        if let Some(name) = server_name {
            post = post.with_server_name(name);
        }
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
