//! The MVCC merge scanner: memtables, L0 tables and levels merged at a read ts.

use std::cmp::Ordering;

use bytes::Bytes;
use crossbeam_skiplist::map::Entry;
use rcop_sst::{BIT_DELETE, BlockSource, Table, TableIter, Value};

use crate::error::Result;
use crate::memtable::{MemKey, MemTable, MemValue, RowEntry};
use crate::range::InnerRange;
use crate::snapshot::{MemSource, Snapshot};

/// Where a scanner writes `(key, value)` pairs: a caller-owned buffer.
///
/// Implemented for closures, so an adapter can fill any batch type without a copy
/// (`scanner.next_batch(n, &mut |k: &[u8], v: &[u8]| batch.push(k, v))`), and for
/// [`PairBuf`].
pub trait KvSink {
    /// Appends one pair. `key` is the full outer key.
    fn push(&mut self, key: &[u8], value: &[u8]);

    /// Appends one pair whose `value` is a slice of `owner` (a decoded block): a sink that
    /// can hold `owner` (a reference count) may keep the value in place instead of copying
    /// it. The default copies, as [`push`](Self::push).
    #[inline]
    fn push_in(&mut self, key: &[u8], value: &[u8], owner: &Bytes) {
        let _ = owner;
        self.push(key, value);
    }

    /// Appends one pair whose key is `head` followed by `suffix` (the scan of a block hands
    /// its shared head, the keyspace prefix and the block's common prefix, apart from each
    /// entry's suffix) and whose `value` is a slice of `owner`, as
    /// [`push_in`](Self::push_in). A sink that copies keys can copy the two parts straight
    /// where the key goes; the default assembles the key in `scratch` first.
    #[inline]
    fn push_in_split(
        &mut self,
        head: &[u8],
        suffix: &[u8],
        value: &[u8],
        owner: &Bytes,
        scratch: &mut Vec<u8>,
    ) {
        scratch.clear();
        scratch.extend_from_slice(head);
        scratch.extend_from_slice(suffix);
        self.push_in(scratch, value, owner);
    }
}

impl<F: FnMut(&[u8], &[u8])> KvSink for F {
    #[inline]
    fn push(&mut self, key: &[u8], value: &[u8]) {
        self(key, value)
    }
}

/// A reusable buffer of `(key, value)` pairs stored back to back in one byte arena.
#[derive(Debug, Clone, Default)]
pub struct PairBuf {
    arena: Vec<u8>,
    ends: Vec<(usize, usize)>,
}

impl PairBuf {
    /// An empty buffer.
    pub fn new() -> Self {
        PairBuf::default()
    }

