//! The worker's Prometheus metrics, named as upstream's `tikv_worker_*` (names TiKV itself
//! does not register), plus `rcop_worker_*` where we add one.

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts,
    Registry,
};
use rcop_limiter::LimiterMetrics;

use crate::error::Result;

/// The worker's metrics (reference §6.4) plus the limiter's, in one registry. Those marked
/// `{path}` carry a `path` label: `http` for the offload (second way), `grpc` for the
/// delegate path (first way).
///
/// - `tikv_worker_remote_cop_dag_request_counter{path}`: DAG requests received;
/// - `tikv_worker_remote_cop_dag_response_size`: response body bytes, a counter as upstream;
/// - `rcop_worker_response_size_bytes`: the distribution of response body sizes;
/// - `tikv_worker_remote_cop_snapshot_duration_seconds{path}`: snapshot rebuild (plan + fetch);
/// - `tikv_worker_remote_cop_process_duration_seconds{path}`: execution on the compute pool;
/// - `tikv_worker_remote_cop_request_duration_seconds{path}`: whole request (exponential buckets
///   from 0.5 ms doubling, 20 buckets, as upstream);
/// - `tikv_worker_remote_cop_processing_requests_counter` (a gauge, as upstream): requests
///   in flight;
/// - `tikv_worker_remote_cop_failed_requests_counter{type}`: failures, shared with the
///   limiter's rejections;
/// - `rcop_worker_delegate_duration_seconds`: the delegate call to the storage node, retries
///   included (first way);
/// - `rcop_worker_delegate_retries_total{reason}`: delegate attempts retried (`busy`,
///   `network`);
/// - `rcop_worker_open_connections`: HTTP connections open now (at most `max-connections`);
/// - `rcop_worker_tls_refused_total{listener, reason}`: TLS connections refused on the `http`
///   or `grpc` listener (`handshake`: a failed handshake, e.g. no or a foreign client
///   certificate; `timeout`; `not_allowed`: an identity outside `cert-allowed-cn`);
/// - `rcop_worker_auth_refused_total{reason}`: offload requests refused by the shared-secret
///   check (`missing` → 401; `malformed`, `stale`, `bad_signature` → 403);
/// - `rcop_worker_ready`: 1 while `/readyz` answers 200;
/// - `rcop_worker_cancelled_requests_total`: requests whose client went away (a closed
///   connection, a cancelled call) before the answer; their work stops at its next check;
/// - the limiter's wait histograms, waiting gauges and memory gauge ([`LimiterMetrics`]).
#[derive(Debug, Clone)]
pub struct WorkerMetrics {
    registry: Registry,
    limiter: LimiterMetrics,
    dag_requests: IntCounterVec,
    response_bytes: IntCounter,
    response_size: Histogram,
    snapshot_duration: HistogramVec,
    process_duration: HistogramVec,
    request_duration: HistogramVec,
    delegate_duration: Histogram,
    delegate_retries: IntCounterVec,
    tls_refused: IntCounterVec,
    auth_refused: IntCounterVec,
    cancelled: IntCounter,
    ready: IntGauge,
    open_connections: IntGauge,
    processing: IntGauge,
}

impl WorkerMetrics {
    /// Creates every metric and registers it in a fresh registry.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Metrics`] / [`crate::Error::Limiter`] if registration fails.
    pub fn new() -> Result<Self> {
        Self::register(Registry::new())
    }

