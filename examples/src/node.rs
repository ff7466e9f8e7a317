//! The example storage node: one shard per keyspace, loaded at start-up, serving
//! `POST /coprocessor` (a kvproto `coprocessor.Request`) locally or through a worker, and
//! `tikvpb.Tikv/DelegateCoprocessor` on `grpc-addr` for workers on the delegate path.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use prometheus::{Encoder, Registry};
use prost::Message;
use rcop_exec::{Engine, EngineConfig};
use rcop_offload::{
    DelegateHost, DelegatePermits, DelegateService, Dispatch, Offloader, Sample, ShardSource,
    SourceError,
};
use rcop_proto::kvrpcpb::Context as PbContext;
use rcop_proto::{coprocessor, errorpb};
use rcop_snap::{FileIds, Shard, ShardConfig};
use rcop_sst::SstStore;
use rcop_worker::{DfsConfig, SnapScan};
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

use crate::tpch::{self, LoadReport};

/// Reads `/dfs` serves at once; beyond it a read answers 503 and the worker reads the object
/// store (upstream's `DFS_FILE_READ_CONCURRENCY`).
const DFS_READ_CONCURRENCY: usize = 64;

/// Largest `coprocessor.Request` body accepted.
const MAX_REQUEST_BODY: usize = 64 << 20;

/// `[delegate]` of the storage node: its gRPC endpoint for workers (the delegate path).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct NodeDelegateConfig {
    /// Delegate exports run at once; beyond it a request answers `server_is_busy` at once.
    pub max_concurrency: usize,
    /// Largest encoded `DelegateRequest` accepted (RESOURCE_EXHAUSTED beyond).
    pub max_request_size: rcop_limiter::ReadableSize,
}

impl Default for NodeDelegateConfig {
    fn default() -> Self {
        NodeDelegateConfig {
            max_concurrency: rcop_offload::delegate::DEFAULT_DELEGATE_CONCURRENCY,
            max_request_size: rcop_limiter::ReadableSize(
                rcop_offload::delegate::DEFAULT_DELEGATE_MAX_REQUEST_SIZE as u64,
            ),
        }
    }
}

/// `[[load]]`: data loaded at start-up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct LoadSpec {
    /// `"tpch"`.
    pub source: String,
    /// TPC-H table name (only `lineitem` today).
    pub table: String,
    /// TPC-H scale factor (1 = 6 M lineitem rows).
    pub scale_factor: f64,
    /// The newest rows left in the memtable instead of flushed to SSTs.
    pub memtable_tail: u64,
    /// `"rowid"` (default: `_tidb_rowid` handles, no indexes, what the example DAGs scan)
    /// or `"go-tpc"` (go-tpc's primary keys and foreign-key indexes, as TiDB stores them).
    pub schema: String,
    /// go-tpc schema only: the collation id of the string columns, `-46` (`utf8mb4_bin`) by
    /// default; any other (e.g. `-45`, `utf8mb4_general_ci`) loads the `_ci` variant, whose
    /// every second row has its strings lower-cased.
    pub string_collation: i32,
}

impl LoadSpec {
    /// The loader options this spec asks for.
    ///
    /// # Errors
    ///
    /// An unknown schema name.
    pub fn options(&self) -> Result<tpch::LoadOptions> {
        match self.schema.as_str() {
            "rowid" => Ok(tpch::LoadOptions::default()),
            "go-tpc" if self.string_collation == -46 => Ok(tpch::LoadOptions::go_tpc()),
            "go-tpc" => Ok(tpch::LoadOptions::go_tpc_ci(self.string_collation)),
            other => anyhow::bail!("[[load]] schema {other:?} is neither \"rowid\" nor \"go-tpc\""),
        }
    }
}

impl Default for LoadSpec {
    fn default() -> Self {
        LoadSpec {
            source: "tpch".into(),
            table: "lineitem".into(),
            scale_factor: 0.01,
            memtable_tail: 1_000,
            schema: "rowid".into(),
            string_collation: -46,
        }
    }
}

