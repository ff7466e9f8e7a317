//! The scan trait: the only way data reaches the engine.
//!
//! The engine never does I/O. It asks a [`ScanSource`] for batches of `(key, value)` pairs in
//! key order (or reverse key order) within one request range at a time, filled into a
//! caller-owned [`KvBatch`] arena, so a cached scan allocates nothing per row. The MVCC
//! snapshot crate implements this trait over SST files; [`MemStore`] implements it over a
//! sorted in-memory table for tests, the corpus and the benches.

use rcop_proto::{errorpb, kvrpcpb};

/// Why a scan source could not produce data. Each kind maps to its own field of
/// `coprocessor.Response`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// A lock blocks the read at the request's `start_ts` (→ `Response.locked`).
    #[error("key is locked by transaction {}", .0.lock_version)]
    Locked(Box<kvrpcpb::LockInfo>),
    /// The region moved, split or lost its leader (→ `Response.region_error`).
    #[error("region error: {}", .0.message)]
    Region(Box<errorpb::Error>),
    /// The storage failed (I/O, corruption, deadline) (→ `Response.other_error`).
    #[error("storage error: {0}")]
    Storage(String),
}

/// Whether a range has more pairs after the current batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanStatus {
    /// The range may hold more pairs; call [`ScanSource::next_batch`] again.
    More,
    /// The range is exhausted.
    Done,
}

/// A reusable batch of `(key, value)` pairs stored back to back in one byte arena.
///
/// Keys are raw user keys exactly as stored (with the API v2 keyspace prefix when one is in
/// use); values are row values.
#[derive(Debug, Default, Clone)]
pub struct KvBatch {
    arena: Vec<u8>,
    /// Per pair: (end of key, end of value) in `arena`; the key starts at the previous value end.
    ends: Vec<(usize, usize)>,
}

impl KvBatch {
    /// An empty batch.
    pub fn new() -> Self {
        KvBatch::default()
    }

    /// An empty batch with room for `pairs` pairs of `bytes` bytes in total.
    pub fn with_capacity(pairs: usize, bytes: usize) -> Self {
        KvBatch { arena: Vec::with_capacity(bytes), ends: Vec::with_capacity(pairs) }
    }

    /// Removes every pair, keeping the allocations.
    pub fn clear(&mut self) {
        self.arena.clear();
        self.ends.clear();
    }

    /// Appends one pair.
    #[inline]
    pub fn push(&mut self, key: &[u8], value: &[u8]) {
        self.arena.extend_from_slice(key);
        let key_end = self.arena.len();
        self.arena.extend_from_slice(value);
        self.ends.push((key_end, self.arena.len()));
    }

    /// Number of pairs.
    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when the batch holds no pair.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Total bytes of keys and values.
    pub fn byte_len(&self) -> usize {
        self.arena.len()
    }

    /// Pair `i` as `(key, value)`; `None` when `i >= len()`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<(&[u8], &[u8])> {
        let start = match i.checked_sub(1) {
            Some(p) => self.ends.get(p)?.1,
            None => 0,
        };
        let &(key_end, value_end) = self.ends.get(i)?;
        Some((self.arena.get(start..key_end)?, self.arena.get(key_end..value_end)?))
    }

    /// Iterates the pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// A half-open key interval `[start, end)` of raw user keys. An empty `end` means "no upper
/// bound".
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyRange {
    /// Inclusive lower bound.
    pub start: Vec<u8>,
    /// Exclusive upper bound; empty for unbounded.
    pub end: Vec<u8>,
}

impl KeyRange {
    /// Builds a range from its bounds.
    pub fn new(start: impl Into<Vec<u8>>, end: impl Into<Vec<u8>>) -> Self {
        KeyRange { start: start.into(), end: end.into() }
    }

    /// True when `key` lies in the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start.as_slice() && (self.end.is_empty() || key < self.end.as_slice())
    }
}

/// A source of `(key, value)` pairs read at the request's snapshot.
///
/// The engine scans the request ranges one at a time: [`ScanSource::start`] positions the
/// source on one range, then [`ScanSource::next_batch`] fills batches until it reports
/// [`ScanStatus::Done`]. Pairs come in ascending key order, or descending when `desc`.
/// Implementations must not return keys outside the range.
///
/// The engine derives the range it reports for paging from the last key it consumed, as
/// TiKV does: `[range start, last key + 0x00)` forward, `[last key, range end)` backward.
pub trait ScanSource {
    /// Positions the source at the beginning (or, when `desc`, the end) of `range`.
    fn start(&mut self, range: &KeyRange, desc: bool) -> Result<(), ScanError>;

    /// Appends up to `max_pairs` pairs of the current range to `out` (which the caller has
    /// cleared) and tells whether more remain.
    fn next_batch(&mut self, max_pairs: usize, out: &mut KvBatch) -> Result<ScanStatus, ScanError>;
}

/// An immutable sorted in-memory table of `key → value`, keys as stored (keyspace prefix
/// included), packed in one arena in key order. Scanned through [`MemStore::scanner`].
#[derive(Debug, Default, Clone)]
pub struct MemStore {
    data: KvBatch,
}

