//! Storage-node metrics of the offload path, registered on a caller's registry.
//!
//! The two histograms/counters of the cloud engine's offload keep its names
//! (`tikv_coprocessor_remote_*`, which TiKV itself does not register); every other name is
//! prefixed `rcop_offload_`, so none collides with a metric TiKV registers — in particular
//! TiKV's own `tikv_coprocessor_request_error{reason}`.

use prometheus::{Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts, Registry};

/// The offload metrics.
#[derive(Clone, Debug)]
pub struct Metrics {
    /// `tikv_coprocessor_remote_dag_estimate_blocks`: the estimate of offloaded requests.
    pub estimate_blocks: Histogram,
    /// `tikv_coprocessor_remote_processed_size`: `processed_versions_size` reported by
    /// workers.
    pub remote_processed_size: IntCounter,
    /// `rcop_offload_request_error_total{reason}`: remote attempts and requests that failed.
    pub request_error: IntCounterVec,
    /// `rcop_offload_requests_total{path="local"|"remote"}`: where requests ran.
    pub requests: IntCounterVec,
    /// `rcop_offload_local_total{reason}`: requests kept on the storage node, by the
    /// decision's reason (`unsupported_scalar_func`, `below_threshold`, …) or the remote
    /// failure that sent them back (`fallback_remote_unsupported`, …).
    pub local: IntCounterVec,
    /// `rcop_offload_resumed_pages_total`: pages fetched after the first to answer a
    /// non-paging request whole.
    pub resumed_pages: IntCounter,
    /// `rcop_offload_workers`: workers in the current set (each address of a discovered DNS
    /// name counts once).
    pub workers: IntGauge,
    /// `rcop_offload_stats_workers`: the same for `remote-worker-addr` (analyze, checksum).
    pub stats_workers: IntGauge,
    /// `rcop_offload_worker_resolve_errors_total{reason="error"|"timeout"|"empty"}`: worker
    /// names whose answer was not used in a discovery round (their last addresses stay).
    pub worker_resolve_errors: IntCounterVec,
}

/// Every metric name [`Metrics::register`] registers.
pub const METRIC_NAMES: &[&str] = &[
    "tikv_coprocessor_remote_dag_estimate_blocks",
    "tikv_coprocessor_remote_processed_size",
    "rcop_offload_request_error_total",
    "rcop_offload_requests_total",
    "rcop_offload_local_total",
    "rcop_offload_resumed_pages_total",
    "rcop_offload_workers",
    "rcop_offload_stats_workers",
    "rcop_offload_worker_resolve_errors_total",
];

impl Metrics {
    /// These metrics for the client of `remote-worker-addr`: its worker count goes to
    /// `rcop_offload_stats_workers`; everything else is shared.
    pub(crate) fn for_stats_workers(&self) -> Metrics {
        Metrics { workers: self.stats_workers.clone(), ..self.clone() }
    }

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
            Opts::new("rcop_offload_request_error_total", "Offload request errors by reason"),
            &["reason"],
        )?;
        let requests = IntCounterVec::new(
            Opts::new("rcop_offload_requests_total", "Coprocessor requests by execution path"),
            &["path"],
        )?;
        let local = IntCounterVec::new(
            Opts::new("rcop_offload_local_total", "Requests kept on the storage node, by reason"),
            &["reason"],
        )?;
        let resumed_pages = IntCounter::new(
            "rcop_offload_resumed_pages_total",
            "Pages fetched after the first to answer non-paging requests whole",
        )?;
        let workers = IntGauge::new("rcop_offload_workers", "Workers in the current set")?;
        let stats_workers = IntGauge::new(
            "rcop_offload_stats_workers",
            "Workers of remote-worker-addr (analyze and checksum) in the current set",
        )?;
        let worker_resolve_errors = IntCounterVec::new(
            Opts::new(
                "rcop_offload_worker_resolve_errors_total",
                "Worker names whose DNS answer was not used, by reason",
            ),
            &["reason"],
        )?;
        // Every reason from the first scrape, so a rate over it needs no first failure.
        for reason in ["error", "timeout", "empty"] {
            worker_resolve_errors.with_label_values(&[reason]);
        }
        registry.register(Box::new(estimate_blocks.clone()))?;
        registry.register(Box::new(remote_processed_size.clone()))?;
        registry.register(Box::new(request_error.clone()))?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(local.clone()))?;
        registry.register(Box::new(resumed_pages.clone()))?;
        registry.register(Box::new(workers.clone()))?;
        registry.register(Box::new(stats_workers.clone()))?;
        registry.register(Box::new(worker_resolve_errors.clone()))?;
        Ok(Metrics {
            estimate_blocks,
            remote_processed_size,
            request_error,
            requests,
            local,
            resumed_pages,
            workers,
            stats_workers,
            worker_resolve_errors,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_listed_and_unique() {
        let registry = Registry::new();
        let m = Metrics::register(&registry).unwrap_or_else(|e| panic!("{e}"));
        m.request_error.with_label_values(&["x"]).inc();
        m.requests.with_label_values(&["local"]).inc();
        m.local.with_label_values(&["limit"]).inc();
        let mut names: Vec<String> =
            registry.gather().iter().map(|f| f.name().to_owned()).collect();
        names.sort();
        let mut want: Vec<String> = METRIC_NAMES.iter().map(|s| (*s).to_owned()).collect();
        want.sort();
        assert_eq!(names, want);
        assert!(Metrics::register(&registry).is_err(), "a second registration is refused");
    }
}
