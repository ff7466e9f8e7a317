//! The worker's configuration file (TOML, kebab-case keys), as upstream's `cloud_worker::Config`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use rcop_limiter::{LimiterConfig, MemoryThreshold, ReadableDuration, ReadableSize};
use rcop_sst::{Backend, StoreConfig};
use serde::{Deserialize, Serialize};

use crate::cache::{IaSection, LocalGcSection};
use crate::error::{Error, Result};

/// Default listen address: upstream's port, on loopback only, so a worker started without a
/// config serves no other host until its operator says so (with `[security]` set).
pub const DEFAULT_ADDR: &str = "127.0.0.1:19000";
/// Default `cop-max-resp-size`: 32 MiB.
pub const DEFAULT_MAX_RESP_SIZE: u64 = 32 << 20;
/// Default `store-check-interval`: the object store is listed every 10 s for `/readyz`.
pub const DEFAULT_STORE_CHECK_INTERVAL: Duration = Duration::from_secs(10);
/// Default `cop-remote-dfs-cache-ttl`: 10 min, upstream's. Files younger than this (by the
/// physical time of their TSO id) are asked of the storage node named by the request's
/// `x-dfs-remote-cache-addr` before the object store.
pub const DEFAULT_REMOTE_DFS_CACHE_TTL: Duration = Duration::from_secs(600);
/// Default `max-execution-duration`: 60 s, TiKV's `end-point-request-max-handle-duration`.
pub const DEFAULT_MAX_EXECUTION_DURATION: Duration = Duration::from_secs(60);
/// Default `max-request-size`: 256 MiB. Upstream has no cap; the whole body is read into
/// memory. A body is the shard's memtable rows over the request ranges plus a change set of
/// a few KiB: a storage node flushes its memtables long before they reach this, and the
/// bytes are reserved from the memory capacity before they are read.
pub const DEFAULT_MAX_REQUEST_SIZE: u64 = 256 << 20;
/// Default `cop-block-cache-size`: 20% of the memory limit, as upstream.
pub const DEFAULT_BLOCK_CACHE_PERCENT: f64 = 20.0;
/// Default `max-connections`: open HTTP connections at once (storage nodes pool theirs, so
/// a worker needs a few per node; more wait in the listen backlog).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Default `header-read-timeout`: a request's headers (or, on an idle keep-alive connection,
/// the next request's) must arrive within this. Longer than a storage node's pool idle
/// timeout (30 s), so nodes drop idle connections first.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Default `body-read-timeout`: a request body must arrive whole within this (a 1 GiB body
/// takes ~9 s at 1 Gbit/s).
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Default `cop-parallel-min-bytes`: 1 MiB. A request whose ranges cover fewer bytes (SST
/// blocks plus memtable rows) runs on one thread. The sweep in
/// `benches/benches/request_path.rs` (`split_size/*`: Q6 over the first 1 k to 600 k lineitem
/// rows at SF 0.1, one worker whole and one in two parts, same run) found two parts 6 %
/// slower at 82 KiB of blocks, 1.2× faster at 287 KiB and 1.1–1.6× from 1.1 MiB up (Q6
/// took 2.6 ms whole over 1.1 MiB): 1 MiB splits where the gain is clear and keeps
/// requests of a few milliseconds, and their partial results (one row per group per part,
/// which TiDB merges as it merges regions), on one thread. Raise it to favour throughput
/// of many concurrent requests over one request's latency.
pub const DEFAULT_COP_PARALLEL_MIN_BYTES: u64 = 1 << 20;
/// Bounds of `thread-pool-size-factor` (upstream clamps to `1..=8`).
pub const THREAD_POOL_SIZE_FACTOR_RANGE: (f64, f64) = (1.0, 8.0);

/// The worker's configuration.
///
/// ```toml
/// addr = "127.0.0.1:0"
/// cop-block-cache-size = "1GiB"
/// cop-max-resp-size = "32MiB"
/// memory-upper-threshold = "80%"
/// thread-pool-size-factor = 1.0
/// # One heavy request on up to this many compute threads (0: all of them; 1: off).
/// cop-parallelism = 0
/// cop-parallel-min-bytes = "1MiB"
/// # The worker's own directory: the disk cache of SST segments lives under it (off if empty).
/// data-dir = "/var/lib/rcop"
///
/// [dfs]
/// backend = "local"
/// root = "/var/lib/rcop/sst"
///
/// [cop-limiter]
/// high-mem-ratio = 0.8
///
/// [worker-limiter]
/// global-concurrency-factor = 6.0
///
/// [ia]
/// mem-cap = "256MiB"
/// disk-cap = "50%"
/// ```
///
/// Non-exhaustive: outside this crate, start from [`WorkerConfig::default`] (or
/// [`WorkerConfig::from_toml`]) and adjust with the `with_*` setters or the public fields.
///
/// ```
/// use std::net::SocketAddr;
/// use rcop_worker::{DfsConfig, WorkerConfig};
///
/// let config = WorkerConfig::default()
///     .with_addr(SocketAddr::from(([127, 0, 0, 1], 0)))
///     .with_dfs(DfsConfig::local("/var/lib/rcop/sst").with_prefix("cluster-1"));
/// assert_eq!(config.dfs.prefix, "cluster-1");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct WorkerConfig {
    /// Address to listen on; port 0 picks a free port.
    pub addr: SocketAddr,
    /// Object storage holding the SST and L0 files.
    pub dfs: DfsConfig,
    /// Capacity of the decompressed-block cache: a size or a percentage of the memory limit.
    pub cop_block_cache_size: MemoryThreshold,
    /// Encoded result bytes after which a page ends (the response then carries `range`).
    pub cop_max_resp_size: ReadableSize,
    /// Largest request body accepted; larger bodies get 413.
    pub max_request_size: ReadableSize,
    /// Compute threads = cores × this factor, clamped to `1.0..=8.0`.
    pub thread_pool_size_factor: f64,
    /// Most compute threads one DAG request runs on: its ranges are cut into this many parts
    /// of about equal bytes, each a job of the compute pool, and the parts' answers combined
    /// as TiKV answers the whole. 0 (the default) = the number of compute threads; 1 runs
    /// every request on one thread. A request splits only into threads that are idle when
    /// it starts, so requests in a busy worker keep one thread each.
    pub cop_parallelism: usize,
    /// Requests whose ranges cover fewer bytes than this (SST data blocks and memtable
    /// rows) run on one thread.
    pub cop_parallel_min_bytes: ReadableSize,
    /// Open HTTP connections at most; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// Time a client has to send a request's headers (also closes idle keep-alive
    /// connections).
    pub header_read_timeout: ReadableDuration,
    /// Time a client has to send a request's whole body (408 after it).
    pub body_read_timeout: ReadableDuration,
    /// Longest a request may run, whatever its `max_execution_duration_ms` asks (TiKV's
    /// `end-point-request-max-handle-duration`).
    pub max_execution_duration: ReadableDuration,
    /// How often a serving worker lists its object store to report readiness (`/readyz`).
    pub store_check_interval: ReadableDuration,
    /// Files younger than this are read from the storage node that sent the request (its
    /// `x-dfs-remote-cache-addr`, `GET /dfs/{id}`) before the object store; `"0s"` never
    /// asks the node. The node's bytes pass the same checksums; any failure falls back to
    /// the object store.
    pub cop_remote_dfs_cache_ttl: ReadableDuration,
    /// `[cop-limiter]`, `[worker-limiter]` and `memory-upper-threshold`.
    #[serde(flatten)]
    pub limiter: LimiterConfig,
    /// gRPC listen address of the delegate path (`tikvpb.Tikv/Coprocessor` for TiDB),
    /// upstream's key; empty (the default) serves no gRPC.
    pub cop_addr: String,
    /// `[delegate]`: how the delegate path finds and calls storage nodes.
    pub delegate: crate::delegate::DelegateConfig,
    /// The worker's local directory; the disk cache of SST segments lives in
    /// `{data-dir}/ia`. Empty (the default) runs without a disk cache.
    pub data_dir: PathBuf,
    /// `[ia]`: the disk cache (used when `data-dir` is set).
    pub ia: IaSection,
    /// `[local-gc]`: the disk cache's collector of leftover files.
    pub local_gc: LocalGcSection,
    /// `[security]`: TLS of the HTTP endpoint and of both gRPC links (TiDB → worker, worker
    /// → storage node); off while its paths are empty.
    pub security: rcop_tls::SecurityConfig,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 19000)),
            dfs: DfsConfig::default(),
            cop_block_cache_size: MemoryThreshold::Percent(DEFAULT_BLOCK_CACHE_PERCENT),
            cop_max_resp_size: ReadableSize(DEFAULT_MAX_RESP_SIZE),
            max_request_size: ReadableSize(DEFAULT_MAX_REQUEST_SIZE),
            thread_pool_size_factor: 1.0,
            cop_parallelism: 0,
            cop_parallel_min_bytes: ReadableSize(DEFAULT_COP_PARALLEL_MIN_BYTES),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: ReadableDuration(DEFAULT_HEADER_READ_TIMEOUT),
            body_read_timeout: ReadableDuration(DEFAULT_BODY_READ_TIMEOUT),
            max_execution_duration: ReadableDuration(DEFAULT_MAX_EXECUTION_DURATION),
            store_check_interval: ReadableDuration(DEFAULT_STORE_CHECK_INTERVAL),
            cop_remote_dfs_cache_ttl: ReadableDuration(DEFAULT_REMOTE_DFS_CACHE_TTL),
            limiter: LimiterConfig::default(),
            cop_addr: String::new(),
            delegate: crate::delegate::DelegateConfig::default(),
            data_dir: PathBuf::new(),
            ia: IaSection::default(),
            local_gc: LocalGcSection::default(),
            security: rcop_tls::SecurityConfig::default(),
        }
    }
}

