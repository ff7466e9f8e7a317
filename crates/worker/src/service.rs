//! The worker's HTTP routes as a `tower` service, to mount in a host's own HTTP server.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full};
use rcop_limiter::MemoryReservation;
use rcop_wire::EnvelopeFormat;

use crate::error::{Error, Result};
use crate::worker::{CopRequest, Reply, Worker};

/// Path of the health check.
pub const HEALTHZ_PATH: &str = "/healthz";
/// Path of the readiness check: 200 while the worker should get requests, 503 with the
/// reason while it drains or its object store does not answer.
pub const READYZ_PATH: &str = "/readyz";
/// Path of the Prometheus metrics.
pub const METRICS_PATH: &str = "/metrics";

const CONTENT_TYPE_METRICS: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The worker's routes as a [`tower_service::Service`] over `http` requests with any body:
/// `POST /coprocessor` (the body capped at `max-request-size`, 413 beyond; `Accept:
/// application/protobuf` turns coprocessor errors into protobuf bodies), `GET /healthz`,
/// `GET /metrics`; 405 for another method on those paths, 404 elsewhere. Never fails: every
/// outcome is a response.
///
/// Mount it in a host's server (axum, tonic, hyper through `hyper_util`'s
/// `TowerToHyperService`), or let [`Server`](crate::Server) serve it. Cheap to clone.
///
/// ```no_run
/// # async fn demo(worker: rcop_worker::Worker) {
/// use tower_service::Service;
/// let mut service = rcop_worker::WorkerService::new(std::sync::Arc::new(worker));
/// let request = http::Request::get("/healthz").body(http_body_util::Empty::<bytes::Bytes>::new()).unwrap();
/// let response = service.call(request).await.unwrap();
/// assert_eq!(response.status(), 200);
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct WorkerService {
    worker: Arc<Worker>,
}

impl WorkerService {
    /// The routes of `worker`.
    pub fn new(worker: Arc<Worker>) -> Self {
        WorkerService { worker }
    }

    /// The worker.
    pub fn worker(&self) -> &Arc<Worker> {
        &self.worker
    }

    /// Answers one request (what [`tower_service::Service::call`] runs).
    pub async fn handle<B>(&self, req: Request<B>) -> Response<Full<Bytes>>
    where
        B: Body + Send + 'static,
        B::Data: Buf + Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let reply = match (req.method(), req.uri().path()) {
            (&Method::POST, rcop_wire::COPROCESSOR_PATH) => coprocessor(&self.worker, req).await,
            (&Method::GET, HEALTHZ_PATH) => Reply::text(200, "ok\n"),
            (&Method::GET, READYZ_PATH) => match self.worker.readiness() {
                Ok(()) => Reply::text(200, "ready\n"),
                Err(why) => Reply::text(503, format!("not ready: {why}\n")),
            },
            (&Method::GET, METRICS_PATH) => {
                let text = self.worker.metrics().encode_text();
                if accepts_gzip(req.headers()) {
                    let mut resp = to_response(Reply {
                        status: 200,
                        content_type: Some(CONTENT_TYPE_METRICS),
                        body: gzip(&text),
                    });
                    resp.headers_mut()
                        .insert(http::header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
                    return resp;
                }
                Reply {
                    status: 200,
                    content_type: Some(CONTENT_TYPE_METRICS),
                    body: Bytes::from(text),
                }
            }
            (_, rcop_wire::COPROCESSOR_PATH | HEALTHZ_PATH | READYZ_PATH | METRICS_PATH) => {
                Reply::text(405, "method not allowed\n")
            }
            _ => Reply::text(404, "not found\n"),
        };
        to_response(reply)
    }
}

impl<B> tower_service::Service<Request<B>> for WorkerService
where
    B: Body + Send + 'static,
    B::Data: Buf + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let service = self.clone();
        Box::pin(async move { Ok(service.handle(req).await) })
    }
}

async fn coprocessor<B>(worker: &Worker, req: Request<B>) -> Reply
where
    B: Body + Send + 'static,
    B::Data: Buf + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match receive(worker, req).await {
        Ok(request) => worker.handle_request(request).await,
        Err(e) => {
            // The limiter counts its own rejections.
            if !matches!(&e, Error::Limiter(l) if l.rejection_label().is_some()) {
                worker.metrics().failed_requests().with_label_values(&[e.failure_label()]).inc();
            }
            worker.warn_failed(&e, "remote coprocessor request rejected");
            Reply::text(e.status(), e.to_string())
        }
    }
}

