//! Helpers for a storage node that exports its own snapshot (a tikv-server fork with its own
//! memtable and SSTs): rows checked against the export contract as they are written, and
//! the change set built from the host's file list.
//!
//! The contract a host's export follows (what the worker's rebuild assumes):
//!
//! 1. **Outer keys.** Row keys and request ranges are outer keys (API v2: `'x'`, a 3-byte
//!    keyspace id, then the user key); file bounds in the change set are inner keys (the
//!    outer key without its first `inner_key_off` bytes).
//! 2. **Order.** Rows ascend by key; versions of one key follow in descending commit ts.
//! 3. **Visibility.** Per key only the newest version with `commit_ts <= start_ts` is
//!    shipped — an MVCC delete as an empty value, never dropped — except when
//!    `start_ts == u64::MAX`, which ships every version. Rows outside the request ranges
//!    are not shipped.
//! 4. **Locks first.** Before exporting, the host checks its in-memory locks and its lock CF
//!    over every request range at `start_ts` (TiKV's rules, `resolved_locks` bypassed) and
//!    answers `locked` for a blocking lock: the worker never sees locks.
//! 5. **Committed locks read through.** A lock whose ts is in `committed_locks` is the
//!    transaction's committed write: its value (empty for a delete) is shipped as the key's
//!    row, versioned at the lock's ts, instead of older versions.
//! 6. **Files.** The change set lists the write-CF L0 files and leveled tables overlapping
//!    any request range, each with its level, CF, inner-key bounds and (tables) the meta
//!    offset; the snapshot's outer range is the shard's and covers every request range.

use bytes::Bytes;
use rcop_proto::enginepb::{ChangeSet, L0Create, Properties, Snapshot, TableCreate};

use crate::error::{Error, Result};
use crate::mem_data::MemDataWriter;

/// A [`MemDataWriter`] that enforces rules 2 and 3 of the export contract (order, one
/// visible version per key unless every version is asked for) as rows are pushed, so a host
/// bug is an error on the storage node rather than a wrong answer on the worker.
///
/// ```
/// use rcop_wire::{ExportRows, MemData, MemDataFormat, MemDataWriter};
///
/// let mut buf = Vec::new();
/// let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
/// let mut rows = ExportRows::new(&mut w, 100);
/// rows.push(b"x\0\0\x01a", 90, 95, b"v1")?;
/// rows.push(b"x\0\0\x01b", 90, 95, b"")?; // a delete is shipped, as an empty value
/// assert!(rows.push(b"x\0\0\x01a", 90, 96, b"v2").is_err()); // out of order
/// assert!(rows.push(b"x\0\0\x01c", 90, 101, b"v").is_err()); // committed after start_ts
/// w.finish()?;
/// assert_eq!(MemData::decode(buf.into())?.rows().len(), 2);
/// # Ok::<(), rcop_wire::Error>(())
/// ```
#[derive(Debug)]
pub struct ExportRows<'w, 'a> {
    writer: &'w mut MemDataWriter<'a>,
    start_ts: u64,
    last_key: Vec<u8>,
    last_commit_ts: u64,
    rows: u64,
}

impl<'w, 'a> ExportRows<'w, 'a> {
    /// Checks rows for a read at `start_ts` as they go into `writer`.
    pub fn new(writer: &'w mut MemDataWriter<'a>, start_ts: u64) -> Self {
        ExportRows { writer, start_ts, last_key: Vec::new(), last_commit_ts: 0, rows: 0 }
    }

    /// Rows pushed so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Pushes one row: `key` (outer), the version's `start_ts` and `commit_ts`, its value
    /// (empty for an MVCC delete).
    ///
    /// # Errors
    ///
    /// [`Error::Contract`] for a key below the previous one, a second version of a key
    /// (unless `start_ts` is `u64::MAX`, and then only in descending commit ts), a version
    /// committed after the read, or a commit ts below its start ts.
    pub fn push(&mut self, key: &[u8], start_ts: u64, commit_ts: u64, value: &[u8]) -> Result<()> {
        let broken = |rule: &'static str| Err(Error::Contract { rule, row: self.rows });
        if commit_ts > self.start_ts {
            return broken("a row committed after the read's start_ts");
        }
        if commit_ts < start_ts {
            return broken("a row whose commit_ts is below its start_ts");
        }
        if self.rows > 0 {
            match key.cmp(&self.last_key) {
                std::cmp::Ordering::Less => return broken("row keys must ascend"),
                std::cmp::Ordering::Equal if self.start_ts != u64::MAX => {
                    return broken("one version per key unless start_ts is u64::MAX");
                }
                std::cmp::Ordering::Equal if commit_ts >= self.last_commit_ts => {
                    return broken("versions of a key must descend by commit_ts");
                }
                _ => {}
            }
        }
        self.writer.push(key, start_ts, commit_ts, value);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.last_commit_ts = commit_ts;
        self.rows += 1;
        Ok(())
    }
}