impl WorkerConfig {
    /// Sets [`addr`](Self::addr).
    #[must_use]
    pub fn with_addr(mut self, addr: SocketAddr) -> Self {
        self.addr = addr;
        self
    }

    /// Sets [`dfs`](Self::dfs).
    #[must_use]
    pub fn with_dfs(mut self, dfs: DfsConfig) -> Self {
        self.dfs = dfs;
        self
    }

    /// Sets [`cop_block_cache_size`](Self::cop_block_cache_size).
    #[must_use]
    pub fn with_cop_block_cache_size(mut self, size: impl Into<MemoryThreshold>) -> Self {
        self.cop_block_cache_size = size.into();
        self
    }

    /// Sets [`cop_max_resp_size`](Self::cop_max_resp_size).
    #[must_use]
    pub fn with_cop_max_resp_size(mut self, size: ReadableSize) -> Self {
        self.cop_max_resp_size = size;
        self
    }

    /// Sets [`max_request_size`](Self::max_request_size).
    #[must_use]
    pub fn with_max_request_size(mut self, size: ReadableSize) -> Self {
        self.max_request_size = size;
        self
    }

    /// Sets [`thread_pool_size_factor`](Self::thread_pool_size_factor).
    #[must_use]
    pub fn with_thread_pool_size_factor(mut self, factor: f64) -> Self {
        self.thread_pool_size_factor = factor;
        self
    }

