//! The storage node's shard: write-CF memtable, lock CF, flush to L0, leveled compaction,
//! lock checks and export.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use bytes::Bytes;
use rcop_proto::coprocessor::KeyRange;
use rcop_proto::enginepb::{self, ChangeSet};
#[cfg(feature = "store")]
use rcop_sst::SstStore;
use rcop_sst::{
    BuilderOptions, CF_WRITE, FileId, InMemory, L0Builder, L0Table, NewValue, Table, TableBuilder,
};
use rcop_wire::MemDataWriter;

use crate::error::{Error, Result};
use crate::estimate::estimate_range_blocks_size;
use crate::lock::{CommittedRead, Lock, LockCheck, LockTable};
use crate::memtable::MemTable;
use crate::range::{InnerRange, ShardRange};
use crate::scan::user_meta;
use crate::snapshot::{Level, MemSource, Snapshot};

/// Allocates unique file ids; share one between the shards of a store.
#[derive(Debug, Clone)]
pub struct FileIds(Arc<AtomicU64>);

impl FileIds {
    /// Ids starting at `first` (upstream takes them from PD's TSO).
    pub fn starting_at(first: u64) -> Self {
        FileIds(Arc::new(AtomicU64::new(first)))
    }

    /// The next id.
    pub fn next_id(&self) -> FileId {
        FileId(self.0.fetch_add(1, Ordering::Relaxed))
    }
}

impl Default for FileIds {
    fn default() -> Self {
        FileIds::starting_at(1)
    }
}

/// Knobs of a [`Shard`].
///
/// Non-exhaustive: outside this crate, start from [`ShardConfig::new`] and assign the public
/// fields.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ShardConfig {
    /// Shard (region) id.
    pub id: u64,
    /// Shard version.
    pub ver: u64,
    /// Key range.
    pub range: ShardRange,
    /// Block size of the SSTs written (default 64 KiB, upstream's).
    pub block_size: usize,
    /// Target size of one leveled SST (default 16 MiB, upstream's).
    pub max_table_size: usize,
    /// Deepest level compaction writes to (default 3).
    pub max_level: u32,
}

impl ShardConfig {
    /// A configuration with default sizes for the shard `id` over
    /// `[outer_start, outer_end)` with `inner_key_off` bytes of keyspace prefix.
    ///
    /// # Errors
    ///
    /// As [`ShardRange::new`].
    pub fn new(
        id: u64,
        outer_start: impl Into<Bytes>,
        outer_end: impl Into<Bytes>,
        inner_key_off: u32,
    ) -> Result<Self> {
        Ok(ShardConfig {
            id,
            ver: 1,
            range: ShardRange::new(outer_start, outer_end, inner_key_off)?,
            block_size: rcop_sst::DEFAULT_BLOCK_SIZE,
            max_table_size: rcop_sst::DEFAULT_MAX_TABLE_SIZE,
            max_level: 3,
        })
    }

    fn builder_options(&self, level: u32) -> BuilderOptions {
        BuilderOptions::for_level(level)
            .with_block_size(self.block_size)
            .with_max_table_size(self.max_table_size)
    }
}

/// An L0 file of the shard.
#[derive(Debug, Clone)]
struct L0File {
    id: FileId,
    size: u32,
    /// Write-CF table (`None` when the file has no write-CF data).
    write: Option<Table<InMemory>>,
}

/// What the shard is made of at one moment. Replaced as a whole (copy on write) by flush
/// and compaction; memtables are shared and concurrently writable.
#[derive(Debug, Clone)]
struct State {
    /// Active memtable first, then frozen ones being flushed, newest first.
    mems: Vec<Arc<MemTable>>,
    /// Newest first.
    l0s: Vec<L0File>,
    /// L1.. in order.
    levels: Vec<Level<InMemory>>,
}

/// Counts of a shard's parts.
///
/// Non-exhaustive: outside this crate, start from [`ShardStats::default`] to make one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ShardStats {
    /// Versions in memtables.
    pub mem_versions: usize,
    /// L0 files.
    pub l0_files: usize,
    /// Tables per level, L1 first.
    pub level_tables: [usize; 8],
}

