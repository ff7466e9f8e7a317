//! The scan trait: the only way data reaches the engine.
//!
//! The engine never does I/O. It asks a [`ScanSource`] for batches of `(key, value)` pairs in
//! key order (or reverse key order) within one request range at a time, filled into a
//! caller-owned [`KvBatch`] arena, so a cached scan allocates nothing per row. The MVCC
//! snapshot crate implements this trait over SST files; [`MemStore`] implements it over a
//! sorted in-memory table for tests, the corpus and the benches.

use bytes::Bytes;
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

/// A reusable batch of `(key, value)` pairs.
///
/// A pair's bytes are either copied into the batch's own arena ([`push`](Self::push)) or
/// left where the source keeps them, in a shared buffer the batch pins
/// ([`push_in`](Self::push_in): a block of an SST file, a memtable's buffer), so a scan over
/// decoded blocks hands rows to the executor without copying them. The pins are released by
/// [`clear`](Self::clear) or when the batch is dropped.
///
/// Keys are raw user keys exactly as stored (with the API v2 keyspace prefix when one is in
/// use); values are row values.
#[derive(Debug, Default, Clone)]
pub struct KvBatch {
    arena: Vec<u8>,
    /// The shared buffers pairs point into; [`Loc::seg`] `s > 0` is `pinned[s - 1]`.
    pinned: Vec<Bytes>,
    pairs: Vec<Pair>,
    /// Key and value bytes of every pair, wherever they live.
    bytes: usize,
}

/// Where the bytes of a key or a value live: `seg` 0 is the arena, `s > 0` the pinned
/// buffer `s - 1`; `start..end` within it, or the whole buffer when `end` is [`WHOLE`].
///
/// Offsets are `u32`, so a pair is three words ([`Pair`]), half what `usize` offsets would
/// make it. A part whose offsets do not fit (beyond 4 GiB into its buffer) is copied into the
/// arena, and a part the arena cannot reach either gets a buffer of its own
/// ([`KvBatch::own`]).
///
/// `start` and `end` share one word, `span = start | end << 32`, written and read whole: as
/// two 4-byte fields they were stored apart and loaded as one word where a `Loc` passes
/// through the stack, a load that waits for both stores to retire.
#[derive(Debug, Clone, Copy)]
struct Loc {
    span: u64,
    seg: u32,
}

/// How many of the last pinned buffers [`KvBatch::pin`] looks through before pinning a
/// buffer again: a merge of overlapping sources takes its values from the current block of
/// each source in turn, and pinning one anew for every value cost a reference count each
/// way and a segment a pair.
const PIN_LOOKBACK: usize = 4;

/// [`Loc::end`] meaning "to the end of the buffer": the part is a whole pinned buffer of its
/// own, whatever its length. No other `Loc` ends there.
const WHOLE: u32 = u32::MAX;

/// A pair's two [`Loc`]s as three words: `start | end << 32` of the key, then of the value,
/// then `seg | seg << 32`. Stored and loaded a word at a time: a pair built as two 12-byte
/// `Loc`s was written in 4- and 8-byte stores and read back in 8- and 16-byte loads that
/// straddled them, and each such load waited for the stores to retire (no store forwarding:
/// half of the snapshot scan's samples under `perf`).
#[derive(Debug, Clone, Copy)]
struct Pair([u64; 3]);

impl Pair {
    #[inline(always)]
    fn new(k: Loc, v: Loc) -> Pair {
        Pair([k.span, v.span, u64::from(k.seg) | u64::from(v.seg) << 32])
    }

    #[inline(always)]
    fn key(self) -> Loc {
        let [k, _, segs] = self.0;
        Loc { span: k, seg: segs as u32 }
    }

    #[inline(always)]
    fn value(self) -> Loc {
        let [_, v, segs] = self.0;
        Loc { span: v, seg: (segs >> 32) as u32 }
    }
}

