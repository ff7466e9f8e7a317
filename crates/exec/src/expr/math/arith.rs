//! Arithmetic: `+`, `-`, `*`, `/`, `DIV`, `%` over ints (signed and unsigned), reals and
//! decimals, and unary minus.

use rcop_datum::Decimal;

use crate::column::{Arg, ColData, DecT, IntT, RealT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::decimal_fast::{self, ArithOp};
use crate::expr::kernel::{dec_res, int_from_dec, map1, map1_infallible, map2, valid2, zip_all};
use crate::expr::registry::{Args, Call, Kernel, Registry};
use crate::expr::value::Value;
use crate::fixed;
use crate::types::{EvalType, FieldType};

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Decimal as D, Int as I, Real as R};
    let real: [(i32, Kernel); 5] = [
        (200, plus_real),
        (204, minus_real),
        (208, multiply_real),
        (211, divide_real),
        (215, mod_real),
    ];
    for (s, k) in real {
        r.add(s, Args::same(R, 2), R, k);
    }
    let dec: [(i32, Kernel); 5] = [
        (201, plus_decimal),
        (205, minus_decimal),
        (209, multiply_decimal),
        (212, divide_decimal),
        (216, mod_decimal),
    ];
    for (s, k) in dec {
        let def = r.add(s, Args::same(D, 2), D, k);
        if matches!(s, 201 | 205 | 209) {
            def.taking_fixed();
        }
    }
    // Plus/Minus/Multiply/IntDivide/Mod over ints, in their signed/unsigned variants.
    for s in [203, 207, 210, 213].into_iter().chain(217..=237) {
        r.add(s, Args::same(I, 2), I, int_arith_kernel);
    }
    r.add(214, Args::same(D, 2), I, int_divide_decimal);
    // UnaryMinus.
    r.add(3108, Args::same(I, 1), I, unary_minus_int);
    r.add(3109, Args::same(R, 1), R, unary_minus_real);
    r.add(3110, Args::same(D, 1), D, unary_minus_decimal);
}

fn plus_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    real_arith(c.n, c.typed(0)?, c.typed(1)?, |p, q| p + q)
}

fn minus_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    real_arith(c.n, c.typed(0)?, c.typed(1)?, |p, q| p - q)
}

fn multiply_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    real_arith(c.n, c.typed(0)?, c.typed(1)?, |p, q| p * q)
}

fn divide_real(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map2::<RealT, RealT, RealT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |p, q, ctx| {
        if q == 0.0 {
            ctx.division_by_zero()?;
            return Ok(None);
        }
        let r = p / q;
        if r.is_infinite() {
            // TiKV's RealDivide: an overflow under the flags (a warning in a SELECT), NULL.
            ctx.overflow(Error::Overflow("DOUBLE"))?;
            return Ok(None);
        }
        Ok(Some(r))
    })
}

fn mod_real(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    // TiKV's RealMod: MOD by zero is NULL without a warning.
    map2::<RealT, RealT, RealT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |p, q, _| {
        if q == 0.0 {
            return Ok(None);
        }
        Ok(Some(p % q))
    })
}

/// A decimal `+`, `-` or `*`: the exact fixed-point path when it applies, else `Decimal`s.
fn dec_arith(
    c: &Call<'_, '_>,
    op: ArithOp,
    fast: fn(&Decimal, &Decimal) -> Option<Decimal>,
    f: fn(&Decimal, &Decimal) -> rcop_datum::Res<Decimal>,
) -> Result<VecCol> {
    if let Some(col) = decimal_fast::arith(op, c.args, c.n) {
        return Ok(col);
    }
    let (x, y) = (c.arg(0)?.materialize(), c.arg(1)?.materialize());
    dec_binary(c.n, x.arg()?, y.arg()?, fast, f)
}

fn plus_decimal(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    dec_arith(c, ArithOp::Add, fixed::add, |p, q| p.add(q))
}