/// The storage node's configuration file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
pub struct NodeConfig {
    /// HTTP listen address (port 0 picks a free port).
    pub addr: SocketAddr,
    /// Object storage the shard writes its files to (workers must read the same).
    pub dfs: DfsConfig,
    /// Offload knobs, upstream's `[kvengine]` names.
    pub kvengine: rcop_offload::Config,
    /// Keyspace of the loaded data.
    pub keyspace_id: u32,
    /// Data loaded at start-up.
    pub load: Vec<LoadSpec>,
    /// gRPC listen address of the delegate endpoint; empty: none.
    pub grpc_addr: String,
    /// This node's store id: delegates naming another `context.peer.store_id` get
    /// `region_error.store_not_match`.
    pub store_id: u64,
    /// `[delegate]`: limits of the delegate endpoint.
    pub delegate: NodeDelegateConfig,
    /// `[security]`: TLS of the offload client (to `https://` workers) and of the delegate
    /// endpoint; off while its paths are empty.
    pub security: rcop_tls::SecurityConfig,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 20160)),
            dfs: DfsConfig::default(),
            kvengine: rcop_offload::Config::default(),
            keyspace_id: 1,
            load: Vec::new(),
            grpc_addr: String::new(),
            store_id: 1,
            delegate: NodeDelegateConfig::default(),
            security: rcop_tls::SecurityConfig::default(),
        }
    }
}

impl NodeConfig {
    /// Parses and validates a TOML document.
    ///
    /// # Errors
    ///
    /// Syntax errors, unknown keys, invalid values.
    pub fn from_toml(text: &str) -> Result<Self> {
        let cfg: NodeConfig = toml::from_str(text).context("storage node config")?;
        cfg.kvengine.validate().context("[kvengine]")?;
        cfg.dfs.validate().context("[dfs]")?;
        for l in &cfg.load {
            anyhow::ensure!(l.source == "tpch", "[[load]] source {:?} is not \"tpch\"", l.source);
            l.options()?;
        }
        cfg.grpc_addr()?;
        Ok(cfg)
    }

    /// The parsed `grpc-addr`, `None` when empty.
    ///
    /// # Errors
    ///
    /// Not a socket address.
    pub fn grpc_addr(&self) -> Result<Option<SocketAddr>> {
        match self.grpc_addr.trim() {
            "" => Ok(None),
            a => Ok(Some(a.parse().with_context(|| format!("grpc-addr {a:?}"))?)),
        }
    }
}

/// A table a node loaded, as `GET /info` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct LoadedTable {
    /// TPC-H table name.
    pub table: String,
    /// `"rowid"` or `"go-tpc"`.
    pub schema: String,
    /// The string columns' collation id (go-tpc schema).
    pub string_collation: i32,
    /// TPC-H scale factor.
    pub scale_factor: f64,
    /// Rows written.
    pub rows: u64,
}

/// What `GET /info` answers: enough for a client to address requests to this node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct NodeInfo {
    /// The keyspace served (`context.keyspace_id`).
    pub keyspace_id: u32,
    /// The shard's region id (`context.region_id`).
    pub region_id: u64,
    /// This node's store id.
    pub store_id: u64,
    /// Tables loaded so far, in load order.
    pub tables: Vec<LoadedTable>,
    /// The workers requests may be offloaded to.
    pub workers: Vec<String>,
}

/// Response headers of the node's `POST /coprocessor` saying how the request was served:
/// `local`, `remote` or `fallback`.
pub const HEADER_PATH: &str = "x-rcop-path";
/// The human-readable detail of [`HEADER_PATH`] (the reason it stayed, or the estimate,
/// worker, attempts and pages).
pub const HEADER_PATH_DETAIL: &str = "x-rcop-path-detail";
/// The worker that answered an offloaded request.
pub const HEADER_WORKER: &str = "x-rcop-worker";
/// Microseconds the node spent serving the request.
pub const HEADER_ELAPSED_US: &str = "x-rcop-elapsed-us";