/// A shard of the storage node: MVCC writes into a memtable, TiKV lock records in a lock
/// CF, flushes to L0 files and compactions into leveled SSTs written through an optional
/// object store (the `store` feature). Not crash-durable: files are kept in memory as well.
///
/// Keys given to and returned by the shard are outer keys.
#[derive(Debug)]
pub struct Shard {
    cfg: ShardConfig,
    state: RwLock<Arc<State>>,
    /// Lock CF: inner key → encoded lock record.
    locks: RwLock<BTreeMap<Vec<u8>, Bytes>>,
    ids: FileIds,
    /// Where flush and compaction upload their files, if anywhere.
    #[cfg(feature = "store")]
    store: Option<Arc<SstStore>>,
    sequence: AtomicU64,
    max_ts: AtomicU64,
    maintenance: tokio::sync::Mutex<()>,
}

impl Shard {
    /// A shard whose files live only in memory.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a `max_level` of 0 or above 3 (upstream's write-CF levels).
    pub fn new(cfg: ShardConfig) -> Result<Self> {
        Self::build(cfg, FileIds::default())
    }

    /// A shard that also uploads every file it writes to `store`, with ids from `ids`.
    ///
    /// # Errors
    ///
    /// As [`Shard::new`].
    #[cfg(feature = "store")]
    pub fn with_store(cfg: ShardConfig, store: Arc<SstStore>, ids: FileIds) -> Result<Self> {
        Ok(Shard { store: Some(store), ..Self::build(cfg, ids)? })
    }

    fn build(cfg: ShardConfig, ids: FileIds) -> Result<Self> {
        if cfg.max_level == 0 || cfg.max_level > rcop_wire::CF_LEVELS[0] {
            return Err(Error::InvalidArgument(
                "max_level must be in 1..=3 (upstream's write CF levels)",
            ));
        }
        let levels = (1..=cfg.max_level).map(|level| Level { level, tables: Vec::new() }).collect();
        Ok(Shard {
            state: RwLock::new(Arc::new(State {
                mems: vec![Arc::new(MemTable::new())],
                l0s: Vec::new(),
                levels,
            })),
            cfg,
            locks: RwLock::new(BTreeMap::new()),
            ids,
            #[cfg(feature = "store")]
            store: None,
            sequence: AtomicU64::new(0),
            max_ts: AtomicU64::new(0),
            maintenance: tokio::sync::Mutex::new(()),
        })
    }

    /// The shard id.
    pub fn id(&self) -> u64 {
        self.cfg.id
    }

    /// The shard range.
    pub fn range(&self) -> &ShardRange {
        &self.cfg.range
    }

    /// Meta sequence: bumped by every flush and compaction.
    pub fn sequence(&self) -> u64 {
        self.sequence.load(Ordering::Acquire)
    }

