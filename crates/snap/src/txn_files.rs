//! Transaction files on the worker: mem-data v2's `TxnFileRefs` name chunks in object
//! storage (`rcop_sst::txn`) that hold the mutations of large transactions, which the
//! storage node keeps out of its memtable. Each reference becomes one more memtable source
//! of the rebuilt snapshot.
//!
//! Upstream's rules, kept here: every entry of a reference has the same version — the
//! commit ts of its 17-byte user meta (`0x01 | start_ts LE | commit_ts LE`), else its
//! `version` — so the scanner's read-ts check hides a transaction committed after the
//! request's snapshot (references are not filtered by the sender); `Lock` and
//! `CheckNotExists` entries are invisible; a `Delete` reads as a delete (an empty value);
//! entries are clipped to the reference's inner bounds (an empty upper bound is the shard's
//! end) and to the shard; the chunks of one reference must not overlap.

use std::sync::Arc;

use bytes::Bytes;
use rcop_proto::enginepb::TxnFileRefs;
use rcop_sst::txn::{OP_CHECK_NOT_EXISTS, OP_DELETE, OP_LOCK, TxnChunk};
use rcop_sst::{BlockBudget, FileId, SstStore};

use crate::error::{Error, Result};
use crate::memtable::{RowEntry, RowTable};
use crate::range::InnerRange;

/// Most chunk references (over all transaction files) one request may carry.
pub const MAX_TXN_CHUNKS: usize = 65_536;

/// Chunks read from the object store at once (upstream's `READ_DFS_CONCURRENCY`).
const CHUNK_READS: usize = 4;

/// One transaction file to rebuild.
#[derive(Debug, Clone)]
struct PlannedRef {
    start_ts: u64,
    commit_ts: u64,
    lower: Vec<u8>,
    /// Exclusive; empty = unbounded.
    upper: Vec<u8>,
    chunk_ids: Vec<u64>,
}

/// The transaction files of a request, validated, and the chunks they need.
#[derive(Clone, Default)]
pub(crate) struct TxnFilePlan {
    refs: Vec<PlannedRef>,
    chunk_ids: Vec<u64>,
    budget: Option<BlockBudget>,
}

impl std::fmt::Debug for TxnFilePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxnFilePlan")
            .field("refs", &self.refs)
            .field("chunk_ids", &self.chunk_ids)
            .field("budget", &self.budget.is_some())
            .finish()
    }
}

