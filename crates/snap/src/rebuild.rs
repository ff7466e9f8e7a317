//! Worker side: rebuild a snapshot from mem-data, a change set and the object store.

use std::collections::HashSet;
use std::sync::Arc;

use rcop_proto::coprocessor::KeyRange;
use rcop_proto::enginepb::{ChangeSet, TableCreate};
use rcop_sst::{
    CF_WRITE, CorruptKind, CorruptReason, FOOTER_SIZE, FileId, L0_FOOTER_SIZE, L0_MAGIC, NUM_CFS,
    PrefetchPlan, Prefetched, Section, SstReader, SstStore, Table, TableMeta, Tail,
};
use rcop_wire::MemData;

use crate::error::{Error, Result};
use crate::memtable::RowTable;
use crate::range::{InnerRange, ShardRange};
use crate::shard::merge_ranges;
use crate::snapshot::{Level, MemSource, Snapshot};
use crate::txn_files::TxnFilePlan;

/// Deepest level of the write CF, [`rcop_wire::CF_LEVELS`]`[0]` (upstream's `CF_LEVELS = [3, 2, 1]`: L1–L3 for the write
/// CF, L1–L2 for the lock CF, L1 for the extra CF).
pub const MAX_LEVEL: u32 = rcop_wire::CF_LEVELS[0];

/// The change-set property holding an encrypted shard's wrapped data key (upstream's
/// `ENCRYPTION_KEY`).
pub const ENCRYPTION_PROPERTY: &str = "_encryption";

/// Keyspace prefix length of API v2 keys (`x` and a 3-byte keyspace id): the only non-zero
/// `inner_key_off` a shard can have.
pub const KEYSPACE_PREFIX_LEN: u32 = 4;

/// Most files (L0 + leveled) a change set may list: [`rcop_wire::MAX_CHANGE_SET_FILES`], which
/// an envelope's decoder already counts before decoding. A real shard holds a few thousand.
const MAX_CHANGE_SET_FILES: usize = rcop_wire::MAX_CHANGE_SET_FILES;

/// Files opened, or prefetched, at once while rebuilding: a change set listing many files
/// never starts more object-store requests than this (the reader bounds each prefetch's own
/// ranged reads separately).
const MAX_CONCURRENT_FILES: usize = 32;

/// Runs `futs` with at most [`MAX_CONCURRENT_FILES`] in flight, keeping their order.
async fn bounded<T, F>(futs: impl IntoIterator<Item = F>) -> Result<Vec<T>>
where
    F: std::future::Future<Output = Result<T>>,
{
    use futures::{StreamExt, TryStreamExt};
    // Collected first: a stream over a lazy `map` closure makes the future fail rustc's
    // higher-ranked `Send` check when it is spawned on a multi-thread runtime.
    let futs: Vec<F> = futs.into_iter().collect();
    futures::stream::iter(futs).buffered(MAX_CONCURRENT_FILES).try_collect().await
}

/// What the worker rebuilds a snapshot from.
#[derive(Debug, Clone, Copy)]
pub struct RebuildRequest<'a> {
    /// The decoded mem-data of the request body.
    pub mem_data: &'a MemData,
    /// The decoded change set.
    pub change_set: &'a ChangeSet,
    /// The request ranges (outer keys).
    pub ranges: &'a [KeyRange],
    /// The read ts (`start_ts`): old-version blocks are fetched only for tables holding
    /// versions newer than it.
    pub read_ts: u64,
}

#[derive(Debug)]
struct PlannedTable {
    level: u32,
    plan: PrefetchPlan,
}

/// A validated rebuild whose byte needs are known before anything but metadata is fetched.
///
/// Reserve [`bytes_needed`](Self::bytes_needed) with the memory limiter, then call
/// [`fetch`](Self::fetch).
#[derive(Debug)]
pub struct RebuildPlan {
    reader: SstReader,
    range: ShardRange,
    rows: Option<Arc<RowTable>>,
    mem_bytes: u64,
    /// Write-CF tables of the L0 files, in change-set order (newest first).
    l0s: Vec<PrefetchPlan>,
    tables: Vec<PlannedTable>,
    /// Transaction files of mem-data v2 (read whole when fetched).
    txn_files: TxnFilePlan,
}

