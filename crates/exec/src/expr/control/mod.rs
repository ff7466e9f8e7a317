//! Control flow: `IF`, `IFNULL`, `COALESCE`, `CASE WHEN` (over every type, JSON too); [`minmax`]: `GREATEST`, `LEAST`
//! (over numbers, times, durations and dates) and `INTERVAL`.

pub mod minmax;

use crate::column::{Scalar, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::kernel::is_true_at;
use crate::expr::registry::{Args, Call, Registry};
use crate::expr::sig::type_at;
use crate::expr::value::Value;
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    minmax::register(r);
    for k in 0..6 {
        let Some(t) = type_at(k) else { continue };
        r.add(4101 + k, Args::same(t, 2), t, coalesce_kernel); // IfNull
        r.add(4107 + k, Args::fixed(&[EvalType::Int, t, t]), t, if_kernel);
        r.add(4201 + k, Args::Variadic(t), t, coalesce_kernel); // Coalesce
        r.add(4208 + k, Args::CaseWhen(t), t, case_when_kernel);
    }
    // The JSON forms, numbered after the others.
    let j = EvalType::Json;
    r.add(4113, Args::same(j, 2), j, coalesce_kernel); // IfNullJson
    r.add(4114, Args::fixed(&[EvalType::Int, j, j]), j, if_kernel);
    r.add(4207, Args::Variadic(j), j, coalesce_kernel); // CoalesceJson
    r.add(4214, Args::CaseWhen(j), j, case_when_kernel);
}

fn coalesce_kernel(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(coalesce(c.et, c.args, c.n))
}

fn if_kernel(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    if_fn(c.et, c.args, c.n)
}

fn case_when_kernel(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    case_when(c.et, c.args, c.n)
}

fn coalesce(et: EvalType, args: &[Value<'_>], n: usize) -> VecCol {
    let mut out = VecCol::new(et, n);
    for i in 0..n {
        let v = args.iter().map(|a| a.scalar_at(i)).find(|s| !s.is_null()).unwrap_or(Scalar::Null);
        out.push_scalar(&v);
    }
    out
}

fn if_fn(et: EvalType, args: &[Value<'_>], n: usize) -> Result<VecCol> {
    let [c, t, e] = args else {
        return Err(Error::invalid("IF needs 3 arguments"));
    };
    let mut out = VecCol::new(et, n);
    for i in 0..n {
        let v = if is_true_at(c, i)? { t.scalar_at(i) } else { e.scalar_at(i) };
        out.push_scalar(&v);
    }
    Ok(out)
}

fn case_when(et: EvalType, args: &[Value<'_>], n: usize) -> Result<VecCol> {
    let mut out = VecCol::new(et, n);
    for i in 0..n {
        let mut v = Scalar::Null;
        let mut k = 0;
        loop {
            match (args.get(k), args.get(k + 1)) {
                (Some(c), Some(val)) => {
                    if is_true_at(c, i)? {
                        v = val.scalar_at(i);
                        break;
                    }
                    k += 2;
                }
                (Some(else_v), None) => {
                    v = else_v.scalar_at(i);
                    break;
                }
                _ => break,
            }
        }
        out.push_scalar(&v);
    }
    Ok(out)
}
