//! TopN: the first `limit` rows in the order of the ByItems.

use std::cmp::Ordering;
use std::time::Instant;

use crate::batch::Batch;
use crate::column::{Scalar, VecCol};
use crate::error::Result;
use crate::exec::held_rows::{HeldRows, OrderBy};
use crate::exec::{BATCH_MAX_SIZE, BatchResult, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::expr::eval::cmp_int;
use crate::expr::{Node, eval};
use crate::types::{Collation, FieldType};

/// Compares two scalars of one field type; NULL sorts first, strings by collation.
pub fn cmp_scalar(a: &Scalar, b: &Scalar, ft: &FieldType) -> Ordering {
    match (a, b) {
        (Scalar::Null, Scalar::Null) => Ordering::Equal,
        (Scalar::Null, _) => Ordering::Less,
        (_, Scalar::Null) => Ordering::Greater,
        (Scalar::Int(x), Scalar::Int(y)) => cmp_int(*x, ft.is_unsigned(), *y, ft.is_unsigned()),
        // -0 and 0 are equal, as in comparisons (TiKV orders them as one value).
        (Scalar::Real(x), Scalar::Real(y)) => crate::expr::compare::cmp_real(*x, *y),
        (Scalar::Decimal(x), Scalar::Decimal(y)) => x.cmp(y),
        (Scalar::Bytes(x), Scalar::Bytes(y)) => {
            ft.collation().unwrap_or(Collation::Binary).compare(x, y)
        }
        (Scalar::DateTime(x), Scalar::DateTime(y)) => x.cmp(y),
        (Scalar::Duration(x), Scalar::Duration(y)) => x.cmp(y),
        // JSON by TiKV's JSON order (a NaN double, which TiKV cannot order either, ties);
        // ENUM by member index, as TiKV's `Enum: Ord`.
        (Scalar::Json(x), Scalar::Json(y)) => {
            x.as_ref().compare(&y.as_ref()).unwrap_or(Ordering::Equal)
        }
        (Scalar::Enum(x, _), Scalar::Enum(y, _)) => x.cmp(y),
        // Vectors by TiKV's `VectorFloat32: Ord` (element-wise, a prefix first).
        (Scalar::Vector(x), Scalar::Vector(y)) => {
            match (rcop_datum::VectorRef::decode(x), rcop_datum::VectorRef::decode(y)) {
                (Ok(x), Ok(y)) => x.cmp_vec(&y),
                _ => Ordering::Equal,
            }
        }
        _ => Ordering::Equal,
    }
}

/// True when two key values are one group or partition key: equal under the key type's
/// collation, NULL equal to NULL, `-0.0` equal to `0.0`.
pub(crate) fn same_key(a: &Scalar, b: &Scalar, ft: &FieldType) -> bool {
    match (a, b) {
        (Scalar::Real(x), Scalar::Real(y)) => x == y,
        _ => cmp_scalar(a, b, ft) == Ordering::Equal,
    }
}

/// The TopN executor.
///
/// It holds candidate rows as columns (`HeldRows`): each batch's sort keys are evaluated
/// as columns, rows that cannot beat the worst of the best `limit` so far are dropped before
/// the rest of their columns are decoded, and the others are appended to the held columns.
/// When `max(2 * limit, BATCH_MAX_SIZE)` rows are held they are cut to the best `limit`
/// (select, sort, one gather per column). Nothing is allocated per row.
#[derive(Debug)]
pub struct TopNExecutor {
    child: Box<dyn Executor>,
    /// (expression, descending, the type its keys compare under).
    order_by: Vec<OrderBy>,
    refs: Vec<usize>,
    limit: usize,
    /// The rows held; built when the input is first read.
    held: Option<HeldRows>,
    /// The bytes accounted against the request's memory budget.
    accounted: usize,
    /// Rows already returned, once the input is read.
    emitted: Option<usize>,
    /// Under paging with a limit above `paging_size`, the rows pass through unsorted (TiDB
    /// sorts them), as TiKV's.
    passthrough: bool,
    stats: ExecStats,
}

impl TopNExecutor {
    /// Wraps `child`: `order_by` as (expression, descending).
    pub fn new(child: Box<dyn Executor>, order_by: Vec<(Node, bool)>, limit: u64) -> Self {
        let mut refs = Vec::new();
        order_by.iter().for_each(|(e, _)| e.column_refs(&mut refs));
        TopNExecutor {
            child,
            order_by: order_by
                .into_iter()
                .map(|(e, d)| {
                    let ft = e.ft_for_output();
                    (e, d, ft)
                })
                .collect(),
            refs,
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            held: None,
            accounted: 0,
            emitted: None,
            passthrough: false,
            stats: ExecStats::default(),
        }
    }

    /// Applies the request's paging size: with a limit above it the executor passes its
    /// child's rows through (TiKV's `BatchTopNExecutor` under paging), so the page can end
    /// at `paging_size` rows.
    #[must_use]
    pub fn with_paging_size(mut self, paging_size: Option<u64>) -> Self {
        self.passthrough = paging_size.is_some_and(|p| self.limit as u64 > p);
        self
    }

    fn consume(&mut self, env: &mut ExecEnv<'_>) -> Result<HeldRows> {
        let mut held =
            HeldRows::new(self.child.schema(), self.order_by.iter().map(|(e, _, _)| e.et))?;
        let mut keys = Vec::with_capacity(self.order_by.len());
        // The logical positions (into `keys`) of the rows a batch adds.
        let mut admitted: Vec<u32> = Vec::new();
        let cut_at = self.limit.saturating_mul(2).max(BATCH_MAX_SIZE);
        loop {
            let mut r = self.child.next_batch(BATCH_MAX_SIZE, env)?;
            r.batch.ensure(&self.refs, env.ctx)?;
            keys.clear();
            for (e, _, _) in &self.order_by {
                keys.push(eval(e, &r.batch, env.ctx)?.into_col(e.et, r.batch.len()));
            }
            admitted.clear();
            admitted.extend(
                (0..r.batch.len() as u32)
                    .filter(|&i| held.admits(&keys, i as usize, &self.order_by)),
            );
            if !admitted.is_empty() {
                // Only the rows that enter are decoded.
                if admitted.len() < r.batch.len() {
                    let logical: Vec<u32> = admitted
                        .iter()
                        .filter_map(|&i| r.batch.logical.get(i as usize).copied())
                        .collect();
                    r.batch.logical = logical;
                    r.batch.ensure_all(env.ctx)?;
                    for (&i, &phys) in admitted.iter().zip(&r.batch.logical) {
                        held.push(&r.batch, phys as usize, &keys, i as usize);
                    }
                } else {
                    r.batch.ensure_all(env.ctx)?;
                    for (i, &phys) in r.batch.logical.iter().enumerate() {
                        held.push(&r.batch, phys as usize, &keys, i);
                    }
                }
            }
            // Accounted once per batch: the rows held, at most a batch past the budget.
            env.ctx.account(&mut self.accounted, held.bytes())?;
            if held.len() >= cut_at {
                held.keep_top(&self.order_by, self.limit);
                env.ctx.account(&mut self.accounted, held.bytes())?;
            }
            if r.drained {
                break;
            }
        }
        held.keep_top(&self.order_by, self.limit);
        env.ctx.account(&mut self.accounted, held.bytes())?;
        Ok(held)
    }
}

impl Executor for TopNExecutor {
    fn schema(&self) -> &[FieldType] {
        self.child.schema()
    }

    fn next_batch(&mut self, hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        let start = Instant::now();
        if self.passthrough && self.limit > 0 {
            let r = self.child.next_batch(hint, env)?;
            self.stats.record(start, r.batch.len());
            return Ok(r);
        }
        if self.emitted.is_none() {
            if self.limit > 0 {
                self.held = Some(self.consume(env)?);
            }
            self.emitted = Some(0);
        }
        let from = self.emitted.unwrap_or(0);
        let (batch, drained) = match self.held.as_mut() {
            Some(held) => {
                let batch = held.batch(from, hint.max(1));
                (batch, from + hint.max(1) >= held.len())
            }
            None => {
                let mut cols = Vec::with_capacity(self.child.schema().len());
                for ft in self.child.schema() {
                    cols.push(VecCol::new(ft.eval_type()?, 0));
                }
                (Batch::from_cols(cols), true)
            }
        };
        let n = batch.len();
        self.emitted = Some(from + n);
        self.stats.record(start, n);
        Ok(BatchResult { batch, drained })
    }

    fn collect_stats(&self, sink: &mut Vec<ExecStats>) {
        self.child.collect_stats(sink);
        sink.push(self.stats);
    }

    fn scan_counters(&self) -> &ScanCounters {
        self.child.scan_counters()
    }

    fn paging_drained(&self) -> bool {
        self.passthrough && self.child.paging_drained()
    }

    fn holds_state(&self) -> bool {
        self.passthrough && self.child.holds_state()
    }
}