impl RebuildPlan {
    fn plans(&self) -> impl Iterator<Item = &PrefetchPlan> {
        self.l0s.iter().chain(self.tables.iter().map(|t| &t.plan))
    }

    /// Bytes the snapshot will hold: the shipped rows and every block the ranges need, in
    /// L0 files and leveled tables (stored sizes; cached blocks included). Transaction
    /// chunks are not in it (their sizes are learned as they are read): they are asked of
    /// the [block budget](Self::with_block_budget).
    pub fn bytes_needed(&self) -> u64 {
        self.mem_bytes + self.plans().map(PrefetchPlan::bytes_needed).sum::<u64>()
    }

    /// Bytes of the shipped memtable rows (slices of the request body), part of
    /// [`bytes_needed`](Self::bytes_needed).
    pub fn mem_bytes(&self) -> u64 {
        self.mem_bytes
    }

    /// Bytes that will be read from the object store (uncached blocks).
    pub fn bytes_to_fetch(&self) -> u64 {
        self.plans().map(PrefetchPlan::bytes_to_fetch).sum()
    }

    /// Asks `budget`, before each block is decompressed, for the bytes it adds to its stored
    /// size (see [`PrefetchPlan::with_budget`]): with [`bytes_needed`](Self::bytes_needed)
    /// reserved up front, the reservation then covers the decompressed blocks.
    #[must_use]
    pub fn with_block_budget(mut self, budget: rcop_sst::BlockBudget) -> Self {
        self.txn_files = self.txn_files.with_budget(Arc::clone(&budget));
        self.l0s = self.l0s.into_iter().map(|p| p.with_budget(Arc::clone(&budget))).collect();
        for t in &mut self.tables {
            t.plan = t.plan.clone().with_budget(Arc::clone(&budget));
        }
        self
    }

    /// Number of transaction chunks (mem-data v2 references) the fetch reads.
    pub fn num_txn_chunks(&self) -> usize {
        self.txn_files.num_chunks()
    }

    /// Number of L0 files and leveled tables in the plan.
    pub fn num_files(&self) -> (usize, usize) {
        (self.l0s.len(), self.tables.len())
    }

    /// Fetches and pins the planned blocks of every file, concurrently; returns the snapshot.
    ///
    /// # Errors
    ///
    /// [`Error::Sst`] (missing file, storage failure, corrupt bytes).
    pub async fn fetch(self) -> Result<Snapshot<Prefetched>> {
        let RebuildPlan { reader, range, rows, l0s, tables, txn_files, .. } = self;
        let pin = |plan: PrefetchPlan| {
            let reader = reader.clone();
            async move {
                let meta = plan.meta().clone();
                let pinned = reader.prefetch(plan).await?;
                Ok::<_, Error>(Table::new(meta, pinned))
            }
        };
        let levels_of: Vec<u32> = tables.iter().map(|t| t.level).collect();
        let (l0_tables, level_tables, txn_tables) = futures::future::try_join3(
            bounded(l0s.into_iter().map(pin)),
            bounded(tables.into_iter().map(|t| pin(t.plan))),
            txn_files.fetch(reader.store()),
        )
        .await?;
        let mut levels: Vec<Level<Prefetched>> = Vec::new();
        for (level, table) in levels_of.into_iter().zip(level_tables) {
            match levels.iter_mut().find(|l| l.level == level) {
                Some(l) => l.tables.push(table),
                None => levels.push(Level { level, tables: vec![table] }),
            }
        }
        levels.sort_by_key(|l| l.level);
        for l in &mut levels {
            l.tables.sort_by(|a, b| {
                a.meta().properties().smallest.cmp(&b.meta().properties().smallest)
            });
        }
        let mems = rows.into_iter().chain(txn_tables).map(MemSource::Rows).collect::<Vec<_>>();
        Ok(Snapshot::new(range, mems, l0_tables, levels))
    }
}

