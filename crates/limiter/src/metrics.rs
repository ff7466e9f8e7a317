//! Prometheus metrics of the limiters, registered in a registry the service passes in.

use prometheus::{
    HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
};

use crate::error::{BusyReason, MEMORY_LIMIT_EXCEEDED_LABEL, Result};

/// `type` label of the cop-limiter's memory-pressure wait.
pub const WAIT_TYPE_COP_LIMITER: &str = "cop_limiter";
/// `type` label of the permit wait.
pub const WAIT_TYPE_PERMIT: &str = "permit";

/// The limiter's metrics, named as upstream's worker exports them.
///
/// - `tikv_worker_limiter_request_wait_duration_seconds{type}`: time spent waiting, by
///   [`WAIT_TYPE_COP_LIMITER`] / [`WAIT_TYPE_PERMIT`]; observed only for requests that waited;
/// - `tikv_worker_limiter_waiting_requests_counter{type}` (a gauge, as upstream): requests
///   waiting now;
/// - `tikv_worker_memory_limiter_current_used`: bytes reserved through the memory limiter;
/// - `tikv_worker_remote_cop_failed_requests_counter{type}`: rejections by reason
///   (`memory_pressure`, `queue_full`, `wait_timeout`, `memory_limit_exceeded`).
///
/// The service counts its own failures (decode errors, …) in the same counter through
/// [`LimiterMetrics::failed_requests`] instead of registering the name a second time.
/// Cloning shares the underlying metrics.
#[derive(Debug, Clone)]
pub struct LimiterMetrics {
    wait_duration: HistogramVec,
    waiting: IntGaugeVec,
    memory_used: IntGauge,
    failed_requests: IntCounterVec,
}

impl LimiterMetrics {
    /// Creates the metrics and registers them in `registry`.
    pub fn register(registry: &Registry) -> Result<Self> {
        let metrics = Self::unregistered()?;
        registry.register(Box::new(metrics.wait_duration.clone()))?;
        registry.register(Box::new(metrics.waiting.clone()))?;
        registry.register(Box::new(metrics.memory_used.clone()))?;
        registry.register(Box::new(metrics.failed_requests.clone()))?;
        Ok(metrics)
    }

    /// Creates the metrics without registering them anywhere.
    pub fn unregistered() -> Result<Self> {
        // 1 ms doubling to ~32 s: covers jittered waits of 100 ms..3 s and permit waits up to
        // the 20 s default request timeout.
        let buckets = prometheus::exponential_buckets(0.001, 2.0, 16)?;
        let metrics = LimiterMetrics {
            wait_duration: HistogramVec::new(
                HistogramOpts::new(
                    "tikv_worker_limiter_request_wait_duration_seconds",
                    "Time requests waited in the worker limiters",
                )
                .buckets(buckets),
                &["type"],
            )?,
            waiting: IntGaugeVec::new(
                Opts::new(
                    "tikv_worker_limiter_waiting_requests_counter",
                    "Requests waiting in the worker limiters now",
                ),
                &["type"],
            )?,
            memory_used: IntGauge::new(
                "tikv_worker_memory_limiter_current_used",
                "Bytes reserved through the worker memory limiter",
            )?,
            failed_requests: IntCounterVec::new(
                Opts::new(
                    "tikv_worker_remote_cop_failed_requests_counter",
                    "Remote coprocessor requests that failed, by reason",
                ),
                &["type"],
            )?,
        };
        // Every series exists from the start, so a dashboard (and a scrape before the first
        // wait or rejection) sees every name.
        for t in [WAIT_TYPE_COP_LIMITER, WAIT_TYPE_PERMIT] {
            metrics.wait_duration.with_label_values(&[t]);
            metrics.waiting.with_label_values(&[t]);
        }
        let busy =
            [BusyReason::MemoryPressure, BusyReason::QueueFull, BusyReason::PermitWaitTimeout];
        for reason in busy.map(BusyReason::label).into_iter().chain([MEMORY_LIMIT_EXCEEDED_LABEL]) {
            metrics.failed_requests.with_label_values(&[reason]);
        }
        Ok(metrics)
    }

    /// `tikv_worker_limiter_request_wait_duration_seconds{type}`.
    pub fn wait_duration(&self) -> &HistogramVec {
        &self.wait_duration
    }

    /// `tikv_worker_limiter_waiting_requests_counter{type}`.
    pub fn waiting(&self) -> &IntGaugeVec {
        &self.waiting
    }

    /// `tikv_worker_memory_limiter_current_used`.
    pub fn memory_used(&self) -> &IntGauge {
        &self.memory_used
    }

    /// `tikv_worker_remote_cop_failed_requests_counter{type}`.
    pub fn failed_requests(&self) -> &IntCounterVec {
        &self.failed_requests
    }

    pub(crate) fn waiting_guard(&self, wait_type: &'static str) -> WaitingGuard {
        let gauge = self.waiting.with_label_values(&[wait_type]);
        gauge.inc();
        WaitingGuard { gauge }
    }

    pub(crate) fn observe_wait(&self, wait_type: &'static str, seconds: f64) {
        self.wait_duration.with_label_values(&[wait_type]).observe(seconds);
    }

    pub(crate) fn reject(&self, label: &'static str) {
        self.failed_requests.with_label_values(&[label]).inc();
    }
}

/// Decrements the waiting gauge on drop, so cancelled waits are not counted forever.
#[derive(Debug)]
pub(crate) struct WaitingGuard {
    gauge: IntGauge,
}

impl Drop for WaitingGuard {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_the_upstream_names_once() {
        let registry = Registry::new();
        let m = LimiterMetrics::register(&registry).unwrap();
        m.reject("queue_full");
        m.observe_wait(WAIT_TYPE_PERMIT, 0.5);
        {
            let _g = m.waiting_guard(WAIT_TYPE_COP_LIMITER);
            assert_eq!(m.waiting().with_label_values(&[WAIT_TYPE_COP_LIMITER]).get(), 1);
        }
        assert_eq!(m.waiting().with_label_values(&[WAIT_TYPE_COP_LIMITER]).get(), 0);
        let mut names: Vec<_> = registry.gather().iter().map(|f| f.name().to_owned()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "tikv_worker_limiter_request_wait_duration_seconds",
                "tikv_worker_limiter_waiting_requests_counter",
                "tikv_worker_memory_limiter_current_used",
                "tikv_worker_remote_cop_failed_requests_counter",
            ]
        );
        assert!(LimiterMetrics::register(&registry).is_err(), "duplicate registration");
    }
}
