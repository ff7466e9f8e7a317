//! Memtables: the storage node's concurrent write-CF memtable and the worker's immutable
//! table of shipped rows.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use bytes::Bytes;
use crossbeam_skiplist::SkipMap;
use crossbeam_skiplist::map::Entry;

use crate::error::{Error, Result};
use crate::range::ShardRange;

/// Key of one version in a memtable: inner key ascending, then version (commit ts)
/// descending, so the newest version of a key comes first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemKey {
    pub(crate) key: Bytes,
    pub(crate) version: u64,
}

impl Ord for MemKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key).then_with(|| other.version.cmp(&self.version))
    }
}

impl PartialOrd for MemKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One version's payload: the transaction's start ts and the value (empty = MVCC delete).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemValue {
    pub(crate) start_ts: u64,
    pub(crate) value: Bytes,
}

/// The storage node's write-CF memtable: every committed version of every key, ordered by
/// (inner key, commit ts descending).
///
/// A lock-free skip list (`crossbeam-skiplist`): writers insert while readers iterate
/// without taking a lock, and a reader's cursor stays valid across concurrent inserts.
/// A `RwLock<BTreeMap>` would block writers for the whole of a long export or scan.
#[derive(Debug, Default)]
pub struct MemTable {
    map: SkipMap<MemKey, MemValue>,
    size: AtomicUsize,
}

/// Bytes counted per memtable entry on top of key and value.
const ENTRY_OVERHEAD: usize = 48;

impl MemTable {
    /// An empty memtable.
    pub fn new() -> Self {
        MemTable::default()
    }

    /// Inserts one committed version of inner key `key`. An empty value is an MVCC delete.
    /// Writing the same (key, commit_ts) again replaces it.
    pub fn put(&self, key: &[u8], start_ts: u64, commit_ts: u64, value: &[u8]) {
        self.size.fetch_add(key.len() + value.len() + ENTRY_OVERHEAD, AtomicOrdering::Relaxed);
        self.map.insert(
            MemKey { key: Bytes::copy_from_slice(key), version: commit_ts },
            MemValue { start_ts, value: Bytes::copy_from_slice(value) },
        );
    }

    /// Approximate bytes held.
    pub fn size(&self) -> usize {
        self.size.load(AtomicOrdering::Relaxed)
    }

    /// True when no version was written.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of versions held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Every version in order: `(inner key, commit ts, start ts, value)`.
    pub(crate) fn for_each(
        &self,
        mut f: impl FnMut(&[u8], u64, u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        for e in self.map.iter() {
            f(&e.key().key, e.key().version, e.value().start_ts, &e.value().value)?;
        }
        Ok(())
    }

    /// First entry at or after (key, newest).
    pub(crate) fn seek(&self, key: &[u8]) -> Option<Entry<'_, MemKey, MemValue>> {
        let probe = MemKey { key: Bytes::copy_from_slice(key), version: u64::MAX };
        self.map.lower_bound(Bound::Included(&probe))
    }

    /// Newest-version entry of the last key `< end` (`end` empty: the last key).
    pub(crate) fn seek_lt(&self, end: &[u8]) -> Option<Entry<'_, MemKey, MemValue>> {
        let last = if end.is_empty() {
            self.map.back()
        } else {
            let probe = MemKey { key: Bytes::copy_from_slice(end), version: u64::MAX };
            self.map.upper_bound(Bound::Excluded(&probe))
        }?;
        self.newest_of(&last)
    }

    /// The newest-version entry of `e`'s key.
    pub(crate) fn newest_of<'a>(
        &'a self,
        e: &Entry<'a, MemKey, MemValue>,
    ) -> Option<Entry<'a, MemKey, MemValue>> {
        let probe = MemKey { key: e.key().key.clone(), version: u64::MAX };
        self.map.lower_bound(Bound::Included(&probe))
    }
}

/// One shipped row of the worker's memtable (inner key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RowEntry {
    pub(crate) key: Bytes,
    pub(crate) start_ts: u64,
    pub(crate) commit_ts: u64,
    pub(crate) value: Bytes,
}

/// The worker's memtable: the rows of mem-data, validated and in order, sharing the
/// request body's buffer (no copy).
#[derive(Debug, Clone, Default)]
pub struct RowTable {
    pub(crate) rows: Vec<RowEntry>,
    bytes: usize,
}