impl Loc {
    /// The location of `start..end` in segment `seg`, when both offsets fit.
    #[inline(always)]
    fn at(seg: u32, start: usize, end: usize) -> Option<Loc> {
        let end = u32::try_from(end).ok().filter(|&e| e != WHOLE)?;
        Some(Loc::new(seg, u32::try_from(start).ok()?, end))
    }

    #[inline(always)]
    fn new(seg: u32, start: u32, end: u32) -> Loc {
        Loc { span: u64::from(start) | u64::from(end) << 32, seg }
    }

    #[inline(always)]
    fn start(self) -> u32 {
        self.span as u32
    }

    #[inline(always)]
    fn end(self) -> u32 {
        (self.span >> 32) as u32
    }
}

impl KvBatch {
    /// An empty batch.
    pub fn new() -> Self {
        KvBatch::default()
    }

    /// An empty batch with room for `pairs` pairs and `bytes` copied bytes.
    pub fn with_capacity(pairs: usize, bytes: usize) -> Self {
        KvBatch {
            arena: Vec::with_capacity(bytes),
            pinned: Vec::new(),
            pairs: Vec::with_capacity(pairs),
            bytes: 0,
        }
    }

    /// Removes every pair and releases the pinned buffers, keeping the allocations.
    pub fn clear(&mut self) {
        self.arena.clear();
        self.pinned.clear();
        self.pairs.clear();
        self.bytes = 0;
    }

    /// Appends one pair, copying its bytes.
    #[inline]
    pub fn push(&mut self, key: &[u8], value: &[u8]) {
        let k = self.copy(key);
        let v = self.copy(value);
        self.pairs.push(Pair::new(k, v));
        self.bytes += key.len() + value.len();
    }

    /// Appends one pair whose value lies inside `owner` (checked: a value outside it, or a
    /// buffer the batch cannot index, is copied instead). The key is copied; the value is
    /// read in place, `owner` pinned until the batch is cleared. Values of a buffer pin it
    /// once while it is one of the last few buffers pinned (a merge alternates between
    /// the blocks of its sources).
    #[inline(always)]
    pub fn push_in(&mut self, key: &[u8], value: &[u8], owner: &Bytes) {
        let k = self.copy(key);
        let v = self.place(value, owner);
        self.pairs.push(Pair::new(k, v));
        self.bytes += key.len() + value.len();
    }

    /// Appends one pair whose key is `head` followed by `suffix`, copied, and whose value
    /// lies inside `owner`, as [`push_in`](Self::push_in): the form a scan of prefix-compressed
    /// blocks has its keys in, copied straight into the batch.
    #[inline(always)]
    pub fn push_in_split(&mut self, head: &[u8], suffix: &[u8], value: &[u8], owner: &Bytes) {
        let k = self.copy_split(head, suffix);
        let v = self.place(value, owner);
        self.pairs.push(Pair::new(k, v));
        self.bytes += head.len() + suffix.len() + value.len();
    }

    /// Appends one pair whose key and value both lie inside `owner` (checked as in
    /// [`push_in`](Self::push_in); either one outside it is copied).
    #[inline]
    pub fn push_shared(&mut self, key: &[u8], value: &[u8], owner: &Bytes) {
        let k = self.place(key, owner);
        let v = self.place(value, owner);
        self.pairs.push(Pair::new(k, v));
        self.bytes += key.len() + value.len();
    }

    /// `part` in place inside `owner` when it lies there, else copied.
    #[inline]
    fn place(&mut self, part: &[u8], owner: &Bytes) -> Loc {
        match self.locate(part, owner) {
            Some(l) => l,
            None => self.copy(part),
        }
    }

    #[inline(always)]
    fn copy(&mut self, b: &[u8]) -> Loc {
        let start = self.arena.len();
        match start.checked_add(b.len()).and_then(|end| Loc::at(0, start, end)) {
            Some(l) => {
                self.arena.extend_from_slice(b);
                l
            }
            _ => self.own(b),
        }
    }

