//! TiKV lock records (the lock column family) and the rules for which locks block a read.
//!
//! Record layout (formats reference §2.9): a lock type byte, the primary key as compact bytes,
//! `varint start_ts`, `varint ttl`, then optional tagged fields. Fixed-width `u64` fields are
//! big-endian (TiKV's `encode_u64`). A decoder stops at the first tag it does not know, as
//! TiKV does, so newer writers stay readable.

use bytes::Bytes;
use rcop_datum::Reader;
use rcop_datum::codec::{
    decode_compact_bytes, decode_var_u64, encode_compact_bytes, encode_var_u64,
};
use rcop_proto::kvrpcpb::{IsolationLevel, LockInfo, Op};

use crate::error::{Error, Result};

const TAG_SHORT_VALUE: u8 = b'v';
const TAG_FOR_UPDATE_TS: u8 = b'f';
const TAG_TXN_SIZE: u8 = b't';
const TAG_MIN_COMMIT_TS: u8 = b'c';
const TAG_ASYNC_COMMIT: u8 = b'a';
const TAG_ROLLBACK_TS: u8 = b'r';
const TAG_LAST_CHANGE: u8 = b'l';
const TAG_TXN_SOURCE: u8 = b's';
const TAG_LOCKED_WITH_CONFLICT: u8 = b'F';
const TAG_GENERATION: u8 = b'g';

/// Kind of a lock (first byte of the record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockType {
    /// `'P'`: a prewritten put.
    Put,
    /// `'D'`: a prewritten delete.
    Delete,
    /// `'L'`: a lock without a write (`SELECT … FOR UPDATE` in optimistic mode).
    Lock,
    /// `'S'`: a pessimistic lock.
    Pessimistic,
    /// `'H'`: a shared lock.
    Shared,
}

impl LockType {
    /// The record's type byte.
    pub fn to_byte(self) -> u8 {
        match self {
            LockType::Put => b'P',
            LockType::Delete => b'D',
            LockType::Lock => b'L',
            LockType::Pessimistic => b'S',
            LockType::Shared => b'H',
        }
    }

    /// Parses a type byte.
    pub fn from_byte(b: u8) -> Option<Self> {
        match b {
            b'P' => Some(LockType::Put),
            b'D' => Some(LockType::Delete),
            b'L' => Some(LockType::Lock),
            b'S' => Some(LockType::Pessimistic),
            b'H' => Some(LockType::Shared),
            _ => None,
        }
    }

    /// The `kvrpcpb.Op` reported in `LockInfo.lock_type`.
    pub fn to_op(self) -> Op {
        match self {
            LockType::Put => Op::Put,
            LockType::Delete => Op::Del,
            LockType::Lock => Op::Lock,
            LockType::Pessimistic => Op::PessimisticLock,
            LockType::Shared => Op::SharedLock,
        }
    }
}

/// A decoded lock record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    /// Lock type.
    pub lock_type: LockType,
    /// Primary key of the transaction.
    pub primary: Bytes,
    /// Start ts of the transaction (the lock's ts).
    pub ts: u64,
    /// Time to live in milliseconds.
    pub ttl: u64,
    /// The value, when short enough to live in the lock (`'v'`, at most 255 bytes).
    pub short_value: Option<Bytes>,
    /// `'f'`: for_update_ts of a pessimistic transaction (0 = absent).
    pub for_update_ts: u64,
    /// `'t'`: number of keys of the transaction in the region (0 = absent).
    pub txn_size: u64,
    /// `'c'`: minimum commit ts (0 = absent).
    pub min_commit_ts: u64,
    /// `'a'`: the transaction uses async commit; the primary lists its secondaries.
    pub use_async_commit: bool,
    /// Secondary keys of an async-commit primary.
    pub secondaries: Vec<Bytes>,
    /// `'r'`: rollback timestamps collapsed into this lock.
    pub rollback_ts: Vec<u64>,
    /// `'l'`: last change ts and versions to it (`(0, 0)` = absent).
    pub last_change: (u64, u64),
    /// `'s'`: txn source (0 = absent).
    pub txn_source: u64,
    /// `'F'`: pessimistic lock acquired with a conflict.
    pub locked_with_conflict: bool,
    /// `'g'`: generation of a pipelined-DML lock (0 = absent).
    pub generation: u64,
}

