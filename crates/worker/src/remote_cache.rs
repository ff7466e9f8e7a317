//! The storage node as a read-through cache of recent files (upstream's `RemoteCachedDfs`):
//! a request carrying `x-dfs-remote-cache-addr: host:port` lets the worker read files younger
//! than `cop-remote-dfs-cache-ttl` from that node's `GET /dfs/{id}?file_type=sst&start_off=
//! …&end_off=…` before the object store. The node just wrote them; object storage may not
//! serve them yet as fast. Any failure — refused connection, timeout, a status other than
//! 200, a body of the wrong length — answers `None` and the reader asks the object store;
//! blocks from the node pass the same checksums, and one that fails is read again from the
//! store (`rcop_sst::RemoteCache`).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use rcop_sst::{FileId, RemoteCache};

/// Timeout of one read from a storage node, head and body (upstream: 10 s each).
pub const REMOTE_CACHE_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest body accepted from a node for one read (an SST's metadata or a coalesced
/// block read is far smaller; a larger answer is not used).
const MAX_REMOTE_READ: usize = 256 << 20;

/// Makes the remote cache of one request's storage node.
#[derive(Clone)]
pub struct RemoteCacheConnector {
    tls: Option<Arc<rcop_tls::ClientConfig>>,
    ttl: Duration,
    metrics: Option<prometheus::IntCounterVec>,
}

impl std::fmt::Debug for RemoteCacheConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteCacheConnector")
            .field("tls", &self.tls.is_some())
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl RemoteCacheConnector {
    /// Reads files younger than `ttl`, over HTTPS with `tls` when given (the worker's
    /// `[security]` identity), else plain HTTP.
    pub fn new(tls: Option<Arc<rcop_tls::ClientConfig>>, ttl: Duration) -> Self {
        RemoteCacheConnector { tls, ttl, metrics: None }
    }

    /// Counts reads in `metrics` by outcome (`hit`, `miss`, `skipped`).
    #[must_use]
    pub fn with_metrics(mut self, metrics: prometheus::IntCounterVec) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The cache of the node at `addr` (`host:port`), or `None` for an address that is no
    /// `host:port` or with the TTL at 0.
    pub fn connect(&self, addr: &str) -> Option<Arc<dyn RemoteCache>> {
        if self.ttl.is_zero() || !valid_addr(addr) {
            return None;
        }
        Some(Arc::new(NodeCache { addr: addr.to_owned(), connector: self.clone() }))
    }
}

/// `host:port` with a host of visible ASCII and a numeric port.
fn valid_addr(addr: &str) -> bool {
    match addr.rsplit_once(':') {
        Some((host, port)) => {
            !host.is_empty()
                && host.bytes().all(|b| b.is_ascii_graphic() && b != b'/' && b != b'?' && b != b'#')
                && port.parse::<u16>().is_ok()
        }
        None => false,
    }
}

/// The physical milliseconds of a TSO-shaped file id.
fn file_age(id: FileId, now: SystemTime) -> Option<Duration> {
    let physical = Duration::from_millis(id.0 >> 18);
    let now = now.duration_since(UNIX_EPOCH).ok()?;
    Some(now.saturating_sub(physical))
}

#[derive(Debug)]
struct NodeCache {
    addr: String,
    connector: RemoteCacheConnector,
}

impl NodeCache {
    fn count(&self, outcome: &str) {
        if let Some(m) = &self.connector.metrics {
            m.with_label_values(&[outcome]).inc();
        }
    }
}

impl RemoteCache for NodeCache {
    fn read(
        &self,
        id: FileId,
        start: u64,
        end: Option<u64>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<Bytes>> + Send + 'static>> {
        let young = file_age(id, SystemTime::now()).is_some_and(|a| a <= self.connector.ttl);
        if !young {
            self.count("skipped");
            return Box::pin(async { None });
        }
        let mut path = format!("/dfs/{}?file_type=sst&start_off={start}", id.0);
        if let Some(end) = end {
            path.push_str(&format!("&end_off={end}"));
        }
        let addr = self.addr.clone();
        let tls = self.connector.tls.clone();
        let metrics = self.connector.metrics.clone();
        // A ranged read may answer exactly its bytes: a longer body is not read into memory.
        let limit = end.map_or(MAX_REMOTE_READ, |e| {
            usize::try_from(e.saturating_sub(start)).unwrap_or(MAX_REMOTE_READ).min(MAX_REMOTE_READ)
        });
        Box::pin(async move {
            let got = tokio::time::timeout(REMOTE_CACHE_TIMEOUT, fetch(&addr, &path, tls, limit))
                .await
                .ok()
                .flatten();
            if let Some(m) = &metrics {
                m.with_label_values(&[if got.is_some() { "hit" } else { "miss" }]).inc();
            }
            if got.is_none() {
                tracing::debug!(addr = %addr, file = %id, "remote cache did not answer; reading the object store");
            }
            got
        })
    }
}

/// One `GET` on a new connection; `None` on any failure, a status other than 200 or a body
/// over `limit` bytes.
async fn fetch(
    addr: &str,
    path: &str,
    tls: Option<Arc<rcop_tls::ClientConfig>>,
    limit: usize,
) -> Option<Bytes> {
    let (host, _) = addr.rsplit_once(':')?;
    let tcp = tokio::net::TcpStream::connect(addr).await.ok()?;
    let _ = tcp.set_nodelay(true);
    let request = hyper::Request::get(path)
        .header(hyper::header::HOST, addr)
        .body(Empty::<Bytes>::new())
        .ok()?;
    match tls {
        Some(tls) => {
            let name = host.trim_start_matches('[').trim_end_matches(']').to_owned();
            let name = rustls::pki_types::ServerName::try_from(name).ok()?;
            let stream = tokio_rustls::TlsConnector::from(tls).connect(name, tcp).await.ok()?;
            send(TokioIo::new(stream), request, limit).await
        }
        None => send(TokioIo::new(tcp), request, limit).await,
    }
}

async fn send<I>(io: I, request: hyper::Request<Empty<Bytes>>, limit: usize) -> Option<Bytes>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await.ok()?;
    let conn = tokio::spawn(conn);
    let response = sender.send_request(request).await.ok()?;
    let answer = if response.status() == hyper::StatusCode::OK {
        Limited::new(response.into_body(), limit).collect().await.ok().map(|b| b.to_bytes())
    } else {
        None
    };
    conn.abort();
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_young_tso_files_and_host_port_addresses() {
        let now = SystemTime::now();
        let ms = now.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
        let young = FileId((ms - 60_000) << 18 | 5);
        let old = FileId((ms - 3_600_000) << 18);
        assert!(file_age(young, now).unwrap() <= Duration::from_secs(61));
        assert!(file_age(old, now).unwrap() >= Duration::from_secs(3_599));
        assert!(valid_addr("127.0.0.1:20180") && valid_addr("tikv-0.tikv:20180"));
        assert!(valid_addr("[::1]:20180"));
        for bad in ["", "host", "host:", "host:x", ":80", "a/b:80", "a b:80", "h:99999"] {
            assert!(!valid_addr(bad), "{bad}");
        }
        let c = RemoteCacheConnector::new(None, Duration::from_secs(600));
        assert!(c.connect("127.0.0.1:1").is_some());
        assert!(c.connect("nope").is_none());
        assert!(RemoteCacheConnector::new(None, Duration::ZERO).connect("127.0.0.1:1").is_none());
    }
}
