//! The delegate path's gRPC side (feature `grpc`): the `tikvpb.Tikv/Coprocessor` service
//! TiDB calls on `cop-addr`, and the client that asks storage nodes for delegates.
//!
//! Per request ([`Worker::handle_delegated`]): the store of `context.peer.store_id` through
//! the [`StoreResolver`]; a `DelegateRequest` (context, start ts, ranges) with the request's
//! deadline as `grpc-timeout`; then the same admission → rebuild → execute path as
//! `POST /coprocessor` ([`Worker::handle_coprocessor`]), with `path="grpc"` in the metrics.
//!
//! Errors, unlike upstream's worker (which turns an errored delegate into an empty snapshot
//! and an INTERNAL status):
//!
//! - `region_error` and `locked` from the node reach TiDB in the same fields of the
//!   `coprocessor.Response`; a `store_not_match` also drops the cached address;
//! - `server_is_busy` from the node and network errors are retried with equal-jitter backoff
//!   (`[delegate] backoff-base`, `backoff-max`) until the deadline; a connection failure
//!   drops the cached address and channel; when the deadline comes first TiDB gets
//!   `region_error.server_is_busy`, which it backs off and retries;
//! - the worker's own retryable rejections (limiter, memory, snapshot deadline: the 503s of
//!   the HTTP path) are `region_error.server_is_busy` too; everything else is `other_error`.
//!
//! Methods other than `Coprocessor` answer UNIMPLEMENTED. Plain TCP (h2c).

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use prost::Message;
use rcop_proto::coprocessor::{self, DelegateRequest, DelegateResponse};
use rcop_proto::errorpb;
use rcop_proto::tikvpb::tikv_client::TikvClient;
use rcop_proto::tikvpb::tikv_server::{Tikv, TikvServer};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tonic::transport::{Channel, Endpoint};
use tracing::Instrument;

use crate::delegate::{DelegateConfig, ResolveError, StaticResolver, StoreResolver};
use crate::error::{Error, Result};
use crate::metrics::WorkerMetrics;
use crate::worker::{
    PATH_GRPC, Worker, is_cop_error, ms, request_tag, request_timeout, unsupported_type,
};

/// Equal-jitter exponential backoff: the step doubles up to the cap and each sleep is
/// uniform in `[step/2, step]` (the storage node's offload client uses the same schedule).
#[derive(Debug)]
struct Backoff {
    step: Duration,
    max: Duration,
}

impl Backoff {
    fn next_delay(&mut self) -> Duration {
        let hi = u64::try_from(self.step.as_nanos()).unwrap_or(u64::MAX);
        self.step = self.step.saturating_mul(2).min(self.max);
        Duration::from_nanos(fastrand::u64(hi / 2..=hi))
    }
}

/// What a delegate call gave: the snapshot's parts, or the answer TiDB gets instead.
#[derive(Debug)]
pub enum DelegateOutcome {
    /// mem-data and the change set bytes, as the envelope's second and third parts.
    Parts {
        /// `DelegateResponse.mem_table_data`.
        mem_data: Bytes,
        /// `DelegateResponse.snapshot`.
        change_set: Bytes,
        /// Calls made (1 without retries).
        attempts: u32,
    },
    /// A coprocessor error for TiDB: `region_error`, `locked` or `other_error` set.
    Error(Box<coprocessor::Response>),
}

/// Calls storage nodes' `tikvpb.Tikv/DelegateCoprocessor`: resolves the store, keeps one
/// HTTP/2 channel per address, retries busy and network errors until the deadline.
#[derive(Debug)]
pub struct DelegateClient {
    resolver: Arc<dyn StoreResolver>,
    channels: Mutex<HashMap<String, Channel>>,
    config: DelegateConfig,
    metrics: Option<WorkerMetrics>,
    tls: Option<rcop_tls::GrpcConnector>,
}