fn minus_decimal(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    dec_arith(c, ArithOp::Sub, fixed::sub, |p, q| p.sub(q))
}

fn multiply_decimal(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    dec_arith(c, ArithOp::Mul, fixed::mul, |p, q| p.mul(q))
}

fn divide_decimal(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let incr = ctx.cfg.div_precision_increment;
    map2::<DecT, DecT, DecT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |p, q, ctx| match p.div(q, incr) {
        None => {
            ctx.division_by_zero()?;
            Ok(None)
        }
        Some(r) => dec_overflow(r, ctx).map(Some),
    })
}

/// A decimal quotient or remainder: an overflow is handled by the flags (TiKV's
/// `into_result_with_overflow_err`: a warning in a SELECT, the clamped value kept).
fn dec_overflow(r: rcop_datum::Res<Decimal>, ctx: &mut EvalContext) -> Result<Decimal> {
    if r.is_overflow() {
        ctx.overflow(Error::Overflow("DECIMAL"))?;
    }
    Ok(r.value())
}

fn mod_decimal(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map2::<DecT, DecT, DecT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |p, q, ctx| match p.rem(q) {
        None => {
            ctx.division_by_zero()?;
            Ok(None)
        }
        Some(r) => dec_overflow(r, ctx).map(Some),
    })
}

fn int_divide_decimal(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    // TiKV divides as MySQL's do_div_mod (digits truncated, never rounded, whatever
    // div_precision_increment is) and takes the integer part: the exact truncated quotient,
    // computed here as (p − p MOD q) / q, an exact division. Past BIGINT an error.
    let unsigned = c.ft.is_unsigned();
    map2::<DecT, DecT, IntT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |p, q, ctx| {
        let Some(rem) = p.rem(q) else {
            ctx.division_by_zero()?;
            return Ok(None);
        };
        let whole = dec_res(p.sub(&dec_res(rem)?))?;
        let d = match whole.div(q, 0) {
            None => return Ok(None),
            Some(rcop_datum::Res::Overflow(d)) => {
                ctx.overflow(Error::Overflow("DECIMAL"))?;
                d
            }
            Some(r) => r.value(),
        };
        let t = dec_res(d.round(0, rcop_datum::decimal::RoundMode::Truncate))?;
        if unsigned && t.is_zero() {
            return Ok(Some(0));
        }
        int_from_dec(&t, unsigned).map(Some)
    })
}

fn int_arith_kernel(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    int_arith(c.func.sig, c.ft, &c.arg_ft(0), &c.arg_ft(1), c.arg(0)?, c.arg(1)?, c.n, ctx)
}

fn unary_minus_int(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let unsigned = c.arg_ft(0).is_unsigned();
    map1::<IntT, IntT>(c.n, c.typed(0)?, ctx, |v, _| {
        if unsigned {
            let u = v as u64;
            if u > 1 << 63 {
                return Err(Error::Overflow("BIGINT"));
            }
            Ok(Some((u as i64).wrapping_neg()))
        } else {
            v.checked_neg().map(Some).ok_or(Error::Overflow("BIGINT"))
        }
    })
}

fn unary_minus_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<RealT, RealT>(c.n, c.typed(0)?, |v| Some(-v))
}

fn unary_minus_decimal(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<DecT, DecT>(c.n, c.typed(0)?, |v| Some(-*v))
}

fn real_arith<'a>(
    n: usize,
    a: Arg<'a, RealT>,
    b: Arg<'a, RealT>,
    f: impl Fn(f64, f64) -> f64,
) -> Result<VecCol> {
    let data = zip_all(n, a, b, f);
    let valid = valid2(n, &a, &b);
    for (i, v) in data.iter().enumerate() {
        if !v.is_finite() && valid.get(i) {
            return Err(Error::Overflow("DOUBLE"));
        }
    }
    Ok(VecCol { data: ColData::Real(data), valid })
}

