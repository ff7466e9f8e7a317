//! Logic: `AND`, `OR`, `XOR`, `NOT`, `IS NULL`, `IS TRUE`, `IS FALSE` (and their
//! `WithNull` forms, which keep NULL as NULL).

use crate::column::{Arg, Bitmap, ColData, DecT, Elem, IntT, JsonT, RealT, VecCol};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::kernel::map1_infallible;
use crate::expr::registry::{Args, Call, Registry};
use crate::expr::value::Value;
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::*;
    for s in 3101..=3103 {
        r.add(s, Args::same(Int, 2), Int, logical_kernel);
    }
    // UnaryNot (int, decimal, real).
    r.add(3104, Args::same(Int, 1), Int, not_int);
    r.add(3105, Args::same(Decimal, 1), Int, not_decimal);
    r.add(3106, Args::same(Real, 1), Int, not_real);
    r.add(3107, Args::same(Json, 1), Int, not_json);
    // IsNull (decimal, duration, real, string, time, int, json).
    for (s, t) in [
        (3111, Decimal),
        (3112, Duration),
        (3113, Real),
        (3114, Bytes),
        (3115, DateTime),
        (3116, Int),
        (3117, Json),
    ] {
        r.add(s, Args::same(t, 1), Int, is_null_kernel);
    }
    // IsTrue, IsFalse and their WithNull forms (int, real, decimal).
    for base in [3122, 3125, 3142, 3145] {
        r.add(base, Args::same(Int, 1), Int, truth_kernel);
        r.add(base + 1, Args::same(Real, 1), Int, truth_kernel);
        r.add(base + 2, Args::same(Decimal, 1), Int, truth_kernel);
    }
}

fn logical_kernel(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    logical(c.func.sig, c.n, c.typed(0)?, c.typed(1)?)
}

fn not_int(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<IntT, IntT>(c.n, c.typed(0)?, |v| Some(i64::from(v == 0)))
}

fn not_decimal(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<DecT, IntT>(c.n, c.typed(0)?, |v| Some(i64::from(v.is_zero())))
}

fn not_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<RealT, IntT>(c.n, c.typed(0)?, |v| Some(i64::from(v == 0.0)))
}

/// `NOT json`: 1 when the value compares equal to the JSON integer 0 (so `0.0` too), as
/// TiKV's `unary_not_json`; any other value, `null` included, is 0.
fn not_json(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let zero = rcop_datum::Json::from_i64(0);
    map1_infallible::<JsonT, IntT>(c.n, c.typed(0)?, |v| {
        Some(i64::from(v.compare(&zero.as_ref()).is_ok_and(|o| o == std::cmp::Ordering::Equal)))
    })
}

fn is_null_kernel(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    is_null(c.n, c.arg(0)?)
}

fn truth_kernel(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let s = c.func.sig;
    let n = c.n;
    let keep_null = s >= 3142;
    let want_true = matches!(s, 3122..=3124 | 3142..=3144);
    let first = if keep_null { 3142 } else { 3122 };
    match (s - first) % 3 {
        0 => truth::<IntT>(n, c.typed(0)?, |v| v != 0, want_true, keep_null),
        1 => truth::<RealT>(n, c.typed(0)?, |v| v != 0.0, want_true, keep_null),
        _ => truth::<DecT>(n, c.typed(0)?, |v| !v.is_zero(), want_true, keep_null),
    }
}

fn logical<'a>(s: i32, n: usize, a: Arg<'a, IntT>, b: Arg<'a, IntT>) -> Result<VecCol> {
    let mut out = VecCol::new(EvalType::Int, n);
    for i in 0..n {
        let (x, y) = (a.get(i).map(|v| v != 0), b.get(i).map(|v| v != 0));
        let r = match s {
            3101 => match (x, y) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            3102 => match (x, y) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            _ => match (x, y) {
                (Some(p), Some(q)) => Some(p ^ q),
                _ => None,
            },
        };
        IntT::push(&mut out, r.map(i64::from));
    }
    Ok(out)
}

fn is_null(n: usize, v: &Value<'_>) -> Result<VecCol> {
    let data: Vec<i64> = match (v, v.col()) {
        (_, Some(c)) => (0..n).map(|i| i64::from(!c.valid.get(i))).collect(),
        (Value::Scalar(s), None) => vec![i64::from(s.is_null()); n],
        _ => vec![0; n],
    };
    Ok(VecCol { data: ColData::Int(data), valid: Bitmap::all_valid(n) })
}

fn truth<'a, E: Elem>(
    n: usize,
    a: Arg<'a, E>,
    truthy: impl Fn(E::R<'a>) -> bool,
    want_true: bool,
    keep_null: bool,
) -> Result<VecCol> {
    let mut out = VecCol::new(EvalType::Int, n);
    for i in 0..n {
        let r = match a.get(i) {
            None if keep_null => None,
            None => Some(0),
            Some(v) => Some(i64::from(truthy(v) == want_true)),
        };
        IntT::push(&mut out, r);
    }
    Ok(out)
}
