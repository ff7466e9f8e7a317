//! The worker's local-disk SST cache ("IA", upstream's name): block-aligned segments of SST
//! data and the files' metadata as checksummed local files under `data-dir`, managed with
//! S3-FIFO. Sits below the block cache and above object storage; it survives restarts.
//!
//! Layout under `{data-dir}/ia/`: `segment/{file_id}-{start}-{end}.seg`,
//! `meta/{file_id:016x}.meta`, `manifest` (see `format.rs` for the bytes). Eviction and its
//! strictness: `fifo.rs`. Every disk operation runs on the blocking pool.
//!
//! Faults never fail a read: a cache file that is missing, truncated or fails its checksum
//! is deleted and the bytes are fetched from object storage; a write that fails (disk full,
//! unwritable directory, I/O error) leaves the segment uncached on disk. Each such event is
//! logged and reported to the [`IaObserver`].
//!
//! (Over 800 lines: the read path, the disk writes and the fault handling all work on
//! `Inner`'s state under its locks, and read best side by side; the pure parts are already
//! out in `fifo`, `format`, `disk` and `gc`.)

mod disk;
mod fifo;
mod format;
mod gc;

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use tokio::sync::Semaphore;

use self::disk::Usage;
use self::fifo::{Fifo, Found};
use self::format::SegKey;
use crate::error::{Error, Result};
use crate::store::SstStore;
use crate::table::{Section, TableMeta};
use crate::types::FileId;

pub use self::gc::GcReport;

/// Default `segment-size` (upstream's 1 MiB).
pub const DEFAULT_SEGMENT_SIZE: u64 = 1 << 20;
/// Default `dfs-concurrency` (upstream's 512).
pub const DEFAULT_DFS_CONCURRENCY: usize = 512;
/// Keyspace read semaphores kept before unused ones are swept.
const KEYSPACE_SWEEP_AT: usize = 1024;

/// Default `dfs-keyspace-concurrency` (upstream's 192).
pub const DEFAULT_DFS_KEYSPACE_CONCURRENCY: usize = 192;

/// `disk-cap`: a size, or a percentage of the filesystem holding `data-dir`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DiskCap {
    /// Bytes.
    Bytes(u64),
    /// Percent (in `(0, 100]`) of the filesystem's size.
    Percent(f64),
}

/// `[local-gc]`: the collector of leftover cache files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocalGcConfig {
    /// How often the collector runs (upstream 1 h).
    pub interval: Duration,
    /// A metadata file unused this long is removed with its segments (upstream 1 d).
    pub meta_lifetime: Duration,
    /// How often segments without a metadata file are swept (upstream 1 d).
    pub segment_interval: Duration,
    /// A `*.tmp` file older than this is a leftover of an interrupted write (upstream 1 min).
    pub segment_tmp_lifetime: Duration,
}

impl Default for LocalGcConfig {
    fn default() -> Self {
        LocalGcConfig {
            interval: Duration::from_secs(3600),
            meta_lifetime: Duration::from_secs(86_400),
            segment_interval: Duration::from_secs(86_400),
            segment_tmp_lifetime: Duration::from_secs(60),
        }
    }
}

/// Configuration of an [`IaCache`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct IaConfig {
    /// The worker's `data-dir`; the cache lives in `{data_dir}/ia`.
    pub data_dir: PathBuf,
    /// Bytes of segments held in memory (the small queue).
    pub mem_cap: u64,
    /// Bytes of cache files on disk (the main queue and the metadata files).
    pub disk_cap: DiskCap,
    /// Target segment size; segments are cut on block boundaries.
    pub segment_size: u64,
    /// A segment's frequency is bumped at most once per this interval.
    pub freq_update_interval: Duration,
    /// Object-store reads in flight at once, for all keyspaces.
    pub dfs_concurrency: usize,
    /// Object-store reads in flight at once for one keyspace.
    pub dfs_keyspace_concurrency: usize,
    /// `[local-gc]`.
    pub local_gc: LocalGcConfig,
    /// Test hook: pretend the filesystem holds only this many bytes of cache files, so a
    /// test can fill the "disk" without root. `None` in production.
    pub simulated_fs_size: Option<u64>,
}

