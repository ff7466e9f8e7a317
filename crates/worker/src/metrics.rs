//! The worker's Prometheus metrics, named as upstream's `tikv_worker_*` (names TiKV itself
//! does not register), plus `rcop_worker_*` where we add one.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use prometheus::core::{Collector, Desc};
use prometheus::proto::{LabelPair, Metric, MetricFamily, MetricType};
use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts,
    Registry,
};
use rcop_limiter::LimiterMetrics;
use rcop_sst::{BlockCache, LATENCY_BOUNDS, Latency, MetaCache, SstStore};

use crate::error::Result;

/// The `reason` labels of `rcop_worker_unsplit_requests_total`.
pub(crate) const UNSPLIT_REASONS: [&str; 5] = ["small", "busy", "shape", "one_part", "redo"];

/// The worker's metrics (reference §6.4) plus the limiter's, in one registry. Those marked
/// `{path}` carry a `path` label: `http` for the offload (second way), `grpc` for the
/// delegate path (first way).
///
/// - `tikv_worker_remote_cop_dag_request_counter{path}`: DAG requests received;
/// - `tikv_worker_remote_cop_dag_response_size`: response body bytes, a counter as upstream;
/// - `tikv_worker_remote_checksum_request_counter{path}`,
///   `tikv_worker_remote_checksum_response_size`: the same for checksum requests (tp 105);
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
/// - `rcop_worker_split_requests_total`, `rcop_worker_split_parts_total`: DAG requests run
///   as parts on several compute threads (`cop-parallelism`), and their parts;
///   `rcop_worker_split_parts_skipped_total`: parts of a Limit stopped early (or never
///   started) because the parts before them already held the limit's rows;
///   `rcop_worker_unsplit_requests_total{reason}`: DAG requests that ran on one thread while
///   splitting was on (`small`: under `cop-parallel-min-bytes`; `busy`: fewer than two idle
///   compute threads; `shape`: a DAG, page or range layout the parts cannot answer; `one_part`:
///   the split keys leave one part; `redo`: split, then run whole because the parts could not
///   answer as TiKV would);
/// - `rcop_worker_remote_cache_reads_total{outcome}`: reads offered to the requesting storage
///   node's cache of recent files (`hit`, `miss`, `skipped` for files past the TTL);
/// - `rcop_worker_keyspace_requests_total{keyspace}`,
///   `rcop_worker_keyspace_scanned_keys_total{keyspace}`,
///   `rcop_worker_keyspace_scanned_bytes_total{keyspace}`,
///   `rcop_worker_keyspace_response_bytes_total{keyspace}`: answered requests, the keys and
///   bytes they scanned and the bytes they answered, per keyspace; the first
///   [`MAX_KEYSPACE_LABELS`] keyspaces seen get a series each, later ones share `other`;
/// - read from the caches and the object store at every scrape ([`StorageCollector`]):
///   `rcop_worker_{block,meta}_cache_{hits,misses}_total`, `…_bytes`, `…_capacity_bytes`,
///   `…_entries`; `rcop_worker_object_store_requests_total{op}`, `…_bytes_total{op}`,
///   `…_errors_total{op}` and `…_request_duration_seconds{op}` (`op` = `get`, `put`);
/// - the limiter's wait histograms, waiting gauges and memory gauge ([`LimiterMetrics`]).
#[derive(Debug, Clone)]
pub struct WorkerMetrics {
    registry: Registry,
    limiter: LimiterMetrics,
    dag_requests: IntCounterVec,
    checksum_requests: IntCounterVec,
    checksum_response_bytes: IntCounter,
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
    split_requests: IntCounter,
    split_parts: IntCounter,
    split_parts_skipped: IntCounter,
    unsplit_requests: IntCounterVec,
    ready: IntGauge,
    open_connections: IntGauge,
    processing: IntGauge,
    keyspaces: KeyspaceSeries,
    remote_cache_reads: IntCounterVec,
}

/// Keyspaces that get a series of their own in the `rcop_worker_keyspace_*` metrics; the
/// ones seen after them share the label `other`, so a fleet of tenants cannot grow the
/// exposition without bound.
pub const MAX_KEYSPACE_LABELS: usize = 256;

/// The per-keyspace throughput counters with their bounded label set.
#[derive(Debug, Clone)]
struct KeyspaceSeries {
    requests: IntCounterVec,
    scanned_keys: IntCounterVec,
    scanned_bytes: IntCounterVec,
    response_bytes: IntCounterVec,
    labelled: Arc<Mutex<HashSet<u32>>>,
}

