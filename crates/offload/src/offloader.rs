//! The storage node's entry point: decide, export, send, classify, assemble.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use prometheus::Registry;
use prost::Message;
use rcop_proto::REQ_TYPE_DAG;
use rcop_proto::coprocessor::{Request, Response};
use rcop_proto::tipb::DagRequest;
use rcop_wire::{Envelope, EnvelopeFormat, EnvelopeWriter, MemDataFormat};

use crate::assemble::{self, Assembled, MAX_PAGES, Resume};
use crate::client::{RemoteClient, Reply};
use crate::config::Config;
use crate::decision::{Decision, LocalReason, Plan, Rules, decide, is_dag, is_stats};
use crate::error::{Error, RemoteError, SourceError};
use crate::metrics::Metrics;
use crate::pattern::{PatternStats, RemotePattern, Sample};
use crate::routing::RoutingKey;
use crate::source::{Clock, SnapshotSource, SystemClock};
use crate::swap::Swap;
use crate::transport::{RequestSigner, Transport};
use rcop_units::log::RateLimited;

/// What the storage node does with a request, as decided by [`Offloader::dispatch`].
#[derive(Debug)]
#[non_exhaustive]
pub enum Dispatch {
    /// Execute locally. After executing, feed the pattern (if any) back with
    /// [`Offloader::record_local`].
    Local {
        /// Why.
        reason: LocalReason,
        /// The request's lazy pattern.
        pattern: Option<RemotePattern>,
    },
    /// Answer the client with `answer`: the worker's response (possibly carrying a
    /// relayed `region_error` / `locked` / `other_error`), a `locked` / `region_error` found
    /// before sending, or a remote failure turned into an error response.
    Respond {
        /// The response to send to the client.
        answer: Answer,
        /// The estimate that made the request remote.
        estimate: u64,
        /// The threshold it was compared with.
        threshold: u64,
        /// The worker that answered, if one did.
        worker: Option<Arc<str>>,
        /// HTTP attempts made, over every page.
        attempts: u32,
        /// Worker responses the answer was assembled from (more than one when a
        /// non-paging answer came back in pages).
        pages: u32,
    },
    /// Execute locally after the remote path failed: retryably with `fallback-to-local`
    /// on, or in a way no worker can fix ([`RemoteError::requires_local`]: the worker
    /// cannot run the DAG, refused the body with 400/413, or the whole answer would be too
    /// large), whatever `fallback-to-local` says.
    FallbackLocal {
        /// The remote failure.
        error: RemoteError,
        /// The request's lazy pattern.
        pattern: Option<RemotePattern>,
    },
}

/// The `coprocessor.Response` to send back, decoded and, where the worker's bytes are the
/// answer unchanged, as those bytes too — a host on another protobuf library passes
/// [`into_bytes`](Self::into_bytes) on without re-encoding a large response.
#[derive(Clone, Debug)]
pub struct Answer {
    response: Box<Response>,
    raw: Option<Bytes>,
}

impl Answer {
    fn decoded(response: Response) -> Answer {
        Answer { response: Box::new(response), raw: None }
    }

    fn verbatim(reply: Reply) -> Answer {
        Answer { response: Box::new(reply.response), raw: Some(reply.raw) }
    }

    /// The response.
    pub fn response(&self) -> &Response {
        &self.response
    }

    /// The response, owned.
    pub fn into_response(self) -> Response {
        *self.response
    }

    /// The encoded response: the worker's bytes when they are the answer as they are,
    /// else the response encoded once.
    pub fn into_bytes(self) -> Bytes {
        match self.raw {
            Some(raw) => raw,
            None => Bytes::from(self.response.encode_to_vec()),
        }
    }
}

/// An offload request ready to send: the envelope and where and until when to send it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Prepared {
    /// The envelope body.
    pub envelope: Bytes,
    /// The worker affinity key.
    pub key: RoutingKey,
    /// The request deadline.
    pub deadline: Instant,
    /// An analyze or checksum request, sent to `remote-worker-addr`.
    pub stats: bool,
}