impl Lock {
    /// A lock of `lock_type` by the transaction `ts` with primary key `primary`; every
    /// optional field absent.
    pub fn new(lock_type: LockType, primary: impl Into<Bytes>, ts: u64, ttl: u64) -> Self {
        Lock {
            lock_type,
            primary: primary.into(),
            ts,
            ttl,
            short_value: None,
            for_update_ts: 0,
            txn_size: 0,
            min_commit_ts: 0,
            use_async_commit: false,
            secondaries: Vec::new(),
            rollback_ts: Vec::new(),
            last_change: (0, 0),
            txn_source: 0,
            locked_with_conflict: false,
            generation: 0,
        }
    }

    /// Appends the record to `out`. Optional fields are written when set, in TiKV's order.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the short value exceeds 255 bytes.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<()> {
        out.push(self.lock_type.to_byte());
        encode_compact_bytes(out, &self.primary);
        encode_var_u64(out, self.ts);
        encode_var_u64(out, self.ttl);
        if let Some(v) = &self.short_value {
            let len = u8::try_from(v.len())
                .map_err(|_| Error::InvalidArgument("lock short value longer than 255 bytes"))?;
            out.push(TAG_SHORT_VALUE);
            out.push(len);
            out.extend_from_slice(v);
        }
        if self.for_update_ts > 0 {
            out.push(TAG_FOR_UPDATE_TS);
            out.extend_from_slice(&self.for_update_ts.to_be_bytes());
        }
        if self.txn_size > 0 {
            out.push(TAG_TXN_SIZE);
            out.extend_from_slice(&self.txn_size.to_be_bytes());
        }
        if self.min_commit_ts > 0 {
            out.push(TAG_MIN_COMMIT_TS);
            out.extend_from_slice(&self.min_commit_ts.to_be_bytes());
        }
        if self.use_async_commit {
            out.push(TAG_ASYNC_COMMIT);
            encode_var_u64(out, self.secondaries.len() as u64);
            for s in &self.secondaries {
                encode_compact_bytes(out, s);
            }
        }
        if !self.rollback_ts.is_empty() {
            out.push(TAG_ROLLBACK_TS);
            encode_var_u64(out, self.rollback_ts.len() as u64);
            for ts in &self.rollback_ts {
                out.extend_from_slice(&ts.to_be_bytes());
            }
        }
        if self.last_change != (0, 0) {
            out.push(TAG_LAST_CHANGE);
            out.extend_from_slice(&self.last_change.0.to_be_bytes());
            encode_var_u64(out, self.last_change.1);
        }
        if self.txn_source > 0 {
            out.push(TAG_TXN_SOURCE);
            encode_var_u64(out, self.txn_source);
        }
        if self.locked_with_conflict {
            out.push(TAG_LOCKED_WITH_CONFLICT);
        }
        if self.generation > 0 {
            out.push(TAG_GENERATION);
            out.extend_from_slice(&self.generation.to_be_bytes());
        }
        Ok(())
    }

    /// The encoded record.
    ///
    /// # Errors
    ///
    /// As [`encode_into`](Self::encode_into).
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Decodes a record. Byte fields are copied out of `data`.
    ///
    /// # Errors
    ///
    /// [`Error::LockRecord`] for an unknown lock type, a truncated field, a bad varint or a
    /// count that cannot fit the bytes left.
    pub fn decode(data: &[u8]) -> Result<Lock> {
        let mut r = Reader::new(data);
        let bad = |r: &Reader<'_>, reason| Error::LockRecord { offset: r.pos(), reason };
        let ty = r.read_u8("lock type").map_err(|_| bad(&r, "empty lock record"))?;
        let lock_type = LockType::from_byte(ty).ok_or_else(|| bad(&r, "unknown lock type"))?;
        let at = r.pos();
        let primary = decode_compact_bytes(&mut r)
            .map_err(|_| Error::LockRecord { offset: at, reason: "primary key" })?;
        let mut lock = Lock::new(lock_type, Bytes::copy_from_slice(primary), 0, 0);
        lock.ts = var(&mut r, "start ts")?;
        lock.ttl = var(&mut r, "ttl")?;
        while let Some(tag) = r.peek_u8() {
            match tag {
                TAG_SHORT_VALUE => {
                    skip_tag(&mut r);
                    let len = fixed_u8(&mut r, "short value length")?;
                    let at = r.pos();
                    let v = r
                        .read_bytes(usize::from(len), "short value")
                        .map_err(|_| Error::LockRecord { offset: at, reason: "short value" })?;
                    lock.short_value = Some(Bytes::copy_from_slice(v));
                }
                TAG_FOR_UPDATE_TS => {
                    skip_tag(&mut r);
                    lock.for_update_ts = fixed_u64(&mut r, "for_update_ts")?;
                }
                TAG_TXN_SIZE => {
                    skip_tag(&mut r);
                    lock.txn_size = fixed_u64(&mut r, "txn size")?;
                }
                TAG_MIN_COMMIT_TS => {
                    skip_tag(&mut r);
                    lock.min_commit_ts = fixed_u64(&mut r, "min_commit_ts")?;
                }
                TAG_ASYNC_COMMIT => {
                    skip_tag(&mut r);
                    lock.use_async_commit = true;
                    let n = count(&mut r, 1, "secondaries count")?;
                    lock.secondaries.reserve(n);
                    for _ in 0..n {
                        let at = r.pos();
                        let s = decode_compact_bytes(&mut r)
                            .map_err(|_| Error::LockRecord { offset: at, reason: "secondary" })?;
                        lock.secondaries.push(Bytes::copy_from_slice(s));
                    }
                }
                TAG_ROLLBACK_TS => {
                    skip_tag(&mut r);
                    let n = count(&mut r, 8, "rollback ts count")?;
                    lock.rollback_ts.reserve(n);
                    for _ in 0..n {
                        lock.rollback_ts.push(fixed_u64(&mut r, "rollback ts")?);
                    }
                }
                TAG_LAST_CHANGE => {
                    skip_tag(&mut r);
                    let ts = fixed_u64(&mut r, "last change ts")?;
                    lock.last_change = (ts, var(&mut r, "versions to last change")?);
                }
                TAG_TXN_SOURCE => {
                    skip_tag(&mut r);
                    lock.txn_source = var(&mut r, "txn source")?;
                }
                TAG_LOCKED_WITH_CONFLICT => {
                    skip_tag(&mut r);
                    lock.locked_with_conflict = true;
                }
                TAG_GENERATION => {
                    skip_tag(&mut r);
                    lock.generation = fixed_u64(&mut r, "generation")?;
                }
                // Unknown tag (shared-lock fields, newer writers): stop, as TiKV does.
                _ => break,
            }
        }
        Ok(lock)
    }

    /// The `LockInfo` reported to the client for this lock on `raw_key` (the outer key).
    pub fn to_lock_info(&self, raw_key: &[u8]) -> LockInfo {
        LockInfo {
            primary_lock: self.primary.clone(),
            lock_version: self.ts,
            key: Bytes::copy_from_slice(raw_key),
            lock_ttl: self.ttl,
            txn_size: self.txn_size,
            lock_type: self.lock_type.to_op() as i32,
            lock_for_update_ts: self.for_update_ts,
            use_async_commit: self.use_async_commit,
            min_commit_ts: self.min_commit_ts,
            secondaries: self.secondaries.clone(),
            ..LockInfo::default()
        }
    }

    /// Whether this lock on `raw_key` blocks a snapshot-isolation read at `read_ts` (TiKV's
    /// `check_ts_conflict`):
    ///
    /// - locks newer than the read (`ts > read_ts`) never block;
    /// - only `Put` and `Delete` locks block (lock-only, pessimistic and shared locks do
    ///   not, nor a pessimistic lock taken with a conflict);
    /// - a `min_commit_ts` above the read ts means the transaction will commit after it;
    /// - locks whose ts is in `bypass` (the request's `resolved_locks`) are skipped;
    /// - a read at `u64::MAX` may read the primary key of a non-async-commit transaction.
    pub fn blocks_read(&self, raw_key: &[u8], read_ts: u64, bypass: &TsSet) -> bool {
        if self.ts > read_ts
            || !matches!(self.lock_type, LockType::Put | LockType::Delete)
            || self.locked_with_conflict
            || self.min_commit_ts > read_ts
            || bypass.contains(self.ts)
        {
            return false;
        }
        !(read_ts == u64::MAX && raw_key == self.primary && !self.use_async_commit)
    }
}