impl RowTable {
    /// Builds the table from decoded mem-data rows of the shard `range`.
    ///
    /// # Errors
    ///
    /// [`Error::MemRow`] when a row's key lacks the shard's keyspace prefix or lies outside
    /// the shard, or rows are not strictly ordered by (key ascending, commit ts descending).
    pub fn from_rows(rows: &rcop_wire::Rows, range: &ShardRange) -> Result<Self> {
        let mut out: Vec<RowEntry> = Vec::with_capacity(rows.len());
        let data = rows.as_bytes();
        for (index, row) in rows.iter().enumerate() {
            if !range.contains_outer(row.key) {
                return Err(Error::MemRow { index, reason: "key outside the shard range" });
            }
            let inner = range.to_inner(row.key).ok_or(Error::MemRow {
                index,
                reason: "key without the shard's keyspace prefix",
            })?;
            if let Some(prev) = out.last() {
                let ord = prev.key.as_ref().cmp(inner).then(row.commit_ts.cmp(&prev.commit_ts));
                if ord != Ordering::Less {
                    return Err(Error::MemRow {
                        index,
                        reason: "rows not in (key ascending, commit ts descending) order",
                    });
                }
            }
            out.push(RowEntry {
                key: data.slice_ref(inner),
                start_ts: row.start_ts,
                commit_ts: row.commit_ts,
                value: data.slice_ref(row.value),
            });
        }
        Ok(RowTable { rows: out, bytes: rows.key_bytes() + rows.value_bytes() })
    }

    /// A table of `rows`, already in (key ascending, commit ts descending) order, holding
    /// `bytes` of keys and values.
    #[cfg(feature = "store")]
    pub(crate) fn from_entries(rows: Vec<RowEntry>, bytes: usize) -> Self {
        RowTable { rows, bytes }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Key and value bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Index of the first row with key `>= key`.
    pub(crate) fn seek(&self, key: &[u8]) -> usize {
        self.rows.partition_point(|r| r.key.as_ref() < key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_newest_first() {
        let m = MemTable::new();
        m.put(b"b", 1, 2, b"b2");
        m.put(b"a", 1, 5, b"a5");
        m.put(b"a", 6, 9, b"");
        m.put(b"a", 1, 3, b"a3");
        let mut seen = Vec::new();
        m.for_each(|k, c, s, v| {
            seen.push((k.to_vec(), c, s, v.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            seen,
            vec![
                (b"a".to_vec(), 9, 6, vec![]),
                (b"a".to_vec(), 5, 1, b"a5".to_vec()),
                (b"a".to_vec(), 3, 1, b"a3".to_vec()),
                (b"b".to_vec(), 2, 1, b"b2".to_vec()),
            ]
        );
        assert_eq!(m.seek(b"a").unwrap().key().version, 9);
        assert_eq!(m.seek_lt(b"b").unwrap().key().version, 9);
        assert_eq!(&m.seek_lt(b"").unwrap().key().key[..], b"b");
        assert!(m.seek_lt(b"a").is_none());
    }

    #[test]
    fn row_table_checks_order_and_range() {
        let range = ShardRange::new(&b"x\0\0\x01"[..], &b"x\0\0\x02"[..], 4).unwrap();
        let rows = |rs: &[(&[u8], u64)]| {
            let mut buf = Vec::new();
            let mut w = rcop_wire::RowsWriter::new(&mut buf);
            for (k, c) in rs {
                w.push(k, 1, *c, b"v");
            }
            w.finish();
            rcop_wire::Rows::decode(Bytes::from(buf)).unwrap()
        };
        let t = RowTable::from_rows(
            &rows(&[(b"x\0\0\x01a", 5), (b"x\0\0\x01a", 3), (b"x\0\0\x01b", 9)]),
            &range,
        )
        .unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(&t.rows[2].key[..], b"b");
        assert_eq!((t.seek(b"a"), t.seek(b"b"), t.seek(b"c")), (0, 2, 3));
        for bad in [
            vec![(&b"x\0\0\x01b"[..], 5), (&b"x\0\0\x01a"[..], 3)],
            vec![(&b"x\0\0\x01a"[..], 3), (&b"x\0\0\x01a"[..], 3)],
            vec![(&b"x\0\0\x01a"[..], 3), (&b"x\0\0\x01a"[..], 4)],
            vec![(&b"x\0\0\x02a"[..], 3)],
        ] {
            assert!(matches!(RowTable::from_rows(&rows(&bad), &range), Err(Error::MemRow { .. })));
        }
    }
}
