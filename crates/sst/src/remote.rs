//! Reading SST files from object storage through the caches, and prefetching the blocks
//! that key ranges need.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use tokio::sync::Semaphore;

use crate::block::Block;
use crate::cache::{BlockCache, Claim, MetaCache};
use crate::error::{CorruptKind, Error, Result};
use crate::footer::FOOTER_SIZE;
use crate::ia::{IaCache, IaRequest};
use crate::index::BlockHandle;
use crate::l0::L0Table;
use crate::store::{SstStore, Tail};
use crate::table::{BlockSource, Section, TableMeta};
use crate::types::FileId;

/// Default largest coalesced ranged read, for object stores (S3): few large requests. The
/// `cold_path` bench (`cargo bench -p rcop-benches --bench cold_path`, SF 0.1, in-process
/// S3 on loopback) fetched 85 MiB/s with 8 MiB reads and 26 MiB/s with 1 MiB reads.
pub const DEFAULT_MAX_READ_SIZE: u64 = 8 << 20;
/// Largest coalesced ranged read over a local directory, where a request costs little:
/// smaller reads let the blocks of one file decompress on several threads while the next
/// reads are in flight (`cold_path`, SF 0.1: 868 MiB/s against 576 MiB/s with 8 MiB reads).
pub const LOCAL_MAX_READ_SIZE: u64 = 1 << 20;
/// Default number of ranged reads in flight per prefetch. Chosen without a benchmark: 16 ×
/// 8 MiB bounds one prefetch's buffers at 128 MiB; revisit with a worker-level prefetch bench.
pub const DEFAULT_MAX_CONCURRENT_READS: usize = 16;
/// Default size of the first (tail) read when opening a file without a known meta offset:
/// covers the metadata of a 16 MiB table of ~150-byte entries (≈ 110 k keys: filter ≈ 1.13
/// bytes per key ≈ 125 KiB, index ≈ 10 KiB) in one request. Not benchmark-tuned; the worker
/// normally knows `meta_offset` and reads exactly the metadata.
pub const DEFAULT_OPEN_READ_SIZE: u64 = 256 << 10;

/// Knobs of an [`SstReader`].
///
/// Non-exhaustive: outside this crate, start from [`ReaderOptions::default`] and adjust with
/// the `with_*` setters or the public fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReaderOptions {
    /// Adjacent blocks are merged into one ranged read up to this many bytes.
    pub max_read_size: u64,
    /// Ranged reads in flight at once per prefetch.
    pub max_concurrent_reads: usize,
    /// Bytes read from the end of a file when opening it without a meta offset.
    pub open_read_size: u64,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            max_read_size: DEFAULT_MAX_READ_SIZE,
            max_concurrent_reads: DEFAULT_MAX_CONCURRENT_READS,
            open_read_size: DEFAULT_OPEN_READ_SIZE,
        }
    }
}

impl ReaderOptions {
    /// The defaults for files in `backend`: [`LOCAL_MAX_READ_SIZE`] reads from a local
    /// directory, [`DEFAULT_MAX_READ_SIZE`] from an object store.
    pub fn for_backend(backend: &crate::store::Backend) -> Self {
        match backend {
            crate::store::Backend::Local { .. } => {
                ReaderOptions::default().with_max_read_size(LOCAL_MAX_READ_SIZE)
            }
            crate::store::Backend::S3 | crate::store::Backend::Memory => ReaderOptions::default(),
        }
    }

    /// Sets [`max_read_size`](Self::max_read_size).
    #[must_use]
    pub fn with_max_read_size(mut self, bytes: u64) -> Self {
        self.max_read_size = bytes;
        self
    }

    /// Sets [`max_concurrent_reads`](Self::max_concurrent_reads).
    #[must_use]
    pub fn with_max_concurrent_reads(mut self, reads: usize) -> Self {
        self.max_concurrent_reads = reads;
        self
    }

    /// Sets [`open_read_size`](Self::open_read_size).
    #[must_use]
    pub fn with_open_read_size(mut self, bytes: u64) -> Self {
        self.open_read_size = bytes;
        self
    }
}

