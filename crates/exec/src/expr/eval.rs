//! Vectorised evaluation of built expressions over the logical rows of a batch: columns and
//! constants directly, function calls through their registry entry's kernel.

use crate::batch::Batch;
use crate::column::VecCol;
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::build::{Func, Meta, Node, NodeKind};
use crate::expr::registry::Call;
use crate::types::{EvalType, FieldType};

pub use crate::expr::compare::cmp_int;
pub use crate::expr::kernel::{dec_res, truth_at};
pub use crate::expr::value::Value;

/// Evaluates `node` over the logical rows of `batch`. Every column the node reads must have
/// been decoded.
pub fn eval<'b>(node: &Node, batch: &'b Batch, ctx: &mut EvalContext) -> Result<Value<'b>> {
    match &node.kind {
        NodeKind::Const(s) => Ok(Value::Scalar(s.clone())),
        NodeKind::Column(o) => {
            let c = batch
                .decoded(*o)
                .ok_or_else(|| Error::invalid(format!("column {o} was not decoded")))?;
            if batch.is_identity() {
                Ok(Value::Ref(c))
            } else {
                Ok(Value::Owned(c.gather(&batch.logical)))
            }
        }
        NodeKind::Func(f) => {
            let n = batch.len();
            // An IN whose constant list is hashed reads only its target: its items are not
            // evaluated (cloned) batch after batch.
            let children = match &f.meta {
                Meta::InSet(_) => f.children.get(..1).unwrap_or_default(),
                _ => &f.children[..],
            };
            let mut args = Vec::with_capacity(children.len());
            for c in children {
                args.push(eval(c, batch, ctx)?);
            }
            eval_func(f, &node.ft, node.et, &args, n, ctx).map(Value::Owned)
        }
    }
}

/// Evaluates a function over already evaluated arguments.
pub fn eval_func(
    f: &Func,
    ft: &FieldType,
    et: EvalType,
    args: &[Value<'_>],
    n: usize,
    ctx: &mut EvalContext,
) -> Result<VecCol> {
    let materialized: Vec<Value<'_>>;
    let args = if !f.def.takes_fixed && args.iter().any(Value::is_fixed) {
        materialized = args.iter().map(Value::materialize).collect();
        &materialized[..]
    } else {
        args
    };
    (f.def.kernel)(&Call { func: f, ft, et, args, n }, ctx)
}