/// How a request was served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Path {
    /// Executed on the node; the reason it stayed.
    Local(String),
    /// Answered by a worker (or turned into an error response on the way).
    Remote {
        /// Estimated block bytes.
        estimate: u64,
        /// The threshold it met.
        threshold: u64,
        /// The worker that answered.
        worker: Option<String>,
        /// HTTP attempts.
        attempts: u32,
        /// Worker responses the answer was assembled from.
        pages: u32,
    },
    /// The remote path failed and `fallback-to-local` ran it here.
    Fallback(String),
}

impl Path {
    /// `local`, `remote` or `fallback`.
    pub fn kind(&self) -> &'static str {
        match self {
            Path::Local(_) => "local",
            Path::Remote { .. } => "remote",
            Path::Fallback(_) => "fallback",
        }
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Local(reason) => write!(f, "local ({reason})"),
            Path::Remote { estimate, threshold, worker, attempts, pages } => write!(
                f,
                "offloaded (estimate {estimate} B >= threshold {threshold} B, worker {}, {attempts} attempt(s), {pages} page(s))",
                worker.as_deref().unwrap_or("-")
            ),
            Path::Fallback(e) => write!(f, "fallback to local after: {e}"),
        }
    }
}

/// A storage node: a shard, the offloader and a local engine.
#[derive(Debug)]
pub struct StorageNode {
    shard: Arc<Shard>,
    offloader: Offloader,
    engine: Engine,
    registry: Registry,
    store: Arc<SstStore>,
    dfs_reads: prometheus::IntCounterVec,
    dfs_permits: Arc<tokio::sync::Semaphore>,
    keyspace_id: u32,
    store_id: u64,
    delegate: NodeDelegateConfig,
    security: rcop_tls::SecurityConfig,
    loaded: std::sync::Mutex<Vec<LoadedTable>>,
}