/// Validates a rebuild request, opens the metadata of the leveled tables that overlap the
/// ranges (from the metadata cache or with one ranged read each, concurrently) and plans
/// the block reads.
///
/// # Errors
///
/// [`Error::ChangeSet`] for a change set without a snapshot, a bad shard range, a bad level,
/// reversed or overlapping tables in a level, duplicate file ids; [`Error::MemRow`] /
/// [`Error::MemData`] for bad rows; [`Error::RangeOutOfShard`] for request ranges outside
/// the shard; [`Error::FileMismatch`] when a table's metadata disagrees with its
/// `TableCreate`; [`Error::Sst`] when metadata cannot be read.
pub async fn plan_rebuild(reader: &SstReader, req: RebuildRequest<'_>) -> Result<RebuildPlan> {
    let snap =
        req.change_set.snapshot.as_ref().ok_or(Error::change_set("no snapshot in change set"))?;
    if snap.l0_creates.len() + snap.table_creates.len() > MAX_CHANGE_SET_FILES {
        return Err(Error::change_set("change set lists more than 65536 files"));
    }
    if snap.inner_key_off != 0 && snap.inner_key_off != KEYSPACE_PREFIX_LEN {
        return Err(Error::change_set("inner_key_off is neither 0 nor 4"));
    }
    let range =
        ShardRange::new(snap.outer_start.clone(), snap.outer_end.clone(), snap.inner_key_off)
            .map_err(|_| Error::change_set("invalid shard range"))?;
    let mut ranges = Vec::with_capacity(req.ranges.len());
    for r in req.ranges {
        let inner = range.to_inner_range(&r.start, &r.end)?;
        if !inner.is_empty() {
            ranges.push(inner);
        }
    }
    let ranges = merge_ranges(ranges);
    let overlaps = |s: &[u8], b: &[u8]| ranges.iter().any(|r| r.overlaps(s, b));
    // A sender ships only the files that overlap a range (upstream filters every level so). A
    // file that does not — with the end of a range counted in, as a sender's own overlap test
    // may — claims bounds that are not its own: it would otherwise be dropped silently.
    let touches = |s: &[u8], b: &[u8]| {
        ranges
            .iter()
            .any(|r| b >= r.start.as_slice() && (r.end.is_empty() || s <= r.end.as_slice()))
    };
    let shard = range.inner();
    let inside_shard = |s: &[u8], b: &[u8]| {
        s >= shard.start.as_slice() && (shard.end.is_empty() || b < shard.end.as_slice())
    };

    // An encrypted shard's data key travels in the change set (upstream's `_encryption`
    // property); its files cannot be read without the master key.
    if snap.properties.as_ref().is_some_and(|p| p.keys.iter().any(|k| k == ENCRYPTION_PROPERTY)) {
        return Err(Error::Unsupported("an encrypted shard (the change set carries its data key)"));
    }
    let txn_files = TxnFilePlan::new(&req.mem_data.decode_txn_file_refs()?, range.inner())?;
    let rows = if req.mem_data.has_memtable() {
        Some(Arc::new(RowTable::from_rows(req.mem_data.rows(), &range)?))
    } else {
        None
    };
    let mem_bytes = req.mem_data.rows().as_bytes().len() as u64;

    let mut ids = HashSet::new();
    let mut l0_wanted = Vec::new();
    for l0 in &snap.l0_creates {
        if !ids.insert(l0.id) {
            return Err(Error::change_set_file(l0.id, "duplicate file id"));
        }
        check_bounds(l0.id, &l0.smallest, &l0.biggest, inside_shard, touches)?;
        if overlaps(&l0.smallest, &l0.biggest) {
            l0_wanted.push(l0);
        }
    }
    let mut by_level: Vec<Vec<&TableCreate>> = vec![Vec::new(); MAX_LEVEL as usize];
    for t in &snap.table_creates {
        if !ids.insert(t.id) {
            return Err(Error::change_set_file(t.id, "duplicate file id"));
        }
        match t.cf {
            0 => {}
            // A DAG reads the write CF only, and senders ship only its tables (upstream's
            // `write_cf_only`): a lock or extra CF table here is a corrupted CF tag.
            1 | 2 => {
                return Err(Error::change_set_file(
                    t.id,
                    "lock or extra CF table in a DAG snapshot",
                ));
            }
            _ => return Err(Error::change_set_file(t.id, "CF is not 0, 1 or 2")),
        }
        if t.level == 0 || t.level > MAX_LEVEL {
            return Err(Error::change_set_file(t.id, "write CF table level out of 1..=3"));
        }
        check_bounds(t.id, &t.smallest, &t.biggest, inside_shard, touches)?;
        if t.meta_offset == 0 {
            // Every SST has data before its metadata; an offset of 0 would make the worker
            // download the whole file as "metadata".
            return Err(Error::change_set_file(t.id, "meta_offset 0"));
        }
        if let Some(l) = by_level.get_mut(t.level as usize - 1) {
            l.push(t);
        }
    }
    let mut wanted: Vec<&TableCreate> = Vec::new();
    for level in &mut by_level {
        level.sort_by(|a, b| a.smallest.cmp(&b.smallest));
        for pair in level.windows(2) {
            if let [a, b] = pair
                && a.biggest >= b.smallest
            {
                return Err(Error::change_set_file(b.id, "overlapping tables in a level"));
            }
        }
        wanted.extend(level.iter().filter(|t| overlaps(&t.smallest, &t.biggest)));
    }
    let (l0_metas, metas) = futures::future::try_join(
        bounded(l0_wanted.iter().map(|l| open_l0_write_cf(reader, FileId(l.id), l.size))),
        bounded(wanted.iter().map(|t| async move {
            Ok::<_, Error>(reader.open(FileId(t.id), Some(t.meta_offset)).await?)
        })),
    )
    .await?;
    let plan_table = |meta: &Arc<TableMeta>| {
        let include_old =
            meta.properties().max_ts > req.read_ts && meta.num_blocks(Section::Old) > 0;
        let widened: Vec<(Vec<u8>, Vec<u8>)> =
            ranges.iter().map(|r| widen(meta, r, include_old)).collect();
        let refs: Vec<(&[u8], &[u8])> =
            widened.iter().map(|(s, e)| (s.as_slice(), e.as_slice())).collect();
        reader.plan_prefetch(meta, &refs, include_old)
    };
    let mut l0s = Vec::with_capacity(l0_wanted.len());
    for (l, meta) in l0_wanted.iter().zip(l0_metas) {
        let id = FileId(l.id);
        let p = meta.properties();
        if p.smallest != l.smallest || p.biggest != l.biggest {
            return Err(Error::FileMismatch { file_id: id, reason: "L0 key range" });
        }
        // The write CF and the trailer must fit in the declared size (checked exactly when
        // the metadata is first read).
        let end = u64::from(meta.base()) + meta.len() + L0_TRAILER;
        if end > u64::from(l.size) {
            return Err(Error::FileMismatch { file_id: id, reason: "L0 size" });
        }
        l0s.push(plan_table(&meta));
    }
    let mut tables = Vec::with_capacity(wanted.len());
    for (t, meta) in wanted.iter().zip(metas) {
        let p = meta.properties();
        if p.smallest != t.smallest || p.biggest != t.biggest {
            return Err(Error::FileMismatch { file_id: FileId(t.id), reason: "table key range" });
        }
        if meta.meta_offset() != t.meta_offset {
            return Err(Error::FileMismatch { file_id: FileId(t.id), reason: "meta offset" });
        }
        tables.push(PlannedTable { level: t.level, plan: plan_table(&meta) });
    }
    Ok(RebuildPlan { reader: reader.clone(), range, rows, mem_bytes, l0s, tables, txn_files })
}

