//! Simple aggregation (TiKV's `BatchSimpleAggregationExecutor`): no GROUP BY, one group and
//! one output row, even over no input.
//!
//! Under paging the input ends once the group count reaches `paging_size` after a batch —
//! with one group, only for a `paging_size` of 1 — as TiKV's `PagingDrain`.

use std::time::Instant;

use rcop_proto::tipb;

use crate::ctx::EvalConfig;
use crate::error::Result;
use crate::exec::agg::{Aggregates, batch_of};
use crate::exec::{BATCH_MAX_SIZE, BatchResult, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::types::FieldType;

/// The simple aggregation executor.
#[derive(Debug)]
pub struct SimpleAggregationExecutor {
    child: Box<dyn Executor>,
    aggs: Aggregates,
    refs: Vec<usize>,
    schema: Vec<FieldType>,
    paging_size: Option<u64>,
    paging_drained: bool,
    done: bool,
    stats: ExecStats,
}

impl SimpleAggregationExecutor {
    /// Builds the aggregation of tipb `agg` (whose `group_by` must be empty) over `child`.
    pub fn new(
        child: Box<dyn Executor>,
        agg: &tipb::Aggregation,
        cfg: &EvalConfig,
        max_depth: usize,
    ) -> Result<Self> {
        if !agg.group_by.is_empty() {
            return Err(crate::error::Error::invalid("simple aggregation with GROUP BY"));
        }
        let mut aggs = Aggregates::build(&agg.agg_func, child.schema(), cfg, max_depth)?;
        aggs.grow(1);
        let mut refs = Vec::new();
        aggs.column_refs(&mut refs);
        refs.sort_unstable();
        refs.dedup();
        let mut schema = Vec::new();
        aggs.out_fts(&mut schema);
        Ok(SimpleAggregationExecutor {
            child,
            aggs,
            refs,
            schema,
            paging_size: cfg.paging_size,
            paging_drained: false,
            done: false,
            stats: ExecStats::default(),
        })
    }
}

impl Executor for SimpleAggregationExecutor {
    fn schema(&self) -> &[FieldType] {
        &self.schema
    }

    fn next_batch(&mut self, _hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        let start = Instant::now();
        if self.done {
            self.stats.record(start, 0);
            return Ok(BatchResult { batch: Default::default(), drained: true });
        }
        loop {
            let mut r = self.child.next_batch(BATCH_MAX_SIZE, env)?;
            r.batch.ensure_compact(&self.refs, env.ctx)?;
            let g = vec![0u32; r.batch.len()];
            self.aggs.update(&r.batch, &g, env.ctx)?;
            if r.drained {
                self.paging_drained = self.child.paging_drained();
                break;
            }
            if self.paging_size.is_some_and(|p| p <= 1) {
                self.paging_drained = true;
                break;
            }
        }
        let mut cols = Vec::with_capacity(self.schema.len());
        self.aggs.finish(0..1, &mut cols)?;
        self.done = true;
        self.stats.record(start, 1);
        Ok(BatchResult { batch: batch_of(cols, 1), drained: true })
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
}
