//! Object storage access: configuration, object keys, ranged reads and typed errors.
//!
//! The local-directory and memory backends need only the `object-store` feature; the S3
//! backend needs `s3` (without it, [`Backend::S3`] is an [`Error::Config`]).

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory as MemoryStore;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};

use crate::error::{Error, Result};
use crate::types::FileId;

/// Root directory of the default local backend (relative to the working directory).
pub const DEFAULT_LOCAL_ROOT: &str = "rcop-data/sst";

/// Which object store backend to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// S3 or an S3-compatible endpoint (needs the `s3` feature).
    S3,
    /// A directory on the local filesystem: the default, so a single-machine setup works
    /// without an object store (and tests can look at the files).
    Local {
        /// Root directory; objects live under `root/{prefix}/…`.
        root: PathBuf,
    },
    /// Process memory (tests).
    Memory,
}

impl Default for Backend {
    fn default() -> Self {
        Backend::Local { root: PathBuf::from(DEFAULT_LOCAL_ROOT) }
    }
}

/// Configuration of the object store, filled from the worker's configuration.
///
/// Defaults follow upstream's DFS client: 9 retries with a 500 ms initial backoff doubling
/// per attempt, a 5 s connect timeout and a 10 s per-request timeout.
///
/// Non-exhaustive: outside this crate, start from [`StoreConfig::default`] and adjust with
/// the `with_*` setters or the public fields.
///
/// ```
/// use rcop_sst::{Backend, StoreConfig};
///
/// let cfg = StoreConfig::default().with_backend(Backend::Memory).with_prefix("cluster-1");
/// assert_eq!(cfg.prefix, "cluster-1");
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreConfig {
    /// The backend.
    pub backend: Backend,
    /// S3 endpoint URL (`None` = AWS for `region`).
    pub endpoint: Option<String>,
    /// Bucket name (S3).
    pub bucket: String,
    /// Region (S3).
    pub region: String,
    /// Access key id (S3); `None` to use the environment / instance credentials.
    pub access_key_id: Option<String>,
    /// Secret access key (S3).
    pub secret_access_key: Option<String>,
    /// Session token (S3, optional).
    pub session_token: Option<String>,
    /// Key prefix of every object (`{prefix}/{xx}/{id:016x}.sst`); may be empty.
    pub prefix: String,
    /// TCP connect timeout.
    pub connect_timeout: Duration,
    /// Timeout of one request, body included.
    pub request_timeout: Duration,
    /// Retries of a failed request (5xx, timeouts, connection errors) before giving up.
    pub max_retries: usize,
    /// First retry delay; doubles per attempt up to `retry_max_backoff`.
    pub retry_init_backoff: Duration,
    /// Longest delay between retries.
    pub retry_max_backoff: Duration,
    /// Give up retrying once this much time passed since the first attempt.
    pub retry_timeout: Duration,
    /// Allow plain `http://` endpoints (loopback tests, private networks).
    pub allow_http: bool,
    /// Use virtual-hosted-style requests (`bucket.endpoint`) instead of path style.
    pub virtual_hosted_style: bool,
}

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credentials are never printed.
        f.debug_struct("StoreConfig")
            .field("backend", &self.backend)
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id.as_ref().map(|_| "<set>"))
            .field("prefix", &self.prefix)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_retries", &self.max_retries)
            .field("allow_http", &self.allow_http)
            .finish_non_exhaustive()
    }
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            backend: Backend::default(),
            endpoint: None,
            bucket: String::new(),
            region: "us-east-1".into(),
            access_key_id: None,
            secret_access_key: None,
            session_token: None,
            prefix: String::new(),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(10),
            max_retries: 9,
            retry_init_backoff: Duration::from_millis(500),
            retry_max_backoff: Duration::from_secs(15),
            retry_timeout: Duration::from_secs(60),
            allow_http: false,
            virtual_hosted_style: false,
        }
    }
}

