//! The storage node's half of the first way (delegate): a worker that received TiDB's
//! `coprocessor.Request` asks the node owning the region for the request's snapshot — a
//! `coprocessor.DelegateRequest` (context, start ts, ranges) — and the node answers a
//! `coprocessor.DelegateResponse` with exactly the two last parts of the offload envelope:
//! mem-data v2 (`mem_table_data`) and the `enginepb.ChangeSet` bytes (`snapshot`).
//!
//! [`export_delegate`] runs over the host's [`SnapshotSource`], the same export the HTTP
//! offload uses ([`Offloader::prepare`](crate::Offloader::prepare)): the source checks the
//! in-memory locks and the lock CF **per range** (upstream checks the union bound of the
//! ranges, which reports locks between ranges the request does not read), then exports the
//! memtable rows visible at `start_ts` and the change set of the overlapping files.
//!
//! Every failure is a field of the response, never a transport error:
//!
//! | what | field |
//! |---|---|
//! | blocking lock ([`SourceError::Locked`]) | `locked` |
//! | range outside the shard, stale epoch ([`SourceError::Region`]) | `region_error` |
//! | no permit free ([`DelegatePermits`]) | `region_error.server_is_busy` |
//! | the request's deadline passed | `other_error` starting with [`DEADLINE_EXCEEDED`] |
//! | storage error, malformed request | `other_error` |
//!
//! `mem_table_sequence` / `snapshot_sequence` are declared upstream and used by no upstream
//! code; this node ignores them and always sends both parts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use prost::Message;
use rcop_proto::coprocessor::{DelegateRequest, DelegateResponse, Request};
use rcop_proto::{REQ_TYPE_DAG, errorpb, kvrpcpb};
use rcop_wire::{MemDataFormat, MemDataWriter};

use crate::error::SourceError;
use crate::source::SnapshotSource;

/// Prefix of `other_error` when the request's deadline passed before the export finished.
pub const DEADLINE_EXCEEDED: &str = "deadline exceeded";

/// Default number of delegate exports a node runs at once ([`DelegatePermits`]).
pub const DEFAULT_DELEGATE_CONCURRENCY: usize = 16;

/// Default largest `DelegateRequest` a node decodes: 8 MiB (a request is context + ranges).
pub const DEFAULT_DELEGATE_MAX_REQUEST_SIZE: usize = 8 << 20;

/// The coprocessor request the source sees for a delegate: the client's context, start ts
/// and ranges (a DAG, as the worker will run). The source's lock check reads the context's
/// isolation level, `resolved_locks` and `committed_locks`.
pub fn delegate_as_request(req: &DelegateRequest) -> Request {
    Request {
        context: req.context.clone(),
        tp: REQ_TYPE_DAG,
        start_ts: req.start_ts,
        ranges: req.ranges.clone(),
        ..Request::default()
    }
}

/// Answers one delegate from `source`: lock checks and export (see the module docs), with
/// every error in the response's fields. `deadline` (the request's, if any) is checked
/// before and after the export. Synchronous CPU work: call it off the I/O runtime.
pub fn export_delegate<S: SnapshotSource + ?Sized>(
    req: &DelegateRequest,
    source: &S,
    deadline: Option<Instant>,
) -> DelegateResponse {
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return deadline_response();
    }
    let request = delegate_as_request(req);
    let mut mem_data = Vec::new();
    let mut writer = MemDataWriter::new(&mut mem_data, MemDataFormat::V2);
    let change_set = match source.export(&request, &mut writer) {
        Ok(cs) => cs,
        Err(e) => return source_error_response(&e),
    };
    if let Err(e) = writer.finish() {
        return DelegateResponse {
            other_error: format!("encoding mem-data failed: {e}"),
            ..DelegateResponse::default()
        };
    }
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return deadline_response();
    }
    DelegateResponse {
        mem_table_data: mem_data.into(),
        snapshot: change_set.encode_to_vec().into(),
        ..DelegateResponse::default()
    }
}