/// Reads, reserves and authenticates one `POST /coprocessor` before anything decodes it.
async fn receive<B>(worker: &Worker, req: Request<B>) -> Result<CopRequest>
where
    B: Body + Send + 'static,
    B::Data: Buf + Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let limit = worker.config().max_request_size.0;
    let headers = req.headers();
    let accepts_pb = headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains(rcop_wire::CONTENT_TYPE_PROTOBUF));
    let envelope = match headers.get(rcop_wire::HEADER_ENVELOPE).map(HeaderValue::as_bytes) {
        None => None,
        Some(b"1") => Some(EnvelopeFormat::V1),
        Some(b"2") => Some(EnvelopeFormat::V2),
        Some(_) => {
            return Err(Error::InvalidRequest(format!(
                "unknown {} header value",
                rcop_wire::HEADER_ENVELOPE
            )));
        }
    };
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = declared
        && n > limit
    {
        return Err(Error::BodyTooLarge { limit });
    }
    let header = |name: &str| headers.get(name).map(|v| v.as_bytes().to_vec());
    let signed = (header(rcop_tls::HEADER_AUTH_TIMESTAMP), header(rcop_tls::HEADER_AUTH_SIGNATURE));
    let remote_cache = headers
        .get(rcop_wire::HEADER_DFS_REMOTE_CACHE_ADDR)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty());
    // The declared bytes are reserved before one is read: a body the memory capacity
    // cannot hold is refused (503, another worker may have room) without being received.
    let reservation = worker.limiter().reserve_memory(declared.unwrap_or(0))?;
    let wait = worker.config().body_read_timeout.0;
    let (body, reservation) =
        tokio::time::timeout(wait, read_body(req.into_body(), limit, declared, reservation))
            .await
            .unwrap_or(Err(Error::BodyTimeout(wait)))?;
    if let Some(secret) = worker.shared_secret().cloned() {
        let now = rcop_tls::unix_ms(std::time::SystemTime::now());
        let max_skew = worker.config().security.auth_max_skew.0;
        let path = rcop_wire::COPROCESSOR_PATH;
        // The HMAC reads the whole body: CPU work, kept off the I/O workers.
        let checked = body.clone();
        let verdict = tokio::task::spawn_blocking(move || {
            secret.verify(signed.0.as_deref(), signed.1.as_deref(), path, &checked, now, max_skew)
        })
        .await
        .map_err(|_| Error::ExecutionPanicked)?;
        if let Err(e) = verdict {
            worker.metrics().auth_refused(&e);
            return Err(Error::Unauthenticated(e));
        }
    }
    let mut request =
        CopRequest::new(body).with_accepts_protobuf(accepts_pb).with_reservation(reservation);
    request.envelope = envelope;
    request.remote_cache = remote_cache;
    Ok(request)
}

/// Reads a body of at most `limit` bytes into one buffer (each frame copied once), growing
/// `reservation` with the buffer before it grows.
async fn read_body<B>(
    body: B,
    limit: u64,
    declared: Option<u64>,
    mut reservation: MemoryReservation,
) -> Result<(Bytes, MemoryReservation)>
where
    B: Body,
    B::Data: Buf,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let reserved = usize::try_from(reservation.bytes()).unwrap_or(usize::MAX);
    let mut buf = BytesMut::with_capacity(reserved.min(limit));
    let mut body = std::pin::pin!(body);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Error::Body(e.into().to_string()))?;
        let Ok(mut data) = frame.into_data() else { continue };
        let need = buf.len().saturating_add(data.remaining());
        if need > limit || declared.is_some_and(|n| need as u64 > n) {
            return Err(Error::BodyTooLarge { limit: limit as u64 });
        }
        if need > buf.capacity() {
            // Grow geometrically, reserving the new capacity before allocating it.
            let cap = need.max(buf.capacity().saturating_mul(2)).min(limit);
            let held = usize::try_from(reservation.bytes()).unwrap_or(usize::MAX);
            reservation.try_grow(cap.saturating_sub(held) as u64)?;
            buf.reserve(cap - buf.len());
        }
        buf.put(&mut data);
    }
    // What the buffer does not use goes back.
    reservation.shrink(reservation.bytes().saturating_sub(buf.capacity() as u64));
    Ok((buf.freeze(), reservation))
}

/// Whether `Accept-Encoding` lists gzip (with a non-zero weight).
fn accepts_gzip(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            parts.next().is_some_and(|c| c.eq_ignore_ascii_case("gzip"))
                && !parts.any(|p| p.replace(' ', "") == "q=0")
        })
}

/// `text` gzipped (a few hundred KiB of metrics shrink about tenfold).
fn gzip(text: &[u8]) -> Bytes {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = enc.write_all(text);
    Bytes::from(enc.finish().unwrap_or_default())
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
