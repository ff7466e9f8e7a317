//! `CEIL`, `FLOOR`, `ROUND` and `TRUNCATE` over ints (signed and unsigned), reals and
//! decimals, in every variant TiDB sends.
//!
//! Reals follow MySQL's `my_double_round`: the value is scaled by an exact power of ten
//! (`1e0` … `1e308`), rounded with `rint` (ties to even, so `ROUND(2.5e0)` is 2) or
//! truncated, and scaled back; a scale that overflows gives the value itself (positive
//! digits) or 0 (negative digits). Ints round half away from zero on the exact value
//! (`my_unsigned_round`), a carry past the type's range is the out-of-range error. Decimals
//! round half away from zero.

use std::sync::OnceLock;

use rcop_datum::Decimal;
use rcop_datum::decimal::RoundMode;

use crate::column::{DecT, IntT, RealT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::kernel::{dec_res, int_from_dec, map1, map1_infallible, map2};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Decimal as D, Int as I, Real as R};
    // CEIL (2105..=2109) and FLOOR (2110..=2114): IntToDec, IntToInt, DecToInt, DecToDec, Real.
    for (base, ceil) in [(2105, true), (2110, false)] {
        r.add(base, Args::same(I, 1), D, if ceil { ceil_int_to_dec } else { floor_int_to_dec });
        r.add(base + 1, Args::same(I, 1), I, int_identity);
        r.add(base + 2, Args::same(D, 1), I, if ceil { ceil_dec_to_int } else { floor_dec_to_int });
        r.add(base + 3, Args::same(D, 1), D, if ceil { ceil_dec_to_dec } else { floor_dec_to_dec });
        r.add(base + 4, Args::same(R, 1), R, if ceil { ceil_real } else { floor_real });
    }
    r.add(2121, Args::same(R, 1), R, round_real);
    r.add(2122, Args::same(I, 1), I, int_identity);
    r.add(2123, Args::same(D, 1), D, round_dec);
    r.add(2124, Args::fixed(&[R, I]), R, round_frac_real);
    r.add(2125, Args::same(I, 2), I, round_frac_int);
    r.add(2126, Args::fixed(&[D, I]), D, round_frac_dec);
    r.add(2154, Args::same(I, 2), I, truncate_int); // TruncateInt
    r.add(2155, Args::fixed(&[R, I]), R, truncate_real);
    r.add(2156, Args::fixed(&[D, I]), D, truncate_dec);
    r.add(2157, Args::same(I, 2), I, truncate_int); // TruncateUint
}

fn int_identity(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<IntT, IntT>(c.n, c.typed(0)?, Some)
}

fn int_to_dec(c: &Call<'_, '_>) -> Result<VecCol> {
    let unsigned = c.arg_ft(0).is_unsigned();
    map1_infallible::<IntT, DecT>(c.n, c.typed(0)?, |v| {
        Some(if unsigned { Decimal::from_u64(v as u64) } else { Decimal::from_i64(v) })
    })
}

fn ceil_int_to_dec(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    int_to_dec(c)
}

fn floor_int_to_dec(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    int_to_dec(c)
}

fn dec_to_int(
    c: &Call<'_, '_>,
    ctx: &mut EvalContext,
    f: fn(&Decimal) -> rcop_datum::Res<Decimal>,
) -> Result<VecCol> {
    let unsigned = c.ft.is_unsigned();
    map1::<DecT, IntT>(c.n, c.typed(0)?, ctx, |v, _| {
        int_from_dec(&dec_res(f(v))?, unsigned).map(Some)
    })
}

fn ceil_dec_to_int(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    dec_to_int(c, ctx, Decimal::ceil)
}

fn floor_dec_to_int(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    dec_to_int(c, ctx, Decimal::floor)
}

fn ceil_dec_to_dec(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<DecT, DecT>(c.n, c.typed(0)?, ctx, |v, _| dec_res(v.ceil()).map(Some))
}

fn floor_dec_to_dec(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<DecT, DecT>(c.n, c.typed(0)?, ctx, |v, _| dec_res(v.floor()).map(Some))
}

fn ceil_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<RealT, RealT>(c.n, c.typed(0)?, |v| Some(v.ceil()))
}

fn floor_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<RealT, RealT>(c.n, c.typed(0)?, |v| Some(v.floor()))
}

fn round_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<RealT, RealT>(c.n, c.typed(0)?, |v| Some(double_round(v, 0, false)))
}

fn round_dec(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<DecT, DecT>(c.n, c.typed(0)?, ctx, |v, _| {
        dec_res(v.round(0, RoundMode::HalfUp)).map(Some)
    })
}

/// The digits argument as MySQL reads it: an unsigned one is never negative.
fn digits(d: i64, unsigned: bool) -> i64 {
    if unsigned && d < 0 { i64::MAX } else { d }
}

fn round_frac_real(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_frac(c, ctx, false)
}

fn truncate_real(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    real_frac(c, ctx, true)
}

fn real_frac(c: &Call<'_, '_>, ctx: &mut EvalContext, truncate: bool) -> Result<VecCol> {
    let du = c.arg_ft(1).is_unsigned();
    map2::<RealT, IntT, RealT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |v, d, _| {
        Ok(Some(double_round(v, digits(d, du), truncate)))
    })
}

fn round_frac_int(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    int_frac(c, ctx, false)
}

fn truncate_int(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    int_frac(c, ctx, true)
}