impl StoreConfig {
    /// Sets [`backend`](Self::backend).
    #[must_use]
    pub fn with_backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// Sets [`endpoint`](Self::endpoint) (an S3-compatible endpoint URL).
    #[must_use]
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Sets [`bucket`](Self::bucket).
    #[must_use]
    pub fn with_bucket(mut self, bucket: impl Into<String>) -> Self {
        self.bucket = bucket.into();
        self
    }

    /// Sets [`region`](Self::region).
    #[must_use]
    pub fn with_region(mut self, region: impl Into<String>) -> Self {
        self.region = region.into();
        self
    }

    /// Sets [`access_key_id`](Self::access_key_id) and
    /// [`secret_access_key`](Self::secret_access_key).
    #[must_use]
    pub fn with_credentials(
        mut self,
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
    ) -> Self {
        self.access_key_id = Some(access_key_id.into());
        self.secret_access_key = Some(secret_access_key.into());
        self
    }

    /// Sets [`session_token`](Self::session_token).
    #[must_use]
    pub fn with_session_token(mut self, token: impl Into<String>) -> Self {
        self.session_token = Some(token.into());
        self
    }

    /// Sets [`prefix`](Self::prefix).
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Sets [`connect_timeout`](Self::connect_timeout).
    #[must_use]
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets [`request_timeout`](Self::request_timeout).
    #[must_use]
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets [`max_retries`](Self::max_retries).
    #[must_use]
    pub fn with_max_retries(mut self, retries: usize) -> Self {
        self.max_retries = retries;
        self
    }

    /// Sets [`retry_init_backoff`](Self::retry_init_backoff).
    #[must_use]
    pub fn with_retry_init_backoff(mut self, backoff: Duration) -> Self {
        self.retry_init_backoff = backoff;
        self
    }

    /// Sets [`retry_max_backoff`](Self::retry_max_backoff).
    #[must_use]
    pub fn with_retry_max_backoff(mut self, backoff: Duration) -> Self {
        self.retry_max_backoff = backoff;
        self
    }

    /// Sets [`retry_timeout`](Self::retry_timeout).
    #[must_use]
    pub fn with_retry_timeout(mut self, timeout: Duration) -> Self {
        self.retry_timeout = timeout;
        self
    }

    /// Sets [`allow_http`](Self::allow_http).
    #[must_use]
    pub fn with_allow_http(mut self, allow: bool) -> Self {
        self.allow_http = allow;
        self
    }

    /// Sets [`virtual_hosted_style`](Self::virtual_hosted_style).
    #[must_use]
    pub fn with_virtual_hosted_style(mut self, enabled: bool) -> Self {
        self.virtual_hosted_style = enabled;
        self
    }
}

/// Counters of the requests an [`SstStore`] made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreStats {
    /// GET requests (whole or ranged) that were issued.
    pub gets: u64,
    /// Bytes received by GET requests.
    pub bytes_read: u64,
    /// PUT requests.
    pub puts: u64,
    /// Bytes sent by PUT requests.
    pub bytes_written: u64,
    /// GET requests that failed (the object store's error, or its body broke off).
    pub get_errors: u64,
    /// PUT requests that failed.
    pub put_errors: u64,
    /// How long GET requests took, body included.
    pub get_latency: Latency,
    /// How long PUT requests took.
    pub put_latency: Latency,
}

/// Upper bounds, in seconds, of the [`Latency`] buckets: 0.5 ms doubling up to ~16 s (the
/// last bucket, `+Inf`, is implied).
pub const LATENCY_BOUNDS: [f64; LATENCY_BUCKETS] = {
    let mut b = [0.0; LATENCY_BUCKETS];
    let mut i = 0;
    let mut v = 0.0005;
    while i < LATENCY_BUCKETS {
        b[i] = v;
        v *= 2.0;
        i += 1;
    }
    b
};

/// Number of finite [`LATENCY_BOUNDS`].
pub const LATENCY_BUCKETS: usize = 16;

