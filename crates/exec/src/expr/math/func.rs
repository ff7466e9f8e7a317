//! `ABS`, `SIGN`, `SQRT`, `EXP`, `LN`/`LOG`/`LOG2`/`LOG10`, `POW`, the trigonometric
//! functions, `DEGREES`, `RADIANS` and `PI`, with MySQL's results outside their domains:
//! a logarithm of a non-positive number or `ASIN`/`ACOS` beyond ±1 is NULL (the logarithms
//! warn, MySQL 8's `ER_INVALID_ARGUMENT_FOR_LOGARITHM`), `SQRT` of a negative number is NULL,
//! and a result that is not finite (`EXP(1000)`, `POW(0, -1)`, `COT(0)`, `DEGREES(1e308)`)
//! is the out-of-range error, as MySQL's `check_float_overflow`.

use crate::column::{ColData, DecT, IntT, RealT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::kernel::{finite, map1, map1_infallible, map2};
use crate::expr::registry::{Args, Call, Kernel, Registry};
use crate::types::EvalType;

/// MySQL 8's `ER_INVALID_ARGUMENT_FOR_LOGARITHM`.
pub const ER_INVALID_ARGUMENT_FOR_LOGARITHM: i32 = 3020;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Decimal as D, Int as I, Real as R};
    r.add(2101, Args::same(I, 1), I, abs_int);
    r.add(2102, Args::same(I, 1), I, identity_int); // AbsUInt
    r.add(2103, Args::same(R, 1), R, abs_real);
    r.add(2104, Args::same(D, 1), D, abs_decimal);
    let real1: [(i32, Kernel); 14] = [
        (2131, ln),
        (2133, log2),
        (2134, log10),
        (2141, sqrt),
        (2142, acos),
        (2143, asin),
        (2144, atan),
        (2146, cos),
        (2147, cot),
        (2148, degrees),
        (2149, exp),
        (2151, radians),
        (2152, sin),
        (2153, tan),
    ];
    for (s, k) in real1 {
        r.add(s, Args::same(R, 1), R, k);
    }
    r.add(2132, Args::same(R, 2), R, log_base);
    r.add(2137, Args::same(R, 2), R, pow);
    r.add(2145, Args::same(R, 2), R, atan2);
    r.add(2140, Args::same(R, 1), I, sign);
    r.add(2150, Args::fixed(&[]), R, pi);
}

fn abs_int(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<IntT, IntT>(c.n, c.typed(0)?, ctx, |v, _| {
        v.checked_abs().map(Some).ok_or(Error::Overflow("BIGINT"))
    })
}

fn identity_int(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<IntT, IntT>(c.n, c.typed(0)?, Some)
}

fn abs_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<RealT, RealT>(c.n, c.typed(0)?, |v| Some(v.abs()))
}

fn abs_decimal(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<DecT, DecT>(c.n, c.typed(0)?, |v| {
        Some(if v.is_negative() { -*v } else { *v })
    })
}

/// A real function that is NULL outside its domain and an error when not finite.
fn real_fn(
    c: &Call<'_, '_>,
    ctx: &mut EvalContext,
    f: impl Fn(f64) -> Option<f64>,
) -> Result<VecCol> {
    map1::<RealT, RealT>(c.n, c.typed(0)?, ctx, |v, _| f(v).map(finite).transpose())
}

/// A logarithm: NULL with MySQL's warning outside the domain.
fn log_fn(c: &Call<'_, '_>, ctx: &mut EvalContext, f: impl Fn(f64) -> f64) -> Result<VecCol> {
    map1::<RealT, RealT>(c.n, c.typed(0)?, ctx, |v, ctx| {
        if v <= 0.0 {
            ctx.warn(&invalid_log());
            return Ok(None);
        }
        finite(f(v)).map(Some)
    })
}

fn invalid_log() -> Error {
    Error::eval(ER_INVALID_ARGUMENT_FOR_LOGARITHM, "Invalid argument for logarithm")
}

fn ln(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    log_fn(c, ctx, f64::ln)
}

fn log2(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    log_fn(c, ctx, f64::log2)
}

fn log10(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    log_fn(c, ctx, f64::log10)
}

/// `LOG(B, X)`: NULL (with the warning) when either is not positive; NULL for base 1.
fn log_base(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map2::<RealT, RealT, RealT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |b, x, ctx| {
        if b <= 0.0 || x <= 0.0 {
            ctx.warn(&invalid_log());
            return Ok(None);
        }
        let lb = b.ln();
        if lb == 0.0 {
            // MySQL divides by log(1) = 0: NULL with the division-by-zero warning.
            ctx.division_by_zero()?;
            return Ok(None);
        }
        finite(x.ln() / lb).map(Some)
    })
}

fn pow(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map2::<RealT, RealT, RealT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |x, y, _| {
        finite(x.powf(y)).map(Some)
    })
}

fn atan2(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map2::<RealT, RealT, RealT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |y, x, _| {
        finite(y.atan2(x)).map(Some)
    })
}

fn sqrt(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_fn(c, ctx, |v| (v >= 0.0).then(|| v.sqrt()))
}

fn acos(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_fn(c, ctx, |v| (-1.0..=1.0).contains(&v).then(|| v.acos()))
}

fn asin(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_fn(c, ctx, |v| (-1.0..=1.0).contains(&v).then(|| v.asin()))
}

fn atan(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_fn(c, ctx, |v| Some(v.atan()))
}

fn cos(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_fn(c, ctx, |v| Some(v.cos()))
}

fn sin(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_fn(c, ctx, |v| Some(v.sin()))
}

fn tan(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_fn(c, ctx, |v| Some(v.tan()))
}

/// `COT(X)` is `1 / TAN(X)`: `COT(0)` is infinite, the out-of-range error.
fn cot(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_fn(c, ctx, |v| Some(1.0 / v.tan()))
}

fn degrees(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_fn(c, ctx, |v| Some(v * (180.0 / std::f64::consts::PI)))
}

fn radians(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_fn(c, ctx, |v| Some(v * (std::f64::consts::PI / 180.0)))
}

fn exp(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_fn(c, ctx, |v| Some(v.exp()))
}

fn sign(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<RealT, IntT>(c.n, c.typed(0)?, |v| {
        Some(if v > 0.0 {
            1
        } else if v < 0.0 {
            -1
        } else {
            0
        })
    })
}

fn pi(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    Ok(VecCol {
        data: ColData::Real(vec![std::f64::consts::PI; c.n]),
        valid: crate::column::Bitmap::all_valid(c.n),
    })
}
