//! SUM_INT (`tidb_query_aggr` `impl_sum_int.rs`): the sum of an integer column as a BIGINT
//! of the argument's signedness; the result type must be a LONGLONG of that signedness and
//! the argument a TINYINT..BIGINT. Overflow is an error ("BIGINT value is out of range").

use std::ops::Range;

use rcop_datum::chunk::mysql_type as mt;

use crate::column::{Elem, IntT, VecCol};
use crate::error::{Error, Result};
use crate::exec::agg::registry::wrong_type;
use crate::exec::agg::{AggState, Plan, drain_front};
use crate::expr::Node;
use crate::expr::eval::Value;
use crate::types::{EvalType, FieldType};

/// Plans SUM_INT.
pub(crate) fn plan(own: &FieldType, arg: &Node) -> Result<Plan> {
    let int_arg = matches!(arg.ft.tp, mt::TINY | mt::SHORT | mt::INT24 | mt::LONG | mt::LONG_LONG)
        && arg.et == EvalType::Int;
    if own.tp != mt::LONG_LONG || !int_arg || own.is_unsigned() != arg.ft.is_unsigned() {
        return Err(wrong_type("SUM_INT", arg, own));
    }
    Ok(Plan {
        cast: None,
        out: vec![*own],
        state: Box::new(SumInt { unsigned: own.is_unsigned(), sums: Vec::new() }),
    })
}

/// Per group, the sum (`None` before the first value), as the bit pattern of an `i64` or a
/// `u64`.
#[derive(Debug)]
pub(crate) struct SumInt {
    unsigned: bool,
    sums: Vec<Option<i64>>,
}

impl AggState for SumInt {
    fn grow(&mut self, groups: usize) {
        self.sums.resize(groups, None);
    }

    fn update(&mut self, g: &[u32], v: &Value<'_>, _arg_ft: &FieldType) -> Result<()> {
        let a = v.arg::<IntT>()?;
        for (i, &gi) in g.iter().enumerate() {
            let (Some(x), Some(acc)) = (a.get(i), self.sums.get_mut(gi as usize)) else {
                continue;
            };
            *acc = Some(match *acc {
                None => x,
                Some(s) if self.unsigned => {
                    (s as u64).checked_add(x as u64).ok_or(Error::Overflow("BIGINT UNSIGNED"))?
                        as i64
                }
                Some(s) => s.checked_add(x).ok_or(Error::Overflow("BIGINT"))?,
            });
        }
        Ok(())
    }

    fn finish(&self, groups: Range<usize>, out: &mut Vec<VecCol>) -> Result<()> {
        let mut col = VecCol::new(EvalType::Int, groups.len());
        for gi in groups {
            IntT::push(&mut col, self.sums.get(gi).copied().flatten());
        }
        out.push(col);
        Ok(())
    }

    fn forget_front(&mut self, k: usize) {
        drain_front(&mut self.sums, k);
    }
}