    /// Sets [`cop_parallelism`](Self::cop_parallelism).
    #[must_use]
    pub fn with_cop_parallelism(mut self, parts: usize) -> Self {
        self.cop_parallelism = parts;
        self
    }

    /// Sets [`cop_parallel_min_bytes`](Self::cop_parallel_min_bytes).
    #[must_use]
    pub fn with_cop_parallel_min_bytes(mut self, bytes: ReadableSize) -> Self {
        self.cop_parallel_min_bytes = bytes;
        self
    }

    /// Sets [`limiter`](Self::limiter).
    #[must_use]
    pub fn with_limiter(mut self, limiter: LimiterConfig) -> Self {
        self.limiter = limiter;
        self
    }

    /// Sets [`data_dir`](Self::data_dir), which turns the disk cache on.
    #[must_use]
    pub fn with_data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = dir.into();
        self
    }

    /// Sets [`ia`](Self::ia).
    #[must_use]
    pub fn with_ia(mut self, ia: IaSection) -> Self {
        self.ia = ia;
        self
    }

    /// Sets [`security`](Self::security).
    #[must_use]
    pub fn with_security(mut self, security: rcop_tls::SecurityConfig) -> Self {
        self.security = security;
        self
    }

    /// True when the disk cache runs: `data-dir` is set and `[ia] mem-cap` and `disk-cap`
    /// are above zero (as upstream).
    pub fn disk_cache_enabled(&self) -> bool {
        !self.data_dir.as_os_str().is_empty() && self.ia.enabled()
    }

    /// Parses a TOML document; unknown keys are errors.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a syntax error, an unknown key or a value out of range.
    pub fn from_toml(text: &str) -> Result<Self> {
        let cfg: WorkerConfig =
            toml::from_str(text).map_err(|e| Error::config("(file)", e.to_string()))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Checks every value; the error names the offending key.
    ///
    /// # Errors
    ///
    /// [`Error::Config`].
    pub fn validate(&self) -> Result<()> {
        self.limiter.validate().map_err(|e| Error::config("limiter", e.to_string()))?;
        self.cop_block_cache_size
            .validate("cop-block-cache-size")
            .or_else(|e| match self.cop_block_cache_size {
                // 0 disables the cache, as upstream.
                MemoryThreshold::Absolute(ReadableSize(0)) => Ok(()),
                _ => Err(e),
            })
            .map_err(|e| Error::config("cop-block-cache-size", e.to_string()))?;
        if self.cop_max_resp_size.0 == 0 {
            return Err(Error::config("cop-max-resp-size", "must be greater than 0"));
        }
        if self.max_request_size.0 == 0 {
            return Err(Error::config("max-request-size", "must be greater than 0"));
        }
        if self.max_connections == 0 {
            return Err(Error::config("max-connections", "must be greater than 0"));
        }
        if self.header_read_timeout.is_zero() {
            return Err(Error::config("header-read-timeout", "must be greater than 0"));
        }
        if self.body_read_timeout.is_zero() {
            return Err(Error::config("body-read-timeout", "must be greater than 0"));
        }
        if self.store_check_interval.is_zero() {
            return Err(Error::config("store-check-interval", "must be greater than 0"));
        }
        if self.max_execution_duration.is_zero() {
            return Err(Error::config("max-execution-duration", "must be greater than 0"));
        }
        let f = self.thread_pool_size_factor;
        if !f.is_finite() || f <= 0.0 {
            return Err(Error::config(
                "thread-pool-size-factor",
                format!("{f} must be a positive number"),
            ));
        }
        self.cop_addr()?;
        self.delegate.validate()?;
        self.ia.validate()?;
        self.local_gc.validate()?;
        self.security.validate().map_err(|e| match e {
            rcop_tls::Error::Config { key, reason } => Error::config(security_key(key), reason),
            other => Error::Tls(other),
        })?;
        self.dfs.validate()
    }

    /// The parsed [`cop_addr`](Self::cop_addr): `None` when empty (no gRPC listener).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when it is not a socket address.
    pub fn cop_addr(&self) -> Result<Option<SocketAddr>> {
        match self.cop_addr.trim() {
            "" => Ok(None),
            a => a
                .parse()
                .map(Some)
                .map_err(|e| Error::config("cop-addr", format!("{a:?} is not HOST:PORT: {e}"))),
        }
    }

    /// Compute threads for a machine with `cores` cores: `cores × factor`, the factor clamped
    /// to `1.0..=8.0`, at least one thread.
    pub fn compute_threads(&self, cores: usize) -> usize {
        let (lo, hi) = THREAD_POOL_SIZE_FACTOR_RANGE;
        let factor = self.thread_pool_size_factor.clamp(lo, hi);
        // `as` saturates; the factor is finite and the product small.
        ((cores.max(1) as f64 * factor).round() as usize).max(1)
    }
}