    /// Removes every pair, keeping the allocations.
    pub fn clear(&mut self) {
        self.arena.clear();
        self.ends.clear();
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Pair `i`, `None` when out of range.
    pub fn get(&self, i: usize) -> Option<(&[u8], &[u8])> {
        let start = match i.checked_sub(1) {
            Some(p) => self.ends.get(p)?.1,
            None => 0,
        };
        let &(k, v) = self.ends.get(i)?;
        Some((self.arena.get(start..k)?, self.arena.get(k..v)?))
    }

    /// The pairs in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

impl KvSink for PairBuf {
    #[inline]
    fn push(&mut self, key: &[u8], value: &[u8]) {
        self.arena.extend_from_slice(key);
        let k = self.arena.len();
        self.arena.extend_from_slice(value);
        self.ends.push((k, self.arena.len()));
    }

    #[inline]
    fn push_in_split(
        &mut self,
        head: &[u8],
        suffix: &[u8],
        value: &[u8],
        _owner: &Bytes,
        _scratch: &mut Vec<u8>,
    ) {
        self.arena.extend_from_slice(head);
        self.push(suffix, value);
    }
}

/// Whether a range has more pairs after a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanStatus {
    /// Call [`Scanner::next_batch`] again.
    More,
    /// The range is exhausted.
    Done,
}

/// Fast-path runs in a row that may end before their first key before the scanner stops
/// trying for [`SOLO_COOLDOWN`] keys.
const SOLO_MISSES: u32 = 8;
/// Keys merged without trying the fast path after [`SOLO_MISSES`] empty runs.
const SOLO_COOLDOWN: u32 = 256;

/// A cursor over one source, positioned on a key (all versions of a key count as one step).
#[derive(Debug)]
pub(crate) enum Cursor<'a, S> {
    Skip(SkipCursor<'a>),
    Rows(RowsCursor<'a>),
    L0(TableCursor<'a, S>),
    Level(LevelCursor<'a, S>),
}

impl<'a, S: BlockSource> Cursor<'a, S> {
    pub(crate) fn mem(m: &'a MemSource) -> Self {
        match m {
            MemSource::Skip(t) => Cursor::Skip(SkipCursor { table: t, cur: None, resolved: None }),
            MemSource::Rows(t) => {
                Cursor::Rows(RowsCursor { rows: &t.rows, pos: t.rows.len(), resolved: 0 })
            }
        }
    }

    pub(crate) fn l0(t: &'a Table<S>) -> Self {
        Cursor::L0(TableCursor::new(t))
    }

    pub(crate) fn level(tables: &'a [Table<S>]) -> Self {
        Cursor::Level(LevelCursor { tables, idx: 0, cur: None, bound: InnerRange::default() })
    }

    fn set_bound(&mut self, bound: &InnerRange) {
        if let Cursor::Level(c) = self {
            c.bound.clone_from(bound);
        }
    }

    fn seek(&mut self, key: &[u8]) -> Result<()> {
        match self {
            Cursor::Skip(c) => {
                c.cur = c.table.seek(key);
                Ok(())
            }
            Cursor::Rows(c) => {
                c.pos = c.rows.partition_point(|r| r.key.as_ref() < key);
                Ok(())
            }
            Cursor::L0(c) => Ok(c.it.seek(key)?),
            Cursor::Level(c) => c.seek(key),
        }
    }

    fn seek_lt(&mut self, end: &[u8]) -> Result<()> {
        match self {
            Cursor::Skip(c) => {
                c.cur = c.table.seek_lt(end);
                Ok(())
            }
            Cursor::Rows(c) => {
                let n = if end.is_empty() {
                    c.rows.len()
                } else {
                    c.rows.partition_point(|r| r.key.as_ref() < end)
                };
                c.pos = match n.checked_sub(1) {
                    Some(last) => newest_row(c.rows, last),
                    None => c.rows.len(),
                };
                Ok(())
            }
            Cursor::L0(c) => c.seek_lt(end),
            Cursor::Level(c) => c.seek_lt(end),
        }
    }

    /// The table iterator of an L0 or level cursor (`None` for a memtable, or a level past
    /// its tables).
    #[inline]
    fn table_iter(&mut self) -> Option<&mut TableIter<'a, S>> {
        match self {
            Cursor::L0(t) => Some(&mut t.it),
            Cursor::Level(l) => l.cur.as_mut().map(|t| &mut t.it),
            Cursor::Skip(_) | Cursor::Rows(_) => None,
        }
    }

    #[inline]
    fn valid(&self) -> bool {
        match self {
            Cursor::Skip(c) => c.cur.is_some(),
            Cursor::Rows(c) => c.pos < c.rows.len(),
            Cursor::L0(c) => c.it.valid(),
            Cursor::Level(c) => c.cur.as_ref().is_some_and(|t| t.it.valid()),
        }
    }

    #[inline]
    fn key(&self) -> &[u8] {
        match self {
            Cursor::Skip(c) => c.cur.as_ref().map_or(&[], |e| e.key().key.as_ref()),
            Cursor::Rows(c) => c.rows.get(c.pos).map_or(&[], |r| r.key.as_ref()),
            Cursor::L0(c) => c.it.key(),
            Cursor::Level(c) => c.cur.as_ref().map_or(&[], |t| t.it.key()),
        }
    }

    fn next(&mut self) -> Result<()> {
        match self {
            Cursor::Skip(c) => {
                let mut e = c.cur.take();
                if let Some(start) = &e {
                    let key = start.key().key.clone();
                    while let Some(cur) = e {
                        if cur.key().key != key {
                            e = Some(cur);
                            break;
                        }
                        e = cur.next();
                    }
                }
                c.cur = e;
                Ok(())
            }
            Cursor::Rows(c) => {
                if let Some(key) = c.rows.get(c.pos).map(|r| &r.key) {
                    let n = c.rows[c.pos..].iter().take_while(|r| r.key == *key).count();
                    c.pos += n;
                }
                Ok(())
            }
            Cursor::L0(c) => Ok(c.it.next()?),
            Cursor::Level(c) => c.next(),
        }
    }

    fn prev(&mut self) -> Result<()> {
        match self {
            Cursor::Skip(c) => {
                c.cur = match c.cur.take().and_then(|e| e.prev()) {
                    Some(e) => c.table.newest_of(&e),
                    None => None,
                };
                Ok(())
            }
            Cursor::Rows(c) => {
                c.pos = match c.pos.checked_sub(1).filter(|_| c.pos < c.rows.len()) {
                    Some(p) => newest_row(c.rows, p),
                    None => c.rows.len(),
                };
                Ok(())
            }
            Cursor::L0(c) => Ok(c.it.prev()?),
            Cursor::Level(c) => c.prev(),
        }
    }

    /// Finds the newest version `<= read_ts` of the current key in this source and
    /// remembers it for [`resolved`](Self::resolved).
    fn resolve(&mut self, read_ts: u64) -> Result<Option<u64>> {
        match self {
            Cursor::Skip(c) => {
                c.resolved = None;
                let mut e = c.cur.clone();
                if let Some(first) = &c.cur {
                    let key = &first.key().key;
                    while let Some(cur) = e {
                        if cur.key().key != *key {
                            break;
                        }
                        if cur.key().version <= read_ts {
                            let v = cur.key().version;
                            c.resolved = Some(cur);
                            return Ok(Some(v));
                        }
                        e = cur.next();
                    }
                }
                Ok(None)
            }
            Cursor::Rows(c) => {
                let Some(key) = c.rows.get(c.pos).map(|r| &r.key) else {
                    return Ok(None);
                };
                for (i, r) in c.rows.iter().enumerate().skip(c.pos) {
                    if r.key != *key {
                        break;
                    }
                    if r.commit_ts <= read_ts {
                        c.resolved = i;
                        return Ok(Some(r.commit_ts));
                    }
                }
                Ok(None)
            }
            Cursor::L0(c) => c.resolve(read_ts),
            Cursor::Level(c) => match &mut c.cur {
                Some(t) => t.resolve(read_ts),
                None => Ok(None),
            },
        }
    }

    /// The value found by the last successful [`resolve`](Self::resolve) (empty: delete).
    #[inline]
    fn resolved_value(&self) -> &[u8] {
        match self {
            Cursor::Skip(c) => c.resolved.as_ref().map_or(&[], |e| &e.value().value),
            Cursor::Rows(c) => c.rows.get(c.resolved).map_or(&[], |r| &r.value),
            Cursor::L0(c) => c.resolved_value(),
            Cursor::Level(c) => c.cur.as_ref().map_or(&[], |t| t.resolved_value()),
        }
    }

    /// The buffer [`resolved_value`](Self::resolved_value) is a slice of, when the value may
    /// be kept in place by holding it: a table's decoded block, shared by hundreds of
    /// values. Memtable values (each its own handle, few) are copied.
    #[inline]
    fn resolved_owner(&self) -> Option<&Bytes> {
        match self {
            Cursor::Skip(_) | Cursor::Rows(_) => None,
            Cursor::L0(c) => c.resolved_owner(),
            Cursor::Level(c) => c.cur.as_ref().and_then(|t| t.resolved_owner()),
        }
    }

    /// The version found by the last successful [`resolve`](Self::resolve):
    /// `(start_ts, value)`, a delete as an empty value.
    fn resolved(&self) -> (u64, &[u8]) {
        match self {
            Cursor::Skip(c) => {
                c.resolved.as_ref().map_or((0, &[]), |e| (e.value().start_ts, &e.value().value))
            }
            Cursor::Rows(c) => c.rows.get(c.resolved).map_or((0, &[]), |r| (r.start_ts, &r.value)),
            Cursor::L0(c) => c.resolved(),
            Cursor::Level(c) => c.cur.as_ref().map_or((0, &[]), |t| t.resolved()),
        }
    }
}

/// Index of the newest row of the key of row `i` (rows are newest first within a key).
fn newest_row(rows: &[RowEntry], i: usize) -> usize {
    let Some(key) = rows.get(i).map(|r| &r.key) else {
        return rows.len();
    };
    let mut p = i;
    while p > 0 && rows.get(p - 1).is_some_and(|r| r.key == *key) {
        p -= 1;
    }
    p
}

#[derive(Debug)]
pub(crate) struct SkipCursor<'a> {
    table: &'a MemTable,
    /// Newest version of the current key.
    cur: Option<Entry<'a, MemKey, MemValue>>,
    resolved: Option<Entry<'a, MemKey, MemValue>>,
}

#[derive(Debug)]
pub(crate) struct RowsCursor<'a> {
    rows: &'a [RowEntry],
    /// Newest row of the current key; `rows.len()` when not valid.
    pos: usize,
    resolved: usize,
}

/// Start ts from the 17-byte write-CF user meta `[1, start_ts LE, commit_ts LE]`.
pub(crate) fn user_meta_start_ts(user_meta: &[u8]) -> u64 {
    match user_meta {
        [1, s @ ..] if s.len() == 16 => {
            let mut b = [0u8; 8];
            b.copy_from_slice(&s[..8]);
            u64::from_le_bytes(b)
        }
        _ => 0,
    }
}

/// The 17-byte write-CF user meta of a version.
pub(crate) fn user_meta(start_ts: u64, commit_ts: u64) -> [u8; 17] {
    let mut m = [0u8; 17];
    m[0] = 1;
    m[1..9].copy_from_slice(&start_ts.to_le_bytes());
    m[9..17].copy_from_slice(&commit_ts.to_le_bytes());
    m
}

#[derive(Debug)]
pub(crate) struct TableCursor<'a, S> {
    it: TableIter<'a, S>,
    old: Option<Value>,
    use_old: bool,
}

