//! HTTP/1.1 (and, over TLS, HTTP/2 by ALPN) serving of [`WorkerService`] on a listener, with
//! graceful shutdown: a thin wrapper for hosts without an HTTP server of their own (and for
//! the example binary).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::service::WorkerService;
use crate::worker::Worker;

/// An open connection: holds its `max-connections` slot and counts itself in
/// `rcop_worker_open_connections` until dropped.
struct Connection {
    _slot: OwnedSemaphorePermit,
    gauge: prometheus::IntGauge,
}

impl Connection {
    fn open(slot: OwnedSemaphorePermit, worker: &Worker) -> Connection {
        let gauge = worker.metrics().open_connections().clone();
        gauge.inc();
        Connection { _slot: slot, gauge }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// Serves one connection (HTTP/2 when `h2`, else HTTP/1.1) until it ends or the graceful
/// shutdown closes it.
async fn serve<I>(
    io: I,
    h2: bool,
    http1: hyper::server::conn::http1::Builder,
    watcher: Watcher,
    service: TowerToHyperService<WorkerService>,
    peer: SocketAddr,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(io);
    let ended = if h2 {
        let conn = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
            .timer(TokioTimer::new())
            .serve_connection(io, service);
        watcher.watch(conn).await
    } else {
        watcher.watch(http1.serve_connection(io, service)).await
    };
    if let Err(e) = ended {
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
}

/// ALPN of the HTTP listener with TLS: HTTP/2 when the client offers it, else HTTP/1.1.
const HTTP_ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// How long a graceful shutdown waits for in-flight requests before closing connections.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

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
        Server::from_listener(Arc::new(self), listener)
    }
}

/// A bound worker, ready to serve.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    local_addr: SocketAddr,
    worker: Arc<Worker>,
    tls: Option<Arc<rcop_tls::TlsServer>>,
}

impl Server {
    /// Serves `worker` on a listener the host bound (any address, e.g. one handed over by a
    /// supervisor). With `[security]` set, connections are TLS (HTTP/2 or HTTP/1.1 by ALPN,
    /// client certificates and `cert-allowed-cn` as configured); the files are read now.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if the listener has no local address; [`Error::Tls`] for certificate
    /// files that cannot be used.
    pub fn from_listener(worker: Arc<Worker>, listener: TcpListener) -> Result<Server> {
        let local_addr = listener.local_addr()?;
        let security = &worker.config().security;
        let tls =
            if security.enabled() { Some(Arc::new(security.server(&HTTP_ALPN)?)) } else { None };
        Ok(Server { listener, local_addr, worker, tls })
    }

    /// As [`from_listener`](Self::from_listener) for a `std` listener (set non-blocking
    /// here). Needs a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::Io`].
    pub fn from_std_listener(
        worker: Arc<Worker>,
        listener: std::net::TcpListener,
    ) -> Result<Server> {
        listener.set_nonblocking(true)?;
        Server::from_listener(worker, TcpListener::from_std(listener)?)
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The worker behind the server.
    pub fn worker(&self) -> &Arc<Worker> {
        &self.worker
    }

    /// Serves until `shutdown` completes, then stops accepting, lets in-flight requests
    /// finish (up to [`SHUTDOWN_GRACE`]) and returns.
    ///
    /// # Errors
    ///
    /// None today; accept errors are logged and retried.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> Result<()> {
        let Server { listener, worker, local_addr, tls } = self;
        let service = WorkerService::new(Arc::clone(&worker));
        let graceful = GracefulShutdown::new();
        let mut shutdown = std::pin::pin!(shutdown);
        let config = worker.config();
        // A slot per open connection: at `max-connections` the loop stops accepting and
        // further clients wait in the kernel's backlog until one closes.
        let slots = Arc::new(Semaphore::new(config.max_connections));
        let mut http1 = hyper::server::conn::http1::Builder::new();
        http1.timer(TokioTimer::new()).header_read_timeout(config.header_read_timeout.0);
        tracing::info!(%local_addr, threads = worker.compute_threads(), "worker serving");
        // Readiness follows the object store: listed now and every `store-check-interval`.
        let probe = tokio::spawn({
            let worker = Arc::clone(&worker);
            let every = config.store_check_interval.0;
            async move {
                loop {
                    let _ = worker.check_store().await;
                    tokio::time::sleep(every).await;
                }
            }
        });
        loop {
            let slot = tokio::select! {
                s = Arc::clone(&slots).acquire_owned() => match s {
                    Ok(s) => s,
                    Err(_) => break,
                },
                () = &mut shutdown => break,
            };
            let accepted = tokio::select! {
                a = listener.accept() => a,
                () = &mut shutdown => break,
            };
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
            let open = Connection::open(slot, &worker);
            let service = TowerToHyperService::new(service.clone());
            let (watcher, http1, tls, worker) =
                (graceful.watcher(), http1.clone(), tls.clone(), Arc::clone(&worker));
            tokio::spawn(async move {
                match tls {
                    None => serve(stream, false, http1, watcher, service, peer).await,
                    // The handshake runs on the connection's own task, bounded in time: a
                    // slow client never holds up the accept loop.
                    Some(tls) => {
                        match tls.accept(stream, rcop_tls::DEFAULT_HANDSHAKE_TIMEOUT).await {
                            Ok((stream, _peer)) => {
                                let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
                                serve(stream, h2, http1, watcher, service, peer).await;
                            }
                            Err(e) => {
                                worker.metrics().tls_refused("http", &e);
                                tracing::debug!(%peer, error = %e, "TLS connection refused");
                            }
                        }
                    }
                }
                drop(open);
            });
        }
        drop(listener);
        probe.abort();
        worker.set_draining();
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
