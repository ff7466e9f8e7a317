//! The worker's HTTP routes as a `tower` service, to mount in a host's own HTTP server.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};

use crate::error::{Error, Result};
use crate::worker::{Reply, Worker};

/// Path of the health check.
pub const HEALTHZ_PATH: &str = "/healthz";
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
            (&Method::GET, METRICS_PATH) => Reply {
                status: 200,
                content_type: Some(CONTENT_TYPE_METRICS),
                body: Bytes::from(self.worker.metrics().encode_text()),
            },
            (_, rcop_wire::COPROCESSOR_PATH | HEALTHZ_PATH | METRICS_PATH) => {
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
    let wait = worker.config().body_read_timeout.0;
    let body = match declared {
        Some(n) if n > limit => Err(Error::BodyTooLarge { limit }),
        _ => tokio::time::timeout(wait, read_body(req.into_body(), limit))
            .await
            .unwrap_or(Err(Error::BodyTimeout(wait))),
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

async fn read_body<B>(body: B, limit: u64) -> Result<Bytes>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
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