/// A latency distribution: per bucket of [`LATENCY_BOUNDS`] the requests that took at most
/// its bound (not cumulative; the last entry counts those above every bound), and the sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Latency {
    /// Requests per bucket; index [`LATENCY_BUCKETS`] is above the last bound.
    pub buckets: [u64; LATENCY_BUCKETS + 1],
    /// Sum of the durations in nanoseconds.
    pub sum_nanos: u64,
}

impl Latency {
    /// Requests observed.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }
}

#[derive(Debug, Default)]
struct LatencyCounters {
    buckets: [AtomicU64; LATENCY_BUCKETS + 1],
    sum_nanos: AtomicU64,
}

impl LatencyCounters {
    fn observe(&self, took: std::time::Duration) {
        let secs = took.as_secs_f64();
        let i = LATENCY_BOUNDS.iter().position(|b| secs <= *b).unwrap_or(LATENCY_BUCKETS);
        if let Some(b) = self.buckets.get(i) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    fn snapshot(&self) -> Latency {
        Latency {
            buckets: std::array::from_fn(|i| self.buckets[i].load(Ordering::Relaxed)),
            sum_nanos: self.sum_nanos.load(Ordering::Relaxed),
        }
    }
}

/// How much of the end of a file to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// The last `n` bytes (or the whole file when shorter).
    Last(u64),
    /// Everything from this offset to the end.
    From(u64),
}

/// SST files in an object store.
#[derive(Debug)]
pub struct SstStore {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    gets: AtomicU64,
    bytes_read: AtomicU64,
    puts: AtomicU64,
    bytes_written: AtomicU64,
    get_errors: AtomicU64,
    put_errors: AtomicU64,
    get_latency: LatencyCounters,
    put_latency: LatencyCounters,
}

/// The object key of file `id` under `prefix`: `{prefix}/{xx}/{id:016x}.sst`, where `xx`
/// is the low byte of farmhash `fingerprint64` of the id's little-endian bytes, in hex.
pub fn object_key(prefix: &str, id: FileId) -> String {
    let xx = farmhash::fingerprint64(&id.0.to_le_bytes()) & 0xff;
    let prefix = prefix.trim_end_matches('/');
    if prefix.is_empty() {
        format!("{xx:02x}/{:016x}.sst", id.0)
    } else {
        format!("{prefix}/{xx:02x}/{:016x}.sst", id.0)
    }
}

impl SstStore {
    /// Builds the store described by `cfg`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the local root cannot be created, when the S3 settings are
    /// unusable, or for [`Backend::S3`] in a build without the `s3` feature.
    pub fn from_config(cfg: &StoreConfig) -> Result<Self> {
        let store: Arc<dyn ObjectStore> = match &cfg.backend {
            Backend::Memory => Arc::new(MemoryStore::new()),
            Backend::Local { root } => {
                std::fs::create_dir_all(root).map_err(|e| Error::Config {
                    reason: format!("cannot create local store root {}: {e}", root.display()),
                })?;
                Arc::new(LocalFileSystem::new_with_prefix(root).map_err(|e| Error::Config {
                    reason: format!("local store root {}: {e}", root.display()),
                })?)
            }
            Backend::S3 => s3_store(cfg)?,
        };
        Ok(Self::new(store, &cfg.prefix))
    }