/// The response that reports a source error: `locked`, `region_error` or `other_error`.
pub fn source_error_response(e: &SourceError) -> DelegateResponse {
    match e {
        SourceError::Locked(lock) => DelegateResponse {
            locked: Some(kvrpcpb::LockInfo::clone(lock)),
            ..DelegateResponse::default()
        },
        SourceError::Region(err) => DelegateResponse {
            region_error: Some(errorpb::Error::clone(err)),
            ..DelegateResponse::default()
        },
        SourceError::Storage(_) => {
            DelegateResponse { other_error: e.to_string(), ..DelegateResponse::default() }
        }
    }
}

/// `region_error.server_is_busy` with `reason` (what TiKV answers when its read pool is
/// full); the worker retries it with backoff until its deadline.
pub fn busy_response(reason: &str) -> DelegateResponse {
    DelegateResponse {
        region_error: Some(errorpb::Error {
            message: format!("server is busy: {reason}"),
            server_is_busy: Some(errorpb::ServerIsBusy {
                reason: reason.to_owned(),
                ..errorpb::ServerIsBusy::default()
            }),
            ..errorpb::Error::default()
        }),
        ..DelegateResponse::default()
    }
}

/// `other_error` = [`DEADLINE_EXCEEDED`], as upstream reports a delegate past its deadline.
pub fn deadline_response() -> DelegateResponse {
    DelegateResponse {
        other_error: format!("{DEADLINE_EXCEEDED}: the delegate request's deadline passed"),
        ..DelegateResponse::default()
    }
}

/// The deadline a delegate carries in `context.max_execution_duration_ms` (0: none),
/// counted from `received`.
pub fn context_deadline(req: &DelegateRequest, received: Instant) -> Option<Instant> {
    match req.context.as_ref().map_or(0, |c| c.max_execution_duration_ms) {
        0 => None,
        ms => received.checked_add(Duration::from_millis(ms)),
    }
}

/// The node's own limit on concurrent delegate exports: a full set answers
/// [`busy_response`] at once instead of queueing (TiKV's full read pool → server is busy).
/// Cloning shares the count.
#[derive(Clone, Debug)]
pub struct DelegatePermits {
    inner: Arc<PermitCount>,
}

#[derive(Debug)]
struct PermitCount {
    max: AtomicUsize,
    used: AtomicUsize,
}

/// A held permit; returned on drop.
#[derive(Debug)]
pub struct DelegatePermit {
    inner: Arc<PermitCount>,
}

impl DelegatePermits {
    /// At most `max` exports at once (0: every request is busy).
    pub fn new(max: usize) -> Self {
        DelegatePermits {
            inner: Arc::new(PermitCount { max: AtomicUsize::new(max), used: AtomicUsize::new(0) }),
        }
    }

    /// Takes a permit, or `None` when all are held.
    pub fn try_acquire(&self) -> Option<DelegatePermit> {
        let max = self.inner.max.load(Ordering::Relaxed);
        self.inner
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| (u < max).then_some(u + 1))
            .ok()
            .map(|_| DelegatePermit { inner: Arc::clone(&self.inner) })
    }

    /// Changes the limit at run time; held permits stay valid.
    pub fn set_max(&self, max: usize) {
        self.inner.max.store(max, Ordering::Relaxed);
    }

    /// Permits held now.
    pub fn in_use(&self) -> usize {
        self.inner.used.load(Ordering::Relaxed)
    }
}

