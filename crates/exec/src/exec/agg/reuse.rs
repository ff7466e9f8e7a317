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

/// For each aggregate, `Some((i, avg))` when it is a SUM or AVG (`avg`) whose argument and
/// result type equal, as tipb messages, those of the earlier SUM or AVG `i` (the first such):
/// both are then one state, summed once (see `Aggregates::twin`). Equal arguments and result
/// types give both the same cast and the same state; they differ only in what they output.
///
/// Only an argument that gives the same values and raises nothing when evaluated again is
/// shared, since TiKV evaluates each aggregate's argument on its own and counts the warnings
/// of each: a [`shareable`] one (columns, constants and `+ - *`, which fail rather than
/// warn, never `RAND()`), summed without a cast (a cast to DOUBLE can warn per row).
pub(crate) fn find_twins(protos: &[tipb::Expr], aggs: &[AggFn]) -> Vec<Option<(usize, bool)>> {
    use prost::Message;
    use tipb::ExprType as T;
    let mut first: HashMap<(Vec<u8>, Vec<u8>), usize, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(protos.len(), foldhash::fast::RandomState::default());
    let mut out = Vec::with_capacity(protos.len());
    for (j, e) in protos.iter().enumerate() {
        let avg = e.tp == Some(T::Avg as i32);
        let sum_or_avg = avg || e.tp == Some(T::Sum as i32);
        let uncast = aggs.get(j).is_some_and(|a| a.cast.is_none());
        let twin = match e.children.as_slice() {
            [arg] if sum_or_avg && uncast && shareable(arg) => {
                let ft = e.field_type.as_ref().map(Message::encode_to_vec).unwrap_or_default();
                let i = *first.entry((arg.encode_to_vec(), ft)).or_insert(j);
                (i != j).then_some((i, avg))
            }
            _ => None,
        };
        out.push(twin);
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
/// into the groups `g`; a twin (see [`find_twins`]) is skipped.
pub(crate) fn update_all(
    fns: &mut [AggFn],
    reuse: &[Option<(usize, usize)>],
    wanted: &[bool],
    twin: &[Option<(usize, bool)>],
    batch: &Batch,
    g: &[u32],
    ctx: &mut EvalContext,
) -> Result<()> {
    let n = batch.len();
    let mut kept: Vec<Option<Value<'_>>> = Vec::new();
    for (j, a) in fns.iter_mut().enumerate() {
        // A twin's argument is its earlier twin's, already folded (never a reused value:
        // `find_reuse` keeps the first of equal arguments).
        if twin.get(j).copied().flatten().is_some() {
            kept.push(None);
            continue;
        }
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

    #[test]
    fn sum_and_avg_of_one_argument_share_one_state_and_answer_as_alone() {
        use crate::column::{BytesT, DecT, Elem, RealT, VecCol};
        use crate::ctx::{EvalConfig, EvalContext, FLAG_TRUNCATE_AS_WARNING};
        use crate::exec::agg::{Aggregates, batch_of};
        use crate::types::{EvalType, FieldType};
        use rcop_datum::Decimal;
        use tipb::ExprType as T;
        let ft = |tp: i32, flen: i32, decimal: i32| tipb::FieldType {
            tp: Some(tp),
            flen: Some(flen),
            decimal: Some(decimal),
            ..Default::default()
        };
        let (dec, dbl, txt) = (ft(246, 15, 2), ft(5, 22, -1), ft(15, 20, 0));
        let col = |off: i64, ft: &tipb::FieldType| {
            let mut v = Vec::new();
            rcop_datum::codec::encode_i64(&mut v, off);
            tipb::Expr {
                tp: Some(T::ColumnRef as i32),
                val: Some(v.into()),
                field_type: Some(ft.clone()),
                ..Default::default()
            }
        };
        let agg = |tp: T, arg: tipb::Expr, ft: &tipb::FieldType| tipb::Expr {
            tp: Some(tp as i32),
            children: vec![arg],
            field_type: Some(ft.clone()),
            ..Default::default()
        };
        let (d, r, t) = (col(0, &dec), col(1, &dbl), col(2, &txt));
        let (sum_ft, avg_ft) = (ft(246, 65, 2), ft(246, 65, 6));
        // d / d: a division may warn (by zero), so it is evaluated once per aggregate.
        let mut quot = func(212, vec![d.clone(), d.clone()]); // DivideDecimal
        quot.field_type = Some(avg_ft.clone());
        let protos = [
            agg(T::Sum, d.clone(), &sum_ft),
            agg(T::Avg, d.clone(), &sum_ft),
            agg(T::Count, d.clone(), &ft(8, 21, 0)),
            agg(T::Avg, d.clone(), &avg_ft),
            agg(T::Sum, d.clone(), &avg_ft),
            agg(T::Avg, r.clone(), &dbl),
            agg(T::Sum, r.clone(), &dbl),
            agg(T::Sum, d.clone(), &sum_ft),
            agg(T::Max, d, &dec),
            // Cast to DOUBLE (a truncation warning a bad row), never shared.
            agg(T::Sum, t.clone(), &dbl),
            agg(T::Avg, t, &dbl),
            agg(T::Sum, quot.clone(), &avg_ft),
            agg(T::Avg, quot, &avg_ft),
        ];
        let schema = [
            FieldType::from_proto(Some(&dec)),
            FieldType::from_proto(Some(&dbl)),
            FieldType::from_proto(Some(&txt)),
        ];
        let aggs = Aggregates::build(&protos, &schema, &Default::default(), 100).unwrap();
        let twins = [
            None,
            Some((0, true)),
            None,
            None,
            Some((3, false)),
            None,
            Some((5, false)),
            Some((0, false)),
            None,
            None,
            None,
            None,
            None,
        ];
        assert_eq!(aggs.twin, twins);

        // 11 rows in 3 groups, NULLs in both columns, a group whose decimals are all NULL.
        let g: Vec<u32> = vec![0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1];
        let mut dcol = VecCol::new(EvalType::Decimal, g.len());
        let mut rcol = VecCol::new(EvalType::Real, g.len());
        let mut tcol = VecCol::new(EvalType::Bytes, g.len());
        for (i, &gi) in g.iter().enumerate() {
            // Row 0's decimal is zero: its quotient divides by zero.
            let x: Decimal = format!("{}.{:02}", i * 7 % 20, i * 13 % 100).parse().unwrap();
            DecT::push(&mut dcol, (gi != 2 && i != 4).then_some(&x));
            RealT::push(&mut rcol, (i % 3 != 1).then_some(i as f64 * 0.1));
            let s = if i % 4 == 0 { format!("{i}.5x") } else { format!("{i}.25") };
            BytesT::push(&mut tcol, (i != 5).then_some(s.as_bytes()));
        }
        let batch = batch_of(vec![dcol, rcol, tcol], g.len());
        let cfg = EvalConfig { flags: FLAG_TRUNCATE_AS_WARNING, ..Default::default() };
        let run = |protos: &[tipb::Expr], forget: usize| {
            let mut aggs = Aggregates::build(protos, &schema, &cfg, 100).unwrap();
            aggs.grow(3);
            let mut ctx = EvalContext::new(cfg.clone());
            aggs.update(&batch, &g, &mut ctx).unwrap();
            aggs.forget_front(forget);
            let mut out = Vec::new();
            aggs.finish(0..3 - forget, &mut out).unwrap();
            (out, ctx.take_warnings().1)
        };
        for forget in [0, 1] {
            let (mut alone, mut warnings) = (Vec::new(), 0);
            for p in &protos {
                let (cols, w) = run(std::slice::from_ref(p), forget);
                alone.extend(cols);
                warnings += w;
            }
            let shared = run(&protos, forget);
            assert_eq!(shared.0.len(), 18);
            assert_eq!(shared.0, alone);
            // Every aggregate raises its own: the two over the strings a truncation each for
            // rows 0, 4 and 8, the two over the quotient a division by zero each for row 0.
            assert_eq!(warnings, 8);
            assert_eq!(shared.1, warnings);
        }
    }
}