impl StorageNode {
    /// A node with an empty shard covering keyspace `keyspace_id`, writing files to `store`.
    ///
    /// # Errors
    ///
    /// Bad keyspace, offloader configuration or metrics registration.
    pub fn new(cfg: &NodeConfig, store: Arc<SstStore>) -> Result<Self> {
        let ks = cfg.keyspace_id;
        let start = tpch::keyspace_prefix(ks)?;
        let end = tpch::keyspace_prefix(ks.checked_add(1).context("keyspace id")?)?;
        let shard_cfg = ShardConfig::new(u64::from(ks), start, end, 4)?;
        // File ids are TSOs, as upstream's (physical ms << 18): restarts against the same
        // store never reuse one, and a worker can tell a file's age from its id (it reads
        // young files from this node's `/dfs` first when `dfs-remote-cache-addr` is set).
        let first_id = SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| {
            u64::try_from(d.as_millis()).unwrap_or(1) << rcop_offload::TSO_PHYSICAL_SHIFT
        });
        let shard =
            Shard::with_store(shard_cfg, Arc::clone(&store), FileIds::starting_at(first_id))?;
        rcop_units::log::set_redact_info_log(cfg.security.redact_info_log);
        let registry = Registry::new();
        let dfs_reads = prometheus::IntCounterVec::new(
            prometheus::Opts::new(
                "rcop_node_dfs_reads_total",
                "File reads served to workers on /dfs (the remote cache), by outcome",
            ),
            &["outcome"],
        )?;
        for outcome in ["ok", "busy", "bad_request", "error"] {
            dfs_reads.with_label_values(&[outcome]);
        }
        registry.register(Box::new(dfs_reads.clone()))?;
        let mut offloader = Offloader::builder(cfg.kvengine.clone()).registry(&registry);
        if cfg.security.enabled() {
            // Workers are `https://` URLs, verified against [security]'s CA; this node's
            // certificate is its identity to them.
            let tls = cfg.security.client_config(&[]).context("[security]")?;
            offloader = offloader.tls_config(rcop_tls::ClientConfig::clone(&tls));
        }
        if let Some(secret) =
            cfg.security.shared_secret().context("[security] shared-secret-path")?
        {
            // Every offload request carries the HMAC a worker with the same secret checks.
            offloader = offloader.signer(Arc::new(secret));
        }
        let offloader = offloader.build().context("building the offloader")?;
        Ok(StorageNode {
            shard: Arc::new(shard),
            offloader,
            engine: Engine::new(EngineConfig::default()),
            registry,
            store,
            dfs_reads,
            dfs_permits: Arc::new(tokio::sync::Semaphore::new(DFS_READ_CONCURRENCY)),
            keyspace_id: ks,
            store_id: cfg.store_id,
            delegate: cfg.delegate.clone(),
            security: cfg.security.clone(),
            loaded: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// The shard.
    pub fn shard(&self) -> &Arc<Shard> {
        &self.shard
    }

    /// The keyspace served.
    pub fn keyspace_id(&self) -> u32 {
        self.keyspace_id
    }

    /// This node's store id.
    pub fn store_id(&self) -> u64 {
        self.store_id
    }

    /// The delegate endpoint over this node, with the `[delegate]` limits.
    pub fn delegate_service(self: &Arc<Self>) -> DelegateService<StorageNode> {
        let cap = usize::try_from(self.delegate.max_request_size.0).unwrap_or(usize::MAX);
        DelegateService::new(Arc::clone(self))
            .with_permits(DelegatePermits::new(self.delegate.max_concurrency))
            .with_max_request_size(cap)
    }

    /// Serves `tikvpb.Tikv/DelegateCoprocessor` on `listener` until `shutdown` completes:
    /// plain HTTP/2, or TLS with `[security]` (workers present certificates of its CA;
    /// `cert-allowed-cn` names the workers let in).
    ///
    /// # Errors
    ///
    /// Certificate files that cannot be used; the gRPC server failed.
    pub async fn serve_grpc(
        self: Arc<Self>,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<()> {
        let service = self.delegate_service().into_server();
        let server = tonic::transport::Server::builder();
        if self.security.enabled() {
            let tls = Arc::new(self.security.server(&[b"h2"]).context("[security]")?);
            let incoming =
                rcop_tls::incoming(listener, tls, rcop_tls::DEFAULT_HANDSHAKE_TIMEOUT, |e| {
                    tracing::warn!(error = %e, "delegate TLS connection refused");
                });
            server.serve_with_incoming_shutdown(service, incoming, shutdown).await
        } else {
            let incoming =
                tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
            server.serve_with_incoming_shutdown(service, incoming, shutdown).await
        }
        .context("delegate gRPC server")
    }

    /// Loads `spec` through the shard, starting at commit ts `first_ts`.
    ///
    /// # Errors
    ///
    /// As [`tpch::load_table_with`]; an unknown schema name.
    pub async fn load(
        &self,
        spec: &LoadSpec,
        first_ts: u64,
        progress: impl FnMut(u64),
    ) -> Result<LoadReport> {
        let report = tpch::load_table_with(
            &self.shard,
            self.keyspace_id,
            &spec.table,
            spec.scale_factor,
            spec.memtable_tail,
            first_ts,
            &spec.options()?,
            progress,
        )
        .await?;
        let mut loaded = self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        loaded.push(LoadedTable {
            table: spec.table.clone(),
            schema: spec.schema.clone(),
            string_collation: spec.string_collation,
            scale_factor: spec.scale_factor,
            rows: report.rows,
        });
        Ok(report)
    }

    /// Resolves the DNS names among the workers once now (worker discovery also does it on
    /// its own every `remote-coprocessor-resolve-interval`); a failure is logged and the
    /// names stay as they were.
    pub async fn resolve_workers(&self) {
        if let Err(e) = self.offloader.client().resolve_workers().await {
            tracing::warn!(error = %e, "worker discovery: a name did not resolve");
        }
    }

    /// `GET /dfs/{file_id}?file_type=sst|txn&start_off=N[&end_off=M]`: the bytes of a file
    /// this node wrote (upstream's remote DFS cache, asked for by workers given this node's
    /// `x-dfs-remote-cache-addr`). The example node reads them from its own store.
    async fn dfs_read(&self, path: &str, query: &str) -> (StatusCode, Bytes) {
        let count = |outcome: &str| self.dfs_reads.with_label_values(&[outcome]).inc();
        let Ok(_permit) = self.dfs_permits.try_acquire() else {
            count("busy");
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                Bytes::from_static(b"too many concurrent DFS file read requests"),
            );
        };
        let bad = |why: &str| {
            count("bad_request");
            (StatusCode::BAD_REQUEST, Bytes::from(why.to_owned()))
        };
        let Some(Ok(id)) = path.strip_prefix("/dfs/").map(str::parse::<u64>) else {
            return bad("invalid file id");
        };
        let (mut file_type, mut start, mut end) = ("sst", 0u64, None);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("file_type", t)) => file_type = if t == "txn" { "txn" } else { "sst" },
                Some(("start_off", v)) => match v.parse() {
                    Ok(v) => start = v,
                    Err(_) => return bad("invalid start_off"),
                },
                Some(("end_off", v)) => match v.parse() {
                    Ok(v) => end = Some(v),
                    Err(_) => return bad("invalid end_off"),
                },
                _ => {}
            }
        }
        if end.is_some_and(|e| e < start) {
            return bad("end_off before start_off");
        }
        let id_ = rcop_sst::FileId(id);
        let read = match (file_type, end) {
            ("txn", _) => self.store.get_txn_chunk(id, |_| Ok(())).await,
            (_, Some(end)) => self.store.get_range(id_, start..end).await,
            (_, None) => self.store.get_tail(id_, rcop_sst::Tail::From(start)).await.map(|t| t.0),
        };
        match read {
            Ok(bytes) => {
                count("ok");
                (StatusCode::OK, bytes)
            }
            Err(e) => {
                count("error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Bytes::from(format!("failed to read file: {e}")),
                )
            }
        }
    }

    /// What `GET /info` answers.
    pub fn info(&self) -> NodeInfo {
        let tables = self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        NodeInfo {
            keyspace_id: self.keyspace_id,
            region_id: self.shard.id(),
            store_id: self.store_id,
            tables,
            workers: self.offloader.client().workers().iter().map(|w| w.to_string()).collect(),
        }
    }

    /// Executes `req` on the node's own snapshot (blocking; call off the async runtime).
    pub fn execute_local(&self, req: &coprocessor::Request) -> coprocessor::Response {
        execute_local(&self.shard, &self.engine, req)
    }

    /// Serves `req`: decides, then executes locally or through a worker. Returns the
    /// response, how it was served and how long it took.
    ///
    /// A request with batched store tasks (`tasks`) is split as TiKV splits it: each task
    /// is served on its own (decided, offloaded or run here) and answered in
    /// `batch_responses`; a task for a region this node does not serve answers
    /// `region_error.region_not_found`. The path returned is the request's own part's.
    pub async fn handle(
        &self,
        req: coprocessor::Request,
    ) -> (coprocessor::Response, Path, Duration) {
        if req.tasks.is_empty() {
            return self.handle_one(req).await;
        }
        let started = Instant::now();
        let (main, tasks) = rcop_offload::batch::split_tasks(&req);
        let task_answers = tasks.into_iter().map(|t| async move {
            let region = t.request.context.as_ref().map_or(0, |c| c.region_id);
            let resp = if region == self.shard.id() {
                self.handle_one(t.request).await.0
            } else {
                region_not_found(region)
            };
            rcop_offload::batch::task_response(t.task_id, resp)
        });
        let ((mut resp, path, _), answers) =
            futures::join!(self.handle_one(main), futures::future::join_all(task_answers));
        rcop_offload::batch::attach_tasks(&mut resp, answers);
        (resp, path, started.elapsed())
    }

    async fn handle_one(
        &self,
        req: coprocessor::Request,
    ) -> (coprocessor::Response, Path, Duration) {
        let started = Instant::now();
        let dispatch = self.offloader.dispatch(&req, &ShardSource::new(&self.shard)).await;
        let (resp, path) = match dispatch {
            Dispatch::Local { reason, pattern } => {
                let t = Instant::now();
                let resp = self.local_on_blocking_pool(req).await;
                if let Some(p) = pattern {
                    let processed_size = resp
                        .exec_details_v2
                        .as_ref()
                        .and_then(|d| d.scan_detail_v2.as_ref())
                        .map_or(0, |s| s.processed_versions_size);
                    self.offloader
                        .record_local(&p, Sample { processed_size, duration: t.elapsed() });
                }
                (resp, Path::Local(reason.to_string()))
            }
            Dispatch::Respond { answer, estimate, threshold, worker, attempts, pages, .. } => (
                answer.into_response(),
                Path::Remote {
                    estimate,
                    threshold,
                    worker: worker.map(|w| w.to_string()),
                    attempts,
                    pages,
                },
            ),
            Dispatch::FallbackLocal { error, .. } => {
                let resp = self.local_on_blocking_pool(req).await;
                (resp, Path::Fallback(error.to_string()))
            }
            other => {
                // A dispatch outcome added after this node was written: serve it locally.
                let why = format!("{other:?}");
                (self.local_on_blocking_pool(req).await, Path::Local(why))
            }
        };
        tracing::info!(path = %path, took_ms = started.elapsed().as_millis() as u64, "coprocessor request");
        (resp, path, started.elapsed())
    }

    async fn local_on_blocking_pool(&self, req: coprocessor::Request) -> coprocessor::Response {
        let shard = Arc::clone(&self.shard);
        let engine = self.engine.clone();
        tokio::task::spawn_blocking(move || execute_local(&shard, &engine, &req))
            .await
            .unwrap_or_else(|e| coprocessor::Response {
                other_error: format!("local execution failed: {e}"),
                ..Default::default()
            })
    }

    /// Serves HTTP on `listener` until `shutdown` completes.
    ///
    /// # Errors
    ///
    /// None today; connection errors are logged.
    pub async fn serve(
        self: Arc<Self>,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<()> {
        let graceful = GracefulShutdown::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let _ = stream.set_nodelay(true);
                    let node = Arc::clone(&self);
                    let service = hyper::service::service_fn(move |req| {
                        let node = Arc::clone(&node);
                        async move { Ok::<_, Infallible>(node.route(req).await) }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    let conn = graceful.watch(conn);
                    tokio::spawn(async move {
                        let _ = conn.await;
                    });
                }
                () = &mut shutdown => break,
            }
        }
        drop(listener);
        let _ = tokio::time::timeout(Duration::from_secs(30), graceful.shutdown()).await;
        Ok(())
    }

    async fn route(&self, req: Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
        let mut headers: Vec<(&'static str, String)> = Vec::new();
        let (status, body) = match (req.method(), req.uri().path()) {
            (&Method::POST, "/coprocessor") => {
                match Limited::new(req.into_body(), MAX_REQUEST_BODY).collect().await {
                    Err(e) if e.is::<http_body_util::LengthLimitError>() => (
                        StatusCode::PAYLOAD_TOO_LARGE,
                        Bytes::from(format!("request body over {MAX_REQUEST_BODY} bytes")),
                    ),
                    Err(e) => (StatusCode::BAD_REQUEST, Bytes::from(e.to_string())),
                    Ok(body) => match coprocessor::Request::decode(body.to_bytes()) {
                        Err(e) => (
                            StatusCode::BAD_REQUEST,
                            Bytes::from(format!("malformed coprocessor.Request: {e}")),
                        ),
                        Ok(cop) => {
                            let (resp, path, took) = self.handle(cop).await;
                            headers.push((HEADER_PATH, path.kind().to_owned()));
                            headers.push((HEADER_PATH_DETAIL, path.to_string()));
                            if let Path::Remote { worker: Some(w), .. } = &path {
                                headers.push((HEADER_WORKER, w.clone()));
                            }
                            headers.push((HEADER_ELAPSED_US, took.as_micros().to_string()));
                            (StatusCode::OK, Bytes::from(resp.encode_to_vec()))
                        }
                    },
                }
            }
            (&Method::GET, "/healthz") => (StatusCode::OK, Bytes::from_static(b"ok\n")),
            (&Method::GET, p) if p.starts_with("/dfs/") => {
                let (status, body) = self.dfs_read(p, req.uri().query().unwrap_or("")).await;
                if status == StatusCode::OK {
                    headers.push(("content-type", "application/octet-stream".to_owned()));
                }
                (status, body)
            }
            (&Method::GET, "/info") => match serde_json::to_vec_pretty(&self.info()) {
                Ok(json) => {
                    headers.push(("content-type", "application/json".to_owned()));
                    (StatusCode::OK, Bytes::from(json))
                }
                Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, Bytes::from(e.to_string())),
            },
            (&Method::GET, "/metrics") => {
                let mut out = Vec::new();
                let _ = prometheus::TextEncoder::new().encode(&self.registry.gather(), &mut out);
                (StatusCode::OK, Bytes::from(out))
            }
            _ => (StatusCode::NOT_FOUND, Bytes::from_static(b"not found\n")),
        };
        let mut resp = Response::new(Full::new(body));
        *resp.status_mut() = status;
        for (name, value) in headers {
            // A reason may carry any text: keep what a header value may hold.
            let value: String = value
                .chars()
                .map(|c| if c == '\t' || (' '..='~').contains(&c) { c } else { '?' })
                .collect();
            if let Ok(v) = hyper::header::HeaderValue::from_str(&value) {
                resp.headers_mut().insert(name, v);
            }
        }
        resp
    }
}

