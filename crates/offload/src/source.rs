//! What the offloader needs from the storage node's snapshot, and the clock it reads.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use rcop_proto::coprocessor::{KeyRange, Request};
use rcop_proto::enginepb::ChangeSet;
use rcop_wire::MemDataWriter;

use crate::error::SourceError;

/// The storage node's view of one shard, as the offload path needs it.
///
/// Implement it over the host's engine following the export contract — outer keys, rows
/// ascending with one visible version per key (every version, newest first, when
/// `start_ts == u64::MAX`), MVCC deletes shipped as empty values, locks checked first,
/// `committed_locks` read through, the change set of the overlapping files — written out in
/// `rcop_wire`'s export module docs. [`rcop_wire::ExportRows`] checks the rows as they are
/// written, [`rcop_wire::ChangeSetBuilder`] builds the change set from the host's file list,
/// and [`conformance::check_source`](crate::conformance::check_source) tests an
/// implementation against a model. [`ShardSource`](crate::ShardSource) is the
/// implementation over `rcop-snap`'s own shard.
///
/// Two methods, matching what `rcop-snap`'s `Shard` offers (`estimated_range_blocks_size`
/// and `export`), so the storage node implements this trait by forwarding:
///
/// * [`estimated_range_blocks_size`](Self::estimated_range_blocks_size) is called only for
///   requests that reach the size rule (step 4 of the decision) with fewer ranges than
///   `remote-coprocessor-num-ranges`;
/// * [`export`](Self::export) is called only for requests decided remote, before anything is
///   sent. It **must check locks first** — the host's in-memory locks and the lock CF over
///   the request's ranges at `request.start_ts`, honouring `context.isolation_level` and
///   `context.resolved_locks` / `committed_locks` — and return [`SourceError::Locked`] for a
///   blocking lock, because the worker has no lock data and bypasses locks. Checking and
///   exporting in one call lets the source do both on one consistent state.
///
/// ```
/// use rcop_offload::{SnapshotSource, SourceError};
/// use rcop_proto::coprocessor::{KeyRange, Request};
/// use rcop_proto::enginepb::ChangeSet;
/// use rcop_wire::MemDataWriter;
///
/// /// A shard with one memtable row, no files and no locks.
/// struct OneRow;
///
/// impl SnapshotSource for OneRow {
///     fn estimated_range_blocks_size(&self, ranges: &[KeyRange]) -> Result<u64, SourceError> {
///         Ok(ranges.len() as u64 * 1024)
///     }
///     fn export(&self, _request: &Request, mem_data: &mut MemDataWriter<'_>)
///         -> Result<ChangeSet, SourceError>
///     {
///         mem_data.push(b"x\0\0\x01t_r1", 1, 2, b"v");
///         Ok(ChangeSet { shard_id: 1, ..ChangeSet::default() })
///     }
/// }
/// ```
pub trait SnapshotSource {
    /// Upstream §2.5: the approximate uncompressed bytes of the write-CF L1+ blocks that
    /// `ranges` (outer keys, exclusive ends) overlap.
    ///
    /// # Errors
    ///
    /// [`SourceError::Region`] for a range outside the shard; [`SourceError::Storage`].
    fn estimated_range_blocks_size(&self, ranges: &[KeyRange]) -> Result<u64, SourceError>;

    /// Checks locks (see the trait docs), then writes the memtable rows of the request's
    /// ranges visible at `request.start_ts` (newest version per key, MVCC deletes as empty
    /// values) into `mem_data` and returns the change set of the files overlapping the
    /// ranges. The caller finishes `mem_data`.
    ///
    /// # Errors
    ///
    /// [`SourceError::Locked`] for a blocking lock; [`SourceError::Region`];
    /// [`SourceError::Storage`].
    fn export(
        &self,
        request: &Request,
        mem_data: &mut MemDataWriter<'_>,
    ) -> Result<ChangeSet, SourceError>;
}

impl<T: SnapshotSource + ?Sized> SnapshotSource for &T {
    fn estimated_range_blocks_size(&self, ranges: &[KeyRange]) -> Result<u64, SourceError> {
        (**self).estimated_range_blocks_size(ranges)
    }

    fn export(
        &self,
        request: &Request,
        mem_data: &mut MemDataWriter<'_>,
    ) -> Result<ChangeSet, SourceError> {
        (**self).export(request, mem_data)
    }
}

/// Wall-clock time in Unix milliseconds, compared against the physical part of `start_ts`
/// to age a query. Injectable so tests pin the time.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_unix_ms(&self) -> u64;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_unix_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// A clock that stands still until moved; for tests and simulations.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock reading `unix_ms`.
    pub fn new(unix_ms: u64) -> Self {
        ManualClock(AtomicU64::new(unix_ms))
    }

    /// Sets the time.
    pub fn set(&self, unix_ms: u64) {
        self.0.store(unix_ms, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_unix_ms(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}