impl<'a, S: BlockSource> TableCursor<'a, S> {
    fn new(t: &'a Table<S>) -> Self {
        TableCursor { it: t.iter(), old: None, use_old: false }
    }

    fn seek_lt(&mut self, end: &[u8]) -> Result<()> {
        if end.is_empty() {
            return Ok(self.it.seek_to_last()?);
        }
        self.it.seek_for_prev(end)?;
        if self.it.valid() && self.it.key() == end {
            self.it.prev()?;
        }
        Ok(())
    }

    fn resolve(&mut self, read_ts: u64) -> Result<Option<u64>> {
        if !self.it.valid() {
            return Ok(None);
        }
        let v = self.it.value();
        if v.version <= read_ts {
            self.use_old = false;
            return Ok(Some(v.version));
        }
        if v.old_version.is_none() {
            return Ok(None);
        }
        match self.it.value_at(read_ts)? {
            Some(old) => {
                let version = old.version;
                self.old = Some(old);
                self.use_old = true;
                Ok(Some(version))
            }
            None => Ok(None),
        }
    }

    #[inline]
    fn resolved_value(&self) -> &[u8] {
        let (meta, value) = match (&self.old, self.use_old) {
            (Some(o), true) => (o.meta, o.value.as_ref()),
            _ => {
                let v = self.it.value();
                (v.meta, v.value)
            }
        };
        if meta & BIT_DELETE != 0 { &[] } else { value }
    }