    /// `head` then `tail` copied as one part.
    #[inline(always)]
    fn copy_split(&mut self, head: &[u8], tail: &[u8]) -> Loc {
        let start = self.arena.len();
        let end = start.checked_add(head.len()).and_then(|e| e.checked_add(tail.len()));
        match end.and_then(|end| Loc::at(0, start, end)) {
            Some(l) => {
                self.arena.extend_from_slice(head);
                self.arena.extend_from_slice(tail);
                l
            }
            _ => self.own(&[head, tail].concat()),
        }
    }

    /// `b` copied into a pinned buffer of its own: the arena's 4 GiB are full, or `b` is
    /// longer than a [`Loc`] can say.
    #[cold]
    #[inline(never)]
    fn own(&mut self, b: &[u8]) -> Loc {
        self.pinned.push(Bytes::copy_from_slice(b));
        // A segment number per pinned buffer: 2^32 of them would each hold over 4 GiB.
        let seg = u32::try_from(self.pinned.len()).unwrap_or(u32::MAX);
        Loc::new(seg, 0, WHOLE)
    }

    /// Where `part` lies in `owner`, pinning `owner` unless it is the last buffer pinned;
    /// `None` when `part` is not inside `owner`.
    #[inline(always)]
    fn locate(&mut self, part: &[u8], owner: &Bytes) -> Option<Loc> {
        let base = owner.as_ptr() as usize;
        let start = (part.as_ptr() as usize).checked_sub(base)?;
        let end = start.checked_add(part.len())?;
        if end > owner.len() {
            return None;
        }
        let seg = self.pin(owner)?;
        Loc::at(seg, start, end)
    }

    /// The segment of `owner`, pinning it unless it is one of the last [`PIN_LOOKBACK`]
    /// buffers pinned; `None` when the batch has no segment number left.
    #[inline(always)]
    fn pin(&mut self, owner: &Bytes) -> Option<u32> {
        let n = self.pinned.len();
        let same = |p: &Bytes| p.as_ptr() == owner.as_ptr() && p.len() == owner.len();
        // Segment numbers start at 1 (0 is the arena): the last buffer pinned is `n`.
        if self.pinned.last().is_some_and(same) {
            return Some(n as u32);
        }
        let mut older = self.pinned.iter().rev().take(PIN_LOOKBACK).skip(1);
        if let Some(back) = older.position(same) {
            return Some((n - 1 - back) as u32);
        }
        if n >= u32::MAX as usize - 1 {
            return None;
        }
        self.pinned.push(owner.clone());
        Some(self.pinned.len() as u32)
    }

    /// Appends pairs lying in `owner`, each given by three offsets
    /// `[key_start, value_start, value_end]`: the key is `owner[key_start..value_start]`, the
    /// value `owner[value_start..value_end]`. Nothing is copied and `owner` is pinned once:
    /// the fast form of [`push_shared`](Self::push_shared) for a source that keeps its pairs
    /// in one buffer ([`MemStore`]).
    ///
    /// A span whose offsets decrease or pass the end of `owner` is not appended. Returns how
    /// many spans were, so a caller can tell a bad span from a good batch.
    pub fn extend_spans(
        &mut self,
        owner: &Bytes,
        spans: impl IntoIterator<Item = [usize; 3]>,
    ) -> usize {
        let spans = spans.into_iter();
        self.pairs.reserve(spans.size_hint().0);
        let len = owner.len();
        let seg = self.pin(owner);
        let mut n = 0;
        for [ks, vs, ve] in spans {
            if !(ks <= vs && vs <= ve && ve <= len) {
                continue;
            }
            let pair = seg.and_then(|s| Some(Pair::new(Loc::at(s, ks, vs)?, Loc::at(s, vs, ve)?)));
            match pair {
                Some(p) => {
                    self.pairs.push(p);
                    self.bytes += ve - ks;
                }
                // Offsets past what a `Loc` holds: copied.
                None => {
                    let (Some(k), Some(v)) = (owner.get(ks..vs), owner.get(vs..ve)) else {
                        continue;
                    };
                    self.push(k, v);
                }
            }
            n += 1;
        }
        n
    }

