//! The storage node's entry point: decide, export, send, classify.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use prometheus::Registry;
use prost::Message;
use rcop_proto::REQ_TYPE_DAG;
use rcop_proto::coprocessor::{Request, Response};
use rcop_proto::tipb::DagRequest;
use rcop_wire::{EnvelopeWriter, MemDataFormat};
use tokio::time::Instant;

use crate::client::{RemoteClient, Reply};
use crate::config::Config;
use crate::decision::{Decision, LocalReason, Plan, Rules, decide, is_dag};
use crate::error::{Error, RemoteError, SourceError};
use crate::metrics::Metrics;
use crate::pattern::{PatternStats, RemotePattern, Sample};
use crate::routing::RoutingKey;
use crate::source::{Clock, SnapshotSource, SystemClock};

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
    /// Answer the client with `response`: the worker's response (possibly carrying a
    /// relayed `region_error` / `locked` / `other_error`), a `locked` / `region_error` found
    /// before sending, or a remote failure turned into an error response.
    Respond {
        /// The response to send to the client (boxed: it is large beside the others).
        response: Box<Response>,
        /// The estimate that made the request remote.
        estimate: u64,
        /// The threshold it was compared with.
        threshold: u64,
        /// The worker that answered, if one did.
        worker: Option<Arc<str>>,
        /// HTTP attempts made.
        attempts: u32,
    },
    /// `fallback-to-local` is on and the remote path failed retryably: execute locally.
    FallbackLocal {
        /// The remote failure.
        error: RemoteError,
        /// The request's lazy pattern.
        pattern: Option<RemotePattern>,
    },
}

/// An offload request ready to send: the envelope and where and until when to send it.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The envelope body.
    pub envelope: Bytes,
    /// The worker affinity key.
    pub key: RoutingKey,
    /// The request deadline.
    pub deadline: Instant,
}

/// Builds an [`Offloader`].
#[derive(Debug)]
pub struct Builder<'r> {
    config: Config,
    clock: Arc<dyn Clock>,
    registry: Option<&'r Registry>,
    tls: Option<rustls::ClientConfig>,
}

impl<'r> Builder<'r> {
    /// Uses `clock` to age queries (default: the system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Registers the metrics on `registry`.
    pub fn registry(mut self, registry: &'r Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Uses this TLS configuration for `https://` workers (default: Mozilla roots, ring).
    pub fn tls_config(mut self, tls: rustls::ClientConfig) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Builds the offloader. Must run inside a Tokio runtime only when requests are sent.
    ///
    /// # Errors
    ///
    /// [`Error::Config`], [`Error::Tls`], [`Error::Metrics`].
    pub fn build(self) -> Result<Offloader, Error> {
        let mut client = match self.tls {
            Some(tls) => RemoteClient::with_tls(&self.config, tls)?,
            None => RemoteClient::new(&self.config)?,
        };
        let metrics = self.registry.map(Metrics::register).transpose()?;
        if let Some(m) = &metrics {
            client.set_metrics(m.clone());
        }
        let rules = Rules {
            min_blocks_size: self.config.remote_coprocessor_min_blocks_size.as_u64(),
            num_ranges: self.config.remote_coprocessor_num_ranges,
            min_process_duration: self.config.remote_coprocessor_min_process_duration.as_duration(),
        };
        Ok(Offloader {
            rules,
            default_timeout: self.config.remote_coprocessor_request_timeout.as_duration(),
            fallback_to_local: self.config.fallback_to_local,
            stats: PatternStats::new(),
            client,
            metrics,
            clock: self.clock,
        })
    }
}

/// The storage-node side of the remote coprocessor.
///
/// [`dispatch`](Self::dispatch) runs the whole path for one `coprocessor.Request`: the
/// decision rules, lock checks and export through the [`SnapshotSource`], the envelope
/// (with `paging_size = u32::MAX`), the HTTP call with retries and failover, and the
/// response classification. The lower-level steps ([`plan`](Self::plan),
/// [`prepare`](Self::prepare), [`send`](Self::send)) are public for callers that need to
/// interleave their own work.
///
/// Only unary DAG requests should be dispatched; streaming requests are not offloaded.
#[derive(Debug)]
pub struct Offloader {
    rules: Rules,
    default_timeout: Duration,
    fallback_to_local: bool,
    stats: PatternStats,
    client: RemoteClient,
    metrics: Option<Metrics>,
    clock: Arc<dyn Clock>,
}

impl Offloader {
    /// Starts building an offloader from `config`.
    pub fn builder<'r>(config: Config) -> Builder<'r> {
        Builder { config, clock: Arc::new(SystemClock), registry: None, tls: None }
    }