    /// The block of the latest version; an older version (read from the old-version
    /// section into its own buffer) is copied.
    #[inline]
    fn resolved_owner(&self) -> Option<&Bytes> {
        match (&self.old, self.use_old) {
            (Some(_), true) => None,
            _ => self.it.block_bytes(),
        }
    }

    fn resolved(&self) -> (u64, &[u8]) {
        let (meta, um, value) = match (&self.old, self.use_old) {
            (Some(o), true) => (o.meta, o.user_meta.as_ref(), o.value.as_ref()),
            _ => {
                let v = self.it.value();
                (v.meta, v.user_meta, v.value)
            }
        };
        let value: &[u8] = if meta & BIT_DELETE != 0 { &[] } else { value };
        (user_meta_start_ts(um), value)
    }
}

/// A cursor over the tables of one level, which never enters a table outside its bound
/// (so a worker scan never touches blocks it did not prefetch).
#[derive(Debug)]
pub(crate) struct LevelCursor<'a, S> {
    tables: &'a [Table<S>],
    idx: usize,
    cur: Option<TableCursor<'a, S>>,
    bound: InnerRange,
}

impl<'a, S: BlockSource> LevelCursor<'a, S> {
    fn enter_forward(&mut self, idx: usize) -> Option<&mut TableCursor<'a, S>> {
        self.cur = None;
        let t = self.tables.get(idx)?;
        if !self.bound.before_end(&t.meta().properties().smallest) {
            return None;
        }
        self.idx = idx;
        self.cur = Some(TableCursor::new(t));
        self.cur.as_mut()
    }

    fn enter_backward(&mut self, idx: usize) -> Option<&mut TableCursor<'a, S>> {
        self.cur = None;
        let t = self.tables.get(idx)?;
        if t.meta().properties().biggest.as_ref() < self.bound.start.as_slice() {
            return None;
        }
        self.idx = idx;
        self.cur = Some(TableCursor::new(t));
        self.cur.as_mut()
    }

    fn seek(&mut self, key: &[u8]) -> Result<()> {
        let mut idx = self.tables.partition_point(|t| t.meta().properties().biggest.as_ref() < key);
        while let Some(c) = self.enter_forward(idx) {
            c.it.seek(key)?;
            if c.it.valid() {
                return Ok(());
            }
            idx += 1;
        }
        Ok(())
    }

    fn seek_lt(&mut self, end: &[u8]) -> Result<()> {
        let n = if end.is_empty() {
            self.tables.len()
        } else {
            self.tables.partition_point(|t| t.meta().properties().smallest.as_ref() < end)
        };
        let mut idx = n;
        while let Some(i) = idx.checked_sub(1) {
            idx = i;
            let Some(c) = self.enter_backward(i) else {
                return Ok(());
            };
            c.seek_lt(end)?;
            if c.it.valid() {
                return Ok(());
            }
        }
        self.cur = None;
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        let Some(c) = &mut self.cur else {
            return Ok(());
        };
        c.it.next()?;
        let mut idx = self.idx;
        while !self.cur.as_ref().is_some_and(|c| c.it.valid()) {
            idx += 1;
            let Some(c) = self.enter_forward(idx) else {
                return Ok(());
            };
            c.it.seek_to_first()?;
        }
        Ok(())
    }

    fn prev(&mut self) -> Result<()> {
        let Some(c) = &mut self.cur else {
            return Ok(());
        };
        c.it.prev()?;
        let mut idx = self.idx;
        while !self.cur.as_ref().is_some_and(|c| c.it.valid()) {
            let Some(i) = idx.checked_sub(1) else {
                self.cur = None;
                return Ok(());
            };
            idx = i;
            let Some(c) = self.enter_backward(idx) else {
                return Ok(());
            };
            c.it.seek_to_last()?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    Running,
    Done,
}

/// One visible version found by the merge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Visible {
    /// The source holding it.
    pub(crate) cursor: usize,
    /// Its commit ts.
    pub(crate) commit_ts: u64,
}

