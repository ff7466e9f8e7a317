//! CAST among int, real, decimal, string, time and duration, as TiKV's `impl_cast.rs`:
//! numbers in [`num`], strings in [`to_string`], times and durations in [`to_time`].

mod num;
mod to_string;
mod to_time;

pub use to_string::real_to_string;

/// A string read as a double the way TiKV's `as_mysql_bool` and string-to-real cast read it
/// (longest numeric prefix, a truncation for the rest).
pub(crate) fn bytes_as_real(s: &[u8], ctx: &mut EvalContext) -> Result<f64> {
    num::str_to_real(s, ctx)
}

use rcop_datum::decimal::RoundMode;
use rcop_datum::{Decimal, Duration, Res, Time};

use crate::column::{BytesT, DecT, DurT, IntT, RealT, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::build::NodeKind;
use crate::expr::kernel::{dec_res, map1};
use crate::expr::registry::{Args, Call, Registry};
use crate::expr::sig::type_at;
use crate::expr::value::Value;
use crate::types::{EvalType, FieldType};
use rcop_datum::chunk::mysql_type as mt;

pub(super) fn register(r: &mut Registry) {
    for s in 1..=56 {
        if let Some((from, to)) = cast_types(s) {
            r.add(s, Args::same(from, 1), to, cast_kernel);
        }
    }
}

/// The source and target types of a CAST signature (1–55).
pub fn cast_types(sig: i32) -> Option<(EvalType, EvalType)> {
    if !(1..=56).contains(&sig) {
        return None;
    }
    let (from, to) = if sig < 10 { (0, sig - 1) } else { (sig / 10, sig % 10) };
    // Target order inside a decade: Int, Real, String, Decimal, Time, Duration, Json.
    let to = match to {
        0 => EvalType::Int,
        1 => EvalType::Real,
        2 => EvalType::Bytes,
        3 => EvalType::Decimal,
        4 => EvalType::DateTime,
        5 => EvalType::Duration,
        _ => return None,
    };
    Some((type_at(from)?, to))
}

fn cast_kernel(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let Some((from, to)) = cast_types(c.func.sig) else {
        return Err(Error::invalid("not a cast"));
    };
    let from_ft = c.arg_ft(0);
    // A constant binary string (`x'010203'`, `b'1'`) is a number to TiKV.
    let literal = matches!(c.func.children.first().map(|n| &n.kind), Some(NodeKind::Const(_)))
        && matches!(from_ft.collate, 63 | -63)
        && matches!(from_ft.tp, mt::VAR_STRING | mt::STRING | mt::VARCHAR);
    if literal && from == EvalType::Bytes && matches!(to, EvalType::Int | EvalType::Real) {
        let unsigned = c.ft.is_unsigned();
        let ints = map1::<BytesT, IntT>(c.n, c.typed(0)?, ctx, |x, ctx| {
            num::binary_to_uint(x, ctx).map(Some)
        })?;
        if to == EvalType::Int {
            return Ok(ints);
        }
        let v = Value::Owned(ints);
        let real_ft = if unsigned {
            FieldType { flag: crate::types::FLAG_UNSIGNED, ..FieldType::long_long() }
        } else {
            FieldType::long_long()
        };
        return cast(EvalType::Int, EvalType::Real, &real_ft, c.ft, &v, c.n, ctx);
    }
    cast(from, to, &from_ft, c.ft, c.arg(0)?, c.n, ctx)
}

/// Casts `v` (of `from`, typed `from_ft`) to `to` typed `to_ft`.
pub fn cast(
    from: EvalType,
    to: EvalType,
    from_ft: &FieldType,
    to_ft: &FieldType,
    v: &Value<'_>,
    n: usize,
    ctx: &mut EvalContext,
) -> Result<VecCol> {
    use EvalType as T;
    let fu = from_ft.is_unsigned();
    let tu = to_ft.is_unsigned();
    match (from, to) {
        (T::Int, T::Int) => map1::<IntT, IntT>(n, v.arg()?, ctx, |x, _| Ok(Some(x))),
        (T::Int, T::Real) => map1::<IntT, RealT>(n, v.arg()?, ctx, |x, ctx| {
            let r = if fu { x as u64 as f64 } else { x as f64 };
            num::fit_real(r, to_ft, ctx).map(Some)
        }),
        (T::Int, T::Decimal) => map1::<IntT, DecT>(n, v.arg()?, ctx, |x, ctx| {
            let d = if fu { Decimal::from_u64(x as u64) } else { Decimal::from_i64(x) };
            fit_decimal(d, to_ft, ctx).map(Some)
        }),
        (T::Int, T::Bytes) => map1::<IntT, BytesT>(n, v.arg()?, ctx, |x, ctx| {
            let s = if from_ft.tp == mt::YEAR {
                to_string::year_to_string(x)
            } else if fu {
                (x as u64).to_string()
            } else {
                x.to_string()
            };
            to_string::fit_string(s.into_bytes(), to_ft, ctx).map(Some)
        }),
        (T::Real, T::Int) => {
            map1::<RealT, IntT>(n, v.arg()?, ctx, |x, ctx| num::real_to_int(x, tu, ctx).map(Some))
        }
        (T::Real, T::Real) => map1::<RealT, RealT>(n, v.arg()?, ctx, |x, _| {
            Ok(Some(if to_ft.tp == mt::FLOAT { f64::from(x as f32) } else { x }))
        }),
        (T::Real, T::Decimal) => map1::<RealT, DecT>(n, v.arg()?, ctx, |x, ctx| {
            let d = dec_res(Decimal::from_f64(x)?)?;
            fit_decimal(d, to_ft, ctx).map(Some)
        }),
        (T::Real, T::Bytes) => map1::<RealT, BytesT>(n, v.arg()?, ctx, |x, ctx| {
            let s = if from_ft.tp == mt::FLOAT {
                to_string::float_to_string(x)
            } else {
                real_to_string(x)
            };
            to_string::fit_string(s.into_bytes(), to_ft, ctx).map(Some)
        }),
        (T::Decimal, T::Int) => map1::<DecT, IntT>(n, v.arg()?, ctx, |x, ctx| {
            let r = dec_res(x.round(0, RoundMode::HalfUp))?;
            num::dec_to_int(&r, tu, ctx).map(Some)
        }),
        (T::Decimal, T::Real) => map1::<DecT, RealT>(n, v.arg()?, ctx, |x, _| Ok(Some(x.as_f64()))),
        (T::Decimal, T::Decimal) => {
            map1::<DecT, DecT>(n, v.arg()?, ctx, |x, ctx| fit_decimal(*x, to_ft, ctx).map(Some))
        }
        (T::Decimal, T::Bytes) => map1::<DecT, BytesT>(n, v.arg()?, ctx, |x, ctx| {
            let mut s = Vec::new();
            x.write_str(&mut s);
            to_string::fit_string(s, to_ft, ctx).map(Some)
        }),
        (T::Bytes, T::Int) => {
            map1::<BytesT, IntT>(n, v.arg()?, ctx, |x, ctx| num::str_to_int(x, tu, ctx).map(Some))
        }
        (T::Bytes, T::Real) => map1::<BytesT, RealT>(n, v.arg()?, ctx, |x, ctx| {
            let r = num::str_to_real(x, ctx)?;
            num::fit_real(r, to_ft, ctx).map(Some)
        }),
        (T::Bytes, T::Decimal) => map1::<BytesT, DecT>(n, v.arg()?, ctx, |x, ctx| {
            let d = match Decimal::parse_bytes(trim_space(x)) {
                Ok(Res::Ok(d)) => d,
                Ok(Res::Truncated(d)) => {
                    ctx.truncated(truncated("DECIMAL", x))?;
                    d
                }
                Ok(Res::Overflow(d)) => {
                    ctx.overflow(Error::Overflow("DECIMAL"))?;
                    d
                }
                Err(_) => {
                    ctx.truncated(truncated("DECIMAL", x))?;
                    Decimal::zero()
                }
            };
            fit_decimal(d, to_ft, ctx).map(Some)
        }),
        (T::Bytes, T::Bytes) => map1::<BytesT, BytesT>(n, v.arg()?, ctx, |x, ctx| {
            to_string::fit_string(x.to_vec(), to_ft, ctx).map(Some)
        }),
        (T::Bytes, T::DateTime) => map1::<BytesT, TimeT>(n, v.arg()?, ctx, |x, ctx| {
            to_time::parse_time(&String::from_utf8_lossy(x), to_ft, ctx)
        }),
        (T::Bytes, T::Duration) => map1::<BytesT, DurT>(n, v.arg()?, ctx, |x, ctx| {
            to_time::parse_duration(String::from_utf8_lossy(x).trim(), to_ft.fsp(), ctx)
        }),
        (T::DateTime, T::Int) => map1::<TimeT, IntT>(n, v.arg()?, ctx, |t, _| {
            let r = t.round_frac(0)?;
            Ok(Some(to_time::time_number(&r) as i64))
        }),
        (T::DateTime, T::Real) => map1::<TimeT, RealT>(n, v.arg()?, ctx, |t, _| {
            Ok(Some(to_time::time_decimal(&t)?.as_f64()))
        }),
        (T::DateTime, T::Decimal) => map1::<TimeT, DecT>(n, v.arg()?, ctx, |t, ctx| {
            fit_decimal(to_time::time_decimal(&t)?, to_ft, ctx).map(Some)
        }),
        (T::DateTime, T::Bytes) => map1::<TimeT, BytesT>(n, v.arg()?, ctx, |t, ctx| {
            let mut s = Vec::new();
            t.write_str(&mut s);
            to_string::fit_string(s, to_ft, ctx).map(Some)
        }),
        (T::DateTime, T::DateTime) => map1::<TimeT, TimeT>(n, v.arg()?, ctx, |t, _| {
            Ok(Some(t.with_type(to_ft.time_type(), to_ft.fsp())?))
        }),
        (T::Duration, T::Int) => map1::<DurT, IntT>(n, v.arg()?, ctx, |d, _| {
            let r = d.round_frac(0)?;
            Ok(Some(to_time::duration_number(&r)))
        }),
        (T::Duration, T::Real) => map1::<DurT, RealT>(n, v.arg()?, ctx, |d, _| {
            Ok(Some(to_time::duration_decimal(&d)?.as_f64()))
        }),
        (T::Duration, T::Decimal) => map1::<DurT, DecT>(n, v.arg()?, ctx, |d, ctx| {
            fit_decimal(to_time::duration_decimal(&d)?, to_ft, ctx).map(Some)
        }),
        (T::Duration, T::Bytes) => map1::<DurT, BytesT>(n, v.arg()?, ctx, |d, ctx| {
            let mut s = Vec::new();
            d.write_str(&mut s);
            to_string::fit_string(s, to_ft, ctx).map(Some)
        }),
        (T::Duration, T::Duration) => {
            map1::<DurT, DurT>(n, v.arg()?, ctx, |d, _| Ok(Some(d.round_frac(to_ft.fsp())?)))
        }
        (T::Int, T::DateTime) => map1::<IntT, TimeT>(n, v.arg()?, ctx, |x, ctx| {
            let s = if fu { (x as u64).to_string() } else { x.to_string() };
            to_time::parse_time(&s, to_ft, ctx)
        }),
        (T::Real, T::DateTime) => map1::<RealT, TimeT>(n, v.arg()?, ctx, |x, ctx| {
            to_time::parse_time(&format!("{x}"), to_ft, ctx)
        }),
        (T::Decimal, T::DateTime) => map1::<DecT, TimeT>(n, v.arg()?, ctx, |x, ctx| {
            to_time::parse_time(&x.to_string(), to_ft, ctx)
        }),
        (T::Int, T::Duration) => map1::<IntT, DurT>(n, v.arg()?, ctx, |x, ctx| {
            to_time::parse_duration(&x.to_string(), to_ft.fsp(), ctx)
        }),
        (T::Real, T::Duration) => map1::<RealT, DurT>(n, v.arg()?, ctx, |x, ctx| {
            to_time::parse_duration(&format!("{x}"), to_ft.fsp(), ctx)
        }),
        (T::Decimal, T::Duration) => map1::<DecT, DurT>(n, v.arg()?, ctx, |x, ctx| {
            to_time::parse_duration(&x.to_string(), to_ft.fsp(), ctx)
        }),
        (T::DateTime, T::Duration) => map1::<TimeT, DurT>(n, v.arg()?, ctx, |t, _| {
            // The time-of-day part of the value rounded to the target precision.
            let t = t.round_frac(to_ft.fsp())?;
            let nanos = ((i64::from(t.hour()) * 60 + i64::from(t.minute())) * 60
                + i64::from(t.second()))
                * 1_000_000_000
                + i64::from(t.micro()) * 1_000;
            Ok(Some(Duration::from_nanos(nanos, to_ft.fsp())?))
        }),
        (T::Duration, T::DateTime) => {
            // MySQL adds the duration to the session's current date.
            let today = Time::today(&ctx.cfg.tz)?;
            let (tp, fsp) = (to_ft.time_type(), to_ft.fsp());
            map1::<DurT, TimeT>(n, v.arg()?, ctx, |d, _| Ok(Some(today.add_duration(&d, tp, fsp)?)))
        }
        // Casts to and from JSON live in `expr/json.rs`; ENUM casts are not supported.
        (T::Json | T::Enum | T::VectorFloat32, _) | (_, T::Json | T::Enum | T::VectorFloat32) => {
            Err(Error::invalid(format!("no cast from {from:?} to {to:?} here")))
        }
    }
}

pub(super) fn truncated(what: &'static str, v: &[u8]) -> Error {
    let s = String::from_utf8_lossy(v.get(..v.len().min(64)).unwrap_or(v)).into_owned();
    Error::Truncated { what, value: s }
}

pub(super) fn trim_space(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
    s.get(start..end).unwrap_or(&[])
}

/// Rounds a decimal to the target's fraction digits and clamps it to its precision
/// (overflow handled by the context).
pub fn fit_decimal(d: Decimal, ft: &FieldType, ctx: &mut EvalContext) -> Result<Decimal> {
    let (flen, frac) = (ft.flen, ft.decimal);
    if !(1..=65).contains(&flen) || !(0..=30).contains(&frac) || frac > flen {
        return Ok(d);
    }
    let rounded = dec_res(d.round(frac as i8, RoundMode::HalfUp))?;
    let int_digits = i32::from(rounded.int_cnt());
    if int_digits > flen - frac {
        ctx.overflow(Error::Overflow("DECIMAL"))?;
        let max = Decimal::max_for(flen as u8, frac as u8);
        return Ok(if d.is_negative() { -max } else { max });
    }
    Ok(rounded)
}