fn skip_tag(r: &mut Reader<'_>) {
    // The caller peeked the tag byte, so this cannot fail.
    let _ = r.read_u8("tag");
}

fn var(r: &mut Reader<'_>, reason: &'static str) -> Result<u64> {
    let at = r.pos();
    decode_var_u64(r).map_err(|_| Error::LockRecord { offset: at, reason })
}

fn fixed_u64(r: &mut Reader<'_>, reason: &'static str) -> Result<u64> {
    let at = r.pos();
    r.read_u64_be(reason).map_err(|_| Error::LockRecord { offset: at, reason })
}

fn fixed_u8(r: &mut Reader<'_>, reason: &'static str) -> Result<u8> {
    let at = r.pos();
    r.read_u8(reason).map_err(|_| Error::LockRecord { offset: at, reason })
}

/// Reads an element count and checks that `count × min_size` bytes can follow.
fn count(r: &mut Reader<'_>, min_size: usize, reason: &'static str) -> Result<usize> {
    let at = r.pos();
    let n = var(r, reason)?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n.checked_mul(min_size).is_some_and(|b| b <= r.remaining()))
        .ok_or(Error::LockRecord { offset: at, reason })
}

/// A set of transaction timestamps (`resolved_locks`, `committed_locks`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TsSet(Vec<u64>);

