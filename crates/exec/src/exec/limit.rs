//! Limit: passes the first `limit` rows, asking its child for no more than it needs.

use std::time::Instant;

use crate::error::Result;
use crate::exec::{BatchResult, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::types::FieldType;

/// The Limit executor.
#[derive(Debug)]
pub struct LimitExecutor {
    child: Box<dyn Executor>,
    remaining: usize,
    stats: ExecStats,
}

impl LimitExecutor {
    /// Wraps `child`, keeping at most `limit` rows.
    pub fn new(child: Box<dyn Executor>, limit: u64) -> Self {
        LimitExecutor {
            child,
            remaining: usize::try_from(limit).unwrap_or(usize::MAX),
            stats: ExecStats::default(),
        }
    }
}

impl Executor for LimitExecutor {
    fn schema(&self) -> &[FieldType] {
        self.child.schema()
    }

    fn next_batch(&mut self, hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        let start = Instant::now();
        if self.remaining == 0 {
            self.stats.record(start, 0);
            return Ok(BatchResult { batch: Default::default(), drained: true });
        }
        let mut r = self.child.next_batch(hint.min(self.remaining), env)?;
        r.batch.logical.truncate(self.remaining);
        self.remaining -= r.batch.len();
        r.drained |= self.remaining == 0;
        self.stats.record(start, r.batch.len());
        Ok(r)
    }

    fn collect_stats(&self, sink: &mut Vec<ExecStats>) {
        self.child.collect_stats(sink);
        sink.push(self.stats);
    }

    fn scan_counters(&self) -> &ScanCounters {
        self.child.scan_counters()
    }

    fn paging_drained(&self) -> bool {
        // A limit that is met ends the answer (TiKV's `Drain`), not the page.
        self.remaining > 0 && self.child.paging_drained()
    }

    fn holds_state(&self) -> bool {
        self.remaining > 0 && self.child.holds_state()
    }
}