/// The claims a change set makes about one file's bounds: in order, inside the shard, and
/// touching a request range.
fn check_bounds(
    id: u64,
    smallest: &[u8],
    biggest: &[u8],
    inside_shard: impl Fn(&[u8], &[u8]) -> bool,
    touches: impl Fn(&[u8], &[u8]) -> bool,
) -> Result<()> {
    if smallest > biggest {
        return Err(Error::change_set_file(id, "smallest key after biggest"));
    }
    if !inside_shard(smallest, biggest) {
        return Err(Error::change_set_file(id, "file bounds outside the shard range"));
    }
    if !touches(smallest, biggest) {
        return Err(Error::change_set_file(id, "file bounds overlap no request range"));
    }
    Ok(())
}

/// Bytes after the last column family of an L0 file: CF offsets and the L0 footer.
const L0_TRAILER: u64 = (NUM_CFS * 4 + L0_FOOTER_SIZE) as u64;

fn l0_corrupt(id: FileId, offset: u64, kind: CorruptKind, detail: &'static str) -> rcop_sst::Error {
    rcop_sst::Error::Corrupt { file_id: id, offset, reason: CorruptReason { kind, detail } }
}

/// Opens the write-CF table of L0 file `id` with ranged reads (trailer, the table's footer,
/// its metadata), through the metadata cache, instead of reading the whole file: the
/// blocks are then fetched like those of a leveled table.
async fn open_l0_write_cf(
    reader: &SstReader,
    id: FileId,
    declared_size: u32,
) -> Result<Arc<TableMeta>> {
    let store: Arc<SstStore> = reader.store().clone();
    let meta = reader
        .meta_cache()
        .get_or_load(id, async move {
            let (tail, start, size) = store.get_tail(id, Tail::Last(L0_TRAILER)).await?;
            if size != u64::from(declared_size) {
                return Err(l0_corrupt(
                    id,
                    0,
                    CorruptKind::Inconsistent,
                    "L0 size differs from the change set",
                ));
            }
            let word = |i: usize| -> rcop_sst::Result<u32> {
                tail.get(i * 4..i * 4 + 4)
                    .and_then(|b| b.try_into().ok())
                    .map(u32::from_le_bytes)
                    .ok_or_else(|| l0_corrupt(id, start, CorruptKind::Truncated, "L0 trailer"))
            };
            if tail.len() as u64 != L0_TRAILER {
                return Err(l0_corrupt(id, start, CorruptKind::Truncated, "L0 trailer"));
            }
            // 3 × u32 CF starts | u64 snap version | u32 CF count | u32 magic.
            if word(5)? as usize != NUM_CFS || word(6)? != L0_MAGIC {
                return Err(l0_corrupt(id, start, CorruptKind::BadMagic, "L0 footer"));
            }
            let (ws, we) = (u64::from(word(CF_WRITE)?), u64::from(word(CF_WRITE + 1)?));
            if ws > we || we > start {
                return Err(l0_corrupt(id, start, CorruptKind::OutOfBounds, "L0 cf offsets"));
            }
            if ws == we {
                return Err(l0_corrupt(
                    id,
                    start,
                    CorruptKind::Inconsistent,
                    "L0 file without write CF data",
                ));
            }
            let table_len = we - ws;
            let footer_at =
                we.checked_sub(FOOTER_SIZE as u64).filter(|&f| f >= ws).ok_or_else(|| {
                    l0_corrupt(id, ws, CorruptKind::Truncated, "L0 write CF shorter than a footer")
                })?;
            let footer_bytes = store.get_range(id, footer_at..we).await?;
            let footer = TableMeta::footer_of(id, &footer_bytes, table_len)?;
            let index = u64::from(footer.index_offset);
            let meta_bytes = store.get_range(id, ws + index..we).await?;
            let base = u32::try_from(ws)
                .map_err(|_| l0_corrupt(id, ws, CorruptKind::OutOfBounds, "L0 cf offset"))?;
            Ok(Arc::new(TableMeta::from_tail(id, base, meta_bytes, index, table_len)?))
        })
        .await?;
    Ok(meta)
}