/// A merge scanner over a [`Snapshot`] at one read ts.
///
/// [`start`](Self::start) positions it on a request range (outer keys, checked against the
/// shard range); [`next_batch`](Self::next_batch) then appends up to `max_pairs` pairs to a
/// caller-owned [`KvSink`]: the newest version not newer than the read ts of each key,
/// deletes skipped, in key order or reverse key order. Keys come out as outer keys.
///
/// ```
/// use rcop_snap::{PairBuf, ScanStatus, Shard, ShardConfig};
///
/// let shard = Shard::new(ShardConfig::new(1, &b""[..], &b""[..], 0)?)?;
/// shard.put(b"a", 1, 2, b"v1")?;
/// shard.put(b"b", 1, 2, b"v2")?;
/// shard.delete(b"b", 3, 4)?;
/// let snap = shard.snapshot();
/// let mut scanner = snap.scanner(10);
/// scanner.start(b"a", b"z", false)?;
/// let mut out = PairBuf::new();
/// assert_eq!(scanner.next_batch(100, &mut out)?, ScanStatus::Done);
/// assert_eq!(out.iter().collect::<Vec<_>>(), vec![(&b"a"[..], &b"v1"[..])]);
/// # Ok::<(), rcop_snap::Error>(())
/// ```
#[derive(Debug)]
pub struct Scanner<'a, S> {
    snap: &'a Snapshot<S>,
    read_ts: u64,
    cursors: Vec<Cursor<'a, S>>,
    range: InnerRange,
    desc: bool,
    state: State,
    /// Outer key of the current key: shard prefix + inner key.
    key: Vec<u8>,
    /// The fast path's head of the keys of a block: shard prefix + the block's prefix.
    head: Vec<u8>,
    at: Vec<usize>,
    /// Fast path of the merge: `Some(i)` when only cursor `i` held the current key and every
    /// other cursor is at the [`fence`](Self::fence)'s key or beyond; until cursor `i` reaches
    /// that key it is the only source and the other cursors need not be compared.
    solo: Option<usize>,
    /// The cursor holding the nearest key after the `solo` cursor's (`None`: every other
    /// cursor is exhausted). Other cursors do not move while the solo one runs, so its key
    /// is read in place.
    fence: Option<usize>,
    /// Fast-path runs in a row that ended before their first key.
    solo_misses: u32,
    /// Keys left to merge before the fast path is tried again.
    solo_cooldown: u32,
    keys_seen: u64,
    /// Key bytes of the keys examined plus value bytes of their visible versions.
    bytes_seen: u64,
    /// Most keys one [`next_batch`](Self::next_batch) call examines.
    batch_key_limit: u64,
}

impl<'a, S: BlockSource> Scanner<'a, S> {
    pub(crate) fn new(snap: &'a Snapshot<S>, read_ts: u64) -> Self {
        Scanner {
            snap,
            read_ts,
            cursors: snap.cursors(),
            range: InnerRange::default(),
            desc: false,
            state: State::Idle,
            key: Vec::new(),
            head: Vec::new(),
            at: Vec::new(),
            solo: None,
            fence: None,
            solo_misses: 0,
            solo_cooldown: 0,
            keys_seen: 0,
            bytes_seen: 0,
            batch_key_limit: u64::MAX,
        }
    }

    /// Ends a [`next_batch`](Self::next_batch) call after `keys` keys examined, visible or
    /// not (with `More`, possibly without a pair): a range of tombstones or of versions newer
    /// than the read ts then returns to the caller, who can check a deadline, between every
    /// `keys` keys instead of only once it is crossed. Default: no limit.
    pub fn set_batch_key_limit(&mut self, keys: u64) {
        self.batch_key_limit = keys.max(1);
    }

    /// The read ts.
    pub fn read_ts(&self) -> u64 {
        self.read_ts
    }

    /// Distinct keys examined so far (visible or not), across ranges.
    pub fn keys_seen(&self) -> u64 {
        self.keys_seen
    }

    /// Bytes examined so far: every key examined (visible or not) plus the value of its
    /// visible version, if any (`ScanDetailV2.total_versions_size`).
    pub fn bytes_seen(&self) -> u64 {
        self.bytes_seen
    }

    /// Positions the scanner on `[start, end)` (outer keys; empty `end` = unbounded),
    /// at its start, or at its end when `desc`.
    ///
    /// # Errors
    ///
    /// [`Error::RangeOutOfShard`](crate::Error::RangeOutOfShard) /
    /// [`Error::InvalidRange`](crate::Error::InvalidRange) for a bad range; block reads.
    pub fn start(&mut self, start: &[u8], end: &[u8], desc: bool) -> Result<()> {
        let range = self.snap.range.to_inner_range(start, end)?;
        self.start_inner(range, desc)
    }