/// Deadline of an analyze or checksum request whose `context.max_execution_duration_ms`
/// is 0: 5 minutes, upstream's `REMOTE_REQUEST_TIMEOUT` for them (a region's statistics
/// take far longer than a query's pushdown).
pub const STATS_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// Builds an [`Offloader`].
#[derive(Debug)]
pub struct Builder<'r> {
    config: Config,
    clock: Arc<dyn Clock>,
    registry: Option<&'r Registry>,
    transport: Option<Arc<dyn Transport>>,
    engine: rcop_exec::EngineConfig,
    #[cfg(feature = "tls")]
    tls: Option<rustls::ClientConfig>,
    signer: Option<Arc<dyn RequestSigner>>,
    #[cfg(feature = "http-client")]
    resolver: Option<Arc<dyn crate::discovery::Resolver>>,
    #[cfg(feature = "http-client")]
    runtime: Option<tokio::runtime::Handle>,
}

impl<'r> Builder<'r> {
    /// Resolves worker DNS names with `resolver` instead of the system's `getaddrinfo`
    /// ([`SystemResolver`](crate::SystemResolver)). Also turns worker discovery on for a
    /// [`transport`](Self::transport) of the host's, which otherwise resolves names itself.
    #[cfg(feature = "http-client")]
    pub fn resolver(mut self, resolver: Arc<dyn crate::discovery::Resolver>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// Runs the worker-discovery task on `runtime` (default: the runtime
    /// [`build`](Self::build) is called on).
    #[cfg(feature = "http-client")]
    pub fn runtime(mut self, runtime: tokio::runtime::Handle) -> Self {
        self.runtime = Some(runtime);
        self
    }

    /// Signs every request with `signer` (e.g. an `rcop_tls::SharedSecret`, which a worker
    /// with `[security] shared-secret-path` requires).
    pub fn signer(mut self, signer: Arc<dyn RequestSigner>) -> Self {
        self.signer = Some(signer);
        self
    }

    /// Uses `clock` to age queries (default: the system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Registers the metrics on `registry` (names in [`crate::METRIC_NAMES`], none of them
    /// TiKV's own).
    pub fn registry(mut self, registry: &'r Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Sends through `transport` instead of the pooled hyper client.
    pub fn transport(mut self, transport: Arc<dyn Transport>) -> Self {
        self.transport = Some(transport);
        self
    }

    /// Checks DAGs against an engine with these settings (the workers', e.g. a deeper
    /// expression bound) instead of the defaults.
    pub fn engine_config(mut self, engine: rcop_exec::EngineConfig) -> Self {
        self.engine = engine;
        self
    }

    /// Uses this TLS configuration for `https://` workers of the default transport
    /// (default: Mozilla roots, ring).
    #[cfg(feature = "tls")]
    pub fn tls_config(mut self, tls: rustls::ClientConfig) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Builds the offloader. Needs no async runtime unless a worker URL names a DNS name to
    /// discover (then the discovery task runs on the current runtime or the one given to
    /// `runtime`); the default transport needs a Tokio runtime only where
    /// requests are sent.
    ///
    /// Worker discovery (feature `http-client`) is on with the default transport, or with a
    /// `resolver`; a host's own [`transport`](Self::transport) without one gets DNS names as
    /// they are.
    ///
    /// # Errors
    ///
    /// [`Error::Config`], [`Error::Tls`], [`Error::Metrics`]; [`Error::NoTransport`] when
    /// built without the `http-client` feature and no [`transport`](Self::transport);
    /// [`Error::NoRuntime`] when a name is to be discovered and there is no runtime.
    pub fn build(self) -> Result<Offloader, Error> {
        #[cfg(feature = "http-client")]
        let resolver = match (self.resolver, &self.transport) {
            (Some(resolver), _) => Some(resolver),
            (None, None) => Some(Arc::new(crate::discovery::SystemResolver) as Arc<_>),
            (None, Some(_)) => None,
        };
        let transport = match self.transport {
            Some(t) => t,
            None => default_transport(&self.config, {
                #[cfg(feature = "tls")]
                {
                    self.tls
                }
                #[cfg(not(feature = "tls"))]
                {
                    None::<()>
                }
            })?,
        };
        let metrics = self.registry.map(Metrics::register).transpose()?;
        // One client per worker list (DAGs; analyze and checksum), over one transport.
        let make = |config: &Config, metrics: Option<Metrics>| -> Result<RemoteClient, Error> {
            let mut client = RemoteClient::new(config, Arc::clone(&transport))?;
            if let Some(signer) = &self.signer {
                client.set_signer(Arc::clone(signer));
            }
            if let Some(m) = metrics {
                client.set_metrics(m);
            }
            #[cfg(feature = "http-client")]
            if let Some(resolver) = &resolver {
                client.enable_discovery(Arc::clone(resolver), self.runtime.clone())?;
            }
            Ok(client)
        };
        let client = make(&self.config, metrics.clone())?;
        let stats_client = make(
            &self.config.stats_worker_config(),
            metrics.as_ref().map(Metrics::for_stats_workers),
        )?;
        Ok(Offloader {
            settings: Swap::new(Settings::from_config(&self.config)),
            stats: PatternStats::new(),
            client,
            stats_client,
            engine: rcop_exec::Engine::new(self.engine),
            metrics,
            clock: self.clock,
            refusals: RateLimited::new(Duration::from_secs(60)),
        })
    }
}

#[cfg(feature = "tls")]
fn default_transport(
    config: &Config,
    tls: Option<rustls::ClientConfig>,
) -> Result<Arc<dyn Transport>, Error> {
    Ok(match tls {
        Some(tls) => Arc::new(crate::HyperTransport::with_tls(config, tls)),
        None => Arc::new(crate::HyperTransport::new(config)?),
    })
}

#[cfg(all(feature = "http-client", not(feature = "tls")))]
fn default_transport(config: &Config, _tls: Option<()>) -> Result<Arc<dyn Transport>, Error> {
    Ok(Arc::new(crate::HyperTransport::new(config)?))
}

#[cfg(not(feature = "http-client"))]
fn default_transport(_config: &Config, _tls: Option<()>) -> Result<Arc<dyn Transport>, Error> {
    Err(Error::NoTransport)
}

/// The knobs [`Offloader::update`] replaces at run time.
#[derive(Clone, Debug)]
struct Settings {
    rules: Rules,
    default_timeout: Duration,
    fallback_to_local: bool,
    max_whole_response: u64,
    envelope: EnvelopeFormat,
}

impl Settings {
    fn from_config(config: &Config) -> Settings {
        Settings {
            rules: Rules {
                min_blocks_size: config.remote_coprocessor_min_blocks_size.as_u64(),
                num_ranges: config.remote_coprocessor_num_ranges,
                min_process_duration: config.remote_coprocessor_min_process_duration.as_duration(),
            },
            default_timeout: config.remote_coprocessor_request_timeout.as_duration(),
            fallback_to_local: config.fallback_to_local,
            max_whole_response: config.remote_coprocessor_max_whole_response_size.as_u64(),
            envelope: if config.remote_coprocessor_envelope_checksum {
                EnvelopeFormat::V2
            } else {
                EnvelopeFormat::V1
            },
        }
    }
}

/// The storage-node side of the remote coprocessor.
///
/// [`dispatch`](Self::dispatch) runs the whole path for one `coprocessor.Request`: the
/// capability check and the decision rules, lock checks and export through the
/// [`SnapshotSource`], the envelope (with `paging_size = u32::MAX`), the POST with retries
/// and failover, the response classification, and — for a non-paging request whose answer
/// the worker cut into pages — the resumption that makes the answer whole.
/// [`dispatch_raw`](Self::dispatch_raw) does the same from the request's bytes. The
/// lower-level steps ([`plan`](Self::plan), [`prepare`](Self::prepare),
/// [`send`](Self::send)) are public for callers that interleave their own work.
///
/// Needs no async runtime of its own: I/O and waits are the [`Transport`]'s (worker
/// discovery of DNS names aside, whose task runs on Tokio: see [`Builder::build`]). Only
/// unary DAG requests should be dispatched; streaming requests are not offloaded.
#[derive(Debug)]
pub struct Offloader {
    settings: Swap<Settings>,
    stats: PatternStats,
    client: RemoteClient,
    /// The client of analyze and checksum requests (`remote-worker-addr`).
    stats_client: RemoteClient,
    engine: rcop_exec::Engine,
    metrics: Option<Metrics>,
    clock: Arc<dyn Clock>,
    refusals: RateLimited,
}

impl Offloader {
    /// Starts building an offloader from `config`.
    pub fn builder<'r>(config: Config) -> Builder<'r> {
        Builder {
            config,
            clock: Arc::new(SystemClock),
            registry: None,
            transport: None,
            engine: rcop_exec::EngineConfig::default(),
            #[cfg(feature = "tls")]
            tls: None,
            signer: None,
            #[cfg(feature = "http-client")]
            resolver: None,
            #[cfg(feature = "http-client")]
            runtime: None,
        }
    }

    /// Applies a new configuration to the requests that start from now on: decision rules,
    /// the worker list and its resolve interval, timeouts, backoff, response caps and
    /// `fallback-to-local`. Pooled connections, the lazy-pattern history and the addresses
    /// of worker names still configured are kept. For a host's online-config manager.
    ///
    /// # Errors
    ///
    /// [`Error::Config`]; nothing changes then.
    pub fn update(&self, config: &Config) -> Result<(), Error> {
        config.validate()?;
        self.client.update(config)?;
        self.stats_client.update(&config.stats_worker_config())?;
        let settings = Settings::from_config(config);
        self.settings.store(settings);
        Ok(())
    }

    fn settings(&self) -> Arc<Settings> {
        self.settings.load()
    }

    /// The decision rules in force.
    pub fn rules(&self) -> Rules {
        self.settings().rules
    }

    /// The worker client of DAG requests (worker list and order).
    pub fn client(&self) -> &RemoteClient {
        &self.client
    }

    /// The worker client of analyze and checksum requests (`remote-worker-addr`).
    pub fn stats_client(&self) -> &RemoteClient {
        &self.stats_client
    }

    /// The lazy-pattern history.
    pub fn pattern_stats(&self) -> &PatternStats {
        &self.stats
    }

    /// The metrics, when a registry was given.
    pub fn metrics(&self) -> Option<&Metrics> {
        self.metrics.as_ref()
    }

    /// Records a local execution of a pattern request (upstream reports the scan's
    /// processed size and the process time).
    pub fn record_local(&self, pattern: &RemotePattern, sample: Sample) {
        self.stats.record(pattern, sample);
    }

    /// The request's deadline: `context.max_execution_duration_ms` from `now`, or when that
    /// is 0 `remote-coprocessor-request-timeout` ([`STATS_REQUEST_TIMEOUT`] for analyze and
    /// checksum).
    pub fn deadline_of(&self, request: &Request, now: Instant) -> Instant {
        let ms = request.context.as_ref().map_or(0, |c| c.max_execution_duration_ms);
        let timeout = match ms {
            0 if is_stats(request) => STATS_REQUEST_TIMEOUT,
            0 => self.settings().default_timeout,
            ms => Duration::from_millis(ms),
        };
        // An absurd timeout (hundreds of millions of years) is capped at a day.
        now.checked_add(timeout)
            .or_else(|| now.checked_add(Duration::from_secs(86_400)))
            .unwrap_or(now)
    }

    /// Runs the capability check and the decision rules (reference §2.3) on a request.
    /// Synchronous and callable from any thread.
    ///
    /// # Errors
    ///
    /// What the source's estimate reports.
    pub fn plan(
        &self,
        request: &Request,
        source: &(impl SnapshotSource + ?Sized),
    ) -> Result<Plan, SourceError> {
        let local = |reason| Ok(Plan { decision: Decision::Local(reason), pattern: None });
        if let Some(field) = rcop_exec::unserved_field(request) {
            return local(LocalReason::UnservedField { field });
        }
        if !request.tasks.is_empty() {
            // Sent whole, the forwarded request would drop the tasks.
            return local(LocalReason::BatchedTasks);
        }
        if is_stats(request) {
            // Upstream: always remote when a worker is configured, whatever the size.
            if self.stats_client.workers().is_empty() {
                return local(LocalReason::NoWorker);
            }
            let decision = Decision::Remote { estimate: 0, threshold: 0 };
            return Ok(Plan { decision, pattern: None });
        }
        if self.client.workers().is_empty() {
            return local(LocalReason::NoWorker);
        }
        if !is_dag(request) {
            return local(LocalReason::NotDag { tp: request.tp });
        }
        let Ok(dag) = DagRequest::decode(request.data.clone()) else {
            return local(LocalReason::MalformedDag);
        };
        // What the worker cannot run stays here, before anything is estimated.
        match self.engine.check_dag(&dag) {
            Ok(()) => {}
            Err(rcop_exec::Error::Unsupported { what, detail }) => {
                return local(LocalReason::Unsupported { feature: what, detail });
            }
            Err(_) => return local(LocalReason::MalformedDag),
        }
        let settings = self.settings();
        decide(&settings.rules, &self.stats, self.clock.now_unix_ms(), request, &dag, source)
    }

    /// Assembles the offload body: the forwarded request (upstream's re-assembly: context,
    /// tp, start_ts, data, ranges, and `paging_size = u32::MAX`), the source's lock check
    /// and export (mem-data v2 and change set), in one envelope. Synchronous CPU work,
    /// callable from any thread.
    ///
    /// # Errors
    ///
    /// [`PrepareError::Source`] (e.g. a blocking lock) or [`PrepareError::Envelope`].
    pub fn prepare(
        &self,
        request: &Request,
        source: &(impl SnapshotSource + ?Sized),
        deadline: Instant,
    ) -> Result<Prepared, PrepareError> {
        let forwarded = forwarded_request(request);
        let mut body = Vec::new();
        let format = self.settings().envelope;
        let mut writer = EnvelopeWriter::with_format(&mut body, &forwarded, format)?;
        let mut mem = writer.mem_data(MemDataFormat::V2);
        let change_set = source.export(&forwarded, &mut mem)?;
        mem.finish()?;
        writer.finish(&change_set)?;
        Ok(Prepared {
            envelope: Bytes::from(body),
            key: RoutingKey::of(request),
            deadline,
            stats: is_stats(request),
        })
    }

    /// Sends a prepared request (see [`RemoteClient::send`]).
    ///
    /// # Errors
    ///
    /// As [`RemoteClient::send`].
    pub async fn send(&self, prepared: Prepared) -> Result<Reply, RemoteError> {
        let client = if prepared.stats { &self.stats_client } else { &self.client };
        client.send(prepared.envelope, prepared.key, prepared.deadline).await
    }

    /// Decides, and for a remote decision exports, sends and classifies. The deadline
    /// starts now (see [`deadline_of`](Self::deadline_of)).
    pub async fn dispatch<S: SnapshotSource + ?Sized>(
        &self,
        request: &Request,
        source: &S,
    ) -> Dispatch {
        let deadline = self.deadline_of(request, Instant::now());
        self.dispatch_with_deadline(request, source, deadline).await
    }

    /// As [`dispatch`](Self::dispatch) for a request given as its protobuf bytes (a host on
    /// another protobuf library); answer with [`Answer::into_bytes`]. Bytes that are not a
    /// `coprocessor.Request` stay local ([`LocalReason::MalformedRequest`]).
    pub async fn dispatch_raw<S: SnapshotSource + ?Sized>(
        &self,
        request: Bytes,
        source: &S,
    ) -> Dispatch {
        let Ok(request) = Request::decode(request) else {
            self.count_local(&LocalReason::MalformedRequest);
            return Dispatch::Local { reason: LocalReason::MalformedRequest, pattern: None };
        };
        self.dispatch(&request, source).await
    }

    /// As [`dispatch`](Self::dispatch) with an explicit deadline.
    pub async fn dispatch_with_deadline<S: SnapshotSource + ?Sized>(
        &self,
        request: &Request,
        source: &S,
        deadline: Instant,
    ) -> Dispatch {
        let plan = match self.plan(request, source) {
            Ok(plan) => plan,
            Err(e) => return self.respond_source_error(&e, 0, 0),
        };
        tracing::debug!(
            tag = %RequestTag(request),
            ranges = request.ranges.len(),
            decision = %plan.decision,
            "remote coprocessor decision"
        );
        let (estimate, threshold) = match plan.decision {
            Decision::Local(reason) => {
                self.count_path("local");
                self.count_local(&reason);
                return Dispatch::Local { reason, pattern: plan.pattern };
            }
            Decision::Remote { estimate, threshold } => (estimate, threshold),
        };
        if let Some(m) = &self.metrics {
            m.estimate_blocks.observe(estimate as f64);
        }
        // Lock checks and the export copy every memtable row of the ranges: CPU work that must
        // not stall the other tasks of the caller's runtime thread.
        let prepared = match cpu_bound(|| self.prepare(request, source, deadline)) {
            Ok(p) => p,
            Err(PrepareError::Source(e)) => {
                return self.respond_source_error(&e, estimate, threshold);
            }
            Err(PrepareError::Envelope(e)) => {
                return self.respond_remote_error(RemoteError::Envelope(e), estimate, threshold);
            }
        };
        let outcome = match self.send(prepared.clone()).await {
            Ok(reply) => self.complete(request, &prepared, reply).await,
            Err(error) => Err(error),
        };
        match outcome {
            Ok(done) => {
                self.count_path("remote");
                self.observe_reply(done.answer.response());
                Dispatch::Respond {
                    answer: done.answer,
                    estimate,
                    threshold,
                    worker: Some(done.worker),
                    attempts: done.attempts,
                    pages: done.pages,
                }
            }
            Err(error) if error.requires_local() => {
                self.log_refusal(request, &error);
                self.fallback(error, plan.pattern)
            }
            Err(error) if self.settings().fallback_to_local && error.allows_fallback() => {
                tracing::warn!(
                    tag = %RequestTag(request),
                    %error,
                    "remote coprocessor failed; falling back to local execution"
                );
                self.fallback(error, plan.pattern)
            }
            Err(error) => {
                tracing::warn!(tag = %RequestTag(request), %error, "remote coprocessor failed");
                self.respond_remote_error(error, estimate, threshold)
            }
        }
    }

    /// Turns the first reply into the answer: a worker that cannot run the DAG sends the
    /// request back; a non-paging answer cut into pages is resumed until whole.
    async fn complete(
        &self,
        request: &Request,
        prepared: &Prepared,
        reply: Reply,
    ) -> Result<Completed, RemoteError> {
        if let Some(message) = assemble::unsupported_message(&reply.response) {
            return Err(RemoteError::Unsupported { worker: reply.worker, message });
        }
        let cut = reply.response.range.is_some() && !assemble::is_error(&reply.response);
        if request.paging_size > 0 || !cut {
            // A paging request's range goes back to TiDB, which resumes from it.
            let (worker, attempts) = (reply.worker.clone(), reply.attempts);
            return Ok(Completed { answer: Answer::verbatim(reply), worker, attempts, pages: 1 });
        }
        self.resume(request, prepared, reply).await
    }

    /// Fetches the rest of a non-paging answer page by page and concatenates it.
    async fn resume(
        &self,
        request: &Request,
        prepared: &Prepared,
        first: Reply,
    ) -> Result<Completed, RemoteError> {
        let worker = first.worker.clone();
        let unresumable = |worker: &Arc<str>, reason: String| RemoteError::Unresumable {
            worker: worker.clone(),
            reason,
        };
        let dag = DagRequest::decode(request.data.clone())
            .map_err(|e| unresumable(&worker, e.to_string()))?;
        let resume = Resume::new(&dag).map_err(|r| unresumable(&worker, r))?;
        let envelope = Envelope::decode(prepared.envelope.clone())
            .map_err(|e| unresumable(&worker, e.to_string()))?;
        let limit = self.settings().max_whole_response;
        let mut attempts = first.attempts;
        let mut range = first.response.range.clone();
        let mut ranges = request.ranges.clone();
        let mut whole = Assembled::new(first.response, &dag, resume.counted_columns())
            .map_err(|r| unresumable(&worker, r))?;
        let mut pages = 1u32;
        let base = forwarded_request(request);
        while let Some(scanned) = range.take() {
            if whole.bytes > limit {
                return Err(RemoteError::AnswerTooLarge { limit });
            }
            let next = resume
                .next(&base, &ranges, &scanned, whole.rows)
                .map_err(|r| unresumable(&worker, r))?;
            let Some((next, finished)) = next else { break };
            if pages >= MAX_PAGES {
                return Err(unresumable(&worker, format!("more than {MAX_PAGES} pages")));
            }
            let mut body = Vec::with_capacity(prepared.envelope.len());
            rcop_wire::encode_raw_envelope_into(
                &next.encode_to_vec(),
                envelope.mem_data_bytes(),
                envelope.change_set_bytes(),
                &mut body,
            )?;
            let reply =
                self.client.send(Bytes::from(body), prepared.key, prepared.deadline).await?;
            attempts = attempts.saturating_add(reply.attempts);
            pages += 1;
            if let Some(m) = &self.metrics {
                m.resumed_pages.inc();
            }
            if let Some(message) = assemble::unsupported_message(&reply.response) {
                return Err(RemoteError::Unsupported { worker: reply.worker, message });
            }
            if assemble::is_error(&reply.response) {
                // A lock or region error on a later page answers the whole request.
                return Ok(Completed {
                    worker: reply.worker.clone(),
                    answer: Answer::verbatim(reply),
                    attempts,
                    pages,
                });
            }
            range = reply.response.range.clone();
            // Decoding the page (and counting its rows for a Limit) is CPU work.
            cpu_bound(|| whole.push(&reply.response, finished, resume.counted_columns()))
                .map_err(|r| unresumable(&reply.worker, r))?;
            ranges = next.ranges;
        }
        if whole.bytes > limit {
            return Err(RemoteError::AnswerTooLarge { limit });
        }
        // Encoding the whole answer (up to the size bound) is CPU work too.
        let answer = Answer::decoded(cpu_bound(|| whole.finish()));
        Ok(Completed { answer, worker, attempts, pages })
    }

    fn fallback(&self, error: RemoteError, pattern: Option<RemotePattern>) -> Dispatch {
        self.count_path("local");
        self.count_error(error.reason());
        if let Some(m) = &self.metrics {
            m.local.with_label_values(&[&format!("fallback_{}", error.reason())]).inc();
        }
        Dispatch::FallbackLocal { error, pattern }
    }

    /// Logs a request no worker could take, at most once a minute: the usual cause is this
    /// node's own export or an older worker, not the request.
    fn log_refusal(&self, request: &Request, error: &RemoteError) {
        if let Some(suppressed) = self.refusals.allow() {
            tracing::warn!(
                tag = %RequestTag(request),
                %error,
                suppressed,
                "worker refused an offloaded request; it runs locally (logged once a minute)"
            );
        }
    }

    fn respond_source_error(&self, e: &SourceError, estimate: u64, threshold: u64) -> Dispatch {
        self.count_error(e.reason());
        Dispatch::Respond {
            answer: Answer::decoded(e.to_response()),
            estimate,
            threshold,
            worker: None,
            attempts: 0,
            pages: 0,
        }
    }

    fn respond_remote_error(&self, e: RemoteError, estimate: u64, threshold: u64) -> Dispatch {
        self.count_error(e.reason());
        self.count_path("remote");
        let attempts = match &e {
            RemoteError::DeadlineExceeded { attempts, .. }
            | RemoteError::AllWorkersFailed { attempts, .. } => *attempts,
            _ => 1,
        };
        Dispatch::Respond {
            answer: Answer::decoded(e.to_response()),
            estimate,
            threshold,
            worker: None,
            attempts,
            pages: 0,
        }
    }

    fn observe_reply(&self, response: &Response) {
        let Some(m) = &self.metrics else { return };
        if let Some(size) = response
            .exec_details_v2
            .as_ref()
            .and_then(|d| d.scan_detail_v2.as_ref())
            .map(|s| s.processed_versions_size)
        {
            m.remote_processed_size.inc_by(size);
        }
        if response.locked.is_some() {
            m.request_error.with_label_values(&["lock"]).inc();
        } else if response.region_error.is_some() {
            m.request_error.with_label_values(&["region"]).inc();
        } else if !response.other_error.is_empty() {
            m.request_error.with_label_values(&["other"]).inc();
        }
    }

    fn count_path(&self, path: &str) {
        if let Some(m) = &self.metrics {
            m.requests.with_label_values(&[path]).inc();
        }
    }

    fn count_local(&self, reason: &LocalReason) {
        if let Some(m) = &self.metrics {
            m.local.with_label_values(&[&reason.label()]).inc();
        }
    }

    fn count_error(&self, reason: &str) {
        if let Some(m) = &self.metrics {
            m.request_error.with_label_values(&[reason]).inc();
        }
    }
}

/// A finished remote exchange.
#[derive(Debug)]
struct Completed {
    answer: Answer,
    worker: Arc<str>,
    attempts: u32,
    pages: u32,
}

/// Upstream's storage-node log tag `ks{keyspace}:{shard_id}:{shard_ver}:{start_ts}`.
struct RequestTag<'a>(&'a Request);

impl fmt::Display for RequestTag<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ctx = self.0.context.as_ref();
        let ks = ctx.and_then(|c| c.keyspace_id).unwrap_or(0);
        let shard = ctx.map_or(0, |c| c.region_id);
        let ver = ctx.and_then(|c| c.region_epoch.as_ref()).map_or(0, |e| e.version);
        write!(f, "ks{ks}:{shard}:{ver}:{}", self.0.start_ts)
    }
}

