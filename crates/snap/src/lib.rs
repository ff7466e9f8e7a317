//! The MVCC snapshot of a shard, both halves of the remote coprocessor's "what a request
//! reads": the storage node's shard and export, and the worker's rebuild and scanner.
//!
//! - **Storage node**: a [`Shard`] takes MVCC writes (puts and deletes with start and commit
//!   ts) into a concurrent memtable, keeps TiKV lock records in a lock CF, flushes to L0
//!   files and compacts into leveled SSTs through `rcop-sst`. Before offloading a request
//!   it checks locks ([`Shard::check_locks`], TiKV's rules, against the lock CF and a
//!   host [`LockTable`]), estimates the bytes the ranges cover
//!   ([`Shard::estimated_range_blocks_size`]) and exports the memtable rows as mem-data v2
//!   plus the change set of the overlapping files ([`Shard::export`]).
#![cfg_attr(
    feature = "store",
    doc = r#"- **Worker**: [`plan_rebuild`] validates the mem-data and the change set, opens file
  metadata and plans the block reads (so a limiter can reserve
  [`RebuildPlan::bytes_needed`] first); [`RebuildPlan::fetch`] pins the blocks the
  ranges need — of L0 files too, which are read by range rather than whole — and returns
  an immutable [`Snapshot`]."#
)]
#![cfg_attr(
    not(feature = "store"),
    doc = r#"- **Worker**: the rebuild from mem-data, a change set and object storage
  (`plan_rebuild`) needs the `store` feature, which this build lacks."#
)]
//! - **Both**: a [`Snapshot`]'s [`Scanner`] merges memtables, L0 tables and levels at a read
//!   ts, forward or backward, into caller-owned buffers ([`KvSink`]); [`Snapshot::get`] is
//!   the point get. The executor's scan trait lives in `rcop-exec`, which does not depend on
//!   this crate; the worker adapts a [`Scanner`] to it with a closure sink.
//!   [`Snapshot::split_keys`] says where to cut a request's ranges into parts of about equal
//!   bytes (block indexes and memtable rows, no I/O), for one request on many cores.
//!
//! ```
//! use rcop_proto::coprocessor::KeyRange;
//! use rcop_snap::{LockCheck, NoLocks, PairBuf, Shard, ShardConfig};
//! use rcop_wire::{MemData, MemDataFormat, MemDataWriter};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let shard = Shard::new(ShardConfig::new(7, &b"x\0\0\x01"[..], &b"x\0\0\x02"[..], 4)?)?;
//! shard.put(b"x\0\0\x01k1", 10, 11, b"old")?;
//! shard.flush().await?; // now in an L0 file
//! shard.put(b"x\0\0\x01k1", 20, 21, b"new")?;
//! shard.put(b"x\0\0\x01k2", 20, 21, b"v2")?;
//!
//! // Storage node: export at start_ts 15.
//! let ranges = [KeyRange { start: b"x\0\0\x01".to_vec().into(), end: b"x\0\0\x02".to_vec().into() }];
//! let mut mem = Vec::new();
//! let mut w = MemDataWriter::new(&mut mem, MemDataFormat::V2);
//! let change_set = shard.export(&ranges, &LockCheck::si(15), &NoLocks, &mut w)?;
//! w.finish()?;
//! assert_eq!(MemData::decode(mem.clone().into())?.rows().len(), 0); // nothing ≤ 15 in memory
//! assert_eq!(change_set.snapshot.as_ref().map(|s| s.l0_creates.len()), Some(1));
//!
//! // The shard itself reads the same at 15.
//! let snap = shard.snapshot();
//! assert_eq!(snap.get(b"x\0\0\x01k1", 15)?.as_deref(), Some(&b"old"[..]));
//! assert_eq!(snap.get(b"x\0\0\x01k1", 30)?.as_deref(), Some(&b"new"[..]));
//! let mut out = PairBuf::new();
//! let mut scanner = snap.scanner(30);
//! scanner.start(b"x\0\0\x01", b"x\0\0\x02", true)?;
//! scanner.next_batch(10, &mut out)?;
//! assert_eq!(out.get(0), Some((&b"x\0\0\x01k2"[..], &b"v2"[..])));
//! # Ok::<(), rcop_snap::Error>(())
//! # }).unwrap();
//! ```
//!
//! # Cargo features
//!
//! All on by default. A storage node that needs neither object storage nor Zstd builds with
//! `default-features = false` and keeps the `Shard` (memtable, lock checks, flush and
//! compaction in memory, export, block-size estimate), the scanner and every SST format.
//!
//! - `store`: `Shard::with_store` (flush and compaction upload their files) and the
//!   worker-side rebuild (`plan_rebuild`, `RebuildPlan`, `RebuildRequest`); enables
//!   rcop-sst's `object-store`.
//! - `s3`: rcop-sst's S3 backend; implies `store`.
//! - `zstd`: rcop-sst's Zstd blocks; without it, tables that upstream compresses with Zstd
//!   (L2 and deeper) are written with LZ4.
//!
//! Decisions are in `docs/design/0005-snap-snapshot.md`.

#![warn(missing_docs)]

mod error;
mod estimate;
mod lock;
mod memtable;
mod range;
#[cfg(feature = "store")]
mod rebuild;
mod scan;
mod shard;
mod snapshot;
mod split;
#[cfg(feature = "store")]
mod txn_files;

pub use error::{Error, Result};
pub use estimate::estimate_range_blocks_size;
pub use lock::{CommittedRead, Lock, LockCheck, LockTable, LockType, NoLocks, TsSet};
pub use memtable::{MemTable, RowTable};
pub use range::{InnerRange, ShardRange};
#[cfg(feature = "store")]
pub use rebuild::{MAX_LEVEL, RebuildPlan, RebuildRequest, plan_rebuild};
pub use scan::{KvSink, PairBuf, ScanStatus, Scanner};
pub use shard::{FileIds, Shard, ShardConfig, ShardStats};
pub use snapshot::{Level, MemSource, Snapshot};
pub use split::RangeSplit;