/// A read-through cache of file bytes in front of the object store (upstream's
/// `RemoteCachedDfs`: the storage node's own copy of files it wrote recently, asked for by a
/// worker when the request carries `x-dfs-remote-cache-addr`).
///
/// An answer is used only when it has exactly the bytes asked for; anything else — `None`,
/// a short or long answer — falls back to the store, and a block whose checksum fails after
/// coming from the cache is read again from the store. The cache decides itself which files
/// it is worth asking for (upstream: files younger than 10 minutes).
pub trait RemoteCache: Send + Sync + std::fmt::Debug {
    /// Bytes `[start, end)` of file `id`, or from `start` to its end when `end` is `None`;
    /// `None` when the cache does not answer.
    fn read(&self, id: FileId, start: u64, end: Option<u64>) -> BoxFuture<'static, Option<Bytes>>;
}

/// Opens SST files from an [`SstStore`] through a [`MetaCache`] and reads blocks through a
/// [`BlockCache`]. Cheap to clone; share one per process.
#[derive(Debug, Clone)]
pub struct SstReader {
    store: Arc<SstStore>,
    blocks: BlockCache,
    metas: MetaCache,
    opts: ReaderOptions,
    ia: Option<IaCache>,
    req: Option<IaRequest>,
    remote: Option<Arc<dyn RemoteCache>>,
}

/// One planned ranged read covering adjacent blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRead {
    /// Absolute byte range in the file.
    pub range: Range<u64>,
    /// The blocks it covers.
    pub blocks: Vec<BlockHandle>,
}

/// Asked for the bytes a block decompresses to beyond its stored size, before it is
/// decompressed; false refuses them (the prefetch fails with [`Error::OverBudget`]).
pub type BlockBudget = Arc<dyn Fn(u64) -> bool + Send + Sync>;

/// What a prefetch will do: blocks already cached, and the coalesced reads for the rest.
#[derive(Clone)]
pub struct PrefetchPlan {
    meta: Arc<TableMeta>,
    cached: Vec<BlockHandle>,
    reads: Vec<PlannedRead>,
    budget: Option<BlockBudget>,
}

impl std::fmt::Debug for PrefetchPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrefetchPlan")
            .field("meta", &self.meta)
            .field("cached", &self.cached)
            .field("reads", &self.reads)
            .field("budget", &self.budget.is_some())
            .finish()
    }
}

impl PrefetchPlan {
    /// Bytes the reads will fetch from the store (stored, compressed sizes).
    pub fn bytes_to_fetch(&self) -> u64 {
        self.reads.iter().map(|r| r.range.end - r.range.start).sum()
    }

    /// Stored bytes of every block the ranges need, cached or not: an estimate of the
    /// memory the pinned blocks will take (decompressed blocks are larger when the file
    /// is compressed).
    pub fn bytes_needed(&self) -> u64 {
        self.bytes_to_fetch() + self.cached.iter().map(|h| u64::from(h.len)).sum::<u64>()
    }

    /// Asks `budget` for the bytes each block this prefetch decompresses adds to its stored
    /// size ([`bytes_needed`](Self::bytes_needed) counts stored sizes), before decompressing
    /// it; blocks found cached are not decompressed and not asked for.
    #[must_use]
    pub fn with_budget(mut self, budget: BlockBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Number of blocks the ranges need.
    pub fn num_blocks(&self) -> usize {
        self.cached.len() + self.reads.iter().map(|r| r.blocks.len()).sum::<usize>()
    }

    /// The planned ranged reads.
    pub fn reads(&self) -> &[PlannedRead] {
        &self.reads
    }

    /// The table the plan is for.
    pub fn meta(&self) -> &Arc<TableMeta> {
        &self.meta
    }
}

/// Blocks pinned by a prefetch: a [`BlockSource`] that never does I/O, so a scan over the
/// prefetched ranges can run synchronously on a compute thread.
#[derive(Debug, Clone)]
pub struct Prefetched {
    file_id: FileId,
    blocks: HashMap<u32, Block>,
}

impl Prefetched {
    /// Number of pinned blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// True when no block is pinned.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Decompressed bytes pinned.
    pub fn bytes(&self) -> u64 {
        self.blocks.values().map(|b| b.size() as u64).sum()
    }
}

impl BlockSource for Prefetched {
    fn block(&self, meta: &TableMeta, handle: BlockHandle) -> Result<Block> {
        let key = meta.block_key(handle);
        if meta.file_id() != self.file_id {
            return Err(Error::NotPrefetched {
                file_id: meta.file_id(),
                offset: u64::from(key.offset),
            });
        }
        self.blocks
            .get(&key.offset)
            .cloned()
            .ok_or(Error::NotPrefetched { file_id: meta.file_id(), offset: u64::from(key.offset) })
    }
}

/// Blocks by their offset in the file.
type OffsetBlocks = Vec<(u32, Block)>;

type SharedRead = Shared<BoxFuture<'static, Result<Arc<OffsetBlocks>>>>;

impl SstReader {
    /// A reader over `store` with the given caches.
    pub fn new(
        store: Arc<SstStore>,
        blocks: BlockCache,
        metas: MetaCache,
        opts: ReaderOptions,
    ) -> Self {
        SstReader { store, blocks, metas, opts, ia: None, req: None, remote: None }
    }

