//! An immutable MVCC snapshot of a shard: memtables, L0 tables and levels.

use std::sync::Arc;

use bytes::Bytes;
use rcop_sst::{BlockSource, Table};

use crate::error::Result;
use crate::memtable::{MemTable, RowTable};
use crate::range::{InnerRange, ShardRange};
use crate::scan::{Cursor, Scanner};

/// One memtable of a snapshot.
#[derive(Debug, Clone)]
pub enum MemSource {
    /// The storage node's concurrent memtable (all versions).
    Skip(Arc<MemTable>),
    /// The worker's shipped rows.
    Rows(Arc<RowTable>),
}

/// One level (L1+) of a snapshot: tables sorted by key, not overlapping.
#[derive(Debug, Clone)]
pub struct Level<S> {
    /// The level number (≥ 1).
    pub level: u32,
    /// The tables, sorted by smallest key.
    pub tables: Vec<Table<S>>,
}

/// An immutable MVCC snapshot: what a read at some ts sees.
///
/// `S` is where L0 and level tables read their blocks from: the storage node keeps its
/// files in memory ([`rcop_sst::InMemory`]); the worker pins the blocks its request ranges
#[cfg_attr(
    feature = "store",
    doc = "need ([`rcop_sst::Prefetched`]), for L0 files as for leveled tables."
)]
#[cfg_attr(
    not(feature = "store"),
    doc = "need (`rcop_sst::Prefetched`, with the `store` feature), for L0 files as for leveled tables."
)]
#[derive(Debug, Clone)]
pub struct Snapshot<S> {
    pub(crate) range: ShardRange,
    pub(crate) mems: Vec<MemSource>,
    pub(crate) l0s: Vec<Table<S>>,
    pub(crate) levels: Vec<Level<S>>,
}

impl<S: BlockSource> Snapshot<S> {
    /// Assembles a snapshot. `mems` and `l0s` are newest first, `levels` by ascending
    /// level; level tables sorted by key.
    pub fn new(
        range: ShardRange,
        mems: Vec<MemSource>,
        l0s: Vec<Table<S>>,
        levels: Vec<Level<S>>,
    ) -> Self {
        Snapshot { range, mems, l0s, levels }
    }

    /// The shard range.
    pub fn range(&self) -> &ShardRange {
        &self.range
    }

    /// The memtables, newest first.
    pub fn mems(&self) -> &[MemSource] {
        &self.mems
    }

    /// The write-CF tables of the L0 files, newest first.
    pub fn l0s(&self) -> &[Table<S>] {
        &self.l0s
    }

    /// The levels.
    pub fn levels(&self) -> &[Level<S>] {
        &self.levels
    }

    /// A scanner reading at `read_ts`. Position it with [`Scanner::start`].
    pub fn scanner(&self, read_ts: u64) -> Scanner<'_, S> {
        Scanner::new(self, read_ts)
    }

    /// The value of outer key `key` at `read_ts`: the newest version not newer than it;
    /// `None` when there is none or it is a delete. Keys outside the shard are not found.
    ///
    /// # Errors
    ///
    /// Block reads ([`Error::Sst`](crate::Error::Sst)).
    pub fn get(&self, key: &[u8], read_ts: u64) -> Result<Option<Bytes>> {
        if !self.range.contains_outer(key) {
            return Ok(None);
        }
        let Some(inner) = self.range.to_inner(key) else {
            return Ok(None);
        };
        let mut best: Option<(u64, Bytes)> = None;
        let mut offer = |version: u64, value: &Bytes| {
            if best.as_ref().is_none_or(|(v, _)| version > *v) {
                best = Some((version, value.clone()));
            }
        };
        for m in &self.mems {
            match m {
                MemSource::Skip(t) => {
                    let mut e = t.seek(inner);
                    while let Some(entry) = e {
                        if entry.key().key.as_ref() != inner {
                            break;
                        }
                        if entry.key().version <= read_ts {
                            offer(entry.key().version, &entry.value().value);
                            break;
                        }
                        e = entry.next();
                    }
                }
                MemSource::Rows(t) => {
                    let i = t.seek(inner);
                    if let Some(r) = t.rows[i..]
                        .iter()
                        .take_while(|r| r.key.as_ref() == inner)
                        .find(|r| r.commit_ts <= read_ts)
                    {
                        offer(r.commit_ts, &r.value);
                    }
                }
            }
        }
        for t in &self.l0s {
            if let Some(v) = table_get(t, inner, read_ts)? {
                offer(v.0, &v.1);
            }
        }
        for level in &self.levels {
            let i =
                level.tables.partition_point(|t| t.meta().properties().biggest.as_ref() < inner);
            if let Some(t) = level.tables.get(i)
                && t.meta().properties().smallest.as_ref() <= inner
                && let Some(v) = table_get(t, inner, read_ts)?
            {
                offer(v.0, &v.1);
            }
        }
        Ok(best.and_then(|(_, v)| (!v.is_empty()).then_some(v)))
    }

    /// Cursors over every source, newest first.
    pub(crate) fn cursors(&self) -> Vec<Cursor<'_, S>> {
        let mut out = Vec::with_capacity(self.mems.len() + self.l0s.len() + self.levels.len());
        for m in &self.mems {
            out.push(Cursor::mem(m));
        }
        for t in &self.l0s {
            out.push(Cursor::l0(t));
        }
        for l in &self.levels {
            out.push(Cursor::level(&l.tables));
        }
        out
    }

    /// Checks an outer request range against the shard and converts it.
    ///
    /// # Errors
    ///
    /// As [`ShardRange::to_inner_range`].
    pub fn inner_range(&self, start: &[u8], end: &[u8]) -> Result<InnerRange> {
        self.range.to_inner_range(start, end)
    }
}

/// Point get in one table: `(version, value)`, deletes (kvengine or MVCC) as empty values.
fn table_get<S: BlockSource>(
    t: &Table<S>,
    key: &[u8],
    read_ts: u64,
) -> Result<Option<(u64, Bytes)>> {
    let props = t.meta().properties();
    if key < props.smallest.as_ref() || key > props.biggest.as_ref() {
        return Ok(None);
    }
    Ok(t.get(key, read_ts)?.map(|v| {
        let value = if v.meta & rcop_sst::BIT_DELETE != 0 { Bytes::new() } else { v.value };
        (v.version, value)
    }))
}
