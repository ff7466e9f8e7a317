//! String functions: `LIKE`.

use crate::column::Scalar;
use crate::column::{Arg, BytesT, ColData, Elem, IntT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::build::{Meta, Node, NodeKind};
use crate::expr::kernel::{validity, zip_all};
use crate::expr::like::LikePattern;
use crate::expr::registry::{Args, Call, Registry};
use crate::types::{EvalType, FieldType};

/// `LikeSig`.
pub const LIKE: i32 = 4310;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes, Int};
    r.add(LIKE, Args::fixed(&[Bytes, Bytes, Int]), Int, like_kernel).with_meta(like_meta);
}

/// A constant pattern and escape compile once; otherwise the collation is kept.
fn like_meta(ft: &FieldType, children: &[Node]) -> Result<Meta> {
    let coll = ft.collation()?;
    let pattern = children.get(1).map(|c| &c.kind);
    let escape = children.get(2).map(|c| &c.kind);
    Ok(match (pattern, escape) {
        (Some(NodeKind::Const(Scalar::Bytes(p))), Some(NodeKind::Const(Scalar::Int(esc)))) => {
            Meta::Like(Box::new(LikePattern::compile(p, *esc, ft.collate)?))
        }
        _ => Meta::LikeDynamic(coll, ft.collate),
    })
}

fn like_kernel(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    like(c.func, c.n, c.typed(0)?, c.typed(1)?, c.typed(2)?)
}

fn like<'a>(
    f: &crate::expr::build::Func,
    n: usize,
    text: Arg<'a, BytesT>,
    pattern: Arg<'a, BytesT>,
    escape: Arg<'a, IntT>,
) -> Result<VecCol> {
    let mut out = VecCol::new(EvalType::Int, n);
    match &f.meta {
        Meta::Like(p) => {
            let data =
                zip_all(n, text, Arg::<IntT>::Const(Some(0)), |t, _| i64::from(p.matches(t)));
            let valid = validity(&text, n);
            return Ok(VecCol { data: ColData::Int(data), valid });
        }
        Meta::LikeDynamic(_, collate) => {
            for i in 0..n {
                match (text.get(i), pattern.get(i), escape.get(i)) {
                    (Some(t), Some(p), Some(e)) => {
                        let pat = LikePattern::compile(p, e, *collate)?;
                        IntT::push(&mut out, Some(i64::from(pat.matches(t))));
                    }
                    _ => out.push_null(),
                }
            }
        }
        _ => return Err(Error::invalid("LIKE without metadata")),
    }
    Ok(out)
}
