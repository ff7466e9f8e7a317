//! Storage-node metrics of the offload path, registered on a caller's registry under the
//! upstream names (reference §6.4).

use prometheus::{Histogram, HistogramOpts, IntCounter, IntCounterVec, Opts, Registry};

/// The offload metrics.
#[derive(Clone, Debug)]
pub struct Metrics {
    /// `tikv_coprocessor_remote_dag_estimate_blocks`: the estimate of offloaded requests.
    pub estimate_blocks: Histogram,
    /// `tikv_coprocessor_remote_processed_size`: `processed_versions_size` reported by
    /// workers.
    pub remote_processed_size: IntCounter,
    /// `tikv_coprocessor_request_error{reason}`: remote attempts and requests that failed.
    pub request_error: IntCounterVec,
    /// `rcop_storage_node_cop_requests_total{path="local"|"remote"}`: where requests ran.
    pub requests: IntCounterVec,
}

impl Metrics {
    /// Creates the metrics and registers them on `registry`.
    ///
    /// # Errors
    ///
    /// `prometheus::Error::AlreadyReg` when `registry` already holds them.
    pub fn register(registry: &Registry) -> prometheus::Result<Metrics> {
        let buckets = prometheus::exponential_buckets(1.0, 2.0, 20)?;
        let estimate_blocks = Histogram::with_opts(
            HistogramOpts::new(
                "tikv_coprocessor_remote_dag_estimate_blocks",
                "Estimated block bytes of offloaded DAG requests",
            )
            .buckets(buckets),
        )?;
        let remote_processed_size = IntCounter::new(
            "tikv_coprocessor_remote_processed_size",
            "Bytes processed by remote coprocessor workers",
        )?;
        let request_error = IntCounterVec::new(
            Opts::new("tikv_coprocessor_request_error", "Coprocessor request errors by reason"),
            &["reason"],
        )?;
        let requests = IntCounterVec::new(
            Opts::new(
                "rcop_storage_node_cop_requests_total",
                "Coprocessor requests by execution path",
            ),
            &["path"],
        )?;
        registry.register(Box::new(estimate_blocks.clone()))?;
        registry.register(Box::new(remote_processed_size.clone()))?;
        registry.register(Box::new(request_error.clone()))?;
        registry.register(Box::new(requests.clone()))?;
        Ok(Metrics { estimate_blocks, remote_processed_size, request_error, requests })
    }
}
