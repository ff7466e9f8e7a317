//! The request path of `POST /coprocessor`, independent of HTTP.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use prometheus::Registry;
use prost::Message;
use rcop_exec::{Engine, EngineConfig};
use rcop_limiter::{KeyspaceId, Limiter, MemoryProbe, MemoryReservation, SamplerThread};
use rcop_proto::{REQ_TYPE_ANALYZE, REQ_TYPE_CHECKSUM, REQ_TYPE_DAG, coprocessor, kvrpcpb};
use rcop_snap::{RebuildRequest, plan_rebuild};
use rcop_sst::{
    BlockCache, IaCache, IaRequest, IaRequestStats, MetaCache, ReaderOptions, SstReader, SstStore,
};
use rcop_wire::{Envelope, EnvelopeFormat};
use tracing::Instrument;

use crate::cache::IaMetrics;
use crate::config::{DEFAULT_COP_TIMEOUT, WorkerConfig};
use crate::error::{Error, Result};
use crate::metrics::WorkerMetrics;
use crate::pool::ComputePool;
use crate::source::{ScanStats, SnapScan};

/// Upstream's `SIZE_DISCOUNT_PERCENT`: `processed_versions_size` reports half the scanned
/// bytes ("coprocessor on cop-worker is much cheaper").
pub const SIZE_DISCOUNT_PERCENT: u64 = 50;

/// Smallest metadata cache, whatever the block cache size.
const MIN_META_CACHE_BYTES: u64 = 8 << 20;

/// An HTTP-independent reply: status, optional content type, body.
///
/// Non-exhaustive: build one with [`Reply::new`] or [`Reply::text`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// `Content-Type`, when one is set.
    pub content_type: Option<&'static str>,
    /// The body.
    pub body: Bytes,
}

impl Reply {
    /// A reply with the given status, content type and body.
    pub fn new(status: u16, content_type: Option<&'static str>, body: impl Into<Bytes>) -> Self {
        Reply { status, content_type, body: body.into() }
    }

    /// A plain-text reply.
    pub fn text(status: u16, text: impl Into<String>) -> Self {
        Reply {
            status,
            content_type: Some("text/plain; charset=utf-8"),
            body: Bytes::from(text.into()),
        }
    }
}

/// The engine's memory budget: the request's reservation, grown and shrunk as the engine's
/// state changes.
#[derive(Debug)]
struct ReservationBudget {
    reservation: Arc<std::sync::Mutex<MemoryReservation>>,
    /// Bytes the request holds elsewhere (its body).
    others: u64,
    capacity: u64,
}

impl ReservationBudget {
    /// The request's whole need with `requested` bytes more than the reservation holds now,
    /// when it is past the capacity (it can never fit); `None` when it could fit once others
    /// free theirs.
    fn total_with(&self, requested: u64) -> Option<u64> {
        let held = self.reservation.lock().map_or(0, |r| r.bytes());
        let total = held.saturating_add(self.others).saturating_add(requested);
        (total > self.capacity).then_some(total)
    }
}

impl rcop_exec::MemoryBudget for ReservationBudget {
    fn try_grow(&self, bytes: usize) -> bool {
        self.reservation.lock().is_ok_and(|mut r| r.try_grow(bytes as u64).is_ok())
    }

    fn shrink(&self, bytes: usize) {
        if let Ok(mut r) = self.reservation.lock() {
            r.shrink(bytes as u64);
        }
    }
}

/// What `/readyz` reports: draining, and the last object-store check's error.
#[derive(Debug, Default)]
struct Readiness {
    draining: std::sync::atomic::AtomicBool,
    store_error: std::sync::Mutex<Option<String>>,
}

/// One `POST /coprocessor` as the HTTP layer received it: the body, what the headers said,
/// and the memory already reserved for the body.
///
/// Non-exhaustive: start from [`CopRequest::new`].
#[derive(Debug)]
#[non_exhaustive]
pub struct CopRequest {
    /// The body (an envelope).
    pub body: Bytes,
    /// Whether `Accept` names `application/protobuf`: coprocessor errors then come back as
    /// protobuf bodies.
    pub accepts_protobuf: bool,
    /// The envelope format the `x-rcop-envelope` header announced; the body must be in it.
    pub envelope: Option<EnvelopeFormat>,
    /// Bytes reserved for the body while it was read; held until the request is done.
    pub reservation: Option<MemoryReservation>,
    /// The sender's `x-dfs-remote-cache-addr` (`host:port`): recent files are read from it
    /// before the object store (`cop-remote-dfs-cache-ttl`).
    pub remote_cache: Option<String>,
}

impl CopRequest {
    /// A request of `body`, nothing announced, nothing reserved.
    pub fn new(body: Bytes) -> Self {
        CopRequest {
            body,
            accepts_protobuf: false,
            envelope: None,
            reservation: None,
            remote_cache: None,
        }
    }

    /// Sets [`accepts_protobuf`](Self::accepts_protobuf).
    #[must_use]
    pub fn with_accepts_protobuf(mut self, yes: bool) -> Self {
        self.accepts_protobuf = yes;
        self
    }

    /// Sets [`envelope`](Self::envelope).
    #[must_use]
    pub fn with_envelope(mut self, format: EnvelopeFormat) -> Self {
        self.envelope = Some(format);
        self
    }

    /// Sets [`remote_cache`](Self::remote_cache).
    #[must_use]
    pub fn with_remote_cache(mut self, addr: impl Into<String>) -> Self {
        self.remote_cache = Some(addr.into());
        self
    }