    /// The HTTP client (worker list and order).
    pub fn client(&self) -> &RemoteClient {
        &self.client
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

    /// The request's deadline: `context.max_execution_duration_ms` from `now`, or
    /// `remote-coprocessor-request-timeout` when that is 0.
    pub fn deadline_of(&self, request: &Request, now: Instant) -> Instant {
        let ms = request.context.as_ref().map_or(0, |c| c.max_execution_duration_ms);
        let timeout = if ms == 0 { self.default_timeout } else { Duration::from_millis(ms) };
        // An absurd timeout (hundreds of millions of years) is capped at a day.
        now.checked_add(timeout)
            .or_else(|| now.checked_add(Duration::from_secs(86_400)))
            .unwrap_or(now)
    }

    /// Runs the decision rules (reference §2.3) on a request.
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
        if self.client.workers().is_empty() {
            return local(LocalReason::NoWorker);
        }
        if !is_dag(request) {
            return local(LocalReason::NotDag { tp: request.tp });
        }
        let Ok(dag) = DagRequest::decode(request.data.clone()) else {
            return local(LocalReason::MalformedDag);
        };
        decide(&self.rules, &self.stats, self.clock.now_unix_ms(), request, &dag, source)
    }

    /// Assembles the offload body: the forwarded request (upstream's re-assembly: context,
    /// tp, start_ts, data, ranges, and `paging_size = u32::MAX`), the source's lock check
    /// and export (mem-data v2 and change set), in one envelope.
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
        let mut writer = EnvelopeWriter::new(&mut body, &forwarded)?;
        let mut mem = writer.mem_data(MemDataFormat::V2);
        let change_set = source.export(&forwarded, &mut mem)?;
        mem.finish()?;
        writer.finish(&change_set)?;
        Ok(Prepared { envelope: Bytes::from(body), key: RoutingKey::of(request), deadline })
    }

    /// Sends a prepared request (see [`RemoteClient::send`]).
    ///
    /// # Errors
    ///
    /// As [`RemoteClient::send`].
    pub async fn send(&self, prepared: Prepared) -> Result<Reply, RemoteError> {
        self.client.send(prepared.envelope, prepared.key, prepared.deadline).await
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
        match self.send(prepared).await {
            Ok(reply) => {
                self.count_path("remote");
                self.observe_reply(&reply.response);
                Dispatch::Respond {
                    response: Box::new(reply.response),
                    estimate,
                    threshold,
                    worker: Some(reply.worker),
                    attempts: reply.attempts,
                }
            }
            Err(error) if self.fallback_to_local && error.allows_fallback() => {
                tracing::warn!(
                    tag = %RequestTag(request),
                    %error,
                    "remote coprocessor failed; falling back to local execution"
                );
                self.count_path("local");
                self.count_error(error.reason());
                Dispatch::FallbackLocal { error, pattern: plan.pattern }
            }
            Err(error) => {
                tracing::warn!(tag = %RequestTag(request), %error, "remote coprocessor failed");
                self.respond_remote_error(error, estimate, threshold)
            }
        }
    }

    fn respond_source_error(&self, e: &SourceError, estimate: u64, threshold: u64) -> Dispatch {
        self.count_error(e.reason());
        Dispatch::Respond {
            response: Box::new(e.to_response()),
            estimate,
            threshold,
            worker: None,
            attempts: 0,
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
            response: Box::new(e.to_response()),
            estimate,
            threshold,
            worker: None,
            attempts,
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

    fn count_error(&self, reason: &str) {
        if let Some(m) = &self.metrics {
            m.request_error.with_label_values(&[reason]).inc();
        }
    }
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
/// and `paging_size` is `u32::MAX` so the worker's response-size cap sets the page.
pub fn forwarded_request(request: &Request) -> Request {
    Request {
        context: request.context.clone(),
        tp: REQ_TYPE_DAG,
        data: request.data.clone(),
        start_ts: request.start_ts,
        ranges: request.ranges.clone(),
        paging_size: u64::from(u32::MAX),
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
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
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