/// The shard a change set describes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShardInfo {
    /// The shard (region) id.
    pub id: u64,
    /// The shard version (epoch version).
    pub ver: u64,
    /// The snapshot's meta sequence.
    pub sequence: u64,
    /// Outer start key of the shard.
    pub outer_start: Bytes,
    /// Outer end key of the shard (empty: unbounded).
    pub outer_end: Bytes,
    /// Bytes of an outer key that the inner key drops (4 under API v2).
    pub inner_key_off: u32,
    /// The shard's max ts (0 if unknown).
    pub max_ts: u64,
}

impl ShardInfo {
    /// A shard `id` of version `ver` at `sequence` over `[outer_start, outer_end)`, inner
    /// keys `inner_key_off` bytes shorter than outer ones.
    pub fn new(
        id: u64,
        ver: u64,
        sequence: u64,
        outer_start: impl Into<Bytes>,
        outer_end: impl Into<Bytes>,
        inner_key_off: u32,
    ) -> Self {
        ShardInfo {
            id,
            ver,
            sequence,
            outer_start: outer_start.into(),
            outer_end: outer_end.into(),
            inner_key_off,
            max_ts: 0,
        }
    }

    /// With the shard's max ts.
    pub fn with_max_ts(mut self, max_ts: u64) -> Self {
        self.max_ts = max_ts;
        self
    }
}

/// One of the host's SST files, with inner-key bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileInfo {
    /// The file id (its object key derives from it).
    pub id: u64,
    /// Smallest inner key.
    pub smallest: Bytes,
    /// Biggest inner key (inclusive).
    pub biggest: Bytes,
    /// File size in bytes (L0 files).
    pub size: u32,
    /// Offset of the metadata section (leveled tables).
    pub meta_offset: u32,
}

impl FileInfo {
    /// A file `id` covering inner keys `[smallest, biggest]`.
    pub fn new(id: u64, smallest: impl Into<Bytes>, biggest: impl Into<Bytes>) -> Self {
        FileInfo { id, smallest: smallest.into(), biggest: biggest.into(), size: 0, meta_offset: 0 }
    }

    /// With the file size (L0 files).
    pub fn with_size(mut self, size: u32) -> Self {
        self.size = size;
        self
    }

    /// With the metadata offset (leveled tables).
    pub fn with_meta_offset(mut self, meta_offset: u32) -> Self {
        self.meta_offset = meta_offset;
        self
    }
}

/// Builds the `enginepb.ChangeSet` of an export from the host's file list: only files that
/// overlap a request range are kept (rule 6), bounds are checked.
///
/// ```
/// use rcop_proto::coprocessor::KeyRange;
/// use rcop_wire::{ChangeSetBuilder, FileInfo, ShardInfo};
///
/// let shard = ShardInfo::new(7, 1, 42, &b"x\0\0\x01"[..], &b"x\0\0\x02"[..], 4);
/// let ranges = [KeyRange { start: b"x\0\0\x01t1".to_vec().into(), end: b"x\0\0\x01t2".to_vec().into() }];
/// let mut b = ChangeSetBuilder::new(shard, &ranges)?;
/// b.l0(FileInfo::new(10, &b"t1a"[..], &b"t1z"[..]).with_size(4096))?;
/// b.table(1, 0, FileInfo::new(11, &b"t3"[..], &b"t4"[..]).with_meta_offset(900))?; // no overlap
/// let cs = b.build();
/// let snap = cs.snapshot.unwrap();
/// assert_eq!((snap.l0_creates.len(), snap.table_creates.len()), (1, 0));
/// # Ok::<(), rcop_wire::Error>(())
/// ```
#[derive(Debug)]
pub struct ChangeSetBuilder {
    shard: ShardInfo,
    /// Request ranges as inner keys; an empty end is unbounded.
    ranges: Vec<(Vec<u8>, Vec<u8>)>,
    l0s: Vec<L0Create>,
    tables: Vec<TableCreate>,
}