/// A decimal kernel: the exact fixed-point path `fast` when it applies, else `f`.
fn dec_binary<'a>(
    n: usize,
    a: Arg<'a, DecT>,
    b: Arg<'a, DecT>,
    fast: fn(&Decimal, &Decimal) -> Option<Decimal>,
    f: impl Fn(&Decimal, &Decimal) -> rcop_datum::Res<Decimal>,
) -> Result<VecCol> {
    let valid = valid2(n, &a, &b);
    let mut data = Vec::with_capacity(n);
    let mut overflow = false;
    let push = |x: &Decimal, y: &Decimal, data: &mut Vec<Decimal>, overflow: &mut bool| {
        if let Some(v) = fast(x, y) {
            data.push(v);
            return;
        }
        match f(x, y) {
            rcop_datum::Res::Overflow(_) => {
                *overflow = true;
                data.push(Decimal::zero());
            }
            r => data.push(r.value()),
        }
    };
    match (a, b) {
        (Arg::Col { s: sa, .. }, Arg::Col { s: sb, .. }) => {
            for (x, y) in sa.iter().zip(sb.iter()).take(n) {
                push(x, y, &mut data, &mut overflow);
            }
        }
        (Arg::Col { s: sa, .. }, Arg::Const(Some(y))) => {
            for x in sa.iter().take(n) {
                push(x, y, &mut data, &mut overflow);
            }
        }
        (Arg::Const(Some(x)), Arg::Col { s: sb, .. }) => {
            for y in sb.iter().take(n) {
                push(x, y, &mut data, &mut overflow);
            }
        }
        (Arg::Const(Some(x)), Arg::Const(Some(y))) => {
            for _ in 0..n {
                push(x, y, &mut data, &mut overflow);
            }
        }
        _ => data.resize(n, Decimal::zero()),
    }
    if overflow {
        // Only an overflow on a non-NULL row is an error.
        for i in 0..n {
            if valid.get(i)
                && let (Some(x), Some(y)) = (a.get(i), b.get(i))
            {
                dec_res(f(x, y))?;
            }
        }
    }
    Ok(VecCol { data: ColData::Decimal(data), valid })
}

#[expect(clippy::too_many_arguments, reason = "one call site; the operands and their types")]
fn int_arith(
    s: i32,
    ft: &FieldType,
    lft: &FieldType,
    rft: &FieldType,
    x: &Value<'_>,
    y: &Value<'_>,
    n: usize,
    ctx: &mut EvalContext,
) -> Result<VecCol> {
    let (lu, ru) = (lft.is_unsigned(), rft.is_unsigned());
    let wide = |v: i64, u: bool| if u { i128::from(v as u64) } else { i128::from(v) };
    let out_unsigned = match s {
        // MOD takes the sign of the dividend.
        217 | 223..=226 => lu,
        _ => ft.is_unsigned() || lu || ru,
    };
    let narrow = move |r: i128| -> Result<i64> {
        if out_unsigned {
            u64::try_from(r).map(|v| v as i64).map_err(|_| Error::Overflow("BIGINT UNSIGNED"))
        } else {
            i64::try_from(r).map_err(|_| Error::Overflow("BIGINT"))
        }
    };
    map2::<IntT, IntT, IntT>(n, x.arg()?, y.arg()?, ctx, |a, b, _| {
        let (a, b) = (wide(a, lu), wide(b, ru));
        let r = match s {
            203 | 219..=222 => a + b,
            207 | 227..=233 => a - b,
            210 | 218 => a.checked_mul(b).ok_or(Error::Overflow("BIGINT"))?,
            // TiKV's IntDivide*/Mod*: by zero is NULL without a warning.
            213 | 234..=237 => {
                if b == 0 {
                    return Ok(None);
                }
                a / b
            }
            _ => {
                if b == 0 {
                    return Ok(None);
                }
                a % b
            }
        };
        narrow(r).map(Some)
    })
}