    pub(crate) fn start_inner(&mut self, range: InnerRange, desc: bool) -> Result<()> {
        self.range = range;
        self.desc = desc;
        self.at.clear();
        self.solo = None;
        if self.range.is_empty() {
            // Nothing to read; and no source is touched (a worker snapshot has no blocks
            // for an empty range).
            self.state = State::Done;
            return Ok(());
        }
        self.state = State::Running;
        for c in &mut self.cursors {
            c.set_bound(&self.range);
            if desc {
                c.seek_lt(&self.range.end)?;
            } else {
                c.seek(&self.range.start)?;
            }
        }
        Ok(())
    }

    /// Appends up to `max_pairs` visible pairs of the current range to `out` and tells
    /// whether more may remain. Before [`start`](Self::start), reports `Done`.
    ///
    /// # Errors
    ///
    /// Block reads ([`Error::Sst`](crate::Error::Sst)), e.g. a corrupt block.
    pub fn next_batch<K: KvSink + ?Sized>(
        &mut self,
        max_pairs: usize,
        out: &mut K,
    ) -> Result<ScanStatus> {
        let mut n = 0;
        let seen_before = self.keys_seen;
        while n < max_pairs {
            if self.keys_seen - seen_before >= self.batch_key_limit {
                return Ok(ScanStatus::More);
            }
            if self.solo.is_some() {
                if self.solo_cooldown > 0 {
                    self.solo_cooldown -= 1;
                } else {
                    let limit = self.batch_key_limit.saturating_sub(self.keys_seen - seen_before);
                    let keys_before = self.keys_seen;
                    n += self.run_solo(max_pairs - n, limit, out)?;
                    // Sources that interleave key by key end every run at once: after
                    // SOLO_MISSES such runs, merge SOLO_COOLDOWN keys before trying again.
                    if self.keys_seen == keys_before {
                        self.solo_misses += 1;
                        if self.solo_misses >= SOLO_MISSES {
                            self.solo_misses = 0;
                            self.solo_cooldown = SOLO_COOLDOWN;
                        }
                    } else {
                        self.solo_misses = 0;
                    }
                    if n >= max_pairs || self.keys_seen - seen_before >= self.batch_key_limit {
                        continue;
                    }
                }
            }
            let Some(found) = self.find()? else {
                return Ok(ScanStatus::Done);
            };
            // The key is handed as the keyspace prefix and the cursor's inner key, which a
            // sink copies straight into place; it is assembled only for a value no block
            // holds (a memtable value, an old version read into its own buffer).
            if let Some(v) = found
                && let Some(c) = self.cursors.get(v.cursor)
            {
                let value = c.resolved_value();
                if !value.is_empty() {
                    let prefix = self.snap.range.prefix();
                    match c.resolved_owner() {
                        Some(owner) => {
                            out.push_in_split(prefix, c.key(), value, owner, &mut self.key)
                        }
                        None => {
                            self.snap.range.outer_key_into(c.key(), &mut self.key);
                            out.push(&self.key, value);
                        }
                    }
                    n += 1;
                }
            }
            self.advance()?;
        }
        Ok(if self.state == State::Done { ScanStatus::Done } else { ScanStatus::More })
    }