    /// Creates every metric and registers it in `registry` — a host's own, which may
    /// already hold TiKV's metrics: none of these names is one TiKV registers. The
    /// registry is kept, so [`encode_text`](Self::encode_text) exposes all it holds.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Metrics`] / [`crate::Error::Limiter`] if a name is already
    /// registered there (e.g. a second worker on one registry).
    pub fn register(registry: Registry) -> Result<Self> {
        let limiter = LimiterMetrics::register(&registry)?;
        let seconds = |name: &str, help: &str| -> Result<HistogramVec> {
            let h = HistogramVec::new(
                HistogramOpts::new(name, help)
                    .buckets(prometheus::exponential_buckets(0.0005, 2.0, 20)?),
                &["path"],
            )?;
            registry.register(Box::new(h.clone()))?;
            Ok(h)
        };
        let snapshot_duration = seconds(
            "tikv_worker_remote_cop_snapshot_duration_seconds",
            "Time to rebuild a request's snapshot",
        )?;
        let process_duration = seconds(
            "tikv_worker_remote_cop_process_duration_seconds",
            "Time to execute a request on the compute pool",
        )?;
        let request_duration = seconds(
            "tikv_worker_remote_cop_request_duration_seconds",
            "Time to handle a remote coprocessor request",
        )?;
        let response_bytes = IntCounter::new(
            "tikv_worker_remote_cop_dag_response_size",
            "Total size of remote coprocessor DAG responses",
        )?;
        registry.register(Box::new(response_bytes.clone()))?;
        let response_size = Histogram::with_opts(
            HistogramOpts::new("rcop_worker_response_size_bytes", "Bytes of DAG response bodies")
                .buckets(prometheus::exponential_buckets(256.0, 4.0, 12)?),
        )?;
        registry.register(Box::new(response_size.clone()))?;
        let dag_requests = IntCounterVec::new(
            Opts::new(
                "tikv_worker_remote_cop_dag_request_counter",
                "Remote coprocessor DAG requests received",
            ),
            &["path"],
        )?;
        registry.register(Box::new(dag_requests.clone()))?;
        let processing = IntGauge::new(
            "tikv_worker_remote_cop_processing_requests_counter",
            "Remote coprocessor requests being handled now",
        )?;
        registry.register(Box::new(processing.clone()))?;
        let delegate_duration = Histogram::with_opts(
            HistogramOpts::new(
                "rcop_worker_delegate_duration_seconds",
                "Time to get a delegate (mem-data and change set) from the storage node",
            )
            .buckets(prometheus::exponential_buckets(0.0005, 2.0, 20)?),
        )?;
        registry.register(Box::new(delegate_duration.clone()))?;
        let delegate_retries = IntCounterVec::new(
            Opts::new("rcop_worker_delegate_retries_total", "Delegate attempts retried"),
            &["reason"],
        )?;
        for reason in ["busy", "network"] {
            delegate_retries.with_label_values(&[reason]);
        }
        registry.register(Box::new(delegate_retries.clone()))?;
        let tls_refused = IntCounterVec::new(
            Opts::new("rcop_worker_tls_refused_total", "TLS connections refused"),
            &["listener", "reason"],
        )?;
        for listener in ["http", "grpc"] {
            for reason in ["handshake", "timeout", "not_allowed"] {
                tls_refused.with_label_values(&[listener, reason]);
            }
        }
        registry.register(Box::new(tls_refused.clone()))?;
        let auth_refused = IntCounterVec::new(
            Opts::new(
                "rcop_worker_auth_refused_total",
                "Offload requests refused by the shared-secret check",
            ),
            &["reason"],
        )?;
        for reason in ["missing", "malformed", "stale", "bad_signature"] {
            auth_refused.with_label_values(&[reason]);
        }
        registry.register(Box::new(auth_refused.clone()))?;
        let cancelled = IntCounter::new(
            "rcop_worker_cancelled_requests_total",
            "Requests whose client went away before the answer",
        )?;
        registry.register(Box::new(cancelled.clone()))?;
        let ready = IntGauge::new(
            "rcop_worker_ready",
            "1 while the worker reports ready (/readyz): not draining, object store answering",
        )?;
        ready.set(1);
        registry.register(Box::new(ready.clone()))?;
        let open_connections =
            IntGauge::new("rcop_worker_open_connections", "HTTP connections open now")?;
        registry.register(Box::new(open_connections.clone()))?;
        // Both paths' series exist from the start, so a dashboard (and a scrape before the
        // first request) sees every name.
        for path in ["http", "grpc"] {
            dag_requests.with_label_values(&[path]);
            for h in [&snapshot_duration, &process_duration, &request_duration] {
                h.with_label_values(&[path]);
            }
        }
        Ok(WorkerMetrics {
            registry,
            limiter,
            dag_requests,
            response_bytes,
            response_size,
            snapshot_duration,
            process_duration,
            request_duration,
            delegate_duration,
            delegate_retries,
            tls_refused,
            auth_refused,
            cancelled,
            ready,
            open_connections,
            processing,
        })
    }

    /// The registry holding every metric (add your own to it).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The limiter's metrics, registered in [`Self::registry`].
    pub fn limiter(&self) -> &LimiterMetrics {
        &self.limiter
    }