impl IaConfig {
    /// A configuration for `data_dir` with upstream's defaults where upstream has them:
    /// 1 MiB segments, 512 / 192 concurrent reads; and ours where it does not (the
    /// reference gives none): `mem-cap` 256 MiB, `disk-cap` 50 %, `freq-update-interval` 1 s.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        IaConfig {
            data_dir: data_dir.into(),
            mem_cap: 256 << 20,
            disk_cap: DiskCap::Percent(50.0),
            segment_size: DEFAULT_SEGMENT_SIZE,
            freq_update_interval: Duration::from_secs(1),
            dfs_concurrency: DEFAULT_DFS_CONCURRENCY,
            dfs_keyspace_concurrency: DEFAULT_DFS_KEYSPACE_CONCURRENCY,
            local_gc: LocalGcConfig::default(),
            simulated_fs_size: None,
        }
    }
}

/// Events of the cache a host turns into metrics. Every method has a no-op default.
pub trait IaObserver: Send + Sync + std::fmt::Debug {
    /// A segment was read: from the cache (`miss == false`) or from object storage.
    fn segment_read(&self, _elapsed: Duration, _miss: bool) {}
    /// The cache fell back to object storage or skipped a write: `reason` is one of
    /// `corrupt`, `read_error`, `write_error`, `disk_full`, `unwritable`.
    fn fallback(&self, _reason: &'static str) {}
}

/// Sizes and counters of an [`IaCache`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IaStats {
    /// Bytes of segments held in memory (small queue).
    pub memory_bytes: u64,
    /// Bytes of cache files accounted on disk (segments and metadata, trailers included).
    pub disk_bytes: u64,
    /// Capacity of the small queue.
    pub small_capacity: u64,
    /// Capacity of the main queue (resolved `disk-cap`).
    pub main_capacity: u64,
    /// Segments in memory.
    pub memory_segments: usize,
    /// Segments on disk (or being written).
    pub disk_segments: usize,
    /// Segment reads served by the cache.
    pub hits: u64,
    /// Segment reads fetched from object storage.
    pub misses: u64,
    /// Cache files found corrupt or unreadable (then refetched).
    pub corrupt: u64,
    /// Writes that failed.
    pub write_errors: u64,
    /// False when the directory is unusable and the cache runs in memory only.
    pub disk_enabled: bool,
}

/// Per-request counters, for `ScanDetailV2`'s IA fields.
#[derive(Debug, Default)]
pub struct IaRequestStats {
    hits: AtomicU64,
    remote_segments: AtomicU64,
    remote_bytes: AtomicU64,
    remote_nanos: AtomicU64,
}

impl IaRequestStats {
    /// Segment reads served by the cache (`ia_cache_hit_count`).
    pub fn cache_hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
    /// Segments read from object storage (`ia_remote_read_segment_count`).
    pub fn remote_segments(&self) -> u64 {
        self.remote_segments.load(Ordering::Relaxed)
    }
    /// Bytes of those segments (`ia_remote_read_segment_bytes`).
    pub fn remote_bytes(&self) -> u64 {
        self.remote_bytes.load(Ordering::Relaxed)
    }
    /// Time waited for them (`ia_remote_read_segment_nanos`).
    pub fn remote_nanos(&self) -> u64 {
        self.remote_nanos.load(Ordering::Relaxed)
    }
}

/// Who a read is for: the keyspace (for the per-keyspace concurrency bound) and the
/// request's counters.
#[derive(Debug, Clone, Default)]
pub struct IaRequest {
    /// Keyspace id of the request.
    pub keyspace: u32,
    /// Counters of the request.
    pub stats: Arc<IaRequestStats>,
}

type Flight = Shared<BoxFuture<'static, Result<(Bytes, bool)>>>;

/// The disk cache. Cheap to clone; one per process and data dir.
#[derive(Clone)]
pub struct IaCache {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for IaCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IaCache").field("stats", &self.stats()).finish()
    }
}