    /// Sets [`reservation`](Self::reservation).
    #[must_use]
    pub fn with_reservation(mut self, reservation: MemoryReservation) -> Self {
        self.reservation = Some(reservation);
        self
    }
}

/// The remote-coprocessor worker: rebuilds each request's snapshot from object storage and
/// runs the DAG on a compute pool, under the limiter's admission.
///
/// Built with [`Worker::builder`]; served over HTTP with [`Worker::bind`] (see
/// [`crate::Server`]), or driven directly with [`Worker::handle_coprocessor`].
#[derive(Debug)]
pub struct Worker {
    config: WorkerConfig,
    limiter: Limiter,
    reader: SstReader,
    engine: Engine,
    pool: ComputePool,
    metrics: WorkerMetrics,
    /// The disk cache's metrics, when the cache runs.
    ia_metrics: Option<IaMetrics>,
    /// The key that signs offload requests (`[security] shared-secret-path`).
    auth: Option<rcop_tls::SharedSecret>,
    /// One warning per second for failed requests; the rest are counted and logged at debug.
    warn_gate: rcop_units::log::RateLimited,
    /// What `/readyz` reports.
    readiness: Readiness,
    /// Reads recent files from the requesting storage node (`x-dfs-remote-cache-addr`).
    #[cfg(feature = "server")]
    remote_cache: Option<crate::remote_cache::RemoteCacheConnector>,
    /// Refreshes the limiter's memory sample until the worker is dropped.
    _sampler: SamplerThread,
}

/// Assembles a [`Worker`]. Everything a host may already have is injectable: the object
/// store, the metrics registry, the block and metadata caches, the reader options, the
/// engine settings, the compute-pool size; and for tests the memory probe and core count.
#[derive(Debug)]
pub struct WorkerBuilder {
    config: WorkerConfig,
    store: Option<Arc<SstStore>>,
    probe: Option<Arc<dyn MemoryProbe>>,
    cores: Option<usize>,
    registry: Option<Registry>,
    block_cache: Option<BlockCache>,
    meta_cache: Option<MetaCache>,
    reader_options: Option<ReaderOptions>,
    engine: Option<EngineConfig>,
    compute_threads: Option<usize>,
    disk_cache: Option<IaCache>,
}