fn int_frac(c: &Call<'_, '_>, ctx: &mut EvalContext, truncate: bool) -> Result<VecCol> {
    // TruncateUint is TRUNCATE over an unsigned value; the others read the argument's flag.
    let unsigned = c.arg_ft(0).is_unsigned() || c.func.sig == 2157;
    let du = c.arg_ft(1).is_unsigned();
    map2::<IntT, IntT, IntT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |v, d, _| {
        int_round(v, digits(d, du), unsigned, truncate).map(Some)
    })
}

/// MySQL's `Item_func_round::int_op`: exact integer rounding to `-dec` digits.
pub fn int_round(v: i64, dec: i64, unsigned: bool, truncate: bool) -> Result<i64> {
    if dec >= 0 {
        return Ok(v);
    }
    let abs_dec = dec.unsigned_abs();
    // 10^19 is the largest power of ten in a u64 (MySQL's `log_10_int` has 1 … 10^19).
    let Some(to) = u32::try_from(abs_dec).ok().and_then(|e| 10u64.checked_pow(e)) else {
        return Ok(0);
    };
    if unsigned {
        let u = v as u64;
        if truncate {
            return Ok((u / to * to) as i64);
        }
        return unsigned_round(u, to).map(|r| r as i64).ok_or(Error::Overflow("BIGINT UNSIGNED"));
    }
    if truncate {
        // `v / to` with `to` past i64 is 0.
        return Ok(i64::try_from(to).map_or(0, |t| v / t * t));
    }
    let r = if v >= 0 {
        unsigned_round(v as u64, to).and_then(|r| i64::try_from(r).ok())
    } else {
        unsigned_round(v.unsigned_abs(), to).and_then(|r| 0i64.checked_sub_unsigned(r))
    };
    r.ok_or(Error::Overflow("BIGINT"))
}

/// `my_unsigned_round`: `value` to a multiple of `to`, half up; `None` on overflow.
fn unsigned_round(value: u64, to: u64) -> Option<u64> {
    let tmp = value / to * to;
    if value - tmp < (to >> 1) { Some(tmp) } else { tmp.checked_add(to) }
}

/// Clamps a digits argument to what a decimal can hold (more fraction digits than 30 or
/// integer digits than 81 change nothing).
fn dec_digits(d: i64) -> i8 {
    d.clamp(-90, 30) as i8
}

fn round_frac_dec(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    dec_frac(c, ctx, RoundMode::HalfUp)
}

fn truncate_dec(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    dec_frac(c, ctx, RoundMode::Truncate)
}

fn dec_frac(c: &Call<'_, '_>, ctx: &mut EvalContext, mode: RoundMode) -> Result<VecCol> {
    let du = c.arg_ft(1).is_unsigned();
    map2::<DecT, IntT, DecT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |v, d, _| {
        // More fraction digits than the value has pad with zeros: ROUND(1.5, 3) is 1.500.
        dec_res(v.round(dec_digits(digits(d, du)), mode)).map(Some)
    })
}

/// `1e0` … `1e308`, each the double nearest the power of ten (as MySQL's `log_10` table).
fn pow10_table() -> &'static [f64; 309] {
    static T: OnceLock<[f64; 309]> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = [1.0; 309];
        for (i, v) in t.iter_mut().enumerate() {
            *v = format!("1e{i}").parse().unwrap_or(f64::INFINITY);
        }
        t
    })
}

/// MySQL's `my_double_round`.
pub fn double_round(value: f64, dec: i64, truncate: bool) -> f64 {
    let neg = dec < 0;
    let abs = dec.unsigned_abs();
    let tmp = match usize::try_from(abs).ok().and_then(|i| pow10_table().get(i)) {
        Some(t) => *t,
        None => f64::INFINITY,
    };
    let div = value / tmp;
    let mul = value * tmp;
    if !neg && tmp.is_infinite() {
        return value;
    }
    if neg && tmp.is_infinite() {
        return 0.0;
    }
    if !neg && mul.is_infinite() {
        return value;
    }
    if truncate {
        if value >= 0.0 {
            if neg { div.floor() * tmp } else { mul.floor() / tmp }
        } else if neg {
            div.ceil() * tmp
        } else {
            mul.ceil() / tmp
        }
    } else if neg {
        div.round_ties_even() * tmp
    } else {
        mul.round_ties_even() / tmp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_round_as_mysql() {
        assert_eq!(double_round(2.5, 0, false), 2.0);
        assert_eq!(double_round(-3.5, 0, false), -4.0);
        assert_eq!(double_round(1.298, 1, false), 1.3);
        assert_eq!(double_round(1234.5, -2, false), 1200.0);
        assert_eq!(double_round(1.999, 2, true), 1.99);
        assert_eq!(double_round(-1.999, 2, true), -1.99);
        assert_eq!(double_round(1e300, 400, false), 1e300);
        assert_eq!(double_round(1e300, -400, false), 0.0);
    }

    #[test]
    fn int_round_as_mysql() {
        assert_eq!(int_round(15, -1, false, false).unwrap(), 20);
        assert_eq!(int_round(-15, -1, false, false).unwrap(), -20);
        assert_eq!(int_round(14, -1, false, true).unwrap(), 10);
        assert_eq!(int_round(i64::MAX, -1, false, false), Err(Error::Overflow("BIGINT")));
        assert_eq!(int_round(-1, -1, true, false), Err(Error::Overflow("BIGINT UNSIGNED")));
        assert_eq!(int_round(5, -30, false, false).unwrap(), 0);
        assert_eq!(int_round(i64::MIN, -19, false, true).unwrap(), 0);
    }
}
