//! Partition TopN (TiKV's `BatchPartitionTopNExecutor`): the first `limit` rows of every
//! partition in the order of the ByItems. TopN with `partition_by` runs it, and so does Limit
//! with `partition_by` (no order: a partition's first `limit` rows in input order).
//!
//! As in TiKV the input is expected grouped by the partition keys: a partition ends when the
//! key changes (under the key's collation), and only the current partition's rows are held.
//! Ungrouped input gives several partitions for one key; TiDB's second-stage TopN over the
//! pushed-down one still gives the right answer. Under paging, with `2 * limit` above
//! `paging_size`, the rows pass through (TiDB does the work), as TiKV's.

use std::time::Instant;

use crate::column::VecCol;
use crate::error::Result;
use crate::exec::held_rows::{HeldRows, OrderBy, clear, push_row, same_at};
use crate::exec::{BATCH_MAX_SIZE, BatchResult, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::expr::{Node, eval};
use crate::types::FieldType;

/// The partition TopN executor.
#[derive(Debug)]
pub struct PartitionTopNExecutor {
    child: Box<dyn Executor>,
    partition_by: Vec<(Node, FieldType)>,
    order_by: Vec<OrderBy>,
    refs: Vec<usize>,
    limit: usize,
    passthrough: bool,
    /// The key of the partition being read: one row per column, once a row was read.
    current: Option<Vec<VecCol>>,
    /// The current partition's best rows so far (at most about `2 * limit`); built when the
    /// input is first read.
    held: Option<HeldRows>,
    /// The bytes accounted against the request's memory budget.
    accounted: usize,
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
            held: None,
            accounted: 0,
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

    fn new_held(&self, with_keys: bool) -> Result<HeldRows> {
        let keys = self.order_by.iter().filter(|_| with_keys).map(|(e, _, _)| e.et);
        HeldRows::new(self.child.schema(), keys)
    }

    /// True when row `i` of `parts` is the current partition's key.
    fn same_partition(&self, parts: &[VecCol], i: usize) -> bool {
        self.current.as_ref().is_some_and(|cur| {
            cur.iter()
                .zip(parts)
                .zip(&self.partition_by)
                .all(|((a, b), (_, ft))| same_at(a, 0, b, i, ft))
        })
    }

    /// Makes row `i` of `parts` the current partition's key.
    fn set_partition(&mut self, parts: &[VecCol], i: usize) {
        let cur = self
            .current
            .get_or_insert_with(|| parts.iter().map(|p| VecCol::new(p.eval_type(), 1)).collect());
        for (c, p) in cur.iter_mut().zip(parts) {
            clear(c);
            push_row(c, p, i);
        }
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
        let mut held = match self.held.take() {
            Some(h) => h,
            None => self.new_held(true)?,
        };
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
        let mut out = self.new_held(false)?;
        let cut_at = self.limit.saturating_mul(2).max(BATCH_MAX_SIZE);
        for (i, &phys) in r.batch.logical.iter().enumerate() {
            if !self.same_partition(&parts, i) {
                held.keep_top(&self.order_by, self.limit);
                held.drain_into(&mut out);
                self.set_partition(&parts, i);
            }
            if held.admits(&keys, i, &self.order_by) {
                held.push(&r.batch, phys as usize, &keys, i);
                if held.len() >= cut_at {
                    held.keep_top(&self.order_by, self.limit);
                }
            }
        }
        if r.drained {
            held.keep_top(&self.order_by, self.limit);
            held.drain_into(&mut out);
            self.done = true;
        }
        // The current partition's rows held, accounted once per batch.
        env.ctx.account(&mut self.accounted, held.bytes())?;
        self.held = Some(held);
        let rows = out.len();
        let batch = out.batch(0, rows);
        self.stats.record(start, rows);
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
            !self.done && self.held.as_ref().is_some_and(|h| h.len() > 0)
        }
    }
}