    #[inline]
    fn bytes_at(&self, l: Loc) -> Option<&[u8]> {
        let seg: &[u8] = match l.seg.checked_sub(1) {
            None => &self.arena,
            Some(s) => self.pinned.get(s as usize)?,
        };
        let end = if l.end() == WHOLE { seg.len() } else { l.end() as usize };
        seg.get(l.start() as usize..end)
    }

    /// Number of pairs.
    #[inline]
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when the batch holds no pair.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Total bytes of keys and values, copied or pinned.
    pub fn byte_len(&self) -> usize {
        self.bytes
    }

    /// Bytes copied into the batch's own arena (the rest is read in place).
    pub fn copied_len(&self) -> usize {
        self.arena.len()
    }

    /// Pair `i` as `(key, value)`; `None` when `i >= len()`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<(&[u8], &[u8])> {
        let p = *self.pairs.get(i)?;
        Some((self.bytes_at(p.key())?, self.bytes_at(p.value())?))
    }

    /// The value of pair `i`; `None` when `i >= len()`.
    #[inline(always)]
    pub fn value(&self, i: usize) -> Option<&[u8]> {
        self.bytes_at(self.pairs.get(i)?.value())
    }

    /// Hints the processor to start loading the value of pair `i` (its first three cache
    /// lines) into the cache, so a loop decoding rows in order finds the row it reaches
    /// already loaded. Does nothing when `i` is out of range or on
    /// processors without a prefetch hint.
    #[inline(always)]
    pub fn prefetch_value(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(v) = self.value(i) {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let p = v.as_ptr().cast::<i8>();
            let lines = v.len().div_ceil(64).min(PREFETCH_LINES);
            for line in 0..lines {
                // SAFETY: a prefetch is a hint that never faults and reads nothing into the
                // program; the address is inside the live slice `v` anyway (`line * 64` is
                // below its length), and SSE, which provides the hint, is part of the x86_64
                // baseline.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(line * 64)) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// Iterates the pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// Cache lines of a value [`KvBatch::prefetch_value`] asks for: a row of a dozen columns.
#[cfg(target_arch = "x86_64")]
const PREFETCH_LINES: usize = 3;

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
/// included), packed in one shared buffer in key order. Scanned through
/// [`MemStore::scanner`], which hands out pairs in place (pinning the buffer, copying
/// nothing).
#[derive(Debug, Default, Clone)]
pub struct MemStore {
    buf: Bytes,
    /// Per pair: where its key starts, where its value starts (the key's end) and where the
    /// value ends, in `buf`.
    spans: Vec<[usize; 3]>,
}

impl MemStore {
    /// Builds a store from pairs in any order; a later duplicate key replaces an earlier one.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (Vec<u8>, Vec<u8>)>) -> Self {
        let mut pairs: Vec<_> = pairs.into_iter().collect();
        pairs.reverse();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        pairs.dedup_by(|a, b| a.0 == b.0);
        let bytes = pairs.iter().map(|(k, v)| k.len() + v.len()).sum();
        let mut buf = Vec::with_capacity(bytes);
        let mut spans = Vec::with_capacity(pairs.len());
        for (k, v) in &pairs {
            let key_start = buf.len();
            buf.extend_from_slice(k);
            let key_end = buf.len();
            buf.extend_from_slice(v);
            spans.push([key_start, key_end, buf.len()]);
        }
        MemStore { buf: Bytes::from(buf), spans }
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when the store is empty.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// A scanner over this store.
    pub fn scanner(&self) -> MemScanner<'_> {
        MemScanner { store: self, lo: 0, hi: 0, desc: false }
    }

    /// Pair `i` as `(key, value)`.
    fn get(&self, i: usize) -> Option<(&[u8], &[u8])> {
        let &[key_start, key_end, value_end] = self.spans.get(i)?;
        Some((self.buf.get(key_start..key_end)?, self.buf.get(key_end..value_end)?))
    }

    fn lower_bound(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.spans.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.get(mid).is_some_and(|(k, _)| k < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
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
        let (from, to) = if self.desc { (self.hi - n, self.hi) } else { (self.lo, self.lo + n) };
        let spans = self.store.spans.get(from..to).unwrap_or_default();
        let pushed = if self.desc {
            out.extend_spans(&self.store.buf, spans.iter().rev().copied())
        } else {
            out.extend_spans(&self.store.buf, spans.iter().copied())
        };
        if pushed != spans.len() {
            return Err(ScanError::Storage("in-memory store: a pair outside its buffer".into()));
        }
        if self.desc {
            self.hi = from;
        } else {
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
    fn pairs_inside_a_buffer_are_read_in_place_and_pinned_until_cleared() {
        let block = Bytes::from(b"key1value1key2value2".to_vec());
        let other = Bytes::from(b"elsewhere".to_vec());
        let mut b = KvBatch::new();
        b.push_in(b"outer-key-1", &block[4..10], &block);
        b.push_in(b"outer-key-2", &block[14..20], &block);
        // A value outside its claimed owner is copied, not trusted.
        b.push_in(b"k3", &other[..4], &block);
        // A key and a value both inside the buffer.
        b.push_shared(&block[10..14], &block[14..20], &block);
        b.push(b"k5", b"copied");
        assert_eq!(b.len(), 5);
        let pairs: Vec<_> = b.iter().collect();
        assert_eq!(pairs[0], (&b"outer-key-1"[..], &b"value1"[..]));
        assert_eq!(pairs[1], (&b"outer-key-2"[..], &b"value2"[..]));
        assert_eq!(pairs[2], (&b"k3"[..], &b"else"[..]));
        assert_eq!(pairs[3], (&b"key2"[..], &b"value2"[..]));
        assert_eq!(pairs[4], (&b"k5"[..], &b"copied"[..]));
        // The values of pairs 0, 1 and 3 and the key of pair 3 were not copied.
        assert_eq!(b.copied_len(), 11 + 11 + 2 + 4 + 2 + 6);
        assert_eq!(b.byte_len(), 11 + 6 + 11 + 6 + 2 + 4 + 4 + 6 + 2 + 6);
        // The buffer is pinned once for consecutive pairs and released by `clear`.
        assert_eq!(b.pinned.len(), 1);
        let mut block = block;
        assert!(!block.is_unique());
        b.clear();
        assert!(block.is_unique());
        assert!(b.is_empty() && b.byte_len() == 0 && b.get(0).is_none());
        // A batch outlives the source's handle: the bytes stay valid.
        b.push_in(b"k", &block[0..4], &block);
        drop(std::mem::take(&mut block));
        assert_eq!(b.get(0).unwrap(), (&b"k"[..], &b"key1"[..]));
    }

    #[test]
    fn values_alternating_between_blocks_pin_each_block_once() {
        // Values taken in turn from the blocks of a merge's sources, then from more blocks
        // than the batch looks back through.
        let blocks: Vec<Bytes> = (0u8..6).map(|i| Bytes::from(vec![b'a' + i; 8])).collect();
        let mut b = KvBatch::new();
        for i in 0..10 {
            let block = &blocks[i % 2];
            b.push_in(b"k", &block[i % 4..i % 4 + 2], block);
        }
        assert_eq!(b.pinned.len(), 2);
        for block in &blocks {
            b.push_in(b"k", &block[..1], block);
        }
        // Blocks 0 and 1 are still among the last four pinned; 2 to 5 are new.
        assert_eq!(b.pinned.len(), 6);
        // Block 0 is now five back: pinned again.
        b.push_in(b"k", &blocks[0][..3], &blocks[0]);
        assert_eq!(b.pinned.len(), 7);
        let values: Vec<&[u8]> = b.iter().map(|(_, v)| v).collect();
        assert_eq!(values[..2], [&b"aa"[..], &b"bb"[..]]);
        assert_eq!(values[10..], [&b"a"[..], b"b", b"c", b"d", b"e", b"f", b"aaa"]);
        assert_eq!(b.copied_len(), 17);
    }

    proptest::proptest! {
        /// Any mix of copied, pinned and foreign slices, keys whole or in two parts, reads back
        /// as pushed.
        #[test]
        fn batch_reads_back_what_was_pushed(
            bufs in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..40), 1..4),
            ops in proptest::collection::vec((0u8..5, 0usize..4, 0usize..64, 0usize..64, 0usize..64, 0usize..64), 0..40),
        ) {
            let bufs: Vec<Bytes> = bufs.into_iter().map(Bytes::from).collect();
            let mut b = KvBatch::new();
            let mut model: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            let slice = |buf: &Bytes, x: usize, y: usize| {
                let (lo, hi) = (x.min(y).min(buf.len()), x.max(y).min(buf.len()));
                buf.slice(lo..hi)
            };
            for (kind, bi, a, c, d, e) in ops {
                let owner = &bufs[bi % bufs.len()];
                // Slices of any buffer, claimed to lie in `owner` (often wrongly).
                let key = slice(&bufs[a % bufs.len()], c, d);
                let value = slice(&bufs[(a + 1) % bufs.len()], d, e);
                match kind {
                    0 => b.push(&key, &value),
                    1 => b.push_in(&key, &value, owner),
                    2 => b.push_shared(&key, &value, owner),
                    3 => {
                        // The key handed in two parts, split anywhere.
                        let (head, suffix) = key.split_at(e % (key.len() + 1));
                        b.push_in_split(head, suffix, &value, owner);
                    }
                    _ => {
                        // Offsets into `owner`, in any order and past its end: a span is
                        // appended exactly when it lies in `owner` in order.
                        let span = [c, d, e];
                        let fits = c <= d && d <= e && e <= owner.len();
                        let n = b.extend_spans(owner, [span]);
                        proptest::prop_assert_eq!(n, usize::from(fits));
                        if fits {
                            model.push((owner[c..d].to_vec(), owner[d..e].to_vec()));
                        }
                        continue;
                    }
                }
                model.push((key.to_vec(), value.to_vec()));
            }
            proptest::prop_assert_eq!(b.len(), model.len());
            let got: Vec<(Vec<u8>, Vec<u8>)> = b.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
            proptest::prop_assert_eq!(&got, &model);
            // Values alone, and prefetch hints for every index (in range or not), read the same.
            for i in 0..model.len() + 2 {
                b.prefetch_value(i);
                proptest::prop_assert_eq!(b.value(i), model.get(i).map(|(_, v)| v.as_slice()));
            }
            let bytes: usize = model.iter().map(|(k, v)| k.len() + v.len()).sum();
            proptest::prop_assert_eq!(b.byte_len(), bytes);
            proptest::prop_assert!(b.copied_len() <= bytes);
        }
    }

    #[test]
    fn offsets_a_location_cannot_hold_are_copied_or_owned() {
        let max = u32::MAX as usize;
        // `u32::MAX` marks a whole buffer, so no location ends there.
        assert!(Loc::at(1, 0, max).is_none() && Loc::at(1, max, max + 1).is_none());
        assert!(Loc::at(1, max - 1, max - 1).is_some_and(|l| l.end() == u32::MAX - 1));
        // A part the arena cannot reach is pinned in a buffer of its own, read whole.
        let mut b = KvBatch::new();
        b.push(b"k", b"v");
        let own = b.own(b"far value");
        b.pairs.push(Pair::new(own, own));
        assert_eq!((b.pinned.len(), own.seg, own.end()), (1, 1, u32::MAX));
        assert_eq!(b.get(1), Some((&b"far value"[..], &b"far value"[..])));
        assert_eq!(b.get(0), Some((&b"k"[..], &b"v"[..])));
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