/// Upstream's re-assembled request: only context, tp, start_ts, data and ranges are kept,
/// and a DAG's `paging_size` is `u32::MAX` so the worker's response-size cap sets the page
/// (analyze and checksum answer in one response).
pub fn forwarded_request(request: &Request) -> Request {
    let dag = request.tp == REQ_TYPE_DAG;
    Request {
        context: request.context.clone(),
        tp: request.tp,
        data: request.data.clone(),
        start_ts: request.start_ts,
        ranges: request.ranges.clone(),
        paging_size: if dag { u64::from(u32::MAX) } else { request.paging_size },
        ..Request::default()
    }
}

/// Why [`Offloader::prepare`] could not assemble a body.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrepareError {
    /// The source refused (a blocking lock, a region error, a storage error).
    #[error(transparent)]
    Source(#[from] SourceError),
    /// A part exceeded the envelope's `u32` lengths.
    #[error(transparent)]
    Envelope(#[from] rcop_wire::Error),
}

/// Runs CPU-bound `f`. On a multi-thread tokio runtime the current worker thread hands its
/// other tasks to the rest of the pool first (`block_in_place`); elsewhere `f` just runs.
fn cpu_bound<T>(f: impl FnOnce() -> T) -> T {
    #[cfg(feature = "http-client")]
    {
        use tokio::runtime::{Handle, RuntimeFlavor};
        if let Ok(h) = Handle::try_current()
            && h.runtime_flavor() == RuntimeFlavor::MultiThread
        {
            return tokio::task::block_in_place(f);
        }
    }
    f()
}

#[cfg(test)]
mod tests {
    use rcop_proto::kvrpcpb::Context;
    use rcop_proto::metapb::RegionEpoch;

    use super::*;

    #[test]
    fn request_tag_is_upstreams() {
        let request = Request {
            context: Some(Context {
                keyspace_id: Some(3),
                region_id: 42,
                region_epoch: Some(RegionEpoch { conf_ver: 1, version: 7 }),
                ..Context::default()
            }),
            start_ts: 99,
            ..Request::default()
        };
        assert_eq!(RequestTag(&request).to_string(), "ks3:42:7:99");
        assert_eq!(RequestTag(&Request::default()).to_string(), "ks0:0:0:0");
    }

    #[test]
    fn rate_limit_lets_one_through_per_interval() {
        let r = RateLimited::new(Duration::from_secs(3600));
        assert_eq!(r.allow(), Some(0));
        assert_eq!(r.allow(), None);
        assert_eq!(r.allow(), None);
        let r = RateLimited::new(Duration::ZERO);
        assert_eq!(r.allow(), Some(0));
        assert_eq!(r.allow(), Some(0));
    }

    #[cfg(feature = "http-client")]
    #[test]
    fn deadline_defaults_and_caps() {
        let config = Config {
            remote_coprocessor_request_timeout: crate::ReadableDuration(Duration::from_secs(5)),
            ..Config::default()
        };
        let o = Offloader::builder(config).build().unwrap();
        let now = Instant::now();
        let with_ms = |ms| Request {
            context: Some(Context { max_execution_duration_ms: ms, ..Context::default() }),
            ..Request::default()
        };
        assert_eq!(o.deadline_of(&Request::default(), now), now + Duration::from_secs(5));
        assert_eq!(o.deadline_of(&with_ms(0), now), now + Duration::from_secs(5));
        assert_eq!(o.deadline_of(&with_ms(250), now), now + Duration::from_millis(250));
        assert!(o.deadline_of(&with_ms(u64::MAX), now) > now);
    }
}