impl KeyspaceSeries {
    fn register(registry: &Registry) -> Result<Self> {
        let vec = |name: &str, help: &str| -> Result<IntCounterVec> {
            let v = IntCounterVec::new(Opts::new(name, help), &["keyspace"])?;
            registry.register(Box::new(v.clone()))?;
            Ok(v)
        };
        Ok(KeyspaceSeries {
            requests: vec("rcop_worker_keyspace_requests_total", "Requests answered, by keyspace")?,
            scanned_keys: vec(
                "rcop_worker_keyspace_scanned_keys_total",
                "Keys the answered requests scanned, by keyspace",
            )?,
            scanned_bytes: vec(
                "rcop_worker_keyspace_scanned_bytes_total",
                "Key and value bytes the answered requests scanned, by keyspace",
            )?,
            response_bytes: vec(
                "rcop_worker_keyspace_response_bytes_total",
                "Response bytes answered, by keyspace",
            )?,
            labelled: Arc::default(),
        })
    }

    fn label(&self, keyspace: u32) -> String {
        let mut seen = self.labelled.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.contains(&keyspace) || seen.len() < MAX_KEYSPACE_LABELS {
            seen.insert(keyspace);
            keyspace.to_string()
        } else {
            "other".to_owned()
        }
    }

    fn record(&self, keyspace: u32, scanned_keys: u64, scanned_bytes: u64, response: u64) {
        let label = self.label(keyspace);
        let l = [label.as_str()];
        self.requests.with_label_values(&l).inc();
        self.scanned_keys.with_label_values(&l).inc_by(scanned_keys);
        self.scanned_bytes.with_label_values(&l).inc_by(scanned_bytes);
        self.response_bytes.with_label_values(&l).inc_by(response);
    }
}

/// Reads the object store's and the block and meta caches' counters at every scrape.
pub struct StorageCollector {
    store: Arc<SstStore>,
    blocks: BlockCache,
    meta: MetaCache,
    descs: Vec<Desc>,
}

impl std::fmt::Debug for StorageCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageCollector").finish_non_exhaustive()
    }
}

const CACHE_SERIES: [(&str, &str); 5] = [
    ("hits_total", "Lookups answered from the cache"),
    ("misses_total", "Lookups that loaded"),
    ("bytes", "Bytes the cache holds"),
    ("capacity_bytes", "The cache's capacity in bytes"),
    ("entries", "Entries the cache holds"),
];

const STORE_SERIES: [(&str, &str); 4] = [
    ("requests_total", "Object store requests"),
    ("bytes_total", "Bytes received (get) or sent (put)"),
    ("errors_total", "Object store requests that failed"),
    ("request_duration_seconds", "Object store request duration, body included"),
];

impl StorageCollector {
    /// A collector over `store` and the reader's caches.
    ///
    /// # Errors
    ///
    /// Never in practice (the metric names are valid).
    pub fn new(store: Arc<SstStore>, blocks: BlockCache, meta: MetaCache) -> Result<Self> {
        let mut descs = Vec::new();
        for cache in ["block", "meta"] {
            for (suffix, help) in CACHE_SERIES {
                descs.push(Desc::new(
                    format!("rcop_worker_{cache}_cache_{suffix}"),
                    format!("{help} ({cache} cache)"),
                    Vec::new(),
                    HashMap::new(),
                )?);
            }
        }
        for (suffix, help) in STORE_SERIES {
            descs.push(Desc::new(
                format!("rcop_worker_object_store_{suffix}"),
                help.to_owned(),
                vec!["op".to_owned()],
                HashMap::new(),
            )?);
        }
        Ok(StorageCollector { store, blocks, meta, descs })
    }
}

fn family(name: String, help: &str, kind: MetricType, metrics: Vec<Metric>) -> MetricFamily {
    let mut f = MetricFamily::default();
    f.set_name(name);
    f.set_help(help.to_owned());
    f.set_field_type(kind);
    f.set_metric(metrics);
    f
}

fn op_label(op: &str) -> Vec<LabelPair> {
    let mut l = LabelPair::default();
    l.set_name("op".to_owned());
    l.set_value(op.to_owned());
    vec![l]
}

fn counter(v: u64, labels: Vec<LabelPair>) -> Metric {
    let mut c = prometheus::proto::Counter::default();
    c.set_value(v as f64);
    let mut m = Metric::default();
    m.set_label(labels);
    m.set_counter(c);
    m
}

