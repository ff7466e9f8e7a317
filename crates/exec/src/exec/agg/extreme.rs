//! MIN and MAX (`tidb_query_aggr` `impl_max_min.rs`): the result type must have the
//! argument's eval type; strings compare under the result type's collation, integers as
//! signed or unsigned by the argument's flag. NULLs are skipped; a group without values
//! gives NULL.

use std::ops::Range;

use crate::column::{Scalar, VecCol};
use crate::error::Result;
use crate::exec::agg::registry::wrong_type;
use crate::exec::agg::{AggState, Plan, drain_front, require_collation};
use crate::exec::top_n::cmp_scalar;
use crate::expr::Node;
use crate::expr::eval::Value;
use crate::limits::scalar_heap_bytes;
use crate::types::{FLAG_UNSIGNED, FieldType};

fn plan(own: &FieldType, arg: &Node, max: bool) -> Result<Plan> {
    if own.eval_type().ok() != Some(arg.et) {
        return Err(wrong_type(if max { "MAX" } else { "MIN" }, arg, own));
    }
    // Strings compare under the collation: one we cannot apply is an error, never a silent
    // byte comparison.
    require_collation(own)?;
    let mut cmp_ft = *own;
    cmp_ft.flag = (own.flag & !FLAG_UNSIGNED) | (arg.ft.flag & FLAG_UNSIGNED);
    Ok(Plan {
        cast: None,
        out: vec![*own],
        state: Box::new(Extreme { max, cmp_ft, vals: Vec::new(), heap: 0 }),
    })
}

/// Plans MIN.
pub(crate) fn plan_min(own: &FieldType, arg: &Node) -> Result<Plan> {
    plan(own, arg, false)
}

/// Plans MAX.
pub(crate) fn plan_max(own: &FieldType, arg: &Node) -> Result<Plan> {
    plan(own, arg, true)
}

/// Per group, the extreme value so far (NULL before the first value).
#[derive(Debug)]
pub(crate) struct Extreme {
    max: bool,
    /// The type values compare as (collation of the result, signedness of the argument).
    cmp_ft: FieldType,
    vals: Vec<Scalar>,
    /// The heap bytes of `vals`.
    heap: usize,
}

impl AggState for Extreme {
    fn grow(&mut self, groups: usize) {
        self.vals.resize(groups, Scalar::Null);
    }

    fn update(&mut self, g: &[u32], v: &Value<'_>, _arg_ft: &FieldType) -> Result<()> {
        for (i, &gi) in g.iter().enumerate() {
            let x = v.scalar_at(i);
            if x.is_null() {
                continue;
            }
            if let Some(cur) = self.vals.get_mut(gi as usize) {
                let better = cur.is_null() || {
                    let o = cmp_scalar(&x, cur, &self.cmp_ft);
                    if self.max { o.is_gt() } else { o.is_lt() }
                };
                if better {
                    self.heap = self.heap + scalar_heap_bytes(&x) - scalar_heap_bytes(cur);
                    *cur = x;
                }
            }
        }
        Ok(())
    }

    fn finish(&self, groups: Range<usize>, out: &mut Vec<VecCol>) -> Result<()> {
        let mut col = VecCol::new(self.cmp_ft.eval_type()?, groups.len());
        for gi in groups {
            col.push_scalar(self.vals.get(gi).unwrap_or(&Scalar::Null));
        }
        out.push(col);
        Ok(())
    }

    fn forget_front(&mut self, k: usize) {
        let gone: usize = self.vals.iter().take(k).map(scalar_heap_bytes).sum();
        self.heap -= gone;
        drain_front(&mut self.vals, k);
    }

    fn heap_bytes(&self) -> usize {
        self.heap
    }
}
