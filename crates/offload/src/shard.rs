//! The [`SnapshotSource`] of an `rcop-snap` [`Shard`]: what a storage node built on our own
//! shard uses, and the reference the conformance kit checks other sources against.

use rcop_proto::coprocessor::{KeyRange, Request};
use rcop_proto::enginepb::ChangeSet;
use rcop_snap::{LockCheck, LockTable, NoLocks, Shard};
use rcop_wire::MemDataWriter;

use crate::error::SourceError;
use crate::source::SnapshotSource;

/// A [`Shard`] with the host's in-memory lock table, as a [`SnapshotSource`]: estimates
/// with [`Shard::estimated_range_blocks_size`], checks locks (the host's table, then the
/// shard's lock CF, under the request's isolation level, `resolved_locks` and
/// `committed_locks`) and exports with [`Shard::export`].
///
/// ```
/// use rcop_offload::{ShardSource, SnapshotSource};
/// use rcop_proto::coprocessor::KeyRange;
/// use rcop_snap::{Shard, ShardConfig};
///
/// let shard = Shard::new(ShardConfig::new(1, &b"x\0\0\x01"[..], &b"x\0\0\x02"[..], 4)?)?;
/// let source = ShardSource::new(&shard);
/// let all = [KeyRange { start: b"x\0\0\x01".to_vec().into(), end: b"x\0\0\x02".to_vec().into() }];
/// assert_eq!(source.estimated_range_blocks_size(&all)?, 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct ShardSource<'a> {
    shard: &'a Shard,
    locks: &'a (dyn LockTable + Sync),
}

impl std::fmt::Debug for ShardSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardSource").field("shard", &self.shard).finish_non_exhaustive()
    }
}

impl<'a> ShardSource<'a> {
    /// The source of `shard` with no in-memory locks besides its lock CF.
    pub fn new(shard: &'a Shard) -> Self {
        ShardSource { shard, locks: &NoLocks }
    }

    /// With the host's in-memory lock table (TiKV's concurrency manager), checked first.
    pub fn with_locks(shard: &'a Shard, locks: &'a (dyn LockTable + Sync)) -> Self {
        ShardSource { shard, locks }
    }
}

impl SnapshotSource for ShardSource<'_> {
    fn estimated_range_blocks_size(&self, ranges: &[KeyRange]) -> Result<u64, SourceError> {
        self.shard.estimated_range_blocks_size(ranges).map_err(source_error)
    }

    fn export(
        &self,
        request: &Request,
        mem_data: &mut MemDataWriter<'_>,
    ) -> Result<ChangeSet, SourceError> {
        let check = match &request.context {
            Some(ctx) => LockCheck::from_request(request.start_ts, ctx),
            None => LockCheck::si(request.start_ts),
        };
        self.shard.export(&request.ranges, &check, self.locks, mem_data).map_err(source_error)
    }
}

/// How an `rcop-snap` error reaches the client: a lock as `locked`, a range outside the
/// shard as a region error, anything else as a storage error.
pub fn source_error(e: rcop_snap::Error) -> SourceError {
    match e {
        rcop_snap::Error::Locked(info) => SourceError::Locked(info),
        e @ (rcop_snap::Error::RangeOutOfShard { .. } | rcop_snap::Error::InvalidRange { .. }) => {
            SourceError::Region(Box::new(rcop_proto::errorpb::Error {
                message: e.to_string(),
                ..Default::default()
            }))
        }
        e => SourceError::storage(e),
    }
}
