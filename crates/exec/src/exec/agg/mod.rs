//! Aggregation, as TiKV runs it (`tidb_query_executors` and `tidb_query_aggr`).
//!
//! Where to find things:
//! - the executor forms: [`simple`] (no GROUP BY), [`hash`] (TypeAggregation with GROUP BY),
//!   [`stream`] (TypeStreamAgg with GROUP BY: input sorted by the keys, bounded memory);
//! - the aggregate functions, one module per family: [`count`], [`sum`] (SUM and AVG),
//!   [`sum_int`], [`extreme`] (MIN and MAX), [`first`] (FIRST_ROW), [`bit_op`]
//!   (BIT_AND, BIT_OR, BIT_XOR), [`variance`] (VAR_POP, VARIANCE, VAR_SAMP);
//! - [`registry`]: the one table from an aggregate `ExprType` to its arity, argument typing,
//!   output columns and state, read by the builder, `check_dag` and the capability listing;
//! - [`key`]: group-key encodings; [`reuse`]: sharing one argument's value between
//!   aggregates.
//!
//! Output schema, as TiKV: every aggregate's result columns in `agg_func` order (AVG gives
//! count then sum; the variances count, sum, variance), then the group-by columns.

mod bit_op;
mod count;
mod extreme;
mod first;
mod hash;
mod key;
mod registry;
mod reuse;
mod simple;
mod stream;
mod sum;
mod sum_int;
mod variance;

use std::ops::Range;

use rcop_proto::tipb;

pub use hash::AggregationExecutor;
pub use registry::{AGG_MODES, aggregate_functions};
pub use simple::SimpleAggregationExecutor;
pub use stream::StreamAggregationExecutor;

use crate::batch::Batch;
use crate::column::{Scalar, VecCol};
use crate::ctx::{EvalConfig, EvalContext};
use crate::error::Result;
use crate::expr::Node;
use crate::expr::eval::Value;
use crate::types::{EvalType, FieldType};

/// Fails when `ft` is a string type whose collation the engine cannot apply.
pub(crate) fn require_collation(ft: &FieldType) -> Result<()> {
    if ft.eval_type().ok() == Some(EvalType::Bytes) {
        ft.collation()?;
    }
    Ok(())
}

/// The state of one aggregate function over a run of groups `0..len`.
///
/// Groups are numbered by the executor: first-seen order for hash aggregation, input order
/// for stream aggregation (which finishes the front groups and forgets them).
pub(crate) trait AggState: std::fmt::Debug {
    /// Makes room for `groups` groups (new ones start empty).
    fn grow(&mut self, groups: usize);

    /// Folds the argument values `v` (one per logical row, typed `arg_ft`) into the groups
    /// `g` (one per logical row).
    fn update(&mut self, g: &[u32], v: &Value<'_>, arg_ft: &FieldType) -> Result<()>;

    /// Appends the result columns (one per output column of the function) of `groups`.
    fn finish(&self, groups: Range<usize>, out: &mut Vec<VecCol>) -> Result<()>;

    /// Appends the result columns as SUM (`avg` false: the sum) or as AVG (the count and the
    /// sum) would: SUM and AVG of one argument share one state (see
    /// [`Aggregates::build`]). Only their states are asked; the others give their own
    /// columns.
    fn finish_as(&self, groups: Range<usize>, avg: bool, out: &mut Vec<VecCol>) -> Result<()> {
        let _ = avg;
        self.finish(groups, out)
    }

    /// Drops the first `k` groups; group `k` becomes group 0.
    fn forget_front(&mut self, k: usize);

    /// The heap bytes the state's values hold beyond their fixed per-group slots (the
    /// strings and JSON of MIN, MAX and FIRST_ROW), kept as a running count: O(1).
    fn heap_bytes(&self) -> usize {
        0
    }
}

/// A cast TiKV inserts over an aggregate's argument (`rewrite_exp_for_sum_avg`,
/// `rewrite_exp_for_bit_op`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArgCast {
    /// The eval type cast to.
    pub to: EvalType,
    /// The field type cast to.
    pub to_ft: FieldType,
}

/// What an aggregate definition makes of one call: how to type its argument, its output
/// columns and its state.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The cast over the argument, if any.
    pub cast: Option<ArgCast>,
    /// The output columns' types.
    pub out: Vec<FieldType>,
    /// The state.
    pub state: Box<dyn AggState>,
}

/// One aggregate function of a request, built.
#[derive(Debug)]
pub(crate) struct AggFn {
    /// The argument expression.
    pub arg: Node,
    cast: Option<ArgCast>,
    out: Vec<FieldType>,
    state: Box<dyn AggState>,
}

impl AggFn {
    /// Folds `v`, the argument evaluated over `n` logical rows, into the groups `g`.
    fn update(&mut self, g: &[u32], v: &Value<'_>, n: usize, ctx: &mut EvalContext) -> Result<()> {
        match self.cast {
            Some(c) if c.to != self.arg.et => {
                let from_ft = self.arg.ft_for_output();
                let cast =
                    crate::expr::cast::cast(self.arg.et, c.to, &from_ft, &c.to_ft, v, n, ctx)?;
                self.state.update(g, &Value::Owned(cast), &c.to_ft)
            }
            _ => self.state.update(g, v, &self.arg.ft),
        }
    }
}