impl DelegateClient {
    /// A client over `resolver` with the `[delegate]` settings of `config`.
    pub fn new(resolver: Arc<dyn StoreResolver>, config: DelegateConfig) -> Self {
        DelegateClient {
            resolver,
            channels: Mutex::new(HashMap::new()),
            config,
            metrics: None,
            tls: None,
        }
    }

    /// Calls storage nodes over TLS with `security`'s client configuration: the node's
    /// certificate verified against its CA, this worker's certificate presented
    /// (`[security]`, the same section as the HTTP endpoint's).
    ///
    /// # Errors
    ///
    /// [`Error::Tls`] for certificate files that cannot be used.
    pub fn with_tls(mut self, security: &rcop_tls::SecurityConfig) -> Result<Self> {
        let tls = security.client_config(&[b"h2"])?;
        self.tls = Some(rcop_tls::GrpcConnector::new(tls));
        Ok(self)
    }

    /// The client `[delegate]` describes: PD when `pd-endpoints` is set (feature `pd`),
    /// else the static `stores`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`]: invalid stores, or PD endpoints without the `pd` feature.
    pub fn from_config(config: &DelegateConfig) -> Result<Self> {
        let resolver: Arc<dyn StoreResolver> = if config.pd_endpoints.is_empty() {
            Arc::new(StaticResolver::from_config(config)?)
        } else {
            pd_resolver(config)?
        };
        Ok(DelegateClient::new(resolver, config.clone()))
    }

