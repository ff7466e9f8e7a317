//! TopN: the first `limit` rows in the order of the ByItems.

use std::cmp::Ordering;
use std::time::Instant;

use crate::batch::Batch;
use crate::column::{Scalar, VecCol};
use crate::error::Result;
use crate::exec::{BATCH_MAX_SIZE, BatchResult, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::expr::eval::cmp_int;
use crate::expr::{Node, eval};
use crate::limits::scalars_bytes;
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

#[derive(Debug)]
struct Entry {
    keys: Vec<Scalar>,
    seq: u64,
    row: Vec<Scalar>,
}

/// The bytes a held row takes: its slot in the buffer, its sort keys and its values.
pub(crate) fn entry_bytes(keys: &[Scalar], row: &[Scalar]) -> usize {
    // The slot: two vectors and the sequence number.
    2 * std::mem::size_of::<Vec<Scalar>>() + 8 + scalars_bytes(keys) + scalars_bytes(row)
}

/// Compares two rows' sort keys in `order_by`'s order (each key descending or not, under
/// its type); rows whose keys all tie are Equal.
pub(crate) fn cmp_sort_keys(
    a: &[Scalar],
    b: &[Scalar],
    order_by: &[(Node, bool, FieldType)],
) -> Ordering {
    for (i, (_, desc, ft)) in order_by.iter().enumerate() {
        let o = match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) => cmp_scalar(x, y, ft),
            _ => Ordering::Equal,
        };
        let o = if *desc { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// The TopN executor.
#[derive(Debug)]
pub struct TopNExecutor {
    child: Box<dyn Executor>,
    /// (expression, descending, the type its keys compare under).
    order_by: Vec<(Node, bool, FieldType)>,
    refs: Vec<usize>,
    limit: usize,
    heap: Vec<Entry>,
    /// The bytes of the rows in `heap` (see [`entry_bytes`]).
    heap_bytes: usize,
    /// The bytes accounted against the request's memory budget.
    accounted: usize,
    seq: u64,
    out: Option<std::vec::IntoIter<Entry>>,
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
            heap: Vec::new(),
            heap_bytes: 0,
            accounted: 0,
            seq: 0,
            out: None,
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

    fn consume(&mut self, env: &mut ExecEnv<'_>) -> Result<()> {
        let width = self.child.schema().len();
        loop {
            let mut r = self.child.next_batch(BATCH_MAX_SIZE, env)?;
            r.batch.ensure(&self.refs, env.ctx)?;
            let mut keys = Vec::with_capacity(self.order_by.len());
            for (e, _, _) in &self.order_by {
                keys.push(eval(e, &r.batch, env.ctx)?.into_col(e.et, r.batch.len()));
            }
            r.batch.ensure_all(env.ctx)?;
            for (i, &phys) in r.batch.logical.iter().enumerate() {
                let row = (0..width)
                    .map(|c| {
                        r.batch.decoded(c).map_or(Scalar::Null, |col| col.scalar_at(phys as usize))
                    })
                    .collect();
                let entry = Entry {
                    keys: keys.iter().map(|k| k.scalar_at(i)).collect(),
                    seq: self.seq,
                    row,
                };
                self.heap_bytes += entry_bytes(&entry.keys, &entry.row);
                self.seq += 1;
                self.heap.push(entry);
            }
            // Accounted once per batch: the rows held, at most a batch past the budget.
            env.ctx.account(&mut self.accounted, self.heap_bytes)?;
            if self.heap.len() >= self.limit.saturating_mul(2).max(BATCH_MAX_SIZE) {
                self.shrink();
                env.ctx.account(&mut self.accounted, self.heap_bytes)?;
            }
            if r.drained {
                break;
            }
        }
        self.shrink();
        env.ctx.account(&mut self.accounted, self.heap_bytes)
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
        if self.out.is_none() {
            if self.limit > 0 {
                self.consume(env)?;
            }
            self.out = Some(std::mem::take(&mut self.heap).into_iter());
        }
        let schema: Vec<FieldType> = self.child.schema().to_vec();
        let mut cols: Vec<VecCol> = Vec::with_capacity(schema.len());
        for ft in &schema {
            cols.push(VecCol::new(ft.eval_type()?, hint));
        }
        let mut n = 0;
        let mut drained = true;
        if let Some(it) = self.out.as_mut() {
            for e in it.by_ref().take(hint.max(1)) {
                for (c, v) in cols.iter_mut().zip(&e.row) {
                    c.push_scalar(v);
                }
                n += 1;
            }
            drained = it.len() == 0;
        }
        let mut batch = Batch::from_cols(cols);
        batch.logical = (0..n as u32).collect();
        batch.physical_len = n;
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
