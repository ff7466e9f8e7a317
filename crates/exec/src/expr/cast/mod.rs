//! CAST among int, real, decimal, string, time and duration, as TiKV's `impl_cast.rs`:
//! numbers in [`num`], strings in [`to_string`], times and durations in [`to_time`], JSON
//! in `json`.

mod json;
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
use crate::expr::build::{Meta, NodeKind};
use crate::expr::kernel::{dec_res, map1};
use crate::expr::registry::{Args, Call, Registry};
use crate::expr::sig::type_at;
use crate::expr::value::Value;
use crate::types::{EvalType, FieldType};
use rcop_datum::chunk::mysql_type as mt;

pub(super) fn register(r: &mut Registry) {
    json::register(r);
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
    let in_union = matches!(c.meta(), Meta::InUnion);
    cast_in(from, to, &from_ft, c.ft, c.arg(0)?, c.n, in_union, ctx)
}

/// The metadata of cast `sig` from its `Expr.val`: TiDB's `InUnionMetadata`. An empty `val`
/// reads as not in a union (TiKV would refuse it; TiDB always sends the message). Any other
/// signature's `val` is not read here.
pub(crate) fn union_meta(sig: i32, val: &[u8]) -> Result<Meta> {
    if cast_types(sig).is_none() || val.is_empty() {
        return Ok(Meta::None);
    }
    let m = <rcop_proto::tipb::InUnionMetadata as prost::Message>::decode(val)
        .map_err(|e| Error::invalid(format!("cast metadata (InUnionMetadata): {e}")))?;
    Ok(if m.in_union { Meta::InUnion } else { Meta::None })
}

/// Casts `v` (of `from`, typed `from_ft`) to `to` typed `to_ft`, outside a UNION (the casts
/// the engine inserts itself, as TiKV's `get_cast_fn_rpn_node`).
pub fn cast(
    from: EvalType,
    to: EvalType,
    from_ft: &FieldType,
    to_ft: &FieldType,
    v: &Value<'_>,
    n: usize,
    ctx: &mut EvalContext,
) -> Result<VecCol> {
    cast_in(from, to, from_ft, to_ft, v, n, false, ctx)
}