    /// Counts retries and delegate durations in `metrics`.
    #[must_use]
    pub fn with_metrics(mut self, metrics: WorkerMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The resolver.
    pub fn resolver(&self) -> &Arc<dyn StoreResolver> {
        &self.resolver
    }

    fn channel(&self, uri: &str) -> std::result::Result<Channel, String> {
        let mut channels = self.channels.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(c) = channels.get(uri) {
            return Ok(c.clone());
        }
        // Over TLS the address says so (the connector does the TLS itself).
        let target = match (&self.tls, uri.strip_prefix("http://")) {
            (Some(_), Some(rest)) => format!("https://{rest}"),
            _ => uri.to_owned(),
        };
        let endpoint = Endpoint::from_shared(target)
            .map_err(|e| format!("bad store address {uri:?}: {e}"))?
            .connect_timeout(self.config.connect_timeout.0)
            .tcp_nodelay(true);
        let channel = match &self.tls {
            Some(connector) => endpoint.connect_with_connector_lazy(connector.clone()),
            None => endpoint.connect_lazy(),
        };
        channels.insert(uri.to_owned(), channel.clone());
        Ok(channel)
    }

    fn forget(&self, store_id: u64, uri: &str) {
        self.resolver.invalidate(store_id);
        self.channels.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(uri);
    }

    fn retried(&self, reason: &str) {
        if let Some(m) = &self.metrics {
            m.delegate_retries().with_label_values(&[reason]).inc();
        }
    }

    /// Asks the storage node of `req.context.peer.store_id` for the delegate of `req`
    /// (context, start ts, ranges), until `deadline`. See the module docs for the errors.
    pub async fn fetch(&self, req: &coprocessor::Request, deadline: Instant) -> DelegateOutcome {
        let started = Instant::now();
        let outcome = self.fetch_inner(req, deadline).await;
        if let Some(m) = &self.metrics {
            m.delegate_duration().observe(started.elapsed().as_secs_f64());
        }
        outcome
    }

    async fn fetch_inner(&self, req: &coprocessor::Request, deadline: Instant) -> DelegateOutcome {
        let store_id = req.context.as_ref().and_then(|c| c.peer.as_ref()).map_or(0, |p| p.store_id);
        if store_id == 0 {
            return other_error(
                "request has no context.peer.store_id: cannot find its storage node",
            );
        }
        let delegate = DelegateRequest {
            context: req.context.clone(),
            start_ts: req.start_ts,
            ranges: req.ranges.clone(),
            ..DelegateRequest::default()
        };
        let mut backoff =
            Backoff { step: self.config.backoff_base.0, max: self.config.backoff_max.0 };
        let mut attempts = 0u32;
        let mut last_busy: Option<errorpb::Error>;
        loop {
            attempts += 1;
            let failure = match self.attempt(store_id, &delegate, deadline).await {
                Attempt::Done(resp) => {
                    return classify(*resp, attempts, || {
                        // The node is not the store TiDB meant: look it up again next time.
                        self.resolver.invalidate(store_id);
                    });
                }
                Attempt::Fatal(reason) => return other_error(&reason),
                Attempt::Busy(e) => {
                    self.retried("busy");
                    last_busy = Some(*e);
                    None
                }
                Attempt::Network(reason) => {
                    self.retried("network");
                    last_busy = None;
                    Some(reason)
                }
            };
            let delay = backoff.next_delay();
            let now = Instant::now();
            if now + delay >= deadline {
                let e = last_busy.unwrap_or_else(|| {
                    busy_error(&format!(
                        "storage node of store {store_id} unreachable after {attempts} attempt(s): {}",
                        failure.as_deref().unwrap_or("deadline")
                    ))
                });
                return DelegateOutcome::Error(Box::new(coprocessor::Response {
                    region_error: Some(e),
                    ..Default::default()
                }));
            }
            tracing::debug!(store_id, attempts, ?delay, failure, "retrying delegate");
            tokio::time::sleep(delay).await;
        }
    }

    async fn attempt(&self, store_id: u64, req: &DelegateRequest, deadline: Instant) -> Attempt {
        let uri = match self.resolver.resolve(store_id).await {
            Ok(uri) => uri,
            Err(e @ ResolveError::Unavailable(_)) => return Attempt::Network(e.to_string()),
            Err(e) => return Attempt::Fatal(e.to_string()),
        };
        let channel = match self.channel(&uri) {
            Ok(c) => c,
            Err(e) => {
                self.resolver.invalidate(store_id);
                return Attempt::Fatal(e);
            }
        };
        let Some(remaining) = deadline.checked_duration_since(Instant::now()) else {
            return Attempt::Network("deadline".into());
        };
        let max = usize::try_from(self.config.max_response_size.0).unwrap_or(usize::MAX);
        let mut client = TikvClient::new(channel).max_decoding_message_size(max);
        let mut request = tonic::Request::new(req.clone());
        request.set_timeout(remaining);
        let call = client.delegate_coprocessor(request);
        match tokio::time::timeout(remaining, call).await {
            Err(_) => Attempt::Network(format!("no answer from {uri} before the deadline")),
            Ok(Ok(resp)) => {
                let resp = resp.into_inner();
                match &resp.region_error {
                    Some(e) if e.server_is_busy.is_some() => Attempt::Busy(Box::new(e.clone())),
                    _ => Attempt::Done(Box::new(resp)),
                }
            }
            Ok(Err(status)) => match status.code() {
                tonic::Code::Unavailable
                | tonic::Code::Unknown
                | tonic::Code::Cancelled
                | tonic::Code::Aborted
                | tonic::Code::DeadlineExceeded => {
                    self.forget(store_id, &uri);
                    Attempt::Network(format!("{uri}: {status}"))
                }
                _ => Attempt::Fatal(format!("storage node {uri} refused the delegate: {status}")),
            },
        }
    }
}

enum Attempt {
    Done(Box<DelegateResponse>),
    Busy(Box<errorpb::Error>),
    Network(String),
    Fatal(String),
}

fn classify(
    resp: DelegateResponse,
    attempts: u32,
    store_not_match: impl FnOnce(),
) -> DelegateOutcome {
    if let Some(e) = resp.region_error {
        if e.store_not_match.is_some() {
            store_not_match();
        }
        return DelegateOutcome::Error(Box::new(coprocessor::Response {
            region_error: Some(e),
            ..Default::default()
        }));
    }
    if let Some(l) = resp.locked {
        return DelegateOutcome::Error(Box::new(coprocessor::Response {
            locked: Some(l),
            ..Default::default()
        }));
    }
    if !resp.other_error.is_empty() {
        return other_error(&format!("storage node: {}", resp.other_error));
    }
    DelegateOutcome::Parts { mem_data: resp.mem_table_data, change_set: resp.snapshot, attempts }
}

fn other_error(text: &str) -> DelegateOutcome {
    DelegateOutcome::Error(Box::new(coprocessor::Response {
        other_error: text.to_owned(),
        ..Default::default()
    }))
}

fn busy_error(reason: &str) -> errorpb::Error {
    errorpb::Error {
        message: format!("server is busy: {reason}"),
        server_is_busy: Some(errorpb::ServerIsBusy {
            reason: reason.to_owned(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[cfg(feature = "pd")]
fn pd_resolver(config: &DelegateConfig) -> Result<Arc<dyn StoreResolver>> {
    Ok(Arc::new(crate::pd::PdResolver::new(&config.pd_endpoints, config.connect_timeout.0)?))
}

#[cfg(not(feature = "pd"))]
fn pd_resolver(_config: &DelegateConfig) -> Result<Arc<dyn StoreResolver>> {
    Err(Error::config("delegate.pd-endpoints", "this worker is built without the `pd` feature"))
}

impl Worker {
    /// Serves one `coprocessor.Request` from TiDB on the delegate path (see the module docs):
    /// always a `coprocessor.Response`, coprocessor errors in its fields.
    pub async fn handle_delegated(
        &self,
        req: coprocessor::Request,
        client: &DelegateClient,
    ) -> coprocessor::Response {
        let received = Instant::now();
        let metrics = self.metrics();
        let processing = metrics.processing_guard();
        let span =
            tracing::info_span!("remote_cop", tag = request_tag(&req).as_str(), path = PATH_GRPC);
        let resp = self.delegated(req, client, received).instrument(span).await;
        processing.finish();
        metrics
            .request_duration()
            .with_label_values(&[PATH_GRPC])
            .observe(received.elapsed().as_secs_f64());
        resp
    }

    async fn delegated(
        &self,
        req: coprocessor::Request,
        client: &DelegateClient,
        received: Instant,
    ) -> coprocessor::Response {
        if !crate::worker::is_served_type(req.tp) {
            return self.grpc_cop_error(unsupported_type(req.tp));
        }
        let timeout = request_timeout(&req, self.config().max_execution_duration.0);
        let deadline = received + timeout;
        let (mem_data, change_set, attempts) = match client.fetch(&req, deadline).await {
            DelegateOutcome::Parts { mem_data, change_set, attempts } => {
                (mem_data, change_set, attempts)
            }
            DelegateOutcome::Error(resp) => return self.grpc_cop_error(*resp),
        };
        let delegate_time = received.elapsed();
        let decode = move || -> Result<_> {
            let mem = rcop_wire::MemData::decode(mem_data)?;
            let cs = rcop_proto::enginepb::ChangeSet::decode(change_set).map_err(|e| {
                Error::Delegate(format!("malformed change set from the storage node: {e}"))
            })?;
            Ok((mem, cs))
        };
        match self.execute(req, decode, received, PATH_GRPC, None, None).await {
            Ok(done) => {
                if is_cop_error(&done.resp) {
                    return self.grpc_cop_error(done.resp);
                }
                self.record_response(&done, done.resp.encoded_len());
                tracing::info!(
                    attempts,
                    delegate_ms = ms(delegate_time),
                    permit_wait_ms = ms(done.timings.permit_wait),
                    snap_ms = ms(done.timings.snapshot),
                    process_ms = ms(done.timings.process),
                    total_ms = ms(received.elapsed()),
                    processed_keys = done.stats.processed_keys,
                    "finished remote coprocessor"
                );
                done.resp
            }
            Err(e) => {
                if !matches!(&e, Error::Limiter(l) if l.rejection_label().is_some()) {
                    self.metrics().failed_requests().with_label_values(&[e.failure_label()]).inc();
                }
                self.warn_failed(&e, "delegated coprocessor request failed");
                if e.status() == 503 {
                    coprocessor::Response {
                        region_error: Some(busy_error(&e.to_string())),
                        ..Default::default()
                    }
                } else {
                    coprocessor::Response { other_error: e.to_string(), ..Default::default() }
                }
            }
        }
    }

    fn grpc_cop_error(&self, resp: coprocessor::Response) -> coprocessor::Response {
        self.log_cop_error(&resp);
        resp
    }
}

/// HTTP/2 ping interval on `cop-addr` connections.
const GRPC_KEEPALIVE_INTERVAL: Duration = Duration::from_secs(60);
/// A connection whose ping is not answered within this is closed.
const GRPC_KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// `tikvpb.Tikv` as TiDB sees the worker: `Coprocessor` served, the rest UNIMPLEMENTED.
#[derive(Debug, Clone)]
pub struct CopService {
    worker: Arc<Worker>,
    client: Arc<DelegateClient>,
}

impl CopService {
    /// The service of `worker`, fetching delegates with `client`.
    pub fn new(worker: Arc<Worker>, client: Arc<DelegateClient>) -> Self {
        CopService { worker, client }
    }

    /// The tonic server, with the request cap of `max-request-size`.
    pub fn into_server(self) -> TikvServer<Self> {
        let cap = usize::try_from(self.worker.config().max_request_size.0).unwrap_or(usize::MAX);
        TikvServer::new(self).max_decoding_message_size(cap).max_encoding_message_size(usize::MAX)
    }
}

#[tonic::async_trait]
impl Tikv for CopService {
    async fn coprocessor(
        &self,
        request: tonic::Request<coprocessor::Request>,
    ) -> std::result::Result<tonic::Response<coprocessor::Response>, tonic::Status> {
        let resp = self.worker.handle_delegated(request.into_inner(), &self.client).await;
        Ok(tonic::Response::new(resp))
    }
}

/// The gRPC listener of `cop-addr`, bound and not yet serving. With `[security]` set it
/// serves TLS (ALPN h2; client certificates and `cert-allowed-cn` as configured).
#[derive(Debug)]
pub struct GrpcServer {
    listener: TcpListener,
    service: CopService,
    tls: Option<Arc<rcop_tls::TlsServer>>,
    metrics: WorkerMetrics,
}

impl GrpcServer {
    /// Binds `addr` for `worker`, with the delegate client of its `[delegate]` section.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] (delegate section), [`Error::Io`] (bind).
    pub async fn bind(worker: Arc<Worker>, addr: SocketAddr) -> Result<GrpcServer> {
        let mut client = DelegateClient::from_config(&worker.config().delegate)?
            .with_metrics(worker.metrics().clone());
        let security = &worker.config().security;
        if security.enabled() {
            client = client.with_tls(security)?;
        }
        GrpcServer::bind_with(worker, Arc::new(client), addr).await
    }

    /// Binds `addr` for `worker` with the host's delegate client.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] (bind).
    pub async fn bind_with(
        worker: Arc<Worker>,
        client: Arc<DelegateClient>,
        addr: SocketAddr,
    ) -> Result<GrpcServer> {
        let security = &worker.config().security;
        let tls =
            if security.enabled() { Some(Arc::new(security.server(&[b"h2"])?)) } else { None };
        let listener = TcpListener::bind(addr).await?;
        let metrics = worker.metrics().clone();
        Ok(GrpcServer { listener, service: CopService::new(worker, client), tls, metrics })
    }

    /// The bound address.
    ///
    /// # Errors
    ///
    /// [`Error::Io`].
    pub fn local_addr(&self) -> Result<SocketAddr> {
        Ok(self.listener.local_addr()?)
    }

    /// Serves until `shutdown` completes, then lets in-flight calls finish.
    ///
    /// # Errors
    ///
    /// [`Error::Grpc`] when the server fails.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> Result<()> {
        // Dead peers are found by HTTP/2 pings; at most `max-connections` connections.
        let server = tonic::transport::Server::builder()
            .http2_keepalive_interval(Some(GRPC_KEEPALIVE_INTERVAL))
            .http2_keepalive_timeout(Some(GRPC_KEEPALIVE_TIMEOUT));
        let max_connections = self.service.worker.config().max_connections;
        let served = match self.tls {
            None => {
                let incoming = rcop_tls::plain_incoming_limited(self.listener, max_connections);
                server
                    .serve_with_incoming_shutdown(self.service.into_server(), incoming, shutdown)
                    .await
            }
            Some(tls) => {
                let metrics = self.metrics;
                let incoming = rcop_tls::incoming_limited(
                    self.listener,
                    tls,
                    rcop_tls::DEFAULT_HANDSHAKE_TIMEOUT,
                    max_connections,
                    move |e| metrics.tls_refused("grpc", e),
                );
                server
                    .serve_with_incoming_shutdown(self.service.into_server(), incoming, shutdown)
                    .await
            }
        };
        served.map_err(|e| Error::Grpc(e.to_string()))
    }

    /// Serves on a background task; the handle stops it.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] (the bound address).
    pub fn spawn(self) -> Result<GrpcHandle> {
        let local_addr = self.local_addr()?;
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(self.run(async move {
            let _ = rx.await;
        }));
        Ok(GrpcHandle { local_addr, shutdown: Some(tx), task })
    }
}

/// A gRPC listener serving on a background task; dropping it stops the listener.
#[derive(Debug)]
pub struct GrpcHandle {
    local_addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<()>>,
}

impl GrpcHandle {
    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting and waits for in-flight calls.
    ///
    /// # Errors
    ///
    /// What the server failed with.
    pub async fn shutdown(mut self) -> Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        (&mut self.task).await.map_err(|e| Error::Grpc(e.to_string()))?
    }
}

impl Drop for GrpcHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_equal_jitter_and_capped() {
        let mut b = Backoff { step: Duration::from_millis(10), max: Duration::from_millis(40) };
        let bounds = [(5, 10), (10, 20), (20, 40), (20, 40)];
        for (lo, hi) in bounds {
            let d = b.next_delay();
            assert!(
                d >= Duration::from_millis(lo) && d <= Duration::from_millis(hi),
                "{d:?} not in [{lo}, {hi}] ms"
            );
        }
    }

    #[test]
    fn node_errors_keep_their_fields() {
        let mut invalidated = false;
        let region = DelegateResponse {
            region_error: Some(errorpb::Error {
                store_not_match: Some(errorpb::StoreNotMatch {
                    request_store_id: 1,
                    actual_store_id: 2,
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let DelegateOutcome::Error(r) = classify(region, 1, || invalidated = true) else {
            panic!("not an error")
        };
        assert!(invalidated && r.region_error.unwrap().store_not_match.is_some());
        let locked = DelegateResponse {
            locked: Some(rcop_proto::kvrpcpb::LockInfo { lock_version: 9, ..Default::default() }),
            ..Default::default()
        };
        let DelegateOutcome::Error(r) = classify(locked, 1, || {}) else { panic!("not an error") };
        assert_eq!(r.locked.unwrap().lock_version, 9);
        let other = DelegateResponse { other_error: "disk".into(), ..Default::default() };
        let DelegateOutcome::Error(r) = classify(other, 1, || {}) else { panic!("not an error") };
        assert_eq!(r.other_error, "storage node: disk");
        let ok =
            DelegateResponse { mem_table_data: Bytes::from_static(b"m"), ..Default::default() };
        assert!(matches!(classify(ok, 2, || {}), DelegateOutcome::Parts { attempts: 2, .. }));
    }
}