impl WorkerBuilder {
    /// Reads files from `store` instead of the one `[dfs]` describes.
    pub fn store(mut self, store: Arc<SstStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Reads process memory through `probe` instead of `/proc` and cgroups.
    pub fn memory_probe(mut self, probe: Arc<dyn MemoryProbe>) -> Self {
        self.probe = Some(probe);
        self
    }

    /// Sizes the permits and the compute pool for `cores` cores instead of the machine's.
    pub fn cores(mut self, cores: usize) -> Self {
        self.cores = Some(cores);
        self
    }

    /// Registers the worker's and the limiter's metrics in the host's `registry` instead of
    /// a registry of the worker's own (none of the names is one TiKV registers).
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Uses the host's decompressed-block cache instead of one sized by
    /// `cop-block-cache-size`.
    pub fn block_cache(mut self, cache: BlockCache) -> Self {
        self.block_cache = Some(cache);
        self
    }

    /// Uses the host's metadata cache instead of one a quarter of the block cache's size.
    pub fn meta_cache(mut self, cache: MetaCache) -> Self {
        self.meta_cache = Some(cache);
        self
    }

    /// Reads SST files with these options (ranged-read sizes, concurrency). Default:
    /// [`ReaderOptions::for_backend`] of the configured store.
    pub fn reader_options(mut self, options: ReaderOptions) -> Self {
        self.reader_options = Some(options);
        self
    }

    /// Runs DAGs with these engine settings. `max_response_bytes` defaults to
    /// `cop-max-resp-size`.
    pub fn engine_config(mut self, engine: EngineConfig) -> Self {
        self.engine = Some(engine);
        self
    }

    /// Runs `threads` compute threads instead of cores × `thread-pool-size-factor`.
    pub fn compute_threads(mut self, threads: usize) -> Self {
        self.compute_threads = Some(threads.max(1));
        self
    }

    /// Reads through the host's disk cache instead of opening one under `data-dir` (the
    /// `kv_engine_ia_*` metrics are then the host's to register).
    pub fn disk_cache(mut self, cache: IaCache) -> Self {
        self.disk_cache = Some(cache);
        self
    }

    /// Validates the configuration, opens the object store, builds the limiter, the caches
    /// and the compute pool, and starts the limiter's memory sampler (a thread of its own,
    /// stopped when the worker is dropped; no async runtime needed).
    ///
    /// With `data-dir` set, opens the disk cache under it, blocking while it restores the
    /// files a previous run left (an unusable directory is logged and the cache keeps
    /// segments in memory only: the worker still starts).
    ///
    /// # Errors
    ///
    /// [`Error::Config`], [`Error::Store`], [`Error::Limiter`], [`Error::Metrics`],
    /// [`Error::Io`] (spawning threads).
    pub fn build(self) -> Result<Worker> {
        let config = self.config;
        config.validate()?;
        rcop_units::log::set_redact_info_log(config.security.redact_info_log);
        let auth = config
            .security
            .shared_secret()
            .map_err(|e| Error::config("security.shared-secret-path", e.to_string()))?;
        let metrics = WorkerMetrics::register(self.registry.unwrap_or_default())?;
        let cores = self
            .cores
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
        let mut limiter = Limiter::builder(config.limiter.clone())
            .metrics(metrics.limiter().clone())
            .cores(cores);
        if let Some(probe) = self.probe {
            limiter = limiter.probe(probe);
        }
        let limiter = limiter.build()?;
        // Without options set, reads are sized for the configured backend (a store given to
        // the builder gets the object-store defaults).
        let (store, reader_options) = match self.store {
            Some(store) => (store, self.reader_options.unwrap_or_default()),
            None => {
                let cfg = config.dfs.store_config();
                let options =
                    self.reader_options.unwrap_or_else(|| ReaderOptions::for_backend(&cfg.backend));
                (Arc::new(SstStore::from_config(&cfg).map_err(Error::Store)?), options)
            }
        };
        let block_bytes = config.cop_block_cache_size.resolve(limiter.memory_monitor().limit());
        let meta_bytes = (block_bytes / 4).max(MIN_META_CACHE_BYTES);
        let block_cache = self.block_cache.unwrap_or_else(|| BlockCache::new(block_bytes));
        let meta_cache = self.meta_cache.unwrap_or_else(|| MetaCache::new(meta_bytes));
        metrics.registry().register(Box::new(crate::metrics::StorageCollector::new(
            Arc::clone(&store),
            block_cache.clone(),
            meta_cache.clone(),
        )?))?;
        let mut reader = SstReader::new(store, block_cache, meta_cache, reader_options);
        let mut ia_metrics = None;
        let disk_cache = match self.disk_cache {
            Some(cache) => Some(cache),
            None if config.disk_cache_enabled() => {
                let (cache, m) = crate::cache::open(
                    &config.data_dir,
                    &config.ia,
                    &config.local_gc,
                    metrics.registry(),
                )?;
                tracing::info!(dir = %cache.dir().display(), stats = ?cache.stats(), "disk cache open");
                ia_metrics = Some(m);
                Some(cache)
            }
            None => None,
        };
        if let Some(cache) = disk_cache {
            reader = reader.with_ia(cache);
        }
        let engine = Engine::new(self.engine.unwrap_or_else(|| {
            EngineConfig::default().with_max_response_bytes(
                usize::try_from(config.cop_max_resp_size.0).unwrap_or(usize::MAX),
            )
        }));
        #[cfg(feature = "server")]
        let remote_cache = {
            let tls =
                if config.security.enabled() {
                    Some(config.security.client_config(&[b"http/1.1"]).map_err(|e| {
                        Error::config("security", format!("remote cache client: {e}"))
                    })?)
                } else {
                    None
                };
            Some(
                crate::remote_cache::RemoteCacheConnector::new(
                    tls,
                    config.cop_remote_dfs_cache_ttl.as_duration(),
                )
                .with_metrics(metrics.remote_cache_reads().clone()),
            )
        };
        let threads = self.compute_threads.unwrap_or_else(|| config.compute_threads(cores));
        let pool = ComputePool::new(threads)?;
        // Sampled from now on, on a thread of its own: the cop-limiter reads the sample.
        let sampler = limiter.start_memory_sampler()?;
        Ok(Worker {
            config,
            limiter,
            reader,
            engine,
            pool,
            metrics,
            ia_metrics,
            auth,
            warn_gate: rcop_units::log::RateLimited::new(Duration::from_secs(1)),
            readiness: Readiness::default(),
            #[cfg(feature = "server")]
            remote_cache,
            _sampler: sampler,
        })
    }
}

/// `path` label of the HTTP offload (the second way).
pub(crate) const PATH_HTTP: &str = "http";
/// `path` label of the gRPC delegate path (the first way).
#[cfg_attr(not(feature = "grpc"), allow(dead_code))]
pub(crate) const PATH_GRPC: &str = "grpc";

/// What the engine's jobs of one request share: the snapshot and the request's limits.
#[derive(Debug)]
struct Run {
    snapshot: Arc<rcop_snap::Snapshot<rcop_sst::Prefetched>>,
    limits: rcop_exec::ExecLimits,
    deadline: Instant,
    cancel: Arc<std::sync::atomic::AtomicBool>,
}

/// Per-request facts for the log line and the exec details.
#[derive(Debug)]
pub(crate) struct Timings {
    pub(crate) permit_wait: Duration,
    pub(crate) snapshot: Duration,
    pub(crate) process: Duration,
}

/// What [`Worker::execute`] hands back: the response (a coprocessor error in its fields is
/// still `Ok`), the scan counters, the timings, the timeout applied and the keyspace.
#[derive(Debug)]
pub(crate) struct Executed {
    pub(crate) resp: coprocessor::Response,
    pub(crate) stats: ScanStats,
    pub(crate) timings: Timings,
    pub(crate) timeout: Duration,
    pub(crate) keyspace: u32,
    /// `coprocessor.Request.tp`.
    pub(crate) tp: i64,
}

/// The request types the worker serves: DAGs (103) and checksums (105).
pub(crate) fn is_served_type(tp: i64) -> bool {
    tp == REQ_TYPE_DAG || tp == REQ_TYPE_CHECKSUM || tp == REQ_TYPE_ANALYZE
}

/// Upstream's log tag: `{dag|analyze|checksum} ks{keyspace}:{region}:{epoch}:{start_ts}`.
pub(crate) fn request_tag(req: &coprocessor::Request) -> String {
    let ctx = req.context.as_ref();
    let keyspace = ctx.and_then(|c| c.keyspace_id).unwrap_or(0);
    let region = ctx.map_or(0, |c| c.region_id);
    let epoch = ctx.and_then(|c| c.region_epoch.as_ref()).map_or(0, |e| e.version);
    let kind = match req.tp {
        REQ_TYPE_CHECKSUM => "checksum",
        REQ_TYPE_ANALYZE => "analyze",
        _ => "dag",
    };
    format!("{kind} ks{keyspace}:{region}:{epoch}:{}", req.start_ts)
}

/// The request's timeout: `context.max_execution_duration_ms`, 0 → [`DEFAULT_COP_TIMEOUT`],
/// at most `cap` (`max-execution-duration`).
pub(crate) fn request_timeout(req: &coprocessor::Request, cap: Duration) -> Duration {
    match req.context.as_ref().map_or(0, |c| c.max_execution_duration_ms) {
        0 => DEFAULT_COP_TIMEOUT,
        ms => Duration::from_millis(ms),
    }
    .min(cap)
}

/// Set when the request's future is dropped before it finished (the client disconnected, a
/// gRPC call was cancelled): the work still queued or running sees the flag at its next
/// check and stops.
struct CancelOnDrop {
    flag: Arc<std::sync::atomic::AtomicBool>,
    done: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        // The request's `ProcessingGuard` counts the cancellation.
        if !self.done {
            self.flag.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// The answer to a request type other than DAG.
pub(crate) fn unsupported_type(tp: i64) -> coprocessor::Response {
    coprocessor::Response {
        other_error: format!("unsupported coprocessor request type {tp}"),
        ..Default::default()
    }
}

impl Worker {
    /// A builder for `config`.
    pub fn builder(config: WorkerConfig) -> WorkerBuilder {
        WorkerBuilder {
            config,
            store: None,
            probe: None,
            cores: None,
            registry: None,
            block_cache: None,
            meta_cache: None,
            reader_options: None,
            engine: None,
            compute_threads: None,
            disk_cache: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &WorkerConfig {
        &self.config
    }

    /// The metrics (worker and limiter), for `GET /metrics`.
    pub fn metrics(&self) -> &WorkerMetrics {
        &self.metrics
    }

    /// Applies new limiter capacities at run time — permits, queue bounds, the memory
    /// reservation capacity, the cop-limiter's ratio and waits — to requests admitted from
    /// now on; held permits and reservations stay valid. For a host's online-config manager.
    ///
    /// # Errors
    ///
    /// [`Error::Limiter`] for an invalid configuration; nothing changes then.
    pub fn update_limits(&self, limits: &rcop_limiter::LimiterConfig) -> Result<()> {
        self.limiter.update(limits)?;
        Ok(())
    }

    /// The admission limiter.
    pub fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    /// The SST reader with the block and metadata caches.
    pub fn reader(&self) -> &SstReader {
        &self.reader
    }

    /// The disk cache of SST segments, when it runs.
    pub fn disk_cache(&self) -> Option<&IaCache> {
        self.reader.ia()
    }

    /// Number of compute threads.
    pub fn compute_threads(&self) -> usize {
        self.pool.threads()
    }

    /// Lists the object store once (see `SstStore::check`) and records the outcome for
    /// [`readiness`](Self::readiness).
    ///
    /// # Errors
    ///
    /// The store's error: unreachable, credentials refused, no such bucket.
    pub async fn check_store(&self) -> std::result::Result<(), rcop_sst::Error> {
        let result = self.reader.store().check().await;
        let error = result.as_ref().err().map(ToString::to_string);
        if let Ok(mut slot) = self.readiness.store_error.lock() {
            if error.is_some() != slot.is_some() {
                match &error {
                    Some(e) => tracing::warn!(error = %e, "object store unreachable: not ready"),
                    None => tracing::info!("object store answers: ready"),
                }
            }
            *slot = error;
        }
        self.metrics.set_ready(self.readiness().is_ok());
        result
    }

    /// Marks the worker as draining (shutting down): not ready from now on.
    pub fn set_draining(&self) {
        self.readiness.draining.store(true, std::sync::atomic::Ordering::Relaxed);
        self.metrics.set_ready(false);
    }

    /// `Ok` when the worker should get requests (`/readyz` 200); otherwise why not: draining
    /// on shutdown, or the object store's last check failed.
    pub fn readiness(&self) -> std::result::Result<(), String> {
        if self.readiness.draining.load(std::sync::atomic::Ordering::Relaxed) {
            return Err("draining".to_owned());
        }
        match self.readiness.store_error.lock().ok().and_then(|e| e.clone()) {
            Some(e) => Err(format!("object store unreachable: {e}")),
            None => Ok(()),
        }
    }

    /// The key offload requests must be signed with, when one is configured.
    pub fn shared_secret(&self) -> Option<&rcop_tls::SharedSecret> {
        self.auth.as_ref()
    }

    /// Handles one `POST /coprocessor` body (an envelope). `accepts_protobuf` tells whether
    /// the client's `Accept` names `application/protobuf`, which turns coprocessor errors
    /// into protobuf bodies. See [`handle_request`](Self::handle_request).
    pub async fn handle_coprocessor(&self, body: Bytes, accepts_protobuf: bool) -> Reply {
        self.handle_request(CopRequest::new(body).with_accepts_protobuf(accepts_protobuf)).await
    }

    /// Handles one `POST /coprocessor` (an envelope of format 1 or 2). The caller has
    /// authenticated it (the HTTP routes check `[security] shared-secret-path`).
    ///
    /// Statuses: 200 with a `coprocessor.Response`; 500 for a coprocessor error (region
    /// error, lock, other error), with a protobuf body when accepted; otherwise the status
    /// of the [`Error`] ([`Error::status`]) with a text body.
    pub async fn handle_request(&self, request: CopRequest) -> Reply {
        let received = Instant::now();
        let processing = self.metrics.processing_guard();
        // The tag is known once the request decodes; failures after that log inside the span.
        let span = tracing::info_span!("remote_cop", tag = tracing::field::Empty);
        let accepts_protobuf = request.accepts_protobuf;
        let result =
            self.process(request, received, accepts_protobuf, &span).instrument(span.clone()).await;
        processing.finish();
        let _entered = span.enter();
        let reply = match result {
            Ok(reply) => reply,
            Err(e) => {
                // The limiter counts its own rejections.
                if !matches!(&e, Error::Limiter(l) if l.rejection_label().is_some()) {
                    self.metrics.failed_requests().with_label_values(&[e.failure_label()]).inc();
                }
                self.warn_failed(&e, "remote coprocessor request failed");
                Reply::text(e.status(), e.to_string())
            }
        };
        self.metrics
            .request_duration()
            .with_label_values(&[PATH_HTTP])
            .observe(received.elapsed().as_secs_f64());
        reply
    }

    async fn process(
        &self,
        request: CopRequest,
        received: Instant,
        accepts_pb: bool,
        span: &tracing::Span,
    ) -> Result<Reply> {
        let CopRequest { body, envelope: announced, reservation, remote_cache, .. } = request;
        let req_size = body.len();
        // Format 2's checksums read the whole body: CPU work, kept off the I/O workers.
        let envelope = off_runtime(move |_| Envelope::decode(body)).await??;
        if let Some(announced) = announced
            && announced != envelope.format()
        {
            // A corrupted format number must not turn the checksums off.
            return Err(Error::InvalidRequest(format!(
                "the body is envelope format {}, the {} header says {}",
                envelope.format().number(),
                rcop_wire::HEADER_ENVELOPE,
                announced.number()
            )));
        }
        if envelope.trailing_len() > 0 {
            // Upstream ignores them; a well-behaved sender never writes any, so they are a
            // corrupted or forged body.
            return Err(Error::InvalidRequest(format!(
                "{} bytes after the change set",
                envelope.trailing_len()
            )));
        }
        let req = envelope.decode_request()?;
        span.record("tag", request_tag(&req).as_str());
        if !is_served_type(req.tp) {
            return Ok(self.cop_error(unsupported_type(req.tp), accepts_pb));
        }
        // Mem-data decoding validates every shipped row: CPU work, kept off the I/O workers.
        let decode = move || -> Result<_> {
            Ok((envelope.decode_mem_data()?, envelope.decode_change_set()?))
        };
        let done = self
            .execute(req, decode, received, PATH_HTTP, reservation, remote_cache.as_deref())
            .await?;
        let reply = if is_cop_error(&done.resp) {
            self.cop_error(done.resp, accepts_pb)
        } else {
            let body = Bytes::from(done.resp.encode_to_vec());
            self.record_response(&done, body.len());
            Reply { status: 200, content_type: None, body }
        };
        tracing::info!(
            req_size,
            resp_size = reply.body.len(),
            status = reply.status,
            timeout_ms = ms(done.timeout),
            permit_wait_ms = ms(done.timings.permit_wait),
            snap_ms = ms(done.timings.snapshot),
            process_ms = ms(done.timings.process),
            total_ms = ms(received.elapsed()),
            processed_keys = done.stats.processed_keys,
            "finished remote coprocessor"
        );
        Ok(reply)
    }

    /// The path both ways share once the snapshot's parts are at hand: admission
    /// (cop-limiter, permits) until the deadline, the rebuild plan, the memory reservation,
    /// the block fetch, execution on the compute pool. `decode` turns the shipped parts into
    /// mem-data and change set; it runs on the blocking pool. `remote_cache` is the request's
    /// `x-dfs-remote-cache-addr`, if any.
    pub(crate) async fn execute<D>(
        &self,
        req: coprocessor::Request,
        decode: D,
        received: Instant,
        path: &'static str,
        body_reservation: Option<MemoryReservation>,
        remote_cache: Option<&str>,
    ) -> Result<Executed>
    where
        D: FnOnce() -> Result<(rcop_wire::MemData, rcop_proto::enginepb::ChangeSet)>
            + Send
            + 'static,
    {
        check_ranges(&req.ranges)?;
        let tp = req.tp;
        let ctx = req.context.clone().unwrap_or_default();
        let keyspace = ctx.keyspace_id.unwrap_or(0);
        self.metrics.count_request(req.tp, path);
        let timeout = request_timeout(&req, self.config.max_execution_duration.0);
        let deadline = received + timeout;
        let cancelled = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut guard = CancelOnDrop { flag: Arc::clone(&cancelled), done: false };
        let (mem_data, change_set) = off_runtime(move |_| decode()).await??;

        let permit = self.limiter.admit(KeyspaceId(keyspace), deadline).await?;
        let permit_wait = received.elapsed();

        let snap_start = Instant::now();
        let tokio_deadline = tokio::time::Instant::from_std(deadline);
        // The request's own disk-cache counters (for `ScanDetailV2`) and its keyspace's share
        // of the object-store reads.
        let ia_stats = Arc::new(IaRequestStats::default());
        let reader = self.reader.for_request(IaRequest { keyspace, stats: Arc::clone(&ia_stats) });
        #[cfg(feature = "server")]
        let reader = match remote_cache.and_then(|a| self.remote_cache.as_ref()?.connect(a)) {
            Some(cache) => reader.with_remote_cache(cache),
            None => reader,
        };
        #[cfg(not(feature = "server"))]
        let _ = remote_cache;
        let ranges = req.ranges.clone();
        let read_ts = req.start_ts;
        let plan = off_runtime(move |rt| {
            rt.block_on(tokio::time::timeout_at(tokio_deadline, async {
                let rebuild = RebuildRequest {
                    mem_data: &mem_data,
                    change_set: &change_set,
                    ranges: &ranges,
                    read_ts,
                };
                plan_rebuild(&reader, rebuild).await
            }))
        })
        .await?
        .map_err(|_| Error::SnapshotTimeout(timeout))??;
        // The shipped rows are slices of a body whose bytes the HTTP layer reserved already.
        let needed = match &body_reservation {
            Some(_) => plan.bytes_needed().saturating_sub(plan.mem_bytes()),
            None => plan.bytes_needed(),
        } + dag_decode_bound(req.data.len());
        let reservation = Arc::new(std::sync::Mutex::new(self.limiter.reserve_memory(needed)?));
        // One budget for the rest of the request: the decompressed blocks and the engine's
        // state grow the same reservation. A refusal that the whole capacity could never
        // cover is a 413 (run it locally), else a 503.
        let capacity = self.limiter.memory_limiter().capacity();
        let budget = Arc::new(ReservationBudget {
            reservation: Arc::clone(&reservation),
            // What the request holds besides this reservation: its body's bytes.
            others: body_reservation.as_ref().map_or(0, MemoryReservation::bytes),
            capacity,
        });
        // Blocks are reserved at their stored size; each grows the reservation by what it
        // decompresses to before it is decompressed.
        let blocks = Arc::clone(&budget);
        let plan = plan.with_block_budget(Arc::new(move |bytes: u64| {
            rcop_exec::MemoryBudget::try_grow(
                &*blocks,
                usize::try_from(bytes).unwrap_or(usize::MAX),
            )
        }));
        let fetch_start = Instant::now();
        // The fetch holds the reservation (and the permit and the body's bytes) until it
        // ends, even if this future is dropped while it runs.
        let held = (reservation, body_reservation, permit);
        let (snapshot, held) = off_runtime(move |rt| {
            (rt.block_on(tokio::time::timeout_at(tokio_deadline, plan.fetch())), held)
        })
        .await?;
        let snapshot = match snapshot.map_err(|_| Error::SnapshotTimeout(timeout))? {
            Ok(snapshot) => snapshot,
            Err(e) => {
                if let rcop_snap::Error::Sst(rcop_sst::Error::OverBudget { bytes, .. }) = &e
                    && let Some(needed) = budget.total_with(*bytes)
                {
                    return Err(Error::NeverFits {
                        what: "its decompressed blocks",
                        needed,
                        capacity,
                    });
                }
                return Err(e.into());
            }
        };
        if let Some(m) = &self.ia_metrics {
            m.observe_prefetch(fetch_start.elapsed(), &ia_stats);
        }
        let snapshot_time = snap_start.elapsed();
        self.metrics
            .snapshot_duration()
            .with_label_values(&[path])
            .observe(snapshot_time.as_secs_f64());

        // The engine's state (groups, heaps, buffers, the response) grows the same
        // reservation as the snapshot; its deadline and cancel flag are the request's.
        let limits = rcop_exec::ExecLimits::default()
            .with_deadline(deadline)
            .with_cancel_flag(Arc::clone(&cancelled))
            .with_memory(Arc::clone(&budget) as Arc<dyn rcop_exec::MemoryBudget>);
        let run = Run { snapshot: Arc::new(snapshot), limits, deadline, cancel: cancelled };
        let (outcome, stats, process) = self.run_engine(req, run, held).await?;
        guard.done = true;
        let mut resp = match outcome {
            Ok(resp) => resp,
            Err(rcop_exec::Abort::DeadlineExceeded) => coprocessor::Response {
                region_error: Some(crate::source::deadline_region_error()),
                ..Default::default()
            },
            Err(rcop_exec::Abort::OverBudget { requested, held }) => {
                let requested = requested as u64;
                // The engine gave back what it held when it stopped: count it again.
                return Err(match budget.total_with(requested.saturating_add(held as u64)) {
                    Some(needed) => Error::NeverFits { what: "its execution", needed, capacity },
                    None => Error::OverBudget { requested, held: held as u64 },
                });
            }
            Err(abort) => return Err(Error::Aborted(abort.to_string())),
        };
        self.metrics.process_duration().with_label_values(&[path]).observe(process.as_secs_f64());
        let timings = Timings { permit_wait, snapshot: snapshot_time, process };
        resp.exec_details_v2 = Some(exec_details(&timings, &stats, &ia_stats, received.elapsed()));
        Ok(Executed { resp, stats, timings, timeout, keyspace, tp })
    }

    /// Runs the request on the compute pool: split into parts on idle compute threads when
    /// `cop-parallelism` allows, the request is heavy enough and its shape splits, else
    /// whole on one thread. `held` (permit, reservations, body) lives until every job of
    /// the request has stopped, even if this future is dropped.
    async fn run_engine<H: Send + Sync + 'static>(
        &self,
        req: coprocessor::Request,
        run: Run,
        held: H,
    ) -> Result<(std::result::Result<coprocessor::Response, rcop_exec::Abort>, ScanStats, Duration)>
    {
        let started = Instant::now();
        let req = Arc::new(req);
        let held = Arc::new(held);
        let parts = self.split_parts(&req);
        if parts >= 2 {
            let (engine, snapshot, r) =
                (self.engine.clone(), Arc::clone(&run.snapshot), Arc::clone(&req));
            let min_bytes = self.config.cop_parallel_min_bytes.0;
            // The split keys read the block indexes and sort: CPU work, on the pool.
            let plan = self
                .pool
                .run(move || -> std::result::Result<rcop_exec::SplitPlan, &'static str> {
                    let split = snapshot.split_keys(&r.ranges, parts).map_err(|_| "shape")?;
                    if split.bytes < min_bytes {
                        return Err("small");
                    }
                    engine.plan_split(&r, &split.keys).map_err(|w| match w {
                        rcop_exec::Whole::OnePart => "one_part",
                        _ => "shape",
                    })
                })
                .await?;
            match plan {
                Ok(plan) => return self.run_split(req, run, held, plan, started).await,
                Err(reason) => self.metrics.count_unsplit(reason),
            }
        } else if self.parallelism() >= 2 && req.tp == REQ_TYPE_DAG {
            self.metrics.count_unsplit("busy");
        }
        let engine = self.engine.clone();
        self.pool
            .run(move || {
                let mut scan = SnapScan::new(run.snapshot.scanner(req.start_ts))
                    .with_deadline(run.deadline)
                    .with_cancel(run.cancel);
                let outcome = engine.handle_limited(&req, &mut scan, &run.limits);
                // Permit and reservations go back when the work has stopped, not before.
                drop((held, run.limits));
                (outcome, scan.stats(), started.elapsed())
            })
            .await
    }

    /// The parts one DAG request may run as now: `cop-parallelism` (0: every compute
    /// thread), at most the threads idle now; 1 or 0 runs it whole.
    fn split_parts(&self, req: &coprocessor::Request) -> usize {
        if req.tp != REQ_TYPE_DAG {
            return 1;
        }
        self.parallelism().min(self.pool.idle_threads())
    }

    /// `cop-parallelism` resolved: 0 is the number of compute threads.
    fn parallelism(&self) -> usize {
        match self.config.cop_parallelism {
            0 => self.pool.threads(),
            n => n,
        }
    }

    /// Runs the parts of `plan` as jobs of the compute pool, then combines them on it.
    async fn run_split<H: Send + Sync + 'static>(
        &self,
        req: Arc<coprocessor::Request>,
        run: Run,
        held: Arc<H>,
        plan: rcop_exec::SplitPlan,
        started: Instant,
    ) -> Result<(std::result::Result<coprocessor::Response, rcop_exec::Abort>, ScanStats, Duration)>
    {
        self.metrics.count_split(plan.parts());
        let plan = Arc::new(plan);
        // Every part is queued before any is awaited: they run at once on idle threads.
        let mut jobs = Vec::with_capacity(plan.parts());
        for i in 0..plan.parts() {
            let (engine, plan, held) = (self.engine.clone(), Arc::clone(&plan), Arc::clone(&held));
            let (snapshot, limits) = (Arc::clone(&run.snapshot), run.limits.clone());
            let (deadline, cancel) = (run.deadline, Arc::clone(&run.cancel));
            let start_ts = req.start_ts;
            jobs.push(self.pool.submit(move || {
                let mut scan = SnapScan::new(snapshot.scanner(start_ts))
                    .with_deadline(deadline)
                    .with_cancel(Arc::clone(&cancel));
                let out = engine.execute_part(&plan, i, &mut scan, &limits);
                if let Err(rcop_exec::Abort::OverBudget { .. }) = &out {
                    // The request stops: the other parts need not run on.
                    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                drop((held, limits));
                (out, scan.stats())
            })?);
        }
        let mut done = Vec::with_capacity(jobs.len());
        for job in jobs {
            done.push(job.wait().await);
        }
        let mut stats = ScanStats::default();
        let mut outputs = Vec::with_capacity(done.len());
        let mut abort: Option<rcop_exec::Abort> = None;
        for r in done {
            let (out, s) = r?;
            stats.add(&s);
            match out {
                Ok(o) => {
                    if o.skipped() {
                        self.metrics.count_skipped_part();
                    }
                    outputs.push(o)
                }
                // The first abort that is not the cancel set for it.
                Err(a) => match abort {
                    None | Some(rcop_exec::Abort::Cancelled) => abort = Some(a),
                    Some(_) => {}
                },
            }
        }
        if let Some(a) = abort {
            return Ok((Err(a), stats, started.elapsed()));
        }
        let engine = self.engine.clone();
        let (outcome, redo_stats) = self
            .pool
            .run(move || {
                let combined = engine.combine_parts(&plan, outputs, &run.limits);
                let out = match combined {
                    Ok(Some(resp)) => (Ok(resp), None),
                    Ok(None) => {
                        // The parts cannot answer as TiKV would: the request runs whole.
                        let mut scan = SnapScan::new(run.snapshot.scanner(req.start_ts))
                            .with_deadline(run.deadline)
                            .with_cancel(run.cancel);
                        let outcome = engine.handle_limited(&req, &mut scan, &run.limits);
                        (outcome, Some(scan.stats()))
                    }
                    Err(a) => (Err(a), None),
                };
                drop((held, run.limits));
                out
            })
            .await?;
        if let Some(s) = redo_stats {
            self.metrics.count_unsplit("redo");
            stats.add(&s);
        }
        Ok((outcome, stats, started.elapsed()))
    }

    /// Counts a successful response of `bytes` for the keyspace window and the metrics.
    pub(crate) fn record_response(&self, done: &Executed, bytes: usize) {
        self.limiter.record_response(KeyspaceId(done.keyspace), bytes as u64);
        self.metrics.observe_response(done.tp, bytes);
        self.metrics.record_keyspace(
            done.keyspace,
            done.stats.processed_keys,
            done.stats.processed_bytes,
            bytes as u64,
        );
    }

    /// Counts and logs (rate-limited) a coprocessor error: messages and lock timestamps only,
    /// since a region error's fields and a lock carry keys.
    pub(crate) fn log_cop_error(&self, resp: &coprocessor::Response) {
        self.metrics.failed_requests().with_label_values(&["cop_error"]).inc();
        let region_error = resp.region_error.as_ref().map(|e| e.message.as_str());
        let lock_ts = resp.locked.as_ref().map(|l| l.lock_version);
        match self.warn_gate.allow() {
            Some(suppressed) => tracing::warn!(
                ?region_error,
                ?lock_ts,
                other_error = %resp.other_error,
                suppressed,
                "remote coprocessor error"
            ),
            None => tracing::debug!(?region_error, ?lock_ts, "remote coprocessor error"),
        }
    }

    /// Logs a failed request at warn, at most once a second (with the number held back in
    /// between); the others at debug.
    pub(crate) fn warn_failed(&self, e: &Error, what: &'static str) {
        match self.warn_gate.allow() {
            Some(suppressed) => {
                tracing::warn!(status = e.status(), error = %e, suppressed, "{what}")
            }
            None => tracing::debug!(status = e.status(), error = %e, "{what}"),
        }
    }

    pub(crate) fn cop_error(&self, resp: coprocessor::Response, accepts_pb: bool) -> Reply {
        self.log_cop_error(&resp);
        if accepts_pb {
            Reply {
                status: 500,
                content_type: Some(rcop_wire::CONTENT_TYPE_PROTOBUF),
                body: Bytes::from(resp.encode_to_vec()),
            }
        } else {
            let text = if let Some(e) = &resp.region_error {
                format!("region error: {}", e.message)
            } else if let Some(l) = &resp.locked {
                format!(
                    "locked: key {} by transaction {}",
                    rcop_units::log::Redacted(&l.key),
                    l.lock_version
                )
            } else {
                format!("other error: {}", resp.other_error)
            };
            Reply::text(500, text)
        }
    }
}

/// Runs `f` on tokio's blocking pool with the runtime's handle, so it can `block_on` I/O.
///
/// The snapshot rebuild runs here rather than on the I/O runtime's workers: its futures
/// (`rcop-snap`'s bounded `buffered` streams over borrowed change-set entries) are not provably
/// `Send` for every lifetime, which a task on a multi-threaded runtime requires, and the rebuild
/// also validates the shipped rows, which is CPU work.
pub(crate) async fn off_runtime<T, F>(f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&tokio::runtime::Handle) -> T + Send + 'static,
{
    let rt = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || f(&rt)).await.map_err(|_| Error::ExecutionPanicked)
}

/// Most bytes the engine holds once it decodes a DAG of `len` encoded bytes: every two
/// encoded bytes can be an empty message of the largest kind a DAG repeats (an expression,
/// an executor, a sort item, a column), so that much is reserved before the decode.
fn dag_decode_bound(len: usize) -> u64 {
    use rcop_proto::tipb;
    let largest = [
        std::mem::size_of::<tipb::Expr>(),
        std::mem::size_of::<tipb::Executor>(),
        std::mem::size_of::<tipb::ByItem>(),
        std::mem::size_of::<tipb::ColumnInfo>(),
        std::mem::size_of::<tipb::FieldType>(),
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    (len as u64).saturating_mul(largest.div_ceil(2) as u64)
}

/// TiDB sends a request's ranges sorted and disjoint (a range may end where the next starts);
/// anything else is refused before any work, on both ways.
fn check_ranges(ranges: &[coprocessor::KeyRange]) -> Result<()> {
    for (i, pair) in ranges.windows(2).enumerate() {
        if let [a, b] = pair
            && (a.end.is_empty() || a.end > b.start)
        {
            return Err(Error::InvalidRequest(format!(
                "key ranges {i} and {} are unsorted or overlap",
                i + 1
            )));
        }
    }
    Ok(())
}

pub(crate) fn is_cop_error(resp: &coprocessor::Response) -> bool {
    resp.region_error.is_some() || resp.locked.is_some() || !resp.other_error.is_empty()
}

pub(crate) fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `exec_details_v2` as upstream's worker fills it (reference §3.4): process wall time,
/// processed versions and half their size; plus the wait and snapshot times and the disk
/// cache's counters (`ia_*`, fields 15–18).
fn exec_details(
    t: &Timings,
    s: &ScanStats,
    ia: &IaRequestStats,
    total: Duration,
) -> kvrpcpb::ExecDetailsV2 {
    kvrpcpb::ExecDetailsV2 {
        time_detail: Some(kvrpcpb::TimeDetail {
            wait_wall_time_ms: ms(t.permit_wait),
            process_wall_time_ms: ms(t.process),
            // The worker reads its KV data while rebuilding the snapshot (object store,
            // caches, decompression); the scan then reads pinned memory.
            kv_read_wall_time_ms: ms(t.snapshot),
            total_rpc_wall_time_ns: ns(total),
        }),
        time_detail_v2: Some(kvrpcpb::TimeDetailV2 {
            wait_wall_time_ns: ns(t.permit_wait),
            process_wall_time_ns: ns(t.process),
            kv_read_wall_time_ns: ns(t.snapshot),
            total_rpc_wall_time_ns: ns(total),
            ..Default::default()
        }),
        scan_detail_v2: Some(kvrpcpb::ScanDetailV2 {
            processed_versions: s.processed_keys,
            processed_versions_size: s.processed_bytes.saturating_mul(SIZE_DISCOUNT_PERCENT) / 100,
            total_versions: s.keys_seen,
            total_versions_size: s.bytes_seen,
            get_snapshot_nanos: ns(t.snapshot),
            ia_cache_hit_count: ia.cache_hits(),
            ia_remote_read_segment_count: ia.remote_segments(),
            ia_remote_read_segment_bytes: ia.remote_bytes(),
            ia_remote_read_segment_nanos: ia.remote_nanos(),
            ..Default::default()
        }),
        ..Default::default()
    }
}
