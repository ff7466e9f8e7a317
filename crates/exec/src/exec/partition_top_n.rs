//! Partition TopN (TiKV's `BatchPartitionTopNExecutor`): the first `limit` rows of every
//! partition in the order of the ByItems. TopN with `partition_by` runs it, and so does Limit
//! with `partition_by` (no order: a partition's first `limit` rows in input order).
//!
//! As in TiKV the input is expected grouped by the partition keys: a partition ends when the
//! key changes (under the key's collation), and only the current partition's rows are held.
//! Ungrouped input gives several partitions for one key; TiDB's second-stage TopN over the
//! pushed-down one still gives the right answer. Under paging, with `2 * limit` above
//! `paging_size`, the rows pass through (TiDB does the work), as TiKV's.

use std::cmp::Ordering;
use std::time::Instant;

use crate::batch::Batch;
use crate::column::{Scalar, VecCol};
use crate::error::Result;
use crate::exec::top_n::{cmp_sort_keys, entry_bytes, same_key};
use crate::exec::{BATCH_MAX_SIZE, BatchResult, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::expr::{Node, eval};
use crate::types::FieldType;

#[derive(Debug)]
struct Entry {
    keys: Vec<Scalar>,
    seq: u64,
    row: Vec<Scalar>,
}

/// The partition TopN executor.
#[derive(Debug)]
pub struct PartitionTopNExecutor {
    child: Box<dyn Executor>,
    partition_by: Vec<(Node, FieldType)>,
    order_by: Vec<(Node, bool, FieldType)>,
    refs: Vec<usize>,
    limit: usize,
    passthrough: bool,
    /// The key of the partition being read.
    current: Option<Vec<Scalar>>,
    /// The current partition's best rows so far (at most about `2 * limit`).
    heap: Vec<Entry>,
    /// The bytes of the rows in `heap` (see [`entry_bytes`]).
    heap_bytes: usize,
    /// The bytes accounted against the request's memory budget.
    accounted: usize,
    seq: u64,
    done: bool,
    stats: ExecStats,
}

impl PartitionTopNExecutor {
    /// Wraps `child`: the first `limit` rows per `partition_by` key, ordered by `order_by`
    /// (expression, descending); with no `order_by`, a partition's first rows.
    pub fn new(
        child: Box<dyn Executor>,
        partition_by: Vec<Node>,
        order_by: Vec<(Node, bool)>,
        limit: u64,
    ) -> Self {
        let mut refs = Vec::new();
        partition_by.iter().for_each(|e| e.column_refs(&mut refs));
        order_by.iter().for_each(|(e, _)| e.column_refs(&mut refs));
        refs.sort_unstable();
        refs.dedup();
        PartitionTopNExecutor {
            child,
            partition_by: partition_by
                .into_iter()
                .map(|e| {
                    let ft = e.ft_for_output();
                    (e, ft)
                })
                .collect(),
            order_by: order_by
                .into_iter()
                .map(|(e, d)| {
                    let ft = e.ft_for_output();
                    (e, d, ft)
                })
                .collect(),
            refs,
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            passthrough: false,
            current: None,
            heap: Vec::new(),
            heap_bytes: 0,
            accounted: 0,
            seq: 0,
            done: false,
            stats: ExecStats::default(),
        }
    }

    /// Applies the request's paging size: with `2 * limit` above it, rows pass through.
    #[must_use]
    pub fn with_paging_size(mut self, paging_size: Option<u64>) -> Self {
        self.passthrough = paging_size.is_some_and(|p| (self.limit as u64).saturating_mul(2) > p);
        self
    }

    fn cmp(&self, a: &Entry, b: &Entry) -> Ordering {
        cmp_sort_keys(&a.keys, &b.keys, &self.order_by).then_with(|| a.seq.cmp(&b.seq))
    }

    fn shrink(&mut self) {
        let mut heap = std::mem::take(&mut self.heap);
        heap.sort_by(|a, b| self.cmp(a, b));
        heap.truncate(self.limit);
        self.heap_bytes = heap.iter().map(|e| entry_bytes(&e.keys, &e.row)).sum();
        self.heap = heap;
    }

    /// Moves the current partition's top rows to `out`.
    fn flush(&mut self, out: &mut Vec<Vec<Scalar>>) {
        self.shrink();
        out.extend(std::mem::take(&mut self.heap).into_iter().map(|e| e.row));
        self.heap_bytes = 0;
    }

    fn rows_batch(&self, rows: &[Vec<Scalar>]) -> Result<Batch> {
        let schema = self.child.schema();
        let mut cols = Vec::with_capacity(schema.len());
        for (c, ft) in schema.iter().enumerate() {
            let mut col = VecCol::new(ft.eval_type()?, rows.len());
            rows.iter().for_each(|r| col.push_scalar(r.get(c).unwrap_or(&Scalar::Null)));
            cols.push(col);
        }
        let mut batch = Batch::from_cols(cols);
        batch.logical = (0..rows.len() as u32).collect();
        batch.physical_len = rows.len();
        Ok(batch)
    }
}

impl Executor for PartitionTopNExecutor {
    fn schema(&self) -> &[FieldType] {
        self.child.schema()
    }

    fn next_batch(&mut self, hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        let start = Instant::now();
        if self.limit == 0 || self.done {
            self.done = true;
            self.stats.record(start, 0);
            return Ok(BatchResult { batch: Default::default(), drained: true });
        }
        if self.passthrough {
            let r = self.child.next_batch(hint, env)?;
            self.stats.record(start, r.batch.len());
            return Ok(r);
        }
        let mut r = self.child.next_batch(BATCH_MAX_SIZE, env)?;
        r.batch.ensure(&self.refs, env.ctx)?;
        let n = r.batch.len();
        let mut parts = Vec::with_capacity(self.partition_by.len());
        for (e, _) in &self.partition_by {
            parts.push(eval(e, &r.batch, env.ctx)?.into_col(e.et, n));
        }
        let mut keys = Vec::with_capacity(self.order_by.len());
        for (e, _, _) in &self.order_by {
            keys.push(eval(e, &r.batch, env.ctx)?.into_col(e.et, n));
        }
        r.batch.ensure_all(env.ctx)?;
        let width = self.child.schema().len();
        let mut out = Vec::new();
        for (i, &phys) in r.batch.logical.iter().enumerate() {
            let part: Vec<Scalar> = parts.iter().map(|p| p.scalar_at(i)).collect();
            let same = self.current.as_ref().is_some_and(|cur| {
                cur.iter()
                    .zip(&part)
                    .zip(&self.partition_by)
                    .all(|((a, b), (_, ft))| same_key(a, b, ft))
            });
            if !same {
                self.flush(&mut out);
                self.current = Some(part);
            }
            let row: Vec<Scalar> = (0..width)
                .map(|c| {
                    r.batch.decoded(c).map_or(Scalar::Null, |col| col.scalar_at(phys as usize))
                })
                .collect();
            let sort_keys: Vec<Scalar> = keys.iter().map(|k| k.scalar_at(i)).collect();
            self.heap_bytes += entry_bytes(&sort_keys, &row);
            self.heap.push(Entry { keys: sort_keys, seq: self.seq, row });
            self.seq += 1;
            if self.heap.len() >= self.limit.saturating_mul(2).max(BATCH_MAX_SIZE) {
                self.shrink();
            }
        }
        if r.drained {
            self.flush(&mut out);
            self.done = true;
        }
        // The current partition's rows held, accounted once per batch.
        env.ctx.account(&mut self.accounted, self.heap_bytes)?;
        let batch = self.rows_batch(&out)?;
        self.stats.record(start, out.len());
        Ok(BatchResult { batch, drained: r.drained })
    }

    fn collect_stats(&self, sink: &mut Vec<ExecStats>) {
        self.child.collect_stats(sink);
        sink.push(self.stats);
    }

    fn scan_counters(&self) -> &ScanCounters {
        self.child.scan_counters()
    }

    fn paging_drained(&self) -> bool {
        self.child.paging_drained()
    }

    fn holds_state(&self) -> bool {
        if self.passthrough {
            self.child.holds_state()
        } else {
            !self.done && !self.heap.is_empty()
        }
    }
}