/// Deepest level of each column family (write, lock, extra): upstream's `CF_LEVELS`.
pub const CF_LEVELS: [u32; 3] = [3, 2, 1];

/// Deepest leveled-table level of any column family (the write CF's L3).
pub const MAX_TABLE_LEVEL: u32 = CF_LEVELS[0];

impl ChangeSetBuilder {
    /// A change set of `shard` for a request over `ranges` (outer keys).
    ///
    /// # Errors
    ///
    /// [`Error::Contract`] when a range is not inside the shard or shorter than the inner
    /// key offset.
    pub fn new(shard: ShardInfo, ranges: &[rcop_proto::coprocessor::KeyRange]) -> Result<Self> {
        let off = shard.inner_key_off as usize;
        let broken = |rule: &'static str, row: usize| Error::Contract { rule, row: row as u64 };
        let mut inner = Vec::with_capacity(ranges.len());
        for (i, r) in ranges.iter().enumerate() {
            let below_start = r.start.as_ref() < shard.outer_start.as_ref();
            let past_end = !shard.outer_end.is_empty()
                && (r.end.is_empty() || r.end.as_ref() > shard.outer_end.as_ref());
            if below_start || past_end {
                return Err(broken("a request range outside the shard", i));
            }
            let cut = |k: &[u8]| k.get(off..).map(<[u8]>::to_vec);
            let start = cut(&r.start)
                .ok_or_else(|| broken("a range key shorter than the inner key offset", i))?;
            let end = if r.end.is_empty() {
                Vec::new()
            } else {
                cut(&r.end)
                    .ok_or_else(|| broken("a range key shorter than the inner key offset", i))?
            };
            inner.push((start, end));
        }
        Ok(ChangeSetBuilder { shard, ranges: inner, l0s: Vec::new(), tables: Vec::new() })
    }

    fn overlaps(&self, f: &FileInfo) -> bool {
        self.ranges.iter().any(|(start, end)| {
            f.biggest.as_ref() >= start.as_slice()
                && (end.is_empty() || f.smallest.as_ref() < end.as_slice())
        })
    }

    fn check(f: &FileInfo) -> Result<()> {
        if f.smallest > f.biggest {
            return Err(Error::Contract {
                rule: "a file whose smallest key is above its biggest",
                row: f.id,
            });
        }
        Ok(())
    }

    /// Adds an L0 file (its write CF) if it overlaps a range; returns whether it did.
    ///
    /// # Errors
    ///
    /// [`Error::Contract`] for bounds out of order.
    pub fn l0(&mut self, f: FileInfo) -> Result<bool> {
        Self::check(&f)?;
        if !self.overlaps(&f) {
            return Ok(false);
        }
        self.l0s.push(L0Create {
            id: f.id,
            smallest: f.smallest,
            biggest: f.biggest,
            size: f.size,
        });
        Ok(true)
    }

    /// Adds a leveled table of column family `cf` (0 write, 1 lock, 2 extra) at `level`
    /// (1..=[`CF_LEVELS`]`[cf]`) if it is a write-CF table that overlaps a range; returns
    /// whether it did. Lock and extra CF tables are checked and left out, as upstream's
    /// `write_cf_only` export does: a worker refuses a DAG snapshot that lists them.
    ///
    /// # Errors
    ///
    /// [`Error::Contract`] for a level or CF out of range or bounds out of order.
    pub fn table(&mut self, level: u32, cf: i32, f: FileInfo) -> Result<bool> {
        Self::check(&f)?;
        let deepest = usize::try_from(cf)
            .ok()
            .and_then(|cf| CF_LEVELS.get(cf))
            .ok_or(Error::Contract { rule: "a column family outside 0..=2", row: f.id })?;
        if !(1..=*deepest).contains(&level) {
            return Err(Error::Contract {
                rule: "a table level outside its column family's levels",
                row: f.id,
            });
        }
        if cf != 0 || !self.overlaps(&f) {
            return Ok(false);
        }
        self.tables.push(TableCreate {
            id: f.id,
            level,
            cf,
            smallest: f.smallest,
            biggest: f.biggest,
            meta_offset: f.meta_offset,
        });
        Ok(true)
    }