/// The aggregate functions of one executor.
#[derive(Debug)]
pub(crate) struct Aggregates {
    fns: Vec<AggFn>,
    /// Per function, `Some((k, i))` when child `k` of its argument (a function call) is the
    /// same expression as the argument of the earlier function `i` (see [`reuse`]).
    reuse: Vec<Option<(usize, usize)>>,
    /// Per function, whether a later one reuses its value.
    wanted: Vec<bool>,
    /// Per function, `Some((i, avg))` when it is a SUM or AVG (`avg`) of the same argument,
    /// with the same result type, as the earlier SUM or AVG `i`: it keeps no state and
    /// finishes from `i`'s (Q1's `SUM(l_quantity)` and `AVG(l_quantity)`).
    twin: Vec<Option<(usize, bool)>>,
    /// The child columns the arguments read.
    refs: Vec<usize>,
}

impl Aggregates {
    /// Builds the functions `protos` over `schema`.
    pub fn build(
        protos: &[tipb::Expr],
        schema: &[FieldType],
        cfg: &EvalConfig,
        depth: usize,
    ) -> Result<Aggregates> {
        let mut fns = Vec::with_capacity(protos.len());
        for e in protos {
            fns.push(registry::build(e, schema, cfg, depth)?);
        }
        let reuse = reuse::find_reuse(protos, &fns);
        let wanted = reuse::wanted(&reuse);
        let twin = reuse::find_twins(protos, &fns);
        let mut refs = Vec::new();
        fns.iter().for_each(|a| a.arg.column_refs(&mut refs));
        refs.sort_unstable();
        refs.dedup();
        Ok(Aggregates { fns, reuse, wanted, twin, refs })
    }

    /// The child columns the arguments read.
    pub fn column_refs(&self, out: &mut Vec<usize>) {
        out.extend_from_slice(&self.refs);
    }

    /// Appends the output column types.
    pub fn out_fts(&self, out: &mut Vec<FieldType>) {
        self.fns.iter().for_each(|a| out.extend_from_slice(&a.out));
    }

    /// The functions that keep a state (not a twin of an earlier one).
    fn stateful(&mut self) -> impl Iterator<Item = &mut AggFn> {
        self.fns.iter_mut().zip(&self.twin).filter(|(_, t)| t.is_none()).map(|(a, _)| a)
    }

    /// Makes room for `groups` groups in every function.
    pub fn grow(&mut self, groups: usize) {
        self.stateful().for_each(|a| a.state.grow(groups));
    }

    /// Folds the batch's logical rows into the groups `g` (one per row).
    pub fn update(&mut self, batch: &Batch, g: &[u32], ctx: &mut EvalContext) -> Result<()> {
        reuse::update_all(&mut self.fns, &self.reuse, &self.wanted, &self.twin, batch, g, ctx)
    }

    /// Appends every function's result columns for `groups`.
    pub fn finish(&self, groups: Range<usize>, out: &mut Vec<VecCol>) -> Result<()> {
        for (a, twin) in self.fns.iter().zip(&self.twin) {
            match twin.and_then(|(i, avg)| Some((self.fns.get(i)?, avg))) {
                Some((shared, avg)) => shared.state.finish_as(groups.clone(), avg, out)?,
                None => a.state.finish(groups.clone(), out)?,
            }
        }
        Ok(())
    }

    /// Drops the first `k` groups of every function.
    pub fn forget_front(&mut self, k: usize) {
        self.stateful().for_each(|a| a.state.forget_front(k));
    }

    /// An estimate of the bytes one group's states take in their fixed slots: one scalar
    /// slot per output column (counts and sums are smaller, decimals about that).
    pub fn bytes_per_group(&self) -> usize {
        self.fns.iter().map(|a| a.out.len()).sum::<usize>() * std::mem::size_of::<Scalar>()
    }

    /// The heap bytes the states hold beyond their fixed slots.
    pub fn heap_bytes(&self) -> usize {
        self.fns.iter().map(|a| a.state.heap_bytes()).sum()
    }
}

/// The unsigned `BIGINT` of COUNT and of the count columns of AVG and the variances.
pub(crate) fn count_ft() -> FieldType {
    let mut c = FieldType::long_long();
    c.flag |= crate::types::FLAG_UNSIGNED;
    c
}

/// The count column of `groups` of `counts`.
pub(crate) fn count_col(counts: &[i64], groups: Range<usize>) -> VecCol {
    let v: Vec<i64> = counts.get(groups.clone()).map_or_else(Vec::new, <[i64]>::to_vec);
    let n = v.len();
    VecCol { data: crate::column::ColData::Int(v), valid: crate::column::Bitmap::all_valid(n) }
}

/// Removes the first `k` elements of `v` (all when it has fewer).
pub(crate) fn drain_front<T>(v: &mut Vec<T>, k: usize) {
    v.drain(..k.min(v.len()));
}

/// A batch of the rows `cols` (all rows logical).
pub(crate) fn batch_of(cols: Vec<VecCol>, rows: usize) -> Batch {
    let mut batch = Batch::from_cols(cols);
    batch.logical = (0..rows as u32).collect();
    batch.physical_len = rows;
    batch
}

/// The group-by expressions of an aggregation, built and checked.
pub(crate) fn build_group_by(
    exprs: &[tipb::Expr],
    schema: &[FieldType],
    cfg: &EvalConfig,
    depth: usize,
) -> Result<Vec<Node>> {
    let mut group_by = Vec::with_capacity(exprs.len());
    for e in exprs {
        let g = crate::expr::build(e, schema, cfg, depth)?;
        // Group keys of strings are compared under their collation.
        require_collation(&g.ft)?;
        require_collation(&g.ft_for_output())?;
        group_by.push(g);
    }
    Ok(group_by)
}