impl DelegateHost for StorageNode {
    type Source<'a> = ShardSource<'a>;

    fn source(&self, context: Option<&PbContext>) -> Result<ShardSource<'_>, SourceError> {
        let asked = context.and_then(|c| c.peer.as_ref()).map_or(0, |p| p.store_id);
        if asked != 0 && asked != self.store_id {
            return Err(SourceError::Region(Box::new(errorpb::Error {
                message: format!("store not match: asked {asked}, this is {}", self.store_id),
                store_not_match: Some(errorpb::StoreNotMatch {
                    request_store_id: asked,
                    actual_store_id: self.store_id,
                }),
                ..Default::default()
            })));
        }
        Ok(ShardSource::new(&self.shard))
    }
}

fn region_not_found(region_id: u64) -> coprocessor::Response {
    coprocessor::Response {
        region_error: Some(errorpb::Error {
            message: format!("region {region_id} is not on this node"),
            region_not_found: Some(errorpb::RegionNotFound { region_id }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn execute_local(
    shard: &Shard,
    engine: &Engine,
    req: &coprocessor::Request,
) -> coprocessor::Response {
    let snap = shard.snapshot();
    let mut scan = SnapScan::new(snap.scanner(req.start_ts));
    let mut resp = engine.handle(req, &mut scan);
    let stats = scan.stats();
    resp.exec_details_v2 = Some(rcop_proto::kvrpcpb::ExecDetailsV2 {
        scan_detail_v2: Some(rcop_proto::kvrpcpb::ScanDetailV2 {
            processed_versions: stats.processed_keys,
            processed_versions_size: stats.processed_bytes,
            total_versions: stats.keys_seen,
            total_versions_size: stats.bytes_seen,
            ..Default::default()
        }),
        ..Default::default()
    });
    resp
}