    /// The change set.
    pub fn build(self) -> ChangeSet {
        let s = self.shard;
        ChangeSet {
            shard_id: s.id,
            shard_ver: s.ver,
            sequence: s.sequence,
            snapshot: Some(Snapshot {
                outer_start: s.outer_start,
                outer_end: s.outer_end,
                properties: Some(Properties {
                    shard_id: s.id,
                    keys: Vec::new(),
                    values: Vec::new(),
                }),
                l0_creates: self.l0s,
                table_creates: self.tables,
                base_version: 0,
                data_sequence: s.sequence,
                blob_creates: Vec::new(),
                max_ts: s.max_ts,
                inner_key_off: s.inner_key_off,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use rcop_proto::coprocessor::KeyRange;

    use super::*;
    use crate::mem_data::{MemData, MemDataFormat};

    fn kr(a: &[u8], b: &[u8]) -> KeyRange {
        KeyRange { start: Bytes::copy_from_slice(a), end: Bytes::copy_from_slice(b) }
    }

    #[test]
    fn every_version_only_for_u64_max_and_descending() {
        let mut buf = Vec::new();
        let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
        let mut rows = ExportRows::new(&mut w, u64::MAX);
        rows.push(b"k", 5, 9, b"new").unwrap();
        rows.push(b"k", 1, 3, b"old").unwrap();
        assert!(rows.push(b"k", 1, 3, b"dup").is_err());
        assert!(rows.push(b"k", 1, 4, b"up").is_err());
        assert!(rows.push(b"j", 1, 2, b"back").is_err());
        rows.push(b"l", 7, 6, b"").unwrap_err(); // commit below start
        rows.push(b"l", 6, 7, b"").unwrap();
        assert_eq!(rows.rows(), 3);
        w.finish().unwrap();
        assert_eq!(MemData::decode(buf.into()).unwrap().rows().len(), 3);
    }

    #[test]
    fn change_set_keeps_overlapping_files_and_checks_bounds() {
        let shard =
            ShardInfo::new(3, 2, 9, &b"x\0\0\x01"[..], &b"x\0\0\x02"[..], 4).with_max_ts(77);
        let ranges = [kr(b"x\0\0\x01b", b"x\0\0\x01d"), kr(b"x\0\0\x01m", b"x\0\0\x01n")];
        let mut b = ChangeSetBuilder::new(shard.clone(), &ranges).unwrap();
        assert!(b.l0(FileInfo::new(1, &b"a"[..], &b"b"[..])).unwrap(), "touches the start");
        assert!(!b.l0(FileInfo::new(2, &b"d"[..], &b"e"[..])).unwrap(), "end is exclusive");
        assert!(b.table(1, 0, FileInfo::new(3, &b"c"[..], &b"z"[..]).with_meta_offset(5)).unwrap());
        assert!(!b.table(2, 0, FileInfo::new(4, &b"e"[..], &b"l"[..])).unwrap());
        assert!(b.table(0, 0, FileInfo::new(5, &b"a"[..], &b"z"[..])).is_err());
        assert!(b.table(1, 3, FileInfo::new(5, &b"a"[..], &b"z"[..])).is_err());
        assert!(b.l0(FileInfo::new(6, &b"z"[..], &b"a"[..])).is_err());
        let cs = b.build();
        let snap = cs.snapshot.as_ref().unwrap();
        assert_eq!((cs.shard_id, cs.shard_ver, cs.sequence), (3, 2, 9));
        assert_eq!(snap.l0_creates.iter().map(|f| f.id).collect::<Vec<_>>(), [1]);
        assert_eq!(
            snap.table_creates.iter().map(|f| (f.id, f.meta_offset)).collect::<Vec<_>>(),
            [(3, 5)]
        );
        assert_eq!((snap.inner_key_off, snap.max_ts), (4, 77));
        // Ranges must lie in the shard.
        assert!(ChangeSetBuilder::new(shard.clone(), &[kr(b"x\0\0\x00", b"x\0\0\x01a")]).is_err());
        assert!(ChangeSetBuilder::new(shard, &[kr(b"x\0\0\x01a", b"")]).is_err());
    }
}