    /// `tikv_worker_remote_cop_failed_requests_counter{type}`.
    pub fn failed_requests(&self) -> &IntCounterVec {
        self.limiter.failed_requests()
    }

    /// The Prometheus text exposition of every metric.
    pub fn encode_text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Encoding into a Vec fails only for malformed metric families, which the registry
        // never holds; an empty page is the fallback.
        if prometheus::TextEncoder::new().encode(&self.registry.gather(), &mut out).is_err() {
            out.clear();
        }
        out
    }

    pub(crate) fn dag_requests(&self) -> &IntCounterVec {
        &self.dag_requests
    }

    /// Counts a response body of `bytes`.
    pub(crate) fn observe_response(&self, bytes: usize) {
        self.response_bytes.inc_by(bytes as u64);
        self.response_size.observe(bytes as f64);
    }

    pub(crate) fn snapshot_duration(&self) -> &HistogramVec {
        &self.snapshot_duration
    }

    pub(crate) fn process_duration(&self) -> &HistogramVec {
        &self.process_duration
    }

    pub(crate) fn request_duration(&self) -> &HistogramVec {
        &self.request_duration
    }

    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    pub(crate) fn delegate_duration(&self) -> &Histogram {
        &self.delegate_duration
    }

    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    pub(crate) fn delegate_retries(&self) -> &IntCounterVec {
        &self.delegate_retries
    }

    /// Counts a request in the processing gauge until the guard is dropped (also when the
    /// request's future is dropped half way).
    pub(crate) fn processing_guard(&self) -> ProcessingGuard {
        self.processing.inc();
        ProcessingGuard(self.processing.clone())
    }

    pub(crate) fn set_ready(&self, ready: bool) {
        self.ready.set(i64::from(ready));
    }

    pub(crate) fn cancelled(&self) -> &IntCounter {
        &self.cancelled
    }

    pub(crate) fn auth_refused(&self, e: &rcop_tls::AuthError) {
        self.auth_refused.with_label_values(&[e.label()]).inc();
    }

    /// Counts a TLS connection refused on `listener` (`http`, `grpc`).
    #[cfg_attr(not(any(feature = "server", feature = "grpc")), allow(dead_code))]
    pub(crate) fn tls_refused(&self, listener: &str, e: &rcop_tls::Error) {
        self.tls_refused.with_label_values(&[listener, e.reason_label()]).inc();
    }

    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) fn open_connections(&self) -> &IntGauge {
        &self.open_connections
    }
}

/// Decrements the processing gauge when dropped.
#[derive(Debug)]
pub(crate) struct ProcessingGuard(IntGauge);

impl Drop for ProcessingGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_upstream_names_with_the_limiters() {
        let m = WorkerMetrics::new().unwrap();
        m.dag_requests().with_label_values(&["http"]).inc();
        m.request_duration().with_label_values(&["grpc"]).observe(0.1);
        m.observe_response(1000);
        m.failed_requests().with_label_values(&["decode"]).inc();
        let text = String::from_utf8(m.encode_text()).unwrap();
        for name in [
            "tikv_worker_remote_cop_dag_request_counter{path=\"http\"} 1",
            "tikv_worker_remote_cop_dag_response_size 1000",
            "rcop_worker_response_size_bytes_count 1",
            "tikv_worker_remote_cop_request_duration_seconds_bucket{path=\"grpc\",le=\"0.0005\"} 0",
            "tikv_worker_remote_cop_request_duration_seconds_count{path=\"grpc\"} 1",
            "rcop_worker_delegate_duration_seconds_count 0",
            "tikv_worker_remote_cop_processing_requests_counter 0",
            "tikv_worker_remote_cop_failed_requests_counter{type=\"decode\"} 1",
            "tikv_worker_memory_limiter_current_used 0",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
        // Two workers in one process do not collide.
        WorkerMetrics::new().unwrap();
        // A host registry with TiKV's own coprocessor metrics takes ours.
        let host = Registry::new();
        let tikv = IntCounterVec::new(
            prometheus::Opts::new("tikv_coprocessor_request_error", "TiKV's"),
            &["reason"],
        )
        .unwrap();
        host.register(Box::new(tikv)).unwrap();
        WorkerMetrics::register(host.clone()).unwrap();
        assert!(WorkerMetrics::register(host).is_err(), "one worker per registry");
    }
}