    fn state(&self) -> Arc<State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn inner_key<'k>(&self, key: &'k [u8]) -> Result<&'k [u8]> {
        if !self.cfg.range.contains_outer(key) {
            return Err(Error::RangeOutOfShard {
                start: key.to_vec(),
                end: key.to_vec(),
                shard_start: self.cfg.range.outer_start().to_vec(),
                shard_end: self.cfg.range.outer_end().to_vec(),
            });
        }
        self.cfg.range.to_inner(key).ok_or(Error::InvalidArgument("key without the shard prefix"))
    }

    /// Writes a committed version of `key`: the transaction `start_ts` committed at
    /// `commit_ts`. An empty value is an MVCC delete.
    ///
    /// # Errors
    ///
    /// [`Error::RangeOutOfShard`] for a key outside the shard.
    pub fn put(&self, key: &[u8], start_ts: u64, commit_ts: u64, value: &[u8]) -> Result<()> {
        let inner = self.inner_key(key)?;
        // Hold the state's read lock while inserting, so a flush cannot freeze the memtable
        // between reading it and writing to it.
        let guard = self.state.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(active) = guard.mems.first() {
            active.put(inner, start_ts, commit_ts, value);
        }
        self.max_ts.fetch_max(commit_ts, Ordering::Relaxed);
        Ok(())
    }

    /// Writes an MVCC delete of `key` (an empty value) committed at `commit_ts`.
    ///
    /// # Errors
    ///
    /// As [`Shard::put`].
    pub fn delete(&self, key: &[u8], start_ts: u64, commit_ts: u64) -> Result<()> {
        self.put(key, start_ts, commit_ts, &[])
    }

    /// Stores `lock` on `key` in the lock CF (replacing any lock there).
    ///
    /// # Errors
    ///
    /// [`Error::RangeOutOfShard`]; the errors of [`Lock::encode`].
    pub fn put_lock(&self, key: &[u8], lock: &Lock) -> Result<()> {
        let record = lock.encode()?;
        self.put_lock_record(key, &record)
    }

    /// Stores an encoded lock record on `key` as is (what a TiKV apply would write).
    ///
    /// # Errors
    ///
    /// [`Error::RangeOutOfShard`].
    pub fn put_lock_record(&self, key: &[u8], record: &[u8]) -> Result<()> {
        let inner = self.inner_key(key)?.to_vec();
        self.locks
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(inner, Bytes::copy_from_slice(record));
        Ok(())
    }

    /// Removes the lock on `key` (commit or rollback); returns whether there was one.
    ///
    /// # Errors
    ///
    /// [`Error::RangeOutOfShard`].
    pub fn remove_lock(&self, key: &[u8]) -> Result<bool> {
        let inner = self.inner_key(key)?;
        Ok(self.locks.write().unwrap_or_else(PoisonError::into_inner).remove(inner).is_some())
    }

    /// Counts of the shard's parts.
    pub fn stats(&self) -> ShardStats {
        let st = self.state();
        let mut level_tables = [0; 8];
        for (slot, l) in level_tables.iter_mut().zip(&st.levels) {
            *slot = l.tables.len();
        }
        ShardStats {
            mem_versions: st.mems.iter().map(|m| m.len()).sum(),
            l0_files: st.l0s.len(),
            level_tables,
        }
    }

    /// The files of the shard per level: `(0, id)` for L0 files (newest first), then
    /// `(level, id)` for leveled tables in key order.
    pub fn files(&self) -> Vec<(u32, FileId)> {
        let st = self.state();
        let l0 = st.l0s.iter().map(|f| (0, f.id));
        let levels =
            st.levels.iter().flat_map(|l| l.tables.iter().map(|t| (l.level, t.meta().file_id())));
        l0.chain(levels).collect()
    }

    /// An immutable snapshot of the shard's current data (memtables are shared: versions
    /// committed later may appear, which a read at an older ts ignores).
    pub fn snapshot(&self) -> Snapshot<InMemory> {
        snapshot_of(&self.cfg.range, &self.state())
    }

    /// Normalizes request ranges: checked against the shard, in inner keys, sorted, with
    /// overlapping ranges merged.
    fn inner_ranges(&self, ranges: &[KeyRange]) -> Result<Vec<InnerRange>> {
        let mut out = Vec::with_capacity(ranges.len());
        for r in ranges {
            let inner = self.cfg.range.to_inner_range(&r.start, &r.end)?;
            if !inner.is_empty() {
                out.push(inner);
            }
        }
        Ok(merge_ranges(out))
    }

    /// Checks the host's in-memory locks and then the lock CF over `ranges` at
    /// `check.read_ts` (upstream §2.6). Returns the committed locks whose values the read
    /// must see, sorted by key.
    ///
    /// # Errors
    ///
    /// [`Error::Locked`] / [`Error::WriteConflict`] for the first blocking lock;
    /// [`Error::LockRecord`] for a lock CF record that does not decode; range errors.
    pub fn check_locks(
        &self,
        ranges: &[KeyRange],
        check: &LockCheck,
        mem_locks: &dyn LockTable,
    ) -> Result<Vec<CommittedRead>> {
        let inner = self.inner_ranges(ranges)?;
        self.check_locks_inner(&inner, check, mem_locks)
    }

    fn check_locks_inner(
        &self,
        ranges: &[InnerRange],
        check: &LockCheck,
        mem_locks: &dyn LockTable,
    ) -> Result<Vec<CommittedRead>> {
        let mut reads = Vec::new();
        if check.isolation == rcop_proto::kvrpcpb::IsolationLevel::Rc {
            return Ok(reads);
        }
        let mut start = Vec::new();
        let mut end = Vec::new();
        let mut key = Vec::new();
        for r in ranges {
            self.cfg.range.outer_key_into(&r.start, &mut start);
            if r.end.is_empty() {
                end.clear();
                end.extend_from_slice(self.cfg.range.outer_end());
            } else {
                self.cfg.range.outer_key_into(&r.end, &mut end);
            }
            mem_locks.for_each_lock(&start, &end, &mut |k, lock| {
                if let Some(read) = check.check(k, lock)? {
                    reads.push(read);
                }
                Ok(())
            })?;
            let locks = self.locks.read().unwrap_or_else(PoisonError::into_inner);
            let upper =
                if r.end.is_empty() { Bound::Unbounded } else { Bound::Excluded(r.end.as_slice()) };
            for (k, record) in locks.range::<[u8], _>((Bound::Included(r.start.as_slice()), upper))
            {
                let lock = Lock::decode(record)?;
                self.cfg.range.outer_key_into(k, &mut key);
                if let Some(read) = check.check(&key, &lock)? {
                    reads.push(read);
                }
            }
        }
        reads.sort_by(|a, b| a.key.cmp(&b.key));
        reads.dedup_by(|a, b| a.key == b.key);
        Ok(reads)
    }

    /// Exports what a request over `ranges` at `check.read_ts` must read (upstream
    /// §3.2–3.3): checks locks first, then streams the memtable rows (newest version not
    /// newer than the read ts per key, MVCC deletes as empty values; every version when the
    /// read ts is `u64::MAX`) into `mem_data`, and returns the change set of the files that
    /// overlap the ranges. The caller finishes `mem_data`.
    ///
    /// # Errors
    ///
    /// The errors of [`check_locks`](Self::check_locks); [`Error::Sst`] if a file is
    /// unreadable.
    pub fn export(
        &self,
        ranges: &[KeyRange],
        check: &LockCheck,
        mem_locks: &dyn LockTable,
        mem_data: &mut MemDataWriter<'_>,
    ) -> Result<ChangeSet> {
        let inner = self.inner_ranges(ranges)?;
        let committed = self.check_locks_inner(&inner, check, mem_locks)?;
        let st = self.state();
        write_mem_rows(&self.cfg.range, &st, &inner, check.read_ts, &committed, mem_data)?;
        Ok(self.change_set_of(&st, &inner))
    }

    /// The change set of the files overlapping `ranges` (no lock check, no rows).
    ///
    /// # Errors
    ///
    /// Range errors.
    pub fn change_set(&self, ranges: &[KeyRange]) -> Result<ChangeSet> {
        let inner = self.inner_ranges(ranges)?;
        Ok(self.change_set_of(&self.state(), &inner))
    }

    fn change_set_of(&self, st: &State, ranges: &[InnerRange]) -> ChangeSet {
        let overlaps = |s: &[u8], b: &[u8]| ranges.iter().any(|r| r.overlaps(s, b));
        let mut l0_creates = Vec::new();
        for f in &st.l0s {
            let Some(w) = &f.write else { continue };
            let p = w.meta().properties();
            if overlaps(&p.smallest, &p.biggest) {
                l0_creates.push(enginepb::L0Create {
                    id: f.id.0,
                    smallest: p.smallest.clone(),
                    biggest: p.biggest.clone(),
                    size: f.size,
                });
            }
        }
        let mut table_creates = Vec::new();
        for l in &st.levels {
            for t in &l.tables {
                let p = t.meta().properties();
                if overlaps(&p.smallest, &p.biggest) {
                    table_creates.push(enginepb::TableCreate {
                        id: t.meta().file_id().0,
                        level: l.level,
                        cf: CF_WRITE as i32,
                        smallest: p.smallest.clone(),
                        biggest: p.biggest.clone(),
                        meta_offset: t.meta().meta_offset(),
                    });
                }
            }
        }
        let sequence = self.sequence();
        ChangeSet {
            shard_id: self.cfg.id,
            shard_ver: self.cfg.ver,
            sequence,
            snapshot: Some(enginepb::Snapshot {
                outer_start: self.cfg.range.outer_start().clone(),
                outer_end: self.cfg.range.outer_end().clone(),
                properties: Some(enginepb::Properties {
                    shard_id: self.cfg.id,
                    keys: Vec::new(),
                    values: Vec::new(),
                }),
                l0_creates,
                table_creates,
                base_version: 0,
                data_sequence: sequence,
                blob_creates: Vec::new(),
                max_ts: self.max_ts.load(Ordering::Relaxed),
                inner_key_off: self.cfg.range.inner_key_off(),
            }),
        }
    }

    /// The block-size estimate of `ranges` (upstream §2.5): uncompressed bytes of the
    /// write-CF L1+ blocks the ranges overlap.
    ///
    /// # Errors
    ///
    /// Range errors.
    pub fn estimated_range_blocks_size(&self, ranges: &[KeyRange]) -> Result<u64> {
        let mut inner = Vec::with_capacity(ranges.len());
        for r in ranges {
            inner.push(self.cfg.range.to_inner_range(&r.start, &r.end)?);
        }
        Ok(estimate_range_blocks_size(&self.state().levels, &inner))
    }

    /// Freezes the active memtable and writes it as an L0 file (uploaded to the store when
    /// there is one). Returns the new file's id, `None` when there was nothing to flush.
    ///
    /// # Errors
    ///
    /// [`Error::Sst`] when building or uploading fails; the memtable then stays frozen and
    /// readable, and the next flush retries it.
    pub async fn flush(&self) -> Result<Option<FileId>> {
        let _m = self.maintenance.lock().await;
        {
            let mut g = self.state.write().unwrap_or_else(PoisonError::into_inner);
            if g.mems.first().is_some_and(|m| !m.is_empty()) {
                let mut st = State::clone(&g);
                st.mems.insert(0, Arc::new(MemTable::new()));
                *g = Arc::new(st);
            }
        }
        // Flush the oldest frozen memtable.
        let st = self.state();
        let Some(frozen) = st.mems.get(1..).and_then(|m| m.last()).cloned() else {
            return Ok(None);
        };
        let id = self.ids.next_id();
        let snap_version = self.sequence.load(Ordering::Acquire) + 1;
        let mut b = L0Builder::new(id, snap_version, self.cfg.builder_options(0));
        frozen.for_each(|k, commit_ts, start_ts, v| {
            let um = user_meta(start_ts, commit_ts);
            b.add(
                CF_WRITE,
                k,
                &NewValue { meta: 0, version: commit_ts, user_meta: &um, value: v },
            )?;
            Ok(())
        })?;
        let bytes = b.finish()?;
        let size = u32::try_from(bytes.len())
            .map_err(|_| Error::InvalidArgument("L0 file larger than 4 GiB"))?;
        self.upload(id, &bytes).await?;
        let l0 = L0Table::open(id, bytes)?;
        let file = L0File { id, size, write: l0.cf(CF_WRITE).cloned() };
        let mut g = self.state.write().unwrap_or_else(PoisonError::into_inner);
        let mut st = State::clone(&g);
        st.mems.retain(|m| !Arc::ptr_eq(m, &frozen));
        st.l0s.insert(0, file);
        *g = Arc::new(st);
        self.sequence.fetch_add(1, Ordering::AcqRel);
        Ok(Some(id))
    }

    /// Compacts `level` into `level + 1`: every L0 file (for `level` 0) or every table of
    /// `level`, merged with the tables of the next level, rewritten as tables of at most
    /// `max_table_size`. All versions are kept. Returns the ids of the new tables.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `level + 1` exceeds `max_level`; [`Error::Sst`].
    pub async fn compact(&self, level: u32) -> Result<Vec<FileId>> {
        let _m = self.maintenance.lock().await;
        let target = level + 1;
        if target > self.cfg.max_level {
            return Err(Error::InvalidArgument("no level below the deepest one"));
        }
        let st = self.state();
        let mut sources: Vec<&Table<InMemory>> = Vec::new();
        if level == 0 {
            sources.extend(st.l0s.iter().filter_map(|f| f.write.as_ref()));
        } else if let Some(l) = st.levels.get(level as usize - 1) {
            sources.extend(l.tables.iter());
        }
        if sources.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(l) = st.levels.get(target as usize - 1) {
            sources.extend(l.tables.iter());
        }
        // Every version of every key, newest first within a key.
        let mut all: BTreeMap<(Bytes, std::cmp::Reverse<u64>), rcop_sst::Value> = BTreeMap::new();
        for t in &sources {
            let mut it = t.iter();
            it.seek_to_first()?;
            while it.valid() {
                let key = Bytes::copy_from_slice(it.key());
                let mut ts = u64::MAX;
                while let Some(v) = it.value_at(ts)? {
                    let version = v.version;
                    all.entry((key.clone(), std::cmp::Reverse(version))).or_insert(v);
                    match version.checked_sub(1) {
                        Some(next) => ts = next,
                        None => break,
                    }
                }
                it.next()?;
            }
        }
        let opts = self.cfg.builder_options(target);
        let mut outputs: Vec<(FileId, Bytes)> = Vec::new();
        let mut builder: Option<TableBuilder> = None;
        let mut last_key: Option<&Bytes> = None;
        for ((key, _), v) in &all {
            let new_key = last_key != Some(key);
            if new_key && let Some(b) = builder.take_if(|b| b.is_full()) {
                outputs.push((b.file_id(), b.finish()?));
            }
            let b = builder.get_or_insert_with(|| TableBuilder::new(self.ids.next_id(), opts));
            b.add(
                key,
                &NewValue {
                    meta: v.meta & !rcop_sst::BIT_HAS_OLD_VERSION,
                    version: v.version,
                    user_meta: &v.user_meta,
                    value: &v.value,
                },
            )?;
            last_key = Some(key);
        }
        if let Some(b) = builder {
            outputs.push((b.file_id(), b.finish()?));
        }
        let mut tables = Vec::with_capacity(outputs.len());
        for (id, bytes) in outputs {
            self.upload(id, &bytes).await?;
            tables.push(Table::open_in_memory(id, bytes)?);
        }
        let ids = tables.iter().map(|t| t.meta().file_id()).collect();
        let mut g = self.state.write().unwrap_or_else(PoisonError::into_inner);
        let mut next = State::clone(&g);
        if level == 0 {
            // Only the L0 files that were merged; a flush may have added newer ones since.
            let merged: Vec<FileId> = st.l0s.iter().map(|f| f.id).collect();
            next.l0s.retain(|f| !merged.contains(&f.id));
        } else if let Some(l) = next.levels.get_mut(level as usize - 1) {
            l.tables.clear();
        }
        if let Some(l) = next.levels.get_mut(target as usize - 1) {
            l.tables = tables;
        }
        *g = Arc::new(next);
        self.sequence.fetch_add(1, Ordering::AcqRel);
        Ok(ids)
    }

    /// Uploads file `id` to the store, when the shard has one.
    #[cfg(feature = "store")]
    async fn upload(&self, id: FileId, bytes: &Bytes) -> Result<()> {
        if let Some(store) = &self.store {
            store.put(id, bytes.clone()).await?;
        }
        Ok(())
    }

    /// Without the `store` feature files live in memory only: nothing to upload.
    #[cfg(not(feature = "store"))]
    async fn upload(&self, _id: FileId, _bytes: &Bytes) -> Result<()> {
        Ok(())
    }
}