impl Drop for DelegatePermit {
    fn drop(&mut self) {
        self.inner.used.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use rcop_proto::coprocessor::KeyRange;
    use rcop_proto::enginepb::ChangeSet;
    use rcop_snap::{Lock, LockType, Shard, ShardConfig};
    use rcop_wire::MemData;

    use super::*;
    use crate::ShardSource;

    const START: &[u8] = b"x\0\0\x01";
    const END: &[u8] = b"x\0\0\x02";

    fn key(k: &str) -> Vec<u8> {
        [START, k.as_bytes()].concat()
    }

    fn range(a: &str, b: &str) -> KeyRange {
        KeyRange { start: key(a).into(), end: key(b).into() }
    }

    fn shard() -> Shard {
        let shard = Shard::new(ShardConfig::new(7, START, END, 4).unwrap()).unwrap();
        shard.put(&key("a"), 5, 10, b"va").unwrap();
        shard.put(&key("b"), 5, 10, b"vb-old").unwrap();
        shard.put(&key("b"), 20, 30, b"vb-new").unwrap();
        shard.put(&key("m"), 5, 10, b"vm").unwrap();
        shard
    }

    fn request(ranges: Vec<KeyRange>, start_ts: u64) -> DelegateRequest {
        DelegateRequest {
            context: Some(kvrpcpb::Context { region_id: 7, ..Default::default() }),
            start_ts,
            ranges,
            ..Default::default()
        }
    }

    #[test]
    fn exports_the_envelope_parts() {
        let shard = shard();
        let req = request(vec![range("a", "c")], 25);
        let resp = export_delegate(&req, &ShardSource::new(&shard), None);
        assert!(resp.region_error.is_none() && resp.locked.is_none(), "{resp:?}");
        assert_eq!(resp.other_error, "");
        let mem = MemData::decode(resp.mem_table_data.clone()).unwrap();
        assert_eq!(mem.format(), Some(MemDataFormat::V2));
        let rows: Vec<(Vec<u8>, Vec<u8>)> =
            mem.rows().iter().map(|r| (r.key.to_vec(), r.value.to_vec())).collect();
        // Newest version <= start_ts per key, only the requested range.
        assert_eq!(rows, vec![(key("a"), b"va".to_vec()), (key("b"), b"vb-old".to_vec())]);
        // The same bytes the HTTP export would ship in its envelope.
        let mut expected = Vec::new();
        let mut w = MemDataWriter::new(&mut expected, MemDataFormat::V2);
        let cs = ShardSource::new(&shard).export(&delegate_as_request(&req), &mut w).unwrap();
        w.finish().unwrap();
        assert_eq!(resp.mem_table_data, Bytes::from(expected));
        assert_eq!(ChangeSet::decode(resp.snapshot).unwrap(), cs);
        assert_eq!(cs.shard_id, 7);
    }

    #[test]
    fn lock_in_a_range_is_reported_but_not_between_ranges() {
        let shard = shard();
        let lock = Lock::new(LockType::Put, key("f"), 15, 3000);
        shard.put_lock(&key("f"), &lock).unwrap();
        // Per range: "f" lies between [a, c) and [m, n), so it does not block the read.
        let between = request(vec![range("a", "c"), range("m", "n")], 25);
        let resp = export_delegate(&between, &ShardSource::new(&shard), None);
        assert!(resp.locked.is_none(), "{resp:?}");
        // A range that covers it answers `locked`.
        let over = request(vec![range("e", "g")], 25);
        let resp = export_delegate(&over, &ShardSource::new(&shard), None);
        let locked = resp.locked.unwrap();
        assert_eq!(locked.key, Bytes::from(key("f")));
        assert_eq!(locked.lock_version, 15);
        assert!(resp.mem_table_data.is_empty() && resp.snapshot.is_empty());
    }

    #[test]
    fn region_and_deadline_errors_are_fields() {
        let shard = shard();
        let outside =
            KeyRange { start: b"x\0\0\x05a".to_vec().into(), end: b"x\0\0\x05b".to_vec().into() };
        let resp = export_delegate(&request(vec![outside], 25), &ShardSource::new(&shard), None);
        assert!(resp.region_error.is_some(), "{resp:?}");
        let past = Instant::now().checked_sub(Duration::from_millis(1));
        let resp =
            export_delegate(&request(vec![range("a", "b")], 25), &ShardSource::new(&shard), past);
        assert!(resp.other_error.starts_with(DEADLINE_EXCEEDED), "{resp:?}");
        let ctx_deadline = context_deadline(
            &DelegateRequest {
                context: Some(kvrpcpb::Context {
                    max_execution_duration_ms: 50,
                    ..Default::default()
                }),
                ..Default::default()
            },
            Instant::now(),
        );
        assert!(ctx_deadline.is_some());
        assert!(context_deadline(&DelegateRequest::default(), Instant::now()).is_none());
    }

    #[test]
    fn permits_bound_concurrency() {
        let permits = DelegatePermits::new(2);
        let a = permits.try_acquire().unwrap();
        let _b = permits.try_acquire().unwrap();
        assert!(permits.try_acquire().is_none());
        drop(a);
        assert_eq!(permits.in_use(), 1);
        assert!(permits.try_acquire().is_some());
        permits.set_max(0);
        assert!(permits.try_acquire().is_none());
        let busy = busy_response("delegate permits");
        assert!(busy.region_error.unwrap().server_is_busy.is_some());
    }
}