    /// Wraps an existing object store.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> Self {
        SstStore {
            store,
            prefix: prefix.trim_end_matches('/').to_string(),
            gets: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            puts: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            get_errors: AtomicU64::new(0),
            put_errors: AtomicU64::new(0),
            get_latency: LatencyCounters::default(),
            put_latency: LatencyCounters::default(),
        }
    }

    /// The object key of file `id`.
    pub fn object_key(&self, id: FileId) -> String {
        object_key(&self.prefix, id)
    }

    fn path(&self, id: FileId) -> Path {
        Path::from(self.object_key(id))
    }

    /// Checks that the store answers with these settings: one listing of the key prefix
    /// (the bucket exists, the credentials may read it). Nothing is written.
    ///
    /// # Errors
    ///
    /// [`Error::Permission`] (credentials refused), [`Error::NotFound`] (no such bucket),
    /// [`Error::Retryable`] (unreachable), [`Error::Rejected`]; `file_id` 0 in each.
    pub async fn check(&self) -> Result<()> {
        let prefix = (!self.prefix.is_empty()).then(|| Path::from(self.prefix.as_str()));
        self.store
            .list_with_delimiter(prefix.as_ref())
            .await
            .map(|_| ())
            .map_err(|e| map_error(FileId(0), &self.prefix, e))
    }

    /// Requests made so far.
    pub fn stats(&self) -> StoreStats {
        StoreStats {
            gets: self.gets.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            puts: self.puts.load(Ordering::Relaxed),
            bytes_written: self.bytes_written.load(Ordering::Relaxed),
            get_errors: self.get_errors.load(Ordering::Relaxed),
            put_errors: self.put_errors.load(Ordering::Relaxed),
            get_latency: self.get_latency.snapshot(),
            put_latency: self.put_latency.snapshot(),
        }
    }

    /// Uploads file `id`.
    pub async fn put(&self, id: FileId, data: Bytes) -> Result<()> {
        self.put_at(&self.path(id), id, data).await
    }

    async fn put_at(&self, path: &Path, id: FileId, data: Bytes) -> Result<()> {
        self.puts.fetch_add(1, Ordering::Relaxed);
        let len = data.len() as u64;
        let started = std::time::Instant::now();
        let result = self.store.put(path, data.into()).await;
        self.put_latency.observe(started.elapsed());
        match result {
            Ok(_) => {
                self.bytes_written.fetch_add(len, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                self.put_errors.fetch_add(1, Ordering::Relaxed);
                Err(map_error(id, path.as_ref(), e))
            }
        }
    }

    /// Reads `range` of file `id`; errors when the file is shorter than the range end.
    pub async fn get_range(&self, id: FileId, range: Range<u64>) -> Result<Bytes> {
        let want = range.end.saturating_sub(range.start);
        let (bytes, start, _) = self.get(id, Some(GetRange::Bounded(range.clone()))).await?;
        if bytes.len() as u64 != want || start != range.start {
            return Err(Error::corrupt(
                id,
                range.start,
                crate::error::CorruptKind::Truncated,
                "ranged read returned fewer bytes than asked (file shorter than expected)",
            ));
        }
        Ok(bytes)
    }

    /// Reads the end of file `id`: returns the bytes, their start offset and the file size.
    pub async fn get_tail(&self, id: FileId, tail: Tail) -> Result<(Bytes, u64, u64)> {
        let r = match tail {
            Tail::Last(n) => GetRange::Suffix(n),
            Tail::From(o) => GetRange::Offset(o),
        };
        self.get(id, Some(r)).await
    }

    /// Reads the whole file `id`.
    pub async fn get_all(&self, id: FileId) -> Result<Bytes> {
        Ok(self.get(id, None).await?.0)
    }

    /// Uploads transaction chunk `id` (`{prefix}/txn/{xx}/{id:016x}.txn`).
    pub async fn put_txn_chunk(&self, id: u64, data: Bytes) -> Result<()> {
        let path = Path::from(crate::txn::txn_chunk_key(&self.prefix, id));
        self.put_at(&path, FileId(id), data).await
    }

    /// Reads transaction chunk `id` whole. Its footer is read first: `admit` gets the chunk's
    /// size before the rest is fetched, and may refuse it (e.g. a memory reservation that
    /// cannot grow).
    ///
    /// # Errors
    ///
    /// As the other reads ([`Error::NotFound`] for a missing chunk), what `admit` returns,
    /// [`Error::Corrupt`] for an object shorter than a footer.
    pub async fn get_txn_chunk(
        &self,
        id: u64,
        admit: impl FnOnce(u64) -> Result<()>,
    ) -> Result<Bytes> {
        let fid = FileId(id);
        let path = Path::from(crate::txn::txn_chunk_key(&self.prefix, id));
        let footer = crate::txn::TXN_CHUNK_FOOTER_SIZE as u64;
        let (tail, _, size) = self.get_at(&path, fid, Some(GetRange::Suffix(footer))).await?;
        if size < footer || tail.len() as u64 != footer {
            return Err(Error::corrupt(
                fid,
                0,
                crate::error::CorruptKind::Truncated,
                "txn chunk shorter than its footer",
            ));
        }
        admit(size)?;
        // One read of the whole object (no copy); it must be the size the footer read gave.
        let (whole, _, _) = self.get_at(&path, fid, None).await?;
        if whole.len() as u64 != size {
            return Err(Error::corrupt(
                fid,
                0,
                crate::error::CorruptKind::Truncated,
                "txn chunk read returned other bytes than its size",
            ));
        }
        Ok(whole)
    }

    async fn get(&self, id: FileId, range: Option<GetRange>) -> Result<(Bytes, u64, u64)> {
        let path = self.path(id);
        self.get_at(&path, id, range).await
    }

    async fn get_at(
        &self,
        path: &Path,
        id: FileId,
        range: Option<GetRange>,
    ) -> Result<(Bytes, u64, u64)> {
        self.gets.fetch_add(1, Ordering::Relaxed);
        let opts = GetOptions { range, ..GetOptions::default() };
        let started = std::time::Instant::now();
        let result = async {
            let res = self.store.get_opts(path, opts).await?;
            let start = res.range.start;
            let size = res.meta.size;
            Ok::<_, object_store::Error>((res.bytes().await?, start, size))
        }
        .await;
        self.get_latency.observe(started.elapsed());
        match result {
            Ok((bytes, start, size)) => {
                self.bytes_read.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                Ok((bytes, start, size))
            }
            Err(e) => {
                self.get_errors.fetch_add(1, Ordering::Relaxed);
                Err(map_error(id, path.as_ref(), e))
            }
        }
    }
}