    /// Reads through the disk cache `ia`: metadata from its local files, block bytes from
    /// its segments (of files opened with [`open`](Self::open)).
    #[must_use]
    pub fn with_ia(mut self, ia: IaCache) -> Self {
        self.ia = Some(ia);
        self
    }

    /// The disk cache, when there is one.
    pub fn ia(&self) -> Option<&IaCache> {
        self.ia.as_ref()
    }

    /// A clone whose reads are for `req`: bounded by its keyspace's object-store
    /// concurrency and counted in its [`IaRequestStats`](crate::IaRequestStats).
    #[must_use]
    pub fn for_request(&self, req: IaRequest) -> Self {
        let mut r = self.clone();
        r.req = Some(req);
        r
    }

    /// A clone that asks `remote` before the object store for block ranges, metadata read
    /// from a known offset and whole L0 files (not for what the disk cache holds).
    #[must_use]
    pub fn with_remote_cache(&self, remote: Arc<dyn RemoteCache>) -> Self {
        let mut r = self.clone();
        r.remote = Some(remote);
        r
    }

    /// Stored bytes `range` of `meta`'s file: through the disk cache's segments when the
    /// file is cached there (opened through this reader's [`open`](Self::open)), else one
    /// ranged read (from the remote cache when there is one and it answers).
    pub async fn read_range(&self, meta: &TableMeta, range: Range<u64>) -> Result<Bytes> {
        Ok(self.read_range_sourced(meta, range).await?.0)
    }

    /// [`read_range`](Self::read_range), saying whether the bytes came from the remote
    /// cache.
    async fn read_range_sourced(
        &self,
        meta: &TableMeta,
        range: Range<u64>,
    ) -> Result<(Bytes, bool)> {
        if let Some(ia) = &self.ia
            && ia.covers(meta.file_id())
            && let Some(r) = ia.read(&self.store, meta, range.clone(), self.req.as_ref()).await
        {
            return r.map(|b| (b, false));
        }
        if let Some(b) = self.remote_read(meta.file_id(), range.start, Some(range.end)).await {
            return Ok((b, true));
        }
        Ok((self.store.get_range(meta.file_id(), range).await?, false))
    }