impl TsSet {
    /// A set of the given timestamps (any order, duplicates allowed).
    pub fn new(mut ts: Vec<u64>) -> Self {
        ts.sort_unstable();
        ts.dedup();
        TsSet(ts)
    }

    /// True when `ts` is in the set.
    pub fn contains(&self, ts: u64) -> bool {
        self.0.binary_search(&ts).is_ok()
    }

    /// True when the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What a read checks locks with: the read ts, the isolation level and the request's
/// `resolved_locks` / `committed_locks` (`kvrpcpb.Context` fields 13 and 22).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockCheck {
    /// The read ts (`coprocessor.Request.start_ts`).
    pub read_ts: u64,
    /// Isolation level: SI checks locks, RC does not, RCCheckTS reports a write conflict.
    pub isolation: IsolationLevel,
    /// Locks to ignore (resolved by the client).
    pub bypass_locks: TsSet,
    /// Locks known committed: the read sees their value instead of blocking.
    pub committed_locks: TsSet,
}

impl LockCheck {
    /// A snapshot-isolation check at `read_ts` with no bypassed or committed locks.
    pub fn si(read_ts: u64) -> Self {
        LockCheck {
            read_ts,
            isolation: IsolationLevel::Si,
            bypass_locks: TsSet::default(),
            committed_locks: TsSet::default(),
        }
    }

    /// The check a coprocessor request asks for: its `start_ts` and its context's
    /// `isolation_level`, `resolved_locks` and `committed_locks` (an unknown isolation level
    /// is treated as SI, the strictest).
    pub fn from_request(start_ts: u64, ctx: &rcop_proto::kvrpcpb::Context) -> Self {
        LockCheck {
            read_ts: start_ts,
            isolation: IsolationLevel::try_from(ctx.isolation_level).unwrap_or(IsolationLevel::Si),
            bypass_locks: TsSet::new(ctx.resolved_locks.clone()),
            committed_locks: TsSet::new(ctx.committed_locks.clone()),
        }
    }