impl MemStore {
    /// Builds a store from pairs in any order; a later duplicate key replaces an earlier one.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (Vec<u8>, Vec<u8>)>) -> Self {
        let mut pairs: Vec<_> = pairs.into_iter().collect();
        pairs.reverse();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        pairs.dedup_by(|a, b| a.0 == b.0);
        let bytes = pairs.iter().map(|(k, v)| k.len() + v.len()).sum();
        let mut data = KvBatch::with_capacity(pairs.len(), bytes);
        for (k, v) in &pairs {
            data.push(k, v);
        }
        MemStore { data }
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when the store is empty.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// A scanner over this store.
    pub fn scanner(&self) -> MemScanner<'_> {
        MemScanner { store: self, lo: 0, hi: 0, desc: false }
    }

    fn lower_bound(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.data.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.data.get(mid).is_some_and(|(k, _)| k < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

impl KvBatch {
    /// Appends pairs `lo..hi` of `src` with one copy of their bytes.
    fn append_range(&mut self, src: &KvBatch, lo: usize, hi: usize) {
        let Some(last) = hi.checked_sub(1).and_then(|l| src.ends.get(l)) else { return };
        let start = match lo.checked_sub(1) {
            Some(p) => src.ends.get(p).map_or(0, |e| e.1),
            None => 0,
        };
        let Some(bytes) = src.arena.get(start..last.1) else { return };
        let base = self.arena.len();
        self.arena.extend_from_slice(bytes);
        if let Some(ends) = src.ends.get(lo..hi) {
            self.ends.extend(ends.iter().map(|&(k, v)| (k - start + base, v - start + base)));
        }
    }
}

/// A [`ScanSource`] over a [`MemStore`].
#[derive(Debug, Clone)]
pub struct MemScanner<'a> {
    store: &'a MemStore,
    /// Remaining pairs of the current range: `lo..hi`.
    lo: usize,
    hi: usize,
    desc: bool,
}

impl ScanSource for MemScanner<'_> {
    fn start(&mut self, range: &KeyRange, desc: bool) -> Result<(), ScanError> {
        self.lo = self.store.lower_bound(&range.start);
        self.hi = if range.end.is_empty() {
            self.store.len()
        } else {
            self.store.lower_bound(&range.end)
        };
        self.hi = self.hi.max(self.lo);
        self.desc = desc;
        Ok(())
    }

    fn next_batch(&mut self, max_pairs: usize, out: &mut KvBatch) -> Result<ScanStatus, ScanError> {
        let n = max_pairs.min(self.hi - self.lo);
        if self.desc {
            let from = self.hi - n;
            for i in (from..self.hi).rev() {
                if let Some((k, v)) = self.store.data.get(i) {
                    out.push(k, v);
                }
            }
            self.hi = from;
        } else {
            let to = self.lo + n;
            out.append_range(&self.store.data, self.lo, to);
            self.lo = to;
        }
        Ok(if self.lo >= self.hi { ScanStatus::Done } else { ScanStatus::More })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> MemStore {
        MemStore::from_pairs((0u8..10).map(|i| (vec![b'k', i], vec![i; usize::from(i)])))
    }

    #[test]
    fn forward_and_reverse_batches() {
        let s = store();
        let mut sc = s.scanner();
        let mut b = KvBatch::new();
        sc.start(&KeyRange::new(vec![b'k', 2], vec![b'k', 7]), false).unwrap();
        assert_eq!(sc.next_batch(3, &mut b).unwrap(), ScanStatus::More);
        assert_eq!(sc.next_batch(3, &mut b).unwrap(), ScanStatus::Done);
        let keys: Vec<u8> = b.iter().map(|(k, _)| k[1]).collect();
        assert_eq!(keys, [2, 3, 4, 5, 6]);
        assert_eq!(b.get(4).unwrap().1, &[6u8; 6][..]);
        assert!(b.get(5).is_none());

        b.clear();
        sc.start(&KeyRange::new(vec![b'k', 2], Vec::new()), true).unwrap();
        assert_eq!(sc.next_batch(100, &mut b).unwrap(), ScanStatus::Done);
        let keys: Vec<u8> = b.iter().map(|(k, _)| k[1]).collect();
        assert_eq!(keys, [9, 8, 7, 6, 5, 4, 3, 2]);
    }

    #[test]
    fn later_duplicates_win_and_empty_ranges_are_done() {
        let s =
            MemStore::from_pairs([(b"a".to_vec(), b"1".to_vec()), (b"a".to_vec(), b"2".to_vec())]);
        assert_eq!(s.len(), 1);
        let mut sc = s.scanner();
        let mut b = KvBatch::new();
        sc.start(&KeyRange::new(b"b".to_vec(), b"a".to_vec()), false).unwrap();
        assert_eq!(sc.next_batch(10, &mut b).unwrap(), ScanStatus::Done);
        assert!(b.is_empty());
        sc.start(&KeyRange::new(b"a".to_vec(), b"b".to_vec()), false).unwrap();
        sc.next_batch(10, &mut b).unwrap();
        assert_eq!(b.get(0).unwrap(), (&b"a"[..], &b"2"[..]));
    }
}