    /// The fast path of [`next_batch`](Self::next_batch) while one table cursor is the only
    /// source before the fence: each key's latest version is read once, in place, and
    /// appended when visible, with no merge. Stops (returning the pairs appended) at the
    /// fence, the range's end, `max_pairs`, `max_keys` keys examined, or a key whose latest
    /// version is newer than the read ts (the merge resolves its older versions).
    fn run_solo<K: KvSink + ?Sized>(
        &mut self,
        max_pairs: usize,
        max_keys: u64,
        out: &mut K,
    ) -> Result<usize> {
        let Scanner {
            cursors,
            key,
            head,
            range,
            desc,
            read_ts,
            snap,
            solo,
            fence,
            keys_seen,
            bytes_seen,
            ..
        } = self;
        let Some(i) = *solo else {
            return Ok(0);
        };
        // The solo cursor, mutable, beside the fence's, read only.
        let (c, f) = match *fence {
            Some(j) if j < i => {
                let (l, r) = cursors.split_at_mut(i);
                (r.first_mut(), l.get(j))
            }
            Some(j) if j > i => {
                let (l, r) = cursors.split_at_mut(j);
                (l.get_mut(i), r.first())
            }
            Some(_) => (None, None),
            None => (cursors.get_mut(i), None),
        };
        let Some(c) = c else {
            *solo = None;
            return Ok(0);
        };
        let fence_key = f.map(|f| f.key());
        if !*desc {
            let bounds = RunBounds { end: &range.end, fence: fence_key, read_ts: *read_ts };
            let outer = snap.range.prefix();
            let mut run = SoloRun { outer, head, scratch: key, n: 0, keys: 0, bytes: 0 };
            let stop = run.forward(c, &bounds, max_pairs, max_keys, out);
            // Counted even when a block read fails partway.
            *keys_seen += run.keys;
            *bytes_seen += run.bytes;
            if stop? == RunStop::Fence {
                // The other sources are back in play: the merge takes over.
                *solo = None;
            }
            return Ok(run.n);
        }
        // Backward, key by key.
        let (mut n, mut keys) = (0usize, 0u64);
        while n < max_pairs && keys < max_keys {
            let Some(it) = c.table_iter() else {
                break;
            };
            if !it.valid() {
                break;
            }
            let k = it.key();
            if fence_key.is_some_and(|f| k <= f) {
                // The other sources are back in play: the merge takes over.
                *solo = None;
                break;
            }
            if k < range.start.as_slice() {
                break;
            }
            let v = it.value();
            if v.version > *read_ts {
                break;
            }
            let value: &[u8] = if v.meta & BIT_DELETE != 0 { &[] } else { v.value };
            snap.range.outer_key_into(k, key);
            *keys_seen += 1;
            keys += 1;
            *bytes_seen += (key.len() + value.len()) as u64;
            if !value.is_empty() {
                match it.block_bytes() {
                    Some(owner) => out.push_in(key, value, owner),
                    None => out.push(key, value),
                }
                n += 1;
            }
            c.prev()?;
        }
        Ok(n)
    }

    /// Moves to the next key of the range and resolves its visible version:
    /// `None` when the range is exhausted, `Some(None)` for a key with no version at the
    /// read ts. The key is in `self.key`; call [`advance`](Self::advance) to step past it.
    pub(crate) fn peek(&mut self) -> Result<Option<Option<Visible>>> {
        let found = self.find()?;
        if found.is_some() {
            let Scanner { cursors, key, at, snap, .. } = self;
            let k = at.first().and_then(|&i| cursors.get(i)).map_or(&[][..], |c| c.key());
            snap.range.outer_key_into(k, key);
        }
        Ok(found)
    }

    /// [`peek`](Self::peek) without the outer key: the current key is the inner key of
    /// every cursor in `at`.
    fn find(&mut self) -> Result<Option<Option<Visible>>> {
        if self.state != State::Running {
            return Ok(None);
        }
        let Scanner { cursors, at, range, desc, read_ts, snap, solo, fence, .. } = self;
        at.clear();
        // The fast path: the cursor alone on the previous key is still before every other.
        let mut best: Option<&[u8]> = None;
        if let Some(i) = *solo
            && let Some(c) = cursors.get(i)
            && c.valid()
        {
            let k = c.key();
            let before_fence = match fence.and_then(|j| cursors.get(j)).map(|f| f.key()) {
                None => true,
                Some(f) if *desc => k > f,
                Some(f) => k < f,
            };
            if before_fence {
                best = Some(k);
                at.push(i);
            }
        }
        if best.is_none() {
            // One pass: the smallest (largest when descending) key, every cursor on it, and
            // the nearest key after it (the fence of the fast path when one cursor holds it).
            let mut second: Option<(usize, &[u8])> = None;
            let before = |a: &[u8], b: &[u8]| if *desc { a > b } else { a < b };
            let mut best_at = 0;
            for (i, c) in cursors.iter().enumerate() {
                if !c.valid() {
                    continue;
                }
                let k = c.key();
                let ord = match best {
                    None => Ordering::Less,
                    Some(b) if *desc => b.cmp(k),
                    Some(b) => k.cmp(b),
                };
                match ord {
                    Ordering::Less => {
                        second = best.map(|b| (best_at, b));
                        best = Some(k);
                        best_at = i;
                        at.clear();
                        at.push(i);
                    }
                    Ordering::Equal => at.push(i),
                    Ordering::Greater => {
                        if second.is_none_or(|(_, s)| before(k, s)) {
                            second = Some((i, k));
                        }
                    }
                }
            }
            *solo = None;
            if let [only] = at.as_slice() {
                *solo = Some(*only);
                *fence = second.map(|(j, _)| j);
            }
        }
        let Some(k) = best else {
            self.state = State::Done;
            return Ok(None);
        };
        let in_range = if *desc { k >= range.start.as_slice() } else { range.before_end(k) };
        if !in_range {
            at.clear();
            self.state = State::Done;
            return Ok(None);
        }
        let key_len = snap.range.prefix().len() + k.len();
        let mut win: Option<Visible> = None;
        for &i in at.iter() {
            if let Some(c) = cursors.get_mut(i)
                && let Some(v) = c.resolve(*read_ts)?
                && win.is_none_or(|w| v > w.commit_ts)
            {
                win = Some(Visible { cursor: i, commit_ts: v });
            }
        }
        let value_len =
            win.and_then(|w| cursors.get(w.cursor)).map_or(0, |c| c.resolved_value().len());
        self.keys_seen += 1;
        self.bytes_seen += (key_len + value_len) as u64;
        Ok(Some(win))
    }

