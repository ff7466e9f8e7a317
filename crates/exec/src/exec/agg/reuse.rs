//! Sharing work between aggregates (Q1's `price * (1 - discount)` inside the charge): an
//! aggregate whose argument is a function call with a child equal, as a tipb expression, to
//! the function-call argument of an earlier aggregate reuses that aggregate's value for the
//! batch instead of computing it again.

use std::collections::HashMap;

use rcop_proto::tipb;

use crate::batch::Batch;
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::exec::agg::AggFn;
use crate::expr::build::NodeKind;
use crate::expr::eval::{Value, eval, eval_func};

/// Scalar function signatures whose results [`find_reuse`] may share between aggregates:
/// the arithmetic `+`, `-` and `*` of reals, decimals and integers (`PlusReal` 200 to
/// `MultiplyInt` 210), which are deterministic and so give the same column each time.
fn shareable(e: &tipb::Expr) -> bool {
    use tipb::ExprType as T;
    let Some(tp) = e.tp else { return false };
    if tp == T::ScalarFunc as i32 {
        return e.sig.is_some_and(|s| (200..=210).contains(&s)) && e.children.iter().all(shareable);
    }
    [
        T::ColumnRef,
        T::Null,
        T::Int64,
        T::Uint64,
        T::Float32,
        T::Float64,
        T::String,
        T::Bytes,
        T::MysqlDecimal,
        T::MysqlDuration,
        T::MysqlTime,
    ]
    .iter()
    .any(|&t| t as i32 == tp)
}

/// For each aggregate, the (child, earlier aggregate) pair whose argument it can reuse (see
/// `AggregationExecutor::reuse`): an argument that is a function call with a child equal,
/// as a tipb expression, to the function-call argument of an earlier aggregate.
///
/// Linear in the size of the aggregates: each argument is encoded once (equal messages have
/// equal encodings) and looked up in a map of the earlier ones, first occurrence kept.
pub(crate) fn find_reuse(protos: &[tipb::Expr], aggs: &[AggFn]) -> Vec<Option<(usize, usize)>> {
    use prost::Message;
    let mut first: HashMap<Vec<u8>, usize, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(protos.len(), foldhash::fast::RandomState::default());
    let mut out = Vec::with_capacity(protos.len());
    for (j, e) in protos.iter().enumerate() {
        let a = e.children.first();
        let found = a.and_then(|a| {
            let NodeKind::Func(f) = &aggs.get(j)?.arg.kind else { return None };
            if f.children.len() != a.children.len() {
                return None;
            }
            a.children.iter().enumerate().find_map(|(k, child)| {
                if child.tp != Some(tipb::ExprType::ScalarFunc as i32) || !shareable(child) {
                    return None;
                }
                let i = *first.get(&child.encode_to_vec())?;
                let (shared, built) = (&aggs.get(i)?.arg, f.children.get(k)?);
                (matches!(shared.kind, NodeKind::Func(_))
                    && shared.ft == built.ft
                    && shared.et == built.et)
                    .then_some((k, i))
            })
        });
        out.push(found);
        if let Some(a) = a {
            first.entry(a.encode_to_vec()).or_insert(j);
        }
    }
    out
}

/// Which aggregates' values a later one reuses (computed once, not per batch).
pub(crate) fn wanted(reuse: &[Option<(usize, usize)>]) -> Vec<bool> {
    let mut w = vec![false; reuse.len()];
    for &(_, i) in reuse.iter().flatten() {
        if let Some(slot) = w.get_mut(i) {
            *slot = true;
        }
    }
    w
}