fn gauge(v: u64) -> Metric {
    let mut g = prometheus::proto::Gauge::default();
    g.set_value(v as f64);
    let mut m = Metric::default();
    m.set_gauge(g);
    m
}

fn latency(l: &Latency, labels: Vec<LabelPair>) -> Metric {
    let mut h = prometheus::proto::Histogram::default();
    let mut cumulative = 0;
    let mut buckets = Vec::with_capacity(LATENCY_BOUNDS.len());
    for (bound, count) in LATENCY_BOUNDS.iter().zip(l.buckets) {
        cumulative += count;
        let mut b = prometheus::proto::Bucket::default();
        b.set_upper_bound(*bound);
        b.set_cumulative_count(cumulative);
        buckets.push(b);
    }
    h.set_bucket(buckets);
    h.set_sample_count(l.count());
    h.set_sample_sum(l.sum_nanos as f64 / 1e9);
    let mut m = Metric::default();
    m.set_label(labels);
    m.set_histogram(h);
    m
}

impl Collector for StorageCollector {
    fn desc(&self) -> Vec<&Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let mut out = Vec::new();
        for (cache, s) in [("block", self.blocks.stats()), ("meta", self.meta.stats())] {
            let values = [s.hits, s.misses, s.bytes, s.capacity, s.entries];
            for ((suffix, help), v) in CACHE_SERIES.iter().zip(values) {
                let name = format!("rcop_worker_{cache}_cache_{suffix}");
                let help = format!("{help} ({cache} cache)");
                out.push(if suffix.ends_with("_total") {
                    family(name, &help, MetricType::COUNTER, vec![counter(v, Vec::new())])
                } else {
                    family(name, &help, MetricType::GAUGE, vec![gauge(v)])
                });
            }
        }
        let s = self.store.stats();
        let per_op =
            |get: u64, put: u64| vec![counter(get, op_label("get")), counter(put, op_label("put"))];
        let name = |suffix: &str| format!("rcop_worker_object_store_{suffix}");
        let [(_, requests), (_, bytes), (_, errors), (_, duration)] = STORE_SERIES;
        out.push(family(
            name("requests_total"),
            requests,
            MetricType::COUNTER,
            per_op(s.gets, s.puts),
        ));
        out.push(family(
            name("bytes_total"),
            bytes,
            MetricType::COUNTER,
            per_op(s.bytes_read, s.bytes_written),
        ));
        out.push(family(
            name("errors_total"),
            errors,
            MetricType::COUNTER,
            per_op(s.get_errors, s.put_errors),
        ));
        out.push(family(
            name("request_duration_seconds"),
            duration,
            MetricType::HISTOGRAM,
            vec![
                latency(&s.get_latency, op_label("get")),
                latency(&s.put_latency, op_label("put")),
            ],
        ));
        out
    }
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
        let checksum_requests = IntCounterVec::new(
            Opts::new(
                "tikv_worker_remote_checksum_request_counter",
                "Remote checksum requests received",
            ),
            &["path"],
        )?;
        registry.register(Box::new(checksum_requests.clone()))?;
        let checksum_response_bytes = IntCounter::new(
            "tikv_worker_remote_checksum_response_size",
            "Total size of remote checksum responses",
        )?;
        registry.register(Box::new(checksum_response_bytes.clone()))?;
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
        let split_requests = IntCounter::new(
            "rcop_worker_split_requests_total",
            "DAG requests run as parts on several compute threads",
        )?;
        registry.register(Box::new(split_requests.clone()))?;
        let split_parts = IntCounter::new(
            "rcop_worker_split_parts_total",
            "Parts of the DAG requests run on several compute threads",
        )?;
        registry.register(Box::new(split_parts.clone()))?;
        let split_parts_skipped = IntCounter::new(
            "rcop_worker_split_parts_skipped_total",
            "Parts of split Limit requests stopped early: the parts before them held the rows",
        )?;
        registry.register(Box::new(split_parts_skipped.clone()))?;
        let unsplit_requests = IntCounterVec::new(
            Opts::new(
                "rcop_worker_unsplit_requests_total",
                "DAG requests run on one thread while splitting is on, by reason",
            ),
            &["reason"],
        )?;
        for reason in UNSPLIT_REASONS {
            unsplit_requests.with_label_values(&[reason]);
        }
        registry.register(Box::new(unsplit_requests.clone()))?;
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
            checksum_requests.with_label_values(&[path]);
            for h in [&snapshot_duration, &process_duration, &request_duration] {
                h.with_label_values(&[path]);
            }
        }
        let keyspaces = KeyspaceSeries::register(&registry)?;
        let remote_cache_reads = IntCounterVec::new(
            Opts::new(
                "rcop_worker_remote_cache_reads_total",
                "Reads offered to a storage node's remote cache (x-dfs-remote-cache-addr), by outcome",
            ),
            &["outcome"],
        )?;
        for outcome in ["hit", "miss", "skipped"] {
            remote_cache_reads.with_label_values(&[outcome]);
        }
        registry.register(Box::new(remote_cache_reads.clone()))?;
        Ok(WorkerMetrics {
            keyspaces,
            remote_cache_reads,
            registry,
            limiter,
            dag_requests,
            checksum_requests,
            checksum_response_bytes,
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
            split_requests,
            split_parts,
            split_parts_skipped,
            unsplit_requests,
            ready,
            open_connections,
            processing,
        })
    }

    /// Counts a request run as `parts` parts.
    pub(crate) fn count_split(&self, parts: usize) {
        self.split_requests.inc();
        self.split_parts.inc_by(parts as u64);
    }

    /// Counts a part of a split request that stopped early (see
    /// `rcop_exec::PartOutput::skipped`).
    pub(crate) fn count_skipped_part(&self) {
        self.split_parts_skipped.inc();
    }

    /// Counts a request run on one thread while splitting is on (a reason of
    /// [`UNSPLIT_REASONS`]).
    pub(crate) fn count_unsplit(&self, reason: &'static str) {
        self.unsplit_requests.with_label_values(&[reason]).inc();
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

    #[cfg(test)]
    pub(crate) fn dag_requests(&self) -> &IntCounterVec {
        &self.dag_requests
    }

    /// Counts an answered request of `keyspace` that scanned `scanned_keys` keys of
    /// `scanned_bytes` bytes and answered `response` bytes.
    pub(crate) fn record_keyspace(
        &self,
        keyspace: u32,
        scanned_keys: u64,
        scanned_bytes: u64,
        response: u64,
    ) {
        self.keyspaces.record(keyspace, scanned_keys, scanned_bytes, response);
    }

    /// `rcop_worker_remote_cache_reads_total{outcome}`: `hit` (the node answered), `miss`
    /// (it did not: the object store did), `skipped` (a file older than the TTL).
    #[cfg_attr(not(feature = "server"), allow(dead_code))]
    pub(crate) fn remote_cache_reads(&self) -> &IntCounterVec {
        &self.remote_cache_reads
    }

    /// Counts a request of type `tp` received on `path`.
    pub(crate) fn count_request(&self, tp: i64, path: &str) {
        let counter = if tp == rcop_proto::REQ_TYPE_CHECKSUM {
            &self.checksum_requests
        } else {
            &self.dag_requests
        };
        counter.with_label_values(&[path]).inc();
    }

    /// Counts a response body of `bytes` to a request of type `tp`.
    pub(crate) fn observe_response(&self, tp: i64, bytes: usize) {
        if tp == rcop_proto::REQ_TYPE_CHECKSUM {
            self.checksum_response_bytes.inc_by(bytes as u64);
        } else {
            self.response_bytes.inc_by(bytes as u64);
        }
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
    /// request's future is dropped half way, which counts the request as cancelled unless
    /// [`ProcessingGuard::finish`] ran: its client went away, at whatever step it was).
    pub(crate) fn processing_guard(&self) -> ProcessingGuard {
        self.processing.inc();
        ProcessingGuard {
            processing: self.processing.clone(),
            cancelled: self.cancelled.clone(),
            finished: false,
        }
    }

    pub(crate) fn set_ready(&self, ready: bool) {
        self.ready.set(i64::from(ready));
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

/// Decrements the processing gauge when dropped; counts a cancellation when dropped before
/// [`finish`](Self::finish).
#[derive(Debug)]
pub(crate) struct ProcessingGuard {
    processing: IntGauge,
    cancelled: IntCounter,
    finished: bool,
}

impl ProcessingGuard {
    /// The request has its answer: dropping the guard no longer counts a cancellation.
    pub(crate) fn finish(mut self) {
        self.finished = true;
    }
}

impl Drop for ProcessingGuard {
    fn drop(&mut self) {
        self.processing.dec();
        if !self.finished {
            self.cancelled.inc();
        }
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
        m.observe_response(rcop_proto::REQ_TYPE_DAG, 1000);
        m.count_request(rcop_proto::REQ_TYPE_CHECKSUM, "http");
        m.observe_response(rcop_proto::REQ_TYPE_CHECKSUM, 24);
        m.failed_requests().with_label_values(&["decode"]).inc();
        let text = String::from_utf8(m.encode_text()).unwrap();
        for name in [
            "tikv_worker_remote_cop_dag_request_counter{path=\"http\"} 1",
            "tikv_worker_remote_cop_dag_response_size 1000",
            "rcop_worker_response_size_bytes_count 2",
            "tikv_worker_remote_checksum_request_counter{path=\"http\"} 1",
            "tikv_worker_remote_checksum_response_size 24",
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

    #[tokio::test]
    async fn storage_and_caches_are_read_at_every_scrape() {
        let mut cfg = rcop_sst::StoreConfig::default();
        cfg.backend = rcop_sst::Backend::Memory;
        let store = Arc::new(SstStore::from_config(&cfg).unwrap());
        let registry = Registry::new();
        let blocks = BlockCache::new(1 << 20);
        let meta = MetaCache::new(1 << 16);
        let collector = StorageCollector::new(Arc::clone(&store), blocks.clone(), meta).unwrap();
        registry.register(Box::new(collector)).unwrap();
        let text = || {
            let mut out = Vec::new();
            prometheus::TextEncoder::new().encode(&registry.gather(), &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let before = text();
        for line in [
            "rcop_worker_block_cache_hits_total 0",
            "rcop_worker_block_cache_capacity_bytes 1048576",
            "rcop_worker_meta_cache_capacity_bytes 65536",
            "rcop_worker_object_store_requests_total{op=\"get\"} 0",
            "rcop_worker_object_store_request_duration_seconds_count{op=\"put\"} 0",
        ] {
            assert!(before.contains(line), "{line} missing from\n{before}");
        }
        store.put(rcop_sst::FileId(7), bytes::Bytes::from_static(b"abcdef")).await.unwrap();
        store.get_range(rcop_sst::FileId(7), 1..3).await.unwrap();
        assert!(store.get_range(rcop_sst::FileId(8), 0..1).await.is_err());
        let key = rcop_sst::BlockKey { file_id: rcop_sst::FileId(1), offset: 0 };
        assert!(blocks.get(&key).is_none());
        let after = text();
        for line in [
            "rcop_worker_block_cache_misses_total 1",
            "rcop_worker_object_store_requests_total{op=\"get\"} 2",
            "rcop_worker_object_store_requests_total{op=\"put\"} 1",
            "rcop_worker_object_store_bytes_total{op=\"get\"} 2",
            "rcop_worker_object_store_bytes_total{op=\"put\"} 6",
            "rcop_worker_object_store_errors_total{op=\"get\"} 1",
            "rcop_worker_object_store_request_duration_seconds_count{op=\"get\"} 2",
            "rcop_worker_object_store_request_duration_seconds_bucket{op=\"get\",le=\"+Inf\"} 2",
        ] {
            assert!(after.contains(line), "{line} missing from\n{after}");
        }
    }

    #[test]
    fn keyspace_labels_are_bounded() {
        let m = WorkerMetrics::new().unwrap();
        for ks in 0..(MAX_KEYSPACE_LABELS as u32 + 10) {
            m.record_keyspace(ks, 10, 100, 5);
        }
        // A keyspace seen before the bound keeps its own series.
        m.record_keyspace(3, 1, 1, 1);
        let text = String::from_utf8(m.encode_text()).unwrap();
        assert!(text.contains("rcop_worker_keyspace_requests_total{keyspace=\"3\"} 2"), "{text}");
        assert!(text.contains("rcop_worker_keyspace_requests_total{keyspace=\"other\"} 10"));
        assert!(text.contains("rcop_worker_keyspace_scanned_bytes_total{keyspace=\"other\"} 1000"));
        let series =
            text.lines().filter(|l| l.starts_with("rcop_worker_keyspace_requests_total{")).count();
        assert_eq!(series, MAX_KEYSPACE_LABELS + 1);
    }

    #[test]
    fn a_request_dropped_before_its_answer_counts_as_cancelled() {
        let m = WorkerMetrics::new().unwrap();
        m.processing_guard().finish();
        let g = m.processing_guard();
        assert!(
            String::from_utf8(m.encode_text())
                .unwrap()
                .contains("tikv_worker_remote_cop_processing_requests_counter 1")
        );
        drop(g);
        let text = String::from_utf8(m.encode_text()).unwrap();
        assert!(text.contains("rcop_worker_cancelled_requests_total 1"), "{text}");
        assert!(text.contains("tikv_worker_remote_cop_processing_requests_counter 0"));
    }
}