/// Widens `r` so the planned blocks include the neighbours an iterator touches at the
/// range's edges: the block before the first (a reverse step past the start) and the block
/// after the last (a forward step past the end, an old-version lookup that ends a block).
fn widen(meta: &TableMeta, r: &InnerRange, include_old: bool) -> (Vec<u8>, Vec<u8>) {
    let mut start = r.start.clone();
    let mut end = r.end.clone();
    let mut key = Vec::new();
    let sections: &[Section] =
        if include_old { &[Section::Data, Section::Old] } else { &[Section::Data] };
    for &section in sections {
        let n = meta.num_blocks(section);
        if n == 0 {
            continue;
        }
        let b = meta.blocks_for_range(section, &r.start, &r.end);
        if let Some(before) = b.start.checked_sub(1) {
            meta.block_first_key(section, before, &mut key);
            if key < start {
                start.clone_from(&key);
            }
        }
        if b.end < n && !end.is_empty() {
            meta.block_first_key(section, b.end, &mut key);
            // Just past the first key of block `b.end`: the plan then includes it.
            key.push(0);
            if key > end {
                end.clone_from(&key);
            }
        }
    }
    (start, end)
}

#[cfg(test)]
mod send_check {
    use super::*;

    /// Compile-time check: a rebuild can be spawned on a multi-thread runtime.
    #[test]
    fn rebuild_futures_are_send() {
        fn is_send<T: Send>(_: &T) {}
        fn check(reader: &'static SstReader, req: RebuildRequest<'static>) {
            let fut = async move { plan_rebuild(reader, req).await?.fetch().await };
            is_send(&fut);
        }
        let _ = check;
    }
}