/// The S3 client described by `cfg`.
#[cfg(feature = "s3")]
fn s3_store(cfg: &StoreConfig) -> Result<Arc<dyn ObjectStore>> {
    use object_store::aws::AmazonS3Builder;
    use object_store::{BackoffConfig, ClientOptions, RetryConfig};

    if cfg.bucket.is_empty() {
        return Err(Error::Config { reason: "S3 backend needs a bucket".into() });
    }
    let client = ClientOptions::new()
        .with_connect_timeout(cfg.connect_timeout)
        .with_timeout(cfg.request_timeout)
        .with_allow_http(cfg.allow_http);
    let retry = RetryConfig {
        backoff: BackoffConfig {
            init_backoff: cfg.retry_init_backoff,
            max_backoff: cfg.retry_max_backoff,
            base: 2.0,
        },
        max_retries: cfg.max_retries,
        retry_timeout: cfg.retry_timeout,
    };
    // Environment first (AWS_* variables, then the instance profile), so empty credentials
    // in the config mean "from the environment"; the config's own values override it.
    let mut b = AmazonS3Builder::from_env()
        .with_bucket_name(&cfg.bucket)
        .with_region(&cfg.region)
        .with_client_options(client)
        .with_retry(retry)
        .with_allow_http(cfg.allow_http)
        .with_virtual_hosted_style_request(cfg.virtual_hosted_style);
    if let Some(e) = &cfg.endpoint {
        b = b.with_endpoint(e);
    }
    if let Some(k) = &cfg.access_key_id {
        b = b.with_access_key_id(k);
    }
    if let Some(s) = &cfg.secret_access_key {
        b = b.with_secret_access_key(s);
    }
    if let Some(t) = &cfg.session_token {
        b = b.with_token(t);
    }
    Ok(Arc::new(b.build().map_err(|e| Error::Config { reason: format!("S3 configuration: {e}") })?))
}