    /// The remote cache's answer for `[start, end)` of `id`, when it has exactly those bytes.
    async fn remote_read(&self, id: FileId, start: u64, end: Option<u64>) -> Option<Bytes> {
        let remote = self.remote.as_ref()?;
        let bytes = remote.read(id, start, end).await?;
        match end {
            Some(end) if bytes.len() as u64 != end.saturating_sub(start) => None,
            _ => Some(bytes),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<SstStore> {
        &self.store
    }

    /// The block cache.
    pub fn block_cache(&self) -> &BlockCache {
        &self.blocks
    }

    /// The metadata cache.
    pub fn meta_cache(&self) -> &MetaCache {
        &self.metas
    }

    /// Opens file `id` (an L1+ SST): from the metadata cache, or by reading the end of the
    /// file — from `meta_offset` when known (`TableCreate.meta_offset`), else the last
    /// [`ReaderOptions::open_read_size`] bytes plus, if the metadata is larger, one more
    /// read. Concurrent opens of one file read it once.
    pub async fn open(&self, id: FileId, meta_offset: Option<u32>) -> Result<Arc<TableMeta>> {
        let store = self.store.clone();
        let first = meta_offset
            .map_or(Tail::Last(self.opts.open_read_size.max(FOOTER_SIZE as u64)), |o| {
                Tail::From(u64::from(o))
            });
        let ia = self.ia.clone();
        let reader = self.clone();
        self.metas
            .get_or_load(id, async move {
                if let Some(ia) = &ia
                    && let Some((start, size, tail)) = ia.read_meta(id).await
                {
                    match run_blocking(id, move || TableMeta::from_tail(id, 0, tail, start, size))
                        .await
                    {
                        Ok(meta) => return Ok(Arc::new(meta)),
                        Err(_) => ia.discard_meta(id).await,
                    }
                }
                // From a known offset the remote cache can answer: the metadata whole, whose
                // checksums decide whether it is used.
                if let Tail::From(o) = first
                    && let Some(t) = reader.remote_read(id, o, None).await
                {
                    let size = o + t.len() as u64;
                    let kept = t.clone();
                    if let Ok(meta) =
                        run_blocking(id, move || TableMeta::from_tail(id, 0, t, o, size)).await
                    {
                        if let Some(ia) = &ia {
                            ia.write_meta(id, o, size, kept).await;
                        }
                        return Ok(Arc::new(meta));
                    }
                }
                let (mut tail, mut start, size) = store.get_tail(id, first).await?;
                // A tail shorter than the footer fails here as Truncated.
                let footer = TableMeta::footer_of(id, &tail, size)?;
                let index_offset = u64::from(footer.index_offset);
                if index_offset < start {
                    let head = store.get_range(id, index_offset..start).await?;
                    let mut all = Vec::with_capacity(head.len() + tail.len());
                    all.extend_from_slice(&head);
                    all.extend_from_slice(&tail);
                    tail = Bytes::from(all);
                    start = index_offset;
                } else if index_offset > start {
                    // The read began before the metadata (a `meta_offset` pointing too early,
                    // e.g. from a hostile change set): keep only the metadata, so the cache
                    // neither holds data blocks alive nor under-counts what it holds.
                    let skip = usize::try_from(index_offset - start).unwrap_or(usize::MAX);
                    tail = Bytes::copy_from_slice(tail.get(skip..).unwrap_or_default());
                    start = index_offset;
                }
                let kept = tail.clone();
                let meta = run_blocking(id, move || TableMeta::from_tail(id, 0, tail, start, size))
                    .await?;
                if let Some(ia) = &ia {
                    ia.write_meta(id, start, size, kept).await;
                }
                Ok(Arc::new(meta))
            })
            .await
    }

    /// Reads L0 file `id` whole and decodes it (L0 files are small and read in full, as
    /// upstream does; they are not cached here).
    pub async fn open_l0(&self, id: FileId) -> Result<L0Table> {
        if let Some(data) = self.remote_read(id, 0, None).await
            && let Ok(t) = run_blocking(id, move || L0Table::open(id, data)).await
        {
            return Ok(t);
        }
        let data = self.store.get_all(id).await?;
        run_blocking(id, move || L0Table::open(id, data)).await
    }

    /// Block `handle` of `meta`, from the cache or fetched with one ranged read
    /// (concurrent misses fetch once).
    pub async fn block(&self, meta: &Arc<TableMeta>, handle: BlockHandle) -> Result<Block> {
        let key = meta.block_key(handle);
        let reader = self.clone();
        let meta = meta.clone();
        self.blocks
            .get_or_load(key, async move {
                let abs = u64::from(key.offset);
                let range = abs..abs + u64::from(handle.len);
                let (stored, remote) = reader.read_range_sourced(&meta, range.clone()).await?;
                let id = meta.file_id();
                let m = meta.clone();
                match run_blocking(id, move || m.decode_block(handle, &stored)).await {
                    // The remote cache's bytes do not check out: the object store's do.
                    Err(e) if remote && e.corrupt_kind().is_some() => {
                        let stored = reader.store.get_range(id, range).await?;
                        run_blocking(id, move || meta.decode_block(handle, &stored)).await
                    }
                    r => r,
                }
            })
            .await
    }

    /// Plans a prefetch of the blocks of `meta` that overlap `ranges` (`[start, end)`,
    /// empty end = unbounded): blocks already cached are pinned from the cache, the others
    /// are merged into ranged reads of adjacent blocks up to
    /// [`ReaderOptions::max_read_size`]. With `include_old`, the old-version blocks
    /// overlapping the ranges are included too (reads at an older timestamp need them).
    ///
    /// Call [`PrefetchPlan::bytes_to_fetch`] / [`PrefetchPlan::bytes_needed`] to reserve
    /// memory before [`prefetch`](Self::prefetch).
    pub fn plan_prefetch(
        &self,
        meta: &Arc<TableMeta>,
        ranges: &[(&[u8], &[u8])],
        include_old: bool,
    ) -> PrefetchPlan {
        let mut handles: Vec<BlockHandle> = Vec::new();
        let sections: &[Section] =
            if include_old { &[Section::Data, Section::Old] } else { &[Section::Data] };
        for &section in sections {
            for (start, end) in ranges {
                for i in meta.blocks_for_range(section, start, end) {
                    handles.push(meta.block_handle(section, i));
                }
            }
        }
        handles.sort_by_key(|h| h.offset);
        handles.dedup();
        let mut cached = Vec::new();
        let mut reads: Vec<PlannedRead> = Vec::new();
        for h in handles {
            if self.blocks.contains(&meta.block_key(h)) {
                cached.push(h);
                continue;
            }
            let abs = u64::from(meta.block_key(h).offset);
            let r = abs..abs + u64::from(h.len);
            match reads.last_mut() {
                Some(last)
                    if last.range.end == r.start
                        && r.end - last.range.start <= self.opts.max_read_size =>
                {
                    last.range.end = r.end;
                    last.blocks.push(h);
                }
                _ => reads.push(PlannedRead { range: r, blocks: vec![h] }),
            }
        }
        PrefetchPlan { meta: meta.clone(), cached, reads, budget: None }
    }

    /// Runs a plan: fetches its reads (at most [`ReaderOptions::max_concurrent_reads`] at
    /// once), decodes the blocks on the blocking pool, fills the block cache and returns
    /// every needed block pinned. A block that another request is already loading is
    /// awaited rather than fetched twice.
    pub async fn prefetch(&self, plan: PrefetchPlan) -> Result<Prefetched> {
        let meta = plan.meta.clone();
        let id = meta.file_id();
        let num_blocks = plan.num_blocks();
        let sem = Arc::new(Semaphore::new(self.opts.max_concurrent_reads.max(1)));
        let mut loads: Vec<BoxFuture<'_, Result<OffsetBlocks>>> = Vec::new();
        for read in plan.reads {
            let reader = self.clone();
            let sem = sem.clone();
            let meta2 = meta.clone();
            let blocks = read.blocks.clone();
            let range = read.range.clone();
            let budget = plan.budget.clone();
            let shared: SharedRead = async move {
                let _permit = sem
                    .acquire_owned()
                    .await
                    .map_err(|e| Error::TaskFailed { file_id: id, reason: e.to_string() })?;
                let (bytes, remote) = reader.read_range_sourced(&meta2, range.clone()).await?;
                let decode = |bytes: Bytes| {
                    let (meta2, blocks, range, budget) =
                        (meta2.clone(), blocks.clone(), range.clone(), budget.clone());
                    run_blocking(id, move || {
                        blocks
                            .iter()
                            .map(|&h| {
                                let key = meta2.block_key(h);
                                let s = (u64::from(key.offset) - range.start) as usize;
                                let stored = bytes
                                    .get(s..s + h.len as usize)
                                    .map(|x| bytes.slice_ref(x))
                                    .ok_or_else(|| {
                                        Error::corrupt(
                                            id,
                                            u64::from(key.offset),
                                            CorruptKind::Truncated,
                                            "ranged read shorter than planned",
                                        )
                                    })?;
                                if let Some(budget) = &budget {
                                    let extra =
                                        meta2.decoded_len(&stored).saturating_sub(u64::from(h.len));
                                    if extra > 0 && !budget(extra) {
                                        return Err(Error::OverBudget {
                                            file_id: id,
                                            bytes: extra,
                                        });
                                    }
                                }
                                meta2.decode_block(h, &stored).map(|b| (key.offset, b))
                            })
                            .collect::<Result<Vec<_>>>()
                            .map(Arc::new)
                    })
                };
                match decode(bytes).await {
                    // The remote cache's bytes do not check out: the object store's do.
                    Err(e) if remote && e.corrupt_kind().is_some() => {
                        decode(reader.store.get_range(id, range.clone()).await?).await
                    }
                    r => r,
                }
            }
            .boxed()
            .shared();
            // One future a read, not one a block. It claims all its blocks at once, then
            // fills the ones it claimed from the read, which starts only if it claimed one.
            // A block another request is loading is awaited after that, once this read's
            // claims are filled or dropped, so no request waits while holding a claim.
            let meta = meta.clone();
            loads.push(
                async move {
                    let mut got = Vec::with_capacity(read.blocks.len());
                    let mut mine = Vec::new();
                    let mut busy = Vec::new();
                    for (i, &h) in read.blocks.iter().enumerate() {
                        let key = meta.block_key(h);
                        match self.blocks.claim(&key) {
                            Claim::Hit(b) => got.push((key.offset, b)),
                            Claim::Load(guard) => mine.push((i, key, guard)),
                            Claim::Busy => busy.push((i, key)),
                        }
                    }
                    if !mine.is_empty() {
                        // On an error the guards drop unfilled: a waiter loads them.
                        let all = shared.clone().await?;
                        for (i, key, guard) in mine {
                            let b = planned_block(&all, i, key)?;
                            // Refused only when the entry went away meanwhile: still pinned.
                            let _ = guard.insert(b.clone());
                            got.push((key.offset, b));
                        }
                    }
                    for (i, key) in busy {
                        let shared = shared.clone();
                        let b = self
                            .blocks
                            .get_or_load(key, async move { planned_block(&shared.await?, i, key) })
                            .await?;
                        got.push((key.offset, b));
                    }
                    Ok(got)
                }
                .boxed(),
            );
        }
        let mut pinned: HashMap<u32, Block> = HashMap::with_capacity(num_blocks);
        for h in plan.cached {
            let key = meta.block_key(h);
            match self.blocks.get_hit(&key) {
                Some(b) => {
                    pinned.insert(key.offset, b);
                }
                None => {
                    let meta = meta.clone();
                    loads.push(
                        async move {
                            // Evicted since planning: load it alone.
                            let b = self.block(&meta, h).await?;
                            Ok(vec![(key.offset, b)])
                        }
                        .boxed(),
                    );
                }
            }
        }
        for got in futures::future::try_join_all(loads).await? {
            pinned.extend(got);
        }
        Ok(Prefetched { file_id: id, blocks: pinned })
    }
}

/// Block `i` of a planned read, as its decode returned it (in plan order).
fn planned_block(all: &[(u32, Block)], i: usize, key: crate::types::BlockKey) -> Result<Block> {
    all.get(i)
        .filter(|(o, _)| *o == key.offset)
        .map(|(_, b)| b.clone())
        .ok_or(Error::NotPrefetched { file_id: key.file_id, offset: u64::from(key.offset) })
}

/// Runs CPU work (decompression, parsing) on the blocking pool, off the I/O threads.
async fn run_blocking<T, F>(id: FileId, f: F) -> Result<T>
where
    F: FnOnce() -> Result<T> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::TaskFailed { file_id: id, reason: e.to_string() })?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Backend;

    #[test]
    fn reads_are_sized_for_the_backend() {
        let local = ReaderOptions::for_backend(&Backend::Local { root: "/tmp/x".into() });
        assert_eq!(local.max_read_size, LOCAL_MAX_READ_SIZE);
        assert_eq!(local.max_concurrent_reads, DEFAULT_MAX_CONCURRENT_READS);
        assert_eq!(ReaderOptions::for_backend(&Backend::S3), ReaderOptions::default());
        assert_eq!(ReaderOptions::default().max_read_size, DEFAULT_MAX_READ_SIZE);
        const { assert!(LOCAL_MAX_READ_SIZE < DEFAULT_MAX_READ_SIZE) };
    }
}
