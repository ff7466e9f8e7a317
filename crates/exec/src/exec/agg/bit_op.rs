//! BIT_AND, BIT_OR and BIT_XOR (`tidb_query_aggr` `impl_bit_op.rs`): the argument cast to
//! BIGINT when it is not an integer (`rewrite_exp_for_bit_op`), folded as 64 bits from
//! all ones (AND) or zero (OR, XOR). NULLs are skipped and a group without values gives the
//! start value, never NULL (MySQL: 18446744073709551615 for BIT_AND, 0 for the others).

use std::ops::Range;

use crate::column::{ColData, IntT, VecCol};
use crate::error::Result;
use crate::exec::agg::registry::wrong_type;
use crate::exec::agg::{AggState, ArgCast, Plan, drain_front};
use crate::expr::Node;
use crate::expr::eval::Value;
use crate::types::{EvalType, FieldType};

/// The three folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BitOp {
    /// BIT_AND.
    And,
    /// BIT_OR.
    Or,
    /// BIT_XOR.
    Xor,
}

impl BitOp {
    fn start(self) -> u64 {
        match self {
            BitOp::And => u64::MAX,
            BitOp::Or | BitOp::Xor => 0,
        }
    }

    #[inline]
    fn apply(self, acc: &mut u64, x: u64) {
        match self {
            BitOp::And => *acc &= x,
            BitOp::Or => *acc |= x,
            BitOp::Xor => *acc ^= x,
        }
    }

    fn name(self) -> &'static str {
        match self {
            BitOp::And => "BIT_AND",
            BitOp::Or => "BIT_OR",
            BitOp::Xor => "BIT_XOR",
        }
    }
}

fn plan(own: &FieldType, arg: &Node, op: BitOp) -> Result<Plan> {
    if own.eval_type().ok() != Some(EvalType::Int) {
        return Err(wrong_type(op.name(), arg, own));
    }
    let cast = (arg.et != EvalType::Int)
        .then_some(ArgCast { to: EvalType::Int, to_ft: FieldType::long_long() });
    Ok(Plan { cast, out: vec![*own], state: Box::new(BitFold { op, vals: Vec::new() }) })
}

/// Plans BIT_AND.
pub(crate) fn plan_and(own: &FieldType, arg: &Node) -> Result<Plan> {
    plan(own, arg, BitOp::And)
}

/// Plans BIT_OR.
pub(crate) fn plan_or(own: &FieldType, arg: &Node) -> Result<Plan> {
    plan(own, arg, BitOp::Or)
}

/// Plans BIT_XOR.
pub(crate) fn plan_xor(own: &FieldType, arg: &Node) -> Result<Plan> {
    plan(own, arg, BitOp::Xor)
}

/// Per group, the fold so far.
#[derive(Debug)]
pub(crate) struct BitFold {
    op: BitOp,
    vals: Vec<u64>,
}

impl AggState for BitFold {
    fn grow(&mut self, groups: usize) {
        self.vals.resize(groups, self.op.start());
    }

    fn update(&mut self, g: &[u32], v: &Value<'_>, _arg_ft: &FieldType) -> Result<()> {
        let a = v.arg::<IntT>()?;
        for (i, &gi) in g.iter().enumerate() {
            if let (Some(x), Some(acc)) = (a.get(i), self.vals.get_mut(gi as usize)) {
                self.op.apply(acc, x as u64);
            }
        }
        Ok(())
    }

    fn finish(&self, groups: Range<usize>, out: &mut Vec<VecCol>) -> Result<()> {
        let v: Vec<i64> =
            groups.map(|gi| self.vals.get(gi).copied().unwrap_or(self.op.start()) as i64).collect();
        let n = v.len();
        out.push(VecCol { data: ColData::Int(v), valid: crate::column::Bitmap::all_valid(n) });
        Ok(())
    }

    fn forget_front(&mut self, k: usize) {
        drain_front(&mut self.vals, k);
    }
}