impl TxnFilePlan {
    /// Asks `budget` for each chunk's memory before reading it.
    pub(crate) fn with_budget(mut self, budget: BlockBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Validates `refs` against the shard's inner range.
    pub(crate) fn new(refs: &TxnFileRefs, shard: &InnerRange) -> Result<TxnFilePlan> {
        let total: usize = refs.txn_file_refs.iter().map(|r| r.chunk_ids.len()).sum();
        if total > MAX_TXN_CHUNKS {
            return Err(Error::TxnFile {
                chunk_id: None,
                reason: "more than 65536 chunk references",
            });
        }
        let mut out = TxnFilePlan::default();
        for r in &refs.txn_file_refs {
            let commit_ts = match r.user_meta.as_ref() {
                [] => r.version,
                [1, rest @ ..] if rest.len() == 16 => {
                    let mut ts = [0u8; 8];
                    ts.copy_from_slice(&rest[8..16]);
                    u64::from_le_bytes(ts)
                }
                _ => {
                    return Err(Error::TxnFile {
                        chunk_id: r.chunk_ids.first().copied(),
                        reason: "user meta is neither empty nor 17 bytes of version 1",
                    });
                }
            };
            let lower = std::cmp::max(r.inner_lower_bound.to_vec(), shard.start.clone());
            let upper = match (r.inner_upper_bound.is_empty(), shard.end.is_empty()) {
                (true, _) => shard.end.clone(),
                (false, true) => r.inner_upper_bound.to_vec(),
                (false, false) => std::cmp::min(r.inner_upper_bound.to_vec(), shard.end.clone()),
            };
            if !upper.is_empty() && lower > upper {
                return Err(Error::TxnFile {
                    chunk_id: r.chunk_ids.first().copied(),
                    reason: "lower bound after upper bound",
                });
            }
            out.chunk_ids.extend_from_slice(&r.chunk_ids);
            out.refs.push(PlannedRef {
                start_ts: r.start_ts,
                commit_ts,
                lower,
                upper,
                chunk_ids: r.chunk_ids.clone(),
            });
        }
        out.chunk_ids.sort_unstable();
        out.chunk_ids.dedup();
        Ok(out)
    }

    /// Number of distinct chunks to read.
    pub(crate) fn num_chunks(&self) -> usize {
        self.chunk_ids.len()
    }

    /// Reads every chunk (asking the budget, when there is one, for twice each chunk's size
    /// before reading it: the bytes and the keys rebuilt from them) and builds one row
    /// table per transaction file.
    pub(crate) async fn fetch(self, store: &Arc<SstStore>) -> Result<Vec<Arc<RowTable>>> {
        use futures::{StreamExt, TryStreamExt};
        if self.refs.is_empty() {
            return Ok(Vec::new());
        }
        let reads: Vec<_> = self
            .chunk_ids
            .iter()
            .map(|&id| {
                let budget = self.budget.clone();
                async move {
                    let admit = |size: u64| match &budget {
                        Some(b) if !b(size.saturating_mul(2)) => {
                            Err(rcop_sst::Error::OverBudget { file_id: FileId(id), bytes: size })
                        }
                        _ => Ok(()),
                    };
                    let bytes = store.get_txn_chunk(id, admit).await?;
                    Ok::<_, Error>((id, bytes))
                }
            })
            .collect();
        let chunks: Vec<(u64, Bytes)> =
            futures::stream::iter(reads).buffered(CHUNK_READS).try_collect().await?;
        let build = move || self.build(chunks);
        match tokio::runtime::Handle::try_current() {
            Ok(h) => h.spawn_blocking(build).await.map_err(|e| {
                Error::Sst(rcop_sst::Error::TaskFailed {
                    file_id: FileId(0),
                    reason: e.to_string(),
                })
            })?,
            Err(_) => build(),
        }
    }

    /// Parses the chunks and builds the row tables (CPU work).
    fn build(self, chunks: Vec<(u64, Bytes)>) -> Result<Vec<Arc<RowTable>>> {
        let mut parsed = Vec::with_capacity(chunks.len());
        for (id, bytes) in chunks {
            parsed.push((id, TxnChunk::parse(id, bytes)?));
        }
        let chunk = |id: u64| {
            parsed
                .binary_search_by_key(&id, |(i, _)| *i)
                .ok()
                .and_then(|i| parsed.get(i))
                .map(|(_, c)| c)
        };
        let mut tables = Vec::with_capacity(self.refs.len());
        for r in &self.refs {
            let in_bounds = |key: &[u8]| {
                key >= r.lower.as_slice() && (r.upper.is_empty() || key < r.upper.as_slice())
            };
            let mut mine: Vec<&TxnChunk> = Vec::with_capacity(r.chunk_ids.len());
            for id in &r.chunk_ids {
                mine.push(
                    chunk(*id)
                        .ok_or(Error::TxnFile { chunk_id: Some(*id), reason: "chunk not read" })?,
                );
            }
            mine.sort_by(|a, b| a.smallest().cmp(b.smallest()));
            mine.dedup_by_key(|c| c.id());
            let mut rows: Vec<RowEntry> = Vec::new();
            let mut bytes = 0usize;
            for c in mine {
                c.for_each::<Error>(|e| {
                    if !in_bounds(&e.key) || matches!(e.op, OP_LOCK | OP_CHECK_NOT_EXISTS) {
                        return Ok(());
                    }
                    if rows.last().is_some_and(|last| last.key.as_ref() >= e.key.as_slice()) {
                        return Err(Error::TxnFile {
                            chunk_id: Some(c.id()),
                            reason: "chunks of one transaction file overlap",
                        });
                    }
                    let value = if e.op == OP_DELETE { Bytes::new() } else { e.value };
                    bytes += e.key.len() + value.len();
                    rows.push(RowEntry {
                        key: Bytes::from(e.key),
                        start_ts: r.start_ts,
                        commit_ts: r.commit_ts,
                        value,
                    });
                    Ok(())
                })?;
            }
            tables.push(Arc::new(RowTable::from_entries(rows, bytes)));
        }
        Ok(tables)
    }
}

#[cfg(test)]
mod tests {
    use rcop_proto::enginepb::TxnFileRef;

    use super::*;

    fn shard() -> InnerRange {
        InnerRange { start: b"t".to_vec(), end: b"u".to_vec() }
    }

    #[test]
    fn versions_come_from_the_user_meta_and_bounds_are_clipped() {
        let mut meta = vec![1u8];
        meta.extend_from_slice(&5u64.to_le_bytes());
        meta.extend_from_slice(&9u64.to_le_bytes());
        let refs = TxnFileRefs {
            txn_file_refs: vec![
                TxnFileRef {
                    start_ts: 5,
                    chunk_ids: vec![3, 1],
                    version: 100,
                    user_meta: meta.into(),
                    inner_lower_bound: b"a".to_vec().into(),
                    inner_upper_bound: Bytes::new(),
                    ..Default::default()
                },
                TxnFileRef { chunk_ids: vec![1], version: 7, ..Default::default() },
            ],
        };
        let plan = TxnFilePlan::new(&refs, &shard()).unwrap();
        assert_eq!(plan.chunk_ids, [1, 3]);
        assert_eq!(plan.refs[0].commit_ts, 9);
        assert_eq!(
            (plan.refs[0].lower.as_slice(), plan.refs[0].upper.as_slice()),
            (&b"t"[..], &b"u"[..])
        );
        assert_eq!(plan.refs[1].commit_ts, 7);

        let bad_meta = TxnFileRefs {
            txn_file_refs: vec![TxnFileRef { user_meta: vec![2; 17].into(), ..Default::default() }],
        };
        assert!(TxnFilePlan::new(&bad_meta, &shard()).is_err());
        let reversed = TxnFileRefs {
            txn_file_refs: vec![TxnFileRef {
                inner_lower_bound: b"tz".to_vec().into(),
                inner_upper_bound: b"tb".to_vec().into(),
                ..Default::default()
            }],
        };
        assert!(TxnFilePlan::new(&reversed, &shard()).is_err());
        let many = TxnFileRefs {
            txn_file_refs: vec![TxnFileRef {
                chunk_ids: vec![1; MAX_TXN_CHUNKS + 1],
                ..Default::default()
            }],
        };
        assert!(TxnFilePlan::new(&many, &shard()).is_err());
    }
}
