//! TLS for tonic: an incoming stream of accepted TLS connections for a gRPC server, and a
//! connector for a gRPC client.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsConnector;
use tokio_rustls::server::TlsStream;

use crate::error::Error;
use crate::identity::PeerIdentity;
use crate::server::TlsServer;

/// `AsyncRead` and `AsyncWrite` of a connection type through its `stream` field.
macro_rules! delegate_io {
    ($conn:ty) => {
        impl AsyncRead for $conn {
            fn poll_read(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                Pin::new(&mut self.stream).poll_read(cx, buf)
            }
        }

        impl AsyncWrite for $conn {
            fn poll_write(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                Pin::new(&mut self.stream).poll_write(cx, buf)
            }

            fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Pin::new(&mut self.stream).poll_flush(cx)
            }

            fn poll_shutdown(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<io::Result<()>> {
                Pin::new(&mut self.stream).poll_shutdown(cx)
            }

            fn poll_write_vectored(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[io::IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                self.stream.is_write_vectored()
            }
        }
    };
}

/// Connections whose handshake finished, waiting for the gRPC server to take them.
const ACCEPTED_QUEUE: usize = 64;

/// What a gRPC handler can learn of its TLS connection (`request.extensions()`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TlsConnectInfo {
    /// The client's address.
    pub remote_addr: Option<SocketAddr>,
    /// The client's certificate identity, when it presented one.
    pub peer: Option<PeerIdentity>,
}

/// An accepted TLS connection, for `tonic::transport::Server::serve_with_incoming`.
#[derive(Debug)]
pub struct TlsConn {
    stream: TlsStream<TcpStream>,
    info: TlsConnectInfo,
    /// The connection's place under the listener's limit, given back when it closes.
    _slot: OwnedSemaphorePermit,
}

impl TlsConn {
    /// The client's address and identity.
    pub fn info(&self) -> &TlsConnectInfo {
        &self.info
    }
}

delegate_io!(TlsConn);

impl tonic::transport::server::Connected for TlsConn {
    type ConnectInfo = TlsConnectInfo;

    fn connect_info(&self) -> TlsConnectInfo {
        self.info.clone()
    }
}

/// Accepts TCP connections on `listener` and runs each TLS handshake on a task of its own
/// (a slow client never delays the others), within `handshake_timeout`; yields the
/// connections whose handshake and identity check passed. A refused connection is passed to
/// `on_refused` (for a metric) and logged at debug, then dropped. The accept loop ends when
/// the stream is dropped.
///
/// Must be called inside a Tokio runtime.
pub fn incoming<F>(
    listener: TcpListener,
    server: Arc<TlsServer>,
    handshake_timeout: Duration,
    on_refused: F,
) -> impl Stream<Item = io::Result<TlsConn>> + Send + 'static
where
    F: Fn(&Error) + Send + Sync + 'static,
{
    incoming_limited(listener, server, handshake_timeout, Semaphore::MAX_PERMITS, on_refused)
}