/// `security.{key}` for the keys `rcop-tls` names.
fn security_key(key: &str) -> &'static str {
    match key {
        "ca-path" => "security.ca-path",
        "cert-allowed-cn" => "security.cert-allowed-cn",
        "cert-reload-interval" => "security.cert-reload-interval",
        _ => "security",
    }
}

/// Object-storage backend named in `[dfs] backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DfsBackend {
    /// A directory on the local filesystem (`root`).
    #[default]
    Local,
    /// S3 or an S3-compatible endpoint.
    S3,
}

/// `[dfs]`: where the SST and L0 files live (upstream's DFS section).
///
/// Credentials are never printed by `Debug`.
///
/// Non-exhaustive: outside this crate, start from [`DfsConfig::local`], [`DfsConfig::s3`] or
/// [`DfsConfig::default`] and adjust with the `with_*` setters or the public fields.
///
/// ```
/// use rcop_worker::DfsConfig;
///
/// let dfs = DfsConfig::s3("rcop")
///     .with_s3_endpoint("http://127.0.0.1:9000")
///     .with_credentials("access", "secret")
///     .with_prefix("cluster-1");
/// assert!(dfs.validate().is_ok());
/// ```
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct DfsConfig {
    /// `local` or `s3`.
    pub backend: DfsBackend,
    /// Root directory of the local backend.
    pub root: PathBuf,
    /// Key prefix of every object (`{prefix}/{xx}/{id:016x}.sst`).
    pub prefix: String,
    /// S3 endpoint URL; empty for AWS. `http://` endpoints are allowed.
    pub s3_endpoint: String,
    /// S3 bucket.
    pub bucket: String,
    /// S3 region.
    pub region: String,
    /// S3 access key id; empty to use the environment.
    pub key_id: String,
    /// S3 secret access key.
    pub secret_key: String,
}

