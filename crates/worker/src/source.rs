//! The adapter from `rcop-snap`'s scanner to `rcop-exec`'s scan trait.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use bytes::Bytes;
use rcop_exec::{KeyRange, KvBatch, ScanError, ScanSource, ScanStatus};
use rcop_proto::errorpb;
use rcop_snap::{KvSink, Scanner};
use rcop_sst::BlockSource;

/// Scan counters of one request, as upstream fills `scan_detail_v2`.
///
/// Non-exhaustive: start from [`ScanStats::default`] to make one outside this crate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScanStats {
    /// Visible pairs handed to the executor (upstream's `write.processed_keys`).
    pub processed_keys: u64,
    /// Key and value bytes of those pairs.
    pub processed_bytes: u64,
    /// Distinct keys the scanner examined, visible or not.
    pub keys_seen: u64,
    /// Bytes of those keys plus their visible values (`total_versions_size`).
    pub bytes_seen: u64,
}

impl ScanStats {
    /// Adds another scan's counters (the parts of a split request).
    pub(crate) fn add(&mut self, o: &ScanStats) {
        self.processed_keys += o.processed_keys;
        self.processed_bytes += o.processed_bytes;
        self.keys_seen += o.keys_seen;
        self.bytes_seen += o.bytes_seen;
    }
}

/// A [`ScanSource`] over a snapshot's [`Scanner`]: the engine reads a rebuilt (or a local)
/// snapshot through it.
///
/// Pairs go straight from the scanner into the engine's batch arena. Once `deadline` has
/// passed, the next batch fails with a `ServerIsBusy` region error ("deadline exceeded"), as
/// upstream answers a request that ran out of time.
#[derive(Debug)]
pub struct SnapScan<'a, S> {
    scanner: Scanner<'a, S>,
    deadline: Option<Instant>,
    cancelled: Option<Arc<AtomicBool>>,
    stats: ScanStats,
}

/// Keys one batch examines at most (visible or not) before the deadline is checked again: a
/// long run of tombstones cannot outlive the deadline by more than this many keys' work.
pub const SCAN_KEYS_PER_CHECK: u64 = 65_536;

impl<'a, S: BlockSource> SnapScan<'a, S> {
    /// Wraps `scanner`; no deadline.
    pub fn new(mut scanner: Scanner<'a, S>) -> Self {
        scanner.set_batch_key_limit(SCAN_KEYS_PER_CHECK);
        SnapScan { scanner, deadline: None, cancelled: None, stats: ScanStats::default() }
    }

    /// Fails the next batch once `flag` is set (the client went away).
    pub fn with_cancel(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancelled = Some(flag);
        self
    }

    /// Fails batches requested after `deadline`.
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// The counters so far.
    pub fn stats(&self) -> ScanStats {
        ScanStats {
            keys_seen: self.scanner.keys_seen(),
            bytes_seen: self.scanner.bytes_seen(),
            ..self.stats
        }
    }
}

impl<S: BlockSource> ScanSource for SnapScan<'_, S> {
    fn start(&mut self, range: &KeyRange, desc: bool) -> Result<(), ScanError> {
        self.scanner.start(&range.start, &range.end, desc).map_err(scan_error)
    }

    fn next_batch(&mut self, max_pairs: usize, out: &mut KvBatch) -> Result<ScanStatus, ScanError> {
        if let Some(deadline) = self.deadline
            && Instant::now() >= deadline
        {
            return Err(deadline_exceeded());
        }
        if self.cancelled.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Err(ScanError::Storage("request cancelled: the client went away".into()));
        }
        let (pairs, bytes) = (out.len(), out.byte_len());
        let status = self.scanner.next_batch(max_pairs, &mut BatchSink(out)).map_err(scan_error)?;
        self.stats.processed_keys += (out.len() - pairs) as u64;
        self.stats.processed_bytes += (out.byte_len() - bytes) as u64;
        Ok(match status {
            rcop_snap::ScanStatus::More => ScanStatus::More,
            rcop_snap::ScanStatus::Done => ScanStatus::Done,
        })
    }
}

/// The scanner's pairs into the engine's batch: values inside a decoded block stay there
/// (the batch pins the block), keys are copied.
struct BatchSink<'b>(&'b mut KvBatch);

impl KvSink for BatchSink<'_> {
    #[inline]
    fn push(&mut self, key: &[u8], value: &[u8]) {
        self.0.push(key, value);
    }

    #[inline(always)]
    fn push_in(&mut self, key: &[u8], value: &[u8], owner: &Bytes) {
        self.0.push_in(key, value, owner);
    }

    #[inline(always)]
    fn push_in_split(
        &mut self,
        head: &[u8],
        suffix: &[u8],
        value: &[u8],
        owner: &Bytes,
        _scratch: &mut Vec<u8>,
    ) {
        self.0.push_in_split(head, suffix, value, owner);
    }
}

/// The region error of a request that ran out of time (upstream: a ServerIsBusy-style error).
pub(crate) fn deadline_exceeded() -> ScanError {
    ScanError::Region(Box::new(deadline_region_error()))
}