    /// Checks one lock on `raw_key`: `Ok(None)` when it does not block,
    /// `Ok(Some(read))` when it would block but is committed (its value is read through),
    /// an error otherwise.
    ///
    /// # Errors
    ///
    /// [`Error::Locked`] (SI) or [`Error::WriteConflict`] (RCCheckTS) for a blocking lock.
    pub fn check(&self, raw_key: &[u8], lock: &Lock) -> Result<Option<CommittedRead>> {
        if self.isolation == IsolationLevel::Rc
            || !lock.blocks_read(raw_key, self.read_ts, &self.bypass_locks)
        {
            return Ok(None);
        }
        if self.committed_locks.contains(lock.ts) {
            let value = match lock.lock_type {
                LockType::Delete => Some(Bytes::new()),
                _ => lock.short_value.clone(),
            };
            // A put whose value is not in the lock would need the default CF, which this
            // engine does not keep: report the lock instead of guessing.
            if let Some(value) = value {
                return Ok(Some(CommittedRead {
                    key: Bytes::copy_from_slice(raw_key),
                    ts: lock.ts,
                    value,
                }));
            }
        }
        if self.isolation == IsolationLevel::RcCheckTs {
            return Err(Error::WriteConflict {
                key: raw_key.to_vec(),
                lock_ts: lock.ts,
                read_ts: self.read_ts,
            });
        }
        Err(Error::Locked(Box::new(lock.to_lock_info(raw_key))))
    }
}

/// A committed lock read through: the key's value at the read is the lock's (an empty value
/// for a delete), versioned at the lock's ts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedRead {
    /// The outer key.
    pub key: Bytes,
    /// The lock's ts (used as the version).
    pub ts: u64,
    /// The value; empty = deleted.
    pub value: Bytes,
}

/// The host's in-memory lock table (TiKV's concurrency manager), checked before the lock CF.
///
/// The tikv-server fork implements it over its concurrency manager; tests use the
/// `BTreeMap` implementation.
pub trait LockTable {
    /// Calls `f` with every lock on a key in `[start, end)` (outer keys; an empty `end` means
    /// unbounded), stopping at the first error `f` returns and passing it on.
    ///
    /// # Errors
    ///
    /// Whatever `f` returns.
    fn for_each_lock(
        &self,
        start: &[u8],
        end: &[u8],
        f: &mut dyn FnMut(&[u8], &Lock) -> Result<()>,
    ) -> Result<()>;
}

/// A lock table without locks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLocks;

impl LockTable for NoLocks {
    fn for_each_lock(
        &self,
        _start: &[u8],
        _end: &[u8],
        _f: &mut dyn FnMut(&[u8], &Lock) -> Result<()>,
    ) -> Result<()> {
        Ok(())
    }
}