impl std::fmt::Debug for DfsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DfsConfig")
            .field("backend", &self.backend)
            .field("root", &self.root)
            .field("prefix", &self.prefix)
            .field("s3_endpoint", &self.s3_endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("key_id", &if self.key_id.is_empty() { "" } else { "<set>" })
            .finish_non_exhaustive()
    }
}

impl Default for DfsConfig {
    fn default() -> Self {
        DfsConfig {
            backend: DfsBackend::Local,
            root: PathBuf::from(rcop_sst::DEFAULT_LOCAL_ROOT),
            prefix: String::new(),
            s3_endpoint: String::new(),
            bucket: String::new(),
            region: "us-east-1".into(),
            key_id: String::new(),
            secret_key: String::new(),
        }
    }
}

impl DfsConfig {
    /// A local-directory store rooted at `root`.
    pub fn local(root: impl Into<PathBuf>) -> Self {
        DfsConfig { backend: DfsBackend::Local, root: root.into(), ..DfsConfig::default() }
    }

    /// An S3 store in `bucket` (AWS unless [`with_s3_endpoint`](Self::with_s3_endpoint) names
    /// another endpoint; credentials from the environment unless
    /// [`with_credentials`](Self::with_credentials) sets them).
    pub fn s3(bucket: impl Into<String>) -> Self {
        DfsConfig { backend: DfsBackend::S3, bucket: bucket.into(), ..DfsConfig::default() }
    }

    /// Sets [`prefix`](Self::prefix).
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Sets [`s3_endpoint`](Self::s3_endpoint).
    #[must_use]
    pub fn with_s3_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.s3_endpoint = endpoint.into();
        self
    }

    /// Sets [`region`](Self::region).
    #[must_use]
    pub fn with_region(mut self, region: impl Into<String>) -> Self {
        self.region = region.into();
        self
    }

    /// Sets [`key_id`](Self::key_id) and [`secret_key`](Self::secret_key).
    #[must_use]
    pub fn with_credentials(
        mut self,
        key_id: impl Into<String>,
        secret_key: impl Into<String>,
    ) -> Self {
        self.key_id = key_id.into();
        self.secret_key = secret_key.into();
        self
    }

    /// Checks the keys the backend needs.
    ///
    /// # Errors
    ///
    /// [`Error::Config`].
    pub fn validate(&self) -> Result<()> {
        match self.backend {
            DfsBackend::Local if self.root.as_os_str().is_empty() => {
                Err(Error::config("dfs.root", "the local backend needs a root directory"))
            }
            DfsBackend::S3 if self.bucket.is_empty() => {
                Err(Error::config("dfs.bucket", "the s3 backend needs a bucket"))
            }
            DfsBackend::S3 if self.key_id.is_empty() != self.secret_key.is_empty() => {
                Err(Error::config("dfs.secret-key", "key-id and secret-key must be set together"))
            }
            _ => Ok(()),
        }
    }

    /// The `rcop-sst` store configuration (upstream's DFS client timeouts and retries).
    pub fn store_config(&self) -> StoreConfig {
        let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        let backend = match self.backend {
            DfsBackend::Local => Backend::Local { root: self.root.clone() },
            DfsBackend::S3 => Backend::S3,
        };
        let mut cfg = StoreConfig::default()
            .with_backend(backend)
            .with_bucket(self.bucket.clone())
            .with_region(self.region.clone())
            .with_prefix(self.prefix.clone())
            .with_allow_http(self.s3_endpoint.starts_with("http://"));
        cfg.endpoint = non_empty(&self.s3_endpoint);
        cfg.access_key_id = non_empty(&self.key_id);
        cfg.secret_access_key = non_empty(&self.secret_key);
        cfg
    }
}