fn snapshot_of(range: &ShardRange, st: &State) -> Snapshot<InMemory> {
    Snapshot::new(
        range.clone(),
        st.mems.iter().map(|m| MemSource::Skip(m.clone())).collect(),
        st.l0s.iter().filter_map(|f| f.write.clone()).collect(),
        st.levels.clone(),
    )
}

/// Sorts ranges by start and merges overlapping or touching ones.
pub(crate) fn merge_ranges(mut ranges: Vec<InnerRange>) -> Vec<InnerRange> {
    ranges.sort_by(|a, b| a.start.cmp(&b.start));
    let mut out: Vec<InnerRange> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if last.end.is_empty() || r.start <= last.end => {
                if !last.end.is_empty() && (r.end.is_empty() || r.end > last.end) {
                    last.end = r.end;
                }
            }
            _ => out.push(r),
        }
    }
    out
}

/// Streams the memtable rows of `ranges` at `read_ts` (see [`Shard::export`]).
fn write_mem_rows(
    range: &ShardRange,
    st: &State,
    ranges: &[InnerRange],
    read_ts: u64,
    committed: &[CommittedRead],
    w: &mut MemDataWriter<'_>,
) -> Result<()> {
    let mem_only: Snapshot<InMemory> = Snapshot::new(
        range.clone(),
        st.mems.iter().map(|m| MemSource::Skip(m.clone())).collect(),
        Vec::new(),
        Vec::new(),
    );
    if read_ts == u64::MAX {
        // Every version, as upstream ships for a max-ts read.
        let mut rows: BTreeMap<(Vec<u8>, std::cmp::Reverse<u64>), (u64, Bytes)> = BTreeMap::new();
        for m in &st.mems {
            m.for_each(|k, commit_ts, start_ts, v| {
                if ranges.iter().any(|r| r.contains(k)) {
                    rows.entry((k.to_vec(), std::cmp::Reverse(commit_ts)))
                        .or_insert((start_ts, Bytes::copy_from_slice(v)));
                }
                Ok(())
            })?;
        }
        for c in committed {
            if let Some(inner) = range.to_inner(&c.key) {
                rows.insert((inner.to_vec(), std::cmp::Reverse(c.ts)), (c.ts, c.value.clone()));
            }
        }
        let mut key = Vec::new();
        for ((k, commit_ts), (start_ts, v)) in &rows {
            range.outer_key_into(k, &mut key);
            w.push(&key, *start_ts, commit_ts.0, v);
        }
        return Ok(());
    }
    let mut scanner = mem_only.scanner(read_ts);
    let mut pending = committed.iter().peekable();
    for r in ranges {
        scanner.start_inner(r.clone(), false)?;
        while let Some(found) = scanner.peek()? {
            let key = scanner.current_key();
            // Committed locks before this key, then the key itself (a committed lock's
            // value is newer than every committed version of its key).
            while let Some(c) = pending.next_if(|c| c.key.as_ref() < key) {
                w.push(&c.key, c.ts, c.ts, &c.value);
            }
            if let Some(c) = pending.next_if(|c| c.key.as_ref() == key) {
                w.push(&c.key, c.ts, c.ts, &c.value);
            } else if let Some(v) = found {
                let (start_ts, value) = scanner.visible(v);
                w.push(scanner.current_key(), start_ts, v.commit_ts, value);
            }
            scanner.advance()?;
        }
        // Committed locks after the last memtable key of this range.
        let mut end = Vec::new();
        range.outer_key_into(&r.end, &mut end);
        while let Some(c) = pending.next_if(|c| r.end.is_empty() || c.key.as_ref() < end.as_slice())
        {
            w.push(&c.key, c.ts, c.ts, &c.value);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcop_sst::Compression;

    /// The storage-node half on its own: flush and compaction down to the deepest level keep
    /// the files in memory, with the per-level compression this build has (Zstd below L1
    /// only with the `zstd` feature, LZ4 otherwise), and reads see every layer.
    #[tokio::test]
    async fn flush_and_compact_to_the_deepest_level_in_memory() {
        let cfg =
            ShardConfig { max_level: 3, ..ShardConfig::new(1, &b"a"[..], &b"b"[..], 0).unwrap() };
        let shard = Shard::new(cfg).unwrap();
        for i in 0..200u32 {
            shard.put(format!("a{i:04}").as_bytes(), 10, 11, b"old").unwrap();
        }
        assert!(shard.flush().await.unwrap().is_some());
        for level in 0..3 {
            assert_eq!(shard.compact(level).await.unwrap().len(), 1, "level {level}");
        }
        shard.put(b"a0007", 20, 21, b"new").unwrap();
        assert!(shard.flush().await.unwrap().is_some());

        let st = shard.state();
        let deepest = &st.levels[2].tables;
        assert_eq!(deepest.len(), 1);
        let want = if cfg!(feature = "zstd") { Compression::Zstd } else { Compression::Lz4 };
        assert_eq!(deepest[0].meta().footer().compression, want);
        assert_eq!(BuilderOptions::compression_for_level(3), want);

        let snap = shard.snapshot();
        assert_eq!(snap.get(b"a0007", 15).unwrap().as_deref(), Some(&b"old"[..]));
        assert_eq!(snap.get(b"a0007", 30).unwrap().as_deref(), Some(&b"new"[..]));
        assert_eq!(snap.get(b"a0199", 30).unwrap().as_deref(), Some(&b"old"[..]));
        assert_eq!(snap.get(b"a0200", 30).unwrap(), None);
    }
}
