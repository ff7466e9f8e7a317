//! Batch executors: the small pull interface and its implementations.

mod agg;
mod held_rows;
mod index_scan;
mod limit;
mod partition_top_n;
mod projection;
mod raw;
mod selection;
mod table_scan;
mod top_n;

use std::time::Instant;

pub(crate) use agg::require_collation;
pub use agg::{
    AGG_MODES, AggregationExecutor, SimpleAggregationExecutor, StreamAggregationExecutor,
    aggregate_functions,
};
pub use index_scan::IndexScanExecutor;
pub use limit::LimitExecutor;
pub use partition_top_n::PartitionTopNExecutor;
pub use projection::ProjectionExecutor;
pub(crate) use raw::ConstCmp;
pub use raw::RawRows;
pub use selection::SelectionExecutor;
pub use table_scan::{ScanCounters, TableScanExecutor};
pub use top_n::TopNExecutor;

use crate::batch::Batch;
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::scan::ScanSource;
use crate::types::FieldType;

/// What one `next_batch` call returns.
#[derive(Debug, Default)]
pub struct BatchResult {
    /// The rows (possibly none).
    pub batch: Batch,
    /// True when the executor will produce nothing more.
    pub drained: bool,
}

/// Execution statistics of one executor (tipb `ExecutorExecutionSummary` fields 1–3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecStats {
    /// Wall time spent in this executor and its children, in nanoseconds.
    pub time_processed_ns: u64,
    /// Rows produced.
    pub num_produced_rows: u64,
    /// `next_batch` calls.
    pub num_iterations: u64,
}

impl ExecStats {
    pub(crate) fn record(&mut self, start: Instant, rows: usize) {
        self.time_processed_ns += u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.num_produced_rows += rows as u64;
        self.num_iterations += 1;
    }
}

/// The environment an executor pulls in: the evaluation context and the scan source.
pub struct ExecEnv<'a> {
    /// Evaluation settings and warnings.
    pub ctx: &'a mut EvalContext,
    /// Where the scan reads.
    pub source: &'a mut dyn ScanSource,
}

impl std::fmt::Debug for ExecEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecEnv").field("ctx", &self.ctx).finish_non_exhaustive()
    }
}

/// A batch executor: Volcano-style pull of column batches.
pub trait Executor: std::fmt::Debug {
    /// The output column types.
    fn schema(&self) -> &[FieldType];

    /// Produces the next batch of at most about `hint` rows.
    fn next_batch(&mut self, hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult>;

    /// Appends the statistics of the executors below and of this one, source first.
    fn collect_stats(&self, sink: &mut Vec<ExecStats>);

    /// The scan counters of the source executor below.
    fn scan_counters(&self) -> &ScanCounters;

    /// Tells the executor which of its output columns its parent reads from every row it
    /// returns, so it may decode them together with its own (one pass over each row).
    fn prefetch_hint(&mut self, _cols: &[usize]) {}

    /// True when the executor ended its output because of paging (TiKV's `PagingDrain`):
    /// the answer so far is the page's, and the page resumes after the rows scanned.
    /// Executors that pass their child's rows on forward the child's.
    fn paging_drained(&self) -> bool {
        false
    }

    /// True while the executor holds state that a page ending now would lose (an open
    /// stream-aggregation group, a partition's top rows, groups still to emit): the engine
    /// ends a page early only when this is false. Pass-through executors forward the
    /// child's.
    fn holds_state(&self) -> bool {
        false
    }
}

/// The batch size executors ask their child for when they consume everything
/// (aggregation, TopN), as TiKV does.
pub const BATCH_MAX_SIZE: usize = 1024;