impl LockTable for std::collections::BTreeMap<Vec<u8>, Lock> {
    fn for_each_lock(
        &self,
        start: &[u8],
        end: &[u8],
        f: &mut dyn FnMut(&[u8], &Lock) -> Result<()>,
    ) -> Result<()> {
        use std::ops::Bound;
        let upper = if end.is_empty() { Bound::Unbounded } else { Bound::Excluded(end) };
        for (k, lock) in self.range::<[u8], _>((Bound::Included(start), upper)) {
            f(k, lock)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_known_bytes() {
        let mut lock = Lock::new(LockType::Put, &b"pk"[..], 300, 3000);
        lock.short_value = Some(Bytes::from_static(b"v1"));
        lock.min_commit_ts = 301;
        let bytes = lock.encode().unwrap();
        // 'P', compact "pk" (zigzag 2 = 04), varint 300 = AC 02, varint 3000 = B8 17,
        // 'v' 02 "v1", 'c' + u64 BE 301.
        assert_eq!(
            hex::encode(&bytes),
            "50".to_owned() + "04706b" + "ac02" + "b817" + "76027631" + "63000000000000012d"
        );
        assert_eq!(Lock::decode(&bytes).unwrap(), lock);
    }

    #[test]
    fn round_trips_every_field() {
        let mut lock = Lock::new(LockType::Pessimistic, &b"primary"[..], 7, 9);
        lock.for_update_ts = 11;
        lock.txn_size = 3;
        lock.use_async_commit = true;
        lock.secondaries = vec![Bytes::from_static(b"s1"), Bytes::from_static(b"")];
        lock.rollback_ts = vec![5, 6];
        lock.last_change = (4, 2);
        lock.txn_source = 1;
        lock.locked_with_conflict = true;
        lock.generation = 8;
        let bytes = lock.encode().unwrap();
        assert_eq!(Lock::decode(&bytes).unwrap(), lock);
    }

    #[test]
    fn stops_at_unknown_tag() {
        let mut bytes = Lock::new(LockType::Delete, &b"p"[..], 1, 2).encode().unwrap();
        bytes.extend_from_slice(b"h\x01\x02garbage");
        let lock = Lock::decode(&bytes).unwrap();
        assert_eq!((lock.lock_type, lock.ts, lock.ttl), (LockType::Delete, 1, 2));
    }

    #[test]
    fn malformed_records_are_errors() {
        let good = {
            let mut l = Lock::new(LockType::Put, &b"pk"[..], 300, 3000);
            l.short_value = Some(Bytes::from_static(b"value"));
            l.use_async_commit = true;
            l.secondaries = vec![Bytes::from_static(b"a")];
            l.encode().unwrap()
        };
        for cut in 0..good.len() {
            let r = Lock::decode(&good[..cut]);
            // Cutting exactly before a tag leaves a valid shorter record.
            if let Err(e) = r {
                assert!(matches!(e, Error::LockRecord { .. }), "{e}");
            }
        }
        assert!(matches!(Lock::decode(b"X\x00\x01\x01"), Err(Error::LockRecord { offset: 1, .. })));
        // A secondaries count far larger than the bytes left.
        let mut huge = Lock::new(LockType::Put, &b""[..], 1, 1).encode().unwrap();
        huge.extend_from_slice(&[b'a', 0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(matches!(Lock::decode(&huge), Err(Error::LockRecord { .. })));
    }

    fn check(lock: &Lock, key: &[u8], c: &LockCheck) -> Result<Option<CommittedRead>> {
        c.check(key, lock)
    }

    #[test]
    fn tikv_rules() {
        let put = Lock::new(LockType::Put, &b"pk"[..], 10, 100);
        let key = b"k";
        assert!(matches!(check(&put, key, &LockCheck::si(10)), Err(Error::Locked(_))));
        assert!(matches!(check(&put, key, &LockCheck::si(20)), Err(Error::Locked(_))));
        assert!(check(&put, key, &LockCheck::si(9)).unwrap().is_none());
        for ty in [LockType::Lock, LockType::Pessimistic, LockType::Shared] {
            let l = Lock { lock_type: ty, ..put.clone() };
            assert!(check(&l, key, &LockCheck::si(20)).unwrap().is_none());
        }
        let del = Lock { lock_type: LockType::Delete, ..put.clone() };
        assert!(matches!(check(&del, key, &LockCheck::si(20)), Err(Error::Locked(_))));
        let min_commit = Lock { min_commit_ts: 21, ..put.clone() };
        assert!(check(&min_commit, key, &LockCheck::si(20)).unwrap().is_none());
        assert!(check(&min_commit, key, &LockCheck::si(21)).is_err());
        let resolved = LockCheck { bypass_locks: TsSet::new(vec![3, 10]), ..LockCheck::si(20) };
        assert!(check(&put, key, &resolved).unwrap().is_none());
        let rc = LockCheck { isolation: IsolationLevel::Rc, ..LockCheck::si(20) };
        assert!(check(&put, key, &rc).unwrap().is_none());
        let rcts = LockCheck { isolation: IsolationLevel::RcCheckTs, ..LockCheck::si(20) };
        assert!(matches!(check(&put, key, &rcts), Err(Error::WriteConflict { lock_ts: 10, .. })));
        // A max-ts read may read the primary of a non-async-commit transaction.
        assert!(check(&put, b"pk", &LockCheck::si(u64::MAX)).unwrap().is_none());
        assert!(check(&put, b"k", &LockCheck::si(u64::MAX)).is_err());
        let async_put = Lock { use_async_commit: true, ..put.clone() };
        assert!(check(&async_put, b"pk", &LockCheck::si(u64::MAX)).is_err());
    }

    #[test]
    fn locked_error_carries_lock_info() {
        let mut lock = Lock::new(LockType::Delete, &b"pk"[..], 10, 100);
        lock.txn_size = 4;
        lock.min_commit_ts = 12;
        lock.for_update_ts = 11;
        let Err(Error::Locked(info)) = check(&lock, b"key", &LockCheck::si(15)) else {
            panic!("expected locked");
        };
        assert_eq!(&info.primary_lock[..], b"pk");
        assert_eq!(&info.key[..], b"key");
        assert_eq!(
            (info.lock_version, info.lock_ttl, info.txn_size, info.min_commit_ts),
            (10, 100, 4, 12)
        );
        assert_eq!(info.lock_for_update_ts, 11);
        assert_eq!(info.lock_type, Op::Del as i32);
    }

    #[test]
    fn from_request_context() {
        let ctx = rcop_proto::kvrpcpb::Context {
            isolation_level: IsolationLevel::Rc as i32,
            resolved_locks: vec![9, 3, 9],
            committed_locks: vec![4],
            ..Default::default()
        };
        let c = LockCheck::from_request(77, &ctx);
        assert_eq!(c.read_ts, 77);
        assert_eq!(c.isolation, IsolationLevel::Rc);
        assert!(c.bypass_locks.contains(3) && c.bypass_locks.contains(9));
        assert!(c.committed_locks.contains(4) && !c.committed_locks.contains(9));
        let odd = rcop_proto::kvrpcpb::Context { isolation_level: 42, ..Default::default() };
        assert_eq!(LockCheck::from_request(1, &odd).isolation, IsolationLevel::Si);
    }

    #[test]
    fn committed_locks_read_through() {
        let mut put = Lock::new(LockType::Put, &b"pk"[..], 10, 100);
        put.short_value = Some(Bytes::from_static(b"val"));
        let c = LockCheck { committed_locks: TsSet::new(vec![10]), ..LockCheck::si(20) };
        let read = check(&put, b"k", &c).unwrap().unwrap();
        assert_eq!((&read.key[..], read.ts, &read.value[..]), (&b"k"[..], 10, &b"val"[..]));
        let del = Lock::new(LockType::Delete, &b"pk"[..], 10, 100);
        assert!(check(&del, b"k", &c).unwrap().unwrap().value.is_empty());
        // No short value: the value is not available, so the lock is reported.
        let long = Lock::new(LockType::Put, &b"pk"[..], 10, 100);
        assert!(matches!(check(&long, b"k", &c), Err(Error::Locked(_))));
    }

    fn lock_strategy() -> impl proptest::strategy::Strategy<Value = Lock> {
        use proptest::prelude::*;
        let ty = prop_oneof![
            Just(LockType::Put),
            Just(LockType::Delete),
            Just(LockType::Lock),
            Just(LockType::Pessimistic),
            Just(LockType::Shared),
        ];
        let bytes = || proptest::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from);
        (
            (ty, bytes(), any::<u64>(), any::<u64>(), proptest::option::of(bytes())),
            (any::<u64>(), any::<u64>(), any::<u64>(), proptest::collection::vec(bytes(), 0..3)),
            (proptest::collection::vec(any::<u64>(), 0..3), any::<(u64, u64)>(), any::<u64>()),
            (any::<bool>(), any::<bool>(), any::<u64>()),
        )
            .prop_map(
                |(
                    (ty, primary, ts, ttl, short),
                    (fu, size, mc, secs),
                    (rb, lc, src),
                    (ac, wc, g),
                )| {
                    let mut l = Lock::new(ty, primary, ts, ttl);
                    l.short_value = short;
                    l.for_update_ts = fu;
                    l.txn_size = size;
                    l.min_commit_ts = mc;
                    l.use_async_commit = ac || !secs.is_empty();
                    l.secondaries = secs;
                    l.rollback_ts = rb;
                    l.last_change = lc;
                    l.txn_source = src;
                    l.locked_with_conflict = wc;
                    l.generation = g;
                    l
                },
            )
    }

    proptest::proptest! {
        #[test]
        fn encode_decode_round_trip(lock in lock_strategy()) {
            let bytes = lock.encode().unwrap();
            proptest::prop_assert_eq!(Lock::decode(&bytes).unwrap(), lock);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            if let Err(e) = Lock::decode(&bytes) {
                let is_lock_record = matches!(e, Error::LockRecord { .. });
                proptest::prop_assert!(is_lock_record, "{}", e);
            }
        }
    }
}
