//! FIRST_ROW (`tidb_query_aggr` `impl_first.rs`): the argument of the group's first row,
//! NULL included. The result type must have the argument's eval type.

use std::ops::Range;

use crate::column::{Scalar, VecCol};
use crate::error::Result;
use crate::exec::agg::registry::wrong_type;
use crate::exec::agg::{AggState, Plan, drain_front};
use crate::expr::Node;
use crate::expr::eval::Value;
use crate::limits::scalar_heap_bytes;
use crate::types::{EvalType, FieldType};

/// Plans FIRST_ROW.
pub(crate) fn plan(own: &FieldType, arg: &Node) -> Result<Plan> {
    if own.eval_type().ok() != Some(arg.et) {
        return Err(wrong_type("FIRST_ROW", arg, own));
    }
    Ok(Plan {
        cast: None,
        out: vec![*own],
        state: Box::new(First { et: arg.et, vals: Vec::new(), heap: 0 }),
    })
}

/// Per group, the first value (`None` until the group's first row).
#[derive(Debug)]
pub(crate) struct First {
    et: EvalType,
    vals: Vec<Option<Scalar>>,
    /// The heap bytes of `vals`.
    heap: usize,
}

impl AggState for First {
    fn grow(&mut self, groups: usize) {
        self.vals.resize(groups, None);
    }

    fn update(&mut self, g: &[u32], v: &Value<'_>, _arg_ft: &FieldType) -> Result<()> {
        for (i, &gi) in g.iter().enumerate() {
            if let Some(slot @ None) = self.vals.get_mut(gi as usize) {
                let x = v.scalar_at(i);
                self.heap += scalar_heap_bytes(&x);
                *slot = Some(x);
            }
        }
        Ok(())
    }

    fn finish(&self, groups: Range<usize>, out: &mut Vec<VecCol>) -> Result<()> {
        let mut col = VecCol::new(self.et, groups.len());
        for gi in groups {
            col.push_scalar(self.vals.get(gi).and_then(Option::as_ref).unwrap_or(&Scalar::Null));
        }
        out.push(col);
        Ok(())
    }

    fn forget_front(&mut self, k: usize) {
        let gone: usize = self.vals.iter().take(k).flatten().map(scalar_heap_bytes).sum();
        self.heap -= gone;
        drain_front(&mut self.vals, k);
    }

    fn heap_bytes(&self) -> usize {
        self.heap
    }
}