/// Upstream's `DEFAULT_COP_TIMEOUT`: the deadline of a request whose
/// `context.max_execution_duration_ms` is 0.
pub const DEFAULT_COP_TIMEOUT: Duration = Duration::from_secs(20);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_upstream() {
        let c = WorkerConfig::from_toml("").unwrap();
        assert_eq!(c, WorkerConfig::default());
        assert_eq!(c.addr.to_string(), DEFAULT_ADDR);
        assert_eq!(c.cop_max_resp_size.0, 32 << 20);
        assert_eq!(c.cop_block_cache_size, MemoryThreshold::Percent(20.0));
        assert_eq!(c.limiter.memory_upper_threshold, MemoryThreshold::Percent(80.0));
        assert_eq!(c.dfs.backend, DfsBackend::Local);
        assert_eq!(c.compute_threads(2), 2);
        assert!(!c.disk_cache_enabled(), "no data-dir, no disk cache");
        assert_eq!(c.max_connections, 1024);
        assert_eq!(c.header_read_timeout.0, Duration::from_secs(60));
        assert_eq!(c.body_read_timeout.0, Duration::from_secs(60));
        assert_eq!(c.ia.mem_cap.0, 256 << 20);
        assert_eq!(c.ia.disk_cap, MemoryThreshold::Percent(50.0));
        assert_eq!(c.ia.segment_size.0, 1 << 20);
        assert_eq!((c.ia.dfs_concurrency, c.ia.dfs_keyspace_concurrency), (512, 192));
        assert_eq!(c.local_gc.interval.0, Duration::from_secs(3600));
        assert_eq!(c.local_gc.segment_tmp_lifetime.0, Duration::from_secs(60));
        // A zero cap turns the cache off even with a data dir.
        let off = WorkerConfig::from_toml("data-dir = \"/d\"\n[ia]\ndisk-cap = 0").unwrap();
        assert!(!off.disk_cache_enabled());
        let on = WorkerConfig::from_toml("data-dir = \"/d\"").unwrap();
        assert!(on.disk_cache_enabled());
    }

    #[test]
    fn full_file_parses() {
        let c = WorkerConfig::from_toml(
            r#"
            addr = "127.0.0.1:0"
            cop-block-cache-size = "256MiB"
            cop-max-resp-size = "1MiB"
            max-request-size = "64MiB"
            memory-upper-threshold = "2GiB"
            thread-pool-size-factor = 2.5
            data-dir = "/var/lib/rcop"

            [dfs]
            backend = "s3"
            prefix = "cluster-1"
            s3-endpoint = "http://127.0.0.1:9000"
            bucket = "rcop"
            region = "local"
            key-id = "ak"
            secret-key = "sk"

            [cop-limiter]
            high-mem-ratio = 0.7

            [worker-limiter]
            max-queue-size = 4

            [ia]
            mem-cap = "64MiB"
            disk-cap = "20GiB"
            segment-size = "512KiB"
            freq-update-interval = "100ms"
            dfs-concurrency = 64
            dfs-keyspace-concurrency = 16

            [local-gc]
            interval = "10m"
            meta-lifetime = "12h"
            segment-interval = "6h"
            segment-tmp-lifetime = "30s"
            "#,
        )
        .unwrap();
        assert!(c.disk_cache_enabled());
        assert_eq!(c.data_dir, PathBuf::from("/var/lib/rcop"));
        assert_eq!(c.ia.mem_cap.0, 64 << 20);
        assert_eq!(c.ia.disk_cap, MemoryThreshold::Absolute(ReadableSize(20 << 30)));
        assert_eq!(c.ia.segment_size.0, 512 << 10);
        assert_eq!(c.ia.freq_update_interval.0, Duration::from_millis(100));
        assert_eq!((c.ia.dfs_concurrency, c.ia.dfs_keyspace_concurrency), (64, 16));
        assert_eq!(c.local_gc.interval.0, Duration::from_secs(600));
        assert_eq!(c.local_gc.meta_lifetime.0, Duration::from_secs(12 * 3600));
        assert_eq!(c.local_gc.segment_interval.0, Duration::from_secs(6 * 3600));
        assert_eq!(c.local_gc.segment_tmp_lifetime.0, Duration::from_secs(30));
        assert_eq!(c.addr.port(), 0);
        assert_eq!(c.cop_block_cache_size, MemoryThreshold::Absolute(ReadableSize(256 << 20)));
        assert_eq!(c.cop_max_resp_size.0, 1 << 20);
        assert_eq!(c.max_request_size.0, 64 << 20);
        assert_eq!(c.compute_threads(4), 10);
        assert_eq!(c.limiter.cop_limiter.high_mem_ratio, 0.7);
        assert_eq!(c.limiter.worker_limiter.max_queue_size, 4);
        let s = c.dfs.store_config();
        assert_eq!(s.backend, Backend::S3);
        assert_eq!(s.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert!(s.allow_http);
        assert_eq!(
            (s.bucket.as_str(), s.region.as_str(), s.prefix.as_str()),
            ("rcop", "local", "cluster-1")
        );
        assert_eq!(s.access_key_id.as_deref(), Some("ak"));
        assert!(!format!("{:?}", c.dfs).contains("sk"), "secrets are not printed");
    }

    #[test]
    fn bad_values_name_their_key() {
        for (text, key) in [
            ("cop-max-resp-size = 0", "cop-max-resp-size"),
            ("max-request-size = 0", "max-request-size"),
            ("thread-pool-size-factor = -1.0", "thread-pool-size-factor"),
            ("max-connections = 0", "max-connections"),
            ("header-read-timeout = \"0s\"", "header-read-timeout"),
            ("body-read-timeout = \"0s\"", "body-read-timeout"),
            ("cop-block-cache-size = \"120%\"", "cop-block-cache-size"),
            ("[dfs]\nbackend = \"s3\"", "dfs.bucket"),
            ("[dfs]\nbackend = \"s3\"\nbucket = \"b\"\nkey-id = \"k\"", "dfs.secret-key"),
            ("[cop-limiter]\nhigh-mem-ratio = 2.0", "limiter"),
            ("unknown-key = 1", "(file)"),
            ("[dfs]\nbackend = \"ftp\"", "(file)"),
            ("[ia]\ndisk-cap = \"150%\"", "ia.disk-cap"),
            ("[ia]\nsegment-size = 0", "ia.segment-size"),
            ("[ia]\ndfs-concurrency = 0", "ia.dfs-concurrency"),
            ("[ia]\ndfs-keyspace-concurrency = 0", "ia.dfs-keyspace-concurrency"),
            ("[local-gc]\ninterval = \"0s\"", "local-gc.interval"),
            ("[ia]\nunknown = 1", "(file)"),
            ("[security]\nca-path = \"ca.pem\"", "security.ca-path"),
            ("[security]\ncert-allowed-cn = [\"node\"]", "security.cert-allowed-cn"),
        ] {
            match WorkerConfig::from_toml(text) {
                Err(Error::Config { key: k, .. }) => assert_eq!(k, key, "{text}"),
                other => panic!("{text}: expected a config error, got {other:?}"),
            }
        }
        // A zero-sized block cache disables it.
        WorkerConfig::from_toml("cop-block-cache-size = 0").unwrap();
    }
}