/// [`cast`], with TiDB's `in_union` flag: where TiKV reads it, a negative value becomes 0
/// (every such place below says so).
#[allow(clippy::too_many_arguments)]
fn cast_in(
    from: EvalType,
    to: EvalType,
    from_ft: &FieldType,
    to_ft: &FieldType,
    v: &Value<'_>,
    n: usize,
    in_union: bool,
    ctx: &mut EvalContext,
) -> Result<VecCol> {
    use EvalType as T;
    let fu = from_ft.is_unsigned();
    let tu = to_ft.is_unsigned();
    match (from, to) {
        // TiKV's `cast_signed_int_as_unsigned_int` clamps in a union; every other int-to-int
        // cast keeps the bits.
        (T::Int, T::Int) => map1::<IntT, IntT>(n, v.arg()?, ctx, |x, _| {
            Ok(Some(if in_union && !fu && tu && x < 0 { 0 } else { x }))
        }),
        // TiKV neither rounds nor clamps an int cast to DOUBLE: a signed value cast to an
        // UNSIGNED double keeps its two's complement (0 in a union).
        (T::Int, T::Real) => map1::<IntT, RealT>(n, v.arg()?, ctx, |x, _| {
            Ok(Some(match (fu, tu) {
                (false, false) => x as f64,
                (false, true) if in_union && x < 0 => 0.0,
                _ => x as u64 as f64,
            }))
        }),
        // A signed value cast to an UNSIGNED decimal: its two's complement (0 in a union).
        (T::Int, T::Decimal) => map1::<IntT, DecT>(n, v.arg()?, ctx, |x, ctx| {
            let d = match (fu, tu) {
                (false, false) => Decimal::from_i64(x),
                (false, true) if in_union && x < 0 => Decimal::zero(),
                _ => Decimal::from_u64(x as u64),
            };
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
        (T::Real, T::Int) => map1::<RealT, IntT>(n, v.arg()?, ctx, |x, ctx| {
            if in_union && tu && x < 0.0 {
                return Ok(Some(0));
            }
            num::real_to_int(x, tu, ctx).map(Some)
        }),
        // TiKV picks its two real-to-real casts the wrong way round: the one that clamps a
        // negative value in a union (`cast_real_as_unsigned_real`) serves the SIGNED target,
        // and an UNSIGNED target keeps the value.
        (T::Real, T::Real) => map1::<RealT, RealT>(n, v.arg()?, ctx, |x, _| {
            if in_union && !tu && x < 0.0 {
                return Ok(Some(0.0));
            }
            Ok(Some(if to_ft.tp == mt::FLOAT { f64::from(x as f32) } else { x }))
        }),
        // TiKV's `cast_real_as_decimal` clamps a negative value in a union whatever the
        // target's sign.
        (T::Real, T::Decimal) => map1::<RealT, DecT>(n, v.arg()?, ctx, |x, ctx| {
            let d =
                if in_union && x < 0.0 { Decimal::zero() } else { dec_res(Decimal::from_f64(x)?)? };
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
            if in_union && tu && x.is_negative() {
                return Ok(Some(0));
            }
            let r = dec_res(x.round(0, RoundMode::HalfUp))?;
            num::dec_to_int(&r, tu, ctx).map(Some)
        }),
        (T::Decimal, T::Real) => map1::<DecT, RealT>(n, v.arg()?, ctx, |x, _| {
            Ok(Some(if in_union && tu && x.is_negative() { 0.0 } else { x.as_f64() }))
        }),
        (T::Decimal, T::Decimal) => map1::<DecT, DecT>(n, v.arg()?, ctx, |x, ctx| {
            let d = if in_union && tu && x.is_negative() { Decimal::zero() } else { *x };
            fit_decimal(d, to_ft, ctx).map(Some)
        }),
        (T::Decimal, T::Bytes) => map1::<DecT, BytesT>(n, v.arg()?, ctx, |x, ctx| {
            let mut s = Vec::new();
            x.write_str(&mut s);
            to_string::fit_string(s, to_ft, ctx).map(Some)
        }),
        (T::Bytes, T::Int) => map1::<BytesT, IntT>(n, v.arg()?, ctx, |x, ctx| {
            num::str_to_int(x, tu, in_union && tu, ctx).map(Some)
        }),
        (T::Bytes, T::Real) => map1::<BytesT, RealT>(n, v.arg()?, ctx, |x, ctx| {
            let r = num::str_to_real(x, ctx)?;
            let r = if in_union && tu && r < 0.0 { 0.0 } else { r };
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
            let d = if in_union && tu && d.is_negative() { Decimal::zero() } else { d };
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
        // Casts to and from JSON live in `json`; ENUM and vector casts are not supported here.
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

/// TiKV's `produce_dec_with_specified_tp`: fits a decimal to the target `DECIMAL(M, D)`.
///
/// - More integer digits than `M − D` (before rounding) is an overflow, handled by the
///   context, and gives the largest value of the type with the value's sign.
/// - Otherwise the value is rounded half up to `D` digits. Dropping digits that change the
///   value (`1.25` → `1.3`, not `1.50` → `1.5`) is warning 1265 (data truncated), or the
///   error outside TRUNCATE_AS_WARNING; in an INSERT, UPDATE or DELETE always a warning.
///   As in TiKV, a carry from rounding is not re-checked: `9.96` fits `DECIMAL(2, 1)` as
///   `10.0` (MySQL gives `9.9` and an overflow).
/// - A negative result for an UNSIGNED target is 0, with no warning.
pub fn fit_decimal(d: Decimal, ft: &FieldType, ctx: &mut EvalContext) -> Result<Decimal> {
    use crate::ctx::{FLAG_IN_INSERT_STMT, FLAG_IN_UPDATE_OR_DELETE_STMT};
    let (flen, frac) = (ft.flen, ft.decimal);
    let mut d = d;
    if (1..=65).contains(&flen) && (0..=30).contains(&frac) && frac <= flen {
        if !d.is_zero() && i32::from(d.int_cnt()) > flen - frac {
            ctx.overflow(Error::Overflow("DECIMAL"))?;
            let max = Decimal::max_for(flen as u8, frac as u8);
            d = if d.is_negative() { -max } else { max };
        } else if i32::from(d.frac_cnt()) != frac {
            let rounded = dec_res(d.round(frac as i8, RoundMode::HalfUp))?;
            if !rounded.is_zero() && i32::from(d.frac_cnt()) > frac && rounded != d {
                if ctx.cfg.flags & (FLAG_IN_INSERT_STMT | FLAG_IN_UPDATE_OR_DELETE_STMT) != 0 {
                    ctx.warn(&Error::DataTruncated);
                } else {
                    ctx.truncated(Error::DataTruncated)?;
                }
            }
            d = rounded;
        }
    }
    if ft.is_unsigned() && d.is_negative() {
        return Ok(Decimal::zero());
    }
    Ok(d)
}