/// Evaluates every aggregate's argument over `batch` (reusing shared values) and folds it
/// into the groups `g`.
pub(crate) fn update_all(
    fns: &mut [AggFn],
    reuse: &[Option<(usize, usize)>],
    wanted: &[bool],
    batch: &Batch,
    g: &[u32],
    ctx: &mut EvalContext,
) -> Result<()> {
    let n = batch.len();
    let mut kept: Vec<Option<Value<'_>>> = Vec::new();
    for (j, a) in fns.iter_mut().enumerate() {
        let reused = match (reuse.get(j).copied().flatten(), &a.arg.kind) {
            (Some((k, i)), NodeKind::Func(f)) => match kept.get(i) {
                Some(Some(Value::Owned(shared))) => {
                    let mut args = Vec::with_capacity(f.children.len());
                    for (c, child) in f.children.iter().enumerate() {
                        args.push(if c == k {
                            Value::Ref(shared)
                        } else {
                            eval(child, batch, ctx)?
                        });
                    }
                    Some(Value::Owned(eval_func(f, &a.arg.ft, a.arg.et, &args, n, ctx)?))
                }
                _ => None,
            },
            _ => None,
        };
        let v = match reused {
            Some(v) => v,
            None => eval(&a.arg, batch, ctx)?,
        };
        a.update(g, &v, n, ctx)?;
        let keep = wanted.get(j).copied().unwrap_or(false);
        kept.push(keep.then_some(v));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds the expression `tipb::Expr` of a scalar function `sig` over `children`.
    fn func(sig: i32, children: Vec<tipb::Expr>) -> tipb::Expr {
        tipb::Expr {
            tp: Some(tipb::ExprType::ScalarFunc as i32),
            sig: Some(sig),
            children,
            ..Default::default()
        }
    }

    #[test]
    fn only_arithmetic_is_shared() {
        let col = tipb::Expr { tp: Some(tipb::ExprType::ColumnRef as i32), ..Default::default() };
        let prod = func(209, vec![col.clone(), col.clone()]); // MultiplyDecimal
        assert!(shareable(&prod));
        assert!(shareable(&func(205, vec![col.clone(), prod.clone()]))); // MinusDecimal
        // Any other function (here a comparison), even inside arithmetic, is not shared.
        let lt = func(100, vec![col.clone(), col.clone()]);
        assert!(!shareable(&lt));
        assert!(!shareable(&func(210, vec![lt, col])));
    }

    #[test]
    fn ten_thousand_aggregates_find_the_shared_product_by_map() {
        use crate::exec::agg::Aggregates;
        use crate::types::FieldType;
        let ft = |tp: i32| tipb::FieldType { tp: Some(tp), ..Default::default() };
        let mut off = Vec::new();
        rcop_datum::codec::encode_i64(&mut off, 0);
        let col = tipb::Expr {
            tp: Some(tipb::ExprType::ColumnRef as i32),
            val: Some(off.into()),
            field_type: Some(ft(8)),
            ..Default::default()
        };
        let typed = |mut e: tipb::Expr| {
            e.field_type = Some(ft(8));
            e
        };
        let square = typed(func(210, vec![col.clone(), col])); // MultiplyInt
        let sum = |arg| tipb::Expr {
            tp: Some(tipb::ExprType::Sum as i32),
            children: vec![arg],
            field_type: Some(ft(246)),
            agg_func_mode: Some(2),
            ..Default::default()
        };
        let mut protos = vec![sum(square.clone())];
        for k in 1..10_000i64 {
            let mut v = Vec::new();
            rcop_datum::codec::encode_i64(&mut v, k);
            let konst = tipb::Expr {
                tp: Some(tipb::ExprType::Int64 as i32),
                val: Some(v.into()),
                field_type: Some(ft(8)),
                ..Default::default()
            };
            protos.push(sum(typed(func(203, vec![square.clone(), konst])))); // PlusInt
        }
        let schema = [FieldType::long_long()];
        let aggs = Aggregates::build(&protos, &schema, &Default::default(), 100).unwrap();
        assert_eq!(aggs.reuse.first(), Some(&None));
        assert!(aggs.reuse.iter().skip(1).all(|r| *r == Some((0, 0))));
        assert_eq!(aggs.wanted.iter().filter(|w| **w).count(), 1);
        assert_eq!(aggs.refs, [0]);
    }
}