/// The `region_error` of a request that ran out of time.
pub(crate) fn deadline_region_error() -> errorpb::Error {
    errorpb::Error {
        message: "deadline exceeded".into(),
        server_is_busy: Some(errorpb::ServerIsBusy {
            reason: "deadline is exceeded".into(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn scan_error(e: rcop_snap::Error) -> ScanError {
    match e {
        rcop_snap::Error::Locked(info) => ScanError::Locked(info),
        e @ rcop_snap::Error::RangeOutOfShard { .. } => {
            ScanError::Region(Box::new(errorpb::Error {
                message: e.to_string(),
                key_not_in_region: Some(errorpb::KeyNotInRegion::default()),
                ..Default::default()
            }))
        }
        e => ScanError::Storage(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rcop_snap::{Shard, ShardConfig};

    use super::*;

    fn shard() -> Shard {
        let shard =
            Shard::new(ShardConfig::new(1, &b"x\0\0\x01"[..], &b"x\0\0\x02"[..], 4).unwrap())
                .unwrap();
        shard.put(b"x\0\0\x01a", 10, 11, b"va").unwrap();
        shard.put(b"x\0\0\x01b", 10, 11, b"vb").unwrap();
        shard.delete(b"x\0\0\x01b", 12, 13).unwrap();
        shard.put(b"x\0\0\x01c", 10, 11, b"vc").unwrap();
        shard.put(b"x\0\0\x01d", 50, 51, b"vd").unwrap(); // newer than the read ts
        shard
    }

    #[test]
    fn pairs_and_counters_pass_through() {
        let shard = shard();
        let snap = shard.snapshot();
        let mut scan = SnapScan::new(snap.scanner(20));
        scan.start(&KeyRange::new(&b"x\0\0\x01"[..], &b"x\0\0\x02"[..]), false).unwrap();
        let mut out = KvBatch::new();
        assert_eq!(scan.next_batch(10, &mut out).unwrap(), ScanStatus::Done);
        let pairs: Vec<_> = out.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
        assert_eq!(
            pairs,
            [(b"x\0\0\x01a".to_vec(), b"va".to_vec()), (b"x\0\0\x01c".to_vec(), b"vc".to_vec())]
        );
        let stats = scan.stats();
        assert_eq!((stats.processed_keys, stats.processed_bytes), (2, 2 * (5 + 2)));
        assert!(stats.keys_seen >= 3, "{stats:?}");
    }

    #[test]
    fn a_passed_deadline_is_a_server_busy_region_error() {
        let shard = shard();
        let snap = shard.snapshot();
        let past = Instant::now().checked_sub(Duration::from_millis(1)).unwrap();
        let mut scan = SnapScan::new(snap.scanner(20)).with_deadline(past);
        scan.start(&KeyRange::new(&b"x\0\0\x01"[..], &b"x\0\0\x02"[..]), false).unwrap();
        match scan.next_batch(10, &mut KvBatch::new()) {
            Err(ScanError::Region(e)) => {
                assert_eq!(e.message, "deadline exceeded");
                assert!(e.server_is_busy.is_some());
            }
            other => panic!("expected a region error, got {other:?}"),
        }
    }

    /// A range of deleted keys returns to the caller every `SCAN_KEYS_PER_CHECK` keys (with
    /// no pair), so the deadline is checked inside it; the pairs after it still come.
    #[test]
    fn a_run_of_tombstones_returns_between_deadline_checks() {
        let shard =
            Shard::new(ShardConfig::new(1, &b"x\0\0\x01"[..], &b"x\0\0\x02"[..], 4).unwrap())
                .unwrap();
        let n = SCAN_KEYS_PER_CHECK as usize * 2 + 10;
        for i in 0..n {
            let key = format!("x\0\0\x01k{i:08}");
            shard.delete(key.as_bytes(), 10, 11).unwrap();
        }
        shard.put(b"x\0\0\x01z", 10, 11, b"vz").unwrap();
        let snap = shard.snapshot();
        let mut scan = SnapScan::new(snap.scanner(20));
        scan.start(&KeyRange::new(&b"x\0\0\x01"[..], &b"x\0\0\x02"[..]), false).unwrap();
        let mut out = KvBatch::new();
        let mut calls = 0;
        while scan.next_batch(1024, &mut out).unwrap() == ScanStatus::More {
            calls += 1;
            assert!(calls < 10, "the scan never ended");
        }
        assert_eq!(calls, 2, "two full runs of tombstones, then the rest");
        assert_eq!(
            out.iter().map(|(k, _)| k.to_vec()).collect::<Vec<_>>(),
            [b"x\0\0\x01z".to_vec()]
        );
        // A flagged cancel fails the next batch.
        let flag = Arc::new(AtomicBool::new(true));
        let mut scan = SnapScan::new(snap.scanner(20)).with_cancel(flag);
        scan.start(&KeyRange::new(&b"x\0\0\x01"[..], &b"x\0\0\x02"[..]), false).unwrap();
        assert!(
            matches!(scan.next_batch(10, &mut out), Err(ScanError::Storage(m)) if m.contains("cancelled"))
        );
    }

    #[test]
    fn a_range_outside_the_shard_is_a_region_error() {
        let shard = shard();
        let snap = shard.snapshot();
        let mut scan = SnapScan::new(snap.scanner(20));
        let err = scan.start(&KeyRange::new(&b"x\0\0\x00"[..], &b"x\0\0\x01z"[..]), false);
        match err {
            Err(ScanError::Region(e)) => assert!(e.key_not_in_region.is_some(), "{e:?}"),
            other => panic!("expected a region error, got {other:?}"),
        }
    }
}