struct Inner {
    cfg: IaConfig,
    seg_dir: PathBuf,
    meta_dir: PathBuf,
    disk_enabled: AtomicBool,
    fifo: Mutex<Fifo>,
    flights: Mutex<HashMap<SegKey, Flight>>,
    layouts: quick_cache::sync::Cache<FileId, Arc<Vec<Range<u64>>>>,
    meta_used: Mutex<HashMap<FileId, Instant>>,
    global: Arc<Semaphore>,
    keyspaces: Mutex<HashMap<u32, Arc<Semaphore>>>,
    usage: Usage,
    seq: AtomicU64,
    pending_writes: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
    corrupt: AtomicU64,
    write_errors: AtomicU64,
    observer: Option<Arc<dyn IaObserver>>,
    gc: Mutex<Option<gc::Collector>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl IaCache {
    /// Opens the cache in `{data_dir}/ia`, blocking: creates the directories, removes
    /// `*.tmp` leftovers and files that are not the cache's, restores the segments and
    /// metadata files found into the main queue (frequency 0; checksums are checked when a
    /// file is read), writes the manifest and starts the `[local-gc]` thread.
    ///
    /// Never fails: an unusable directory (cannot be created or written) is logged, reported
    /// as `unwritable`, and the cache then keeps segments in memory only.
    pub fn open(cfg: IaConfig, observer: Option<Arc<dyn IaObserver>>) -> IaCache {
        let root = cfg.data_dir.join("ia");
        let seg_dir = root.join("segment");
        let meta_dir = root.join("meta");
        let writable =
            disk::ensure_writable(&seg_dir).and_then(|()| disk::ensure_writable(&meta_dir));
        let main_cap = match (cfg.disk_cap, &writable) {
            (_, Err(_)) => 0,
            (DiskCap::Bytes(b), _) => b,
            (DiskCap::Percent(p), _) => disk::filesystem_size(&root)
                // A float product is exact enough for a capacity; `as` saturates.
                .map(|s| (s as f64 * p.clamp(0.0, 100.0) / 100.0) as u64)
                .unwrap_or(0),
        };
        let inner = Inner {
            fifo: Mutex::new(Fifo::new(
                cfg.mem_cap,
                main_cap,
                cfg.segment_size,
                cfg.freq_update_interval,
            )),
            seg_dir,
            meta_dir,
            disk_enabled: AtomicBool::new(writable.is_ok()),
            flights: Mutex::new(HashMap::new()),
            layouts: quick_cache::sync::Cache::new(4096),
            meta_used: Mutex::new(HashMap::new()),
            global: Arc::new(Semaphore::new(cfg.dfs_concurrency.max(1))),
            keyspaces: Mutex::new(HashMap::new()),
            usage: Usage { bytes: AtomicU64::new(0), limit: cfg.simulated_fs_size },
            seq: AtomicU64::new(0),
            pending_writes: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            corrupt: AtomicU64::new(0),
            write_errors: AtomicU64::new(0),
            observer,
            gc: Mutex::new(None),
            cfg,
        };
        let inner = Arc::new(inner);
        match writable {
            Err(e) => {
                tracing::warn!(dir = %root.display(), error = %e, "disk cache directory unusable; caching in memory only");
                inner.fallback("unwritable");
            }
            Ok(()) => {
                if let Some(old) = std::fs::read(root.join("manifest"))
                    .ok()
                    .and_then(|b| format::parse_manifest(&b))
                    && old != main_cap
                {
                    tracing::info!(
                        old,
                        new = main_cap,
                        "disk cache capacity changed since the manifest"
                    );
                }
                let seq = inner.seq.fetch_add(1, Ordering::Relaxed);
                if let Err(e) = write_manifest(&root, main_cap, seq) {
                    tracing::warn!(error = %e, "cannot write the disk cache manifest");
                }
                gc::restore(&inner);
                let c = gc::Collector::start(Arc::downgrade(&inner), inner.cfg.local_gc);
                *lock(&inner.gc) = c;
            }
        }
        IaCache { inner }
    }

    /// Sizes and counters.
    pub fn stats(&self) -> IaStats {
        let s = lock(&self.inner.fifo).sizes();
        IaStats {
            memory_bytes: s.small_bytes,
            disk_bytes: s.main_bytes + s.meta_bytes,
            small_capacity: s.small_cap,
            main_capacity: s.main_cap,
            memory_segments: s.mem_segments,
            disk_segments: s.disk_segments,
            hits: self.inner.hits.load(Ordering::Relaxed),
            misses: self.inner.misses.load(Ordering::Relaxed),
            corrupt: self.inner.corrupt.load(Ordering::Relaxed),
            write_errors: self.inner.write_errors.load(Ordering::Relaxed),
            disk_enabled: self.inner.disk_enabled.load(Ordering::Relaxed),
        }
    }

    /// The cache's directory (`{data-dir}/ia`).
    pub fn dir(&self) -> PathBuf {
        self.inner.cfg.data_dir.join("ia")
    }

    /// Waits until the disk writes started so far have finished (tests, orderly shutdown).
    pub async fn wait_idle(&self) {
        while self.inner.pending_writes.load(Ordering::Acquire) > 0 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Runs one `[local-gc]` round now, blocking (the collector thread runs them on its
    /// interval).
    pub fn collect_garbage(&self) -> GcReport {
        gc::sweep(&self.inner, true)
    }

    /// Segment boundaries of `meta`: its data blocks, then its old-version blocks, cut into
    /// runs of whole blocks of at most `segment-size` bytes (one block larger than that is
    /// a segment of its own); never across the two sections.
    pub(crate) fn layout(&self, meta: &TableMeta) -> Arc<Vec<Range<u64>>> {
        let id = meta.file_id();
        if let Some(l) = self.inner.layouts.get(&id) {
            return l;
        }
        let max = self.inner.cfg.segment_size.max(1);
        let base = u64::from(meta.base());
        let mut segs: Vec<Range<u64>> = Vec::new();
        for section in [Section::Data, Section::Old] {
            let mut cur: Option<Range<u64>> = None;
            for i in 0..meta.num_blocks(section) {
                let h = meta.block_handle(section, i).range();
                let r = base + h.start..base + h.end;
                cur = match cur {
                    Some(c) if c.end == r.start && r.end - c.start <= max => Some(c.start..r.end),
                    Some(c) => {
                        segs.push(c);
                        Some(r)
                    }
                    None => Some(r),
                };
            }
            segs.extend(cur);
        }
        let l = Arc::new(segs);
        self.inner.layouts.insert(id, l.clone());
        l
    }

    /// True when file `id`'s segments are cached (its metadata went through the cache).
    pub(crate) fn covers(&self, id: FileId) -> bool {
        lock(&self.inner.meta_used).contains_key(&id)
    }

    /// Bytes `range` of `meta`'s file through the segments that hold it: cached ones from
    /// memory or disk, the others with one ranged GET each (single flight across requests),
    /// all concurrently. `None` when the range is not made of whole segments' blocks (the
    /// caller reads the store directly).
    pub(crate) async fn read(
        &self,
        store: &Arc<SstStore>,
        meta: &TableMeta,
        range: Range<u64>,
        req: Option<&IaRequest>,
    ) -> Option<Result<Bytes>> {
        let layout = self.layout(meta);
        let first = layout.partition_point(|s| s.end <= range.start);
        let mut keys = Vec::new();
        let mut at = range.start;
        for s in layout.get(first..).unwrap_or_default() {
            if at >= range.end {
                break;
            }
            if s.start > at {
                return None;
            }
            keys.push(SegKey { file: meta.file_id(), start: s.start, end: s.end });
            at = s.end;
        }
        if at < range.end || keys.is_empty() {
            return None;
        }
        let parts =
            futures::future::try_join_all(keys.iter().map(|&k| self.segment(store, k, req))).await;
        let parts = match parts {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        let out = match parts.as_slice() {
            [one] => one.slice(
                (range.start - keys[0].start) as usize..(range.end - keys[0].start) as usize,
            ),
            _ => {
                let mut v = Vec::with_capacity((range.end - range.start) as usize);
                for (k, p) in keys.iter().zip(&parts) {
                    let s = range.start.max(k.start) - k.start;
                    let e = range.end.min(k.end) - k.start;
                    v.extend_from_slice(p.get(s as usize..e as usize).unwrap_or_default());
                }
                Bytes::from(v)
            }
        };
        Some(Ok(out))
    }

    async fn segment(
        &self,
        store: &Arc<SstStore>,
        key: SegKey,
        req: Option<&IaRequest>,
    ) -> Result<Bytes> {
        let started = Instant::now();
        let now = Instant::now();
        let access = lock(&self.inner.fifo).access(key, now);
        self.inner.touch_meta(key.file, now);
        if let Some(a) = access
            && let Found::Memory(b) = a.found
        {
            if let Some(p) = a.promote {
                self.inner.clone().spawn_write(key, p, a.evicted);
            } else {
                self.inner.clone().spawn_deletes(a.evicted);
            }
            self.inner.hit(started, req);
            return Ok(b);
        }
        let flight = {
            let mut flights = lock(&self.inner.flights);
            match flights.get(&key) {
                Some(f) => f.clone(),
                None => {
                    let f = self
                        .inner
                        .clone()
                        .load(store.clone(), key, req.map_or(0, |r| r.keyspace))
                        .boxed()
                        .shared();
                    flights.insert(key, f.clone());
                    f
                }
            }
        };
        let (bytes, remote) = flight.await?;
        if remote {
            if let Some(r) = req {
                r.stats.remote_segments.fetch_add(1, Ordering::Relaxed);
                r.stats.remote_bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                r.stats.remote_nanos.fetch_add(nanos(started.elapsed()), Ordering::Relaxed);
            }
        } else if let Some(r) = req {
            r.stats.hits.fetch_add(1, Ordering::Relaxed);
        }
        Ok(bytes)
    }

    /// The metadata file of `id`: `(start, file size, bytes [start, size))`, verified.
    /// A bad file is deleted and `None` returned.
    pub(crate) async fn read_meta(&self, id: FileId) -> Option<(u64, u64, Bytes)> {
        if !self.inner.disk_enabled.load(Ordering::Relaxed) || !lock(&self.inner.fifo).has_meta(id)
        {
            return None;
        }
        let inner = self.inner.clone();
        let res = tokio::task::spawn_blocking(move || {
            let path = inner.meta_dir.join(format::meta_name(id));
            let r = disk::read(&path);
            (inner, path, r)
        })
        .await
        .ok()?;
        let (inner, path, r) = res;
        let why = match r.map(|b| format::verify(b, None)) {
            Ok(Ok(p)) => match format::split_meta(p) {
                Some(m) => {
                    inner.touch_meta(id, Instant::now());
                    return Some(m);
                }
                None => "bad metadata header".to_string(),
            },
            Ok(Err(bad)) => bad.as_str().to_string(),
            Err(e) => e.to_string(),
        };
        inner.bad_meta(id, &path, &why).await;
        None
    }

    /// A metadata file the caller could not parse: delete it.
    pub(crate) async fn discard_meta(&self, id: FileId) {
        let path = self.inner.meta_dir.join(format::meta_name(id));
        self.inner.clone().bad_meta(id, &path, "does not parse").await;
    }

    /// Stores the metadata of `id` (bytes `[start, size)`) as a local file. Registers the
    /// file as one whose segments are cached, even when the write fails.
    pub(crate) async fn write_meta(&self, id: FileId, start: u64, size: u64, tail: Bytes) {
        self.inner.touch_meta(id, Instant::now());
        if !self.inner.disk_enabled.load(Ordering::Relaxed) {
            return;
        }
        let payload = format::meta_payload(start, size, &tail);
        let n = payload.len() as u64 + format::TRAILER_LEN as u64;
        let mut evicted = Vec::new();
        if !lock(&self.inner.fifo).reserve_meta(id, n, &mut evicted) {
            self.inner.clone().spawn_deletes(evicted);
            return;
        }
        let inner = self.inner.clone();
        inner.pending_writes.fetch_add(1, Ordering::AcqRel);
        let _ = tokio::task::spawn_blocking(move || {
            inner.delete_segments(&evicted);
            let seq = inner.seq.fetch_add(1, Ordering::Relaxed);
            if let Err(e) = disk::write_atomic(
                &inner.meta_dir,
                &format::meta_name(id),
                &payload,
                seq,
                &inner.usage,
            ) {
                inner.write_failed(&e, "metadata");
                lock(&inner.fifo).drop_meta(id);
            }
            inner.pending_writes.fetch_sub(1, Ordering::AcqRel);
        })
        .await;
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn write_manifest(root: &std::path::Path, main_cap: u64, seq: u64) -> std::io::Result<()> {
    let tmp = root.join(format!("manifest.{seq}.tmp"));
    let f = std::fs::File::create(&tmp)?;
    std::io::Write::write_all(&mut &f, &format::manifest(main_cap))?;
    f.sync_all()?;
    std::fs::rename(tmp, root.join("manifest"))
}

impl Inner {
    fn fallback(&self, reason: &'static str) {
        if let Some(o) = &self.observer {
            o.fallback(reason);
        }
    }

    fn hit(&self, started: Instant, req: Option<&IaRequest>) {
        self.hits.fetch_add(1, Ordering::Relaxed);
        if let Some(r) = req {
            r.stats.hits.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(o) = &self.observer {
            o.segment_read(started.elapsed(), false);
        }
    }

    fn touch_meta(&self, id: FileId, now: Instant) {
        lock(&self.meta_used).insert(id, now);
    }

    fn keyspace_semaphore(&self, ks: u32) -> Arc<Semaphore> {
        let mut keyspaces = lock(&self.keyspaces);
        // A bounded table however many tenants: a semaphore no read holds (only the table
        // refers to it) is swept once there are many; a read in flight holds its Arc.
        if keyspaces.len() >= KEYSPACE_SWEEP_AT && !keyspaces.contains_key(&ks) {
            keyspaces.retain(|_, s| Arc::strong_count(s) > 1);
        }
        keyspaces
            .entry(ks)
            .or_insert_with(|| Arc::new(Semaphore::new(self.cfg.dfs_keyspace_concurrency.max(1))))
            .clone()
    }

    /// The body of one segment's flight: the disk copy if there is a good one, else one
    /// ranged GET. Returns the bytes and whether they came from object storage.
    async fn load(
        self: Arc<Self>,
        store: Arc<SstStore>,
        key: SegKey,
        keyspace: u32,
    ) -> Result<(Bytes, bool)> {
        let res = self.clone().load_inner(store, key, keyspace).await;
        lock(&self.flights).remove(&key);
        res
    }

    async fn load_inner(
        self: Arc<Self>,
        store: Arc<SstStore>,
        key: SegKey,
        keyspace: u32,
    ) -> Result<(Bytes, bool)> {
        let started = Instant::now();
        // Re-check under the flight: another flight may have filled it since. (The guard
        // must not live into the `if let`: it would be held across the awaits below.)
        let access = lock(&self.fifo).access(key, started);
        if let Some(a) = access {
            match a.found {
                Found::Memory(b) => {
                    match a.promote {
                        Some(p) => self.clone().spawn_write(key, p, a.evicted),
                        None => self.clone().spawn_deletes(a.evicted),
                    }
                    self.hit(started, None);
                    return Ok((b, false));
                }
                Found::Disk => {
                    if let Some(b) = self.clone().read_segment(key).await {
                        self.hit(started, None);
                        return Ok((b, false));
                    }
                }
            }
        }
        let ks = self.keyspace_semaphore(keyspace);
        let fetched = {
            let _g = self
                .global
                .acquire()
                .await
                .map_err(|e| Error::TaskFailed { file_id: key.file, reason: e.to_string() })?;
            let _k = ks
                .acquire()
                .await
                .map_err(|e| Error::TaskFailed { file_id: key.file, reason: e.to_string() })?;
            store.get_range(key.file, key.start..key.end).await?
        };
        self.misses.fetch_add(1, Ordering::Relaxed);
        if let Some(o) = &self.observer {
            o.segment_read(started.elapsed(), true);
        }
        let (write, evicted) = lock(&self.fifo).admit(key, &fetched);
        if write && self.disk_enabled.load(Ordering::Relaxed) {
            self.clone().spawn_write(key, fetched.clone(), evicted);
        } else {
            if write {
                lock(&self.fifo).written(key, false);
            }
            self.clone().spawn_deletes(evicted);
        }
        Ok((fetched, true))
    }

    /// Reads and verifies segment `key` from disk; a bad file is deleted (`None`).
    async fn read_segment(self: Arc<Self>, key: SegKey) -> Option<Bytes> {
        let inner = self.clone();
        let r = tokio::task::spawn_blocking(move || {
            let path = inner.seg_dir.join(key.file_name());
            match disk::read(&path) {
                Ok(b) => format::verify(b, Some(key.len())).map_err(|bad| bad.as_str().to_string()),
                Err(e) => Err(e.to_string()),
            }
            .inspect_err(|_| {
                let had = lock(&inner.fifo).remove(key);
                disk::remove(&path, if had { key.disk_len() } else { 0 }, &inner.usage);
            })
        })
        .await
        .ok()?;
        match r {
            Ok(b) => Some(b),
            Err(why) => {
                self.corrupt.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(file = key.file.0, start = key.start, end = key.end, reason = %why, "disk cache segment unusable; refetching");
                self.fallback("corrupt");
                None
            }
        }
    }

    async fn bad_meta(self: Arc<Self>, id: FileId, path: &std::path::Path, why: &str) {
        self.corrupt.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(file = id.0, reason = %why, "disk cache metadata file unusable; refetching");
        self.fallback("corrupt");
        let inner = self.clone();
        let path = path.to_path_buf();
        let _ = tokio::task::spawn_blocking(move || {
            let n = std::fs::metadata(&path).map_or(0, |m| m.len());
            lock(&inner.fifo).drop_meta(id);
            disk::remove(&path, n, &inner.usage);
        })
        .await;
    }

    fn write_failed(&self, e: &std::io::Error, what: &'static str) {
        self.write_errors.fetch_add(1, Ordering::Relaxed);
        let reason =
            if e.kind() == std::io::ErrorKind::StorageFull { "disk_full" } else { "write_error" };
        tracing::warn!(error = %e, what, reason, "disk cache write failed; serving from object storage");
        self.fallback(reason);
    }

    fn delete_segments(&self, keys: &[SegKey]) {
        for k in keys {
            disk::remove(&self.seg_dir.join(k.file_name()), k.disk_len(), &self.usage);
        }
    }

    fn spawn_deletes(self: Arc<Self>, keys: Vec<SegKey>) {
        if keys.is_empty() {
            return;
        }
        self.pending_writes.fetch_add(1, Ordering::AcqRel);
        tokio::task::spawn_blocking(move || {
            self.delete_segments(&keys);
            self.pending_writes.fetch_sub(1, Ordering::AcqRel);
        });
    }

    /// Deletes `evicted`, then writes `bytes` as segment `key` (bytes already reserved),
    /// on the blocking pool, detached.
    fn spawn_write(self: Arc<Self>, key: SegKey, bytes: Bytes, evicted: Vec<SegKey>) {
        self.pending_writes.fetch_add(1, Ordering::AcqRel);
        tokio::task::spawn_blocking(move || {
            self.delete_segments(&evicted);
            let seq = self.seq.fetch_add(1, Ordering::Relaxed);
            let res = disk::write_atomic(&self.seg_dir, &key.file_name(), &bytes, seq, &self.usage);
            if let Err(e) = &res {
                self.write_failed(e, "segment");
            }
            lock(&self.fifo).written(key, res.is_ok());
            self.pending_writes.fetch_sub(1, Ordering::AcqRel);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{BuilderOptions, TableBuilder};
    use crate::types::NewValue;

    #[tokio::test]
    async fn segments_are_whole_blocks_within_one_section() {
        let mut b = TableBuilder::new(FileId(3), BuilderOptions::default().with_block_size(1000));
        for i in 0..3000u32 {
            let k = format!("k{i:06}");
            for version in [9u64, 5, 2] {
                let v = vec![b'x'; 50 + (i as usize % 70)];
                b.add(k.as_bytes(), &NewValue { meta: 0, version, user_meta: &[], value: &v })
                    .unwrap();
            }
        }
        let bytes = b.finish().unwrap();
        let meta = TableMeta::from_table(FileId(3), &bytes).unwrap();
        let dir = std::env::temp_dir().join(format!("rcop-ia-layout-{}", std::process::id()));
        let mut cfg = IaConfig::new(&dir);
        cfg.segment_size = 16 << 10;
        let ia = IaCache::open(cfg, None);
        let segs = ia.layout(&meta);
        let f = *meta.footer();
        let mut starts = std::collections::HashSet::new();
        let mut ends = std::collections::HashSet::new();
        for s in [Section::Data, Section::Old] {
            for i in 0..meta.num_blocks(s) {
                let r = meta.block_handle(s, i).range();
                starts.insert(r.start);
                ends.insert(r.end);
            }
        }
        assert!(segs.len() > 4);
        let old = u64::from(f.old_data_offset);
        let mut covered = 0;
        for s in segs.iter() {
            assert!(starts.contains(&s.start) && ends.contains(&s.end), "{s:?}");
            assert!(s.end <= old || s.start >= old, "{s:?} spans the sections at {old}");
            assert!(s.end - s.start <= 16 << 10, "{s:?}");
            covered += s.end - s.start;
        }
        assert_eq!(covered, u64::from(f.index_offset), "every block in exactly one segment");
        assert!(segs.windows(2).all(|w| w[0].end <= w[1].start));
        drop(ia);
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod keyspace_tests;
