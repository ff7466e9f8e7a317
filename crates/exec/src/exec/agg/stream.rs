//! Stream aggregation (TiKV's `BatchStreamAggregationExecutor`): the input comes sorted by
//! the group keys, so a group ends when the key changes. Only the open group's state and the
//! groups one input batch finished are held (bounded memory, whatever the group count); each
//! input batch's finished groups come out at once, in input order.
//!
//! Keys compare under their collation ([`crate::types::Collation::compare`]), NULL equal to
//! NULL. Input that is not sorted gives several groups for one key, as in TiKV (where it is
//! undefined behaviour).
//!
//! Under paging, once the groups emitted plus held reach `paging_size` the input ends and
//! every held group comes out (the open one too: TiDB merges the partial results across
//! pages), as TiKV's `PagingDrain`.

use std::time::Instant;

use rcop_proto::tipb;

use crate::column::{Scalar, VecCol};
use crate::ctx::EvalConfig;
use crate::error::{Error, Result};
use crate::exec::agg::{Aggregates, batch_of, build_group_by, drain_front};
use crate::exec::top_n::same_key;
use crate::exec::{BATCH_MAX_SIZE, BatchResult, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::expr::{Node, eval};
use crate::types::FieldType;

/// The stream aggregation executor.
#[derive(Debug)]
pub struct StreamAggregationExecutor {
    child: Box<dyn Executor>,
    aggs: Aggregates,
    group_by: Vec<Node>,
    key_fts: Vec<FieldType>,
    refs: Vec<usize>,
    schema: Vec<FieldType>,
    /// The keys of the groups held, in input order; the last group is open.
    group_values: Vec<Vec<Scalar>>,
    /// Under paging: the groups still wanted before the page ends (TiKV's `required_row`).
    required: Option<u64>,
    paging_drained: bool,
    done: bool,
    peak_groups: usize,
    stats: ExecStats,
}

impl StreamAggregationExecutor {
    /// Builds the stream aggregation of tipb `agg` over `child`, whose rows come sorted by
    /// the group-by expressions.
    pub fn new(
        child: Box<dyn Executor>,
        agg: &tipb::Aggregation,
        cfg: &EvalConfig,
        max_depth: usize,
    ) -> Result<Self> {
        if agg.group_by.is_empty() {
            return Err(Error::invalid("stream aggregation without GROUP BY"));
        }
        let child_schema = child.schema().to_vec();
        let aggs = Aggregates::build(&agg.agg_func, &child_schema, cfg, max_depth)?;
        let group_by = build_group_by(&agg.group_by, &child_schema, cfg, max_depth)?;
        let key_fts = group_by.iter().map(Node::ft_for_output).collect();
        let mut refs = Vec::new();
        aggs.column_refs(&mut refs);
        group_by.iter().for_each(|g| g.column_refs(&mut refs));
        refs.sort_unstable();
        refs.dedup();
        let mut schema = Vec::new();
        aggs.out_fts(&mut schema);
        schema.extend(group_by.iter().map(Node::ft_for_output));
        Ok(StreamAggregationExecutor {
            child,
            aggs,
            group_by,
            key_fts,
            refs,
            schema,
            group_values: Vec::new(),
            required: cfg.paging_size,
            paging_drained: false,
            done: false,
            peak_groups: 0,
            stats: ExecStats::default(),
        })
    }

    /// The most groups whose state this executor has held at once: at most the open group
    /// plus one input batch's groups, whatever the number of groups in the input.
    pub fn peak_groups(&self) -> usize {
        self.peak_groups
    }

    /// The result rows of the first `k` groups held, which are then forgotten.
    fn emit(&mut self, k: usize) -> Result<Vec<VecCol>> {
        let mut cols = Vec::with_capacity(self.schema.len());
        self.aggs.finish(0..k, &mut cols)?;
        for (j, e) in self.group_by.iter().enumerate() {
            let mut col = VecCol::new(e.et, k);
            for gv in self.group_values.iter().take(k) {
                col.push_scalar(gv.get(j).unwrap_or(&Scalar::Null));
            }
            cols.push(col);
        }
        self.aggs.forget_front(k);
        drain_front(&mut self.group_values, k);
        Ok(cols)
    }
}

impl Executor for StreamAggregationExecutor {
    fn schema(&self) -> &[FieldType] {
        &self.schema
    }

    fn next_batch(&mut self, _hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        let start = Instant::now();
        if self.done {
            self.stats.record(start, 0);
            return Ok(BatchResult { batch: Default::default(), drained: true });
        }
        let mut r = self.child.next_batch(BATCH_MAX_SIZE, env)?;
        r.batch.ensure_compact(&self.refs, env.ctx)?;
        let n = r.batch.len();
        let mut keys = Vec::with_capacity(self.group_by.len());
        for e in &self.group_by {
            keys.push(eval(e, &r.batch, env.ctx)?);
        }
        let mut ids = Vec::with_capacity(n);
        for i in 0..n {
            let row: Vec<Scalar> = keys.iter().map(|k| k.scalar_at(i)).collect();
            let same = self.group_values.last().is_some_and(|last| {
                last.iter().zip(&row).zip(&self.key_fts).all(|((a, b), ft)| same_key(a, b, ft))
            });
            if !same {
                self.group_values.push(row);
            }
            let id = self.group_values.len().saturating_sub(1);
            ids.push(u32::try_from(id).map_err(|_| Error::Overflow("group count"))?);
        }
        let held = self.group_values.len();
        self.aggs.grow(held);
        self.aggs.update(&r.batch, &ids, env.ctx)?;
        self.peak_groups = self.peak_groups.max(held);
        let mut ended = r.drained;
        if r.drained {
            self.paging_drained = self.child.paging_drained();
        } else if self.required.is_some_and(|p| held as u64 >= p) {
            self.paging_drained = true;
            ended = true;
        }
        let k = if ended { held } else { held.saturating_sub(1) };
        if !ended
            && k > 0
            && let Some(p) = self.required
        {
            self.required = Some(p + 1 - held as u64);
        }
        let cols = self.emit(k)?;
        self.done = ended;
        self.stats.record(start, k);
        Ok(BatchResult { batch: batch_of(cols, k), drained: ended })
    }

    fn collect_stats(&self, sink: &mut Vec<ExecStats>) {
        self.child.collect_stats(sink);
        sink.push(self.stats);
    }

    fn scan_counters(&self) -> &ScanCounters {
        self.child.scan_counters()
    }

    fn paging_drained(&self) -> bool {
        self.paging_drained
    }

    fn holds_state(&self) -> bool {
        !self.done && !self.group_values.is_empty()
    }
}