/// Without the `s3` feature there is no S3 client: asking for one is a configuration error.
#[cfg(not(feature = "s3"))]
fn s3_store(_cfg: &StoreConfig) -> Result<Arc<dyn ObjectStore>> {
    Err(Error::Config {
        reason: "the S3 backend needs the `s3` feature of rcop-sst, which this build lacks \
                 (use the local or memory backend, or build with `s3`)"
            .into(),
    })
}

/// Maps an `object_store` error to ours. `object_store` has already spent its retry budget
/// on retryable failures (5xx, timeouts, connection errors) when an error reaches here.
fn map_error(file_id: FileId, path: &str, e: object_store::Error) -> Error {
    use object_store::Error as E;
    match e {
        E::NotFound { .. } => Error::NotFound { file_id, path: path.to_string() },
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            Error::Permission { file_id, source: Arc::new(e) }
        }
        E::Generic { .. } | E::JoinError { .. } => {
            if is_transient(&e) {
                Error::Retryable { file_id, source: Arc::new(e) }
            } else {
                Error::Rejected { file_id, source: Arc::new(e) }
            }
        }
        other => Error::Rejected { file_id, source: Arc::new(other) },
    }
}

/// True for transport failures (connect, timeout, reset: an `HttpError` in the chain),
/// 5xx / 429 statuses and join errors. `object_store` does not expose the status code of
/// its retry error, so the status is read from its stable message
/// (`"… status code: 503 …"`); anything else is a rejection.
fn is_transient(e: &object_store::Error) -> bool {
    if matches!(e, object_store::Error::JoinError { .. }) {
        return true;
    }
    // HTTP clients exist only with the `s3` feature.
    #[cfg(feature = "s3")]
    {
        let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(err) = cur {
            if err.downcast_ref::<object_store::client::HttpError>().is_some() {
                return true;
            }
            cur = err.source();
        }
    }
    match status_in_message(&e.to_string()) {
        Some(s) => s >= 500 || s == 429 || s == 408,
        // No status and no transport error: treat as transient (e.g. body read failures).
        None => true,
    }
}

