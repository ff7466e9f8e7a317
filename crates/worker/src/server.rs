//! HTTP/1.1 serving: routes, body cap, graceful shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::worker::{Reply, Worker};

/// How long a graceful shutdown waits for in-flight requests before closing connections.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Path of the health check.
pub const HEALTHZ_PATH: &str = "/healthz";
/// Path of the Prometheus metrics.
pub const METRICS_PATH: &str = "/metrics";

const CONTENT_TYPE_METRICS: &str = "text/plain; version=0.0.4; charset=utf-8";

impl Worker {
    /// Binds the configured `addr` (port 0 picks a free port). Needs a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the address cannot be bound.
    pub async fn bind(self) -> Result<Server> {
        let addr = self.config().addr;
        Self::bind_to(self, addr).await
    }

    /// Binds `addr` instead of the configured address.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the address cannot be bound.
    pub async fn bind_to(self, addr: SocketAddr) -> Result<Server> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        Ok(Server { listener, local_addr, worker: Arc::new(self) })
    }
}

/// A bound worker, ready to serve.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    local_addr: SocketAddr,
    worker: Arc<Worker>,
}

impl Server {
    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The worker behind the server.
    pub fn worker(&self) -> &Arc<Worker> {
        &self.worker
    }

    /// Serves until `shutdown` completes, then stops accepting, lets in-flight requests
    /// finish (up to [`SHUTDOWN_GRACE`]) and returns. Also samples process memory for the
    /// limiter while running.
    ///
    /// # Errors
    ///
    /// None today; accept errors are logged and retried.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> Result<()> {
        let Server { listener, worker, local_addr } = self;
        let _sampler = worker.limiter().spawn_memory_sampler();
        let graceful = GracefulShutdown::new();
        let mut shutdown = std::pin::pin!(shutdown);
        tracing::info!(%local_addr, threads = worker.compute_threads(), "worker serving");
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (stream, peer) = match accepted {
                        Ok(a) => a,
                        Err(e) => {
                            // Out of file descriptors and the like: back off briefly.
                            tracing::warn!(error = %e, "accept failed");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let worker = Arc::clone(&worker);
                    let service = hyper::service::service_fn(move |req| {
                        let worker = Arc::clone(&worker);
                        async move { Ok::<_, Infallible>(route(&worker, req).await) }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    let conn = graceful.watch(conn);
                    tokio::spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!(%peer, error = %e, "connection ended with an error");
                        }
                    });
                }
                () = &mut shutdown => break,
            }
        }
        drop(listener);
        tracing::info!(%local_addr, "worker shutting down");
        if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
            tracing::warn!("graceful shutdown timed out; closing connections");
        }
        Ok(())
    }

    /// Serves on a task of the current runtime; the handle stops it.
    pub fn spawn(self) -> WorkerHandle {
        let local_addr = self.local_addr;
        let worker = Arc::clone(&self.worker);
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(self.run(async move {
            // A dropped handle also stops the server.
            let _ = rx.await;
        }));
        WorkerHandle { local_addr, worker, shutdown: Some(tx), task }
    }
}

/// A worker serving on a background task. [`WorkerHandle::shutdown`] stops it gracefully;
/// dropping the handle also stops it (without waiting).
#[derive(Debug)]
pub struct WorkerHandle {
    local_addr: SocketAddr,
    worker: Arc<Worker>,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<()>>,
}

impl WorkerHandle {
    /// The address the worker listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The worker.
    pub fn worker(&self) -> &Arc<Worker> {
        &self.worker
    }

    /// Stops accepting, waits for in-flight requests and the server task.
    ///
    /// # Errors
    ///
    /// The server's error; [`Error::Io`] if its task panicked.
    pub async fn shutdown(mut self) -> Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        (&mut self.task).await.map_err(|e| Error::Io(std::io::Error::other(e)))?
    }
}

impl Drop for WorkerHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn route(worker: &Worker, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let reply = match (req.method(), req.uri().path()) {
        (&Method::POST, rcop_wire::COPROCESSOR_PATH) => coprocessor(worker, req).await,
        (&Method::GET, HEALTHZ_PATH) => Reply::text(200, "ok\n"),
        (&Method::GET, METRICS_PATH) => Reply {
            status: 200,
            content_type: Some(CONTENT_TYPE_METRICS),
            body: Bytes::from(worker.metrics().encode_text()),
        },
        (_, rcop_wire::COPROCESSOR_PATH | HEALTHZ_PATH | METRICS_PATH) => {
            Reply::text(405, "method not allowed\n")
        }
        _ => Reply::text(404, "not found\n"),
    };
    to_response(reply)
}

async fn coprocessor(worker: &Worker, req: Request<Incoming>) -> Reply {
    let limit = worker.config().max_request_size.0;
    let accepts_pb = req
        .headers()
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains(rcop_wire::CONTENT_TYPE_PROTOBUF));
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let body = match declared {
        Some(n) if n > limit => Err(Error::BodyTooLarge { limit }),
        _ => read_body(req.into_body(), limit).await,
    };
    match body {
        Ok(body) => worker.handle_coprocessor(body, accepts_pb).await,
        Err(e) => {
            worker.metrics().failed_requests().with_label_values(&[e.failure_label()]).inc();
            tracing::warn!(status = e.status(), error = %e, "remote coprocessor request rejected");
            Reply::text(e.status(), e.to_string())
        }
    }
}

async fn read_body(body: Incoming, limit: u64) -> Result<Bytes> {
    let cap = usize::try_from(limit).unwrap_or(usize::MAX);
    match Limited::new(body, cap).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
            Err(Error::BodyTooLarge { limit })
        }
        Err(e) => Err(Error::Body(e.to_string())),
    }
}

fn to_response(reply: Reply) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(reply.body));
    *resp.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Some(ct) = reply.content_type {
        resp.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(ct));
    }
    resp
}
