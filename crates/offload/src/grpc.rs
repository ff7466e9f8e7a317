//! `tikvpb.Tikv/DelegateCoprocessor` as a tonic service (feature `grpc`): the storage
//! node's gRPC endpoint of the first way, over the host's [`DelegateHost`].
//!
//! Per call: the node's own permit limit ([`DelegatePermits`]: none free → `server_is_busy`
//! at once), the deadline (the smaller of `grpc-timeout` and the context's
//! `max_execution_duration_ms`), then [`export_delegate`] on tokio's blocking pool. The
//! request size cap is tonic's decoding limit. Every other `Tikv` method answers
//! UNIMPLEMENTED.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rcop_proto::coprocessor::{DelegateRequest, DelegateResponse};
use rcop_proto::kvrpcpb::Context;
use rcop_proto::tikvpb::tikv_server::{Tikv, TikvServer};

use crate::delegate::{
    DEFAULT_DELEGATE_CONCURRENCY, DEFAULT_DELEGATE_MAX_REQUEST_SIZE, DelegatePermits,
    busy_response, context_deadline, export_delegate, source_error_response,
};
use crate::error::SourceError;
use crate::source::SnapshotSource;

/// What the delegate service needs from the host: the snapshot source of the region a
/// request's context names.
pub trait DelegateHost: Send + Sync + 'static {
    /// The source over one region's (shard's) snapshot.
    type Source<'a>: SnapshotSource
    where
        Self: 'a;

    /// The source of the region `context` names (region id, epoch, peer).
    ///
    /// # Errors
    ///
    /// [`SourceError::Region`] for a region this node does not serve or a stale epoch
    /// (answered as `region_error`); any other [`SourceError`] as its field.
    fn source(&self, context: Option<&Context>) -> Result<Self::Source<'_>, SourceError>;
}

/// The delegate endpoint over a host (see the module docs). Cloning shares the host and the
/// permits.
#[derive(Debug)]
pub struct DelegateService<H> {
    host: Arc<H>,
    permits: DelegatePermits,
    max_request_size: usize,
    max_response_size: usize,
}

impl<H> Clone for DelegateService<H> {
    fn clone(&self) -> Self {
        DelegateService {
            host: Arc::clone(&self.host),
            permits: self.permits.clone(),
            max_request_size: self.max_request_size,
            max_response_size: self.max_response_size,
        }
    }
}

impl<H: DelegateHost> DelegateService<H> {
    /// A service over `host` with [`DEFAULT_DELEGATE_CONCURRENCY`] permits and a
    /// [`DEFAULT_DELEGATE_MAX_REQUEST_SIZE`] request cap.
    pub fn new(host: Arc<H>) -> Self {
        DelegateService {
            host,
            permits: DelegatePermits::new(DEFAULT_DELEGATE_CONCURRENCY),
            max_request_size: DEFAULT_DELEGATE_MAX_REQUEST_SIZE,
            max_response_size: usize::MAX,
        }
    }

    /// Shares `permits` (e.g. with the node's other read work) instead of its own.
    #[must_use]
    pub fn with_permits(mut self, permits: DelegatePermits) -> Self {
        self.permits = permits;
        self
    }

    /// Caps the encoded `DelegateRequest` at `bytes` (larger: RESOURCE_EXHAUSTED).
    #[must_use]
    pub fn with_max_request_size(mut self, bytes: usize) -> Self {
        self.max_request_size = bytes;
        self
    }

    /// Caps the encoded `DelegateResponse` at `bytes` (default: unbounded).
    #[must_use]
    pub fn with_max_response_size(mut self, bytes: usize) -> Self {
        self.max_response_size = bytes;
        self
    }

    /// The permits this service takes.
    pub fn permits(&self) -> &DelegatePermits {
        &self.permits
    }

    /// The tonic server to add to a `tonic::transport::Server` (or any host router), with
    /// the size caps applied.
    pub fn into_server(self) -> TikvServer<Self> {
        let (req, resp) = (self.max_request_size, self.max_response_size);
        TikvServer::new(self).max_decoding_message_size(req).max_encoding_message_size(resp)
    }
}

#[tonic::async_trait]
impl<H: DelegateHost> Tikv for DelegateService<H> {
    async fn delegate_coprocessor(
        &self,
        request: tonic::Request<DelegateRequest>,
    ) -> Result<tonic::Response<DelegateResponse>, tonic::Status> {
        let received = Instant::now();
        let timeout = request
            .metadata()
            .get("grpc-timeout")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_grpc_timeout)
            .and_then(|t| received.checked_add(t));
        let req = request.into_inner();
        let deadline = match (timeout, context_deadline(&req, received)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let Some(permit) = self.permits.try_acquire() else {
            return Ok(tonic::Response::new(busy_response("delegate permits exhausted")));
        };
        let host = Arc::clone(&self.host);
        let resp = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            match host.source(req.context.as_ref()) {
                Ok(source) => export_delegate(&req, &source, deadline),
                Err(e) => source_error_response(&e),
            }
        })
        .await
        .unwrap_or_else(|e| DelegateResponse {
            other_error: format!("delegate export failed: {e}"),
            ..DelegateResponse::default()
        });
        Ok(tonic::Response::new(resp))
    }
}

/// Parses a `grpc-timeout` header value: up to 8 digits and a unit (`H`, `M`, `S`, `m`,
/// `u`, `n`).
pub fn parse_grpc_timeout(value: &str) -> Option<Duration> {
    let unit = value.chars().last()?;
    let digits = value.get(..value.len().checked_sub(1)?)?;
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        'H' => Duration::from_secs(n.checked_mul(3600)?),
        'M' => Duration::from_secs(n.checked_mul(60)?),
        'S' => Duration::from_secs(n),
        'm' => Duration::from_millis(n),
        'u' => Duration::from_micros(n),
        'n' => Duration::from_nanos(n),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts() {
        assert_eq!(parse_grpc_timeout("250m"), Some(Duration::from_millis(250)));
        assert_eq!(parse_grpc_timeout("3S"), Some(Duration::from_secs(3)));
        assert_eq!(parse_grpc_timeout("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_grpc_timeout("10u"), Some(Duration::from_micros(10)));
        for bad in ["", "m", "123456789m", "12x", "-1S", "1.5S"] {
            assert_eq!(parse_grpc_timeout(bad), None, "{bad}");
        }
    }
}