fn status_in_message(msg: &str) -> Option<u16> {
    let at = msg.find("status code: ")? + "status code: ".len();
    msg.get(at..at + 3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_keys_follow_the_upstream_layout() {
        let k = object_key("prefix/", FileId(0x1234));
        let xx = farmhash::fingerprint64(&0x1234u64.to_le_bytes()) & 0xff;
        assert_eq!(k, format!("prefix/{xx:02x}/0000000000001234.sst"));
        // Directory bytes cross-checked against Google's C++ FarmHash Fingerprint64.
        assert_eq!(k, "prefix/5c/0000000000001234.sst");
        assert_eq!(object_key("", FileId(1)), "61/0000000000000001.sst");
        assert_eq!(object_key("a/b", FileId(0x0102_0304_0506_0708)), "a/b/1c/0102030405060708.sst");
    }

    #[test]
    fn status_is_read_from_the_message() {
        assert_eq!(
            status_in_message("Server returned non-2xx status code: 503 Service Unavailable: "),
            Some(503)
        );
        assert_eq!(status_in_message("no code"), None);
    }

    #[tokio::test]
    async fn memory_backend_roundtrip_and_not_found() {
        let cfg = StoreConfig { backend: Backend::Memory, ..StoreConfig::default() };
        let s = SstStore::from_config(&cfg).unwrap();
        s.put(FileId(1), Bytes::from_static(b"0123456789")).await.unwrap();
        assert_eq!(s.get_range(FileId(1), 2..5).await.unwrap().as_ref(), b"234");
        let (tail, start, size) = s.get_tail(FileId(1), Tail::Last(3)).await.unwrap();
        assert_eq!((tail.as_ref(), start, size), (&b"789"[..], 7, 10));
        let (tail, start, _) = s.get_tail(FileId(1), Tail::From(8)).await.unwrap();
        assert_eq!((tail.as_ref(), start), (&b"89"[..], 8));
        assert!(matches!(
            s.get_range(FileId(2), 0..1).await,
            Err(Error::NotFound { file_id: FileId(2), .. })
        ));
        assert!(s.get_range(FileId(1), 8..20).await.is_err());
        let st = s.stats();
        assert_eq!((st.puts, st.bytes_written, st.put_errors), (1, 10, 0));
        // Five GETs: three answered (3 + 3 + 2 bytes), the missing file refused by the store,
        // the range past the end answered short (2 bytes) and refused by `get_range`.
        assert_eq!((st.gets, st.bytes_read), (5, 10));
        assert_eq!(st.get_errors, 1);
        assert_eq!(st.get_latency.count(), 5);
        assert_eq!(st.put_latency.count(), 1);
        assert!(st.get_latency.sum_nanos > 0);
    }

    #[test]
    fn latency_buckets_double_from_half_a_millisecond() {
        assert_eq!(LATENCY_BOUNDS[0], 0.0005);
        assert_eq!(LATENCY_BOUNDS[LATENCY_BUCKETS - 1], 0.0005 * 32_768.0);
        let c = LatencyCounters::default();
        c.observe(std::time::Duration::from_micros(400));
        c.observe(std::time::Duration::from_micros(600));
        c.observe(std::time::Duration::from_secs(60));
        let l = c.snapshot();
        assert_eq!((l.buckets[0], l.buckets[1], l.buckets[LATENCY_BUCKETS]), (1, 1, 1));
        assert_eq!(l.count(), 3);
        assert_eq!(l.sum_nanos, 60_001_000_000);
    }

    #[tokio::test]
    async fn local_backend_roundtrip() {
        let dir = std::env::temp_dir().join(format!("rcop-sst-local-{}", std::process::id()));
        let cfg = StoreConfig {
            backend: Backend::Local { root: dir.clone() },
            prefix: "p".into(),
            ..StoreConfig::default()
        };
        let s = SstStore::from_config(&cfg).unwrap();
        s.put(FileId(9), Bytes::from_static(b"abcdef")).await.unwrap();
        assert!(dir.join(s.object_key(FileId(9))).exists());
        assert_eq!(s.get_range(FileId(9), 1..4).await.unwrap().as_ref(), b"bcd");
        assert_eq!(s.get_all(FileId(9)).await.unwrap().as_ref(), b"abcdef");
        assert!(matches!(s.get_all(FileId(10)).await, Err(Error::NotFound { .. })));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn default_backend_is_a_local_directory() {
        assert_eq!(
            StoreConfig::default().backend,
            Backend::Local { root: DEFAULT_LOCAL_ROOT.into() }
        );
    }

    #[test]
    fn s3_without_bucket_is_a_config_error() {
        let cfg = StoreConfig { backend: Backend::S3, ..StoreConfig::default() };
        assert!(matches!(SstStore::from_config(&cfg), Err(Error::Config { .. })));
    }

    #[cfg(not(feature = "s3"))]
    #[test]
    fn s3_without_the_feature_is_a_config_error() {
        // A complete S3 configuration: only the missing feature is wrong.
        let cfg = StoreConfig {
            backend: Backend::S3,
            endpoint: Some("http://127.0.0.1:9".into()),
            bucket: "b".into(),
            access_key_id: Some("k".into()),
            secret_access_key: Some("s".into()),
            allow_http: true,
            ..StoreConfig::default()
        };
        match SstStore::from_config(&cfg) {
            Err(Error::Config { reason }) => assert!(reason.contains("`s3` feature"), "{reason}"),
            other => panic!("expected a config error naming the feature, got {other:?}"),
        }
    }
}
