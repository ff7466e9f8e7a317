//! The aggregate functions the engine computes: one table from the tipb `ExprType` to the
//! function's arity and its plan (argument typing, output columns, state), which the builder,
//! the capability check and `--example capabilities` all read.
//!
//! The set is TiKV's (`tidb_query_aggr::parser::map_pb_sig_to_aggr_func_parser`): COUNT,
//! SUM, SUM_INT, AVG, FIRST_ROW, MIN, MAX, BIT_AND, BIT_OR, BIT_XOR, VARIANCE/VAR_POP and
//! VAR_SAMP. TiKV refuses the rest (STD, STDDEV, STDDEV_POP, STDDEV_SAMP, GROUP_CONCAT,
//! APPROX_COUNT_DISTINCT, JSON_ARRAYAGG, JSON_OBJECTAGG, MIN/MAX_COUNT), and so does the
//! engine.

use rcop_proto::tipb;

use crate::ctx::EvalConfig;
use crate::error::{Error, Feature, Result};
use crate::exec::agg::{AggFn, Plan, bit_op, count, extreme, first, sum, sum_int, variance};
use crate::expr::{self, Node};
use crate::types::FieldType;

/// How one aggregate's call is planned: from its own field type (as TiDB sent it) and its
/// built argument.
type PlanFn = fn(own: &FieldType, arg: &Node) -> Result<Plan>;

/// One aggregate function.
#[derive(Debug)]
pub(crate) struct AggDef {
    /// The tipb expression type.
    pub tp: tipb::ExprType,
    /// How many arguments it takes.
    pub arity: usize,
    /// Its plan.
    pub plan: PlanFn,
}

/// Every aggregate the engine computes, in capability-listing order.
pub(crate) const AGGREGATES: &[AggDef] = &[
    AggDef { tp: tipb::ExprType::Count, arity: 1, plan: count::plan },
    AggDef { tp: tipb::ExprType::Sum, arity: 1, plan: sum::plan_sum },
    AggDef { tp: tipb::ExprType::Avg, arity: 1, plan: sum::plan_avg },
    AggDef { tp: tipb::ExprType::Min, arity: 1, plan: extreme::plan_min },
    AggDef { tp: tipb::ExprType::Max, arity: 1, plan: extreme::plan_max },
    AggDef { tp: tipb::ExprType::First, arity: 1, plan: first::plan },
    AggDef { tp: tipb::ExprType::AggBitAnd, arity: 1, plan: bit_op::plan_and },
    AggDef { tp: tipb::ExprType::AggBitOr, arity: 1, plan: bit_op::plan_or },
    AggDef { tp: tipb::ExprType::AggBitXor, arity: 1, plan: bit_op::plan_xor },
    AggDef { tp: tipb::ExprType::VarPop, arity: 1, plan: variance::plan_pop },
    AggDef { tp: tipb::ExprType::Variance, arity: 1, plan: variance::plan_pop },
    AggDef { tp: tipb::ExprType::VarSamp, arity: 1, plan: variance::plan_samp },
    AggDef { tp: tipb::ExprType::SumInt, arity: 1, plan: sum_int::plan },
];

/// The aggregate modes the engine runs: all of them. TiKV's aggregate parsers never read
/// `aggFuncMode`, so every mode (and a number outside the enum) runs as TiDB pushes
/// Complete and Partial1: each aggregate produces its partial layout (AVG as count and sum).
pub const AGG_MODES: &[tipb::AggFunctionMode] = &[
    tipb::AggFunctionMode::CompleteMode,
    tipb::AggFunctionMode::FinalMode,
    tipb::AggFunctionMode::Partial1Mode,
    tipb::AggFunctionMode::Partial2Mode,
    tipb::AggFunctionMode::DedupMode,
];

/// The aggregate functions the engine computes, by their tipb expression type.
pub fn aggregate_functions() -> impl Iterator<Item = tipb::ExprType> {
    AGGREGATES.iter().map(|d| d.tp)
}

/// The definition of the aggregate `tp`, if the engine computes it.
pub(crate) fn lookup(tp: i32) -> Option<&'static AggDef> {
    AGGREGATES.iter().find(|d| d.tp as i32 == tp)
}

/// Builds the aggregate call `e` over `schema`.
pub(crate) fn build(
    e: &tipb::Expr,
    schema: &[FieldType],
    cfg: &EvalConfig,
    depth: usize,
) -> Result<AggFn> {
    let tp = e.tp.unwrap_or(0);
    let Some(def) = lookup(tp) else {
        return Err(Error::unsupported(
            Feature::AggregateFunction,
            expr::build::expr_type_name(tp),
        ));
    };
    // `e.agg_func_mode` is not read: TiKV ignores it (see `AGG_MODES`).
    if e.has_distinct == Some(true) {
        return Err(Error::unsupported(Feature::AggregateMode, "DISTINCT aggregates"));
    }
    let [child] = e.children.as_slice() else {
        return Err(Error::unsupported(
            Feature::AggregateMode,
            format!(
                "{} arguments to {} (it takes {})",
                e.children.len(),
                expr::build::expr_type_name(tp),
                def.arity
            ),
        ));
    };
    let arg = expr::build(child, schema, cfg, depth)?;
    let own = FieldType::from_proto(e.field_type.as_ref());
    let Plan { cast, out, state } = (def.plan)(&own, &arg)?;
    Ok(AggFn { arg, cast, out, state })
}

/// The error of an aggregate whose own field type does not fit its argument, as TiKV's
/// "Unexpected return field type".
pub(crate) fn wrong_type(what: &str, arg: &Node, own: &FieldType) -> Error {
    Error::unsupported(
        Feature::AggregateMode,
        format!(
            "{what} of {:?} returning {} ({:?})",
            arg.et,
            crate::types::type_name(own.tp),
            own.eval_type().ok()
        ),
    )
}
