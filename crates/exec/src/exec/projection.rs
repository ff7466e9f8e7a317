//! Projection: evaluates one expression per output column.

use std::time::Instant;

use crate::batch::Batch;
use crate::error::Result;
use crate::exec::{BatchResult, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::expr::{Node, eval};
use crate::types::FieldType;

/// The Projection executor.
#[derive(Debug)]
pub struct ProjectionExecutor {
    child: Box<dyn Executor>,
    exprs: Vec<Node>,
    refs: Vec<usize>,
    schema: Vec<FieldType>,
    stats: ExecStats,
}

impl ProjectionExecutor {
    /// Wraps `child` with the output expressions.
    pub fn new(child: Box<dyn Executor>, exprs: Vec<Node>) -> Self {
        let mut refs = Vec::new();
        exprs.iter().for_each(|e| e.column_refs(&mut refs));
        refs.sort_unstable();
        refs.dedup();
        let schema = exprs.iter().map(|e| e.ft_for_output()).collect();
        ProjectionExecutor { child, exprs, refs, schema, stats: ExecStats::default() }
    }
}

impl Executor for ProjectionExecutor {
    fn schema(&self) -> &[FieldType] {
        &self.schema
    }

    fn next_batch(&mut self, hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        let start = Instant::now();
        let mut r = self.child.next_batch(hint, env)?;
        r.batch.ensure(&self.refs, env.ctx)?;
        let n = r.batch.len();
        let mut cols = Vec::with_capacity(self.exprs.len());
        for e in &self.exprs {
            cols.push(eval(e, &r.batch, env.ctx)?.into_col(e.et, n));
        }
        let mut out = Batch::from_cols(cols);
        if self.exprs.is_empty() {
            out.logical = (0..n as u32).collect();
            out.physical_len = n;
        }
        self.stats.record(start, n);
        Ok(BatchResult { batch: out, drained: r.drained })
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
        self.child.holds_state()
    }
}