    /// Steps every source past the current key.
    pub(crate) fn advance(&mut self) -> Result<()> {
        for &i in &self.at {
            if let Some(c) = self.cursors.get_mut(i) {
                if self.desc {
                    c.prev()?;
                } else {
                    c.next()?;
                }
            }
        }
        self.at.clear();
        Ok(())
    }

    /// The current outer key (after [`peek`](Self::peek)).
    pub(crate) fn current_key(&self) -> &[u8] {
        &self.key
    }

    /// `(start_ts, value)` of a visible version found by [`peek`](Self::peek).
    pub(crate) fn visible(&self, v: Visible) -> (u64, &[u8]) {
        self.cursors.get(v.cursor).map_or((0, &[]), |c| c.resolved())
    }
}

/// Where a forward fast-path run must stop: the range's end, the fence (the nearest key of
/// the other sources) and the read ts.
struct RunBounds<'k> {
    end: &'k [u8],
    fence: Option<&'k [u8]>,
    read_ts: u64,
}

/// Why a forward run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunStop {
    /// The budget of pairs or keys is spent, or the source is exhausted.
    Budget,
    /// The next key is at or past the fence: the merge takes over.
    Fence,
    /// The range's end, or a latest version newer than the read ts (the merge resolves it).
    Stop,
}

/// One forward fast-path run: the outer key being assembled and what the run counted.
struct SoloRun<'k> {
    /// The keyspace prefix of every outer key.
    outer: &'k [u8],
    /// `outer` and the block's prefix: what each entry's suffix follows.
    head: &'k mut Vec<u8>,
    /// Where a sink that does not take the key in parts has it assembled.
    scratch: &'k mut Vec<u8>,
    /// Pairs appended.
    n: usize,
    /// Keys examined.
    keys: u64,
    /// Key and value bytes examined.
    bytes: u64,
}

impl SoloRun<'_> {
    /// Appends the visible latest versions of table cursor `c`'s keys a block at a time.
    /// Each block's entries are read in place; the bounds are compared with the key split
    /// in block prefix and suffix, and not at all when the block's last key is before them;
    /// the outer key is rebuilt from its shared head and the suffix only.
    fn forward<S: BlockSource, K: KvSink + ?Sized>(
        &mut self,
        c: &mut Cursor<'_, S>,
        b: &RunBounds<'_>,
        max_pairs: usize,
        max_keys: u64,
        out: &mut K,
    ) -> Result<RunStop> {
        loop {
            let Some(it) = c.table_iter() else {
                return Ok(RunStop::Budget);
            };
            let Some(run) = it.block_run() else {
                return Ok(RunStop::Budget);
            };
            // Every key of the block before both bounds: no comparison per key.
            let end_clear = b.end.is_empty() || run.cmp_last(b.end) == Some(Ordering::Less);
            let fence_clear = b.fence.is_none_or(|f| run.cmp_last(f) == Some(Ordering::Less));
            let owner = run.bytes();
            self.head.clear();
            self.head.extend_from_slice(self.outer);
            self.head.extend_from_slice(run.prefix());
            let head = self.head.len();
            let (mut taken, mut stop) = (0usize, None);
            for (suffix, v) in run.clone() {
                if self.n >= max_pairs || self.keys >= max_keys {
                    stop = Some(RunStop::Budget);
                    break;
                }
                if !fence_clear
                    && let Some(f) = b.fence
                    && run.cmp_suffix(suffix, f) != Ordering::Less
                {
                    stop = Some(RunStop::Fence);
                    break;
                }
                if !end_clear && run.cmp_suffix(suffix, b.end) != Ordering::Less {
                    stop = Some(RunStop::Stop);
                    break;
                }
                if v.version > b.read_ts {
                    stop = Some(RunStop::Stop);
                    break;
                }
                let value: &[u8] = if v.meta & BIT_DELETE != 0 { &[] } else { v.value };
                self.keys += 1;
                self.bytes += (head + suffix.len() + value.len()) as u64;
                if !value.is_empty() {
                    out.push_in_split(self.head, suffix, value, owner, self.scratch);
                    self.n += 1;
                }
                taken += 1;
            }
            if let Some(s) = stop {
                it.skip_in_block(taken);
                return Ok(s);
            }
            // The block is used up (a run is never empty): onto its last entry, then past it
            // (into the next block or the level's next table).
            let Some(last) = taken.checked_sub(1) else {
                return Ok(RunStop::Budget);
            };
            it.skip_in_block(last);
            c.next()?;
        }
    }
}