/// As [`incoming`], holding at most `max_connections` connections (handshaking or open) at
/// once: the listener stops accepting while that many are open, so the rest wait in the
/// kernel's backlog instead of each costing a task and a buffer.
///
/// Must be called inside a Tokio runtime.
pub fn incoming_limited<F>(
    listener: TcpListener,
    server: Arc<TlsServer>,
    handshake_timeout: Duration,
    max_connections: usize,
    on_refused: F,
) -> impl Stream<Item = io::Result<TlsConn>> + Send + 'static
where
    F: Fn(&Error) + Send + Sync + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel::<TlsConn>(ACCEPTED_QUEUE);
    let on_refused = Arc::new(on_refused);
    let slots = Arc::new(Semaphore::new(max_connections.clamp(1, Semaphore::MAX_PERMITS)));
    tokio::spawn(async move {
        loop {
            let slot = tokio::select! {
                s = Arc::clone(&slots).acquire_owned() => match s {
                    Ok(s) => s,
                    Err(_) => return,
                },
                () = tx.closed() => return,
            };
            let accepted = tokio::select! {
                a = listener.accept() => a,
                () = tx.closed() => return,
            };
            let (tcp, remote) = match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let _ = tcp.set_nodelay(true);
            let (tx, server, on_refused) =
                (tx.clone(), Arc::clone(&server), Arc::clone(&on_refused));
            tokio::spawn(async move {
                match server.accept(tcp, handshake_timeout).await {
                    Ok((stream, peer)) => {
                        let info = TlsConnectInfo { remote_addr: Some(remote), peer };
                        let _ = tx.send(TlsConn { stream, info, _slot: slot }).await;
                    }
                    Err(e) => {
                        tracing::debug!(%remote, error = %e, "TLS connection refused");
                        on_refused(&e);
                    }
                }
            });
        }
    });
    futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|c| (Ok(c), rx)) })
}

/// An accepted plain TCP connection holding its place under a listener's limit.
#[derive(Debug)]
pub struct PlainConn {
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
}

delegate_io!(PlainConn);

impl tonic::transport::server::Connected for PlainConn {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.stream.connect_info()
    }
}

/// Plain TCP connections of `listener` for a gRPC server, at most `max_connections` open at
/// once (the listener stops accepting at the limit). Must be called inside a Tokio runtime.
pub fn plain_incoming_limited(
    listener: TcpListener,
    max_connections: usize,
) -> impl Stream<Item = io::Result<PlainConn>> + Send + 'static {
    let slots = Arc::new(Semaphore::new(max_connections.clamp(1, Semaphore::MAX_PERMITS)));
    futures::stream::unfold((listener, slots), |(listener, slots)| async move {
        let slot = Arc::clone(&slots).acquire_owned().await.ok()?;
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    return Some((Ok(PlainConn { stream, _slot: slot }), (listener, slots)));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    })
}

/// A connector for `tonic::transport::Endpoint::connect_with_connector`: TCP to the URI's
/// host and port (443 when none), then TLS with this client configuration, the server
/// verified for the URI's host (a DNS name or an IP address its certificate must name).
#[derive(Debug, Clone)]
pub struct GrpcConnector {
    tls: Arc<rustls::ClientConfig>,
}

impl GrpcConnector {
    /// A connector with `tls` (from [`SecurityConfig::client_config`] with `[b"h2"]`).
    ///
    /// [`SecurityConfig::client_config`]: crate::SecurityConfig::client_config
    pub fn new(tls: Arc<rustls::ClientConfig>) -> Self {
        GrpcConnector { tls }
    }
}

type ConnectFuture = Pin<
    Box<
        dyn Future<Output = io::Result<TokioIo<tokio_rustls::client::TlsStream<TcpStream>>>> + Send,
    >,
>;

impl tower_service::Service<http::Uri> for GrpcConnector {
    type Response = TokioIo<tokio_rustls::client::TlsStream<TcpStream>>;
    type Error = io::Error;
    type Future = ConnectFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: http::Uri) -> ConnectFuture {
        let tls = Arc::clone(&self.tls);
        Box::pin(async move {
            let bad =
                |why: &str| io::Error::new(io::ErrorKind::InvalidInput, format!("{uri}: {why}"));
            let host = uri.host().ok_or_else(|| bad("no host"))?;
            // `[::1]` in a URI is `::1` to a socket and a certificate.
            let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
            let port = uri.port_u16().unwrap_or(443);
            let name = ServerName::try_from(host.clone()).map_err(|_| bad("not a server name"))?;
            let tcp = TcpStream::connect((host.as_str(), port)).await?;
            let _ = tcp.set_nodelay(true);
            let stream = TlsConnector::from(tls).connect(name, tcp).await?;
            Ok(TokioIo::new(stream))
        })
    }
}
